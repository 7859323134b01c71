"""The cmsis-nn codegen: its checks, its build files, and bit-exactness on the host.

The host build compiles CMSIS-NN's portable C (no DSP extension); the
Cortex-M4 runs with its DSP paths are tests/firmware/test_models_qemu_cmsis_nn.py.
"""

from __future__ import annotations

import numpy as np
import pytest
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


def test_helium_cores_get_the_fully_connected_row_sums_at_compile_time():
    """arm_fully_connected_s8 on Helium reads bias + input_offset * row sum from its
    context; elsewhere the context is empty."""
    m55 = compile_model(HELLO, "c -mcpu=cortex-m55 -libs=cmsis-nn", codegen_options=OPTIONS,
                        measure_code=False)
    m4 = compile_model(HELLO, "c -mcpu=cortex-m4 -libs=cmsis-nn", codegen_options=OPTIONS,
                       measure_code=False)
    kernel = m55.kernels[0]
    sums = next(c.data for c in kernel.constants if c.name.endswith("_sums"))
    weights = next(c.data for c in kernel.constants if c.name.endswith("_weights"))
    bias = next(c.data for c in kernel.constants if c.name.endswith("_bias"))
    x = m55.graph.nodes[0].inputs[0]
    offset = -x.quant.zero_point[0]
    np.testing.assert_array_equal(sums, bias + offset * weights.astype(np.int64).sum(axis=1))
    assert "_sums, " in kernel.source
    assert "{NULL, 0}" in m4.kernels[0].source


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
@pytest.mark.one_fast
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


def _q(scale, zp=0, axis=None, n=1):
    from aot.ir import Quantization

    if axis is None:
        return Quantization.per_tensor(scale, zp)
    return Quantization(tuple(scale * (1 + 0.1 * i) for i in range(n)), (0,) * n, axis)


def _odd_shapes_graph():
    """Layers off the models' beaten path: dilation, stride 2 with asymmetric padding,
    a batch of 2, depthwise multiplier 2, max pool with padding, mul, add."""
    from aot.ir import GraphBuilder

    rng = np.random.default_rng(7)
    b = GraphBuilder("odd")
    sx = 0.05
    x = b.input("x", (2, 9, 9, 3), "int8", _q(sx, 3))

    def weights(name, shape, axis, n):
        return b.constant(name, rng.integers(-127, 128, shape).astype(np.int8),
                          quant=_q(0.02, axis=axis, n=n))

    def bias(name, n, sw):
        return b.constant(name, rng.integers(-500, 500, n).astype(np.int32),
                          quant=_q(sx * sw, axis=0, n=n) if n > 1 else _q(sx * sw))
    from aot.ir import TensorType

    def out(shape, scale, zp):
        return TensorType(shape, "int8", _q(scale, zp))
    y = b.op("conv2d", [x, weights("w0", (4, 3, 3, 3), 0, 4), bias("b0", 4, 0.02)],
             out((2, 5, 5, 4), 0.1, -5), strides=(2, 2), padding=(1, 1, 1, 1),
             activation="relu", name="conv_s2")
    y = b.op("conv2d", [y, weights("w1", (4, 3, 3, 4), 0, 4), bias("b1", 4, 0.02)],
             out((2, 1, 1, 4), 0.1, 2), dilation=(2, 2), name="conv_dil")
    z = b.op("depthwise_conv2d", [x, weights("w2", (1, 3, 3, 6), 3, 6), bias("b2", 6, 0.02)],
             out((2, 5, 5, 6), 0.08, 1), strides=(2, 2), padding=(0, 0, 2, 2),
             depth_multiplier=2, name="dw_mult2")
    z = b.op("max_pool2d", [z], out((2, 3, 3, 6), 0.08, 1), pool_size=(3, 3), strides=(2, 2),
             padding=(1, 1, 1, 1), name="maxpool_pad")
    w = b.op("mul", [z, z], out((2, 3, 3, 6), 0.05, -1), name="square")
    w = b.op("add", [w, z], out((2, 3, 3, 6), 0.1, 0), name="residual")
    return b.build([y, w])


@pytest.mark.slow
def test_layers_off_the_beaten_path_equal_the_reference_on_the_host(tmp_path):
    from aot.firmware.verify import random_inputs, reference_outputs

    graph = _odd_shapes_graph()
    compiled = compile_model(graph, _host(), codegen_options=OPTIONS, measure_code=False)
    by = {layer["nodes"][0]: layer["by"] for layer in compiled.layers()}
    assert set(by.values()) == {"cmsis-nn"}, compiled.layers()
    inputs = random_inputs(graph, 3, 1)
    got = run_on_host(compiled, inputs, workdir=tmp_path)
    for g, w in zip(got, reference_outputs(graph, inputs)):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("x_dtype, y_dtype", [("int16", "int16"), ("int8", "int16")])
@pytest.mark.one_fast
def test_softmax_with_int16_equals_the_reference_on_the_host(x_dtype, y_dtype, tmp_path):
    from aot.firmware.verify import random_inputs, reference_outputs
    from aot.ir import GraphBuilder, TensorType

    b = GraphBuilder("soft16")
    x = b.input("x", (3, 10), x_dtype, _q(0.002 if x_dtype == "int16" else 0.1, 0))
    zp = 0 if x_dtype == "int16" else -32768
    scale = 1 / 32768 if x_dtype == "int16" else 1 / 65536
    y = b.op("softmax", [x], TensorType((3, 10), y_dtype, _q(scale, zp)), name="soft",
             out_dtype=y_dtype)
    graph = b.build([y])
    compiled = compile_model(graph, _host(), codegen_options=OPTIONS, measure_code=False)
    assert [layer["by"] for layer in compiled.layers()] == ["cmsis-nn"]
    inputs = random_inputs(graph, 4, 2)
    (got,) = run_on_host(compiled, inputs, workdir=tmp_path)
    (want,) = reference_outputs(graph, inputs)
    np.testing.assert_array_equal(got, want)
