"""-libs=cmsis-nn on qemu/mps2-an386: CMSIS-NN's DSP paths, bit-exact with TFLM (slow).

Every shared TFLite model through ``--board qemu/mps2-an386 --target "c
-mcpu=cortex-m4 -libs=cmsis-nn"`` with CMSIS-NN compiled from the shared
tree in place; and the per-layer choice, which must run no more
instructions than either library alone.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.models import CMSIS_NN_DIR, MODELS, MODELS_DIR, model_sequence

from aot.compile import compile_model, resolve_target
from aot.firmware import run_on_board
from aot.tune.layers import choose_layers

BOARD = "qemu/mps2-an386"
OPTIONS = {"cmsis-nn": {"path": str(CMSIS_NN_DIR)}}
TFLITE = [pytest.param(m, id=m["name"]) for m in MODELS if m["file"].endswith(".tflite")]
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not CMSIS_NN_DIR.is_dir(),
                                 reason=f"no CMSIS-NN source tree at {CMSIS_NN_DIR}")]


@pytest.mark.parametrize("entry", TFLITE)
def test_models_through_cmsis_nn_on_cortex_m4_equal_tflm(entry, tflm, object_cache,  # noqa: F811
                                                         tmp_path):
    path = MODELS_DIR / entry["file"]
    target = resolve_target(BOARD, refine="c -mcpu=cortex-m4 -libs=cmsis-nn")[0]
    compiled = compile_model(path, target, codegen_options=OPTIONS, measure_code=False)
    sequence = model_sequence(entry, compiled.graph)
    inputs = [np.stack([inv[k] for inv in sequence]) for k in range(len(compiled.graph.inputs))]
    run = run_on_board(compiled, inputs, workdir=tmp_path, cache_dir=object_cache)
    oracle = tflm.run(path.read_bytes(), sequence)
    for k, got in enumerate(run.outputs):
        want = np.stack([o[k] for o in oracle])
        if got.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)
        else:
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["mlperf_ad_fc_autoencoder", "mlperf_kws_dscnn"])
def test_helium_paths_on_cortex_m55_equal_the_reference(name, object_cache, tmp_path):
    """qemu/mps3-an547: CMSIS-NN's MVE code, with the row sums of the fully
    connected layers and the Helium scratch sizes computed at compile time."""
    from aot.firmware.verify import reference_outputs

    path = MODELS_DIR / f"{name}.tflite"
    target = resolve_target("qemu/mps3-an547", refine="c -libs=cmsis-nn")[0]
    compiled = compile_model(path, target, codegen_options=OPTIONS, measure_code=False)
    x = np.load(MODELS_DIR / "samples" / f"{name}.npy")[:2]
    run = run_on_board(compiled, [x], workdir=tmp_path, cache_dir=object_cache)
    for got, want in zip(run.outputs, reference_outputs(compiled.graph, [x])):
        np.testing.assert_array_equal(got, want)


def test_the_per_layer_choice_is_no_slower_than_either_library(object_cache, tmp_path):
    path = MODELS_DIR / "mlperf_ad_fc_autoencoder.tflite"
    choice = choose_layers(path, BOARD, codegen_options=OPTIONS, cache_dir=object_cache,
                           workdir=tmp_path)
    x = np.load(MODELS_DIR / "samples" / "mlperf_ad_fc_autoencoder.npy")[:1]
    counts = {}
    for key, compiled in (("aot", choice.ours), ("libs", choice.theirs),
                          ("choice", choice.compiled)):
        counts[key] = run_on_board(compiled, [x], workdir=tmp_path,
                                   cache_dir=object_cache).timings[0]
    assert counts["choice"] <= min(counts["aot"], counts["libs"])
    by = {u["chosen"] for u in choice.units}
    assert by <= {"aot", "cmsis-nn"}
    assert {layer["by"] for layer in choice.compiled.layers()} == by
