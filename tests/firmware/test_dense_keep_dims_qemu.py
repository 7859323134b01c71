"""Issue 34's wrong rows on the device: FULLY_CONNECTED with keep_num_dims
(Keras Dense on a rank-3 input) and the int8 ADD fused after it, cross-built
for qemu/mps2-an386 (the Cortex-M4 schedules: packed weights, fused
epilogue), equal TFLM for every row."""

from __future__ import annotations

import numpy as np
import pytest
from support.dense_models import dense_keep_dims_add, int8_inputs

from aot.compile import compile_model
from aot.firmware import run_on_board

BOARD = "qemu/mps2-an386"


@pytest.mark.slow
@pytest.mark.parametrize("lead", [(4, 1), (2, 3)])
def test_dense_keep_dims_add_on_qemu_equals_tflm(lead, tflm, object_cache, tmp_path):  # noqa: F811
    rng = np.random.default_rng(9)
    model = dense_keep_dims_add(rng, lead, depth=16, units=12)
    path = tmp_path / "m.tflite"
    path.write_bytes(model)
    runs = [int8_inputs(rng, [(*lead, 16), (*lead, 12)]) for _ in range(2)]
    want = np.stack([outs[0] for outs in tflm.run(model, runs)])
    compiled = compile_model(path, BOARD, name="m", measure_code=False)
    run = run_on_board(compiled, [np.stack([r[0] for r in runs]), np.stack([r[1] for r in runs])],
                       workdir=tmp_path, cache_dir=object_cache)
    np.testing.assert_array_equal(run.outputs[0], want)
