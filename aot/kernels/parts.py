"""The kernels of a split group's parts: one per core, and where its arguments start.

A group :func:`aot.passes.place_cores` split across cores is lowered whole
(what one core runs today) and, for the hand-over to the cores, once per
part: :func:`aot.passes.part_group` gives the part as a group of its own
(the same compute on the part's rows or channels, its slice of the weights
for a channel split), which :func:`~aot.kernels.group.lower_group` lowers
like any group.  The kernel headers do not change: a part's kernel is a
smaller instance of the layer.

Each argument of a part's kernel is a contiguous slice of a tensor of the
whole graph (batch 1), so :class:`PartKernel` records, per parameter, that
tensor and the byte offset of the slice in it: core ``k`` calls its kernel
with the whole tensors' addresses plus these offsets (the input rows its
windows read, the halo included, and its rows or channels of the output).
The memory plan keeps a split step's output apart from its inputs
(:mod:`aot.executor.memory`), so the parts' arguments never overlap one
another's outputs.
"""

from __future__ import annotations

from dataclasses import dataclass

from aot.kernels.group import lower_group
from aot.kernels.kernel import Kernel, KernelError
from aot.passes import annotations, part_group
from aot.passes.annotated import FusedGroup


@dataclass(frozen=True)
class PartArg:
    """Where one argument of a part's kernel starts: ``offset`` bytes into the
    whole graph's tensor ``tensor``."""

    tensor: str
    offset: int


@dataclass(frozen=True)
class PartKernel:
    """Core ``core``'s kernel for its part of a split group, and its arguments
    (one :class:`PartArg` per ``kernel.params``, in order)."""

    core: int
    kernel: Kernel
    args: tuple[PartArg, ...]


def lower_parts(group: FusedGroup, graph, target, *, name: str,
                lower=lower_group) -> tuple[PartKernel, ...]:
    """The kernels of ``group``'s parts, in core order, each named ``{name}_p{core}``;
    empty when the placement left the group whole.  ``lower`` is the kernel
    library's :func:`~aot.kernels.group.lower_group` (the compiler passes its own)."""
    devices = annotations(graph).devices(group.nodes[0])
    if len(devices) < 2:
        return ()
    parts = []
    for device in devices:
        part = part_group(group, graph, device)
        [pg] = part.graph.annotations.groups
        kernel = lower(pg, part.graph, target, name=f"{name}_p{device.core}")
        args = []
        for p in kernel.params:
            if p.tensor not in part.windows:
                raise KernelError(f"kernel {kernel.name} of {group.name}'s part on core "
                                  f"{device.core} takes {p.tensor!r}, which is no slice of "
                                  "a tensor of the whole graph")
            whole, offset = part.windows[p.tensor]
            args.append(PartArg(whole.name, offset))
        parts.append(PartKernel(device.core, kernel, tuple(args)))
    return tuple(parts)
