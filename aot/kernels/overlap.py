"""How far a kernel's output may overlap one of its inputs, proved from its loop nest.

A kernel that reads its input ``x`` front to back and writes its output
``y`` front to back no longer needs the first rows of ``x`` once it has
written the first rows of ``y``: ``y`` may start a little before ``x`` and
grow over the bytes ``x`` is done with (MCUNet and TinyEngine do this by
hand for each kernel).  :func:`overlap_limit` finds, for one lowered loop
nest (TIR, after every schedule and tensorization), the largest shift
``D`` in bytes such that placing ``y`` at ``address(x) + d`` is safe for
every ``d <= D``.  The memory planner then lets ``y`` overlap ``x`` within
that limit (:mod:`aot.executor.memory`).

The proof runs the loop nest's *addresses*, not its arithmetic: every
statement instance gets a time (its position in the execution order), each
byte ``i`` of ``x`` the time ``R[i]`` of its last read and each byte ``o``
of ``y`` the time ``W[o]`` of its first write.  With ``y`` at ``x + d``,
byte ``o`` of ``y`` lands on byte ``o + d`` of ``x``; the placement is safe
when no byte of ``x`` is read after the byte of ``y`` on top of it was
written: ``R[o + d] < W[o]`` for every ``o``.  With
``m(o) = min {i : R[i] > W[o]}`` (the first byte of ``x`` still needed
when ``o`` is written, from a prefix maximum of ``R``), every
``d < min_o (m(o) - o)`` is safe, so ``D = min_o (m(o) - o) - 1``.

What counts as a read or a write, and when:

* a load of ``x`` in a statement is a read at that statement; a store to
  ``y`` a write just after the statement's reads (C evaluates the value
  first);
* an extern call (a tensorized helper such as ``aot_conv_s8``) reads and
  writes whole regions: ``access_ptr`` carries the intrinsic's view of the
  buffer (shape and strides), so its region is exact.  Inside a call the
  order is unknown, so its writes are taken to come before its reads
  (a call that reads ``x`` where it writes ``y`` gets no overlap there),
  except for the helpers of :data:`READS_FIRST` (and the fused blocked row
  over a widened input), which read all their inputs before their first
  write.  The fused convolution rows that widen their input
  (``aot_conv_requant_wide_s8``, ``_patch_s8`` and ``_long_patch_s8``,
  :data:`aot.kernels.conv2d.paths.PIXEL_ORDERED`) are finer: they write
  each output pixel only after reading that pixel's input window (a chunk
  of pixels at a time, include/aot_conv2d.h; not the scratch fallback,
  which reads a window again after writing part of its pixel), so each
  counts as one read of window ``p`` then one write of pixel ``p`` per
  pixel, in pixel order (the reads of later windows taken as late as that
  order allows), as the two calls it replaces allowed row by row;
* a load inside either branch of a ``Select`` counts whether or not the
  branch is taken (more reads only make ``D`` smaller); indices outside
  the buffer are guarded loads that never run.

Nothing is proved (``None``) when ``x`` is written, ``x`` or ``y`` is read
in a loop bound or a condition, an index depends on loaded data, a stride
is not a constant, or the nest runs more than :data:`MAX_EVENTS` statement
instances (the proof would cost more than it saves).  Loops are expanded
with numpy, one array per loop level, so the nests of the shared models
take milliseconds.
"""

from __future__ import annotations

import numpy as np

from aot.kernels.conv2d.blocked import patch_chunk, patch_length
from aot.kernels.conv2d.fuse import BLOCK_FUSED_CALL, PATCH_FUSED_CALL
from aot.kernels.conv2d.paths import PIXEL_ORDERED
from aot.tir import expr as E
from aot.tir import stmt as S
from aot.tir.functor import walk

#: Helpers whose C reads every input region before it writes any output
#: (dense's fused chunk helper widens its whole input first: dense.fuse).
READS_FIRST = frozenset({"aot_dense_packed_requant_s8"})

#: The fused blocked row (aot_block_requant_s8) reads its input first when it
#: widens it first: its ``xw`` argument (conv2d/include/aot_block.h); the
#: fused patch row when its pixels are one chunk: ``npix, nch, P, O, KH, KWC,
#: steps, xw, ww`` from argument 8.
_BLOCK_XW_ARG = 13
_PATCH_ARGS = 8


