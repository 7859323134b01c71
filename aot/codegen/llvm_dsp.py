"""The int8 dense row of the support headers written in LLVM IR with the Arm DSP intrinsics.

On a core with the DSP extension and without Helium (Cortex-M4, M7, M33)
objects define ``aot_dense_s8`` (``aot/kernels/dense/include/aot_dense.h``)
in IR instead of calling the header's C through a wrapper compiled by the
board's gcc (:mod:`aot.codegen.llvm`).  Each call has constant ``units`` and
``depth``; the helper is emitted for them (``internal alwaysinline``, like
:mod:`aot.codegen.llvm_fixedpoint`), with the header's two forms:

* **wide** (``depth % 4 == 0`` and more than four units): the input is
  widened one segment of 128 values at a time into a stack buffer (per four
  bytes SXTB16 of the word and of the word rotated by 8:
  ``llvm.arm.sxtb16`` of ``llvm.fshr``, which the Arm backend folds into
  ``SXTB16 ..., ROR #8``), then every block of four units reads each
  widened pair once for four rows of weights, two ``llvm.arm.smlad`` per
  row and word; later segments add to the sums already in ``acc``;
* **plain**: the same blocks of four units widening the input word in the
  loop; the depth's last ``% 4`` bytes are plain multiply-adds.

The units' last ``% 4`` rows are single dot products.  The sums wrap like
the header's (SMLAD does not saturate; int32 addition modulo 2^32 does not
depend on the order), so the results are the C path's bit for bit (the QEMU
model tests compare them).  On the M55 the header's Helium helpers stay C.
"""

from __future__ import annotations

from llvmlite import ir

I8 = ir.IntType(8)
I32 = ir.IntType(32)
PTR = ir.PointerType()

#: int8 values per widened segment (the header's 2 * AOT_DENSE_WIDE_WORDS).
SEGMENT = 128


def available(machine) -> bool:
    """Whether objects for ``machine`` take the IR helpers (DSP, no Helium)."""
    return (machine is not None and "+dsp" in machine.features
            and not any(f.startswith("+mve") for f in machine.features))


def define_dense(module: ir.Module, units: int, depth: int) -> ir.Function:
    """``i32 aot_dense_s8.<units>.<depth>(ptr acc, ptr x, ptr w)`` in ``module``."""
    name = f"aot_dense_s8.{units}.{depth}"
    if name in module.globals:
        return module.globals[name]
    fn = ir.Function(module, ir.FunctionType(I32, [PTR, PTR, PTR]), name)
    fn.linkage = "internal"
    fn.attributes.add("alwaysinline")
    fn.attributes.add("nounwind")
    _Dense(module, fn, units, depth).emit()
    return fn


