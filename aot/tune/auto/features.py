"""Features of a candidate's loop IR, the cost model's inputs.

:func:`loop_features` walks the kernel's :class:`~aot.tir.PrimFunc` once,
each statement and expression weighted by how often it runs (the product of
the extents of the loops around it), and counts what costs instructions on
a microcontroller: loop iterations (compare and branch), stores, loads,
multiplies, other arithmetic, guards (``if``, ``select``) and calls of the
support header's intrinsics (by call name, hashed into a few buckets), plus
the static size of the code (unrolled loops copied) and the stack bytes
allocated.  Counts enter as ``log1p``: costs span orders of magnitude.
Calls of the blocked intrinsic (``aot_block_row_s8``,
:mod:`aot.kernels.conv2d.blocked`, or ``aot_block_requant_s8`` when its
epilogue is fused) hide their loops in the helper, so their
constant arguments become features too: the multiply-accumulates they do,
the block's area (P x O sums in registers), whether the input and the
weights are pre-widened and the reduction steps per iteration; those of the
blocked depthwise calls (``aot_dwblock_s8``, fused or not:
:mod:`aot.kernels.depthwise_conv2d.blocked`) the same way: their MACs, the
output rows per call, the pixels per block and the channels per chunk.
The file knobs (``optimize``, ``vector_isa``) are not in the loop IR, so
:func:`config_features` adds their one-hot values.
"""

from __future__ import annotations

import math
import zlib

import numpy as np

from aot.tir import expr as E
from aot.tir import stmt as S
from aot.tir.functor import children

CALL_BUCKETS = 4
_BLOCK_NAMES = ("block_macs", "block_area", "block_wide_x", "block_wide_w", "block_steps")
_DWBLOCK_NAMES = ("dwblock_macs", "dwblock_rows", "dwblock_pixels", "dwblock_chunk")
_NAMES = ("iterations", "innermost_iterations", "stores", "loads", "multiplies",
          "arithmetic", "guards", "unrolled_copies", "code_nodes", "stack_bytes", "loops",
          "innermost_extent") + tuple(f"calls_{i}" for i in range(CALL_BUCKETS)) + _BLOCK_NAMES \
    + _DWBLOCK_NAMES
#: Where the blocked calls' arguments ``npix, nch, P, O, K, steps, xw, ww`` start: the
#: accumulating row and the row fused with its epilogue (conv2d.fuse).
_BLOCK_CALLS = {"aot_block_row_s8": 6, "aot_block_requant_s8": 7}
#: The patch calls: npix, nch, P, O, KH, KWC, steps, xw, ww (K = KH * KWC).
_PATCH_CALLS = {"aot_block_patch_row_s8": 7, "aot_block_patch_requant_s8": 8}
#: the blocked depthwise calls (aot.kernels.depthwise_conv2d.blocked) and where
#: their constant arguments nrow, npix, c_n, kh, kw, sh, sw, P, cb start
_DWBLOCK_CALLS = {"aot_dwblock_s8": 6, "aot_dwblock_requant_s8": 7}
N_LOOP_FEATURES = len(_NAMES)


def _extent(e) -> int:
    return int(e.value) if isinstance(e, E.IntImm) else 16   # symbolic: a guess


def _count_expr(e, weight: float, out: dict, static: float) -> None:
    stack = [e]
    while stack:
        n = stack.pop()
        out["code_nodes"] += static
        if isinstance(n, E.Load):
            out["loads"] += weight
        elif isinstance(n, E.Binary):
            out["multiplies" if n.op == "mul" else "arithmetic"] += weight
        elif isinstance(n, E.Select):
            out["guards"] += weight
        elif isinstance(n, E.Call) and n.kind != "intrin":
            bucket = zlib.crc32(n.name.encode()) % CALL_BUCKETS
            out[f"calls_{bucket}"] += weight
            if n.name in _BLOCK_CALLS:
                _block_call(n, _BLOCK_CALLS[n.name], weight, out)
            elif n.name in _PATCH_CALLS:
                _block_call(n, _PATCH_CALLS[n.name], weight, out, patch=True)
            elif n.name in _DWBLOCK_CALLS:
                _dwblock_call(n, weight, out)
        stack.extend(children(n))


