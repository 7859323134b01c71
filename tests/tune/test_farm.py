"""Board farms: a batch split across boards, results in order, failures recorded.

The local pool is tested on the host port (the kernels' portable paths run
in host processes) without Ray; the Ray farms are in test_farm_ray.py.
"""

import dataclasses
import os
import shutil
import signal
import threading
import time
from functools import partial
from pathlib import Path

import pytest

from support.tools import needs_arm_qemu

from aot.target import Target, load_board
from aot.tune.errors import TuneError
from aot.tune.farm import (
    BoardSpec,
    Flows,
    LocalFarm,
    SerialBoard,
    board_resource,
    in_order,
    open_farm,
    parse_boards,
    parse_farm,
    ray_slots,
    split,
)
from aot.tune.farm_sim import SimBoard, SimFlows, sim_cost
from aot.tune.measure import Result, max_batch
from aot.tune.records import SIMULATED
from aot.tune.workload import Workload, WorkloadSource, extract_workloads

M4 = Target("c -keys=arm_cpu,cpu -mcpu=cortex-m4")

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("make") is None,
                               reason="needs the host gcc and make")


def test_split_keeps_order_and_balances():
    assert split(list(range(7)), 3) == [[0, 1, 2], [3, 4], [5, 6]]
    assert split(list(range(2)), 4) == [[0], [1]]
    assert split([], 4) == []
    assert sum(split(list(range(16)), 4), []) == list(range(16))


def test_farm_names():
    assert parse_farm("local") == ("local", None)
    assert parse_farm("ray") == ("ray", "auto")
    assert parse_farm("ray://10.0.0.1:10001") == ("ray", "ray://10.0.0.1:10001")
    for bad in ("ray://", "slurm", "10.0.0.1:6379"):
        with pytest.raises(TuneError, match="unknown farm"):
            parse_farm(bad)
    assert board_resource("qemu/mps2-an386") == "board:qemu/mps2-an386"


@pytest.fixture(scope="module")
def dense(models_dir):
    _, workloads = extract_workloads(models_dir / "mlperf_kws_dscnn.tflite", M4)
    return workloads[-1]


def test_results_come_back_in_config_order_and_none_is_lost(dense):
    configs = list(dense.space)[:4]
    outcomes = {configs[2].index: ("ok", 7, (7, 8), "instructions", "", 0.1),
                configs[0].index: ("wrong", 3, (3,), "instructions", "differs", 0.1)}
    results = in_order(configs, outcomes)
    assert [r.config for r in results] == configs
    assert [r.status for r in results] == ["wrong", "error", "ok", "error"]
    # A wrong candidate carries no cost, so it can never be the best.
    assert results[0].cost is None and results[2].cost == 7
    assert "no result came back" in results[1].error


def test_the_workload_source_makes_the_same_workloads_again(dense):
    again = dense.source.workloads()[dense.key]
    assert again.space == dense.space and again.default == dense.default
    assert (again.lower(dense.default, "k").source == dense.lower(dense.default, "k").source)
    assert (again.expected == dense.expected).all()


def test_open_farm_chooses_by_farm_and_boards(tmp_path):
    spec = BoardSpec(load_board("host/native"))
    with open_farm(spec, farm=None, boards=None, work=tmp_path, cache=tmp_path, notes=[]) as f:
        assert isinstance(f, Flows) and f.boards == 1
    with open_farm(spec, farm="local", boards=None, work=tmp_path, cache=tmp_path,
                   notes=[]) as f:
        assert isinstance(f, LocalFarm) and f.boards == 2
    with open_farm(spec, farm=None, boards=3, work=tmp_path, cache=tmp_path, notes=[]) as f:
        assert isinstance(f, LocalFarm) and f.boards == 3
    with pytest.raises(TuneError, match="--boards must be at least 1"):
        open_farm(spec, farm="local", boards=0, work=tmp_path, cache=tmp_path, notes=[])


