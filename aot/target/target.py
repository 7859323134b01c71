"""The :class:`Target`: what the compiler generates code for.

A target is a kind (``c``, ``llvm``, ``composite``), a list of keys that
select schedules (``arm_cpu``, ``cpu``), typed attributes validated against
the kind (:mod:`aot.target.kinds`), an optional ``host`` target and an
optional board ``tag`` it came from.  It is immutable and has two canonical
forms that round-trip exactly:

- the string ``c -keys=arm_cpu,cpu -mcpu=cortex-m4 -mfloat-abi=hard``
  (grammar in :mod:`aot.target.grammar`): kind, ``-keys``, the attributes
  that differ from their default in name order, then ``-host={...}`` and
  ``-tag=...``;
- the JSON object ``{"keys": [...], "kind": "c", "mcpu": "cortex-m4"}``
  printed with sorted keys and no blanks.

Two targets are equal when their canonical JSON is equal, and
:meth:`Target.digest` is the SHA-256 of that JSON: the same in every process
and Python version, so it can key tuning records and artifacts.  Changing an
attribute's default changes what the canonical forms omit, so it is a
breaking change for stored records.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from aot.errors import one_of
from aot.target import grammar
from aot.target.errors import BoardError, TargetError, suggest
from aot.target.facts import Facts, derive, derived_keys
from aot.target.kinds import KINDS, AttrSpec, TargetKind
from aot.target.records import find_record, target_string

_KEY = re.compile(r"[a-z][a-z0-9_]*")
_TAG = re.compile(r"[a-z0-9][a-z0-9_.-]*/[a-z0-9][a-z0-9_.-]*(:v[0-9]+)?")
#: What a user may have meant as a board tag, loosely (any case, a version with or without
#: its ``v``): such a string goes to the board records, whose error says what is wrong with
#: it ("did you mean 'qemu/mps2-an386'?", "a version is written :v1"), not to the target parser.
_MEANT_TAG = re.compile(r"[\w.-]+/[\w.-]+(:v?\d+)?")
_TYPE_WORDS = {
    "str": "a string",
    "int": "an integer",
    "bool": "true or false",
    "list[str]": "a list of strings",
    "target": "a target",
    "list[target]": "a list of targets",
}


def looks_like_tag(text: str) -> bool:
    """True if ``text`` has the shape of a board tag (``vendor/board[:vN]``)."""
    return _TAG.fullmatch(text) is not None


def names_a_board(text: str) -> bool:
    """True if ``text`` was meant as a board tag rather than a target string: the shape of
    :func:`looks_like_tag`, loosely (a tag with a typo in it still names a board)."""
    return _MEANT_TAG.fullmatch(text) is not None


class Target:
    """An immutable, validated compilation target.

    ``Target(spec, host=None)`` accepts a target string, a JSON object as a
    string or a mapping, a board tag (``"qemu/mps2-an386"``: the board's
    target, recording the canonical tag) or another :class:`Target`.
    ``host`` sets the host target when ``spec`` has none.  Any problem raises
    :class:`~aot.target.errors.TargetError` naming the offending part.
    """

    __slots__ = ("_kind", "_keys", "_attrs", "_set", "_host", "_tag", "_json", "_facts")

    def __init__(self, spec: str | Mapping | Target, host: str | Mapping | Target | None = None):
        if isinstance(spec, Target):
            parts = (spec._kind, list(spec._keys), dict(spec._set), spec._host, spec._tag)
        elif isinstance(spec, Mapping):
            parts = _from_json(spec)
        elif isinstance(spec, str):
            parts = _from_text(spec)
        else:
            raise TargetError(f"cannot make a target from {type(spec).__name__}: {spec!r}")
        kind, keys, values, own_host, tag = parts
        if host is not None:
            if own_host is not None:
                raise TargetError("the target already has a host; give it only once")
            own_host = host if isinstance(host, Target) else Target(host)
        self._init(kind, keys, values, own_host, tag)

    def _init(self, kind: TargetKind, keys, values, host, tag) -> None:
        set_ = object.__setattr__
        for name in kind.required:
            if not values.get(name):
                raise TargetError(f"a {kind.name!r} target needs -{name}")
        if host is not None and host._host is not None:
            raise TargetError(f"a host target cannot have a host of its own: {host}")
        for name, value in values.items():
            spec = kind.attr(name)
            if spec.choices and value not in spec.choices:
                raise TargetError(
                    f"-{name}={value} is not allowed{suggest(value, spec.choices, f'-{name}=')}; "
                    f"{one_of(spec.choices)}"
                )
        if tag is not None and not looks_like_tag(tag):
            raise TargetError(f"-tag={tag} is not a board tag (vendor/board or vendor/board:vN)")
        explicit = {n: v for n, v in values.items() if v != kind.attr(n).default}
        attrs = {a.name: explicit.get(a.name, a.default) for a in kind.attrs}
        facts = derive(attrs) if kind.device_type != "composite" else Facts()
        all_keys = [*keys, *derived_keys(attrs, facts), *kind.default_keys]
        set_(self, "_kind", kind)
        set_(self, "_keys", tuple(dict.fromkeys(all_keys)))
        set_(self, "_attrs", MappingProxyType(attrs))
        set_(self, "_set", MappingProxyType(dict(sorted(explicit.items()))))
        set_(self, "_host", host)
        set_(self, "_tag", tag)
        set_(self, "_facts", facts)
        set_(
            self,
            "_json",
            json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=True),
        )

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Target is immutable; use with_host() or with_tag()")

    # -- identity ---------------------------------------------------------
    @property
    def kind(self) -> str:
        """The kind's name (``"c"``)."""
        return self._kind.name

    @property
    def kind_spec(self) -> TargetKind:
        return self._kind

    @property
    def keys(self) -> tuple[str, ...]:
        """Schedule-selection keys, most specific first (``("arm_cpu", "cpu")``)."""
        return self._keys

    @property
    def attrs(self) -> Mapping[str, Any]:
        """Every attribute of the kind: the value set, else its default (None if unset)."""
        return self._attrs

    @property
    def host(self) -> Target | None:
        return self._host

    @property
    def tag(self) -> str | None:
        """The canonical board tag this target was resolved from, if any."""
        return self._tag

    @property
    def device_type(self) -> str:
        return self._kind.device_type

    @property
    def targets(self) -> tuple[Target, ...]:
        """The members of a composite target; ``(self,)`` for any other kind."""
        return self._attrs["targets"] if self.kind == "composite" else (self,)

    def with_host(self, host: str | Mapping | Target | None) -> Target:
        """The same target with another host (None removes it)."""
        new = object.__new__(Target)
        h = None if host is None else host if isinstance(host, Target) else Target(host)
        new._init(self._kind, list(self._keys), dict(self._set), h, self._tag)
        return new

    def with_tag(self, tag: str | None) -> Target:
        """The same target recording another board tag (None removes it)."""
        new = object.__new__(Target)
        new._init(self._kind, list(self._keys), dict(self._set), self._host, tag)
        return new

    def refined_by(self, other: str | Mapping | Target, *, where: str = "the board") -> Target:
        """This target (a board's) with what ``other`` adds (``--board B --target T``).

        ``other`` must be of the same kind and may not contradict it: every
        attribute it sets is either unset here (added, e.g. ``-libs``) or set
        to the same value (``-mcpu=cortex-m4`` on a Cortex-M4 board); keys it
        names that this target lacks go first.  A host or tag of its own is
        refused (the board fixes both).  ``where`` names this target in errors.
        """
        other = other if isinstance(other, Target) else Target(other)
        if other.kind != self.kind:
            raise TargetError(f"--target {other} is a {other.kind!r} target and {where} is "
                              f"{self.kind!r}: a --target given with --board refines the "
                              f"board's target and keeps its kind (use --codegen to switch "
                              f"the code generator)")
        if other._host is not None or other._tag is not None:
            raise TargetError(f"--target {other}: a target refining {where} cannot set "
                              "-host or -tag")
        values = dict(self._set)
        for name, value in other._set.items():
            mine = self._set.get(name)
            if mine is not None and mine != value:
                spec = self._kind.attr(name)
                raise TargetError(
                    f"--target sets -{name}={_value_to_text(spec, value)} but {where} has "
                    f"-{name}={_value_to_text(spec, mine)}: a --target given with --board "
                    "may add attributes, not change them (drop --board to compile for "
                    "another processor)")
            values[name] = value
        keys = [k for k in other._keys if k not in self._keys] + list(self._keys)
        new = object.__new__(Target)
        new._init(self._kind, keys, values, self._host, self._tag)
        return new

    # -- derived facts ------------------------------------------------------
    @property
    def facts(self) -> Facts:
        return self._facts

    @property
    def isa(self) -> str | None:
        """Instruction set: thumbv6m, thumbv7m, thumbv7em, thumbv8.1m.main, rv32imac, x86_64..."""
        return self._facts.isa

    @property
    def family(self) -> str | None:
        """``arm``, ``riscv``, ``x86`` or ``aarch64``."""
        return self._facts.family

    @property
    def float_abi(self) -> str | None:
        return self._facts.float_abi

    @property
    def fpu(self) -> str | None:
        """The FPU generated code may use (``fpv4-sp-d16``, ``f``, ``sse2``), else None."""
        return self._facts.fpu

    @property
    def has_fpu(self) -> bool:
        return self._facts.fpu is not None

    @property
    def has_dsp(self) -> bool:
        """The Arm DSP (SIMD32) extension: SMLAD, SXTB16, SSAT..."""
        return self._facts.has_dsp

    @property
    def has_mve(self) -> bool:
        """Arm Helium, the M-profile vector extension."""
        return self._facts.has_mve

    @property
    def pointer_bits(self) -> int | None:
        return self._facts.pointer_bits

    @property
    def vector_bytes(self) -> int | None:
        """Natural SIMD width in bytes (16 MVE, 4 DSP, 16/32 x86_64...)."""
        return self._facts.vector_bytes

    @property
    def triple(self) -> str | None:
        """LLVM triple: ``-mtriple`` or derived (``thumbv7em-none-eabihf``)."""
        return self._facts.triple

    # -- canonical forms ----------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The canonical JSON object (plain dicts, lists, str, int, bool)."""
        out: dict[str, Any] = {"kind": self.kind, "keys": list(self._keys)}
        for name, value in self._set.items():
            out[name] = _value_to_json(self._kind.attr(name), value)
        if self._host is not None:
            out["host"] = self._host.to_dict()
        if self._tag is not None:
            out["tag"] = self._tag
        return out

    def to_json(self) -> str:
        """The canonical JSON text: sorted keys, no blanks, ASCII only."""
        return self._json

    def digest(self) -> str:
        """SHA-256 hex digest of the canonical JSON, stable across processes."""
        return hashlib.sha256(self._json.encode("ascii")).hexdigest()

    def __str__(self) -> str:
        parts = [self.kind]
        if self._keys:
            parts.append("-keys=" + ",".join(self._keys))
        for name, value in self._set.items():
            parts.append(f"-{name}={_value_to_text(self._kind.attr(name), value)}")
        if self._host is not None:
            parts.append(f"-host={{{self._host}}}")
        if self._tag is not None:
            parts.append(f"-tag={self._tag}")
        return " ".join(parts)

    def __repr__(self) -> str:
        return f"Target({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Target) and other._json == self._json

    def __hash__(self) -> int:
        return hash(self._json)

    def __reduce__(self):
        return (Target, (self._json,))


