"""Int8 and 16x8 transformers built with Keras (LayerNormalization, MultiHeadAttention,
Dense; bench/models/transformers/) run bit for bit as TFLM runs them, on the
reference interpreter and on the host build; tests/firmware/
test_transformers_qemu.py runs them on QEMU."""

from __future__ import annotations

import numpy as np
import pytest
from support.models import TRANSFORMERS_DIR, random_inputs

from aot.commands.run import run_on_host
from aot.compile import compile_model
from aot.frontend import load_model
from aot.reference.interpreter import Session

TFLM_MODELS = ["attention_int8", "attention_int16",
               pytest.param("kwt_int8", marks=pytest.mark.slow)]


@pytest.mark.parametrize("name", TFLM_MODELS)
@pytest.mark.one_fast
def test_reference_and_host_equal_tflm(name, tflm, tmp_path):  # noqa: F811
    path = TRANSFORMERS_DIR / f"{name}.tflite"
    graph = load_model(path)
    ops = {n.op for n in graph.nodes}
    assert {"squared_difference", "rsqrt", "batch_matmul", "softmax", "mean"} <= ops
    sequence = random_inputs(graph, seed=34)
    want = tflm.run(path.read_bytes(), sequence)
    session = Session(graph)
    for step, inputs in enumerate(sequence):
        np.testing.assert_array_equal(session.invoke(inputs)[0], want[step][0],
                                      err_msg=f"reference, invocation {step}")
    compiled = compile_model(path, "host/native", name="m", measure_code=False)
    stacked = [np.stack([inv[k] for inv in sequence]) for k in range(len(graph.inputs))]
    host = run_on_host(compiled, stacked, workdir=tmp_path)[0]
    np.testing.assert_array_equal(host, np.stack([w[0] for w in want]))
