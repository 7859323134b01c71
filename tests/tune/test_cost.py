"""``aot tune --cost cycles``: which boards may, what records carry, costs of two
kinds never compared; on QEMU (slow), a candidate's estimated cycles equal
``aot profile``'s row of the same kernel."""

import dataclasses
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
from aot.tune.measure import device_cost
from aot.tune.records import ESTIMATED_CYCLES
from aot.tune.library import TunedKernels
from aot.tune.session import TuneOptions, TuningBoard, board_cost, tune_model
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

@pytest.mark.parametrize("tag, device, words", [
    ("host/native", False,
     ["host/native", "not emulated", "clock_monotonic", "--cost instructions"]),
    ("raspberrypi/pico", True, ["not emulated", "'systick'", "not a cycle counter"]),
    ("qemu/sifive-e", False, ["qemu/sifive-e", "no cycle model"]),
])
def test_boards_that_cannot_measure_cycles_are_refused(tag, device, words):
    with pytest.raises(TuneError) as err:
        TuningBoard.of(load_board(tag), "cycles", device=device)
    for word in words:
        assert word in str(err.value)


def test_a_real_board_with_a_cycle_counter_measures_with_it_on_the_device():
    board = load_board("st/nucleo-l4r5zi")
    facts = TuningBoard.of(board, "cycles", device=True)  # its DWT cycle counter: accepted
    TuningBoard.of(board, "cycles", loader="ram", device=True)
    assert facts.unit == "cycles" and facts.trace is None and facts.price is None
    assert facts.loader == "ram"  # the device's timer sees RAM code


# --- a real board priced on its trace board ------------------------------------------------

L4 = "st/nucleo-l4r5zi"
L4_UNIT = f"{ESTIMATED_CYCLES}@{L4}"


@pytest.mark.parametrize("options, device", [
    ({}, False),                                   # nothing names a device: estimate
    ({"runner": "qemu"}, False),                   # asks for the estimate
    ({"serial_port": "/dev/ttyACM0"}, True),
    ({"runner": "openocd"}, True),
    ({"boards": [session.SerialBoard(L4, "/dev/ttyACM0")]}, True),
    ({"farm": "ray://head:10001"}, True),         # the cluster's boards
    ({"farm": "local", "boards": 2}, False),       # two trace-board QEMUs here
])
def test_options_that_name_a_device_measure_on_it(options, device):
    assert session.names_device(load_board(L4), "cycles", **options) is device


def test_qemu_and_a_serial_port_together_are_refused():
    with pytest.raises(TuneError, match="--runner qemu and --port: --runner qemu estimates on "
                       "the board's trace board, a serial port or Ray farm measures on the "
                       "device; leave out one of them"):
        session.names_device(load_board(L4), "cycles", runner="qemu", serial_port="/dev/x")


def test_a_real_board_without_a_device_is_estimated_with_its_memory(monkeypatch):
    monkeypatch.setattr(session, "check_emulated", lambda board: None)
    board = load_board(L4)
    facts = TuningBoard.of(board, "cycles")
    assert facts.trace.tag == BOARD
    assert session.trace_for(board, "cycles", device=True) is None
    assert facts.unit == L4_UNIT and facts.price.unit == L4_UNIT
    assert rec.unit_name(L4_UNIT) == f"estimated cycles with {L4}'s memory"
    assert facts.loader == "image"
    with pytest.raises(TuneError, match="with --loader ram: without --port or --runner the "
                       "cycles are estimated on qemu/mps2-an386 under QEMU"):
        TuningBoard.of(board, "cycles", loader="ram")


def test_emulated_boards_are_priced_with_their_own_memory():
    # the AN386's SSRAM never waits: zero-wait estimates, as before
    assert TuningBoard.of(load_board(BOARD), "cycles").unit == ESTIMATED_CYCLES
    # an emulated board whose record describes flash that waits: priced with it
    twin = dataclasses.replace(load_board(L4), tag="qemu/l4-twin",
                               qemu=load_board(BOARD).qemu)
    assert TuningBoard.of(twin, "cycles").unit == f"{ESTIMATED_CYCLES}@qemu/l4-twin"


def test_the_options_derive_the_boards_facts_once(monkeypatch, tmp_path):
    """The trace board and the pricing (core table, memory model) of a real board
    estimated in cycles: derived once when the options are built, then only read."""
    monkeypatch.setattr(session, "check_emulated", lambda board: None)
    calls = {"trace_for": 0, "pricing": 0}

    def counting(name):
        real = getattr(session, name)

        def counted(*args, **kw):
            calls[name] += 1
            return real(*args, **kw)
        return counted

    for name in calls:
        monkeypatch.setattr(session, name, counting(name))
    options = TuneOptions.build(L4, log=tmp_path / "log.jsonl", trials=2, cost="cycles")
    assert calls == {"trace_for": 1, "pricing": 1}
    facts = options.board
    assert facts.trace.tag == BOARD and facts.unit == L4_UNIT and facts.loader == "image"
    spec = facts.spec("openocd", None, 3)
    assert spec.runner is None and spec.trace is facts.trace   # the trace board's QEMU
    with pytest.raises(TypeError, match="tuning options given twice"):
        tune_model("kws.tflite", options, trials=3)