# -- building from the two syntaxes -------------------------------------------
def _from_text(text: str):
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            obj = json.loads(stripped)
        except json.JSONDecodeError as err:
            raise TargetError(f"bad target JSON: {err}") from None
        if not isinstance(obj, dict):
            raise TargetError("a target JSON must be an object")
        return _from_json(obj)
    if stripped and "/" in stripped.split()[0]:
        return _from_tag(stripped)
    return _from_raw(grammar.parse(text))


def _from_tag(text: str):
    if len(text.split()) > 1:
        raise TargetError(
            f"{text!r}: a board tag stands alone; write the board's target string "
            "(aot target show TAG) to change its attributes"
        )
    t = _board_target(text)
    return t._kind, list(t._keys), dict(t._set), t._host, t._tag


@functools.cache
def _board_target(tag: str) -> Target:
    """The target of the board record ``tag`` names, parsed once per tag
    (:mod:`aot.target.records` finds the record; :mod:`aot.target.tags` builds the rest)."""
    path, record = find_record(tag)
    try:
        return Target(target_string(record)).with_tag(record["tag"])
    except TargetError as err:   # the record's fault, not the caller's: name its file
        raise BoardError(f"{path}: field 'target': {err}") from None


def _from_raw(raw: grammar.RawTarget):
    kind = KINDS.get(raw.kind)
    keys: list[str] = []
    values: dict[str, Any] = {}
    host = tag = None
    seen: set[str] = set()
    for name, items in raw.options:
        if name in seen:
            raise TargetError(f"-{name} is given twice")
        seen.add(name)
        if name == "keys":
            keys = _keys_from(_text_list(name, items), "-")
        elif name == "host":
            host = _text_target(name, items)
        elif name == "tag":
            tag = _text_str(name, items)
        else:
            spec = kind.attr(name, "-")
            values[name] = _value_from_text(spec, items)
    return kind, keys, values, host, tag


