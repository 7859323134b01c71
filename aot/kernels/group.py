"""Lowering one fused group: compute rules in node order, a strategy's schedule, C."""

from __future__ import annotations

import numpy as np

from aot import te
from aot.codegen.c import canonical_target
from aot.ir import Node, Tensor
from aot.kernels.kernel import Kernel, KernelBuilder, KernelError
from aot.kernels.registry import COMPUTES, HANDWRITTEN, select_strategy
from aot.kernels.template import extent
from aot.passes.annotated import FusedGroup, QuantParams, annotations
from aot.te.tensor import ComputeOp


class GroupContext:
    """What a compute rule sees: the values of tensors and the folded constants."""

    def __init__(self, group: FusedGroup, graph, builder: KernelBuilder):
        self.group, self.graph, self.builder = group, graph, builder
        self.env: dict[int, te.Tensor] = {}

    def value(self, t: Tensor, shape=None) -> te.Tensor:
        """The tensor expression of ``t`` viewed as ``shape`` (default: ``t``'s
        own shape): computed earlier in the group, or a kernel input (run-time
        tensors) or constant (weights).

        A compute rule may compute over another shape of the same elements
        than its node's output (dense computes ``[rows, units]`` for a
        ``keep_num_dims`` output ``[4, 1, units]``); a later rule of the group
        indexes the value with ``t``'s shape, so it gets a row-major view
        (:func:`row_major_view`), never the raw tensor: read with NumPy
        broadcasting, ``[rows, units]`` under ``[4, 1, units]`` would pin the
        row to the size-1 axis (issue 34's wrong rows)."""
        if id(t) in self.env:
            return row_major_view(self.env[id(t)], tuple(shape or t.shape))
        return self.builder.input(t, shape)

    def const(self, label: str, data, shape=None, dtype=None) -> te.Tensor:
        return self.builder.const(label, data, shape, dtype)

    def target_keys(self) -> tuple[str, ...]:
        """The keys of the target the group is lowered for (``arm_cpu``,
        ``arm_mve``, ...), for a compute rule whose best form depends on the
        strategy that will schedule it."""
        return _target_keys(self.builder.target)

    def quant(self, node: Node) -> QuantParams:
        qp = annotations(self.graph).quant.get(node)
        if qp is None:
            raise KernelError(f"group {self.group.name}: node {node.name} ({node.op}) has no "
                              "folded quantization parameters; run aot.passes.optimize first")
        return qp


def row_major_view(src: te.Tensor, shape: tuple) -> te.Tensor:
    """``src`` read as ``shape`` (the same elements in row-major order), or
    ``src`` itself when it has that shape.  The view is a compute stage that
    ``lower_group`` inlines: its element ``idx`` is ``src``'s element at the
    same row-major position.  The axes the two shapes end with in common
    are passed through; the leading axes are flattened
    (``f = sum idx[i] * prod(shape[i+1:])``) and, when ``src`` has more
    than one leading axis, split again (``f // prod(...) % dim``)."""
    have = tuple(extent(d) for d in src.shape)
    want = tuple(extent(d) for d in shape)
    if have == want:
        return src
    if int(np.prod(have)) != int(np.prod(want)):
        raise KernelError(f"a value of shape {list(have)} cannot be viewed as {list(want)}: "
                          "the sizes differ")
    tail = 0
    while (tail < min(len(have), len(want)) - 1
           and have[len(have) - 1 - tail] == want[len(want) - 1 - tail]):
        tail += 1
    head_have, head_want = have[:len(have) - tail], want[:len(want) - tail]

    def view(*idx):
        flat = None
        for i, dim in enumerate(head_want):
            if dim == 1:
                continue  # its index is always 0
            term = idx[i] * int(np.prod(head_want[i + 1:]))
            flat = term if flat is None else flat + term
        flat = te.const(0, "int32") if flat is None else flat
        head = []
        for j, dim in enumerate(head_have):
            if dim == 1:
                head.append(te.const(0, "int32"))
                continue
            v = flat
            inner = int(np.prod(head_have[j + 1:]))
            if inner > 1:
                v = v // inner
            if j > 0:
                v = v % dim
            head.append(v)
        return src[(*head, *idx[len(idx) - tail:])]
    return te.compute(want, view, name=f"{src.op.name}_view")


def _target_keys(target) -> tuple[str, ...]:
    keys = getattr(target, "keys", None)
    return tuple(keys) if keys else ()


def _unsupported(group: FusedGroup, node: Node, why: str) -> KernelError:
    supported = ", ".join(sorted(set(COMPUTES) | set(HANDWRITTEN)))
    return KernelError(f"group {group.name}: {node.op} ({node.name}) {why}: not supported yet "
                       f"(kernels exist for: {supported})")


def lower_group(group: FusedGroup, ag, target, *, name: str, schedule=None) -> Kernel:
    """Generate the C kernel of one fused group (see the Kernel contract in docs/kernels.md).

    ``target`` is an :class:`aot.target.Target` or its string; its keys pick
    the schedule strategy, unless ``schedule(s, final, stages)`` is given to
    replace it (the auto-tuner's templates with a config, :mod:`aot.tune`).
    The kernel lists the in-place writes its loop nest allows in
    :attr:`Kernel.inplace_allowed` (hand-written kernels allow none).
    Raises :class:`KernelError` for a view group or an operator without a
    kernel.
    """

    _, target_obj = canonical_target(target)
    target = target_obj if target_obj is not None else target
    if group.kind == "view":
        raise KernelError(f"group {group.name} is a view: it has no kernel (its output "
                          "shares its input's buffer)")
    outputs = group.outputs(ag)
    if len(group.nodes) == 1 and group.nodes[0].op in HANDWRITTEN:
        return HANDWRITTEN[group.nodes[0].op](group, ag, target, name)
    if len(outputs) != 1:
        raise KernelError(f"group {group.name} has {len(outputs)} outputs; kernels write one")
    for node in group.nodes:
        if node.op not in COMPUTES:
            raise _unsupported(group, node, "has no kernel")
    builder = KernelBuilder(name, target)
    ctx = GroupContext(group, ag, builder)
    stages: dict[str, te.Tensor] = {}
    macs = 0
    for node in group.nodes:
        done = COMPUTES[node.op](ctx, node)
        if node is group.anchor or group.kind == "opaque":
            stages = done.stages
        macs += done.macs
        ctx.env[id(node.outputs[0])] = done.tensor
    final = ctx.env[id(outputs[0])]
    sched = te.create_schedule(final.op)
    keep = {id(t.op) for t in stages.values()} | {id(final.op)}
    for stage in list(sched.stages):
        if isinstance(stage.op, ComputeOp) and id(stage.op) not in keep:
            stage.compute_inline()
    anchor = (group.anchor.op if group.anchor is not None
              else group.nodes[0].op if group.kind == "opaque" else "elementwise")
    if schedule is None:
        try:
            _, schedule = select_strategy(anchor, _target_keys(target))
        except KeyError:
            raise _unsupported(group, group.anchor or group.nodes[0],
                               "has no schedule strategy") from None
    schedule(sched, final, stages)
    return builder.finish(sched, [(outputs[0], final)], macs=macs,
                          op_names=tuple(n.op for n in group.nodes))
