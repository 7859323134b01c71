"""The executor's generated C, built and run with a toy kernel library.

The toy library (tests/executor/toy_kernels.py) lowers float elementwise
groups, so these tests check the executor alone: argument binding to
caller buffers and planned offsets, views, state and reset, constants as
arguments, kernel scratch, inputs/outputs in the workspace, strict
warnings on the host and Cortex-M4 compilers, and the sanitizers.
"""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
from toy_kernels import ToyLibrary

from aot.commands.run import run_on_host
from aot.compile import compile_model
from aot.executor.codegen import CodegenError, check_name
from aot.ir import GraphBuilder, TensorType
from aot.reference.interpreter import run as reference_run


def toy_graph(with_state: bool = False):
    """relu -> reshape (a view) -> add constant -> [add state]; two outputs."""
    b = GraphBuilder("toy")
    x = b.input("x:0", (1, 4, 4), "float32")
    r = b.op("relu", [x])
    s = b.op("reshape", [r], newshape=(1, 16))
    c = b.constant("bias", np.linspace(-2, 2, 16, dtype=np.float32).reshape(1, 16))
    y = b.op("add", [s, c])
    z = b.op("mul", [y, y])
    if with_state:
        v = b.variable("state", (1, 16), "float32")
        z = b.op("add", [z, v])
    return b.build([z, y])


def _inputs(n: int, seed: int = 0) -> list[np.ndarray]:
    return [np.random.default_rng(seed).standard_normal((n, 1, 4, 4)).astype(np.float32)]


def _reference(graph, inputs):
    results = [reference_run(graph, [x[i] for x in inputs]) for i in range(inputs[0].shape[0])]
    return [np.stack([r[k] for r in results]) for k in range(len(graph.outputs))]


@pytest.mark.parametrize("options", [
    {}, {"constants_as_params": True}, {"scratch": 32}, {"io_in_workspace": True}],
    ids=["plain", "constant-args", "scratch", "io-in-workspace"])
@pytest.mark.one_fast
def test_toy_model_matches_reference(options, tmp_path):
    options = dict(options)
    io_in_ws = options.pop("io_in_workspace", False)
    graph = toy_graph()
    compiled = compile_model(graph, "host/native", name="toy", io_in_workspace=io_in_ws,
                             kernel_library=ToyLibrary(**options))
    inputs = _inputs(3)
    got = run_on_host(compiled, inputs, workdir=tmp_path)
    for g, w in zip(got, _reference(graph, inputs)):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_entry_function_calls_kernels_in_order_with_planned_offsets():
    compiled = compile_model(toy_graph(), "host/native", name="toy",
                             kernel_library=ToyLibrary(), measure_code=False)
    text = compiled.files["codegen/toy.c"]
    entry = text[text.index("static int32_t toy_entry("):text.index("static int32_t toy_kernel_0(")]
    calls = [line.strip() for line in entry.splitlines() if " = toy_k" in line]
    assert [c.split(" = ")[1].split("(")[0] for c in calls] == ["toy_k0", "toy_k2", "toy_k3"]
    # relu writes the workspace; the reshape is its view; add reads it there.
    relu_out = compiled.plan.buffer_of(compiled.graph.nodes[0].outputs[0])
    assert f"(float *)(ws + {relu_out.offset})" in calls[0]
    assert f"(const float *)(ws + {relu_out.offset})" in calls[1]
    assert "/* view_1_reshape: a view, no code */" in text
    entry = text[text.index("int32_t toy_run_with_workspace("):
                 text.index("int32_t toy_run_kernel_with_workspace(")]
    assert "malloc" not in text and "switch" not in entry and "if (index" not in entry


def test_header_has_sizes_and_typed_structs():
    compiled = compile_model(toy_graph(), "host/native", name="toy",
                             kernel_library=ToyLibrary(scratch=32), measure_code=False)
    header = compiled.files["include/toy.h"]
    assert f"#define TOY_WORKSPACE_BYTES {compiled.sizes.workspace}u" in header
    assert compiled.sizes.workspace >= compiled.plan.workspace_bytes + 32
    assert "#define TOY_INPUT_X_0_BYTES 64u" in header
    assert "const float *x_0;" in header
    assert "float *mul_4;" in header and "float *add_3;" in header
    assert "void toy_reset(void);" in header


