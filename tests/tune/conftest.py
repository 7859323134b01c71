"""Fixtures shared by the tuning tests: KWS and its dense workload on the M4 board
(a test module may define its own ``kws`` or ``dense``; the module's wins)."""

from __future__ import annotations

import pytest

from aot.target import load_board
from aot.tune.workload import extract_workloads

BOARD = "qemu/mps2-an386"


@pytest.fixture
def kws(models_dir):
    return models_dir / "mlperf_kws_dscnn.tflite"


@pytest.fixture
def dense(kws):
    target = load_board(BOARD).target
    return [w for w in extract_workloads(kws, target)[1] if w.description.startswith("dense")][0]
