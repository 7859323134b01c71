"""Where an operator runs: the device annotation a placement pass gives it.

A :class:`DeviceAnnotation` says which device (``kind``, ``core``) computes
which part of one operator's output, and the memory scope its buffers must
live in.  An operator that is not split has one annotation covering its
whole output; a split one has one per core, each covering a disjoint
contiguous range of the output (``part``):

* ``rows``: output rows ``[start, stop)`` of an NHWC output of batch 1
  (conv2d, depthwise_conv2d and what fused after them).  Row ``h`` of an
  NHWC tensor of batch 1 is the bytes ``[h * W * C, (h + 1) * W * C)``, so a
  core's part is one contiguous slice of the output buffer;
* ``channels``: output channels ``[start, stop)`` of a dense layer of batch 1
  (its output ``[1, units]`` is one row, so the channels are contiguous too);
* ``whole``: the whole output (``start = 0``, ``stop`` the output's size along
  no axis in particular: 1).

The graph IR defines the annotation; :func:`aot.passes.place_cores` assigns
it (docs/targets.md, "Several cores of one board").
"""

from __future__ import annotations

from dataclasses import dataclass

from aot.ir.types import IRError

#: How an operator's output may be divided between devices.
PARTS = ("whole", "rows", "channels")

#: Memory scopes: ``shared`` is memory every core of the board reaches at one
#: address (the board record's ``cores.shared``); ``local`` memory one core only.
SCOPES = ("shared", "local")


@dataclass(frozen=True)
class DeviceAnnotation:
    """One device's part of one operator (see the module docstring)."""

    kind: str = "cpu"
    core: int = 0
    scope: str = "shared"
    part: str = "whole"
    start: int = 0
    stop: int = 1

    def __post_init__(self) -> None:
        if self.part not in PARTS:
            raise IRError(f"device annotation: part {self.part!r} is not one of "
                          f"{', '.join(PARTS)}")
        if self.scope not in SCOPES:
            raise IRError(f"device annotation: memory scope {self.scope!r} is not one of "
                          f"{', '.join(SCOPES)}")
        if self.core < 0:
            raise IRError(f"device annotation: core {self.core} is negative")
        if not 0 <= self.start < self.stop:
            raise IRError(f"device annotation: empty or negative range "
                          f"[{self.start}, {self.stop})")

    def __str__(self) -> str:
        where = f"{self.kind}:{self.core}"
        if self.part != "whole":
            where += f" {self.part}[{self.start}:{self.stop}]"
        return f"{where} {self.scope}"
