"""Compiling with tuning records: the best record per workload, other targets ignored."""

import pytest
from aot.cli import main
from aot.compile import compile_model
from aot.target import load_board
from aot.tune import records as rec
from aot.tune.library import TunedKernels
from aot.tune.workload import extract_workloads

BOARD = "qemu/mps2-an386"


def _log(tmp_path, models_dir):
    target = load_board(BOARD).target
    _, workloads = extract_workloads(models_dir / "mlperf_kws_dscnn.tflite", target)
    dense = workloads[-1]
    fast = dense.space.config({**dense.default, "unroll_u": 4})
    records = [
        rec.Record(dense.key, dense.description, str(target), BOARD, dict(dense.default), "ok",
                   200, "instructions"),
        rec.Record(dense.key, dense.description, str(target), BOARD, fast.to_json(), "ok",
                   150, "instructions"),
        rec.Record(dense.key, dense.description, str(target), BOARD,
                   {**dense.default, "unroll_u": 2}, "wrong", None, "instructions"),
        rec.Record(dense.key, dense.description, "c -keys=riscv,cpu -march=rv32imac", None,
                   {**dense.default, "unroll_u": 2}, "ok", 1, "instructions"),
    ]
    log = tmp_path / "kws.jsonl"
    rec.append(log, records)
    return log, dense, fast


@pytest.mark.slow
def test_best_record_is_applied_to_its_groups_only(tmp_path, models_dir):
    log, dense, fast = _log(tmp_path, models_dir)
    model = models_dir / "mlperf_kws_dscnn.tflite"
    tuned, notes = TunedKernels.from_log(log, load_board(BOARD).target)
    assert notes == ["ignoring 1 tuning records made for another target "
                     "(c -keys=riscv,cpu -march=rv32imac)"]
    with_records = compile_model(model, BOARD, measure_code=False, kernel_library=tuned)
    plain = compile_model(model, BOARD, measure_code=False)
    assert tuned.applied == dense.groups
    changed = [k.name for k, p in zip(with_records.kernels, plain.kernels)
               if k.source != p.source]
    assert changed == ["model_k11"]  # the dense group, named by its group index
    want = dense.lower(fast, "model_k11").source
    # (the compiled kernel as lowered, before the plan binds its overlapping pair)
    assert with_records.kernels[-2].with_inplace(()).source == want


@pytest.mark.slow
def test_compile_command_takes_records(tmp_path, models_dir, capsys):
    log, _, _ = _log(tmp_path, models_dir)
    code = main(["compile", str(models_dir / "mlperf_kws_dscnn.tflite"), "--board", BOARD,
                 "-o", str(tmp_path / "out"), "--tuning-records", str(log)])
    out, err = capsys.readouterr()
    assert code == 0
    assert "ignoring 1 tuning records made for another target" in err
    assert "tuning records applied to 1 of 10 tunable kernels" in out


def test_missing_records_file_is_an_error(tmp_path, models_dir, capsys):
    code = main(["compile", str(models_dir / "mlperf_kws_dscnn.tflite"), "--board", BOARD,
                 "-o", str(tmp_path / "out"), "--tuning-records", str(tmp_path / "none")])
    assert code == 2
    assert "does not exist" in capsys.readouterr().err


@pytest.mark.slow
def test_a_record_from_an_older_template_falls_back_to_the_library(tmp_path, models_dir):
    target = load_board(BOARD).target
    _, workloads = extract_workloads(models_dir / "mlperf_kws_dscnn.tflite", target)
    dense = workloads[-1]
    log = tmp_path / "old.jsonl"
    rec.append(log, [rec.Record(dense.key, dense.description, str(target), BOARD,
                                {"dot": True}, "ok", 1, "instructions")])
    tuned, _ = TunedKernels.from_log(log, target)
    model = models_dir / "mlperf_kws_dscnn.tflite"
    with_records = compile_model(model, BOARD, measure_code=False, kernel_library=tuned)
    plain = compile_model(model, BOARD, measure_code=False)
    assert tuned.applied == []
    assert [k.source for k in with_records.kernels] == [k.source for k in plain.kernels]
    # ... and says so: a record is never dropped silently
    (note,) = tuned.stale
    assert note.startswith(dense.groups[0]) and "no longer fits the template space" in note


@pytest.mark.slow
def test_the_compile_command_names_a_record_that_no_longer_fits(tmp_path, models_dir, capsys):
    target = load_board(BOARD).target
    _, workloads = extract_workloads(models_dir / "mlperf_kws_dscnn.tflite", target)
    dense = workloads[-1]
    log = tmp_path / "old.jsonl"
    rec.append(log, [rec.Record(dense.key, dense.description, str(target), BOARD,
                                {"dot": True}, "ok", 1, "instructions")])
    assert main(["compile", str(models_dir / "mlperf_kws_dscnn.tflite"), "--board", BOARD,
                 "-o", str(tmp_path / "out"), "--tuning-records", str(log)]) == 0
    err = capsys.readouterr().err
    assert "no longer fits the template space" in err and "library's schedule" in err


@pytest.mark.slow
def test_records_of_several_logs_the_fastest_wins(tmp_path, models_dir, capsys):
    log, dense, fast = _log(tmp_path, models_dir)
    target = load_board(BOARD).target
    slower = tmp_path / "slower.jsonl"   # another log with a slower config of the same layer
    rec.append(slower, [rec.Record(dense.key, dense.description, str(target), BOARD,
                                   {**dense.default, "unroll_u": 2}, "ok", 180, "instructions")])
    both, _ = TunedKernels.from_log([slower, log], target)
    assert both.best[dense.key].config == fast.to_json()
    only, _ = TunedKernels.from_log(slower, target)
    assert only.best[dense.key].cost == 180
    code = main(["compile", str(models_dir / "mlperf_kws_dscnn.tflite"), "--board", BOARD,
                 "-o", str(tmp_path / "out"), "--tuning-records", str(slower),
                 "--tuning-records", str(log)])
    assert code == 0
    assert "tuning records applied to 1 of 10 tunable kernels" in capsys.readouterr().out
