"""bench/bench_block_cycles.py: a block point applied to KWS's pointwise layers only."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from aot.compile import compile_model
from aot.target import load_board
from aot.tune.errors import TuneError
from support.models import MODELS_DIR, ROOT

_spec = importlib.util.spec_from_file_location("bench_block_cycles",
                                               ROOT / "bench" / "bench_block_cycles.py")
bench = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = bench
_spec.loader.exec_module(bench)

KWS = MODELS_DIR / "mlperf_kws_dscnn.tflite"


@pytest.mark.slow
def test_block_point_applies_to_the_pointwise_layers_only(tmp_path):
    board = load_board("qemu/mps2-an386")
    lib = bench.block_library(KWS, board, [(bench.KWS_POINTWISE, bench.BEST_KWS)])
    compiled = compile_model(KWS, board.tag, name="model", measure_code=False,
                             kernel_library=lib)
    assert lib.applied == ["fused_2_conv2d", "fused_4_conv2d", "fused_6_conv2d",
                           "fused_8_conv2d"]
    out = compiled.write(tmp_path / "artifact")
    calls = [f.name for f in sorted(out.rglob("*.c"))
             if "aot_block_requant_s8" in f.read_text()]
    assert len(calls) == 4, calls
    # the four 64x64 weight tensors stored as int16: twice their 4 KiB each;
    # the fused epilogue reads the library's fused rows (conv2d.fuse), as the
    # library's own fused rows do
    library = compile_model(KWS, board.tag, name="model", measure_code=False)
    assert compiled.sizes.constants - library.sizes.constants == 4 * 64 * 64


def test_unknown_workload_is_refused():
    board = load_board("qemu/mps2-an386")
    with pytest.raises(TuneError, match="no workload of mlperf_kws_dscnn.tflite"):
        bench.block_library(KWS, board, [("conv2d 1x2x3x4", bench.BEST_KWS)])


def test_config_outside_the_space_is_refused():
    board = load_board("qemu/mps2-an386")
    with pytest.raises(TuneError, match="not a point of its auto space"):
        bench.block_library(KWS, board, [(bench.KWS_POINTWISE, {**bench.BEST_KWS, "block": "3x3"})])
