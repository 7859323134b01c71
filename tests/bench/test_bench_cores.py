"""bench/bench_cores.py: the projection halves only the channel-split kernels and
charges the hand-over per split kernel; the extra cost is measured from the C."""

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


def test_projection_splits_conv_depthwise_and_dense_only():
    prof = {"instructions": 1000, "cycles": 2000, "kernels": [
        {"ops": ["conv2d", "add"], "instructions": 400, "cycles": 800},
        {"ops": ["dense"], "instructions": 200, "cycles": 600},
        {"ops": ["softmax"], "instructions": 400, "cycles": 600},
    ]}
    row = bench.project(prof, handover=10)
    assert row["split_kernels"] == 2
    assert row["two_core_instructions_projected"] == 1000 - (200 - 10) - (100 - 10)
    assert row["two_core_cycles_projected"] == 2000 - (400 - 10) - (300 - 10)
    assert row["speedup_projected"] == round(2000 / 1320, 3)


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None, reason="no arm-none-eabi-gcc")
def test_extra_cost_is_core_1_stack_queue_and_start_code():
    extra = bench.extra_cost()
    assert extra["core1_stack_bytes"] == 4096
    # core 1's stack, one queue of 8 slots, the start-up state: a little over the stack
    assert 4096 + 72 <= extra["ram_bytes"] < 4096 + 256
    assert 0 < extra["code_bytes"] < 1024
