"""What the loop IR has for entry functions (the executor's, docs/codegen.md): byte
addresses into buffers, memory builtins, let bindings, early returns, comments and
calls of another function of the module.  Both printers give the same bytes on this machine."""

from __future__ import annotations

import numpy as np
import pytest

from aot.codegen.c import build_module, print_functions
from aot.codegen.llvm import build_llvm_module
from aot.tir import (Address, Buffer, Comment, Evaluate, For, IfThenElse, LetStmt, PrimFunc, Return,
                     Store, Var, call_extern, call_memory, const, decl_buffer)
from aot.tir.expr import TypeError_
from aot.tir.stmt import seq


def _functions(status: int = 0):
    """``seven`` writes 7; ``mover`` moves bytes of ``src`` into ``dst`` every way the
    entry function does, calls ``seven`` on an element of ``dst`` and returns ``status``."""
    o = decl_buffer((2,), "int16", "o")
    seven = PrimFunc("seven", [o], Store(o, const(7, "int16"), const(0)))
    src, dst = decl_buffer((16,), "uint8", "src"), decl_buffer((8,), "int16", "dst")
    d, k, s = Var("d", "handle"), Var("k"), Var("s")
    view = Buffer("d", "int16", (2,), data=d)
    body = seq(
        Comment("bytes */ moved"),
        Evaluate(call_memory("memset", Address(dst, 0, "uint8", "w"), 0, 16)),
        Evaluate(call_memory("memcpy", Address(dst, 2, "uint8", "w"),
                             Address(src, 0, "uint8", "r"), 4)),
        LetStmt(d, Address(dst, 8, "int16", "w"),
                For(k, 0, 2, "serial", Store(view, const(-3, "int16"), k))),
        LetStmt(s, call_extern("int32", "seven", Address(dst, 12, "int16", "w")),
                IfThenElse(s.not_equal(0), Return(s))),
        Evaluate(call_memory("memmove", Address(dst, 14, "uint8", "w"),
                             Address(dst, 2, "uint8", "r"), 2)),
        IfThenElse(Address(dst, 0, "int16", "r").not_equal(Address(src, 0, "int16", "r")),
                   Return(status)))
    return [seven, PrimFunc("mover", [src, dst], body)]


def _expected(src: np.ndarray) -> np.ndarray:
    out = np.zeros(16, np.uint8)
    out[2:6] = src[:4]
    out[14:16] = src[:2]
    words = out.view(np.int16)
    words[4:6] = -3
    words[6] = 7
    return words


@pytest.mark.parametrize("status", [0, 5])
def test_c_and_llvm_run_an_entry_function_alike(status):
    src = np.arange(100, 116, dtype=np.uint8)
    for build in (lambda f: build_module(f, "c"), lambda f: build_llvm_module(f, "llvm")):
        mod = build(_functions(status))
        dst = np.full(8, 99, np.int16)
        assert mod.invoke("mover", [src.ctypes.data, dst.ctypes.data]) == status
        np.testing.assert_array_equal(dst, _expected(src))


def test_the_c_printer_prints_addresses_lets_and_returns():
    text = print_functions(_functions(5)[1:]).text
    assert "(void)memcpy(((uint8_t *)dst + 2), src, 4);" in text  # int16: moved as bytes
    assert "int16_t *d = (int16_t *)((uint8_t *)dst + 8);" in text
    assert "const int32_t s = seven((int16_t *)((uint8_t *)dst + 12));" in text
    assert "/* bytes * / moved */" in text  # a comment cannot end early
    assert "return 5;" in text and print_functions(_functions(5)[1:]).need_string


def test_the_text_form_shows_the_new_nodes():
    text = str(_functions()[1])
    assert 'let d = address(dst, 8, int16, "w")' in text
    assert 'memmove(address(dst, 14, uint8, "w"), address(dst, 2, uint8, "r"), 2)' in text
    assert "return 0" in text and "  // bytes */ moved" in text


def test_bad_addresses_and_lets_are_refused():
    b = decl_buffer((4,), "uint8", "b")
    with pytest.raises(TypeError_, match="scalar dtype, not 'handle'"):
        Address(b, 0, "handle", "r")
    with pytest.raises(TypeError_, match="mode is 'r', 'w' or 'rw', not 'x'"):
        Address(b, 0, "int8", "x")
    with pytest.raises(TypeError_, match="a handle is bound to an address"):
        LetStmt(Var("p", "handle"), call_extern("handle", "f"), Evaluate(const(0)))
    with pytest.raises(TypeError_, match="unknown memory builtin 'strcpy'"):
        call_memory("strcpy", Address(b, 0, "uint8", "w"), Address(b, 1, "uint8", "r"), 1)
    with pytest.raises(TypeError_, match="returns an int32 status, not float32"):
        Return(const(1.0))