def _reads_first(value) -> bool:
    """The call reads every input region before its first write (:data:`READS_FIRST`,
    a fused blocked row over a widened input, or over one chunk of patches)."""
    if not isinstance(value, E.Call):
        return False
    if value.name == BLOCK_FUSED_CALL:
        xw = value.args[_BLOCK_XW_ARG]
        return isinstance(xw, E.IntImm) and xw.value == 1
    if value.name == PATCH_FUSED_CALL:
        args = value.args[_PATCH_ARGS:_PATCH_ARGS + 9]
        if not all(isinstance(a, E.IntImm) for a in args):
            return False
        npix, _, p, _, kh, kwc, _, _, ww = (a.value for a in args)
        return patch_chunk(npix, p, patch_length(kh * kwc, ww)) >= npix
    return value.name in READS_FIRST

#: Statement instances beyond which the proof gives up (no overlap).
MAX_EVENTS = 4_000_000

_BYTES = {"bool": 1, "int8": 1, "uint8": 1, "int16": 2, "int32": 4, "int64": 8, "float32": 4}


class _GiveUp(Exception):
    pass


def overlap_limit(func: S.PrimFunc, x: S.Buffer, y: S.Buffer) -> int | None:
    """The largest ``D`` (bytes) such that ``y`` may start at ``x``'s address
    plus any ``d <= D``, or None when the loop nest does not allow a proof."""
    try:
        trace = _Trace(x, y)
        trace.visit(func.body, _Domain.unit())
        return trace.limit()
    except _GiveUp:
        return None


class _Domain:
    """The statement instances under the current loops: one value array per
    loop variable and one digit array per level of the execution order."""

    def __init__(self, env: dict, digits: list, n: int):
        self.env, self.digits, self.n = env, digits, n

    @classmethod
    def unit(cls) -> _Domain:
        return cls({}, [], 1)

    def take(self, sel) -> _Domain:
        env = {k: v[sel] for k, v in self.env.items()}
        digits = [d if np.isscalar(d) else d[sel] for d in self.digits]
        n = int(np.count_nonzero(sel)) if sel.dtype == bool else len(sel)
        return _Domain(env, digits, n)

    def repeat(self, times: int) -> _Domain:
        """Each instance ``times`` times in a row: ``take`` of
        ``repeat(arange(n), times)``, without the gather."""
        env = {k: np.repeat(v, times) for k, v in self.env.items()}
        digits = [d if np.isscalar(d) else np.repeat(d, times) for d in self.digits]
        return _Domain(env, digits, self.n * times)


