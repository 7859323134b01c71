"""Lowering one fused group: compute rules in node order, a strategy's schedule, C."""

from __future__ import annotations

from aot import te
from aot.codegen.c import resolve_target
from aot.ir import Node, Tensor
from aot.kernels.kernel import Kernel, KernelBuilder, KernelError
from aot.kernels.registry import COMPUTES, HANDWRITTEN, select_strategy
from aot.passes.annotated import FusedGroup, QuantParams, annotations
from aot.te.tensor import ComputeOp


class GroupContext:
    """What a compute rule sees: the values of tensors and the folded constants."""

    def __init__(self, group: FusedGroup, graph, builder: KernelBuilder):
        self.group, self.graph, self.builder = group, graph, builder
        self.env: dict[int, te.Tensor] = {}

    def value(self, t: Tensor, shape=None) -> te.Tensor:
        """The tensor expression of ``t``: computed earlier in the group, or a
        kernel input (run-time tensors) or constant (weights) viewed as ``shape``."""
        if id(t) in self.env:
            return self.env[id(t)]
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

    _, target_obj = resolve_target(target)
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
