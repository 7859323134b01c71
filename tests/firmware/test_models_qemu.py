"""Every shared model runs on qemu/mps2-an386 with the oracle's outputs (slow).

TFLite models: their samples (when the shared folder has them) and seeded
random inputs as one sequence from a fresh state, on the emulated Cortex-M4
and on TFLM; integer outputs agree bit for bit, float outputs within 1e-5
of TFLM.  ONNX models: against aot.reference (tests/test_compile_models.py
holds that to onnxruntime), with :func:`aot.firmware.verify.compare`'s rule:
integers bit for bit, floats within 1e-5 x max(1, |value|).
"""

from __future__ import annotations

import numpy as np
import pytest
from support.models import MODELS, MODELS_DIR, model_sequence

from aot.compile import compile_model
from aot.firmware import run_on_board
from aot.firmware.verify import FLOAT_TOLERANCE, compare, reference_outputs

BOARD = "qemu/mps2-an386"
TFLITE = [pytest.param(m, id=m["name"]) for m in MODELS if m["file"].endswith(".tflite")]
ONNX = [pytest.param(m, id=m["name"]) for m in MODELS if m["file"].endswith(".onnx")]


def _stack(graph, sequence) -> list[np.ndarray]:
    return [np.stack([inv[k] for inv in sequence]) for k in range(len(graph.inputs))]


@pytest.mark.slow
@pytest.mark.parametrize("entry", TFLITE)
def test_tflite_model_on_cortex_m4_equals_tflm(entry, tflm, object_cache,  # noqa: F811
                                               tmp_path):
    path = MODELS_DIR / entry["file"]
    compiled = compile_model(path, BOARD, measure_code=False)
    sequence = model_sequence(entry, compiled.graph)
    inputs = _stack(compiled.graph, sequence)
    run = run_on_board(compiled, inputs, workdir=tmp_path, cache_dir=object_cache)
    oracle = tflm.run(path.read_bytes(), sequence)
    for k, got in enumerate(run.outputs):
        want = np.stack([o[k] for o in oracle])
        if got.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)
        else:
            np.testing.assert_array_equal(got, want)
    assert all(t > 0 for t in run.timings)


@pytest.mark.slow
@pytest.mark.parametrize("entry", ONNX)
def test_onnx_model_on_cortex_m4_equals_the_reference(entry, object_cache, tmp_path):
    path = MODELS_DIR / entry["file"]
    compiled = compile_model(path, BOARD, measure_code=False)
    inputs = _stack(compiled.graph, model_sequence(entry, compiled.graph))
    run = run_on_board(compiled, inputs, workdir=tmp_path, cache_dir=object_cache)
    checks = compare(compiled.graph, run.outputs, reference_outputs(compiled.graph, inputs),
                     float_tolerance=FLOAT_TOLERANCE)
    assert all(c.passed for c in checks), [c.to_json() for c in checks]
    if "qdq" in entry["name"]:
        assert all(c.exact for c in checks)
