"""bench/bench_dwblock.py: which dwblock points it measures for a workload."""

from __future__ import annotations

import importlib.util
import sys

from aot.target import load_board
from aot.tune.auto import AutoWorkload
from aot.tune.workload import extract_workloads
from support.models import MODELS_DIR, ROOT

_spec = importlib.util.spec_from_file_location("bench_dwblock", ROOT / "bench" / "bench_dwblock.py")
bench = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = bench
_spec.loader.exec_module(bench)


def test_points_outside_a_workloads_space_are_skipped_and_the_default_is_the_sketch():
    board = load_board("qemu/mps2-an386")
    _, workloads = extract_workloads(MODELS_DIR / "mlperf_kws_dscnn.tflite", board.target)
    (wl,) = [AutoWorkload.of(w) for w in workloads if w.description.startswith("depthwise")]
    good = {"sketch": "dwblock", "rows": 5, "pixels": 4, "channels": 8, "epilogue": "fused"}
    bad = {**good, "rows": 3}        # 3 does not divide the 25 rows: not in the space
    (only,) = bench._points(wl, [good, bad], None)
    assert only.to_json() == {**good, "optimize": "O2", "unroll_widen": False}
    every = bench._points(wl, [], None)
    assert len(every) == len(wl.space.sketches["dwblock"].space)
    assert {c.sketch for c in every} == {"dwblock"}
    assert len(bench._points(wl, [], 5)) == 5
