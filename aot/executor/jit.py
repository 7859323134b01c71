"""Run a model compiled for the ``llvm`` target on this machine.

The kernels come from one :class:`aot.codegen.llvm.LLVMModule` compiled by MCJIT
(with the support headers' helpers as bitcode: no C compiler runs); the entry
sequence is the model's :class:`~aot.executor.codegen.EntryProgram`, the same
data the C entry function is printed from, run here step by step on one numpy
workspace laid out by the memory plan (so the plan, the in-place pairs, views, copies and state are
exercised exactly as in the C).  State arrays live as long as the
:class:`JitModel` and start at their zero points, as the C's ``P_reset`` sets
them.
"""

from __future__ import annotations

import ctypes

import numpy as np

from aot.codegen.c import NP_TYPES
from aot.errors import BuildError
from aot.executor.codegen import (Arg, BandRows, Copy, EntryProgram, KernelCall, Note,
                                  PatchFill, PatchLoop, PatchWindow, StreamLoop)

__all__ = ["JitModel"]


class JitModel:
    """A compiled model's entry program over JIT-compiled kernels."""

    def __init__(self, program: EntryProgram, kernels, module) -> None:
        self.program = program
        self.kernels = list(kernels)
        # The functions point into code that the engine owns and frees when
        # collected: hold it as long as this model may call them.
        self._owners = (module,)
        self.functions = [module.function(k.name) for k in self.kernels]
        lay = program.layout
        raw = np.zeros(max(lay.workspace_bytes, 1) + lay.alignment, np.uint8)
        skip = -raw.ctypes.data % lay.alignment
        self.workspace = raw[skip:skip + max(lay.workspace_bytes, 1)]
        self._raw = raw
        self.states = [np.empty(max(s.tensor.type.size, 1), NP_TYPES[s.tensor.dtype])
                       for s in program.states]
        self.constants = [np.ascontiguousarray(np.asarray(c.tensor.data).reshape(-1),
                                               NP_TYPES[c.tensor.dtype])
                          for c in program.constants]
        self.reset()

    def reset(self) -> None:
        """State back to its start values (the model's, else the zero points),
        as the C's ``P_reset``."""
        for arr, s in zip(self.states, self.program.states):
            start = s.start_values
            arr[...] = s.zero if start is None else start.reshape(-1)

    def run(self, inputs) -> list[np.ndarray]:
        """One invocation: ``inputs`` in graph order; the outputs (new arrays)."""
        ins = [np.ascontiguousarray(x, dtype=NP_TYPES[p.tensor.dtype]).reshape(p.dims)
               for x, p in zip(inputs, self.program.inputs)]
        outs = [np.empty(p.dims, NP_TYPES[p.tensor.dtype]) for p in self.program.outputs]
        base = {"input": [a.ctypes.data for a in ins], "output": [a.ctypes.data for a in outs],
                "state": [a.ctypes.data for a in self.states],
                "constant": [a.ctypes.data for a in self.constants]}
        ws = self.workspace.ctypes.data

        def address(arg: Arg) -> int:
            ref = arg.ref
            return ws + ref.index if ref.space == "workspace" else base[ref.space][ref.index]

        def copy(c: Copy) -> None:
            dst, src = address(c.dst), address(c.src)
            if not (c.unless_same and dst == src):
                ctypes.memmove(dst, src, c.nbytes)

        for c in self.program.prologue:
            copy(c)
        for step in self.program.steps:
            if isinstance(step, Note):
                continue
            if isinstance(step, Copy):
                copy(step)
                continue
            if isinstance(step, PatchLoop):
                self._patch_loop(step, address)
                continue
            if isinstance(step, StreamLoop):
                self._stream_loop(step, address)
                continue
            self._call(step, address)
        for c in self.program.epilogue:
            copy(c)
        return [o.reshape(p.tensor.shape) for o, p in zip(outs, self.program.outputs)]

    def _call(self, step: KernelCall, address) -> None:
        self._call_at(step, [address(a) for a in step.args])

    def _patch_loop(self, s: PatchLoop, address) -> None:
        """The C entry function's loop over patches, on byte views of the same memory."""
        ph, pw, cb = s.out_shape
        th, tw = s.tile
        r, c = s.offset
        ih, iw = s.window.image
        src = _bytes(address(s.src), ih * iw * s.window.channel_bytes)
        height = max(a for a, _ in s.corners) + th  # the last tile ends on the last row
        dst = _bytes(address(s.dst), height * s.out_width * cb).reshape(height, s.out_width, cb)
        for a, b in s.corners:
            _window(_bytes(address(s.patch_in), _patch_bytes(s.window)), src, s.window, a, b)
            for step in s.body:
                if isinstance(step, PatchFill):
                    _window(_bytes(address(step.dst), _patch_bytes(step.window)), None,
                            step.window, a, b)
                else:
                    self._call(step, address)
            out = _bytes(address(s.patch_out), ph * pw * cb).reshape(ph, pw, cb)
            dst[a:a + th, b:b + tw] = out[r:r + th, c:c + tw]

    def _stream_loop(self, s: StreamLoop, address) -> None:
        """The C entry function's loop over bands, on byte views of the same memory."""
        for arg, nbytes, fill in s.windows:
            _bytes(address(arg), nbytes).reshape(-1, len(fill))[:] = np.frombuffer(fill,
                                                                                   np.uint8)
        for j in range(s.first_band, s.bands):
            for arg, kept, new in s.slides:
                w = _bytes(address(arg), kept + new)
                w[:kept] = w[new:].copy()
            _band_rows(s.copy_in, address, j)
            for step in s.body:
                if isinstance(step, BandRows):
                    _band_rows(step, address, j)
                    continue
                new, phase, height = step.rows
                if j * new + phase < height and j * new + phase + new > 0:
                    self._call_at(step.call, [address(a) + j * n for a, n in
                                              zip(step.call.args, step.band_bytes, strict=True)])

    def _call_at(self, step: KernelCall, addresses: list[int]) -> None:
        status = self.functions[step.kernel](*addresses)
        if status != 0:
            raise BuildError(f"kernel {self.kernels[step.kernel].name} returned "
                             f"status {status}")

    def run_sequence(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        """``inputs`` as one ``[N, *shape]`` array per graph input, run in order
        on the current state; one ``[N, *shape]`` array per output (as
        :func:`aot.export.host.run_program`)."""
        n = inputs[0].shape[0] if inputs else 0
        results = [self.run([x[i] for x in inputs]) for i in range(n)]
        return [np.stack([r[k] for r in results]) if results
                else np.empty((0, *p.tensor.shape), NP_TYPES[p.tensor.dtype])
                for k, p in enumerate(self.program.outputs)]


def _bytes(addr: int, n: int) -> np.ndarray:
    return np.ctypeslib.as_array((ctypes.c_uint8 * max(n, 1)).from_address(addr))[:n]


def _band_rows(b: BandRows, address, j: int) -> None:
    """What the C's band-rows loop does: copy the in-image rows (with ``b.src``), fill the
    others (with ``b.fill``)."""
    rows = _bytes(address(b.dst), b.new * b.row_bytes).reshape(b.new, b.row_bytes)
    for i in range(b.new):
        r = j * b.new + b.phase + i
        if 0 <= r < b.height:
            if b.src is not None:
                rows[i] = _bytes(address(b.src) + r * b.row_bytes, b.row_bytes)
        elif b.fill is not None:
            rows[i].reshape(-1, len(b.fill))[:] = np.frombuffer(b.fill, np.uint8)


def _patch_bytes(w: PatchWindow) -> int:
    return w.rows[2] * w.cols[2] * w.channel_bytes


def _window(dst: np.ndarray, src: np.ndarray | None, w: PatchWindow, a: int, b: int) -> None:
    """What the C's window loop does: copy the in-image part of the patch (with ``src``)
    and set the rest to the fill."""
    (rs, r0, h), (cs, c0, width), (ih, iw), cb = w.rows, w.cols, w.image, w.channel_bytes
    patch = dst.reshape(h, width, cb)
    top, left = a * rs + r0, b * cs + c0
    rows = np.arange(top, top + h)
    cols = np.arange(left, left + width)
    rin, cin = (rows >= 0) & (rows < ih), (cols >= 0) & (cols < iw)
    if src is not None and rin.any() and cin.any():
        image = src.reshape(ih, iw, cb)
        patch[np.ix_(rin, cin)] = image[np.ix_(rows[rin], cols[cin])]
    if w.fill is not None:
        fill = np.tile(np.frombuffer(w.fill, np.uint8), cb // len(w.fill))
        patch[~rin] = fill
        patch[:, ~cin] = fill