def test_a_local_pools_boards_share_the_cores_for_compiling(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    spec = BoardSpec(load_board("qemu/mps2-an386"))
    assert [s.jobs for s in LocalFarm(spec, 3, tmp_path, tmp_path, []).slots] == [2, 2, 2]
    assert [s.jobs for s in LocalFarm(spec, 16, tmp_path, tmp_path, []).slots] == [1] * 16
    fixed = dataclasses.replace(spec, jobs=5)
    assert [s.jobs for s in LocalFarm(fixed, 2, tmp_path, tmp_path, []).slots] == [5, 5]
    with Flows.from_spec(dataclasses.replace(spec, jobs=3), tmp_path, tmp_path, []) as one:
        assert one.builder.jobs == one.ram_builder.jobs == 3


def test_several_real_boards_need_their_serial_ports(tmp_path):
    spec = BoardSpec(load_board("st/nucleo-f746zg"), serial_port="/dev/null")
    with pytest.raises(TuneError, match="needs each one's serial port: --boards "
                       "st/nucleo-f746zg@/dev/ttyACM0,st/nucleo-f746zg@/dev/ttyACM1"):
        LocalFarm(spec, 2, tmp_path, tmp_path, [])


L4 = "st/nucleo-l4r5zi"


def test_boards_are_a_number_or_real_boards_by_serial_port():
    assert parse_boards("3") == 3
    two = parse_boards(f"{L4}@/dev/ttyACM0, {L4}@/dev/ttyACM1#0670FF48")
    assert two == [SerialBoard(L4, "/dev/ttyACM0"), SerialBoard(L4, "/dev/ttyACM1", "0670FF48")]
    assert [str(b) for b in two] == [f"{L4}@/dev/ttyACM0", f"{L4}@/dev/ttyACM1#0670FF48"]
    assert parse_boards(f"{L4}@rfc2217://lab:4000") == [SerialBoard(L4, "rfc2217://lab:4000")]
    for bad in ("@/dev/ttyACM0", f"{L4}@", f"{L4}@/dev/ttyACM0#", f"{L4}", "two", "-1"):
        with pytest.raises(TuneError, match="is not TAG@PORT"):
            parse_boards(bad)
    with pytest.raises(TuneError, match="at least 1"):
        parse_boards("0")
    with pytest.raises(TuneError, match="port /dev/ttyACM0 more than once"):
        parse_boards(f"{L4}@/dev/ttyACM0,{L4}@/dev/ttyACM0")


def test_each_real_board_is_a_slot_with_its_port_and_probe(tmp_path, monkeypatch):
    from aot.tune import farm as farm_module

    probes = {"/dev/ttyACM0": "P0"}
    monkeypatch.setattr(farm_module, "probe_serial", probes.get)
    spec = BoardSpec(load_board(L4), repeats=1)
    boards = parse_boards(f"{L4}@/dev/ttyACM0,{L4}@/dev/ttyACM1#P1")
    with open_farm(spec, farm=None, boards=boards, work=tmp_path, cache=tmp_path,
                   notes=[]) as f:
        assert isinstance(f, LocalFarm) and f.boards == 2
        assert [(s.serial_port, s.probe) for s in f.slots] == [("/dev/ttyACM0", "P0"),
                                                               ("/dev/ttyACM1", "P1")]
    # one board needs no probe (and is measured in this process, as with --port)
    with open_farm(spec, farm=None, boards=parse_boards(f"{L4}@/dev/ttyACM7"), work=tmp_path,
                   cache=tmp_path, notes=[]) as f:
        assert isinstance(f, Flows) and f.runner.serial_port == "/dev/ttyACM7"
        assert f.runner.probe is None
    with pytest.raises(TuneError, match=r"which debug probe flashes the board on /dev/ttyACM5"):
        LocalFarm(spec, parse_boards(f"{L4}@/dev/ttyACM0,{L4}@/dev/ttyACM5"), tmp_path,
                  tmp_path, [])
    with pytest.raises(TuneError, match="measures the --board it tunes for"):
        LocalFarm(spec, parse_boards(f"st/nucleo-f746zg@/dev/ttyACM0,{L4}@/dev/ttyACM1#P"),
                  tmp_path, tmp_path, [])
    with pytest.raises(TuneError, match="with --port, not both"):
        LocalFarm(dataclasses.replace(spec, serial_port="/dev/ttyACM0"), boards, tmp_path,
                  tmp_path, [])
    with pytest.raises(TuneError, match="has no serial port; give a number of boards"):
        LocalFarm(BoardSpec(load_board("qemu/mps2-an386")), boards, tmp_path, tmp_path, [])
    esp = BoardSpec(load_board("espressif/esp32c3-devkitm"))
    slots = LocalFarm(esp, parse_boards("espressif/esp32c3-devkitm@/dev/ttyUSB0,"
                                        "espressif/esp32c3-devkitm@/dev/ttyUSB1"),
                      tmp_path, tmp_path, []).slots
    assert [(s.serial_port, s.probe) for s in slots] == [("/dev/ttyUSB0", None),
                                                         ("/dev/ttyUSB1", None)]


def test_a_ray_clusters_real_boards_are_resources_by_port():
    spec = BoardSpec(load_board(L4))
    resources = {"CPU": 4.0, f"board:{L4}@/dev/ttyACM0": 2.0,
                 f"board:{L4}@/dev/ttyACM1#P1": 1.0, "board:qemu/mps2-an386": 2.0}
    slots = ray_slots(resources, spec, None)
    assert [(r, s.serial_port, s.probe) for r, s in slots] == [
        (f"board:{L4}@/dev/ttyACM0", "/dev/ttyACM0", None),
        (f"board:{L4}@/dev/ttyACM0", "/dev/ttyACM0", None),
        (f"board:{L4}@/dev/ttyACM1#P1", "/dev/ttyACM1", "P1")]
    assert len(ray_slots(resources, spec, 2)) == 2
    chosen = ray_slots(resources, spec, parse_boards(f"{L4}@/dev/ttyACM1#P1"))
    assert [r for r, _ in chosen] == [f"board:{L4}@/dev/ttyACM1#P1"]
    with pytest.raises(TuneError, match="declares only 3"):
        ray_slots(resources, spec, 4)
    with pytest.raises(TuneError, match=f"no node of the Ray cluster declares board:{L4}@COM3"):
        ray_slots(resources, spec, parse_boards(f"{L4}@COM3"))
    qemu = BoardSpec(load_board("qemu/mps2-an386"))
    assert [r for r, _ in ray_slots(resources, qemu, None)] == ["board:qemu/mps2-an386"] * 2


# --- the pool on the host port ------------------------------------------------------------

BODIES = {
    "wrong": "  (void)x0;\n  for (int i = 0; i < 12; ++i) y1[i] = 7;\n  return 0;",
    "crash": "  (void)x0; (void)y1;\n  __builtin_trap();\n  return 0;",
    "hang": "  (void)x0; (void)y1;\n  for (;;) {\n  }",
}


def _lower_broken(wl, broken: dict, config, name: str):
    kernel = Workload.lower(wl, config, name)
    if config.index not in broken:
        return kernel
    proto = kernel.prototype.rstrip(";")
    source = f"#include <stdint.h>\n{proto} {{\n{BODIES[broken[config.index]]}\n}}\n"
    return dataclasses.replace(kernel, func=None, c_source=source,
                               c_prototype=kernel.prototype)


@dataclasses.dataclass(frozen=True)
class BrokenSource(WorkloadSource):
    """The workloads of a source, with some configs lowered to a faulty kernel
    (in whichever process rebuilds them: the farm's workers too)."""

    broken: tuple = ()   # (config index, kind of fault)

    def workloads(self):
        found = super().workloads()
        for wl in found.values():
            wl.lower = partial(_lower_broken, wl, dict(self.broken))
        return found


def _broken(source, faults) -> BrokenSource:
    """``source`` with ``faults``: another extraction, so another cache token."""
    return BrokenSource(**{**vars(source), "token": f"{source.token}-broken-{faults}"},
                        broken=faults)


@needs_gcc
@pytest.mark.slow
def test_a_local_pool_records_wrong_crashing_and_hanging_candidates(dense, tmp_path):
    configs = list(dense.space)[:8]
    faults = ((configs[1].index, "wrong"), (configs[4].index, "crash"),
              (configs[6].index, "hang"))
    source = _broken(dense.source, faults)
    wl = source.workloads()[dense.key]
    wl.source = source
    spec = BoardSpec(load_board("host/native"), repeats=1, timeout=2.0)
    with LocalFarm(spec, 3, tmp_path / "pool", tmp_path / "cache", []) as farm:
        pooled = farm.measure(wl, configs)
        assert len(set(farm.worker_pids())) == 3
    assert [r.config for r in pooled] == configs
    want = ["ok", "wrong", "ok", "ok", "error", "ok", "timeout", "ok"]
    assert [r.status for r in pooled] == want
    assert "output values differ" in pooled[1].error and pooled[1].cost is None
    assert pooled[6].error.startswith("device:")


def _children(pids: set[int]) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) in pids:
                found.append(int(entry.name))
    return found


