"""A packed dense chunk and its epilogue as one helper call, without the accumulator row.

With packed weights (:mod:`aot.kernels.dense.intrin`) each chunk of units
lowers to an ``aot_dense_packed_s8`` call that fills a scratch row of int32
accumulators, then the epilogue loop that requantizes it::

    aot_dense_packed_s8(acc, x, w, koff, n, depth);
    for (i = 0; i < n; ++i)
      y[b + i] = (int8_t)aot_clamp_s8(aot_requant(acc[i] + bias[c + i], M, KL, KH, E1), lo, hi);
  ->
    aot_dense_packed_requant_s8(y + b, x, w, rows, c, n, depth, lo, hi);

:func:`fuse_dense_epilogue` makes that replacement where the loop is exactly
this per-tensor one-rounding epilogue (immediate constants; the compute
rule builds :func:`dense_requant_rows` from the same ``fast_requant_tables``
immediates as the epilogue, and a kernel has one epilogue).  The helper requantizes each
block of four units from registers with the fused depthwise helpers' form
(:mod:`aot.kernels.conv2d.fuse`: ``x2 = 2 (acc + bias)``, SMMLAR, the sign
term, a shift, SSAT) and reads the row ``rows = (m, kh, e, 2 (bias[u] +
k[u]) ...)``: the packed sums are ``256 (acc - k)``, so ``x2`` is
``(s >> 7) + 2 (bias + k)``, one add.  Only single-segment chunks (depth
at most 128: the widened input fits the helper's buffer at once), and
only when ``|acc + bias| < 2^30`` for every input (checked at compile time).
Anything else keeps the two statements.

The helper widens the whole input before it writes any output (both C
paths), so :mod:`aot.kernels.overlap` times its reads before its writes
(``READS_FIRST``) and the output may overlap the input as it could with
the two statements.
"""

from __future__ import annotations

import numpy as np

from aot.kernels.support import header_define
from aot.tir import expr as E
from aot.tir import stmt as S
from aot.tir.functor import Mutator, all_nodes, uses_var
from aot.tir.passes import drop_allocations
from aot.tir.simplify import equal, from_linear, linear

#: The rewrite's name (``lower``'s dump, docs/kernels.md).
NAME = "fuse_dense_epilogue"
ACC_CALL = "aot_dense_packed_s8"
FUSED_CALL = "aot_dense_packed_requant_s8"
#: The widened segment of the helpers (2 * AOT_DENSE_WIDE_WORDS inputs).
MAX_DEPTH = 2 * header_define("AOT_DENSE_WIDE_WORDS")
X_BOUND = 1 << 30


def dense_requant_rows(weights, bias, qp, immediates) -> np.ndarray | None:
    """``(m, kh, e, 2*(bias[u] + k[u]) for each unit)`` as int32, or None
    outside the fused form's conditions: depth at most :data:`MAX_DEPTH`,
    the epilogue's per-tensor one-rounding immediates ``immediates`` =
    ``(m, k_lo, k_hi, e - 1)`` with the output offset folded (right shift
    ``1 <= e <= 21``), and ``128 * sum|w| + |bias + k| < 2^30`` per unit.
    ``weights`` are the int8 weights ``[units, depth]``, ``bias`` the
    kernel's int32 bias (input offset folded; None: zero), ``k`` the packed
    layout's correction ``127 * sum(w[odd])``."""
    w = np.asarray(weights, np.int64)
    units, depth = w.shape
    if depth > MAX_DEPTH or immediates is None or qp.wide:
        return None
    m, _, _, e1 = (int(v) for v in immediates)
    e = e1 + 1
    if not ((1 << 30) < m < (1 << 31) and 1 <= e <= 21):
        return None
    b = np.zeros(units, np.int64) if bias is None else np.asarray(bias, np.int64).reshape(-1)
    total = b + 127 * w[:, 1::2].sum(axis=1)
    if not (128 * np.abs(w).sum(axis=1) + np.abs(total) < X_BOUND).all():
        return None
    kh = (1 << (e - 1)) + int(qp.output_offset) * (1 << e)
    return np.concatenate([[m, kh, e], 2 * total]).astype(np.int32)


