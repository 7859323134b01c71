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

The parts of a row split read the layer's whole weights, bias and
requantization tables, in the same packed layout: each part's lowering makes
the same arrays.  :func:`share_constants` keeps one copy: a part's array
equal value for value (element type, shape and values) to an array of an
earlier part is declared ``extern`` and read from that part's file, which
defines it without ``static`` (:class:`~aot.kernels.kernel.KernelConstant`'s
``linkage``).  A channel split's parts hold different slices and share
only what happens to be equal.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from aot.kernels.group import lower_group
from aot.kernels.kernel import Kernel, KernelConstant, KernelError
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
    shared = share_constants([p.kernel for p in parts])
    return tuple(replace(p, kernel=k) for p, k in zip(parts, shared, strict=True))


def share_constants(kernels: list[Kernel]) -> list[Kernel]:
    """``kernels`` with one copy of the constant arrays they have equal: an array
    equal in element type, shape and values to one an earlier kernel defines is
    declared (``extern``) and read from there, and that one is defined ``shared``."""
    homes: dict[tuple, str] = {}   # (dtype, shape, bytes) -> the defining array's name
    declared: set[str] = set()     # the arrays some kernel declares
    constants = []
    for k in kernels:
        own, mine = [], {}
        for c in k.constants:
            key = (c.data.dtype.str, c.data.shape, c.data.tobytes())
            if not c.defined:      # already another kernel's
                own.append(c)
            elif key in homes:
                declared.add(homes[key])
                own.append(KernelConstant(homes[key], c.data, "extern"))
            else:
                mine.setdefault(key, c.name)
                own.append(c)
        homes = mine | homes       # an earlier kernel's array stays the home
        constants.append(own)
    return [replace(k, constants=tuple(replace(c, linkage="shared")
                                       if c.defined and c.name in declared else c
                                       for c in own))
            for k, own in zip(kernels, constants, strict=True)]
