"""Tensorize onto a Cortex-M DSP instruction (SMLAD: two 16-bit products
accumulated into 32 bits) through an ACLE intrinsic, with a portable C
fallback so the same kernel runs on the host."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

import aot
from aot import te, tir

SMLAD_C = """\
#include <string.h>
#if defined(__ARM_FEATURE_DSP)
#include <arm_acle.h>
#endif
static inline int32_t dot2_reset(int32_t *c) { *c = 0; return 0; }
static inline int32_t dot2_update(int32_t *c, const int16_t *a, const int16_t *b) {
#if defined(__ARM_FEATURE_DSP)
  int16x2_t x, y;
  memcpy(&x, a, sizeof x);
  memcpy(&y, b, sizeof y);
  *c = __smlad(x, y, *c);
#else
  *c += (int32_t)a[0] * b[0] + (int32_t)a[1] * b[1];
#endif
  return 0;
}"""


def intrin_dot2():
    a = te.placeholder((2,), "int16", "a")
    b = te.placeholder((2,), "int16", "b")
    k = te.reduce_axis((0, 2), "k")
    c = te.compute((), lambda: te.sum(a[k].astype("int32") * b[k].astype("int32"), axis=k),
                   name="c")

    def intrin_func(ins, outs):
        aa, bb = ins
        cc = outs[0]
        reset = tir.call_extern("int32", "dot2_reset", cc.access_ptr("w"))
        update = tir.call_extern("int32", "dot2_update", cc.access_ptr("rw"),
                                 aa.access_ptr("r"), bb.access_ptr("r"))
        return None, reset, update
    binds = {t: tir.decl_buffer(t.shape, t.dtype, t.name.upper(), elem_offset=te.var("off"),
                                offset_factor=2) for t in (a, b)}
    return te.decl_tensor_intrin(c.op, intrin_func, binds=binds)


def dense_int16(n=5, m=7, k_=12):
    A = te.placeholder((n, k_), "int16", "A")
    B = te.placeholder((m, k_), "int16", "B")
    k = te.reduce_axis((0, k_), "k")
    C = te.compute((n, m), lambda i, j: te.sum(
        A[i, k].astype("int32") * B[j, k].astype("int32"), axis=k), name="C")
    s = te.create_schedule(C.op)
    ko, ki = s[C].split(C.op.reduce_axis[0], factor=2)
    s[C].tensorize(ki, intrin_dot2())
    s[C].pragma(C.op.axis[0], "import_c", SMLAD_C)
    return s, [A, B, C]


def test_smlad_tensorized_dense_matches_numpy_on_host():
    s, args = dense_int16()
    text = str(aot.lower(s, args, name="dense"))
    assert 'call_extern("dot2_update", access_ptr(C, ((i*7) + j), "rw"), ' \
           'access_ptr(A, ((i*12) + (k.outer*2)), "r"), ' \
           'access_ptr(B, ((j*12) + (k.outer*2)), "r"))' in text
    rng = np.random.default_rng(5)
    a = rng.integers(-2000, 2000, (5, 12)).astype(np.int16)
    b = rng.integers(-2000, 2000, (7, 12)).astype(np.int16)
    out = np.zeros((5, 7), np.int32)
    aot.build(s, args, name="dense")(a, b, out)
    np.testing.assert_array_equal(out, a.astype(np.int32) @ b.T.astype(np.int32))


def test_odd_offsets_break_the_declared_offset_factor():
    A = te.placeholder((4, 13), "int16", "A")
    B = te.placeholder((3, 13), "int16", "B")
    k = te.reduce_axis((0, 12), "k")
    C = te.compute((4, 3), lambda i, j: te.sum(
        A[i, k].astype("int32") * B[j, k].astype("int32"), axis=k), name="C")
    s = te.create_schedule(C.op)
    ko, ki = s[C].split(C.op.reduce_axis[0], factor=2)
    s[C].tensorize(ki, intrin_dot2())
    with pytest.raises(aot.te.ScheduleError, match="not a multiple of offset_factor=2"):
        aot.lower(s, [A, B, C])


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None, reason="no arm-none-eabi-gcc")
def test_smlad_kernel_uses_the_dsp_instruction_on_cortex_m4(tmp_path):
    s, args = dense_int16()
    src = tmp_path / "dense.c"
    aot.build(s, args, target="c -mcpu=cortex-m4", name="dense").save(src)
    obj = tmp_path / "dense.o"
    subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard",
                    "-mfpu=fpv4-sp-d16", "-std=c99", "-Wall", "-Wextra", "-Werror", "-O2",
                    "-c", str(src), "-o", str(obj)], check=True)
    objdump = shutil.which("arm-none-eabi-objdump")
    if objdump:
        dis = subprocess.run([objdump, "-d", str(obj)], capture_output=True, text=True).stdout
        assert "smlad" in dis


def test_tensorize_into_a_scratch_accumulator_then_requantize():
    """The int32 accumulator lives in a per-row scratch buffer (compute_at);
    the view's offset is relative to that buffer."""
    A = te.placeholder((5, 12), "int16", "A")
    B = te.placeholder((7, 12), "int16", "B")
    k = te.reduce_axis((0, 12), "k")
    C = te.compute((5, 7), lambda i, j: te.sum(
        A[i, k].astype("int32") * B[j, k].astype("int32"), axis=k), name="C")
    D = te.compute((5, 7), lambda i, j: te.saturate_cast("int8", C[i, j] >> 8), name="D")
    s = te.create_schedule(D.op)
    s[C].compute_at(s[D], D.op.axis[0])
    ko, ki = s[C].split(C.op.reduce_axis[0], factor=2)
    s[C].tensorize(ki, intrin_dot2())
    s[D].pragma(D.op.axis[0], "import_c", SMLAD_C)
    text = str(aot.lower(s, [A, B, D]))
    assert "allocate C: int32[1, 7], local" in text
    assert 'call_extern("dot2_reset", access_ptr(C, j, "w"))' in text
    rng = np.random.default_rng(6)
    a = rng.integers(-2000, 2000, (5, 12)).astype(np.int16)
    b = rng.integers(-2000, 2000, (7, 12)).astype(np.int16)
    out = np.zeros((5, 7), np.int8)
    aot.build(s, [A, B, D])(a, b, out)
    acc = a.astype(np.int32) @ b.T.astype(np.int32)
    np.testing.assert_array_equal(out, np.clip(acc >> 8, -128, 127))
