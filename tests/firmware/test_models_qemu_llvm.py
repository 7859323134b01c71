"""Every shared model through the LLVM objects on the emulated Cortex-M4 and
Cortex-M55, against aot.reference (slow).

The board's target with its kind switched to ``llvm`` (``--codegen llvm``):
the same kernels, memory plan and C entry function as the C path, the
kernels' code compiled by LLVM.  Samples and seeded random inputs run as one
sequence from a fresh state; integer outputs must be bit-exact with the
reference (which is bit-exact with TFLM), floats within
:data:`aot.firmware.verify.FLOAT_TOLERANCE`, as ``aot verify`` demands.
The hand-written C kernels (SVDF, LSTM) are compiled by the board's gcc
beside the other kernels' objects.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.models import MODELS, MODELS_DIR, model_sequence

from aot.compile import compile_model
from aot.firmware import run_on_board
from aot.firmware.verify import FLOAT_TOLERANCE, compare, reference_outputs

BOARDS = ["qemu/mps2-an386", "qemu/mps3-an547"]
CASES = [pytest.param(board, m, id=f"{board.split('/')[1]}-{m['name']}")
         for board in BOARDS for m in MODELS]


@pytest.mark.slow
@pytest.mark.qemu
@pytest.mark.parametrize("board, entry", CASES)
def test_model_through_llvm_objects_equals_the_reference(board, entry, object_cache, tmp_path):
    path = MODELS_DIR / entry["file"]
    compiled = compile_model(path, board, codegen="llvm", measure_code=False)
    assert compiled.target.kind == "llvm" and compiled.board.tag == board
    assert all(p.endswith(".o") == (k.func is not None) for p, k in
               zip((k["file"] for k in compiled.metadata()["kernels"]), compiled.kernels))
    sequence = model_sequence(entry, compiled.graph)
    inputs = [np.stack([inv[k] for inv in sequence]) for k in range(len(compiled.graph.inputs))]
    run = run_on_board(compiled, inputs, workdir=tmp_path, cache_dir=object_cache)
    checks = compare(compiled.graph, run.outputs, reference_outputs(compiled.graph, inputs),
                     float_tolerance=FLOAT_TOLERANCE)
    assert all(c.passed for c in checks), [c.to_json() for c in checks]
    assert all(t > 0 for t in run.timings)
