"""bench/bench_cores.py: the projection takes each split kernel's larger part and charges a
hand-over per split kernel; the extra cost is measured from the C."""

from __future__ import annotations

import importlib.util
import shutil
import sys

import pytest
from support.models import ROOT

_spec = importlib.util.spec_from_file_location("bench_cores", ROOT / "bench" / "bench_cores.py")
bench = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = bench
_spec.loader.exec_module(bench)


def test_projection_charges_each_split_kernel_its_larger_part_and_a_hand_over():
    prof = {"instructions": 1000, "cycles": 2000, "kernels": [
        {"ops": [], "instructions": 0, "cycles": 0},          # the entry function's row
        {"ops": ["conv2d", "add"], "instructions": 400, "cycles": 800},
        {"ops": ["dense"], "instructions": 200, "cycles": 600},
        {"ops": ["softmax"], "instructions": 400, "cycles": 600},
    ]}
    # conv split 5 rows of 8 (the larger part), dense halved, softmax on one core
    parts = [(["conv2d", "add"], 5 / 8), (["dense"], 0.5), (["softmax"], None)]
    row = bench.project(prof, parts, handover=10)
    assert row["split_kernels"] == 2
    assert row["two_core_instructions_projected"] == round(1000 - (400 * 3 / 8 - 10) - (100 - 10))
    assert row["two_core_cycles_projected"] == round(2000 - (800 * 3 / 8 - 10) - (300 - 10))
    assert row["speedup_projected"] == round(2000 / row["two_core_cycles_projected"], 3)


def test_projection_refuses_a_profile_that_is_not_the_placement():
    prof = {"instructions": 10, "cycles": 10,
            "kernels": [{"ops": ["dense"], "instructions": 10, "cycles": 10}]}
    with pytest.raises(SystemExit, match="not the placement's groups"):
        bench.project(prof, [(["conv2d"], 0.5)], handover=1)


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None, reason="no arm-none-eabi-gcc")
def test_extra_cost_is_core_1_stack_queue_and_start_code():
    extra = bench.extra_cost()
    assert extra["core1_stack_bytes"] == 8192
    # core 1's stack, one queue of 8 slots, the start-up state: a little over the stack
    assert 8192 + 72 <= extra["ram_bytes"] < 8192 + 256
    assert 0 < extra["code_bytes"] < 1024