def _epilogue(loop, acc_buf, n):
    """``(y, y_base, bias, bias_base, lo, hi)`` when ``loop`` is the
    epilogue over the ``n`` accumulators of ``acc_buf`` (above), else None."""
    if not (isinstance(loop, S.For) and E.is_const_int(loop.min, 0) and equal(loop.extent, n)
            and isinstance(loop.body, S.Store)):
        return None
    st, i = loop.body, loop.var
    val = st.value
    if not (isinstance(val, E.Cast) and val.dtype == "int8" and isinstance(val.value, E.Call)
            and val.value.name == "aot_clamp_s8"):
        return None
    req, lo, hi = val.value.args
    if not (isinstance(req, E.Call) and req.name == "aot_requant" and len(req.args) == 5
            and all(isinstance(a, E.IntImm) for a in (lo, hi, *req.args[1:]))):
        return None
    add = req.args[0]
    if not (isinstance(add, E.Binary) and add.op == "add" and isinstance(add.a, E.Load)
            and isinstance(add.b, E.Load) and add.a.buffer.data is acc_buf.data
            and equal(add.a.index, i)):
        return None
    y_base, bias_base = _base(st.index, i), _base(add.b.index, i)
    if y_base is None or bias_base is None:
        return None
    return st.buffer, y_base, add.b.buffer, bias_base, lo, hi


def _base(index, var):
    """``b`` when ``index`` is ``b + var`` with ``b`` free of ``var``."""
    lf = linear(index)
    if lf is None:
        return None
    rest = [(k, t) for k, t in lf.terms.items() if t[1] != 0 and uses_var(t[0], {var})]
    if len(rest) != 1 or rest[0][1][1] != 1 or rest[0][1][0] is not var:
        return None
    del lf.terms[rest[0][0]]
    return from_linear(lf)


class _Fuser(Mutator):
    def __init__(self, rows: S.Buffer):
        self.rows = rows
        self.acc_ids = set()

    def visit_SeqStmt(self, s):
        parts = [self.stmt(p) for p in s.seq]
        out, k = [], 0
        while k < len(parts):
            fused = self._fused(parts[k], parts[k + 1]) if k + 1 < len(parts) else None
            if fused is not None:
                out.append(fused)
                k += 2
                continue
            out.append(parts[k])
            k += 1
        return S.seq(*out)

    def _fused(self, first, second):
        call = first.value if isinstance(first, S.Evaluate) else None
        if not (isinstance(call, E.Call) and call.name == ACC_CALL):
            return None
        acc, x, w, _koff, n, depth = call.args
        if not (isinstance(acc, E.AccessPtr) and E.is_const_int(acc.offset, 0)):
            return None
        found = _epilogue(second, acc.buffer, n)
        if found is None:
            return None
        y, y_base, _bias, bias_base, lo, hi = found
        self.acc_ids.add(id(acc.buffer.data))
        # the chunk's part of y, so the overlap proof sees exactly its bytes
        chunk = S.Buffer(y.name, y.dtype, (n,), elem_offset=y_base, data=y.data)
        return S.Evaluate(E.Call("int32", FUSED_CALL, (
            chunk.access_ptr("w"), x, w, E.AccessPtr(self.rows, E.const(0), "r"),
            bias_base, n, depth, lo, hi), "extern"))


def fuse_dense_epilogue(rows_name: str):
    """The rewrite (``PrimFunc -> PrimFunc``) fusing each packed chunk call
    with its epilogue loop, reading the constant parameter ``rows_name``
    (:func:`dense_requant_rows`); the function itself when nothing fuses or
    another statement still reads an accumulator row."""
    return lambda func: _fuse(func, rows_name)


def _fuse(func: S.PrimFunc, rows_name: str) -> S.PrimFunc:
    rows = [b for b in func.params if b.name == rows_name]
    if len(rows) != 1:
        return func
    fuser = _Fuser(rows[0])
    body = fuser.stmt(func.body)
    if not fuser.acc_ids:
        return func
    for node in all_nodes(body):
        if (isinstance(node, (E.Load, E.AccessPtr, S.Store))
                and id(node.buffer.data) in fuser.acc_ids):
            return func
    return func.with_body(drop_allocations(body, fuser.acc_ids))
