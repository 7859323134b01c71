"""Patch and stream stages on qemu/mps2-an386 (slow): VWW with its first layers in 3x3
patches, and ResNet-8 with its stem and two residual blocks streamed in bands of rows (its
default plan) or in 4x4 patches, run bit-exact with the reference, in less RAM than without
the stage."""

from __future__ import annotations

import numpy as np
import pytest
from support.models import MODELS_DIR

from aot.compile import compile_model
from aot.firmware import run_on_board
from aot.firmware.verify import reference_outputs

BOARD = "qemu/mps2-an386"
VWW = "mlperf_vww_mobilenetv1_025"
RESNET8 = "mlperf_ic_resnet8"


@pytest.mark.slow
def test_vww_in_patches_on_qemu_is_bit_exact_and_needs_less_ram(object_cache, tmp_path):
    path = MODELS_DIR / f"{VWW}.tflite"
    x = np.load(MODELS_DIR / "samples" / f"{VWW}.npy")[:2]
    whole = compile_model(path, BOARD, io_in_workspace=False, measure_code=False)
    m = compile_model(path, BOARD, patches="3x3", io_in_workspace=False, measure_code=False)
    assert m.patches is not None and m.patches.stage.grid == (3, 3)
    assert m.sizes.ram < whole.sizes.ram
    run = run_on_board(m, [x], workdir=tmp_path, cache_dir=object_cache)
    np.testing.assert_array_equal(run.outputs[0], reference_outputs(m.graph, [x])[0])


@pytest.mark.slow
@pytest.mark.parametrize("patches", [None, "stream:2", "4x4"])
def test_resnet8_staged_on_qemu_is_bit_exact_and_needs_less_ram(patches, object_cache,
                                                                  tmp_path):
    path = MODELS_DIR / f"{RESNET8}.tflite"
    whole = compile_model(path, BOARD, patches="off", measure_code=False)
    m = compile_model(path, BOARD, patches=patches, measure_code=False)
    assert m.patches is not None and len(m.patches.stage.nodes) == 8  # the stem, 2 blocks
    if patches != "4x4":
        assert m.patches.stage.band == (1 if patches is None else 2)
    assert m.sizes.ram < whole.sizes.ram == 32768
    x = np.random.default_rng(8).integers(-128, 128, (2, *m.graph.inputs[0].shape)) \
        .astype(np.int8)
    run = run_on_board(m, [x], workdir=tmp_path, cache_dir=object_cache)
    np.testing.assert_array_equal(run.outputs[0], reference_outputs(m.graph, [x])[0])
