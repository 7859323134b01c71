"""End to end on QEMU: the auto tuner on kws's dense and depthwise workloads with a
budget, every generated candidate checked on the device, then compiled and run
bit-exact."""


import numpy as np
import pytest

from support.tools import needs_arm_qemu

from aot.compile import compile_model
from aot.firmware import run_on_board
from aot.firmware.verify import reference_outputs, sample_path
from aot.frontend import load_model
from aot.tune import records as rec
from aot.tune.library import TunedKernels
from aot.tune.session import tune_model

BOARD = "qemu/mps2-an386"

pytestmark = [pytest.mark.slow, needs_arm_qemu]


def test_auto_candidates_are_checked_and_compile_bit_exact(models_dir, tmp_path):
    model = models_dir / "mlperf_kws_dscnn.tflite"
    log = tmp_path / "kws.jsonl"
    report = tune_model(model, BOARD, trials=24, budget=600, tuner="auto", log=log,
                        batch_size=8, only=["dense", "depthwise"], workdir=tmp_path / "work",
                        cache_dir=tmp_path / "cache")
    assert [w.trials for w in report.workloads] == [24, 24]
    records = rec.load(log)
    sketches = {r.config["sketch"] for r in records}
    assert {"template", "tiled"} <= sketches
    # generated schedules are correct by construction: none is wrong on the device
    assert all(r.status == "ok" for r in records), [r.error for r in records if r.error]
    for w in report.workloads:
        assert w.best_cost <= w.default_cost

    inputs = [np.load(sample_path(model))[:2]]
    want = reference_outputs(load_model(model), inputs)
    tuned, _ = TunedKernels.from_log(log, compile_model(model, BOARD).target)
    compiled = compile_model(model, BOARD, measure_code=False, kernel_library=tuned)
    run = run_on_board(compiled, inputs, workdir=tmp_path, cache_dir=tmp_path / "cache")
    for got, exp in zip(run.outputs, want):
        np.testing.assert_array_equal(got, exp)
    assert len(tuned.applied) == 5   # four depthwise convolutions and the dense layer


def test_a_dwblock_point_is_bit_exact_on_the_device_and_beats_the_library(models_dir, tmp_path):
    """KWS's depthwise workload: the library's schedule and one dwblock point
    measured as the tuner measures (checked bit for bit on the device)."""
    from aot.target.tags import load_board
    from aot.tune.auto import AutoWorkload
    from aot.tune.measure import Builder, Runner, measure
    from aot.tune.workload import extract_workloads
    board = load_board(BOARD)
    _, workloads = extract_workloads(models_dir / "mlperf_kws_dscnn.tflite", board.target)
    (wl,) = [AutoWorkload.of(w) for w in workloads if w.description.startswith("depthwise")]
    point = wl.space.config({"sketch": "dwblock", "rows": 5, "pixels": 5, "channels": 8,
                             "unroll_widen": False, "epilogue": "fused", "optimize": "O2"})
    results = measure(Builder(board, tmp_path / "work", cache_dir=tmp_path / "cache"),
                      Runner(), wl, [wl.default, point])
    assert all(r.ok for r in results), [r.error for r in results]
    library, dwblock = (next(r.cost for r in results if r.config == c)
                        for c in (wl.default, point))
    assert dwblock < library
