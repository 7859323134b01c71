"""The cmsis-nn codegen: its checks, its build files, and bit-exactness on the host.

The host build compiles CMSIS-NN's portable C (no DSP extension); the
Cortex-M4 runs with its DSP paths are tests/firmware/test_models_qemu_cmsis_nn.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.fixtures import tflm  # noqa: F401
from support.models import CMSIS_NN_DIR, MODELS, MODELS_DIR, model_sequence

from aot.byoc import ExternalCodegenError
from aot.byoc.cmsis_nn.tree import sources_for
from aot.commands.run import run_on_host
from aot.compile import compile_model, resolve_target

OPTIONS = {"cmsis-nn": {"path": str(CMSIS_NN_DIR)}}
pytestmark = pytest.mark.skipif(not CMSIS_NN_DIR.is_dir(),
                                reason=f"no CMSIS-NN source tree at {CMSIS_NN_DIR}")
HELLO = MODELS_DIR / "tflm_hello_world_int8.tflite"
INT8 = [m for m in MODELS if m["file"].endswith(".tflite")]
FAST = ("tflm_hello_world_int8", "mlperf_ic_resnet8")


def _host(refine="c -libs=cmsis-nn"):
    return resolve_target("host/native", refine=refine)[0]


def test_a_missing_tree_is_refused_before_anything_is_compiled(tmp_path):
    with pytest.raises(ExternalCodegenError, match="needs Arm's CMSIS-NN source tree: give "
                                                   "its folder with --cmsis-nn PATH"):
        compile_model(HELLO, _host())
    with pytest.raises(ExternalCodegenError, match="does not exist"):
        compile_model(HELLO, _host(), codegen_options={"cmsis-nn": {"path": tmp_path / "x"}})


def test_a_tree_of_the_wrong_layout_is_refused(tmp_path):
    (tmp_path / "Include").mkdir()
    with pytest.raises(ExternalCodegenError, match=r"is not a CMSIS-NN source tree \(missing "
                                                   r"Include/arm_nnfunctions.h"):
        compile_model(HELLO, _host(), codegen_options={"cmsis-nn": {"path": tmp_path}})


def test_helium_cores_are_refused_for_now():
    with pytest.raises(ExternalCodegenError, match="not supported yet: cmsis-nn on a Helium"):
        compile_model(HELLO, "c -mcpu=cortex-m55 -libs=cmsis-nn", codegen_options=OPTIONS)


def test_only_the_sources_the_calls_need_are_compiled():
    files = sources_for(CMSIS_NN_DIR.resolve(), ("arm_softmax_s8",))
    assert "Source/SoftmaxFunctions/arm_softmax_s8.c" in files
    assert all(f.endswith(".c") and f.startswith("Source/") for f in files)
    assert not any("Convolution" in f for f in files)


def test_the_artifact_names_the_tree_in_its_build_files(tmp_path):
    compiled = compile_model(HELLO, resolve_target("qemu/mps2-an386",
                                                   refine="c -libs=cmsis-nn")[0],
                             codegen_options=OPTIONS, measure_code=False)
    meta = compiled.metadata()
    (lib,) = meta["build"]["external"]
    assert lib["codegen"] == "cmsis-nn" and lib["variable"] == "CMSIS_NN_PATH"
    assert "Source/FullyConnectedFunctions/arm_fully_connected_s8.c" in lib["sources"]
    assert all(k["codegen"] == "cmsis-nn" for k in meta["kernels"])
    out = compiled.write(tmp_path / "art")
    cmake = (out / "CMakeLists.txt").read_text()
    assert 'set(CMSIS_NN_PATH "' in cmake and "${CMSIS_NN_PATH}/Source/" in cmake
    make = next(out.glob("*.mk")).read_text()
    assert "CMSIS_NN_PATH ?= " in make and "$(CMSIS_NN_PATH)/Include" in make
    assert "arm_fully_connected_s8(" in compiled.files["codegen/model_kernels_0.c"]


@pytest.mark.parametrize("entry", [
    pytest.param(m, id=m["name"],
                 marks=() if m["name"] in FAST else pytest.mark.slow) for m in INT8])
def test_models_through_cmsis_nn_on_the_host_equal_tflm(entry, tflm, tmp_path):  # noqa: F811
    path = MODELS_DIR / entry["file"]
    compiled = compile_model(path, _host(), codegen_options=OPTIONS, measure_code=False)
    sequence = model_sequence(entry, compiled.graph)
    inputs = [np.stack([inv[k] for inv in sequence]) for k in range(len(compiled.graph.inputs))]
    outputs = run_on_host(compiled, inputs, workdir=tmp_path)
    oracle = tflm.run(path.read_bytes(), sequence)
    for k, got in enumerate(outputs):
        want = np.stack([o[k] for o in oracle])
        if got.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)
        else:
            np.testing.assert_array_equal(got, want)
    by = {layer["by"] for layer in compiled.layers()}
    if entry["name"].startswith("mlperf_"):
        assert by == {"cmsis-nn"}, compiled.layers()
