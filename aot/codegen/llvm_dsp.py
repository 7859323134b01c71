"""The int8 depthwise row of the support headers written in LLVM IR with the Arm DSP intrinsics.

On an Armv7E-M core with the DSP extension (Cortex-M4, M7; :func:`available`)
objects define ``aot_depthwise_s8`` (``aot/kernels/conv2d/include/aot_conv2d.h``)
in IR instead of calling the header's C through a wrapper compiled by the
board's gcc (:mod:`aot.codegen.llvm`).  Each call has constant shapes; the
helper is emitted for them once per object (``internal noinline``: KWS's
depthwise kernels call their shape from three places, and inlining it at
each made 1.6x the code for 0.1 % fewer instructions), with the header's
algorithm: channels innermost, four per word; two pixels
at a time share each widened weight word; ``llvm.arm.sxtb16`` (of
``llvm.fshr`` for the odd bytes, which the Arm backend folds into
``SXTB16 ..., ROR #8``) splits the words, ``llvm.arm.smlabb`` and
``llvm.arm.smlatt`` accumulate each channel in its own sum; the last
``% 4`` channels are plain multiply-adds.  The taps' loops are unrolled
when they have at most eight iterations (the header's ``GCC unroll 8``):
left to LLVM, the loop over the kernel rows stayed a loop whose eight sums
went through the stack.

The sums wrap like the header's (int32 addition modulo 2^32 does not depend
on the order), so the results are the C path's bit for bit (the QEMU model
tests compare them).  Other cores keep the header's C (Helium on the M55).
"""

from __future__ import annotations

from llvmlite import ir

I8 = ir.IntType(8)
I32 = ir.IntType(32)
PTR = ir.PointerType()

#: Taps loops of at most this many iterations are unrolled (the header's ``GCC unroll 8``).
UNROLL = 8

#: The shape arguments of ``aot_depthwise_s8`` after its three pointers, in order.
DEPTHWISE_SHAPE = ("acc_ps", "x_rs", "x_cs", "npix", "c_n", "kh_n", "kw_n", "sw", "dh", "dw")


def available(machine) -> bool:
    """Whether objects for ``machine`` take the IR row: Armv7E-M with the DSP
    extension (Cortex-M4, M7), where it measured faster than gcc's helper on
    KWS and VWW.  On the Cortex-M33 (Armv8-M) it took 0.3 % fewer instructions
    on KWS but 0.6 % more on VWW, so that core keeps gcc's, as Helium cores
    and cores without DSP do."""
    return (machine is not None and machine.triple.startswith("thumbv7em")
            and "+dsp" in machine.features)


def define_depthwise(module: ir.Module, shape: dict[str, int]) -> ir.Function:
    """``i32 aot_depthwise_s8.<shape>(ptr acc, ptr x, ptr w)`` in ``module``."""
    name = "aot_depthwise_s8." + ".".join(str(shape[k]) for k in DEPTHWISE_SHAPE)
    if name in module.globals:
        return module.globals[name]
    fn = ir.Function(module, ir.FunctionType(I32, [PTR, PTR, PTR]), name)
    fn.linkage = "internal"
    fn.attributes.add("noinline")
    fn.attributes.add("nounwind")
    _Depthwise(module, fn, shape).emit()
    return fn