class _Trace:
    def __init__(self, x: S.Buffer, y: S.Buffer):
        self.x, self.y = x, y
        self.xd, self.yd = id(x.data), id(y.data)
        self.events: list[tuple[list, int, np.ndarray, bool]] = []  # digits, slot, bytes, read
        self.count = 0

    # -- statements ---------------------------------------------------------------------
    def visit(self, s, dom: _Domain) -> None:
        if s is None or dom.n == 0:
            return
        if isinstance(s, S.SeqStmt):
            for k, part in enumerate(s.seq):
                self.visit(part, _Domain(dom.env, [*dom.digits, k], dom.n))
        elif isinstance(s, S.For):
            self._guard(s.min, s.extent)
            self.visit(s.body, self._loop(s, dom))
        elif isinstance(s, S.IfThenElse):
            self._guard(s.cond)
            mask = np.broadcast_to(np.asarray(self.eval(s.cond, dom), dtype=bool), (dom.n,))
            self.visit(s.then_case, dom.take(mask))
            self.visit(s.else_case, dom.take(~mask))
        elif isinstance(s, S.Allocate):
            self.visit(s.body, dom)
        elif isinstance(s, S.Store):
            if id(s.buffer.data) == self.xd:
                raise _GiveUp
            self._reads(dom, 0, s.value, s.index)
            if id(s.buffer.data) == self.yd:
                self._add(dom, 1, self._elements(self.eval(s.index, dom), dom), self.y, read=False)
        elif isinstance(s, S.Evaluate) and _pixel_ordered(s.value):
            self._pixels(s.value, dom)
        elif isinstance(s, S.Evaluate):
            reads_first = _reads_first(s.value)
            for n in walk(s.value):
                if isinstance(n, E.AccessPtr) and id(n.buffer.data) in (self.xd, self.yd):
                    mine = id(n.buffer.data) == self.yd
                    if not mine and n.mode != "r":
                        raise _GiveUp
                    if mine and "w" not in n.mode:
                        continue
                    region = self._region(n, dom)
                    slot = (1 if mine else 0) if reads_first else (0 if mine else 1)
                    self._add(dom, slot, region, n.buffer, read=not mine)
            self._reads(dom, 1, s.value)
        else:
            raise _GiveUp

    def _pixels(self, call: E.Call, dom: _Domain) -> None:
        """``aot_conv_requant_wide_s8(y, y_ps, x, x_rs, w, rows, npix, oc, kh, kw,
        c, sw, ...)`` (or ``_patch_s8``, ``_long_patch_s8``) pixel by pixel: at sub-step ``p`` its
        reads of x's columns ``p*sw .. p*sw + kw_span - 1`` (every window row
        and channel), then its write of y's pixel ``p``."""
        y, y_ps, x = call.args[0], _const(call.args[1]), call.args[2]
        npix, oc, sw = _const(call.args[6]), _const(call.args[7]), _const(call.args[11])
        for n in walk(call):
            if isinstance(n, E.AccessPtr) and id(n.buffer.data) in (self.xd, self.yd) and (
                    n is not x and n is not y or n.mode != ("r" if n is x else "w")):
                raise _GiveUp  # x or y reached otherwise than as the two row operands
            if isinstance(n, E.Load) and id(n.buffer.data) in (self.xd, self.yd):
                raise _GiveUp
        reads = id(x.buffer.data) == self.xd
        writes = id(y.buffer.data) == self.yd
        if reads:
            shape = [_const(d) for d in x.buffer.shape]
            strides = [_const(d) for d in x.buffer.strides]
            span = shape[1] - (npix - 1) * sw  # columns of one pixel's window
            base = self._elements(self.eval(x.offset, dom), dom)
        if writes:
            ybase = self._elements(self.eval(y.offset, dom), dom)
        for p in range(npix):
            digits = [*dom.digits, p]
            step = _Domain(dom.env, digits, dom.n)
            if reads:
                grid = np.zeros(1, dtype=np.int64)
                for extent, stride, first in zip((shape[0], span, shape[2]), strides,
                                                 (0, p * sw, 0)):
                    grid = (grid[:, None] + (first + np.arange(extent)) * stride).ravel()
                self._add(step, 0, base + grid[None, :], x.buffer, read=True)
            if writes:
                pixel = ybase + p * y_ps + np.arange(oc, dtype=np.int64)[None, :]
                self._add(step, 1, pixel, y.buffer, read=False)

    def _loop(self, s: S.For, dom: _Domain) -> _Domain:
        lo = np.broadcast_to(np.asarray(self.eval(s.min, dom), dtype=np.int64), (dom.n,))
        ext = np.broadcast_to(np.asarray(self.eval(s.extent, dom), dtype=np.int64), (dom.n,))
        ext = np.maximum(ext, 0)
        total = int(ext.sum())
        self.count += total
        if self.count > MAX_EVENTS:
            raise _GiveUp
        if (ext == ext[0]).all():  # the usual rectangular nest: repeat, no gather
            within = np.tile(np.arange(ext[0], dtype=np.int64), dom.n)
            inner = dom.repeat(int(ext[0]))
            inner.env[s.var] = np.repeat(lo, ext[0]) + within
        else:
            owner = np.repeat(np.arange(dom.n), ext)
            within = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(ext) - ext, ext)
            inner = dom.take(owner)
            inner.env[s.var] = lo[owner] + within
        inner.digits.append(within)
        return inner

    def _guard(self, *exprs) -> None:
        for e in exprs:
            for n in walk(e):
                if isinstance(n, (E.Load, E.AccessPtr)) and id(n.buffer.data) in (self.xd,
                                                                                  self.yd):
                    raise _GiveUp

    def _reads(self, dom: _Domain, slot: int, *exprs) -> None:
        for e in exprs:
            for n in walk(e):
                if isinstance(n, E.Load) and id(n.buffer.data) == self.xd:
                    self._add(dom, slot, self._elements(self.eval(n.index, dom), dom), self.x,
                              read=True)

    # -- addresses ----------------------------------------------------------------------
    def _elements(self, index, dom: _Domain) -> np.ndarray:
        index = np.asarray(index, dtype=np.int64)
        if index.ndim == 0:
            index = np.broadcast_to(index, (dom.n,))
        return index.reshape(dom.n, -1)

    def _region(self, ptr: E.AccessPtr, dom: _Domain) -> np.ndarray:
        start = self._elements(self.eval(ptr.offset, dom), dom)
        shape = [_const(d) for d in ptr.buffer.shape]
        strides = [_const(d) for d in ptr.buffer.strides]
        grid = np.zeros(1, dtype=np.int64)
        for extent, stride in zip(shape, strides):
            grid = (grid[:, None] + np.arange(extent, dtype=np.int64)[None, :] * stride).ravel()
        return start + grid[None, :]

    def _add(self, dom: _Domain, slot: int, elements: np.ndarray, buf: S.Buffer,
             read: bool) -> None:
        size = _BYTES.get(E.element(buf.dtype))
        if size is None:
            raise _GiveUp
        self.events.append((list(dom.digits), slot, elements, read, size))

    def limit(self) -> int | None:
        depth = max((len(d) for d, *_ in self.events), default=0)
        radix = [1] * depth
        for digits, *_ in self.events:
            for level, d in enumerate(digits):
                top = int(d) if np.isscalar(d) else int(d.max(initial=0))
                radix[level] = max(radix[level], top + 1)
        weights, w = [0] * depth, 2
        for level in reversed(range(depth)):
            weights[level] = w
            w *= radix[level]
        if w >= 2 ** 62:
            return None
        nx, ny = _nbytes(self.x), _nbytes(self.y)
        last_read = np.full(nx, -1, dtype=np.int64)
        first_write = np.full(ny, np.iinfo(np.int64).max, dtype=np.int64)
        for digits, slot, elements, read, size in self.events:
            n = elements.shape[0]
            time = np.full(n, slot, dtype=np.int64)
            for level, d in enumerate(digits):
                time += np.asarray(d, dtype=np.int64) * weights[level]
            where = (elements[..., None] * size + np.arange(size)).reshape(n, -1)
            when = np.broadcast_to(time[:, None], where.shape)
            table, limit = (last_read, nx) if read else (first_write, ny)
            keep = (where >= 0) & (where < limit)  # guarded loads never run out of range
            if read:
                np.maximum.at(table, where[keep], when[keep])
            else:
                np.minimum.at(table, where[keep], when[keep])
        written = np.nonzero(first_write != np.iinfo(np.int64).max)[0]
        if written.size == 0:
            return None
        needed_from = np.searchsorted(np.maximum.accumulate(last_read),
                                      first_write[written], side="right")
        return int((needed_from - written).min()) - 1

    # -- index arithmetic ---------------------------------------------------------------
    def eval(self, e, dom: _Domain):
        if isinstance(e, E.IntImm):
            return e.value
        if isinstance(e, E.Var):
            if e not in dom.env:
                raise _GiveUp
            return dom.env[e]
        if isinstance(e, E.Binary):
            return _BINARY[e.op](self.eval(e.a, dom), self.eval(e.b, dom))
        if isinstance(e, E.Not):
            return np.logical_not(self.eval(e.a, dom))
        if isinstance(e, E.Select):
            return np.where(self.eval(e.cond, dom), self.eval(e.t, dom), self.eval(e.f, dom))
        if isinstance(e, E.Cast) and E.element(e.dtype) in ("int32", "int64", "bool"):
            return self.eval(e.value, dom)
        if isinstance(e, E.Ramp):
            base = _per_instance(self.eval(e.base, dom), dom)
            stride = _per_instance(self.eval(e.stride, dom), dom)
            return base[:, None] + stride[:, None] * np.arange(e.lanes)
        if isinstance(e, E.Broadcast):
            value = _per_instance(self.eval(e.value, dom), dom)
            return np.broadcast_to(value[:, None], (dom.n, e.lanes))
        if isinstance(e, E.Call) and e.name == "likely" and len(e.args) == 1:
            return self.eval(e.args[0], dom)
        raise _GiveUp  # a loaded value, a float, an unknown call: not an address


