"""The small fixed-point helpers of the support header, written in LLVM IR.

The generated kernels requantize through ``static inline`` C functions of
``aot/kernels/include/aot_kernel_fixedpoint.h`` (``aot_srdhm``,
``aot_mbqm``...).  llvmlite cannot compile C, so the LLVM backend carries
its own copy of the ones every quantized kernel calls, instruction for
instruction the header's portable path (the one without the Arm DSP
extension, whose results it equals):

=================  ===========================================================
``aot_srdhm``      ``(a*b + 2^30) >> 31`` in 64 bits; INT32_MIN*INT32_MIN saturates
``aot_rdbpot``     divide by ``2^e`` rounding to nearest, ties away from zero
``aot_shl32``      ``(uint32)x << left``
``aot_mbqm``       ``rdbpot(srdhm(shl32(x, max(shift, 0)), m), max(-shift, 0))``
``aot_mbqm64``     the int16x8 requantization (Q15 multiplier, one rounding)
``aot_requant``    the merged one-rounding requantization (64-bit sum, shift; the
                   sign correction added to the constant in halves: one SMLAL on Arm)
``aot_clamp_s8``   ``min(max(v, lo), hi)``
``aot_min_i32``,   ``aot_max_i32``
=================  ===========================================================

Each is an ``internal`` ``alwaysinline`` function defined in a module the
first time a kernel of the module calls it (:func:`define`).  Every other
helper (softmax's exp and reciprocal, the int8 dot products) stays a call
of the C function; :mod:`aot.codegen.llvm_jit` resolves it for the host
JIT.  ``tests/codegen/test_llvm_fixedpoint.py`` runs each one against the
header's C on random and extreme values.
"""

from __future__ import annotations

from llvmlite import ir

I32 = ir.IntType(32)
I64 = ir.IntType(64)
INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1


def _srdhm(b: ir.IRBuilder, a, c):
    both_min = b.and_(b.icmp_signed("==", a, I32(INT32_MIN)),
                      b.icmp_signed("==", c, I32(INT32_MIN)))
    prod = b.mul(b.sext(a, I64), b.sext(c, I64))
    high = b.trunc(b.ashr(b.add(prod, I64(1 << 30)), I64(31)), I32)
    return b.select(both_min, I32(INT32_MAX), high)


def _rdbpot(b: ir.IRBuilder, x, exponent):
    mask = b.sub(b.shl(I32(1), exponent), I32(1))
    remainder = b.and_(x, mask)
    negative = b.zext(b.icmp_signed("<", x, I32(0)), I32)
    threshold = b.add(b.ashr(mask, I32(1)), negative)
    up = b.zext(b.icmp_signed(">", remainder, threshold), I32)
    return b.add(b.ashr(x, exponent), up)


def _shl32(b: ir.IRBuilder, x, left):
    return b.shl(x, left)


def _mbqm(b: ir.IRBuilder, x, multiplier, shift):
    positive = b.icmp_signed(">", shift, I32(0))
    left = b.select(positive, shift, I32(0))
    right = b.select(positive, I32(0), b.sub(I32(0), shift))
    return _rdbpot(b, _srdhm(b, _shl32(b, x, left), multiplier), right)


def _mbqm64(b: ir.IRBuilder, x, multiplier, shift):
    rounded = b.ashr(b.add(b.sext(multiplier, I64), I64(1 << 15)), I64(16))
    reduced = b.select(b.icmp_signed("<", multiplier, I32(0x7FFF0000)), rounded, I64(0x7FFF))
    total_shift = b.sub(I32(15), shift)
    rnd = b.shl(I64(1), b.sext(b.sub(total_shift, I32(1)), I64))
    return b.ashr(b.add(b.mul(x, reduced), rnd), b.sext(total_shift, I64))


def _requant(b: ir.IRBuilder, x, m, k_lo, k_hi, e1):
    # q = x*m + k + [x < 0] * INT32_MIN, the header's sum modulo 2^64.  The
    # correction (-2^31 when x < 0) is added to k in 32-bit halves with an
    # explicit carry, so that k + correction is one addend pair and the Arm
    # backend folds it into the accumulator of one SMLAL: and, adds, adc,
    # smlal, asr on a Cortex-M4 (the 64-bit form left k_hi out: seven).
    low = b.add(b.zext(k_lo, I64), b.zext(b.and_(x, I32(INT32_MIN)), I64))
    carry = b.trunc(b.lshr(low, I64(32)), I32)
    high = b.add(b.add(k_hi, b.ashr(x, I32(31))), carry)
    k = b.or_(b.shl(b.zext(high, I64), I64(32)), b.zext(b.trunc(low, I32), I64))
    q = b.add(b.mul(b.sext(x, I64), b.sext(m, I64)), k)
    return b.ashr(b.trunc(b.ashr(q, I64(32)), I32), e1)


def _clamp_s8(b: ir.IRBuilder, v, lo, hi):
    v = b.select(b.icmp_signed(">", v, lo), v, lo)
    return b.select(b.icmp_signed("<", v, hi), v, hi)


def _min_i32(b: ir.IRBuilder, x, y):
    return b.select(b.icmp_signed("<", x, y), x, y)


def _max_i32(b: ir.IRBuilder, x, y):
    return b.select(b.icmp_signed(">", x, y), x, y)


#: name -> (return type, parameter types, body builder)
HELPERS = {
    "aot_srdhm": (I32, (I32, I32), _srdhm),
    "aot_rdbpot": (I32, (I32, I32), _rdbpot),
    "aot_shl32": (I32, (I32, I32), _shl32),
    "aot_mbqm": (I32, (I32, I32, I32), _mbqm),
    "aot_mbqm64": (I64, (I64, I32, I32), _mbqm64),
    "aot_requant": (I32, (I32, I32, I32, I32, I32), _requant),
    "aot_clamp_s8": (I32, (I32, I32, I32), _clamp_s8),
    "aot_min_i32": (I32, (I32, I32), _min_i32),
    "aot_max_i32": (I32, (I32, I32), _max_i32),
}

#: The IR types of the arguments, as aot.tir dtypes (for checking a call's arguments).
DTYPES = {I32: "int32", I64: "int64"}


def signature(name: str) -> tuple[str, tuple[str, ...]]:
    """``(return dtype, argument dtypes)`` of the helper ``name``."""
    ret, params, _ = HELPERS[name]
    return DTYPES[ret], tuple(DTYPES[p] for p in params)


def define(module: ir.Module, name: str) -> ir.Function:
    """The helper ``name`` in ``module``, defined on first use."""
    if name in module.globals:
        return module.globals[name]
    ret, params, body = HELPERS[name]
    fn = ir.Function(module, ir.FunctionType(ret, params), name)
    fn.linkage = "internal"
    fn.attributes.add("alwaysinline")
    fn.attributes.add("nounwind")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    b.ret(body(b, *fn.args))
    return fn
