"""The registry of target kinds and the attributes each kind accepts.

A *kind* names the code generator a target is for (``c``, ``llvm``) or a
grouping of targets (``composite``).  Each kind declares, once, every
attribute it accepts with its type and default, the keys every target of the
kind carries, and the kind of device its code runs on.  Targets are
validated against this declaration when they are built, so a typo or a
wrong type is reported where the user wrote it.

The registry is explicit: :data:`KINDS` is filled in this module by plain
calls to :meth:`KindRegistry.register`, which refuses a name it already has.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from aot.target.errors import TargetError, suggest

#: The value types an attribute may declare.  ``target`` values are nested
#: targets (``-host``); ``list[target]`` is a list of them (``-targets``).
ATTR_TYPES = ("str", "int", "bool", "list[str]", "target", "list[target]")

#: Options every kind accepts; they are fields of the target itself rather
#: than entries of its ``attrs``.
COMMON_OPTIONS = ("keys", "host", "tag")


@dataclass(frozen=True)
class AttrSpec:
    """One attribute of a kind: its name as written after ``-``, type, default.

    ``choices``, when given, lists the only values a ``str`` attribute takes.
    """

    name: str
    type: str
    default: Any = None
    help: str = ""
    choices: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.type not in ATTR_TYPES:
            raise ValueError(f"attribute {self.name}: unknown type {self.type!r}")
        if self.name in COMMON_OPTIONS:
            raise ValueError(f"attribute {self.name}: the name is reserved")


@dataclass(frozen=True)
class TargetKind:
    """A kind of target.

    ``default_keys`` end every target's key list; ``device_type`` is the kind
    of device the generated code runs on (``"cpu"``), or ``"composite"`` for a
    kind that only groups other targets.  ``required`` lists attributes that
    must be given.
    """

    name: str
    attrs: tuple[AttrSpec, ...]
    default_keys: tuple[str, ...] = ()
    device_type: str = "cpu"
    required: tuple[str, ...] = ()
    help: str = ""
    _by_name: dict[str, AttrSpec] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_name = {a.name: a for a in self.attrs}
        if len(by_name) != len(self.attrs):
            raise ValueError(f"kind {self.name}: an attribute is declared twice")
        object.__setattr__(self, "_by_name", by_name)

    def attr(self, name: str, prefix: str = "-") -> AttrSpec:
        """The declaration of ``name``; a :class:`TargetError` if there is none."""
        try:
            return self._by_name[name]
        except KeyError:
            allowed = sorted([*self._by_name, *COMMON_OPTIONS])
            raise TargetError(
                f"target kind {self.name!r} has no attribute {prefix}{name}"
                f"{suggest(name, allowed, prefix)}; allowed: "
                + ", ".join(prefix + a for a in allowed)
            ) from None

    def attr_names(self) -> tuple[str, ...]:
        return tuple(self._by_name)


class KindRegistry:
    """Target kinds by name; registering a name twice is an error."""

    def __init__(self) -> None:
        self._kinds: dict[str, TargetKind] = {}

    def register(self, kind: TargetKind) -> TargetKind:
        if kind.name in self._kinds:
            raise ValueError(f"target kind {kind.name!r} is already registered")
        self._kinds[kind.name] = kind
        return kind

    def get(self, name: str) -> TargetKind:
        """The kind called ``name``; a :class:`TargetError` naming the choices."""
        try:
            return self._kinds[name]
        except KeyError:
            raise TargetError(
                f"unknown target kind {name!r}{suggest(name, self._kinds)}; "
                f"known kinds: {', '.join(sorted(self._kinds))}"
            ) from None

    def __contains__(self, name: object) -> bool:
        return name in self._kinds

    def __iter__(self) -> Iterator[TargetKind]:
        return iter(self._kinds.values())

    def names(self) -> list[str]:
        return sorted(self._kinds)


# Attributes shared by the kinds that generate code for one processor.  They
# use the names of the GCC/LLVM options they correspond to, so a board's
# target string reads like its compiler flags.
_CPU_ATTRS = (
    AttrSpec("device", "str", help="device class; its value is added to the keys"),
    AttrSpec("model", "str", help="board or SoC model, informative"),
    AttrSpec("mcpu", "str", help="processor, as for -mcpu (cortex-m4, cortex-m55+nomve)"),
    AttrSpec("march", "str", help="architecture, as for -march (rv32imac, armv7e-m)"),
    AttrSpec("mtriple", "str", help="target triple (thumbv7em-none-eabihf, x86_64-linux-gnu)"),
    AttrSpec(
        "mabi",
        "str",
        help="RISC-V ABI, as for -mabi (ilp32)",
        choices=("ilp32", "ilp32e", "ilp32f", "ilp32d", "lp64", "lp64f", "lp64d"),
    ),
    AttrSpec(
        "mfloat-abi",
        "str",
        help="Arm float ABI: soft, softfp or hard",
        choices=("soft", "softfp", "hard"),
    ),
    AttrSpec("mfpu", "str", help="Arm FPU, as for -mfpu (fpv4-sp-d16)"),
    AttrSpec("mattr", "list[str]", (), help="extra features, LLVM style (+dsp,-mve,+avx2)"),
    AttrSpec("libs", "list[str]", (), help="external codegens that implement the layers "
             "they support, in order of preference (cmsis-nn; docs/byoc.md)"),
    AttrSpec("workspace-byte-alignment", "int",
             help="alignment of the planned workspace's buffers (default: the vector width, "
                  "else 16)"),
    AttrSpec("constants-byte-alignment", "int",
             help="alignment of the kernels' constant arrays (default 8)"),
)

#: The kinds whose code generator a board's target can be switched to (``--codegen``,
#: :func:`aot.compile.resolve_target`).
CODEGENS = ("c", "llvm")

KINDS = KindRegistry()
KINDS.register(
    TargetKind(
        "c",
        _CPU_ATTRS,
        default_keys=("cpu",),
        help="portable C99 compiled by the board's cross compiler",
    )
)
KINDS.register(
    TargetKind(
        "llvm",
        _CPU_ATTRS
        + (
            AttrSpec("opt-level", "int", 3, help="LLVM optimisation level 0-3"),
            AttrSpec("fast-math", "bool", False, help="allow reassociating float math"),
            AttrSpec("system-lib", "bool", False, help="register functions in a system library"),
        ),
        default_keys=("cpu",),
        help="LLVM IR compiled by MCJIT for this machine, or to objects for Cortex-M and "
             "RISC-V boards (docs/codegen.md)",
    )
)
KINDS.register(
    TargetKind(
        "composite",
        (AttrSpec("targets", "list[target]", (), help="the targets grouped together"),),
        device_type="composite",
        required=("targets",),
        help="several targets compiled together (heterogeneous execution)",
    )
)
