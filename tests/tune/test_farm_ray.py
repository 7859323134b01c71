"""The Ray farm on a local multi-node cluster with QEMU boards, and with
simulated boards (aot.tune.farm_sim: no QEMU, the host idle).

The cluster (Ray's own multi-node test cluster: one head without boards and
two nodes declaring 2 and 1 ``board:qemu/mps2-an386``, or 2 and 2
``board:sim/qemu/mps2-an386``, each a raylet of its own) lives in a private
temporary folder; its tasks' work folders and QEMU instances too, so the
teardown stops exactly what the tests started.  Without Ray every test is
skipped, saying so.
"""

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from support.tools import needs_arm_qemu

from aot.target import load_board
from aot.tune import records as rec
from aot.tune.errors import TuneError
from aot.tune.farm import BoardSpec, Flows, RayFarm, board_resource
from aot.tune.farm_sim import SimBoard
from aot.tune.session import tune_model
from aot.tune.workload import extract_workloads

ray = pytest.importorskip("ray", reason="Ray is an optional extra: pip install 'aot[farm]'")
cluster_utils = pytest.importorskip("ray.cluster_utils",
                                    reason="Ray is an optional extra: pip install 'aot[farm]'")

TAG = "qemu/mps2-an386"
pytestmark = pytest.mark.slow
STORE = 80 * 2**20   # object store bytes per node: the tasks move a model at most


def _stat(pid: int) -> tuple[int, str] | None:
    """(parent pid, command line) of ``pid``, or None once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1]), cmd


def _qemus(root: str) -> list[int]:
    """QEMU processes whose command line is under ``root`` (ours)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            info = _stat(int(entry.name))
            if info and info[1].startswith("qemu-system") and root in info[1]:
                found.append(int(entry.name))
    return found


def _descends_from(pid: int, ancestor: int) -> bool:
    while pid > 1:
        if pid == ancestor:
            return True
        info = _stat(pid)
        if info is None:
            return False
        pid = info[0]
    return False


@contextlib.contextmanager
def _local_cluster(nodes: list[dict]):
    """Ray's multi-node test cluster: a head without boards and a node (a raylet
    of its own) per entry of ``nodes`` (``add_node``'s arguments), in a private
    temporary folder; yields (cluster, nodes, folder)."""
    root = tempfile.mkdtemp(prefix="aot-ray-", dir="/tmp")  # short: Ray's socket paths
    saved = {k: os.environ.get(k) for k in ("RAY_TMPDIR", "TMPDIR", "RAY_ADDRESS")}
    os.makedirs(f"{root}/ray")
    os.makedirs(f"{root}/work")
    # The nodes (and their tasks) inherit these: Ray's files and the farm's work folders.
    os.environ.update(RAY_TMPDIR=root, TMPDIR=f"{root}/work")  # Ray adds /ray
    c = None
    try:
        c = cluster_utils.Cluster(initialize_head=True, head_node_args=dict(
            num_cpus=1, include_dashboard=False, temp_dir=f"{root}/ray",
            object_store_memory=STORE))
        added = [c.add_node(object_store_memory=STORE, **node) for node in nodes]
        c.wait_for_nodes()
        os.environ["RAY_ADDRESS"] = c.address
        yield c, added, root
    finally:
        if ray.is_initialized():
            ray.shutdown()
        if c is not None:
            c.shutdown()
        for pid in _qemus(root):
            os.kill(pid, signal.SIGKILL)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def cluster():
    with _local_cluster([dict(num_cpus=1, resources={board_resource(TAG): n})
                         for n in (2, 1)]) as found:
        yield found


@pytest.fixture(scope="module")
def dense(models_dir):
    board = load_board(TAG)
    _, workloads = extract_workloads(models_dir / "mlperf_kws_dscnn.tflite", board.target)
    return workloads[-1]


