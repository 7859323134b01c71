"""Tuning records: one JSON object per line, appended as results arrive.

A line::

    {"version": 1, "workload": "conv2d:c5c0b3fb1c54f068",
     "description": "conv2d 1x49x10x1 * 64x10x4x1 -> 1x25x5x64",
     "target": "c -keys=arm_cpu,cpu -mcpu=cortex-m4 ...", "board": "qemu/mps2-an386",
     "config": {"tile": "row", ...}, "status": "ok", "cost": 1054457,
     "unit": "instructions", "timings": [...], "error": "", "time": 1763790000.0}

Records are keyed by workload and by the canonical target string
(``str(Target)``): a log may hold several targets, and only the records of
the target being compiled for apply.  A session appends every result as
soon as it is measured, so an interrupted session resumes from its log:
the configs already measured are not measured again.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from aot.tune.errors import TuneError

VERSION = 1


@dataclass(frozen=True)
class Record:
    workload: str
    description: str
    target: str
    board: str | None
    config: dict
    status: str
    cost: int | None
    unit: str
    timings: tuple = ()
    error: str = ""
    time: float = 0.0

    def to_json(self) -> dict:
        return {"version": VERSION, "workload": self.workload,
                "description": self.description, "target": self.target, "board": self.board,
                "config": self.config, "status": self.status, "cost": self.cost,
                "unit": self.unit, "timings": list(self.timings), "error": self.error,
                "time": self.time}


def from_result(workload, board, result) -> Record:
    """The record of one :class:`aot.tune.measure.Result`."""
    return Record(workload.key, workload.description, str(workload.target),
                  board.tag if board is not None else None, result.config.to_json(),
                  result.status, result.cost, result.unit, tuple(result.timings),
                  result.error, time.time())


def append(path, records) -> None:
    """Append ``records`` to the log at ``path`` (created if missing), flushed."""
    with open(path, "a") as f:
        for r in records:
            f.write(json.dumps(r.to_json(), sort_keys=True) + "\n")
        f.flush()


def load(path) -> list[Record]:
    """Every record of the log; a :class:`TuneError` naming the line of a broken one."""
    path = Path(path)
    if not path.is_file():
        raise TuneError(f"tuning log {path} does not exist; make one with `aot tune`")
    out = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            if obj.get("version") != VERSION:
                raise ValueError(f"version {obj.get('version')!r}, expected {VERSION}")
            out.append(Record(obj["workload"], obj.get("description", ""), obj["target"],
                              obj.get("board"), dict(obj["config"]), obj["status"],
                              obj.get("cost"), obj.get("unit", ""),
                              tuple(obj.get("timings", ())), obj.get("error", ""),
                              obj.get("time", 0.0)))
        except (ValueError, KeyError, TypeError, AttributeError) as err:
            raise TuneError(f"{path}:{number}: not a tuning record ({err})") from None
    return out


def for_target(records: list[Record], target) -> tuple[list[Record], list[str]]:
    """The records made for ``target``, and messages about the others (made for
    other targets, ignored)."""
    want = str(target)
    mine = [r for r in records if r.target == want]
    others: dict[str, int] = {}
    for r in records:
        if r.target != want:
            others[r.target] = others.get(r.target, 0) + 1
    notes = [f"ignoring {n} tuning records made for another target ({t})"
             for t, n in sorted(others.items())]
    return mine, notes


def best(records: list[Record], target) -> tuple[dict[str, Record], list[str]]:
    """The fastest ``ok`` record per workload for ``target``, and messages about
    records ignored because they were made for other targets."""
    mine, notes = for_target(records, target)
    chosen: dict[str, Record] = {}
    for r in mine:
        if r.status != "ok" or r.cost is None:
            continue
        if r.workload not in chosen or r.cost < chosen[r.workload].cost:
            chosen[r.workload] = r
    return chosen, notes