@needs_gcc
@pytest.mark.slow
def test_a_worker_that_dies_mid_batch_is_replaced_and_nothing_is_lost(dense, tmp_path):
    configs = list(dense.space)[:12]
    spec = BoardSpec(load_board("host/native"), repeats=1)
    with LocalFarm(spec, 2, tmp_path / "pool", tmp_path / "cache", []) as farm:
        out = {}
        thread = threading.Thread(target=lambda: out.update(r=farm.measure(dense, configs)))
        thread.start()
        killed = None
        while thread.is_alive() and killed is None:
            pids = set(farm.worker_pids())
            busy = [p for p in pids if _children({p})]  # building or running its board
            if busy:
                killed = busy[0]
                os.kill(killed, signal.SIGKILL)
            time.sleep(0.05)
        thread.join()
        assert killed is not None, "no worker was seen measuring"
        assert killed not in farm.worker_pids()
    results = out["r"]
    assert [r.config for r in results] == configs
    assert [r.status for r in results] == ["ok"] * len(configs)


def test_a_ray_farm_without_ray_says_what_to_install(monkeypatch):
    import sys

    from aot.tune.farm import RayFarm

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    with pytest.raises(TuneError, match=r"aot\[farm\]"):
        RayFarm("auto", BoardSpec(load_board("qemu/mps2-an386")), None, [])


