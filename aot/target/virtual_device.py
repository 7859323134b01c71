"""Virtual devices: a target paired with a device id.

A heterogeneous program places each operator on a *virtual device*, written
``"label"`` or ``"label:id"``: the label names a target (a board tag or
alias, or a label registered in a :class:`TargetLabels`), the id tells apart
several devices with the same target (two identical cores).  ``"label"``
means id 0.  What an id maps to at run time is left to the runtime.

Board tags may carry a version (``qemu/mps2-an386:v1``), so the id is only
what follows the last ``:`` when it is all digits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from aot.target.errors import TargetError, suggest
from aot.target.tags import load_board
from aot.target.target import Target, looks_like_tag

_LABEL = re.compile(r"[a-z][a-z0-9_.-]*")


class TargetLabels:
    """Targets registered under short labels (``"dsp"``, ``"accel"``).

    Labels have no ``/``, so they never clash with board tags.  Registering a
    label twice is an error.  Pass an instance to :meth:`VirtualDevice.parse`;
    the module-level :data:`LABELS` is the default, empty until a caller
    (a command line option, a test) registers labels.
    """

    def __init__(self) -> None:
        self._targets: dict[str, Target] = {}

    def register(self, label: str, target: Target | str) -> Target:
        if not _LABEL.fullmatch(label):
            raise TargetError(f"{label!r} is not a target label (lower case, digits, _ . -)")
        if label in self._targets:
            raise TargetError(f"target label {label!r} is already registered")
        self._targets[label] = target if isinstance(target, Target) else Target(target)
        return self._targets[label]

    def get(self, label: str) -> Target | None:
        return self._targets.get(label)

    def labels(self) -> list[str]:
        return sorted(self._targets)


LABELS = TargetLabels()


@dataclass(frozen=True)
class VirtualDevice:
    """A (target, device id) pair; ``label`` is how it is written.

    Two virtual devices are equal when their targets and ids are; the
    label (canonical tag or registered label) is only for printing.
    """

    target: Target
    device_id: int = 0
    label: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not self.label:
            if self.target.tag is None:
                raise TargetError("a virtual device needs a label or a target with a tag")
            object.__setattr__(self, "label", self.target.tag)
        if self.device_id < 0:
            raise TargetError(f"a device id is 0 or more, not {self.device_id}")

    @classmethod
    def parse(cls, text: str, labels: TargetLabels | None = None) -> VirtualDevice:
        """Parse ``"label"`` or ``"label:id"``; unknown labels raise TargetError."""
        labels = LABELS if labels is None else labels
        label, device_id = text.strip(), 0
        head, sep, tail = label.rpartition(":")
        if sep and tail.isdigit():
            label, device_id = head, int(tail)
        elif sep and not looks_like_tag(label):
            raise TargetError(f"{text!r}: the device id after ':' must be a number")
        target = labels.get(label)
        if target is not None:
            return cls(target, device_id, label)
        if "/" in label:
            board = load_board(label)
            version = label.partition(":")[2]
            shown = board.tag + (f":{version}" if version else "")
            return cls(board.target, device_id, shown)
        raise TargetError(
            f"unknown target label {label!r}{suggest(label, labels.labels())}; "
            f"registered labels: {', '.join(labels.labels()) or '(none)'}; "
            "a board tag (vendor/board) works too"
        )

    def __str__(self) -> str:
        return self.label if self.device_id == 0 else f"{self.label}:{self.device_id}"
