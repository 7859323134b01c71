"""Int8 helpers of the support headers written in LLVM IR with the Arm DSP intrinsics.

On a core with the DSP extension and without Helium (Cortex-M4, M7, M33)
objects define these helpers in IR instead of calling the header's C
(:mod:`aot.codegen.llvm`'s C helper wrappers): the kernel's loop nest and
its dot products are then one LLVM function, which LLVM specialises for
the call's constant shapes when it inlines the helper (``internal
alwaysinline``, like :mod:`aot.codegen.llvm_fixedpoint`).

=================  ==========================================================
``aot_dense_s8``   ``acc[u] = x . w[u*depth ...]`` for ``units`` rows: four
                   rows at a time share each loaded input word; per four
                   bytes SXTB16 widens the even bytes and SXTB16 ROR #8 the
                   odd ones (``llvm.arm.sxtb16`` of ``llvm.fshr``, which the
                   Arm backend folds into one instruction), two
                   ``llvm.arm.smlad`` accumulate; the depth's last ``% 4``
                   bytes and the units' last ``% 4`` rows are plain
                   multiply-adds
=================  ==========================================================

The sums wrap like the header's (SMLAD does not saturate; int32 addition
modulo 2^32 does not depend on the order), so the results are the C path's
bit for bit (the QEMU model tests compare them).  On the M55 the header's
Helium helpers stay C: MVE intrinsics in IR are not written yet.
"""

from __future__ import annotations

from llvmlite import ir

I8 = ir.IntType(8)
I32 = ir.IntType(32)
PTR = ir.PointerType()


def available(machine) -> bool:
    """Whether objects for ``machine`` take these IR helpers (DSP, no Helium)."""
    return (machine is not None and "+dsp" in machine.features
            and not any(f.startswith("+mve") for f in machine.features))


def _intrinsics(module: ir.Module):
    def declare(name, ret, args):
        return module.globals.get(name) or ir.Function(module, ir.FunctionType(ret, args), name)
    return (declare("llvm.arm.smlad", I32, [I32, I32, I32]),
            declare("llvm.arm.sxtb16", I32, [I32]),
            declare("llvm.fshr.i32", I32, [I32, I32, I32]))


class _Loop:
    """``for (i = start; i + step <= end; i += step)`` (``step`` 1: ``i < end``);
    ``body(b, i)`` emits the body; ``carried`` values live across iterations
    (``body`` returns their next values).  ``.index`` after the loop is the
    first ``i`` it did not run."""

    def __init__(self, fn, b: ir.IRBuilder, start, end, step: int, carried, body, name,
                 unroll: bool = True):
        pre = b.block
        head = fn.append_basic_block(f"{name}.head")
        loop = fn.append_basic_block(f"{name}.body")
        done = fn.append_basic_block(f"{name}.done")
        b.branch(head)
        b.position_at_end(head)
        i = b.phi(I32, name=name)
        i.add_incoming(start, pre)
        phis = []
        for k, v in enumerate(carried):
            p = b.phi(v.type, name=f"{name}.c{k}")
            p.add_incoming(v, pre)
            phis.append(p)
        b.cbranch(b.icmp_signed("<=", b.add(i, I32(step), flags=("nsw",)), end), loop, done)
        b.position_at_end(loop)
        nexts = body(b, i, phis)
        i.add_incoming(b.add(i, I32(step), flags=("nsw",)), b.block)
        for p, v in zip(phis, nexts):
            p.add_incoming(v, b.block)
        latch = b.branch(head)
        if not unroll:
            latch.set_metadata("llvm.loop", _no_unroll(fn.module))
        b.position_at_end(done)
        self.index, self.values = i, phis


def _no_unroll(module: ir.Module):
    """``!{!self, !{"llvm.loop.unroll.disable"}}``: one loop's own metadata node."""
    opt = module.add_metadata([ir.MetaDataString(module, "llvm.loop.unroll.disable")])
    loop_id = ir.values.MDValue(module, [opt], name=str(len(module.metadata)))
    loop_id.operands = (loop_id, opt)
    return loop_id


def _dense(module: ir.Module, fn: ir.Function) -> None:
    smlad, sxtb16, fshr = _intrinsics(module)
    acc, x, w, units, depth = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))

    def load_byte(ptr, index):
        return b.sext(b.load(b.gep(ptr, [index], source_etype=I8), typ=I8, align=1), I32)

    def load_word(ptr, index):  # an unaligned word: one LDR on the M4
        return b.load(b.gep(ptr, [index], source_etype=I8), typ=I32, align=1)

    def halves(word):
        return (b.call(sxtb16, [word]), b.call(sxtb16, [b.call(fshr, [word, word, I32(8)])]))

    def rows(n, u):
        """Dot products of x with the n rows of w from row u: n sums."""
        bases = [b.mul(b.add(u, I32(r), flags=("nsw",)), depth, flags=("nsw",))
                 for r in range(n)]

        def words(b_, i, sums):
            xe, xo = halves(load_word(x, i))
            out = []
            for base, s in zip(bases, sums):
                we, wo = halves(load_word(w, b_.add(base, i, flags=("nsw",))))
                out.append(b_.call(smlad, [xo, wo, b_.call(smlad, [xe, we, s])]))
            return out

        # Unrolled, the four rows' words and sums outgrow the M4's registers
        # (the header keeps GCC from the same with a compiler barrier).
        quad = _Loop(fn, b, I32(0), depth, 4, [I32(0)] * n, words, "i4", unroll=False)

        def tail(b_, i, sums):
            xi = load_byte(x, i)
            return [b_.add(s, b_.mul(xi, load_byte(w, b_.add(base, i, flags=("nsw",)))))
                    for base, s in zip(bases, sums)]

        return _Loop(fn, b, quad.index, depth, 1, quad.values, tail, "i1").values

    def store_rows(b_, u, sums):
        for r, s in enumerate(sums):
            index = b_.add(u, I32(r), flags=("nsw",))
            b_.store(s, b_.gep(acc, [index], source_etype=I32), align=4)

    def blocks(b_, u, _):
        store_rows(b_, u, rows(4, u))
        return []

    four = _Loop(fn, b, I32(0), units, 4, [], blocks, "u4")

    def single(b_, u, _):
        store_rows(b_, u, rows(1, u))
        return []

    _Loop(fn, b, four.index, units, 1, [], single, "u1")
    b.ret(I32(0))


#: name -> (aot.tir dtypes of the arguments, of the result, body)
HELPERS = {
    "aot_dense_s8": (("handle", "handle", "handle", "int32", "int32"), "int32", _dense),
}


def define(module: ir.Module, name: str) -> ir.Function:
    """The helper ``name`` in ``module``, defined on first use."""
    if name in module.globals:
        return module.globals[name]
    args, _, body = HELPERS[name]
    types = [PTR if t == "handle" else I32 for t in args]
    fn = ir.Function(module, ir.FunctionType(I32, types), name)
    fn.linkage = "internal"
    fn.attributes.add("alwaysinline")
    fn.attributes.add("nounwind")
    body(module, fn)
    return fn