def _from_json(obj: Mapping):
    if "kind" not in obj:
        raise TargetError(f'a target JSON object needs "kind": {dict(obj)!r}')
    if not isinstance(obj["kind"], str):
        raise TargetError(f'"kind" must be a string, got {obj["kind"]!r}')
    kind = KINDS.get(obj["kind"])
    keys: list[str] = []
    values: dict[str, Any] = {}
    host = tag = None
    for name, value in obj.items():
        if name == "kind":
            continue
        if not isinstance(name, str):
            raise TargetError(f"attribute names must be strings, got {name!r}")
        if name == "keys":
            if not isinstance(value, list) or not all(isinstance(k, str) for k in value):
                raise TargetError(f'"keys" expects a list of strings, got {value!r}')
            keys = _keys_from(value, "")
        elif name == "host":
            host = _json_target(name, value)
        elif name == "tag":
            if not isinstance(value, str):
                raise TargetError(f'"tag" expects a string, got {value!r}')
            tag = value
        else:
            values[name] = _value_from_json(kind.attr(name, ""), value)
    return kind, keys, values, host, tag


def _keys_from(keys: list[str], prefix: str) -> list[str]:
    for k in keys:
        if not _KEY.fullmatch(k):
            raise TargetError(f"{prefix}keys: {k!r} is not a key (lower case, digits, _)")
    return keys


