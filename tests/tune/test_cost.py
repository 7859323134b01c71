"""``aot tune --cost cycles``: which boards may, what records carry, costs of two
kinds never compared; on QEMU (slow), a candidate's estimated cycles equal
``aot profile``'s row of the same kernel."""

from types import SimpleNamespace

import numpy as np
import pytest

from support.fake_flows import CrcFlows
from support.tools import needs_arm_qemu

from aot.cli import main
from aot.cycles.profile import profile_model
from aot.firmware.verify import sample_path
from aot.target import load_board
from aot.tune import records as rec
from aot.tune import session
from aot.tune.errors import TuneError
from aot.tune.farm import BoardSpec, Flows
from aot.tune.measure import ESTIMATED_CYCLES, device_cost
from aot.tune.session import TunedKernels, check_cost, choose_loader, cost_unit, tune_model
from aot.tune.workload import extract_workloads

BOARD = "qemu/mps2-an386"


@pytest.fixture
def fake(monkeypatch):
    flows = CrcFlows(unit=ESTIMATED_CYCLES)
    monkeypatch.setattr(session, "open_farm", lambda *args, **kwargs: flows)
    monkeypatch.setattr(session, "check_emulated", lambda board: None)  # no QEMU needed
    return flows


def _records(wl, configs, unit, first_cost=10, model=None):
    return [rec.Record(wl.key, wl.description, str(wl.target), BOARD, c.to_json(), "ok",
                       first_cost + k, unit, model=model)
            for k, c in enumerate(configs)]


# --- which boards -----------------------------------------------------------------------

@pytest.mark.parametrize("tag, words", [
    ("host/native", ["host/native", "not emulated", "clock_monotonic", "--cost instructions"]),
    ("raspberrypi/pico", ["not emulated", "'systick'", "not a cycle counter"]),
    ("qemu/sifive-e", ["qemu/sifive-e", "no cycle model"]),
])
def test_boards_that_cannot_measure_cycles_are_refused(tag, words):
    with pytest.raises(TuneError) as err:
        check_cost(load_board(tag), "cycles")
    for word in words:
        assert word in str(err.value)


def test_a_real_board_with_a_cycle_counter_measures_with_it():
    board = load_board("st/nucleo-l4r5zi")
    check_cost(board, "cycles")              # its DWT cycle counter: accepted
    check_cost(board, "cycles", loader="ram")
    assert cost_unit(board, "cycles") == "cycles"
    assert choose_loader(board, "auto", "cycles") == "ram"   # the device's timer sees RAM code


def test_the_estimate_needs_batch_images(monkeypatch):
    monkeypatch.setattr(session, "check_emulated", lambda board: None)
    board = load_board("qemu/mps2-an385")
    with pytest.raises(TuneError, match="--loader ram is not supported yet"):
        check_cost(board, "cycles", loader="ram")
    check_cost(board, "cycles", loader="image")
    assert choose_loader(board, "auto", "cycles") == "image"
    assert cost_unit(board, "cycles") == ESTIMATED_CYCLES
    assert cost_unit(board, "instructions") == "instructions"


def test_a_missing_qemu_is_refused_before_tuning(monkeypatch):
    monkeypatch.setattr("shutil.which", lambda name: None)
    with pytest.raises(TuneError, match="not installed"):
        check_cost(load_board(BOARD), "cycles")
    check_cost(load_board(BOARD), "cycles", farm="ray://head:10001")  # the nodes run QEMU


def test_tune_refuses_before_extracting_workloads(kws, tmp_path):
    with pytest.raises(TuneError, match="not emulated"):
        tune_model(kws, "host/native", trials=1, log=tmp_path / "x.jsonl", cost="cycles")
    with pytest.raises(TuneError, match="unknown cost 'latency'"):
        tune_model(kws, BOARD, trials=1, log=tmp_path / "x.jsonl", cost="latency")


def test_the_cost_travels_with_the_board_spec(tmp_path):
    spec = BoardSpec(load_board(BOARD), cost="cycles")
    flows = Flows.from_spec(spec, tmp_path / "w", tmp_path / "c", [])
    assert flows.runner.cost == "cycles" and flows.ram_runner.cost == "cycles"


def test_a_device_timer_that_does_not_count_cycles_fails_the_candidate():
    ok = ("ok", 100, (100, 101), "instructions", "")
    assert device_cost(ok, "instructions") == ok
    status, cost, _, _, error = device_cost(ok, "cycles")
    assert status == "error" and cost is None and "counts instructions, not cycles" in error
    measured = ("ok", 90, (90,), "cycles", "")
    assert device_cost(measured, "cycles") == measured


# --- records of two kinds ---------------------------------------------------------------

