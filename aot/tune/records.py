"""Tuning records: one JSON object per line, appended as results arrive.

A line::

    {"version": 1, "workload": "conv2d:c5c0b3fb1c54f068",
     "description": "conv2d 1x49x10x1 * 64x10x4x1 -> 1x25x5x64",
     "target": "c -keys=arm_cpu,cpu -mcpu=cortex-m4 ...", "board": "qemu/mps2-an386",
     "config": {"tile": "row", ...}, "status": "ok", "cost": 1054457,
     "unit": "instructions", "timings": [...], "error": "", "time": 1763790000.0,
     "model": {"name": "mlperf_kws_dscnn.tflite", "sha256": "3f0c..."}}

Records are keyed by workload and by the canonical target string
(``str(Target)``): a log may hold several targets, and only the records of
the target being compiled for apply.  A session appends every result as
soon as it is measured, so an interrupted session resumes from its log:
the configs already measured are not measured again.

``model`` names the model the record was measured on (:func:`model_identity`:
the file's name, and the first 16 hex digits of the SHA-256 of its bytes,
which is what identifies it).  A session resumes only its own model's
records (:func:`split_by_model`), and compiling prefers them (:func:`best`);
records written before the field existed have none and count as the
model's own, as every record did then.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from aot.ir.graph import Graph, format_graph
from aot.tune.errors import TuneError

VERSION = 1

#: ``unit`` of a cost estimated by aot.cycles from QEMU's execution trace at
#: zero wait states (``aot tune --cost cycles`` on an emulated board whose memory
#: never waits).  A cost priced with a board's memory model (flash wait states,
#: caches) is ``estimated_cycles@BOARD`` (:func:`estimated_unit`): each board's
#: estimates are a unit of their own, never compared with another board's or
#: with zero-wait ones.  The device's own timer gives ``instructions`` (QEMU)
#: or ``cycles`` (a real board's cycle counter).
ESTIMATED_CYCLES = "estimated_cycles"
#: Which kind of cost a workload's best record is taken from when a log holds
#: several (:func:`best`): the closest to a latency first (estimates with a
#: board's memory model rank between measured cycles and zero-wait estimates).
#: Costs of different kinds are never compared with each other.
UNIT_PREFERENCE = ("cycles", f"{ESTIMATED_CYCLES}@", ESTIMATED_CYCLES, "instructions")
#: ``unit`` of a simulated board's fake costs (aot.tune.farm_sim: benches and
#: tests of the farms' scaling).  Such a record measured nothing: resuming
#: compares it with its own unit only, and compiling never applies it (:func:`best`).
SIMULATED = "simulated"


def estimated_unit(memory_board: str | None) -> str:
    """The unit of costs estimated from a trace: priced with the memory model of
    the board tagged ``memory_board``, or at zero wait states (None)."""
    return ESTIMATED_CYCLES if memory_board is None else f"{ESTIMATED_CYCLES}@{memory_board}"


def is_estimate(unit: str) -> bool:
    """Whether ``unit`` is a cost estimated from a trace (any memory model)."""
    return unit == ESTIMATED_CYCLES or unit.startswith(f"{ESTIMATED_CYCLES}@")


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
    model: dict | None = None   # model_identity() of the model measured; None: an old record

    def to_json(self) -> dict:
        out = {"version": VERSION, "workload": self.workload,
               "description": self.description, "target": self.target, "board": self.board,
               "config": self.config, "status": self.status, "cost": self.cost,
               "unit": self.unit, "timings": list(self.timings), "error": self.error,
               "time": self.time}
        if self.model is not None:
            out["model"] = self.model
        return out


def from_result(workload, board, result, model: dict | None = None) -> Record:
    """The record of one :class:`aot.tune.measure.Result`, measured on ``model``
    (a :func:`model_identity`)."""
    return Record(workload.key, workload.description, str(workload.target),
                  board.tag if board is not None else None, result.config.to_json(),
                  result.status, result.cost, result.unit, tuple(result.timings),
                  result.error, time.time(), model)


def model_identity(model) -> dict:
    """``{"name", "sha256"}`` of ``model``: a model file's name and the hash of
    its bytes (renaming the file keeps it; any change of the file is another
    model); a :class:`Graph` given without its file (``aot tune --input-shape``
    tunes the graph the shapes fixed): its name and a hash of its structure,
    types and constants.  Only ``sha256`` decides whether two are the same
    model; the name is for messages."""
    if isinstance(model, Graph):
        # the text's first line names the graph: a name is not what identifies it
        text = format_graph(model).split("\n", 1)[1]
        digest = hashlib.sha256(text.encode())
        for t in model.inputs:
            digest.update(str(t.type).encode())
        for t in model.constants():
            digest.update(t.data.tobytes())
        return {"name": model.name, "sha256": digest.hexdigest()[:16]}
    if not isinstance(model, (str, os.PathLike)):
        raise TuneError(f"cannot name the model of tuning records: {model!r} is neither a "
                        "model file nor a Graph")
    path = Path(model)
    try:
        data = path.read_bytes()
    except OSError as err:
        raise TuneError(f"cannot read the model {path}: {err.strerror}") from None
    return {"name": path.name, "sha256": hashlib.sha256(data).hexdigest()[:16]}


def is_of(record: Record, identity: dict | None) -> bool:
    """Whether ``record`` was measured on the model ``identity``: the same
    hash, or no model named on either side (a record older than the field,
    or no model to compare with)."""
    return record.model is None or identity is None or \
        record.model.get("sha256") == identity["sha256"]


def split_by_model(records: list[Record], identity: dict) -> tuple[list[Record], list[Record]]:
    """``records`` of the model ``identity`` (with those that name no model),
    and those of other models."""
    own = [r for r in records if is_of(r, identity)]
    return own, [r for r in records if not is_of(r, identity)]


def model_names(records: list[Record]) -> str:
    """The names of the models of ``records``, sorted, for messages."""
    return ", ".join(sorted({str((r.model or {}).get("name", "?")) for r in records}))


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
            model = obj.get("model")
            if model is not None and not isinstance(model.get("sha256"), str):
                raise ValueError(f"model {model!r} has no sha256")
            out.append(Record(obj["workload"], obj.get("description", ""), obj["target"],
                              obj.get("board"), dict(obj["config"]), obj["status"],
                              obj.get("cost"), obj.get("unit", ""),
                              tuple(obj.get("timings", ())), obj.get("error", ""),
                              obj.get("time", 0.0), None if model is None else dict(model)))
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


def unit_name(unit: str) -> str:
    """How messages name a cost unit: ``estimated cycles``, ``estimated cycles
    with st/nucleo-l4r5zi's memory``."""
    if not unit:
        return "no unit"
    kind, _, board = unit.partition("@")
    return kind.replace("_", " ") + (f" with {board}'s memory" if board else "")


