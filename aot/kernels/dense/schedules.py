"""The schedule template of dense, one per target key.

Knobs: ``accumulate`` (the row intrinsics of :mod:`aot.kernels.dense.intrin`:
``dense_packed`` over weights stored packed, ``dense_s8`` over the plain
ones; one ``dot_s8`` call per output, or plain ``loops``), ``unroll_k``
(reduction steps per unrolled step of the loops) and ``unroll_u`` (outputs
per unrolled step).  The default values are the library's schedule: one
output at a time with the dot product innermost (both operands contiguous)
on ``generic`` and ``riscv`` targets; on ``arm_cpu`` the packed row
intrinsic where the weights allow it and a chunk has more than four units
(:func:`aot.kernels.dense.intrin.packs`; the compute rule offers packed
weights only on cores with the DSP extension and without Helium, whose
VMLADAVA reads plain int8 weights), with its epilogue fused where
:mod:`aot.kernels.dense.fuse` applies, else the plain one where it fits,
else a dot call per output.
"""

from __future__ import annotations

from aot.kernels.conv2d.intrin import tensorize_dot
from aot.kernels.dense.fuse import NAME as FUSE_NAME
from aot.kernels.dense.fuse import fuse_dense_epilogue
from aot.kernels.dense.intrin import packs, rows_fit, tensorize_dense_rows
from aot.kernels.registry import template
from aot.kernels.template import Knob, Template, divisors, extent


def _accumulations(stages, final) -> tuple[str, ...]:
    if "dot_s8" not in stages:
        return ("loops",)
    rows: tuple[str, ...] = ()
    if rows_fit(stages, final):
        rows = ("dense_packed", "dense_s8") if packs(stages) else ("dense_s8",)
    return rows + ("dot_s8", "loops")


def dense_template(key: str) -> Template:
    """The dense template on target ``key``."""
    intrinsics = key in ("arm_cpu", "arm_mve")

    def knobs(stages, final) -> list[Knob]:
        acc = stages["acc"]
        units = extent(acc.op.axis[-1].dom.extent)
        depth = extent(acc.op.reduce_axis[0].dom.extent)
        return [Knob("accumulate", _accumulations(stages, final),
                     "row intrinsic of the support header (packed or plain weights), a dot "
                     "call per unit, or loops"),
                Knob("unroll_k", divisors(depth, (1, 4, 8)),
                     "loops: reduction steps per unrolled step"),
                Knob("unroll_u", divisors(units, (1, 2, 4)), "outputs per unrolled step"),
                *([Knob("fuse_epilogue", (True, False),
                        "dense_packed with unroll_u 1: each chunk and its epilogue as one "
                        "aot_dense_packed_requant_s8 call, requantizing from registers")]
                  if "dense_requant" in stages and "dense_packed" in
                  _accumulations(stages, final) else [])]

    def default_values(stages, final) -> dict:
        choices = _accumulations(stages, final)
        values = {"accumulate": choices[0] if intrinsics else "loops",
                  "unroll_k": 1, "unroll_u": 1}
        if "dense_requant" in stages and "dense_packed" in choices:
            values["fuse_epilogue"] = intrinsics
        return values

    return Template("dense", key, knobs, default_values, _apply)


def _apply(s, final, stages, cfg) -> None:
    acc = stages["acc"]
    if cfg["accumulate"] in ("dense_s8", "dense_packed"):
        units = tensorize_dense_rows(s, final, stages, packed=cfg["accumulate"] == "dense_packed")
        if cfg["unroll_u"] > 1:
            _, ui = s[final].split(units, factor=cfg["unroll_u"])
            s[final].unroll(ui)
        elif cfg.get("fuse_epilogue") and cfg["accumulate"] == "dense_packed":
            s.rewrite(FUSE_NAME, fuse_dense_epilogue(stages["dense_requant"].name))
        return
    ui = final.op.axis[-1]
    if cfg["unroll_u"] > 1:
        _, ui = s[final].split(ui, factor=cfg["unroll_u"])
    s[acc].compute_at(s[final], ui)
    if cfg["accumulate"] == "dot_s8":
        tensorize_dot(s, stages)
    elif cfg["unroll_k"] > 1:
        _, ki = s[acc].split(acc.op.reduce_axis[0], factor=cfg["unroll_k"])
        s[acc].unroll(ki)
    if cfg["unroll_u"] > 1:
        s[final].unroll(ui)


for _key in ("arm_cpu", "riscv"):
    template(dense_template(_key))
template(dense_template("generic"), tunable=False)
