"""TOPK (ONNX's TopK; TFLite's TOPK_V2 is not in TFLM): the k best elements
along an axis, or their positions.

Three stages.  ``acc``: each element's rank in its row, the number of
elements along the axis that come before it (greater, or smaller when not
``largest``; of equal ones those at a lower position), an int32 array the
size of the input on the kernel's stack (4 bytes per input element: a
classifier's 1000 scores take 4000 bytes; computing it one slab at a time
needs a schedule primitive that attaches a stage to its consumer's consumer,
not there yet), O(n^2) comparisons per row.  ``pos``: for output slot
``j``, the position whose rank is ``j`` (exactly one has it).  ``y``: the
element there (values, raw: quantized data keeps its integers) or the
position as int64.  Ranks make the order ONNX's without a sort's data
movement; rows are short in the models this serves (a classifier's top 5).
"""

from __future__ import annotations

from aot import te
from aot.kernels.registry import Computed, compute_rule, strategy
from aot.tir import expr as E


@compute_rule("topk")
def topk(ctx, node) -> Computed:
    x_t, y_t = node.inputs[0], node.outputs[0]
    x = ctx.value(x_t)
    rank = len(x_t.shape)
    axis = int(node.attrs["axis"]) % rank
    n = int(x_t.shape[axis])
    largest = bool(node.attrs["largest"])

    def at(i, j):
        idx = list(i)
        idx[axis] = j
        return x[tuple(idx)]

    m = te.reduce_axis((0, n), "m")

    def before(i):
        other, mine = at(i, m.var), x[tuple(i)]
        better = other > mine if largest else other < mine
        tie = E.binary("and", other.equal(mine), m.var < i[axis])
        return te.if_then_else(E.binary("or", better, tie), E.const(1, "int32"),
                               E.const(0, "int32"))
    ranks = te.compute(tuple(x_t.shape), lambda *i: te.sum(before(i), axis=[m]), name="acc")

    r = te.reduce_axis((0, n), "r")

    def slot(*i):
        idx = list(i)
        idx[axis] = r.var
        hit = ranks[tuple(idx)].equal(i[axis].astype("int32"))
        return te.min(te.if_then_else(hit, r.var.astype("int32"), E.const(n, "int32")),
                      axis=[r])
    shape = tuple(y_t.shape)
    pos = te.compute(shape, slot, name="pos")
    if node.attrs["output"] == "indices":
        y = te.compute(shape, lambda *i: pos[i].astype("int64"), name="y")
    else:
        y = te.compute(shape, lambda *i: at(i, pos[i]), name="y")
    return Computed(y, {"acc": ranks, "pos": pos})


@strategy("topk")
def schedule_topk_generic(s, final, stages) -> None:
    """The ranks once for the whole input (a stack array), then each output
    element with its search for the position innermost."""
    s[stages["pos"]].compute_at(s[final], final.op.axis[-1])
