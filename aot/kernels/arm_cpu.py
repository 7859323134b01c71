"""arm_cpu strategies: the generic schedules with the int8 dot product tensorized.

The innermost reduction of int8 conv2d and dense (over input channels, both
operands contiguous) becomes one call of ``aot_dot_s8`` from the support
header, which uses the Cortex-M DSP instructions SXTB16 and SMLAD (four
multiply-accumulates per two instructions) when ``__ARM_FEATURE_DSP`` is
defined and a plain loop otherwise, so the same kernel also runs on the
host.  Groups that are not int8 x int8 -> int32 (float, int16x8) keep the
generic schedule.
"""

from __future__ import annotations

from aot import te, tir
from aot.kernels.conv2d import schedule_by_output_row
from aot.kernels.dense import schedule_dense_generic
from aot.kernels.registry import strategy


def dot_s8_intrin(length: int):
    """``c += sum_k a[k] * b[k]`` over ``length`` int8 values (int32 result)."""
    a = te.placeholder((length,), "int8", "a")
    b = te.placeholder((length,), "int8", "b")
    k = te.reduce_axis((0, length), "k")
    c = te.compute((), lambda: te.sum(a[k].astype("int32") * b[k].astype("int32"), axis=k),
                   name="c")

    def intrin_func(ins, outs):
        aa, bb = ins
        cc = outs[0]
        reset = tir.call_extern("int32", "aot_acc_reset", cc.access_ptr("w"))
        update = tir.call_extern("int32", "aot_dot_s8", cc.access_ptr("rw"),
                                 aa.access_ptr("r"), bb.access_ptr("r"), length)
        return None, reset, update
    binds = {t: tir.decl_buffer(t.shape, t.dtype, t.name, elem_offset=te.var("off"),
                                offset_factor=1) for t in (a, b)}
    return te.decl_tensor_intrin(c.op, intrin_func, binds=binds, name="dot_s8")


def _tensorize_dot(s, stages) -> None:
    acc = stages.get("dot_s8")
    if acc is None:
        return
    inner = acc.op.reduce_axis[-1]
    s[acc].tensorize(inner, dot_s8_intrin(int(inner.dom.extent.value)))


@strategy("conv2d", "arm_cpu")
def schedule_conv2d_arm(s, final, stages) -> None:
    """Output rows as in the generic strategy; each output's channel
    reduction per (kh, kw) tap is one ``aot_dot_s8``."""
    schedule_by_output_row(s, final, stages)
    _tensorize_dot(s, stages)


@strategy("dense", "arm_cpu")
def schedule_dense_arm(s, final, stages) -> None:
    """One output at a time; its whole dot product is one ``aot_dot_s8``."""
    schedule_dense_generic(s, final, stages)
    _tensorize_dot(s, stages)