def test_a_real_board_without_memory_timing_is_refused_naming_the_fields(monkeypatch):
    board = load_board(L4)
    bare = dataclasses.replace(board, memory=dataclasses.replace(board.memory, timing=None))
    with pytest.raises(TuneError, match="--cost cycles on st/nucleo-l4r5zi: st/nucleo-l4r5zi "
                       ".* has no memory timing: the cycle estimate needs memory.timing with "
                       "trace_board, flash, sram and caches"):
        TuningBoard.of(bare, "cycles")
    TuningBoard.of(bare, "cycles", device=True)   # its DWT counter needs none


def test_a_session_on_a_real_board_runs_on_its_trace_board(monkeypatch, kws, tmp_path):
    """The wiring: candidates built for and run on the trace board, priced with the
    real board's core and memory, recorded for the real board in its own unit,
    beside (never mixed with) the trace board's zero-wait records in one log."""
    specs = []
    flows = CrcFlows(unit=ESTIMATED_CYCLES)

    def farm(spec, **kwargs):
        specs.append(spec)
        return flows
    monkeypatch.setattr(session, "open_farm", farm)
    monkeypatch.setattr(session, "check_emulated", lambda board: None)
    log = tmp_path / "kws.jsonl"
    zero = tune_model(kws, BOARD, trials=2, log=log, only=["dense"], cost="cycles")
    assert zero.unit == ESTIMATED_CYCLES
    flows.measured.clear()
    flows.unit = L4_UNIT
    report = tune_model(kws, L4, trials=2, log=log, only=["dense"], cost="cycles")
    (spec,) = specs[1:]
    assert spec.board.tag == L4 and spec.trace.tag == BOARD and not spec.ram
    assert report.unit == L4_UNIT and len(flows.measured) == 2   # nothing resumed
    assert any("estimated on qemu/mps2-an386 (QEMU) with st/nucleo-l4r5zi's core table and "
               "memory model" in n for n in report.notes)
    assert any("ignoring 2 records" in n and "estimated cycles" in n for n in report.notes)
    mine = [r for r in rec.load(log) if r.unit == L4_UNIT]
    assert len(mine) == 2 and {r.board for r in mine} == {L4}
    flows_ = Flows.from_spec(spec, tmp_path / "w", tmp_path / "c", [])
    assert flows_.builder.board.tag == BOARD
    assert flows_.runner.priced.tag == L4 and flows_.runner.cost == "cycles"


def test_a_local_farm_estimates_a_real_board_on_several_trace_boards(tmp_path):
    from aot.tune.farm import LocalFarm

    spec = BoardSpec(load_board(L4), cost="cycles")
    with pytest.raises(TuneError, match="a farm of real boards needs each one's serial port"):
        LocalFarm(spec, 2, tmp_path, tmp_path, [])
    traced = dataclasses.replace(spec, trace=load_board(BOARD))
    assert [s.trace.tag for s in LocalFarm(traced, 2, tmp_path, tmp_path, []).slots] == \
        [BOARD, BOARD]


def test_the_cli_refuses_qemu_with_a_serial_port(kws, tmp_path, capsys):
    code = main(["tune", str(kws), "--board", L4, "--cost", "cycles", "--trials", "1",
                 "--runner", "qemu", "--port", "/dev/ttyACM0", "--log",
                 str(tmp_path / "x.jsonl")])
    assert code == 2
    assert "--runner qemu and --port" in capsys.readouterr().err
    assert not (tmp_path / "x.jsonl").exists()


def test_compiling_prefers_a_boards_memory_estimates(dense):
    configs = list(dense.space)[:4]
    records = (_records(dense, configs[:2], ESTIMATED_CYCLES, first_cost=5)
               + _records(dense, configs[2:], L4_UNIT, first_cost=500))
    chosen, notes = rec.best(records, dense.target)
    assert chosen[dense.key].unit == L4_UNIT
    assert "estimated cycles with st/nucleo-l4r5zi's memory and estimated cycles" in notes[0]
    kept, ignored = rec.of_unit(records, None)   # a device's own timer: no estimate
    assert kept == [] and len(ignored) == 4


