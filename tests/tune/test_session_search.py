"""tune_model's search with a fake measuring flow: the budgeted schedule, the
auto tuner's records, resuming, and compiling with an auto record."""

import zlib

import pytest

from aot.target import load_board
from aot.tune import records as rec
from aot.tune import session
from aot.tune.auto import AutoWorkload
from aot.tune.errors import TuneError
from aot.tune.measure import Result
from aot.tune.library import TunedKernels
from aot.tune.session import tune_model
from aot.tune.workload import extract_workloads

BOARD = "qemu/mps2-an386"


class FakeFlows:
    """Costs from the config alone (the default costs most); two boards."""

    boards = 2
    batches: list[int] = []

    def __init__(self, *args, **kwargs):
        self.ram = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def measure(self, workload, configs):
        FakeFlows.batches.append(len(configs))
        out = []
        for c in configs:
            cost = 5000 if c == workload.default else \
                1000 + zlib.crc32(repr(sorted(c.to_json().items())).encode()) % 3000
            out.append(Result(c, "ok", cost, (cost,), "instructions"))
        return out


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.setattr(session, "open_farm", lambda *args, **kwargs: FakeFlows())
    FakeFlows.batches = []
    return FakeFlows


@pytest.fixture(scope="module")
def kws(models_dir):
    return models_dir / "mlperf_kws_dscnn.tflite"


@pytest.mark.slow
def test_a_budgeted_auto_session_logs_resumes_and_scales_batches(kws, tmp_path, fake):
    log = tmp_path / "log.jsonl"
    lines = []
    report = tune_model(kws, BOARD, trials=40, budget=600, tuner="auto", log=log,
                        only=["dense"], progress=lines.append)
    (summary,) = report.workloads
    assert summary.trials == 40 and summary.default_cost == 5000
    assert summary.best_cost < 5000
    # a batch is up to 16 candidates per board (fewer when the tuner finds
    # fewer candidates with distinct C)
    assert 16 < max(fake.batches) <= 32 and fake.batches[0] == 1
    records = rec.load(log)
    assert len(records) == 40 and all("sketch" in r.config for r in records)
    assert {r.config["sketch"] for r in records} >= {"template", "tiled"}
    assert lines[-1].budget == 600 and "untuned" in lines[-1].line()

    again = tune_model(kws, BOARD, trials=40, budget=600, tuner="auto", log=log,
                       only=["dense"])
    assert again.measured == 0 and again.workloads[0].best_cost == summary.best_cost


@pytest.mark.slow
def test_auto_resumes_from_the_template_tuners_records(kws, tmp_path, fake):
    log = tmp_path / "log.jsonl"
    first = tune_model(kws, BOARD, trials=8, tuner="evolution", log=log, only=["dense"])
    again = tune_model(kws, BOARD, trials=8, tuner="auto", log=log, only=["dense"])
    assert again.measured == 0
    assert again.workloads[0].best_cost == first.workloads[0].best_cost
    assert again.workloads[0].best_config["sketch"] == "template"


def test_compiling_applies_an_auto_record(kws, tmp_path):
    target = load_board(BOARD).target
    ag, workloads = extract_workloads(kws, target)
    wl = AutoWorkload.of(workloads[-1])
    tiled = wl.space.sketches["tiled"].space
    config = wl.space[wl.space.offsets["tiled"] + len(tiled) // 3]
    log = tmp_path / "log.jsonl"
    rec.append(log, [rec.Record(wl.key, wl.description, str(target), BOARD, config.to_json(),
                                "ok", 100, "instructions")])
    tuned, _ = TunedKernels.from_log(log, target)
    group = next(g for g in ag.annotations.groups if g.name == wl.groups[0])
    kernel = tuned.lower_group(group, ag, target, name="k")
    assert tuned.applied == [group.name]
    assert kernel.source == wl.lower(config, "k").source


def test_cycles_without_a_trace_or_a_cycle_counter_and_no_trials_are_refused(kws, tmp_path):
    with pytest.raises(TuneError, match="host/native: the board is not emulated"):
        tune_model(kws, "host/native", trials=2, log=tmp_path / "log", cost="cycles")
    with pytest.raises(TuneError, match="give --trials"):
        tune_model(kws, BOARD, log=tmp_path / "log")


class NoRoom:
    """Fake flows of a board too small for the measuring firmware: nothing builds."""

    def __init__(self):
        self.boards, self.ram, self.measured = 1, False, 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def measure(self, workload, configs):
        self.measured += len(configs)
        return [Result(c, "build", error="the firmware of tune dense does not fit qemu/x: RAM "
                       "overflows by 5824 bytes\nmore lines") for c in configs]


@pytest.mark.parametrize("budget", [None, 60], ids=["trials", "budget"])
@pytest.mark.one_fast
def test_a_workload_whose_default_does_not_build_is_not_searched(kws, tmp_path, monkeypatch,
                                                                  budget):
    flows = NoRoom()
    monkeypatch.setattr(session, "open_farm", lambda *args, **kwargs: flows)
    report = tune_model(kws, BOARD, trials=32, budget=budget, log=tmp_path / "log.jsonl",
                        only=["dense", "depthwise"])
    # the library's own schedule is measured once per workload; no search follows
    assert flows.measured == 2 and report.measured == 2
    assert [w.best_cost for w in report.workloads] == [None, None]
    notes = [n for n in report.notes if "not tuned" in n]
    assert len(notes) == 2 and notes[1] == (
        "dense 1x64 * 12x64 -> 1x12: not tuned: the library's own schedule did not build for "
        "measuring on qemu/mps2-an386 (the firmware of tune dense does not fit qemu/x: RAM "
        "overflows by 5824 bytes)")
