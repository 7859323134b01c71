"""Difference testing: random loop nests and expressions, C module vs LLVM module.

Hypothesis draws an expression tree over int8/int16/int32/float32 inputs
(arithmetic, shifts, truncating and floor division, comparisons and
selects, loads of neighbours guarded as padding is, casts, min/max, the
float builtins), an output (elementwise or a reduction) and a random
schedule (splits, reorders, fusion, unrolling, vectorization:
tests/support/schedules.py), lowers it once and builds the loop IR with both
backends.  The outputs must be equal bit for bit (NaNs count as equal:
their payload is the hardware's, not the program's; so do +0.0 and -0.0,
whose sign gcc's folding of ``0.0f - x`` does not keep).

Programs stay inside what C defines, so that "equal" is a fair demand:
int32 operands that could overflow are first narrowed to int16, shift
amounts are masked below the width, divisors of 0 and -1 are replaced,
floats are clamped before conversion to integers.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, reject, settings
from hypothesis import strategies as st
from support.schedules import random_schedule

import aot
from aot import te
from aot.codegen import BuildError
from aot.tir import expr as E

DTYPES = ("int8", "int16", "int32", "float32")
I32 = (-(1 << 31), (1 << 31) - 1)
INPUT_RANGE = {"int8": (-128, 127), "int16": (-32768, 32767), "int32": (-(1 << 20), 1 << 20)}
PAD = 64  # elements of zeros around every input: eager vector loads of a neighbour stay inside


# -- recipes: plain tuples, so hypothesis can print and shrink them -------------------------
def leaves(dtype, vector=False):
    out = [st.tuples(st.just("in"), st.just(dtype))]
    if not vector:
        out.append(st.tuples(st.just("shifted"), st.just(dtype), st.sampled_from([-1, 1])))
    if dtype == "float32":
        out.append(st.tuples(st.just("const"), st.just(dtype),
                             st.sampled_from([0.0, -0.0, 0.5, -1.25, 3.0e5, 1.0e-30, 7.0])))
    else:
        lo, hi = INPUT_RANGE[dtype]
        out.append(st.tuples(st.just("const"), st.just(dtype), st.integers(lo, hi)))
        if dtype == "int32":
            out.append(st.tuples(st.just("index"), st.just(dtype)))
    return st.one_of(out)


INT_OPS = ("add", "sub", "mul", "bitand", "bitor", "bitxor", "shl", "shr", "div", "mod",
           "floordiv", "floormod", "min", "max")
FLOAT_OPS = ("add", "sub", "mul", "div", "min", "max")
CMPS = ("lt", "le", "gt", "ge", "eq", "ne")
WIDTH = {"int8": 8, "int16": 16, "int32": 32, "float32": 32}
FLOAT_INTRINSICS = ("sqrt", "exp", "tanh", "floor", "round", "abs")


@st.composite
def recipe(draw, dtype, depth=3, vector=False):
    """An expression of ``dtype``; ``vector`` keeps to what the vectorize pass
    turns into vector code (no calls, no floor division, selects comparing
    values as wide as their result, no guarded neighbour loads)."""
    leaf = leaves(dtype, vector)
    if depth == 0:
        return draw(leaf)
    kinds = ["leaf", "binary", "binary", "cast", "select"] + ([] if vector else ["intrin"])
    kind = draw(st.sampled_from(kinds))

    def sub(t):
        return recipe(t, depth - 1, vector)

    if kind == "leaf":
        return draw(leaf)
    if kind == "binary":
        ops = FLOAT_OPS if dtype == "float32" else INT_OPS
        if vector:
            ops = [op for op in ops if op not in ("floordiv", "floormod")]
        return ("bin", draw(st.sampled_from(ops)), draw(sub(dtype)), draw(sub(dtype)))
    if kind == "cast":
        src = draw(st.sampled_from([t for t in DTYPES if t != dtype]))
        return ("cast", dtype, draw(sub(src)))
    if kind == "select":
        same_width = [t for t in DTYPES if WIDTH[t] == WIDTH[dtype]]
        ct = draw(st.sampled_from(same_width if vector else DTYPES))
        return ("select", draw(st.sampled_from(CMPS)), draw(sub(ct)), draw(sub(ct)),
                draw(sub(dtype)), draw(sub(dtype)))
    if dtype == "float32":
        return ("intrin", draw(st.sampled_from(FLOAT_INTRINSICS)), draw(sub(dtype)))
    return ("intrin", "abs", draw(sub(dtype)))


# -- recipe -> tensor expression, keeping every step defined in C -----------------------------
class Builder:
    def __init__(self, inputs, i, j, m):
        self.inputs, self.i, self.j, self.m = inputs, i, j, m

    def build(self, r):
        """``(expression, (lo, hi))``: integer results carry a bound."""
        kind = r[0]
        if kind == "in":
            return self.inputs[r[1]][self.i, self.j], _range(r[1])
        if kind == "shifted":
            dt, d = r[1], r[2]
            inside = self.j + d >= 0 if d < 0 else self.j + d < self.m
            zero = te.const(0, dt)
            return te.if_then_else(inside, self.inputs[dt][self.i, self.j + d], zero), _range(dt)
        if kind == "const":
            return te.const(r[2], r[1]), (r[2], r[2]) if r[1] != "float32" else None
        if kind == "index":
            return self.i * 7 - self.j, (-(1 << 10), 1 << 10)
        if kind == "bin":
            return self.binary(*r[1:])
        if kind == "cast":
            return self.cast(r[1], r[2])
        if kind == "select":
            _, cmp, a, b, t, f = r
            (ea, _), (eb, _) = self.build(a), self.build(b)
            (et, rt), (ef, rf) = self.build(t), self.build(f)
            cond = {"lt": ea < eb, "le": ea <= eb, "gt": ea > eb, "ge": ea >= eb,
                    "eq": ea.equal(eb), "ne": ea.not_equal(eb)}[cmp]
            return te.if_then_else(cond, et, ef), _union(rt, rf)
        _, name, a = r
        ea, ra = self.build(a)
        if ea.dtype == "float32":
            return getattr(te, name)(ea), None
        if ea.dtype == "int32" and ra[0] <= I32[0]:
            ea, ra = _narrow(ea)
        return te.abs(ea), (0, max(abs(ra[0]), abs(ra[1]))) if ea.dtype == "int32" \
            else _range(ea.dtype)

    def binary(self, op, a, b):
        (ea, ra), (eb, rb) = self.build(a), self.build(b)
        dt = ea.dtype
        if dt == "float32":
            f = {"add": lambda: ea + eb, "sub": lambda: ea - eb, "mul": lambda: ea * eb,
                 "div": lambda: ea / eb, "min": lambda: E.min_(ea, eb),
                 "max": lambda: E.max_(ea, eb)}[op]
            return f(), None
        bits = {"int8": 8, "int16": 16, "int32": 32}[dt]
        if op in ("shl", "shr"):
            amount = eb & te.const(15 if op == "shl" and dt == "int32" else bits - 1, dt)
            if op == "shl" and dt == "int32":
                ea, ra = _narrow(ea) if _wider_than_int16(ra) else (ea, ra)
                return ea << amount, (ra[0] << 15, ra[1] << 15) if ra[0] < 0 else (0, ra[1] << 15)
            return (ea << amount if op == "shl" else ea >> amount), \
                (_range(dt) if dt != "int32" else ra if op == "shr" else _range(dt))
        if op in ("div", "mod", "floordiv", "floormod"):
            safe = te.if_then_else(eb.equal(te.const(0, dt)), te.const(7, dt),
                                   te.if_then_else(eb.equal(te.const(-1, dt)), te.const(3, dt),
                                                   eb))
            fn = {"div": te.truncdiv, "mod": te.truncmod, "floordiv": lambda x, y: x // y,
                  "floormod": lambda x, y: x % y}[op]
            bound = max(abs(x) for x in (*ra, *rb))  # |quotient| <= |a|, |remainder| < |b|
            return fn(ea, safe), _range(dt) if dt != "int32" else (-bound, bound)
        if op in ("min", "max"):
            return (E.min_(ea, eb) if op == "min" else E.max_(ea, eb)), _union(ra, rb)
        if op in ("bitand", "bitor", "bitxor"):
            e = {"bitand": ea & eb, "bitor": ea | eb, "bitxor": ea ^ eb}[op]
            return e, _range(dt) if dt != "int32" else I32
        if dt != "int32":  # add, sub, mul wrap on narrow types
            return {"add": ea + eb, "sub": ea - eb, "mul": ea * eb}[op], _range(dt)
        for _ in range(2):
            r = _arith(op, ra, rb)
            if I32[0] <= r[0] and r[1] <= I32[1]:
                break
            (ea, ra), (eb, rb) = _narrow(ea), _narrow(eb)
        return {"add": ea + eb, "sub": ea - eb, "mul": ea * eb}[op], _arith(op, ra, rb)

    def cast(self, dtype, r):
        e, rng = self.build(r)
        if e.dtype == "float32" and dtype != "float32":
            lo, hi = _range(dtype) if dtype != "int32" else (-2147483520, 2147483520)
            return te.clamp(e, float(lo), float(hi)).astype(dtype), _range(dtype) \
                if dtype != "int32" else (lo, hi)
        if dtype == "float32":
            return e.astype(dtype), None
        if dtype == "int32":
            return e.astype(dtype), rng
        return e.astype(dtype), _range(dtype)


def _range(dtype):
    return None if dtype == "float32" else (I32 if dtype == "int32" else
                                            {"int8": (-128, 127), "int16": (-32768, 32767)}[dtype])


def _union(a, b):
    return None if a is None else (min(a[0], b[0]), max(a[1], b[1]))


def _arith(op, a, b):
    if op == "add":
        return a[0] + b[0], a[1] + b[1]
    if op == "sub":
        return a[0] - b[1], a[1] - b[0]
    products = [x * y for x in a for y in b]
    return min(products), max(products)


def _wider_than_int16(r):
    return r[0] < -32768 or r[1] > 32767


def _narrow(e):
    """``e`` wrapped to the int16 range (the same in both backends)."""
    return e.astype("int16").astype("int32"), (-32768, 32767)


# -- programs ------------------------------------------------------------------------------
@st.composite
def programs(draw):
    out_dtype = draw(st.sampled_from(DTYPES))
    lanes = draw(st.sampled_from([0, 2, 4, 8, 16]))
    return {"n": draw(st.integers(1, 5)), "m": draw(st.integers(1, 19)),
            "dtype": out_dtype, "expr": draw(recipe(out_dtype, vector=lanes > 0)),
            "reduce": not lanes and draw(st.booleans()) and out_dtype in ("int32", "float32"),
            "lanes": lanes,
            "schedule_seed": draw(st.integers(0, 2 ** 16)),
            "data_seed": draw(st.integers(0, 2 ** 16))}


def build_program(p):
    n, m = p["n"], p["m"]
    inputs = {dt: te.placeholder((n, m), dt, f"X_{dt}") for dt in DTYPES}
    args = [inputs[dt] for dt in DTYPES]
    if p["reduce"]:
        k = te.reduce_axis((0, m), "k")

        def summand(i, kk):
            e, rng = Builder(inputs, i, kk, m).build(p["expr"])
            if e.dtype == "int32" and _wider_than_int16(rng):
                e, _ = _narrow(e)  # the sum of at most 19 int16 values fits int32
            return e
        out = te.compute((n,), lambda i: te.sum(summand(i, k), axis=k), name="out")
    else:
        out = te.compute((n, m), lambda i, j: Builder(inputs, i, j, m).build(p["expr"])[0],
                         name="out")
    s = te.create_schedule(out.op)
    stage = s[out]
    random_schedule(random.Random(p["schedule_seed"]), s, stage, steps=2 if p["lanes"] else 4)
    leaf = stage.leaf_iter_vars[-1]
    if p["lanes"] and leaf not in stage.iter_attrs and leaf.iter_type != "reduce":
        _, inner = stage.split(leaf, factor=p["lanes"])  # then a vector loop innermost
        stage.vectorize(inner)
    return aot.lower(s, args + [out], name="prog"), args, out


def padded(values: np.ndarray) -> np.ndarray:
    """``values`` in the middle of a zero-filled buffer, as a C-contiguous view."""
    flat = np.zeros(values.size + 2 * PAD, values.dtype)
    flat[PAD:PAD + values.size] = values.reshape(-1)
    return flat[PAD:PAD + values.size].reshape(values.shape)


def input_arrays(p):
    rng = np.random.default_rng(p["data_seed"])
    shape = (p["n"], p["m"])
    arrays = []
    for dt in DTYPES:
        if dt == "float32":
            x = (rng.standard_normal(shape) * rng.choice([1.0, 100.0, 1e6])).astype(np.float32)
            x.flat[:: 7] = 0.0
        else:
            lo, hi = INPUT_RANGE[dt]
            x = rng.integers(lo, hi, shape, endpoint=True).astype(dt)
        arrays.append(padded(x))
    return arrays


def run_both(p):
    func, _, out = build_program(p)
    text = str(func)
    event("vectorized" if "ramp(" in text else "scalar")
    event("lazy select" if "select(" in text else "no select")
    shape = tuple(int(d.value) for d in out.shape)
    results = []
    for target in ("c", "llvm"):
        mod = aot.build(func, target=target)
        o = padded(np.zeros(shape, out.dtype))
        try:
            mod(*input_arrays(p), o)
        except BuildError as err:
            # gcc -Werror refuses some valid programs (a comparison it proves
            # always false): nothing to compare, and not this backend's concern.
            if target == "c" and "[-Werror=" in str(err):
                event("C refused by gcc -Werror")
                reject()
            raise
        results.append(o)
    return func, results


def assert_same_bits(func, c_out, llvm_out):
    a, b = c_out.reshape(-1).copy(), llvm_out.reshape(-1).copy()
    if a.dtype == np.float32:
        both_nan = np.isnan(a) & np.isnan(b)
        a[both_nan], b[both_nan] = 0, 0
        # The sign of a zero is not compared: gcc 12 folds `0.0f - (c ? 0.5f : 0.0f)`
        # to -0.0 even at -O0, where IEEE subtraction (and LLVM) gives +0.0.
        both_zero = (a == 0) & (b == 0)
        a[both_zero], b[both_zero] = 0, 0
    bad = np.flatnonzero(a.view(f"u{a.itemsize}") != b.view(f"u{b.itemsize}"))
    assert bad.size == 0, (f"{bad.size} of {a.size} values differ, first at {bad[0]}: C "
                           f"{a[bad[0]]!r}, LLVM {b[bad[0]]!r}\n{func}")


SETTINGS = {"deadline": None,
            "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large]}


@settings(max_examples=60, **SETTINGS)
@given(programs())
@pytest.mark.slow
def test_c_and_llvm_agree_on_random_programs(p):
    func, (c_out, llvm_out) = run_both(p)
    assert_same_bits(func, c_out, llvm_out)


@pytest.mark.slow
@settings(max_examples=400, **SETTINGS)
@given(programs())
def test_c_and_llvm_agree_on_many_random_programs(p):
    func, (c_out, llvm_out) = run_both(p)
    assert_same_bits(func, c_out, llvm_out)
