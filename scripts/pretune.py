#!/usr/bin/env python3
"""Make the pre-tuned records aot ships (aot/tune/pretuned/, docs/tuning.md).

For each core, tunes every MLPerf Tiny model of ../shared/models on the
emulated board of that core (``aot tune --json``, one log per core), then
keeps, per workload, the best record where it beat the library's schedule
measured in the same session by at least ``--min-gain``, and writes the log
and the manifest entry (target without -tag, board, unit, models, budget, aot
version, commit).  Run it on a committed tree; it takes about budget x models
x cores of wall time::

    .venv/bin/python scripts/pretune.py --budget 4m            # every core
    .venv/bin/python scripts/pretune.py --core cortex-m4 --budget 4m
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from aot.commands.tune import parse_budget  # noqa: E402
from aot.target import load_board  # noqa: E402
from aot.tune import pretuned  # noqa: E402
from aot.tune import records as rec  # noqa: E402
from aot.version import __version__  # noqa: E402

#: Per core: the log's name and the emulated board that measures it.
CORES = {
    "cortex-m4": "qemu/mps2-an386",
    "cortex-m7": "qemu/mps2-an500",
    "cortex-m33": "qemu/mps2-an505",
    "cortex-m55": "qemu/mps3-an547",
}
MODELS = ("mlperf_kws_dscnn", "mlperf_vww_mobilenetv1_025", "mlperf_ic_resnet8",
          "mlperf_ad_fc_autoencoder")


def commit() -> tuple[str, bool]:
    """The tree's commit and whether it has uncommitted changes."""
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                          text=True, check=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.strip()
    return head, bool(dirty)


def tune(model: Path, board: str, log: Path, budget: str, seed: int) -> dict:
    """``aot tune --json`` of one model; its report."""
    out = subprocess.run([sys.executable, "-m", "aot", "tune", str(model), "--board", board,
                          "--log", str(log), "--budget", budget, "--seed", str(seed),
                          "--json"], cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"aot tune {model.name} --board {board} failed:\n{out.stderr}")
    return json.loads(out.stdout)


def winners(report: dict, records: list[rec.Record], min_gain: float) -> list[rec.Record]:
    """Per workload of ``report``, the record of its best config when it beat the
    library's schedule (the default config, measured first) by ``min_gain``."""
    keep = []
    for w in report["workloads"]:
        best, default = w["best_cost"], w["default_cost"]
        if best is None or default is None or best > default * (1 - min_gain):
            continue
        match = [r for r in records if r.workload == w["key"] and r.status == "ok"
                 and r.cost == best and r.config == w["best_config"]]
        if not match:
            raise SystemExit(f"{w['description']}: its best config is not in the log")
        keep.append(match[0])
    return keep


def make_core(core: str, models_dir: Path, budget: str, min_gain: float, seed: int,
              head: str) -> tuple[pretuned.Bundle, list[rec.Record]]:
    board = CORES[core]
    kept: dict[str, rec.Record] = {}
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / f"{core}.jsonl"
        for name in MODELS:
            report = tune(models_dir / f"{name}.tflite", board, log, budget, seed)
            for r in winners(report, rec.load(log), min_gain):
                if r.workload not in kept or r.cost < kept[r.workload].cost:
                    kept[r.workload] = r
            print(f"{core} {name}: {sum(1 for w in report['workloads'] if w['best_cost'])} "
                  f"workloads tuned, {len(kept)} records kept so far", file=sys.stderr)
        unit = report["unit"]
    target = pretuned.code_target(load_board(board).target)
    bundle = pretuned.Bundle(f"{core}.jsonl", target, board, unit, MODELS,
                             parse_budget(budget), __version__, head)
    # the timings and the wall-clock time say nothing a user needs
    records = [rec.Record(r.workload, r.description, r.target, r.board, r.config, r.status,
                          r.cost, r.unit, (), "", 0.0, r.model) for r in kept.values()]
    return bundle, sorted(records, key=lambda r: r.workload)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--core", action="append", choices=sorted(CORES),
                        help="only this core (repeatable; default: every core)")
    parser.add_argument("--budget", default="4m", help="aot tune --budget per model")
    parser.add_argument("--min-gain", type=float, default=0.01,
                        help="keep a record only when it beats the library by this fraction")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--models", type=Path, default=ROOT.parent / "shared" / "models")
    parser.add_argument("--allow-dirty", action="store_true",
                        help="tune a tree with uncommitted changes (the manifest says so)")
    args = parser.parse_args(argv)
    head, dirty = commit()
    if dirty and not args.allow_dirty:
        print("the tree has uncommitted changes: the records would name a commit that did "
              "not make them (commit first, or --allow-dirty)", file=sys.stderr)
        return 2
    if dirty:
        head += "+dirty"
    manifest = pretuned.DIRECTORY / pretuned.MANIFEST
    entries = {b.file: b for b in pretuned.bundles()}
    pretuned.DIRECTORY.mkdir(exist_ok=True)
    for core in args.core or sorted(CORES):
        bundle, records = make_core(core, args.models, args.budget, args.min_gain, args.seed,
                                    head)
        (pretuned.DIRECTORY / bundle.file).write_text(
            "".join(json.dumps(r.to_json(), sort_keys=True) + "\n" for r in records))
        entries[bundle.file] = bundle
        manifest.write_text(json.dumps(
            {"bundles": [b.to_json() for _, b in sorted(entries.items())]}, indent=2) + "\n")
        print(f"{core}: {len(records)} records in {pretuned.DIRECTORY / bundle.file}",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
