"""LLVM code generation (target kind ``llvm``): the module, the host JIT,
equality with the C path on the seed examples, and what is refused."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

import aot
from aot import te
from aot.codegen import BuildError
from aot.codegen.llvm import LLVMModule
from aot.codegen.llvm_jit import verify

sys.path.insert(0, str(Path(__file__).parent.parent / "tir"))
from examples import EXAMPLES  # noqa: E402


def vadd(n=64, dtype="float32"):
    A = te.placeholder((n,), dtype, "A")
    B = te.placeholder((n,), dtype, "B")
    C = te.compute((n,), lambda i: A[i] + B[i], name="C")
    return te.create_schedule(C.op), [A, B, C]


def test_llvm_target_builds_llvm_ir_with_noalias_pointer_parameters(tmp_path):
    s, args = vadd()
    mod = aot.build(s, args, target="llvm", name="add")
    assert isinstance(mod, LLVMModule)
    assert re.search(r'define i32 @"add"\(ptr noalias align 4 %"A", ptr noalias align 4 %"B", '
                     r'ptr noalias align 4 %"C"\)', mod.source), mod.source
    assert "#include" not in mod.source
    path = mod.save(tmp_path / "add.ll")
    assert path.read_text() == mod.get_source()


def test_host_module_runs_on_numpy_arrays_and_checks_them_like_the_c_module():
    s, args = vadd()
    mod = aot.build(s, args, target="llvm", name="add")
    a = np.arange(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    mod(a, a, out)
    np.testing.assert_array_equal(out, 2 * a)
    mod["add"](a, out, out)
    np.testing.assert_array_equal(out, 3 * a)
    with pytest.raises(BuildError, match=r"argument 2 \(C\) must be a C-contiguous numpy array "
                                         r"float32\[64\], got float64\[64\]"):
        mod(a, a, np.zeros(64))
    with pytest.raises(BuildError, match=r"add takes 3 arrays \(A, B, C\), got 2"):
        mod(a, a)
    with pytest.raises(BuildError, match="no kernel named 'ad' in this module"):
        mod["ad"]


@pytest.mark.parametrize("name", sorted(EXAMPLES))
@pytest.mark.one_fast
def test_seed_examples_equal_the_c_path_bit_for_bit(name):
    s, args, fname = EXAMPLES[name]()
    rng = np.random.default_rng(3)
    ins = []
    for t in args[:-1]:
        shape = tuple(int(d.value) for d in t.shape)
        if t.dtype == "float32":
            ins.append(rng.standard_normal(shape).astype(np.float32))
        else:
            ins.append(rng.integers(-128, 128, shape).astype(t.dtype))
    out_shape = tuple(int(d.value) for d in args[-1].shape)
    outs = []
    for target in ("c", "llvm"):
        out = np.zeros(out_shape, args[-1].dtype)
        aot.build(s, args, target=target, name=fname)(*ins, out)
        outs.append(out)
    assert outs[0].tobytes() == outs[1].tobytes()


def test_vectorized_loops_become_llvm_vectors():
    s, args, fname = EXAMPLES["conv2d_int8_nhwc"]()
    src = aot.build(s, args, target="llvm", name=fname).source
    assert "load <16 x i8>" in src and "<16 x i32>" in src


def test_several_functions_in_one_module():
    s, args = vadd(16)
    A = te.placeholder((16,), "int8", "A")
    C = te.compute((16,), lambda i: A[i] * te.const(3, "int8"), name="C")
    s2 = te.create_schedule(C.op)
    mod = aot.build([aot.lower(s, args, name="add"), aot.lower(s2, [A, C], name="triple")],
                    target="llvm")
    a = np.arange(-8, 8, dtype=np.int8) * 11
    out = np.zeros(16, np.int8)
    mod["triple"](a, out)
    np.testing.assert_array_equal(out, (a.astype(np.int32) * 3).astype(np.int8))


def test_unroll_hint_is_loop_metadata_of_that_loop_only():
    A = te.placeholder((64,), "int32", "A")
    C = te.compute((64,), lambda i: A[i] + 1, name="C")
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=8)
    s[C].pragma(xo, "unroll_hint", 2)
    s[C].pragma(xi, "unroll_hint", 4)
    src = aot.build(s, [A, C], target="llvm", name="f").source
    ids = re.findall(r"!llvm\.loop (!\d+)", src)
    assert len(ids) == 2 and ids[0] != ids[1]
    assert '!"llvm.loop.unroll.count", i32 2' in src
    assert '!"llvm.loop.unroll.count", i32 4' in src


def test_import_c_helpers_are_private_to_their_module():
    """Two modules may define an imported helper of one name differently."""
    A = te.placeholder((8,), "int32", "A")
    C = te.compute((8,), lambda i: te.call_pure("int32", "scale", A[i]), name="C")
    a = np.arange(8, dtype=np.int32)
    results = []
    for factor in (2, 3):
        s = te.create_schedule(C.op)
        s[C].pragma(C.op.axis[0], "import_c",
                    f"static inline int32_t scale(int32_t x) {{ return {factor} * x; }}")
        mod = aot.build(s, [A, C], target="llvm", name="f")
        out = np.zeros(8, np.int32)
        mod(a, out)
        results.append((mod, out.copy()))
    np.testing.assert_array_equal(results[0][1], 2 * a)
    np.testing.assert_array_equal(results[1][1], 3 * a)
    out = np.zeros(8, np.int32)
    results[0][0](a, out)  # the first module still calls its own helper
    np.testing.assert_array_equal(out, 2 * a)


def test_a_call_nothing_defines_is_refused_before_the_jit():
    A = te.placeholder((8,), "int32", "A")
    C = te.compute((8,), lambda i: te.call_pure("int32", "aot_nowhere", A[i]), name="C")
    mod = aot.build(te.create_schedule(C.op), [A, C], target="llvm", name="f")
    with pytest.raises(BuildError, match="function f calls aot_nowhere, which neither the llvm "
                                         "codegen nor any C code of the kernel defines"):
        mod(np.zeros(8, np.int32), np.zeros(8, np.int32))


def test_parallel_loops_are_refused_by_name():
    s, args = vadd()
    s[args[-1]].parallel(args[-1].op.axis[0])
    with pytest.raises(BuildError, match="function add: loop i is parallel: not supported yet "
                                         "by the llvm codegen"):
        aot.build(s, args, target="llvm", name="add")


@pytest.mark.parametrize("target, message", [
    ("llvm -march=rv64imac", (r"not supported yet: llvm objects for rv64imac .*; the llvm "
                              r"codegen makes objects for Arm Cortex-M cores")),
    ("llvm -mcpu=cortex-m4 -fast-math", r"not supported yet by the llvm codegen: -fast-math \("),
    ("llvm -fast-math", r"not supported yet by the llvm codegen: -fast-math \("),
    ("llvm -system-lib", r"not supported yet by the llvm codegen: -system-lib \("),
    ("llvm -mattr=+avx2", r"not supported yet by the llvm codegen: -mattr=\+avx2 \("),
    ("llvm -opt-level=5", r"-opt-level=5: the llvm codegen takes 0, 1, 2 or 3"),
])
def test_options_the_llvm_path_does_not_honour_are_refused(target, message):
    s, args = vadd()
    with pytest.raises(BuildError, match=message):
        aot.build(s, args, target=target, name="add")


@pytest.mark.parametrize("opt", [0, 3])
def test_opt_level_is_honoured(opt):
    s, args = vadd()
    mod = aot.build(s, args, target=f"llvm -opt-level={opt}", name="add")
    a = np.arange(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    mod(a, a, out)
    np.testing.assert_array_equal(out, 2 * a)
    assert mod.object_text_bytes() > 0


def test_invalid_ir_names_the_kernel_and_keeps_the_ir_in_a_file():
    text = "define i32 @k() {\nentry:\n  ret i64 0\n}\n"
    with pytest.raises(BuildError) as err:
        verify(text, "kernel model_k3 (conv2d, add)", "model_k3")
    msg = str(err.value)
    assert msg.startswith("kernel model_k3 (conv2d, add): the llvm codegen produced invalid "
                          "LLVM IR (")
    path = Path(re.search(r"the IR is in (\S+\.ll)", msg).group(1))
    assert path.read_text() == text
    assert "\n" not in msg  # one line, not the verifier's dump
    shutil.rmtree(path.parent)


def test_bools_cross_calls_of_c_functions_as_c_bools():
    A = te.placeholder((16,), "int32", "A")
    C = te.compute((16,), lambda i: te.if_then_else(
        te.call_pure("bool", "both", A[i] > 0, (A[i] % 2).equal(1)), A[i], te.const(-1)),
        name="C")
    a = np.arange(-8, 8, dtype=np.int32)
    outs = []
    for target in ("c", "llvm"):
        s = te.create_schedule(C.op)
        s[C].pragma(C.op.axis[0], "import_c",
                    "static inline _Bool both(_Bool x, _Bool y) { return x && y; }")
        out = np.zeros(16, np.int32)
        aot.build(s, [A, C], target=target, name="f")(a, out)
        outs.append(out)
    np.testing.assert_array_equal(outs[1], np.where((a > 0) & (a % 2 == 1), a, -1))
    np.testing.assert_array_equal(outs[0], outs[1])


def test_a_helper_called_with_the_wrong_types_is_refused():
    A = te.placeholder((8,), "int16", "A")
    C = te.compute((8,), lambda i: te.call_pure("int32", "aot_srdhm", A[i], A[i]), name="C")
    with pytest.raises(BuildError, match=r"function f: aot_srdhm is defined by the support "
                                         r"headers as i32 \(i32, i32\), called as "
                                         r"i32 \(i16, i16\)"):
        aot.build(te.create_schedule(C.op), [A, C], target="llvm", name="f")


def test_a_failure_inside_the_emitter_is_reported_with_the_function(monkeypatch):
    import aot.codegen.llvm as backend

    def broken(self):
        raise TypeError("cannot store i32 to i8*")

    monkeypatch.setattr(backend._FuncEmitter, "emit", broken)
    s, args = vadd()
    with pytest.raises(BuildError, match=r"^function add: the llvm codegen failed \(TypeError: "
                                         r"cannot store i32 to i8\*\); the partial IR is in "
                                         r"\S+add\.ll; please report it$") as err:
        aot.build(s, args, target="llvm", name="add")
    shutil.rmtree(Path(re.search(r"IR is in (\S+\.ll)", str(err.value)).group(1)).parent)