@pytest.fixture(scope="module")
def one_board(dense, tmp_path_factory):
    """Costs of the first configs measured on one board in this process."""
    tmp = tmp_path_factory.mktemp("one")
    configs = list(dense.space)[:9]
    with Flows.from_spec(BoardSpec(load_board(TAG), repeats=1), tmp, tmp / "cache", []) as f:
        return configs, {r.config.index: r.cost for r in f.measure(dense, configs)}


@needs_arm_qemu
def test_the_cluster_measures_what_one_board_measures(cluster, dense, one_board):
    configs, costs = one_board
    with RayFarm("auto", BoardSpec(load_board(TAG), repeats=1), None, []) as farm:
        assert farm.boards == 3
        results = farm.measure(dense, configs)
    assert [r.config for r in results] == configs
    assert [r.status for r in results] == ["ok"] * len(configs)
    assert {r.config.index: r.cost for r in results} == costs


@needs_arm_qemu
def test_the_cluster_estimates_cycles_as_one_board_does(cluster, dense, tmp_path):
    """--cost cycles travels with each chunk: every node traces its own QEMU."""
    configs = list(dense.space)[:4]
    spec = BoardSpec(load_board(TAG), repeats=1, cost="cycles")
    with Flows.from_spec(spec, tmp_path, tmp_path / "cache", []) as f:
        alone = f.measure(dense, configs)
    with RayFarm("auto", spec, None, []) as farm:
        results = farm.measure(dense, configs)
    assert [r.unit for r in results] == ["estimated_cycles"] * len(configs)
    assert [(r.status, r.cost) for r in results] == [(r.status, r.cost) for r in alone]
    assert all(r.ok and r.cost > 0 for r in results)


@needs_arm_qemu
def test_asking_for_more_boards_than_the_cluster_has_is_refused(cluster):
    with pytest.raises(TuneError, match="declares only 3"):
        RayFarm("auto", BoardSpec(load_board(TAG)), 5, [])
    with pytest.raises(TuneError, match="declares 'board:qemu/mps2-an385'"):
        RayFarm("auto", BoardSpec(load_board("qemu/mps2-an385")), None, [])
    assert not ray.is_initialized()


@needs_arm_qemu
def test_a_node_that_dies_mid_run_loses_and_repeats_no_record(cluster, dense, one_board,
                                                              models_dir, tmp_path):
    """Three batches of one config per board: the node dies while it runs a
    board, its chunk is measured again on the other node, and the session
    goes on with the remaining node's boards to the end."""
    c, nodes, root = cluster
    configs, costs = one_board
    doomed = nodes[1]  # the node with one board
    raylet = doomed.all_processes["raylet"][0].process.pid
    log = tmp_path / "log.jsonl"
    out = {}

    def tune():
        out["report"] = tune_model(models_dir / "mlperf_kws_dscnn.tflite", TAG,
                                   trials=len(configs), log=log, tuner="grid",
                                   batch_size=1, repeats=1, only=[dense.key],
                                   farm="ray")
    thread = threading.Thread(target=tune)
    thread.start()
    killed = False
    while thread.is_alive() and not killed:
        if any(_descends_from(q, raylet) for q in _qemus(root)):
            c.remove_node(doomed, allow_graceful=False)
            killed = True
            logged = len(rec.load(log)) if log.exists() else 0
        time.sleep(0.05)
    thread.join()
    assert killed, "the doomed node never ran a board"
    assert logged < len(configs)  # the session went on after the node died
    assert out["report"].boards == 3
    records = rec.load(log)
    indices = [dense.space.index_of(r.config) for r in records]
    assert len(indices) == len(set(indices)) == len(configs)  # each config once
    assert all(r.status == "ok" for r in records)
    known = [(costs[i], r.cost) for i, r in zip(indices, records) if i in costs]
    assert known and all(a == b for a, b in known)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def client_head():
    """``ray start --head`` with one board and its Ray Client port; the
    address ``ray://127.0.0.1:PORT``."""
    root = tempfile.mkdtemp(prefix="aot-rayc-", dir="/tmp")
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env.update(RAY_TMPDIR=root, TMPDIR=root, RAY_USAGE_STATS_ENABLED="0")
    port = _free_port()
    ray_cli = Path(sys.executable).with_name("ray")
    head = subprocess.Popen(
        [str(ray_cli), "start", "--head", "--block", "--port", str(_free_port()),
         "--ray-client-server-port", str(port), "--include-dashboard", "false",
         "--temp-dir", root, "--num-cpus", "1", "--object-store-memory", str(STORE),
         "--resources", json.dumps({board_resource(TAG): 1})],
        env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield f"ray://127.0.0.1:{port}"
    finally:
        os.killpg(head.pid, signal.SIGKILL)
        head.wait()
        # Ray's workers run in sessions of their own: stop whatever still names our folder.
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit() and (info := _stat(int(entry.name))) and root in info[1]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(entry.name), signal.SIGKILL)
        shutil.rmtree(root, ignore_errors=True)


