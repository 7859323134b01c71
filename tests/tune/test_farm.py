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
    board_resource,
    in_order,
    open_farm,
    parse_farm,
    split,
)
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


def test_several_real_boards_on_one_machine_are_refused(tmp_path):
    spec = BoardSpec(load_board("st/nucleo-f746zg"), serial_port="/dev/null")
    with pytest.raises(TuneError, match="not supported yet"):
        LocalFarm(spec, 2, tmp_path, tmp_path, [])


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


@needs_gcc
def test_a_local_pool_records_wrong_crashing_and_hanging_candidates(dense, tmp_path):
    configs = list(dense.space)[:8]
    faults = ((configs[1].index, "wrong"), (configs[4].index, "crash"),
              (configs[6].index, "hang"))
    source = BrokenSource(**vars(dense.source), broken=faults)
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
    source = BrokenSource(**vars(dense.source), broken=((config.index, "hang"),))
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
