"""Tuning records that ship with aot, applied when the user gives none.

A user who never runs ``aot tune`` should still get what tuning found for
the common workloads on their core.  ``aot/tune/pretuned/`` holds, per core,
a log of records made by ``scripts/pretune.py``: each MLPerf Tiny model tuned
on the emulated board of that core, and of each workload only the best
record, kept only where it beat the library's own schedule measured in the
same session.  ``manifest.json`` says, per log, the target it was tuned for
(the board's target without its ``-tag``: the code, not the board), the
board that measured it, the unit of its costs, the models, the budget, the
aot version and the commit.

The records apply to a compilation whose target, without its ``-tag``, is
the log's, and only to workloads with the same key (the kernel's
computation, shapes, types and quantization:
:func:`aot.tune.workload.workload_key`), so they never apply to a workload
they were not measured on; the tag is left out because the kernels of one
core do not depend on the board around it.  A log made by another aot
version is not applied, with a note.  The command layer applies them
(``aot compile``, ``run``, ``verify``, ``profile``) unless ``--tuning-records``
gives the user's own or ``--no-tuned-defaults`` turns them off.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

from aot.target import Target
from aot.tune import records as rec
from aot.tune.errors import TuneError
from aot.version import __version__

#: The shipped logs and their manifest.
DIRECTORY = Path(__file__).with_name("pretuned")
MANIFEST = "manifest.json"


@dataclass(frozen=True)
class Bundle:
    """One shipped log: the records of one core."""

    file: str            # the log, in DIRECTORY
    target: str          # the target it was tuned for, without -tag (code_target)
    board: str           # the emulated board that measured it
    unit: str            # of its costs
    models: tuple[str, ...]
    budget: float        # seconds of tuning per model
    version: str         # of aot that made it
    commit: str          # of the tree that made it

    def describe(self) -> str:
        """How reports name it: ``cortex-m4.jsonl (tuned on qemu/mps2-an386 at 1a2b3c4d)``."""
        return f"{self.file} (tuned on {self.board} at {self.commit[:8]})"

    def to_json(self) -> dict:
        out = dataclasses.asdict(self)
        out["models"] = list(self.models)
        return out


def code_target(target) -> str:
    """``target`` as the shipped logs are keyed: its canonical string without
    ``-tag`` (what decides the kernels' code, not which board carries the core)."""
    return str(target.with_tag(None))


def bundles(directory: Path | None = None) -> list[Bundle]:
    """Every log the manifest of ``directory`` (default :data:`DIRECTORY`) lists (none
    when it has no manifest)."""
    path = (directory or DIRECTORY) / MANIFEST
    if not path.is_file():
        return []
    try:
        entries = json.loads(path.read_text())["bundles"]
        out = [Bundle(e["file"], e["target"], e["board"], e["unit"], tuple(e["models"]),
                      float(e["budget"]), e["version"], e["commit"]) for e in entries]
    except (ValueError, KeyError, TypeError) as err:
        raise TuneError(f"{path}: not a manifest of pre-tuned records ({err!r})") from None
    targets = [b.target for b in out]
    for t in set(targets):
        if targets.count(t) > 1:
            raise TuneError(f"{path}: two pre-tuned logs for the target {t}")
    return out


def for_target(target, directory: Path | None = None
               ) -> tuple[Bundle | None, list[rec.Record], list[str]]:
    """The log of ``directory`` (default :data:`DIRECTORY`) for ``target``, its records
    re-keyed to ``target`` (so :func:`aot.tune.records.best` takes them as made for it),
    and notes: none, or why a log for this core was not applied."""
    directory = directory or DIRECTORY
    want = code_target(target)
    bundle = next((b for b in bundles(directory) if b.target == want), None)
    if bundle is None:
        return None, [], []
    if bundle.version != __version__:
        return bundle, [], [f"the pre-tuned records {bundle.describe()} were made by aot "
                            f"{bundle.version}, this is aot {__version__}: not applied"]
    records = []
    for r in rec.load(directory / bundle.file):
        if code_target_of(r.target) != want:
            raise TuneError(f"{directory / bundle.file}: a record for {r.target}, in the log "
                            f"of {bundle.target}")
        # the log's models are the manifest's: none counts as "another model's"
        records.append(dataclasses.replace(r, target=str(target), model=None))
    return bundle, records, []


def code_target_of(text: str) -> str:
    """:func:`code_target` of a record's target string."""
    return code_target(Target(text))
