"""Board record files: found by tag, read and checked against the schema.

A board record is ``boards/<vendor>/<board>.toml`` (package data of the wheel,
:func:`aot.resources.boards_dir`), checked against ``boards/schema.json``.
This module knows the files and their raw contents only: :func:`find_record`
resolves a canonical tag, an alias or a versioned tag (``qemu/mps2-an386:v1``)
to the record, :func:`read_record` reads and validates one file.  It builds
neither :class:`~aot.target.tags.Board` nor :class:`~aot.target.Target`: the
boards (:mod:`aot.target.tags`) are built from these records and hold
targets, and ``Target("vendor/board")`` (:mod:`aot.target.target`) takes the
record's target string from here, so the two never import each other.
"""

from __future__ import annotations

import functools
import hashlib
import json
import platform
import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aot.resources import boards_dir
from aot.target.errors import BoardError, suggest

if TYPE_CHECKING:
    import jsonschema

#: The boards shipped with the project (boards/ in the repository, package data
#: in the wheel; :func:`aot.resources.boards_dir` knows which).
BOARDS_DIR = boards_dir()

_VERSION = re.compile(r"v([0-9]+)")


#: The shipped records that passed the schema when they were last checked, by the
#: SHA-256 of their text (and the schema's): ``python -m aot.target.check_records``
#: writes it (:mod:`aot.target.check_records`), the tests say when it is stale.
CHECKED = BOARDS_DIR / "checked.json"


@functools.cache
def schema_text() -> str:
    """boards/schema.json's text."""
    return (BOARDS_DIR / "schema.json").read_text()


@functools.cache
def _schema() -> dict:
    return json.loads(schema_text())


def text_digest(text: str) -> str:
    """The SHA-256 of a record's (or the schema's) text, as :data:`CHECKED` lists it."""
    return hashlib.sha256(text.encode()).hexdigest()


