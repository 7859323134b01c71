"""Tensor intrinsics: a small computation with a hand-written implementation."""

from __future__ import annotations

from aot.te.tensor import ComputeOp, TEError


class TensorIntrin:
    """Declares that ``op`` (a small compute) can be done by ``intrin_func``.

    ``intrin_func(ins, outs)`` receives buffers bound to the regions the
    intrinsic covers (one per input of ``op``, then the output) and returns
    either one statement doing the whole computation (including any reset
    of the accumulator), or a triple ``(body, reset, update)`` where
    ``reset`` initializes the output region and ``update`` accumulates
    into it; the triple is required when the reduction is split so that
    part of it stays outside the tensorized loops.  Statements may also be
    expressions (they are evaluated for their side effect).
    """

    def __init__(self, op, intrin_func, binds, name):
        self.op, self.intrin_func, self.binds, self.name = op, intrin_func, binds, name


def decl_tensor_intrin(op, intrin_func, binds=None, name=None) -> TensorIntrin:
    """Declare a tensor intrinsic for ``Stage.tensorize``.

    ``binds`` maps the op's input and output tensors to buffers from
    :func:`aot.tir.decl_buffer`; their strides and ``elem_offset`` may be
    variables that tensorize binds to the actual region.  Tensors without a
    bind get a compact buffer.
    """
    if not isinstance(op, ComputeOp):
        raise TEError("decl_tensor_intrin: op must be a compute operation (T.op)")
    return TensorIntrin(op, intrin_func, dict(binds or {}), name or op.name)