@pytest.mark.slow
def test_a_session_of_one_cost_ignores_the_logs_records_of_the_other(fake, dense, kws, tmp_path):
    log = tmp_path / "kws.jsonl"
    configs = list(dense.space)[:3]
    rec.append(log, _records(dense, configs, "instructions",
                             model=rec.model_identity(kws)))
    report = tune_model(kws, BOARD, trials=3, log=log, only=["dense"], cost="cycles")
    (note,) = [n for n in report.notes if "ignoring" in n]
    assert "3 records" in note and "instructions" in note and "estimated cycles" in note
    # the instruction counts were not taken as cycles: every config measured again
    assert len(fake.measured) == 3
    cycles = [r for r in rec.load(log) if r.unit == ESTIMATED_CYCLES]
    assert len(cycles) == 3

    # resuming the cycles session takes its own records only: nothing new to measure
    fake.measured.clear()
    again = tune_model(kws, BOARD, trials=3, log=log, only=["dense"], cost="cycles")
    assert fake.measured == [] and again.workloads[0].trials == 3


@pytest.mark.slow
def test_imported_records_of_the_other_cost_are_ignored_with_a_note(fake, dense, kws,
                                                                      tmp_path):
    other = tmp_path / "other.jsonl"
    rec.append(other, _records(dense, list(dense.space)[:4], "instructions", first_cost=1,
                               model={"name": "other.tflite", "sha256": "0" * 16}))
    report = tune_model(kws, BOARD, trials=2, log=tmp_path / "kws.jsonl", only=["dense"],
                        cost="cycles", tuning_records=[other])
    assert report.workloads[0].imported == 0
    assert any("ignoring 4 records in --tuning-records" in n for n in report.notes)


def test_compiling_takes_the_best_of_one_cost_kind(dense):
    configs = list(dense.space)[:4]
    records = (_records(dense, configs[:2], "instructions", first_cost=5)
               + _records(dense, configs[2:], ESTIMATED_CYCLES, first_cost=500))
    chosen, notes = rec.best(records, dense.target)
    # the instruction count 5 is smaller, but the workload has cycle estimates: 500 wins
    assert chosen[dense.key].unit == ESTIMATED_CYCLES and chosen[dense.key].cost == 500
    (note,) = notes
    assert "1 workload has records in estimated cycles and instructions" in note
    only_instructions, notes = rec.best(records[:2], dense.target)
    assert only_instructions[dense.key].cost == 5 and notes == []


def test_failed_records_without_a_unit_fit_every_cost(dense):
    failed = rec.Record(dense.key, "", str(dense.target), BOARD, {}, "build", None, "")
    counted = _records(dense, list(dense.space)[:1], "instructions")
    kept, ignored = rec.of_unit([failed, *counted], ESTIMATED_CYCLES)
    assert kept == [failed] and ignored == counted
    kept, ignored = rec.of_unit([failed, *counted], None)   # a real board's own timer
    assert kept == [failed, *counted] and ignored == []