# -- typed values ---------------------------------------------------------------
def _type_error(name: str, type_: str, got: Any, prefix: str) -> TargetError:
    return TargetError(f"{prefix}{name} expects {_TYPE_WORDS[type_]}, got {got!r}")


def _text_str(name: str, items: list | None) -> str:
    if items is None:
        raise TargetError(f"-{name} needs a value: -{name}=VALUE")
    if not items:
        return ""
    if len(items) != 1 or not isinstance(items[0], str):
        raise TargetError(
            f"-{name} expects a string, got {len(items)} items; "
            'quote a value that contains commas: -name="a,b"'
        )
    return items[0]


def _text_list(name: str, items: list | None) -> list[str]:
    if items is None:
        raise TargetError(f"-{name} needs a value: -{name}=A,B")
    if not all(isinstance(i, str) for i in items):
        raise TargetError(f"-{name} expects a list of strings, got a nested target")
    return list(items)


def _text_target(name: str, items: list | None) -> Target:
    if not items or len(items) != 1 or not isinstance(items[0], grammar.RawTarget):
        raise TargetError(f"-{name} expects one target in braces: -{name}={{c -mcpu=...}}")
    return _raw_target(items[0])


def _raw_target(raw: grammar.RawTarget) -> Target:
    new = object.__new__(Target)
    new._init(*_from_raw(raw))
    return new


def _value_from_text(spec: AttrSpec, items: list | None) -> Any:
    name, type_ = spec.name, spec.type
    if type_ == "bool":
        if items is None:
            return True
        text = _text_str(name, items).lower()
        if text in ("true", "1"):
            return True
        if text in ("false", "0"):
            return False
        raise _type_error(name, type_, text, "-")
    if type_ == "int":
        text = _text_str(name, items)
        try:
            return int(text)
        except ValueError:
            raise _type_error(name, type_, text, "-") from None
    if type_ == "str":
        return _text_str(name, items)
    if type_ == "list[str]":
        return tuple(_text_list(name, items))
    if type_ == "target":
        return _text_target(name, items)
    if items is None or not all(isinstance(i, grammar.RawTarget) for i in items):
        raise TargetError(f"-{name} expects targets in braces: -{name}={{c}},{{llvm}}")
    return tuple(_raw_target(i) for i in items)


def _json_target(name: str, value: Any) -> Target:
    if isinstance(value, Mapping | str):
        return Target(value)
    raise _type_error(name, "target", value, "")


def _value_from_json(spec: AttrSpec, value: Any) -> Any:
    name, type_ = spec.name, spec.type
    ok = {
        "bool": lambda v: isinstance(v, bool),
        "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "str": lambda v: isinstance(v, str),
        "list[str]": lambda v: isinstance(v, list) and all(isinstance(i, str) for i in v),
        "target": lambda v: isinstance(v, Mapping | str),
        "list[target]": lambda v: isinstance(v, list),
    }[type_]
    if not ok(value):
        raise _type_error(name, type_, value, "")
    if type_ == "list[str]":
        return tuple(value)
    if type_ == "target":
        return Target(value)
    if type_ == "list[target]":
        return tuple(_json_target(name, v) for v in value)
    return value


def _value_to_text(spec: AttrSpec, value: Any) -> str:
    if spec.type == "bool":
        return "true" if value else "false"
    if spec.type == "int":
        return str(value)
    if spec.type == "str":
        return grammar.quote(value)
    if spec.type == "list[str]":
        return ",".join(grammar.quote(v) for v in value)
    if spec.type == "target":
        return f"{{{value}}}"
    return ",".join(f"{{{t}}}" for t in value)


def _value_to_json(spec: AttrSpec, value: Any) -> Any:
    if spec.type == "list[str]":
        return list(value)
    if spec.type == "target":
        return value.to_dict()
    if spec.type == "list[target]":
        return [t.to_dict() for t in value]
    return value
