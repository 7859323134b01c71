"""Writing ``boards/checked.json`` (after a board record or the schema changed).

:func:`aot.target.records.read_record` skips the schema for a shipped record whose
text is listed there, so that commands naming a board need not import jsonschema.
``python -m aot.target.check_records`` validates every shipped record and writes
the file; :func:`checked_stale` (run by the tests) says when that was forgotten.
"""

from __future__ import annotations

import json

from aot.target.records import BOARDS_DIR, CHECKED, text_digest, schema_text, read_record


def checked_records() -> dict:
    """What :data:`CHECKED` holds for the records shipped now: each one validated
    against the schema (a broken record raises its :class:`BoardError`)."""
    records = {}
    for path in sorted(BOARDS_DIR.glob("*/*.toml")):
        read_record(path, check=True)
        records[path.relative_to(BOARDS_DIR).as_posix()] = text_digest(path.read_text())
    return {"schema": text_digest(schema_text()), "records": records}


def checked_stale() -> str | None:
    """None when :data:`CHECKED` lists exactly the shipped records as they are, else
    what to run (the test suite fails on it)."""
    try:
        written = json.loads(CHECKED.read_text())
    except (OSError, ValueError):
        written = None
    if written != checked_records():
        return (f"{CHECKED.name} does not list the board records as they are: after "
                "editing a record or the schema, run python -m aot.target.check_records")
    return None


def main() -> int:
    """Validate every shipped record and write :data:`CHECKED`."""
    data = checked_records()
    CHECKED.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"{len(data['records'])} board records pass {BOARDS_DIR / 'schema.json'}; "
          f"wrote {CHECKED}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