def test_compiling_for_a_board_prefers_its_own_memory_estimates_over_another_boards(dense):
    """One log with two boards' memory estimates of one target (the L4R5's target string
    is the AN386's): the board compiled for takes its own, whichever tag sorts first; the
    other board's rank after the zero-wait estimates."""
    f7_unit = rec.estimated_unit("st/nucleo-f746zg")
    configs = list(dense.space)[:6]
    records = (_records(dense, configs[:2], f7_unit, first_cost=5)
               + _records(dense, configs[2:4], L4_UNIT, first_cost=500)
               + _records(dense, configs[4:], ESTIMATED_CYCLES, first_cost=50))
    mine, _ = rec.best(records, dense.target, board="st/nucleo-l4r5zi")
    assert mine[dense.key].unit == L4_UNIT and mine[dense.key].cost == 500
    other, notes = rec.best(records, dense.target, board="qemu/mps2-an386")
    assert other[dense.key].unit == ESTIMATED_CYCLES
    assert "in estimated cycles and estimated cycles with st/nucleo-f746zg's memory" in " ".join(
        notes)
    unknown, _ = rec.best(records, dense.target)   # no board: the first tag in sort order
    assert unknown[dense.key].unit == f7_unit


def test_the_compile_commands_pass_the_board_they_compile_for(dense, tmp_path):
    from aot.commands.compile import tuned_kernels

    f7_unit = rec.estimated_unit("st/nucleo-f746zg")
    configs = list(dense.space)[:4]
    l4 = load_board("st/nucleo-l4r5zi")
    l4_target = str(l4.target)
    log = tmp_path / "two-boards.jsonl"
    rec.append(log, [dataclasses.replace(r, target=l4_target) for r in
                     _records(dense, configs[:2], f7_unit, first_cost=5)
                     + _records(dense, configs[2:], L4_UNIT, first_cost=500)])
    tuned = tuned_kernels(log, l4.target, l4)
    assert tuned.best[dense.key].unit == L4_UNIT


def test_the_estimate_needs_batch_images(monkeypatch):
    monkeypatch.setattr(session, "check_emulated", lambda board: None)
    board = load_board("qemu/mps2-an385")
    with pytest.raises(TuneError, match="--loader ram is not supported yet"):
        TuningBoard.of(board, "cycles", loader="ram")
    TuningBoard.of(board, "cycles", loader="image")
    assert TuningBoard.of(board, "cycles").loader == "image"
    assert TuningBoard.of(board, "cycles").unit == ESTIMATED_CYCLES
    assert TuningBoard.of(board, "instructions").unit == "instructions"


def test_a_missing_qemu_is_refused_before_tuning(monkeypatch):
    monkeypatch.setattr("shutil.which", lambda name: None)
    with pytest.raises(TuneError, match="not installed"):
        TuningBoard.of(load_board(BOARD), "cycles")
    TuningBoard.of(load_board(BOARD), "cycles", farm="ray://head:10001")  # the nodes run QEMU


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

def _dense_costs(kws, tmp_path):
    """KWS's dense layer tuned with --cost cycles on qemu/mps2-an386, and ``aot profile``'s
    row of that kernel for the library's schedule and for the best tuned one."""
    log = tmp_path / "kws.jsonl"
    report = tune_model(kws, BOARD, trials=4, batch_size=4, log=log, only=["dense"],
                        cost="cycles", workdir=tmp_path / "work", cache_dir=tmp_path / "cache")
    (summary,) = report.workloads
    records = rec.load(log)
    assert all(r.unit == ESTIMATED_CYCLES for r in records)
    assert all(r.timings == (r.cost,) for r in records if r.cost)   # one traced run
    sample = [np.load(sample_path(kws))[:1]]
    untuned = profile_model(kws, BOARD, inputs=sample, cache_dir=tmp_path / "cache")
    (default_row,) = [r for r in untuned.rows if "dense" in r.name]
    board = load_board(BOARD)
    tuned, notes = TunedKernels.from_log(log, board.target, model=kws)
    assert notes == []
    profile = profile_model(kws, BOARD, inputs=sample, cache_dir=tmp_path / "cache",
                            kernel_library=tuned)
    assert len(tuned.applied) == 1
    (best_row,) = [r for r in profile.rows if "dense" in r.name]
    assert [np.asarray(x).tolist() for x in profile.outputs] == \
        [np.asarray(x).tolist() for x in untuned.outputs]
    return summary, default_row, best_row


@pytest.mark.slow
@needs_arm_qemu
def test_a_candidates_cycles_are_aot_profiles_row_of_the_same_kernel(kws, tmp_path):
    """Tuned with --cost cycles, the dense layer's cost is the cycles ``aot profile``
    gives its row within 1%, for the library's schedule and for the best tuned one, the
    model run on the sample input the workload was measured on (both count the kernel's
    function and its helpers, not the RPC's code)."""
    summary, default_row, best_row = _dense_costs(kws, tmp_path)
    assert abs(summary.default_cost - default_row.cycles) <= 0.01 * default_row.cycles
    assert abs(summary.best_cost - best_row.cycles) <= 0.01 * best_row.cycles