class _Depthwise:
    def __init__(self, module, fn, shape: dict[str, int]):
        self.module, self.fn, self.s = module, fn, shape
        self.acc, self.x, self.w = fn.args
        self.b = ir.IRBuilder(fn.append_basic_block("entry"))
        self.sxtb16 = _declare(module, "llvm.arm.sxtb16", [I32])
        self.smlabb = _declare(module, "llvm.arm.smlabb", [I32, I32, I32])
        self.smlatt = _declare(module, "llvm.arm.smlatt", [I32, I32, I32])
        self.fshr = _declare(module, "llvm.fshr.i32", [I32, I32, I32])

    def add(self, a, b):
        return self.b.add(a, b, flags=("nsw",))

    def at(self, ptr, index, elem=I8):
        return self.b.gep(ptr, [index if isinstance(index, ir.Value) else I32(index)],
                          source_etype=elem)

    def load_word(self, ptr, index):
        """An unaligned word (one LDR on these cores)."""
        return self.b.load(self.at(ptr, index), typ=I32, align=1)

    def load_byte(self, ptr, index):
        return self.b.sext(self.b.load(self.at(ptr, index), typ=I8, align=1), I32)

    def halves(self, word):
        """SXTB16 of the even bytes and of the odd ones (rotated by 8)."""
        odd = self.b.call(self.fshr, [word, word, I32(8)])
        return self.b.call(self.sxtb16, [word]), self.b.call(self.sxtb16, [odd])

    def loop(self, start: int, end: int, step: int, carried, body, name):
        """``for (i = start; i < end; i += step)`` with values carried across
        iterations; ``body(i, values)`` returns their next values (LLVM may
        unroll it, as GCC does the header's loops).  Returns the values after."""
        b = self.b
        if start >= end:
            return list(carried)
        pre = b.block
        head = self.fn.append_basic_block(f"{name}.head")
        body_block = self.fn.append_basic_block(f"{name}.body")
        done = self.fn.append_basic_block(f"{name}.done")
        b.branch(head)
        b.position_at_end(head)
        i = b.phi(I32, name=name)
        i.add_incoming(I32(start), pre)
        phis = []
        for v in carried:
            p = b.phi(v.type)
            p.add_incoming(v, pre)
            phis.append(p)
        b.cbranch(b.icmp_signed("<", i, I32(end)), body_block, done)
        b.position_at_end(body_block)
        nexts = body(i, phis)
        i.add_incoming(self.add(i, I32(step)), b.block)
        for p, v in zip(phis, nexts):
            p.add_incoming(v, b.block)
        b.branch(head)
        b.position_at_end(done)
        return phis

    def taps(self, sums, body):
        """The kernel's rows and columns; ``body(off, woff, sums)`` gets the
        tap's input offset and weight offset (channel 0).  A loop of up to
        eight taps is unrolled here, as the header asks GCC to (``GCC unroll
        8``), so the sums stay in registers; a longer one is an IR loop."""
        s, b = self.s, self.b

        def over(n, sums, step, name):
            if n <= UNROLL:
                for k in range(n):
                    sums = step(I32(k), sums)
                return sums
            return self.loop(0, n, 1, sums, step, name)

        def row(kh, sums):
            def col(kw, sums):
                off = self.add(b.mul(kh, I32(s["dh"] * s["x_rs"])),
                               b.mul(kw, I32(s["dw"] * s["x_cs"])))
                woff = b.mul(self.add(b.mul(kh, I32(s["kw_n"])), kw), I32(s["c_n"]))
                return body(off, woff, sums)
            return over(s["kw_n"], sums, col, "kw")
        return over(s["kh_n"], sums, row, "kh")

    def emit(self) -> None:
        s, b = self.s, self.b
        npix, c_n = s["npix"], s["c_n"]
        pairs = npix - npix % 2 if c_n >= 4 else 0
        c4 = c_n - c_n % 4
        pix = s["sw"] * s["x_cs"]

        def pair(p, _):
            xp = self.at(self.x, b.mul(p, I32(pix)))
            out = self.at(self.acc, b.mul(p, I32(s["acc_ps"])), I32)

            def group(c, _):
                wc, xc = self.at(self.w, c), self.at(xp, c)

                def mac(off, woff, sums):
                    we, wo = self.halves(self.load_word(wc, woff))
                    xe, xo = self.halves(self.load_word(xc, off))
                    ye, yo = self.halves(self.load_word(xc, self.add(off, I32(pix))))
                    s0, s1, s2, s3, t0, t1, t2, t3 = sums
                    return [b.call(self.smlabb, [xe, we, s0]), b.call(self.smlabb, [xo, wo, s1]),
                            b.call(self.smlatt, [xe, we, s2]), b.call(self.smlatt, [xo, wo, s3]),
                            b.call(self.smlabb, [ye, we, t0]), b.call(self.smlabb, [yo, wo, t1]),
                            b.call(self.smlatt, [ye, we, t2]), b.call(self.smlatt, [yo, wo, t3])]

                sums = self.taps([I32(0)] * 8, mac)
                for k in range(4):
                    b.store(sums[k], self.at(out, self.add(c, I32(k)), I32), align=4)
                    b.store(sums[4 + k], self.at(out, self.add(c, I32(s["acc_ps"] + k)), I32),
                            align=4)
                return []

            self.loop(0, c4, 4, [], group, "c4")
            self.scalar_channels(xp, out, c4, 2)
            return []

        self.loop(0, pairs, 2, [], pair, "p2")

        def single(p, _):
            xp = self.at(self.x, b.mul(p, I32(pix)))
            out = self.at(self.acc, b.mul(p, I32(s["acc_ps"])), I32)

            def group(c, _):
                wc, xc = self.at(self.w, c), self.at(xp, c)

                def mac(off, woff, sums):
                    we, wo = self.halves(self.load_word(wc, woff))
                    xe, xo = self.halves(self.load_word(xc, off))
                    s0, s1, s2, s3 = sums
                    return [b.call(self.smlabb, [xe, we, s0]), b.call(self.smlabb, [xo, wo, s1]),
                            b.call(self.smlatt, [xe, we, s2]), b.call(self.smlatt, [xo, wo, s3])]

                sums = self.taps([I32(0)] * 4, mac)
                for k in range(4):
                    b.store(sums[k], self.at(out, self.add(c, I32(k)), I32), align=4)
                return []

            self.loop(0, c4, 4, [], group, "c4")
            self.scalar_channels(xp, out, c4, 1)
            return []

        self.loop(pairs, npix, 1, [], single, "p1")
        b.ret(I32(0))

    def scalar_channels(self, xp, out, start: int, pixels: int) -> None:
        """Channels ``start..c_n`` of ``pixels`` pixels from ``xp``: plain multiply-adds."""
        s, b = self.s, self.b
        pix = s["sw"] * s["x_cs"]

        def channel(c, _):
            wc, xc = self.at(self.w, c), self.at(xp, c)

            def mac(off, woff, sums):
                wk = self.load_byte(wc, woff)
                return [b.add(t, b.mul(self.load_byte(xc, self.add(off, I32(q * pix))), wk))
                        for q, t in enumerate(sums)]

            sums = self.taps([I32(0)] * pixels, mac)
            for q, t in enumerate(sums):
                b.store(t, self.at(out, self.add(c, I32(q * s["acc_ps"])), I32), align=4)
            return []

        self.loop(start, s["c_n"], 1, [], channel, "c1")


def _declare(module: ir.Module, name: str, args) -> ir.Function:
    if name in module.globals:
        return module.globals[name]
    return ir.Function(module, ir.FunctionType(I32, args), name)