def _block_call(call, first: int, weight: float, out: dict, patch: bool = False) -> None:
    args = [a.value if isinstance(a, E.IntImm) else 0
            for a in call.args[first:first + 8 + patch]]
    if patch and len(args) == 9:   # KH, KWC -> K
        args[4:6] = [args[4] * args[5]]
    if len(args) != 8:
        return
    npix, nch, p, o, k, steps, xw, ww = args
    out["block_macs"] += weight * npix * nch * k
    out["block_area"] = max(out["block_area"], p * o)
    out["block_wide_x"] = max(out["block_wide_x"], xw)
    out["block_wide_w"] = max(out["block_wide_w"], ww)
    out["block_steps"] = max(out["block_steps"], steps)


def _dwblock_call(call, weight: float, out: dict) -> None:
    at = _DWBLOCK_CALLS[call.name]
    args = [a.value if isinstance(a, E.IntImm) else 0 for a in call.args[at:at + 9]]
    if len(args) != 9:
        return
    nrow, npix, c_n, kh, kw, _, _, p, cb = args
    out["dwblock_macs"] += weight * nrow * npix * c_n * kh * kw
    out["dwblock_rows"] = max(out["dwblock_rows"], nrow)
    out["dwblock_pixels"] = max(out["dwblock_pixels"], p)
    out["dwblock_chunk"] = max(out["dwblock_chunk"], cb)


def loop_features(func) -> np.ndarray:
    """The features of loop IR ``func`` (see the module docstring)."""
    out = dict.fromkeys(_NAMES, 0.0)

    def visit(s, weight: float, static: float) -> None:
        if s is None:
            return
        if isinstance(s, S.For):
            n = _extent(s.extent)
            out["loops"] += 1
            out["iterations"] += weight * n
            inner = static * n if s.kind == "unrolled" else static
            if s.kind == "unrolled":
                out["unrolled_copies"] += static * n
            if not _has_loop(s.body):
                out["innermost_iterations"] += weight * n
                out["innermost_extent"] = max(out["innermost_extent"], n)
            _count_expr(s.extent, weight, out, 0.0)
            visit(s.body, weight * n, inner)
        elif isinstance(s, S.Store):
            out["stores"] += weight
            out["code_nodes"] += static
            _count_expr(s.value, weight, out, static)
            _count_expr(s.index, weight, out, static)
        elif isinstance(s, S.IfThenElse):
            out["guards"] += weight
            _count_expr(s.cond, weight, out, static)
            visit(s.then_case, weight, static)
            visit(s.else_case, weight, static)
        elif isinstance(s, S.SeqStmt):
            for x in s.seq:
                visit(x, weight, static)
        elif isinstance(s, S.Allocate):
            b = s.buffer
            size = math.prod(_extent(d) for d in b.shape) if getattr(b, "shape", None) else 0
            out["stack_bytes"] += size * _itemsize(getattr(b, "dtype", "int32"))
            visit(s.body, weight, static)
        elif isinstance(s, S.Evaluate):
            _count_expr(s.value, weight, out, static)

    visit(func.body, 1.0, 1.0)
    return np.log1p(np.array([out[n] for n in _NAMES], dtype=float))


def _has_loop(s) -> bool:
    if s is None:
        return False
    if isinstance(s, S.For):
        return True
    if isinstance(s, S.SeqStmt):
        return any(_has_loop(x) for x in s.seq)
    if isinstance(s, S.IfThenElse):
        return _has_loop(s.then_case) or _has_loop(s.else_case)
    if isinstance(s, S.Allocate):
        return _has_loop(s.body)
    return False


def _itemsize(dtype: str) -> int:
    digits = "".join(ch for ch in str(dtype) if ch.isdigit())
    return max(1, int(digits) // 8) if digits else 4


def config_features(config, file_knobs) -> np.ndarray:
    """One-hot values of the file knobs, which the loop IR does not show."""
    row = []
    for knob in file_knobs:
        row += [1.0 if config.get(knob.name) == v else 0.0 for v in knob.values]
    return np.array(row, dtype=float)
