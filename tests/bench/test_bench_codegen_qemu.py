"""bench/bench_codegen_qemu.py: both paths measured on one board, and the table.

The script is loaded by path (bench/ is not a package).
"""

from __future__ import annotations

import importlib.util
import sys

import pytest
from support.models import MODELS_DIR, ROOT

_spec = importlib.util.spec_from_file_location("bench_codegen_qemu",
                                               ROOT / "bench" / "bench_codegen_qemu.py")
bench = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = bench
_spec.loader.exec_module(bench)


def test_the_llvm_side_is_the_boards_target_with_the_kind_switched():
    assert str(bench.llvm_target("qemu/mps2-an386", None)) == (
        "llvm -keys=arm_cpu,cpu -mcpu=cortex-m4 -mfloat-abi=hard -mfpu=fpv4-sp-d16 "
        "-opt-level=2 -tag=qemu/mps2-an386")
    assert bench.llvm_target("qemu/mps2-an386", 3).attrs["opt-level"] == 3


def test_the_table_puts_the_paths_side_by_side():
    side = {"instructions_per_inference": 1000, "model_code": 2000, "constants": 0,
            "compile_s": 0.5, "build_s": 1.25}
    row = {"model": "m", "c": side, "llvm": dict(side, instructions_per_inference=1100),
           "bit_exact": True}
    last = bench.table([row]).splitlines()[-1]
    assert last == "| m | 1,000 | 1,100 | 1.10 | 2,000 | 2,000 | 0.50 + 1.25 | 0.50 + 1.25 | yes |"


@pytest.mark.slow
@pytest.mark.qemu
def test_hello_world_through_both_paths_on_the_m4(tmp_path):
    row = bench.bench_model(MODELS_DIR / "tflm_hello_world_int8.tflite", "qemu/mps2-an386",
                            1, tmp_path, None)
    assert row["bit_exact"]
    for side in ("c", "llvm"):
        assert row[side]["instructions_per_inference"] > 0
        assert row[side]["model_code"] > 0