@needs_arm_qemu
def test_a_ray_client_address_reaches_the_cluster(client_head, dense, one_board):
    configs, costs = one_board
    deadline = time.monotonic() + 120
    while True:  # the head takes a while to start
        try:
            farm = RayFarm(client_head, BoardSpec(load_board(TAG), repeats=1), None, [])
            break
        except TuneError:
            if time.monotonic() > deadline:
                raise
            time.sleep(2)
    with farm:
        assert farm.boards == 1
        results = farm.measure(dense, configs[:3])
    assert [(r.status, r.cost) for r in results] == [("ok", costs[c.index]) for c in configs[:3]]


def _running_chunks(raylet: int) -> list[int]:
    """Ray workers under ``raylet`` that run a farm chunk now (Ray titles a worker
    process ``ray::TASK`` while it runs one)."""
    return [int(e.name) for e in Path("/proc").iterdir()
            if e.name.isdigit() and (info := _stat(int(e.name)))
            and info[1].startswith("ray::_ray_chunk") and _descends_from(int(e.name), raylet)]


def test_a_session_whose_node_dies_ends_on_the_other_nodes_boards(models_dir, tmp_path):
    """Two nodes of two simulated boards; one dies while its boards measure.
    Its chunks run again on the other node (Ray's retries), every config is
    recorded once and ok, and the session ends without hanging."""
    sim = SimBoard(image_seconds=0.5)
    with _local_cluster([dict(num_cpus=2, resources={board_resource(TAG, sim=True): 2})
                         for _ in range(2)]) as (c, nodes, _):
        doomed = nodes[1]
        raylet = doomed.all_processes["raylet"][0].process.pid
        log = tmp_path / "log.jsonl"
        trials = 1 + 4 * 4 * 2   # the default, then 4 batches of 2 configs per board
        out = {}

        def tune():
            out["report"] = tune_model(models_dir / "mlperf_kws_dscnn.tflite", TAG,
                                       trials=trials, log=log, tuner="grid", batch_size=2,
                                       only=["dense"], farm="ray", sim=sim)
        thread = threading.Thread(target=tune)
        thread.start()
        killed = False
        while thread.is_alive() and not killed:
            if log.exists() and len(rec.load(log)) > 1 and _running_chunks(raylet):
                c.remove_node(doomed, allow_graceful=False)
                killed = True
                logged = len(rec.load(log))
            time.sleep(0.05)
        thread.join(timeout=120)
        assert not thread.is_alive(), "the session hangs after its node died"
    assert killed, "the doomed node never ran a chunk"
    assert logged < trials   # the session went on after the node died
    assert out["report"].boards == 4 and out["report"].measured == trials
    records = rec.load(log)
    configs = [json.dumps(r.config, sort_keys=True) for r in records]
    assert len(configs) == len(set(configs)) == trials    # each config once
    assert [r.status for r in records] == ["ok"] * trials
    assert {r.unit for r in records} == {rec.SIMULATED}