def test_a_worker_rebuilds_the_kind_of_workload_the_head_measures(dense):
    # The auto tuner's workloads have their own space: a worker that rebuilt the
    # template's workload would measure other configs under the same indices.
    from aot.tune import farm
    from aot.tune.auto import AutoWorkload

    head = AutoWorkload.of(dense)
    worker = farm._workload(dense.source, dense.key, AutoWorkload)
    assert isinstance(worker, AutoWorkload) and len(worker.space) == len(head.space)
    picks = [head.space[i] for i in range(0, len(head.space), max(1, len(head.space) // 7))]
    assert any(c.to_json().get("sketch") != "template" for c in picks)
    for c in picks:
        again = worker.space[c.index]
        assert (again.index, again.to_json()) == (c.index, c.to_json())
        assert worker.lower(c, "k").source == head.lower(c, "k").source
    assert farm._workload(dense.source, dense.key, Workload).space == dense.space


def _alive(pid: int) -> bool:
    try:
        stat = (Path("/proc") / str(pid) / "stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"   # a zombie waits for its reaper only


def _qemus(pids: set[int]) -> list[int]:
    return [p for p in _children(pids)
            if Path(f"/proc/{p}/comm").read_text().strip().startswith("qemu-system")]


@needs_arm_qemu
@pytest.mark.slow
def test_a_killed_workers_qemu_does_not_outlive_it(dense, tmp_path):
    (config,) = list(dense.space)[:1]
    source = _broken(dense.source, ((config.index, "hang"),))
    wl = source.workloads()[dense.key]
    wl.source = source
    spec = BoardSpec(load_board("qemu/mps2-an386"), repeats=1, timeout=5.0)
    seen: list[int] = []
    with LocalFarm(spec, 2, tmp_path / "pool", tmp_path / "cache", []) as farm:
        out = {}
        thread = threading.Thread(target=lambda: out.update(r=farm.measure(wl, [config])))
        thread.start()
        while thread.is_alive() and not seen:
            for worker in farm.worker_pids():
                qemus = _qemus({worker})
                if qemus:     # the worker's board runs the hanging candidate: kill the worker
                    seen += qemus
                    os.kill(worker, signal.SIGKILL)
                    break
            time.sleep(0.05)
        deadline = time.monotonic() + 30   # a bound for a loaded machine, not a measurement
        while any(_alive(q) for q in seen) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert seen, "no worker was seen running QEMU"
        assert not [q for q in seen if _alive(q)], "QEMU outlived its killed worker"
        thread.join()
    # the chunk was measured again on a fresh worker: the hang is recorded, not lost
    (result,) = out["r"]
    assert result.status == "timeout" and result.cost is None


needs_arm_gcc = pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None,
                                   reason="needs arm-none-eabi-gcc")


@needs_arm_gcc
@pytest.mark.slow
def test_a_farm_of_serial_boards_flashes_and_opens_each_boards_own(dense, tmp_path,
                                                                   monkeypatch):
    """Not verified on hardware: the flash tool and the serial link are mocked
    (in the forked workers too); what is checked is the exact flash command
    each board's worker ran and the port its RPC opened."""
    import json

    import flash.hardware
    from aot.firmware import device
    from aot.rpc.errors import TransportError

    calls = tmp_path / "calls.jsonl"

    def note(**what):
        with open(calls, "a") as f:
            f.write(json.dumps({"pid": os.getpid(), **what}) + "\n")

    def connect(url, timeout=1.0):
        note(opened=url)
        raise TransportError(f"no board on {url} (a test without hardware)")

    monkeypatch.setattr(flash.hardware, "run_tool", lambda argv, *a, **k: note(argv=argv))
    monkeypatch.setattr(flash.hardware, "check_serial_port", lambda port: None)
    monkeypatch.setattr(device, "connect", connect)
    spec = BoardSpec(load_board(L4), repeats=1)
    boards = parse_boards(f"{L4}@/dev/ttyACM0#P0,{L4}@/dev/ttyACM1#P1")
    first = dense.space[0]
    other = next(c for c in dense.space      # another kernel: the farm keeps one per C
                 if dense.lower(c, "k").source != dense.lower(first, "k").source)
    configs = [first, other]
    with LocalFarm(spec, boards, tmp_path / "pool", tmp_path / "cache", []) as farm:
        results = farm.measure(dense, configs)
    assert [r.status for r in results] == ["error", "error"]
    assert all("no board on /dev/ttyACM" in r.error for r in results)
    by_pid: dict[int, dict] = {}
    for line in calls.read_text().splitlines():
        call = json.loads(line)
        by_pid.setdefault(call.pop("pid"), {}).update(call)
    assert len(by_pid) == 2 and os.getpid() not in by_pid   # one worker per board
    seen = set()
    for call in by_pid.values():
        port = call["opened"]
        probe = {"/dev/ttyACM0": "P0", "/dev/ttyACM1": "P1"}[port]
        *head, program = call["argv"]
        assert head == ["openocd", "-f", "board/st_nucleo_l4.cfg", "-c",
                        f"adapter serial {probe}", "-c"]
        assert program.startswith("program {") and program.endswith(
            "/project/build/firmware.elf} verify reset exit")
        seen.add(port)
    assert seen == {"/dev/ttyACM0", "/dev/ttyACM1"}


# --- simulated boards (aot.tune.farm_sim): the farm's scheduling without the host's work -----

SIM = SimBoard(image_seconds=0.05)


def test_a_simulated_board_costs_are_fakes_of_the_config_and_never_real(dense):
    configs = list(dense.space)[:5]
    with SimFlows(SIM) as one:
        results = one.measure(dense, configs)
        again = one.measure(dense, configs[::-1])
        assert (one.images, one.measured) == (2, 10)
    assert [r.config for r in results] == configs
    assert [r.status for r in results] == ["ok"] * 5
    assert {r.unit for r in results} == {SIMULATED}
    assert [r.cost for r in results] == [sim_cost(dense.key, c) for c in configs]
    assert [r.cost for r in again] == [r.cost for r in results][::-1]
    assert len({r.cost for r in results}) == 5   # something to rank
    # One image per max_batch() candidates, as real batch images.
    assert SimBoard(2.0, 0.5).seconds(max_batch() + 1) == 2 * 2.0 + (max_batch() + 1) * 0.5


def _counting(wl, calls: list):
    lower = wl.lower

    def counted(config, name):
        calls.append(config.index)
        return lower(config, name)
    return counted


@pytest.mark.slow
def test_the_head_lowers_no_candidate_and_loses_none(dense, monkeypatch):
    """The head used to lower every config of a batch (to keep one per distinct
    C) before any board started: its time per candidate, one after the other,
    bounded a farm's throughput.  Now each board's worker lowers its chunk."""
    calls: list[int] = []
    monkeypatch.setattr(dense, "lower", _counting(dense, calls))
    spec = BoardSpec(load_board("qemu/mps2-an386"), sim=SIM)
    batches = [list(dense.space)[k:k + 12] for k in range(0, 36, 12)]
    with LocalFarm(spec, 4, Path("/nonexistent"), Path("/nonexistent"), []) as farm:
        got = [farm.measure(dense, configs) for configs in batches]
        assert len(set(farm.worker_pids())) == 4
        assert farm.head_candidates == 36
        assert 0 <= farm.head_seconds
    assert calls == []
    for configs, results in zip(batches, got):
        assert [r.config for r in results] == configs
        assert [(r.status, r.cost) for r in results] == [("ok", sim_cost(dense.key, c))
                                                         for c in configs]


def test_a_simulated_board_is_refused_with_what_only_a_board_has(tmp_path):
    spec = BoardSpec(load_board("qemu/mps2-an386"), sim=SIM)
    for bad, word in ((dict(serial_port="/dev/ttyACM0"), "serial port"),
                      (dict(runner="qemu"), "runner"), (dict(ram=True), "RAM loader"),
                      (dict(cost="cycles"), "--cost cycles")):
        with pytest.raises(TuneError, match=f"simulated board .* no {word}"):
            open_farm(dataclasses.replace(spec, **bad), farm=None, boards=2, work=tmp_path,
                      cache=tmp_path, notes=[])
    l4 = BoardSpec(load_board(L4), sim=SIM)
    with pytest.raises(TuneError, match="a simulated board has no serial port"):
        open_farm(l4, farm=None, boards=[SerialBoard(L4, "/dev/ttyACM0"),
                                         SerialBoard(L4, "/dev/ttyACM1")],
                  work=tmp_path, cache=tmp_path, notes=[])
    # A real board's kind may be simulated several times (no ports needed).
    with open_farm(l4, farm=None, boards=3, work=tmp_path, cache=tmp_path, notes=[]) as f:
        assert isinstance(f, LocalFarm) and f.boards == 3
    with open_farm(spec, farm=None, boards=None, work=tmp_path, cache=tmp_path,
                   notes=[]) as f:
        assert isinstance(f, SimFlows)


def test_a_ray_clusters_simulated_boards_are_resources_of_their_own():
    board = load_board("qemu/mps2-an386")
    sim = BoardSpec(board, sim=SIM)
    resources = {"board:qemu/mps2-an386": 3, "board:sim/qemu/mps2-an386": 2}
    assert board_resource(board.tag, sim=True) == "board:sim/qemu/mps2-an386"
    assert [key for key, _ in ray_slots(resources, sim, None)] == [
        "board:sim/qemu/mps2-an386"] * 2
    # A real session never takes a simulated board, nor a simulation a real one.
    assert [key for key, _ in ray_slots(resources, BoardSpec(board), None)] == [
        "board:qemu/mps2-an386"] * 3
    assert ray_slots({"board:qemu/mps2-an386": 3}, sim, None) == []


@pytest.mark.slow
def test_a_session_on_simulated_boards_is_the_real_session_with_fake_costs(models_dir,
                                                                          tmp_path):
    """tune_model's scheduler, tuner, farm and log, simulated boards' costs: the
    records say ``simulated``, and a real measurement in the log is not resumed
    from."""
    from aot.tune import records as rec
    from aot.tune.session import tune_model

    kws, board = models_dir / "mlperf_kws_dscnn.tflite", load_board("qemu/mps2-an386")
    (wl,) = [w for w in extract_workloads(kws, board.target)[1] if "dense" in w.key]
    log = tmp_path / "log.jsonl"
    measured = dataclasses.replace(
        rec.from_result(wl, board, Result(wl.default, "ok", 1, (1,), "instructions")),
        model=rec.model_identity(kws))
    rec.append(log, [measured])
    report = tune_model(kws, board, trials=9, budget=60, batch_size=2, log=log, boards=2,
                        only=["dense"], sim=SIM)
    assert (report.boards, report.measured, report.unit) == (2, 9, SIMULATED)
    assert any("ignoring 1 records" in note for note in report.notes)
    records = rec.load(log)[1:]
    assert len(records) == 9 and {r.unit for r in records} == {SIMULATED}
    assert [r.cost for r in records] == [sim_cost(wl.key, wl.space.config(r.config))
                                         for r in records]
    assert report.workloads[0].best_cost == min(r.cost for r in records)