def test_state_persists_across_invocations_and_reset(tmp_path):
    graph = toy_graph(with_state=True)
    compiled = compile_model(graph, "host/native", name="toy",
                             kernel_library=ToyLibrary(accumulate_state=True))
    assert "static float toy_state_0[16];" in compiled.files["codegen/toy.c"]
    assert compiled.sizes.state == 64
    inputs = _inputs(4, seed=1)
    got = run_on_host(compiled, inputs, workdir=tmp_path)[0]
    # The toy kernel adds its input into the state after each call: the state
    # before invocation t is the sum of the earlier invocations' inputs.
    y = _reference(toy_graph(), inputs)[1]
    state = np.zeros((1, 16), np.float32)
    for t in range(4):
        np.testing.assert_allclose(got[t], y[t] * y[t] + state, rtol=1e-5)
        state = state + y[t] * y[t]


@pytest.mark.parametrize("name", ["", "1abc", "my-model", "aot_rpc_x"])
def test_bad_names_are_refused(name):
    with pytest.raises(CodegenError, match="not a usable C identifier"):
        check_name(name)


def _strict_compile(cc, flags, compiled, tmp_path):
    art = compiled.write(tmp_path / "art")
    sources = [str(p) for p in (art / "codegen").glob("*.c")]
    cmd = [cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-O2", *flags,
           f"-I{art / 'include'}", f"-I{art / 'runtime' / 'include'}", "-c", *sources]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("io_in_ws", [False, True])
@pytest.mark.one_fast
def test_generated_c_is_warning_free_on_host(io_in_ws, tmp_path):
    compiled = compile_model(toy_graph(True), "host/native", name="toy",
                             io_in_workspace=io_in_ws,
                             kernel_library=ToyLibrary(accumulate_state=True, scratch=16,
                                                       constants_as_params=True))
    _strict_compile("gcc", [], compiled, tmp_path)


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None, reason="no arm-none-eabi-gcc")
def test_generated_c_is_warning_free_for_cortex_m4(tmp_path):
    compiled = compile_model(toy_graph(True), "qemu/mps2-an386", name="toy",
                             kernel_library=ToyLibrary(accumulate_state=True, scratch=16,
                                                       constants_as_params=True))
    assert compiled.sizes.code is not None and compiled.sizes.code > 0
    _strict_compile("arm-none-eabi-gcc", ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard",
                                          "-mfpu=fpv4-sp-d16"], compiled, tmp_path)


@pytest.mark.slow
def test_toy_model_is_clean_under_sanitizers(tmp_path):
    graph = toy_graph()
    compiled = compile_model(graph, "host/native", name="toy",
                             kernel_library=ToyLibrary(scratch=32))
    inputs = _inputs(2)
    got = run_on_host(compiled, inputs, sanitize=True, workdir=tmp_path)
    for g, w in zip(got, _reference(graph, inputs)):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_view_between_caller_buffers_is_a_copy(tmp_path):
    """A graph input reshaped straight into a graph output: two caller buffers, no kernel."""
    b = GraphBuilder("copy")
    x = b.input("x", (2, 3), "float32")
    graph = b.build([b.op("reshape", [x], newshape=(3, 2))])
    compiled = compile_model(graph, "host/native", name="copy", kernel_library=ToyLibrary(),
                             io_in_workspace=False)
    assert compiled.kernels == []
    text = compiled.files["codegen/copy.c"]
    assert "(void)memcpy(out_reshape_1, in_x, 24);" in text
    assert "return copy_entry(ws, in->x, out->reshape_1);" in text
    xs = [np.arange(12, dtype=np.float32).reshape(2, 2, 3)]
    (got,) = run_on_host(compiled, xs, workdir=tmp_path)
    np.testing.assert_array_equal(got, xs[0].reshape(2, 3, 2))


def test_state_starts_at_its_zero_point(tmp_path):
    """A fresh model's int8 state holds its zero point (real value 0), as in
    the reference interpreter, not the bytes of a zeroed static array."""
    from aot.ir import Quantization

    q = Quantization.per_tensor(0.1, 0)
    b = GraphBuilder("zp_state")
    x = b.input("x", (1, 8), "int8", q)
    v = b.variable("v", (1, 8), "int8", Quantization.per_tensor(0.1, 3))
    y = b.op("add", [x, v], out_type=TensorType((1, 8), "int8", q))
    graph = b.build([y])
    compiled = compile_model(graph, "host/native", name="zp")
    inputs = [np.arange(-8, 8, dtype=np.int8).reshape(2, 1, 8)]
    got = run_on_host(compiled, inputs, workdir=tmp_path)[0]
    np.testing.assert_array_equal(got, _reference(graph, inputs)[0])
    np.testing.assert_array_equal(got, inputs[0])