def _pixel_ordered(value) -> bool:
    """An extern call whose reads and writes :meth:`_Trace._pixels` orders per pixel."""
    return isinstance(value, E.Call) and value.name in PIXEL_ORDERED


def _per_instance(value, dom: _Domain) -> np.ndarray:
    value = np.asarray(value)
    if value.ndim != (0 if value.ndim == 0 else 1):
        raise _GiveUp  # a vector of vectors
    return np.broadcast_to(value, (dom.n,))


def _const(e) -> int:
    if isinstance(e, E.IntImm):
        return e.value
    if isinstance(e, int):
        return e
    raise _GiveUp


def _nbytes(buf: S.Buffer) -> int:
    n = buf.size()
    if n is None:
        raise _GiveUp
    return n * _BYTES[E.element(buf.dtype)]


def _trunc_div(a, b):
    q = np.floor_divide(a, b)
    return np.where((np.remainder(a, b) != 0) & ((np.asarray(a) < 0) != (np.asarray(b) < 0)),
                    q + 1, q)


def _trunc_mod(a, b):
    return a - _trunc_div(a, b) * b


_BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply,
    "div": _trunc_div, "mod": _trunc_mod,
    "floordiv": np.floor_divide, "floormod": np.remainder,
    "min": np.minimum, "max": np.maximum,
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
    "gt": np.greater, "ge": np.greater_equal,
    "and": np.logical_and, "or": np.logical_or,
    "shl": np.left_shift, "shr": np.right_shift,
    "bitand": np.bitwise_and, "bitor": np.bitwise_or, "bitxor": np.bitwise_xor,
}
