"""MEAN over any set of axes (TFLM's reduce-mean arithmetic).

int8/int16: ``acc = sum(x - x_zp)`` in int32, then one
``MultiplyByQuantizedMultiplier`` with the reference's own multiplier for
the count (``aot.quant.params.mean_multiplier``), plus the output
zero point, clamped;
float32: the sum divided by the count.  Global average pooling exported as
MEAN over H and W is the common case.
"""

from __future__ import annotations

import math

from aot import te
from aot.kernels.common import requantize
from aot.kernels.kernel import KernelError
from aot.kernels.registry import Computed, compute_rule, strategy
from aot.quant.arith import qrange
from aot.quant.params import mean_multiplier
from aot.tir import expr as E


@compute_rule("mean")
def mean(ctx, node) -> Computed:
    x_t, y_t = node.inputs[0], node.outputs[0]
    x = ctx.value(x_t)
    rank = len(x_t.shape)
    axes = sorted({int(a) % rank for a in node.attrs["axes"]})
    keep = bool(node.attrs["keepdims"])
    n = math.prod(int(x_t.shape[a]) for a in axes)
    red = {a: te.reduce_axis((0, int(x_t.shape[a])), f"r{a}") for a in axes}

    def read(i):
        idx, out = [], iter(i)
        for a in range(rank):
            if a in red:
                idx.append(red[a])
                if keep:
                    next(out)
            else:
                idx.append(next(out))
        return x[tuple(idx)]

    shape = tuple(y_t.shape)
    raxes = list(red.values())
    if y_t.dtype == "float32":
        acc = te.compute(shape, lambda *i: te.sum(read(i), axis=raxes), name="acc")
        y = te.compute(shape, lambda *i: acc[i] / E.const(float(n), "float32"), name="y")
        return Computed(y, {"acc": acc})
    if y_t.dtype not in ("int8", "int16") or x_t.dtype != y_t.dtype:
        raise KernelError(f"mean ({node.name}) from {x_t.dtype} to {y_t.dtype}: not supported "
                          "yet")
    if any(t.quant is None or t.quant.is_per_axis for t in (x_t, y_t)):
        raise KernelError(f"mean ({node.name}): needs per-tensor quantization")
    x_zp = int(x_t.quant.zero_point[0])
    acc = te.compute(shape, lambda *i: te.sum(read(i).astype("int32") - x_zp, axis=raxes),
                     name="acc")
    mult, shift = mean_multiplier(n, x_t.quant.scale[0], y_t.quant.scale[0])
    y_zp = int(y_t.quant.zero_point[0])
    y = te.compute(shape, lambda *i: requantize(acc[i], mult, shift, y_zp, qrange(y_t.dtype),
                                                y_t.dtype), name="y")
    return Computed(y, {"acc": acc})


@strategy("mean")
def schedule_mean_generic(s, final, stages) -> None:
    """One output at a time with its reduction innermost (a scalar output
    keeps the sum in its own one-element buffer)."""
    if final.op.axis:
        s[stages["acc"]].compute_at(s[final], final.op.axis[-1])
