"""The LLVM IR copies of the fixed-point helpers equal the support header's C.

Each helper is called elementwise by one kernel built twice: for ``c`` with
the header's text imported (the C the model kernels use) and for ``llvm``,
where the same call is the IR function of :mod:`aot.codegen.llvm_fixedpoint`.
Arguments are drawn over the domain where the C is defined (shift amounts
in range, no int64 overflow) with the extremes always included.
"""

from __future__ import annotations

import functools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import aot
from aot import te
from aot.codegen import llvm_fixedpoint
from aot.kernels import support_files

N = 48
I32_MIN, I32_MAX = -(1 << 31), (1 << 31) - 1
ANY32 = st.integers(I32_MIN, I32_MAX)

# helper -> argument strategies (within the C's defined domain)
DOMAINS = {
    "aot_srdhm": (ANY32, ANY32),
    "aot_rdbpot": (ANY32, st.integers(0, 31)),
    "aot_shl32": (ANY32, st.integers(0, 31)),
    "aot_mbqm": (ANY32, ANY32, st.integers(-31, 31)),
    "aot_mbqm64": (st.integers(-(1 << 47), 1 << 47), ANY32, st.integers(-47, 14)),
    "aot_requant": (ANY32, ANY32, ANY32, st.integers(-(1 << 29), 1 << 29), st.integers(0, 31)),
    "aot_clamp_s8": (ANY32, st.integers(-200, 127), st.integers(-128, 200)),
    "aot_min_i32": (ANY32, ANY32),
    "aot_max_i32": (ANY32, ANY32),
}
EXTREMES = {"aot_srdhm": [(I32_MIN, I32_MIN), (I32_MIN, I32_MAX), (I32_MAX, I32_MAX)],
            "aot_rdbpot": [(I32_MIN, 31), (-1, 1), (I32_MAX, 31), (-3, 1)],
            "aot_mbqm": [(I32_MIN, I32_MIN, 0), (I32_MAX, 1 << 30, -31), (-1, I32_MAX, 31)],
            "aot_mbqm64": [(-(1 << 47), I32_MAX, 14), (1 << 47, 0x7FFF0000, -47)],
            "aot_requant": [(I32_MIN, I32_MAX, -1, 1 << 29, 31), (-1, 1 << 30, 0, 0, 0)]}


def test_every_helper_has_a_domain():
    assert set(DOMAINS) == set(llvm_fixedpoint.HELPERS)


@functools.cache
def _header() -> str:
    """The fixed-point header as one importable block (the target header inlined)."""
    files = support_files()
    return (files["aot_kernel_target.h"] + files["aot_kernel_fixedpoint.h"]
            .replace('#include "aot_kernel_target.h"', ""))


@functools.cache
def _modules(name: str):
    ret, params = llvm_fixedpoint.signature(name)
    args = [te.placeholder((N,), dt, f"a{k}") for k, dt in enumerate(params)]
    C = te.compute((N,), lambda i: te.call_pure(ret, name, *[a[i] for a in args]), name="C")
    out = []
    for target in ("c", "llvm"):
        s = te.create_schedule(C.op)
        s[C].pragma(C.op.axis[0], "import_c", _header())
        out.append(aot.build(s, args + [C], target=target, name="f"))
    return out, params, ret


def _run(name, rows):
    (c_mod, llvm_mod), params, ret = _modules(name)
    rows = (rows * N)[:N]
    arrays = [np.array([r[k] for r in rows], dtype=dt) for k, dt in enumerate(params)]
    got = []
    for mod in (c_mod, llvm_mod):
        out = np.zeros(N, ret)
        mod(*arrays, out)
        got.append(out)
    np.testing.assert_array_equal(got[1], got[0], err_msg=f"{name}{rows}")


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_ir_helpers_equal_the_header(data):
    for name, domain in DOMAINS.items():
        rows = data.draw(st.lists(st.tuples(*domain), min_size=1, max_size=N), label=name)
        _run(name, rows + EXTREMES.get(name, []))