def of_unit(records: list[Record], unit: str | None) -> tuple[list[Record], list[Record]]:
    """``records`` whose cost may be compared with costs in ``unit``, and the
    others.  A record without a unit (its candidate failed before anything was
    measured) fits every unit; ``unit`` None is the device's own timer on a real
    board (whatever it counts), which every unit but the estimates
    (:func:`is_estimate`) fits."""
    def fits(r: Record) -> bool:
        if not r.unit:
            return True
        return not is_estimate(r.unit) if unit is None else r.unit == unit
    return [r for r in records if fits(r)], [r for r in records if not fits(r)]


def _unit_rank(unit: str, board: str | None = None) -> tuple:
    """Where ``unit`` stands in :data:`UNIT_PREFERENCE`.  With ``board`` (the tag
    compiled for), that board's memory estimates keep their place and other
    boards' come after the zero-wait estimates: they priced another memory."""
    kind = f"{ESTIMATED_CYCLES}@" if unit.startswith(f"{ESTIMATED_CYCLES}@") else unit
    rank = UNIT_PREFERENCE.index(kind) if kind in UNIT_PREFERENCE else len(UNIT_PREFERENCE)
    if board is not None and kind == f"{ESTIMATED_CYCLES}@" and unit != estimated_unit(board):
        rank = UNIT_PREFERENCE.index(ESTIMATED_CYCLES) + 0.5
    return (rank, unit)


def best(records: list[Record], target, model: dict | None = None,
         board: str | None = None) -> tuple[dict[str, Record], list[str]]:
    """The fastest ``ok`` record per workload for ``target``, and messages about
    records ignored because they were made for other targets.

    With ``model`` (a :func:`model_identity`), a workload's records of that
    model (or of none: old records) win over other models' whatever their
    costs: another model's record applies only to a workload the model's own
    records do not cover (the transfer, docs/tuning.md), and a message says
    how many did.  Costs of different units (instructions, estimated cycles,
    measured cycles) are never compared: a workload with records of several
    takes the fastest of the first unit of :data:`UNIT_PREFERENCE` it has, and
    a message says so; with ``board`` (the tag compiled for) estimates priced
    with that board's memory come before other boards' (:func:`_unit_rank`).
    Records of simulated boards (:data:`SIMULATED`) are never chosen."""
    mine, notes = for_target(records, target)
    simulated = sum(r.unit == SIMULATED for r in mine)
    if simulated:
        mine = [r for r in mine if r.unit != SIMULATED]
        notes.append(f"ignoring {simulated} records of simulated boards (unit {SIMULATED!r}): "
                     "their costs are fakes for benches of the tuning farm, not measurements")
    chosen: dict[str, Record] = {}
    mixed: dict[tuple[str, ...], int] = {}

    def rank(r: Record) -> tuple:
        return (not is_of(r, model), _unit_rank(r.unit, board), r.cost)

    units: dict[str, set[str]] = {}
    for r in mine:
        if r.status != "ok" or r.cost is None:
            continue
        units.setdefault(r.workload, set()).add(r.unit)
        if r.workload not in chosen or rank(r) < rank(chosen[r.workload]):
            chosen[r.workload] = r
    for seen in units.values():
        if len(seen) > 1:
            order = tuple(sorted(seen, key=lambda u: _unit_rank(u, board)))
            mixed[order] = mixed.get(order, 0) + 1
    for order, n in sorted(mixed.items()):
        notes.append(f"{n} workload{'s have' if n > 1 else ' has'} records in "
                     f"{' and '.join(unit_name(u) for u in order)}: costs of different kinds "
                     "are not compared, each takes its fastest record in "
                     f"{unit_name(order[0])} (tune with one --cost per log to avoid this)")
    if model is not None:
        others = [r for r in chosen.values() if not is_of(r, model)]
        if others:
            n = len(others)
            notes.append(f"{n} workload{'s take records' if n > 1 else ' takes a record'} of "
                         f"another model ({model_names(others)}): none of {model['name']}'s "
                         "own")
    return chosen, notes
