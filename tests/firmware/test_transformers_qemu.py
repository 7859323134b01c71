"""The int8 and 16x8 Keras transformers (bench/models/transformers/) on the
emulated Cortex-M4 (qemu/mps2-an386), bit for bit as TFLM runs them (the
GELU one, which TFLM cannot run, as the reference does)."""

from __future__ import annotations

import numpy as np
import pytest
from support.models import TRANSFORMERS_DIR, random_inputs

from aot.compile import compile_model
from aot.frontend import load_model
from aot.firmware import run_on_board
from aot.reference.interpreter import Session


@pytest.mark.slow
@pytest.mark.parametrize("name", ["attention_int8", "attention_int16", "kwt_int8"])
def test_transformer_on_the_m4_equals_tflm(name, tflm, object_cache, tmp_path):  # noqa: F811
    path = TRANSFORMERS_DIR / f"{name}.tflite"
    graph = load_model(path)
    sequence = random_inputs(graph, seed=34, count=2)
    want = np.stack([w[0] for w in tflm.run(path.read_bytes(), sequence)])
    compiled = compile_model(path, "qemu/mps2-an386", measure_code=False)
    stacked = [np.stack([inv[k] for inv in sequence]) for k in range(len(graph.inputs))]
    run = run_on_board(compiled, stacked, workdir=tmp_path, cache_dir=object_cache)
    np.testing.assert_array_equal(run.outputs[0], want)
    print(f"{name}: {run.per_inference} {run.unit.name.lower()} per inference on qemu/mps2-an386")


@pytest.mark.slow
def test_gelu_transformer_on_the_m4_equals_the_reference(object_cache, tmp_path):
    """TFLM has no GELU: the reference (tests/kernels/test_gelu.py holds it to
    the float64 function) is the oracle."""
    path = TRANSFORMERS_DIR / "kwt_gelu_int8.tflite"
    graph = load_model(path)
    sequence = random_inputs(graph, seed=35, count=2)
    session = Session(graph)
    want = np.stack([session.invoke(inputs)[0] for inputs in sequence])
    compiled = compile_model(path, "qemu/mps2-an386", measure_code=False)
    stacked = [np.stack([inv[k] for inv in sequence]) for k in range(len(graph.inputs))]
    run = run_on_board(compiled, stacked, workdir=tmp_path, cache_dir=object_cache)
    np.testing.assert_array_equal(run.outputs[0], want)
