"""One TFLite model run three ways, compared bit for bit: TFLM (the oracle),
the reference interpreter, and the C the compiler generates, built and run
on the host."""

from __future__ import annotations

import numpy as np

from aot.commands.run import run_on_host
from aot.compile import compile_model
from aot.frontend import load_model
from aot.reference import run as reference_run


def assert_matches_tflm(tflm, model: bytes, inputs: list[np.ndarray], tmp_path) -> np.ndarray:
    """Check that the reference and the host build give TFLM's first output
    for one invocation with ``inputs``; return that output."""
    path = tmp_path / "m.tflite"
    path.write_bytes(model)
    want = tflm.run(model, [list(inputs)])[0][0]
    got = reference_run(load_model(path), list(inputs))[0]
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    compiled = compile_model(path, "host/native", name="m", measure_code=False)
    host = run_on_host(compiled, [x[None] for x in inputs], workdir=tmp_path)[0][0]
    np.testing.assert_array_equal(host, want)
    return want