def test_the_cli_documents_the_cycles_cost(capsys):
    with pytest.raises(SystemExit):
        main(["tune", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "estimated Cortex-M cycles" in text and "not supported yet" not in text
    with pytest.raises(SystemExit):
        main(["profile", "--help"])
    assert "--tuning-records" in capsys.readouterr().out


# --- on QEMU ------------------------------------------------------------------------------

@pytest.mark.slow
@needs_arm_qemu
def test_a_candidates_cycles_are_aot_profiles_row_of_the_same_kernel(kws, tmp_path):
    """Tuned with --cost cycles, the dense layer's cost is exactly the cycles
    ``aot profile`` gives its row, for the library's schedule and for the best
    tuned one, the model run on the sample input the workload was measured on
    (both count the kernel's function and its helpers, not the RPC's code)."""
    log = tmp_path / "kws.jsonl"
    report = tune_model(kws, BOARD, trials=4, batch_size=4, log=log, only=["dense"],
                        cost="cycles", workdir=tmp_path / "work", cache_dir=tmp_path / "cache")
    (summary,) = report.workloads
    records = rec.load(log)
    assert all(r.unit == ESTIMATED_CYCLES for r in records)
    assert all(r.timings == (r.cost,) for r in records if r.cost)   # one traced run
    sample = [np.load(sample_path(kws))[:1]]
    untuned = profile_model(kws, BOARD, inputs=sample, cache_dir=tmp_path / "cache")
    (row,) = [r for r in untuned.rows if "dense" in r.name]
    assert summary.default_cost == round(row.cycles)

    board = load_board(BOARD)
    tuned, notes = TunedKernels.from_log(log, board.target, model=kws)
    assert notes == []
    profile = profile_model(kws, BOARD, inputs=sample, cache_dir=tmp_path / "cache",
                            kernel_library=tuned)
    assert len(tuned.applied) == 1
    (row,) = [r for r in profile.rows if "dense" in r.name]
    assert summary.best_cost == round(row.cycles)
    assert [np.asarray(x).tolist() for x in profile.outputs] == \
        [np.asarray(x).tolist() for x in untuned.outputs]


@pytest.mark.slow
@needs_arm_qemu
def test_a_candidate_that_crashes_or_hangs_while_traced_is_a_failed_trial(models_dir,
                                                                         tmp_path):
    from aot.tune.measure import Builder, Candidate, Runner

    target = load_board(BOARD).target
    dense = extract_workloads(models_dir / "mlperf_kws_dscnn.tflite", target)[1][-1]
    builder = Builder(load_board(BOARD), tmp_path / "work", cache_dir=tmp_path / "cache")
    good, _ = builder.candidates(dense, list(dense.space)[:3])
    good = [Candidate(c.name, c.configs[:1], c.source, c.kernel) for c in good]

    def broken(name, body):
        proto = good[0].kernel.prototype.replace(good[0].kernel.name, name).rstrip(";")
        return Candidate(name, good[0].configs[:1],
                         f"#include <stdint.h>\n{proto} {{\n{body}\n}}\n", good[0].kernel)
    crash = broken("tune_crash", "  (void)x0; (void)y1;\n  *(volatile int32_t *)0 = 1;\n"
                   "  return 0;")
    hang = broken("tune_hang", "  (void)x0; (void)y1;\n  for (;;) {\n  }")
    batch = builder.build(dense, [good[0], crash, good[1], hang, good[2]])
    assert not batch.build_error
    results = Runner(repeats=2, timeout=3.0, cost="cycles").run(batch)
    assert [r.status for r in results] == ["ok", "error", "ok", "timeout", "ok"]
    for r in (results[0], results[2], results[4]):   # after the restarts, traced again
        assert r.unit == ESTIMATED_CYCLES and r.timings == (r.cost,) and r.cost > 0
    assert "device" in results[1].error


@pytest.mark.slow
@needs_arm_qemu
def test_a_local_farm_of_two_qemus_estimates_what_one_board_does(kws, dense, tmp_path):
    from aot.tune.farm import LocalFarm

    configs = list(dense.space)[:4]
    spec = BoardSpec(load_board(BOARD), repeats=1, cost="cycles")
    with Flows.from_spec(spec, tmp_path / "one", tmp_path / "cache", []) as f:
        alone = f.measure(dense, configs)
    with LocalFarm(spec, 2, tmp_path / "pool", tmp_path / "cache", []) as farm:
        pooled = farm.measure(dense, configs)
    assert [r.unit for r in pooled] == [ESTIMATED_CYCLES] * len(configs)
    assert [(r.status, r.cost) for r in pooled] == [(r.status, r.cost) for r in alone]
    assert all(r.ok for r in pooled)


class _Dev:
    """A device that runs every kernel right, each run counted 10 instructions."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def run(self, n, kernel=None, timeout=None):
        from aot.rpc.protocol import TimerUnit
        return SimpleNamespace(timings=[10] * n, unit=TimerUnit.INSTRUCTIONS)


class _Trace:
    """Estimates 123 cycles per call, but the trace of candidate ``short`` ends early."""

    def __init__(self, short: int):
        self.short, self.calls = short, 0

    def device(self):
        return _Dev()

    def mark(self):
        return self.calls

    def estimates(self, since, count, timeout):
        from aot.cycles import CycleModelError
        from aot.cycles.model import Estimate
        self.calls += count
        if self.calls - 1 == self.short:
            raise CycleModelError("QEMU's execution log holds 0 measured runs, expected 1")
        return [Estimate(instructions=10, cycles=123.0)] * count


def test_a_candidate_whose_traced_run_fails_is_a_failed_trial(monkeypatch):
    from aot.tune import measure
    from aot.tune.measure import Batch, Candidate, Runner

    monkeypatch.setattr(measure, "call_trace", lambda project, n: _Trace(short=1))
    monkeypatch.setattr(measure, "open_device", lambda *a, **k: _Dev())
    monkeypatch.setattr(measure, "write_inputs", lambda *a: None)
    batch = Batch(None, [Candidate(f"tune_c{i}", [f"config{i}"], "", None) for i in range(3)],
                  SimpleNamespace(board=load_board(BOARD)))
    results = Runner(cost="cycles").run(batch)
    assert [r.status for r in results] == ["ok", "error", "ok"]
    assert [r.cost for r in results] == [123, None, 123]
    assert "expected 1" in results[1].error and results[0].unit == ESTIMATED_CYCLES
    # the same batch costed in instructions never builds a trace
    monkeypatch.setattr(measure, "call_trace", None)
    assert [r.cost for r in Runner().run(batch)] == [10, 10, 10]
