"""The schedule template of dense, one per target key.

Knobs: ``accumulate`` (the row intrinsics of :mod:`aot.kernels.dense.intrin`:
``dense_packed`` over weights stored packed, ``dense_s8`` over the plain
ones; one ``dot_s8`` call per output, or plain ``loops``), ``unroll_k``
(reduction steps per unrolled step of the loops) and ``unroll_u`` (outputs
per unrolled step).  The default values are the library's schedule: one
output at a time with the dot product innermost (both operands contiguous)
on ``generic`` and ``riscv`` targets; on ``arm_cpu`` the packed row
intrinsic where the weights allow it and a chunk has more than four units
(:func:`aot.kernels.dense.intrin.packs`), else the plain one where it fits,
else a dot call per output; on ``arm_mve`` (Helium, whose VMLADAVA reads
plain int8 weights) the plain row intrinsic first.
"""

from __future__ import annotations

from aot.kernels.conv2d.intrin import tensorize_dot
from aot.kernels.dense.intrin import packs, rows_fit, tensorize_dense_rows
from aot.kernels.registry import template
from aot.kernels.template import Knob, Template, divisors, extent


def _accumulations(stages, final, key: str) -> tuple[str, ...]:
    if "dot_s8" not in stages:
        return ("loops",)
    rows: tuple[str, ...] = ()
    if rows_fit(stages, final):
        rows = ("dense_packed", "dense_s8") if packs(stages) else ("dense_s8",)
        if key == "arm_mve":
            rows = tuple(reversed(rows))
    return rows + ("dot_s8", "loops")


def dense_template(key: str) -> Template:
    """The dense template on target ``key``."""
    intrinsics = key in ("arm_cpu", "arm_mve")

    def knobs(stages, final) -> list[Knob]:
        acc = stages["acc"]
        units = extent(acc.op.axis[-1].dom.extent)
        depth = extent(acc.op.reduce_axis[0].dom.extent)
        return [Knob("accumulate", _accumulations(stages, final, key),
                     "row intrinsic of the support header (packed or plain weights), a dot "
                     "call per unit, or loops"),
                Knob("unroll_k", divisors(depth, (1, 4, 8)),
                     "loops: reduction steps per unrolled step"),
                Knob("unroll_u", divisors(units, (1, 2, 4)), "outputs per unrolled step")]

    def default_values(stages, final) -> dict:
        choices = _accumulations(stages, final, key)
        return {"accumulate": choices[0] if intrinsics else "loops",
                "unroll_k": 1, "unroll_u": 1}

    return Template("dense", key, knobs, default_values, _apply)


def _apply(s, final, stages, cfg) -> None:
    acc = stages["acc"]
    if cfg["accumulate"] in ("dense_s8", "dense_packed"):
        units = tensorize_dense_rows(s, final, stages, packed=cfg["accumulate"] == "dense_packed")
        if cfg["unroll_u"] > 1:
            _, ui = s[final].split(units, factor=cfg["unroll_u"])
            s[final].unroll(ui)
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


for _key in ("arm_cpu", "arm_mve", "riscv"):
    template(dense_template(_key))
template(dense_template("generic"), tunable=False)
