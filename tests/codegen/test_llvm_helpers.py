"""The support headers' helpers as shipped LLVM bitcode (aot.codegen.llvm_helpers,
built by aot.kernels.bitcode).

The bitcode is the one LLVM form of the headers: it must be built from the
headers in the tree (a header edited without rebuilding fails here), define
every helper a kernel calls, and be what the JIT links instead of running a
C compiler (tests/test_compile_models.py runs every shared model so, with an
empty PATH).
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

import aot
from aot import te
from aot.codegen import llvm_helpers
from aot.quant.arith import multiply_by_quantized_multiplier
from aot.errors import BuildError
from aot.kernels import bitcode


def test_the_shipped_bitcode_is_built_from_the_headers_in_the_tree():
    assert bitcode.stale() is None


def test_a_header_edited_without_rebuilding_is_reported(monkeypatch):
    headers = bitcode._headers()
    name = "aot_kernel_fixedpoint.h"
    edited = {**headers, name: headers[name] + "\n/* edited */\n"}
    monkeypatch.setattr(bitcode, "_headers", lambda: edited)
    assert "rebuild it with python -m aot.kernels.bitcode" in bitcode.stale()


@pytest.mark.skipif(shutil.which("clang") is None, reason="no clang")
@pytest.mark.slow
def test_the_bitcode_rebuilds_to_the_same_helpers(tmp_path):
    manifest = bitcode.build(tmp_path)
    shipped = json.loads(llvm_helpers.shipped(llvm_helpers.MANIFEST).read_text())
    assert manifest["sources"] == shipped["sources"]
    assert sorted(p.name for p in tmp_path.glob("*.bc")) == sorted(
        f"{v}.bc" for v in llvm_helpers.VARIANTS)


def test_every_variant_defines_the_helpers_kernels_call():
    for variant in llvm_helpers.VARIANTS:
        types = llvm_helpers.helper_types(variant)
        assert types["aot_mbqm"] == "i32 (i32, i32, i32)"
        assert types["aot_variable_copy"] == "i32 (ptr, ptr, ptr, i32)"
        for name in ("aot_conv_s8", "aot_dense_s8", "aot_depthwise_s8", "aot_svdf_s8",
                     "aot_svdf_f32", "aot_lstm", "aot_exp_on_negative_values",
                     "aot_reciprocal"):
            assert name in types, (variant, name)


def test_no_helper_contracts_floats():
    """clang contracts a * b + c by default, gcc -std=c99 does not: the floats
    of the two paths would differ."""
    assert "fmuladd" not in llvm_helpers.helper_ir(llvm_helpers.host_variant())


def test_a_kernel_calling_a_header_helper_runs_without_a_c_compiler(monkeypatch, tmp_path):
    """The JIT takes the header's helper from the bitcode, with no C compiler
    on PATH, and computes TFLM's MultiplyByQuantizedMultiplier (aot.quant.arith,
    which the header's C path is tested against)."""
    from aot.tir import expr as E
    x = te.placeholder((16,), "int32", "x")
    y = te.compute((16,), lambda i: E.call_extern("int32", "aot_mbqm", x[i], 1518500250, -3),
                   name="y")
    s = te.create_schedule(y.op)
    a = np.array([0, 1, -1, 1000, -1000, 2**31 - 1, -2**31, 12345, 7, -7, 4, -4, 5, -5,
                  2**20 + 3, -2**20 - 3], np.int32)
    want = multiply_by_quantized_multiplier(a.astype(np.int64), 1518500250, -3)
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    func = aot.build(s, [x, y], target="llvm", name="mbqm")
    out = np.empty_like(a)
    func(a, out)
    assert out.tolist() == np.asarray(want).tolist()


def test_a_call_with_other_types_than_the_header_is_refused():
    from aot.tir import expr as E
    x = te.placeholder((4,), "int32", "x")
    y = te.compute((4,), lambda i: E.call_extern("int32", "aot_mbqm", x[i], 3), name="y")
    s = te.create_schedule(y.op)
    with pytest.raises(BuildError, match=r"function bad: aot_mbqm is defined by the support "
                                         r"headers as i32 \(i32, i32, i32\), called as "
                                         r"i32 \(i32, i32\)"):
        aot.build(s, [x, y], target="llvm", name="bad")