@functools.cache
def _checked() -> dict[str, str]:
    """:data:`CHECKED`'s records (path under BOARDS_DIR -> digest), or none at all when
    the file is missing, unreadable or was written for another schema."""
    try:
        data = json.loads(CHECKED.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("schema") != text_digest(schema_text()) or \
            not isinstance(data.get("records"), dict):
        return {}
    return data["records"]


def _checked_before(path: Path, text: str) -> bool:
    """Whether ``path`` is a shipped record whose text passed the schema when
    :data:`CHECKED` was written: such a record is not validated again, which spares
    every command that names a board the jsonschema import (~60 ms).  Any other
    file, or a shipped one edited since, is validated."""
    try:
        rel = path.resolve().relative_to(BOARDS_DIR.resolve()).as_posix()
    except ValueError:
        return False
    return _checked().get(rel) == text_digest(text)


def _schema_error(path: Path, err: jsonschema.ValidationError) -> BoardError:
    where = ".".join(str(p) for p in err.absolute_path)
    if err.validator == "required":
        missing = [n for n in err.validator_value if n not in err.instance]
        field = ".".join(filter(None, [where, missing[0] if missing else ""]))
        return BoardError(f"{path}: missing required field {field!r}")
    if err.validator == "additionalProperties":
        allowed = sorted(err.schema.get("properties", {}))
        extra = [n for n in err.instance if n not in allowed]
        name = extra[0] if extra else "?"
        field = ".".join(filter(None, [where, name]))
        return BoardError(
            f"{path}: unknown field {field!r}{suggest(name, allowed)}; "
            f"allowed here: {', '.join(allowed)}"
        )
    if err.validator == "not":  # the platform forbids some sections (see the schema's allOf)
        forbidden = err.validator_value.get("anyOf", [err.validator_value])
        present = [n for alt in forbidden for n in alt.get("required", ()) if n in err.instance]
        fields = ", ".join(map(repr, present))
        one = len(present) == 1
        return BoardError(
            f"{path}: {'field' if one else 'fields'} {fields} {'does' if one else 'do'} not "
            f"apply to platform {err.instance.get('platform')!r}; remove {'it' if one else 'them'}"
        )
    return BoardError(f"{path}: field {where or '(top level)'!r}: {err.message}")


def read_record(path: str | Path, *, check: bool = False) -> dict[str, Any]:
    """The TOML of one board record, checked against the schema (unless it is a
    shipped record that passed it as it is now, :data:`CHECKED`; ``check``: always).

    A broken file raises :class:`BoardError` naming the file and the field.
    """
    path = Path(path)
    try:
        text = path.read_text()
        data = tomllib.loads(text)
    except OSError as err:
        raise BoardError(f"{path}: cannot read the board file: {err.strerror}") from None
    except tomllib.TOMLDecodeError as err:
        raise BoardError(f"{path}: not valid TOML: {err}") from None
    if not check and _checked_before(path, text):
        return data
    import jsonschema  # imported here: it costs ~60 ms and only board loading needs it

    errors = sorted(
        jsonschema.Draft202012Validator(_schema()).iter_errors(data),
        key=lambda e: (list(map(str, e.absolute_path)), e.validator),
    )
    if errors:
        raise _schema_error(path, errors[0])
    return data


def native_target_string() -> str:
    """What the word ``native`` in a record's target means: the target of the
    machine running aot, as the host's gcc sees it (``c -mtriple=x86_64-linux-gnu``)."""
    machine = platform.machine().lower()
    machine = {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
    system = "apple-darwin" if sys.platform == "darwin" else "linux-gnu"
    return f"c -mtriple={machine}-{system}"


def target_string(record: dict[str, Any]) -> str:
    """The record's target string, ``native`` resolved (:func:`native_target_string`)."""
    text = record["target"]
    return native_target_string() if text == "native" else text


@dataclass(frozen=True)
class RecordIndex:
    records: dict[str, tuple[Path, dict[str, Any]]]  # canonical tag -> (file, record), in tag order
    names: dict[str, str]  # canonical tag or alias -> canonical tag


@functools.cache
def record_index(folder: Path) -> RecordIndex:
    """Every record under ``folder`` (``<vendor>/<board>.toml``), by canonical tag;
    a tag that is not the file's path, or a tag or alias used twice, is refused."""
    records: dict[str, tuple[Path, dict[str, Any]]] = {}
    names: dict[str, str] = {}
    for path in sorted(folder.glob("*/*.toml")):
        data = read_record(path)
        expected = f"{path.parent.name}/{path.stem}"
        if data["tag"] != expected:
            raise BoardError(f"{path}: field 'tag': is {data['tag']!r}, the path says {expected!r}")
        for name in (data["tag"], *data.get("aliases", ())):
            if name in names:
                raise BoardError(f"{path}: tag or alias {name!r} is also used by {names[name]}")
            names[name] = data["tag"]
        records[data["tag"]] = (path, data)
    return RecordIndex(records, names)


def find_record(tag: str, folder: str | Path | None = None) -> tuple[Path, dict[str, Any]]:
    """The file and record of a canonical tag, an alias, or either with ``:vN``
    (the record's ``tag`` is the canonical one).

    An unknown tag or version raises :class:`BoardError` (a
    :class:`~aot.target.errors.TargetError`) with a close match and the
    known tags.
    """
    index = record_index(Path(folder or BOARDS_DIR).resolve())
    name, sep, version = tag.partition(":")
    canonical = index.names.get(name)
    if canonical is None:
        raise BoardError(
            f"unknown board tag {name!r}{suggest(name, index.names)}; "
            f"known tags: {', '.join(index.records)} (list them with `aot boards`)"
        )
    if sep:
        have = index.records[canonical][1]["version"]
        m = _VERSION.fullmatch(version)
        if m is None:
            raise BoardError(f"{tag!r}: a version is written :v1, :v2, ...")
        if int(m.group(1)) != have:
            raise BoardError(
                f"board {canonical} is at version v{have}, not {version}; "
                f"use {canonical}:v{have} or drop the version"
            )
    return index.records[canonical]

