"""Every shared model through the LLVM objects on the emulated Cortex-M0, M4,
M7, M33, M55 and rv32imac cores, against aot.reference (slow).

The board's target with its kind switched to ``llvm`` (``--codegen llvm``):
the same kernels, memory plan and C entry function as the C path, the
kernels' code compiled by LLVM.  Samples and seeded random inputs run as one
sequence from a fresh state; integer outputs must be bit-exact with the
reference (which is bit-exact with TFLM), floats within
:data:`aot.firmware.verify.FLOAT_TOLERANCE`, as ``aot verify`` demands.
The stateful kernels (SVDF, LSTM) are objects like the others (one call of
their header's helper).  On the boards with 16 KiB of RAM only the
models that fit run (the others are refused with their sizes, as on the C
path: tests/firmware/test_closest_silicon.py).
"""

from __future__ import annotations

import numpy as np
import pytest
from support.models import MODELS, MODELS_DIR, model_sequence

from aot.compile import compile_model
from aot.firmware import run_on_board
from aot.firmware.verify import FLOAT_TOLERANCE, compare, reference_outputs

#: Models too large for 16 KiB of RAM (the compiler or the linker refuses them).
#: (tflm_magic_wand_float fits since its default plan streams its first layers.)
_SMALL_RAM = {"mlperf_ic_resnet8", "mlperf_kws_dscnn", "mlperf_vww_mobilenetv1_025",
              "onnx_mnist8"}
#: board (its core) -> the shared models that do not fit it.
BOARDS = {
    "qemu/mps2-an386": set(),                # Cortex-M4F
    "qemu/mps3-an547": set(),                # Cortex-M55 with Helium
    "qemu/mps2-an500": set(),                # Cortex-M7, double-precision FPU
    "qemu/mps2-an505": set(),                # Cortex-M33, Armv8-M mainline
    # Cortex-M0 (Armv6-M: no DSP, no divide, no FPU); 256 KiB of flash for the autoencoder's
    # 270,880 bytes of weights
    "qemu/microbit": _SMALL_RAM | {"mlperf_ad_fc_autoencoder"},
    "qemu/sifive-e": _SMALL_RAM,             # rv32imac, ilp32
}
CASES = [pytest.param(board, m, id=f"{board.split('/')[1]}-{m['name']}")
         for board, too_big in BOARDS.items() for m in MODELS if m["name"] not in too_big]


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