@pytest.mark.slow
@needs_arm_qemu
@pytest.mark.xfail(strict=True, reason="not exact since the entry function became loop IR "
                   "(3a9d968): the profile's row of KWS's dense kernel is 1,383 cycles, the "
                   "tuning image's 1,376 (0.5%); which instructions the call window now counts "
                   "in addition is not found yet")
def test_a_candidates_cycles_are_exactly_aot_profiles_row(kws, tmp_path):
    summary, default_row, best_row = _dense_costs(kws, tmp_path)
    assert summary.default_cost == round(default_row.cycles)
    assert summary.best_cost == round(best_row.cycles)


@pytest.mark.slow
@needs_arm_qemu
def test_a_real_boards_candidates_cost_aot_profiles_row_with_its_memory(kws, tmp_path):
    """Tuned for st/nucleo-l4r5zi with --cost cycles (no device: estimated on
    qemu/mps2-an386 with the L4R5's core and memory), the dense layer's cost is
    ``aot profile --board st/nucleo-l4r5zi``'s row of the same kernel, for the
    library's schedule and the best tuned one, within a few cache lines: the two
    images place the kernel's code and weights at other offsets of the flash
    lines (measured for the library's schedule: 1,551 against 1,541 cycles, two
    more 32-byte D-cache lines of weights and three more 8-byte fetch lines; the
    profile's walk also starts with the caches the previous kernels left, the
    candidate's from cold).
    Every candidate costs more than at zero wait states (its weights are read
    from flash behind 5 wait states)."""
    kw = dict(trials=3, batch_size=3, only=["dense"], cost="cycles", tuner="random",
              workdir=tmp_path / "work", cache_dir=tmp_path / "cache")
    log = tmp_path / "l4.jsonl"
    report = tune_model(kws, L4, log=log, **kw)
    (summary,) = report.workloads
    records = rec.load(log)
    assert {(r.board, r.unit) for r in records} == {(L4, L4_UNIT)}
    assert summary.failed == 0
    zero_log = tmp_path / "zero.jsonl"
    tune_model(kws, BOARD, log=zero_log, **kw)
    zero = {tuple(sorted(r.config.items())): r.cost for r in rec.load(zero_log)}
    for r in records:
        assert r.cost > zero[tuple(sorted(r.config.items()))]

    def close(cost, row):
        return abs(cost - row.cycles) <= 0.02 * row.cycles

    # the candidates keep their weights in flash: so does the profile (no placement)
    sample = [np.load(sample_path(kws))[:1]]
    untuned = profile_model(kws, L4, inputs=sample, cache_dir=tmp_path / "cache",
                            placement=False)
    (row,) = [r for r in untuned.rows if "dense" in r.name]
    assert row.stalls.total > 0 and close(summary.default_cost, row)
    tuned, notes = TunedKernels.from_log(log, load_board(L4).target, model=kws)
    assert notes == []
    profile = profile_model(kws, L4, inputs=sample, cache_dir=tmp_path / "cache",
                            kernel_library=tuned, placement=False)
    assert len(tuned.applied) == 1
    (row,) = [r for r in profile.rows if "dense" in r.name]
    assert close(summary.best_cost, row)


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
    assert [r.unit for r in pooled] == [ESTIMATED_CYCLES] * len(configs), [
        (r.status, r.error) for r in pooled]
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

    monkeypatch.setattr(measure, "call_trace", lambda project, n, price: _Trace(short=1))
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


@pytest.mark.parametrize("tag, cost", [
    ("qemu/mps2-an386", "instructions"),          # emulated: its memory never waits
    ("qemu/netduinoplus2", "instructions"),
    ("st/nucleo-l4r5zi", "cycles"),               # 5 flash wait states behind the ART
    ("st/nucleo-f746zg", "cycles"),
    ("nordic/nrf52840dk", "cycles"),
    ("raspberrypi/pico", "cycles"),               # XIP flash behind its cache
    ("espressif/esp32c3-devkitm", "instructions"),  # no RISC-V core table to price cycles
    ("host/native", "instructions"),
])
@needs_arm_qemu   # the real boards' cycles are estimated on their emulated core
def test_a_board_whose_memory_waits_is_tuned_on_cycles_by_default(tag, cost):
    assert board_cost(load_board(tag)) == cost


def test_the_default_cost_steps_aside_where_cycles_cannot_be_priced():
    # --loader ram cannot be priced from a trace: the default is then instructions
    assert board_cost(load_board("st/nucleo-l4r5zi"), "ram") == "instructions"
