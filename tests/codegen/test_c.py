"""C code generation: signatures, files, cross-compilation, the host module."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import aot
from aot import te
from aot.codegen import BuildError

sys.path.insert(0, str(Path(__file__).parent.parent / "tir"))
from examples import EXAMPLES  # noqa: E402

ARM_FLAGS = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16",
             "-std=c99", "-Wall", "-Wextra", "-Werror", "-O2", "-c"]
HOST_FLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-O2", "-c"]


def vadd(n=64):
    A = te.placeholder((n,), "float32", "A")
    B = te.placeholder((n,), "float32", "B")
    C = te.compute((n,), lambda i: A[i] + B[i], name="C")
    return te.create_schedule(C.op), [A, B, C]


def test_signature_is_unpacked_const_restrict_and_returns_zero():
    s, args = vadd()
    src = aot.build(s, args, target="c", name="add").source
    assert ("int32_t add(const float* restrict A, const float* restrict B, "
            "float* restrict C) {") in src
    assert src.rstrip().endswith("return 0;\n}")
    assert aot.build(s, args, name="add").prototypes == {
        "add": "int32_t add(const float* restrict A, const float* restrict B, "
               "float* restrict C);"}


def test_save_writes_the_source(tmp_path):
    s, args = vadd()
    mod = aot.build(s, args, name="add")
    path = mod.save(tmp_path / "add.c")
    assert path.read_text() == mod.source == mod.get_source()


def test_target_object_and_string_give_the_same_code():
    from aot.target import Target
    s, args = vadd()
    a = aot.build(s, args, target="c -mcpu=cortex-m4", name="add")
    b = aot.build(s, args, target=Target("c -mcpu=cortex-m4"), name="add")
    assert a.source == b.source
    with pytest.raises(BuildError, match="not the host"):
        a(*[np.zeros(64, np.float32)] * 3)


def test_unsupported_target_kind():
    s, args = vadd()
    with pytest.raises(BuildError, match="target kind 'composite' has no C code generator"):
        aot.build(s, args, target="composite -targets={c}")


def test_host_call_checks_arrays():
    s, args = vadd()
    mod = aot.build(s, args, name="add")
    a = np.ones(64, np.float32)
    with pytest.raises(BuildError, match=r"argument 2 \(C\) must be a C-contiguous numpy array "
                                         r"float32\[64\], got float64\[64\]"):
        mod(a, a, np.zeros(64))
    with pytest.raises(BuildError, match="takes 3 arrays"):
        mod(a, a)
    out = np.zeros(64, np.float32)
    mod["add"](a, a, out)
    assert (out == 2).all()


def test_unused_parameter_does_not_warn():
    A = te.placeholder((4,), "int8", "A")
    U = te.placeholder((4,), "int8", "unused")
    C = te.compute((4,), lambda i: A[i], name="C")
    src = aot.build(te.create_schedule(C.op), [A, U, C]).source
    assert "(void)unused;" in src


def _compile(cc, flags, source, tmp_path):
    src = tmp_path / "k.c"
    src.write_text(source)
    proc = subprocess.run([cc, *flags, str(src), "-o", str(tmp_path / "k.o")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_examples_compile_for_host(name, tmp_path):
    s, args, fname = EXAMPLES[name]()
    _compile("gcc", HOST_FLAGS, aot.build(s, args, name=fname).source, tmp_path)


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None, reason="no arm-none-eabi-gcc")
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_examples_compile_for_cortex_m4(name, tmp_path):
    s, args, fname = EXAMPLES[name]()
    src = aot.build(s, args, target="c -mcpu=cortex-m4", name=fname).source
    _compile("arm-none-eabi-gcc", ARM_FLAGS, src, tmp_path)


def conv_reference(data, kernel, in_zp=-3, w_zp=2, pad=1):
    _, H, W, CI = data.shape
    KH, KW, _, CO = kernel.shape
    padded = np.full((1, H + 2 * pad, W + 2 * pad, CI), in_zp, np.int64)
    padded[:, pad:pad + H, pad:pad + W, :] = data
    padded -= in_zp
    k = kernel.astype(np.int64) - w_zp
    out = np.zeros((1, H, W, CO), np.int64)
    for i in range(KH):
        for j in range(KW):
            out += np.einsum("nhwc,ck->nhwk", padded[:, i:i + H, j:j + W, :], k[i, j])
    return out.astype(np.int32)


def test_int8_conv2d_example_matches_numpy():
    rng = np.random.default_rng(3)
    s, args, fname = EXAMPLES["conv2d_int8_nhwc"]()
    data = rng.integers(-128, 128, (1, 49, 10, 64)).astype(np.int8)
    kernel = rng.integers(-128, 128, (3, 3, 64, 64)).astype(np.int8)
    out = np.zeros((1, 49, 10, 64), np.int32)
    aot.build(s, args, name=fname)(data, kernel, out)
    np.testing.assert_array_equal(out, conv_reference(data, kernel))


def test_matmul_relu_and_gemv_examples_match_numpy():
    rng = np.random.default_rng(4)
    s, args, fname = EXAMPLES["matmul_reorder_compute_at"]()
    a = rng.standard_normal((64, 48)).astype(np.float32)
    b = rng.standard_normal((48, 40)).astype(np.float32)
    out = np.zeros((64, 40), np.float32)
    aot.build(s, args, name=fname)(a, b, out)
    np.testing.assert_allclose(out, np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)
    s, args, fname = EXAMPLES["gemv_tensorize"]()
    a = rng.standard_normal((1024, 64)).astype(np.float32)
    b = rng.standard_normal((512, 64)).astype(np.float32)
    out = np.zeros((1024, 512), np.float32)
    aot.build(s, args, name=fname)(a, b, out)
    np.testing.assert_allclose(out, a @ b.T, rtol=1e-4, atol=1e-4)


def test_host_board_target_is_callable():
    s, args = vadd(8)
    mod = aot.build(s, args, target="host/native", name="add")
    a = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    mod(a, a, out)
    assert (out == 2 * a).all()


@pytest.mark.parametrize("name", ["double", "conv2d.1", "2x"])
def test_kernel_names_must_be_c_identifiers(name):
    s, args = vadd(8)
    with pytest.raises(BuildError, match="is not a usable C identifier"):
        aot.build(s, args, name=name)


def test_several_kernels_in_one_file_share_the_preamble():
    s, args = vadd(16)
    A = te.placeholder((16,), "float32", "A")
    C = te.compute((16,), lambda i: A[i] * 3.0, name="C")
    s2 = te.create_schedule(C.op)
    o, i = s2[C].split(C.op.axis[0], factor=8)
    s2[C].vectorize(i)
    o1, i1 = s[args[-1]].split(args[-1].op.axis[0], factor=8)
    s[args[-1]].vectorize(i1)
    mod = aot.build([aot.lower(s, args, name="add"), aot.lower(s2, [A, C], name="triple")])
    assert mod.source.count("typedef float aot_float32x8") == 1
    a = np.arange(16, dtype=np.float32)
    out = np.zeros(16, np.float32)
    mod["triple"](a, out)
    np.testing.assert_array_equal(out, 3 * a)
    mod["add"](a, a, out)
    np.testing.assert_array_equal(out, 2 * a)


def test_narrow_division_wraps_to_its_type():
    """aot.tir.expr: a narrow result wraps, so INT8_MIN / -1 is INT8_MIN even
    when it is widened afterwards (C's promotion alone would give 128)."""
    A = te.placeholder((2,), "int8", "A")
    B = te.placeholder((2,), "int8", "B")
    C = te.compute((2,), lambda i: te.truncdiv(A[i], B[i]).astype("int32"), name="C")
    out = np.zeros(2, np.int32)
    aot.build(te.create_schedule(C.op), [A, B, C], name="f")(
        np.array([-128, 100], np.int8), np.array([-1, -3], np.int8), out)
    np.testing.assert_array_equal(out, [-128, -33])


def test_a_broadcast_float_keeps_the_sign_of_zero():
    """A vector broadcast of -0.0 stays -0.0 (``{0} + x`` made it +0.0), as the
    scalar store and the LLVM backend give."""
    A = te.placeholder((8,), "float32", "A")
    D = te.compute((8,), lambda i: te.const(-0.0, "float32"), name="D")
    s = te.create_schedule(D.op)
    o, i = s[D].split(D.op.axis[0], factor=4)
    s[D].vectorize(i)
    out = np.ones(8, np.float32)
    aot.build(s, [A, D], name="negzero")(np.zeros(8, np.float32), out)
    assert np.signbit(out).all(), out


def test_narrow_vector_arithmetic_wraps_like_the_scalar_code():
    """int8 lanes wrap (89 + 89 is -78), so ``x < x + x`` is false for 89: on
    signed vectors the overflow would be undefined and GCC folds the
    comparison to ``0 < x``; the C does the arithmetic on unsigned lanes."""
    X = te.placeholder((4,), "int8", "X")
    Y = te.compute((4,), lambda i: te.if_then_else(X[i] < X[i] + X[i], X[i],
                                                   te.const(0, "int8")), name="Y")
    s = te.create_schedule(Y.op)
    o, i = s[Y].split(Y.op.axis[0], factor=2)
    s[Y].vectorize(i)
    out = np.zeros(4, np.int8)
    aot.build(s, [X, Y], name="wraps")(np.array([89, 5, -100, 64], np.int8), out)
    # 89+89 -> -78, 5+5 = 10, -100-100 -> 56, 64+64 -> -128
    np.testing.assert_array_equal(out, [0, 5, -100, 0])