class _Dense:
    def __init__(self, module, fn, units: int, depth: int):
        self.module, self.fn, self.units, self.depth = module, fn, units, depth
        self.acc, self.x, self.w = fn.args
        self.b = ir.IRBuilder(fn.append_basic_block("entry"))
        self.smlad = _declare(module, "llvm.arm.smlad", [I32, I32, I32])
        self.sxtb16 = _declare(module, "llvm.arm.sxtb16", [I32])
        self.fshr = _declare(module, "llvm.fshr.i32", [I32, I32, I32])

    # -- small pieces ------------------------------------------------------------------
    def add(self, a, b):
        return self.b.add(a, b, flags=("nsw",))

    def load_word(self, ptr, index):
        """An unaligned word (one LDR on these cores)."""
        return self.b.load(self.b.gep(ptr, [index], source_etype=I8), typ=I32, align=1)

    def load_byte(self, ptr, index):
        return self.b.sext(self.b.load(self.b.gep(ptr, [index], source_etype=I8), typ=I8,
                                       align=1), I32)

    def halves(self, word):
        """SXTB16 of the even bytes and of the odd ones (rotated by 8)."""
        odd = self.b.call(self.fshr, [word, word, I32(8)])
        return self.b.call(self.sxtb16, [word]), self.b.call(self.sxtb16, [odd])

    def mac2(self, s, xe, xo, word):
        we, wo = self.halves(word)
        return self.b.call(self.smlad, [xo, wo, self.b.call(self.smlad, [xe, we, s])])

    def acc_ptr(self, u):
        return self.b.gep(self.acc, [u], source_etype=I32)

    def loop(self, start, end, step, carried, body, name):
        """``for (i = start; i < end; i += step)`` with values carried across
        iterations; ``body(i, values)`` returns their next values.  Not unrolled:
        the header's loops are not either, and unrolled the blocks of four
        rows outgrow the registers.  Returns the carried values after it."""
        start, end = _value(start), _value(end)
        b = self.b
        pre = b.block
        head = self.fn.append_basic_block(f"{name}.head")
        body_block = self.fn.append_basic_block(f"{name}.body")
        done = self.fn.append_basic_block(f"{name}.done")
        b.branch(head)
        b.position_at_end(head)
        i = b.phi(I32, name=name)
        i.add_incoming(start, pre)
        phis = []
        for v in carried:
            p = b.phi(v.type)
            p.add_incoming(v, pre)
            phis.append(p)
        b.cbranch(b.icmp_signed("<", i, end), body_block, done)
        b.position_at_end(body_block)
        nexts = body(i, phis)
        i.add_incoming(self.add(i, I32(step)), b.block)
        for p, v in zip(phis, nexts):
            p.add_incoming(v, b.block)
        latch = b.branch(head)
        latch.set_metadata("llvm.loop", _no_unroll(self.module))
        b.position_at_end(done)
        return phis

    def pointer_loop(self, start, end, step: int, carried, body, name):
        """:meth:`loop` counted by a byte pointer from ``start`` to ``end``."""
        b = self.b
        pre = b.block
        head = self.fn.append_basic_block(f"{name}.head")
        body_block = self.fn.append_basic_block(f"{name}.body")
        done = self.fn.append_basic_block(f"{name}.done")
        b.branch(head)
        b.position_at_end(head)
        p = b.phi(PTR, name=name)
        p.add_incoming(start, pre)
        phis = []
        for v in carried:
            phi = b.phi(v.type)
            phi.add_incoming(v, pre)
            phis.append(phi)
        b.cbranch(b.icmp_unsigned("!=", p, end), body_block, done)
        b.position_at_end(body_block)
        nexts = body(p, phis)
        p.add_incoming(b.gep(p, [I32(step)], source_etype=I8), b.block)
        for phi, v in zip(phis, nexts):
            phi.add_incoming(v, b.block)
        latch = b.branch(head)
        latch.set_metadata("llvm.loop", _no_unroll(self.module))
        b.position_at_end(done)
        return phis

    # -- the helper ----------------------------------------------------------------------
    def emit(self) -> None:
        units, depth = self.units, self.depth
        if depth % 4 == 0 and units > 4:
            wide = self.b.alloca(ir.ArrayType(I32, SEGMENT // 2))
            wide.align = 8
            wide.type = PTR  # an opaque pointer, indexed by words
            full, rest = divmod(depth, SEGMENT)
            if full:
                def segment(d0, _):
                    self.wide_segment(wide, d0, SEGMENT, first=self.b.icmp_signed(
                        "==", d0, I32(0)))
                    return []
                self.loop(0, full * SEGMENT, SEGMENT, [], segment, "d0")
            if rest:
                self.wide_segment(wide, I32(full * SEGMENT), rest,
                                  first=ir.Constant(ir.IntType(1), int(full == 0)))
        else:
            self.plain()
        self.b.ret(I32(0))

    def start_sums(self, u, n, first):
        """The sums of rows u..u+n-1 before a segment: 0 for the first, else acc."""
        b = self.b
        return [b.select(first, I32(0), b.load(self.acc_ptr(self.add(u, I32(r))), typ=I32,
                                               align=4)) for r in range(n)]

    def store_sums(self, u, sums):
        for r, s in enumerate(sums):
            self.b.store(s, self.acc_ptr(self.add(u, I32(r))), align=4)

    def wide_segment(self, wide, d0, seg: int, first) -> None:
        """One segment of ``seg`` inputs from ``d0``: widen it, then every row."""
        b, depth = self.b, self.depth
        xs = b.gep(self.x, [d0], source_etype=I8)

        def widen(i, _):
            even, odd = self.halves(self.load_word(xs, i))
            pair = b.lshr(i, I32(1))
            b.store(even, b.gep(wide, [pair], source_etype=I32),
                    align=8)
            b.store(odd, b.gep(wide, [self.add(pair, I32(1))], source_etype=I32), align=4)
            return []

        self.loop(0, seg, 4, [], widen, "widen")

        def rows(u, n):
            row = b.gep(self.w, [self.add(b.mul(u, I32(depth), flags=("nsw",)), d0)],
                        source_etype=I8)

            # The weights' pointer counts the loop and the widened input's
            # follows it (the header's post-incremented LDR and LDRD); the other
            # rows are at constant offsets from the first.
            def words(wp, carried):
                xp, *sums = carried
                xe = b.load(xp, typ=I32, align=8)
                xo = b.load(b.gep(xp, [I32(1)], source_etype=I32), typ=I32, align=4)
                sums = [self.mac2(s, xe, xo, self.load_word(wp, I32(r * depth)))
                        for r, s in enumerate(sums)]
                return [b.gep(xp, [I32(2)], source_etype=I32), *sums]

            end = b.gep(row, [I32(seg)], source_etype=I8)
            _, *sums = self.pointer_loop(row, end, 4, [wide, *self.start_sums(u, n, first)],
                                         words, "i")
            self.store_sums(u, sums)

        blocks = self.units - self.units % 4

        def block(u, _):
            rows(u, 4)
            return []

        if blocks:
            self.loop(0, blocks, 4, [], block, "u4")
        for u in range(blocks, self.units):
            rows(I32(u), 1)

    def plain(self) -> None:
        """Blocks of four rows widening the input word in the loop; byte tails."""
        b, depth = self.b, self.depth
        words_end = depth - depth % 4

        def rows(u, n):
            row = b.gep(self.w, [b.mul(u, I32(depth), flags=("nsw",))], source_etype=I8)

            def words(i, sums):
                xe, xo = self.halves(self.load_word(self.x, i))
                return [self.mac2(s, xe, xo, self.load_word(row, self.add(i, I32(r * depth))))
                        for r, s in enumerate(sums)]

            def tail(i, sums):
                xi = self.load_byte(self.x, i)
                return [b.add(s, b.mul(xi, self.load_byte(row, self.add(i, I32(r * depth)))))
                        for r, s in enumerate(sums)]

            sums = [I32(0)] * n
            if words_end:
                sums = self.loop(0, words_end, 4, sums, words, "i4")
            if depth % 4:
                sums = self.loop(words_end, depth, 1, sums, tail, "i1")
            self.store_sums(u, sums)

        blocks = self.units - self.units % 4

        def block(u, _):
            rows(u, 4)
            return []

        if blocks:
            self.loop(0, blocks, 4, [], block, "u4")
        for u in range(blocks, self.units):
            rows(I32(u), 1)


def _value(v):
    return I32(v) if isinstance(v, int) else v


def _declare(module: ir.Module, name: str, args) -> ir.Function:
    if name in module.globals:
        return module.globals[name]
    return ir.Function(module, ir.FunctionType(I32, args), name)


def _no_unroll(module: ir.Module):
    """``!{!self, !{"llvm.loop.unroll.disable"}}``: one loop's own metadata node."""
    opt = module.add_metadata([ir.MetaDataString(module, "llvm.loop.unroll.disable")])
    loop_id = ir.values.MDValue(module, [opt], name=str(len(module.metadata)))
    loop_id.operands = (loop_id, opt)
    return loop_id
