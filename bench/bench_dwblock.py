"""Per depthwise layer: the auto tuner's ``dwblock`` sketch against the library, on QEMU.

    .venv/bin/python bench/bench_dwblock.py [--model NAME]... [--board qemu/mps2-an386]
        [--point JSON]... [--limit N] [--json out/bench_dwblock.json]

For each depthwise_conv2d workload of each model with a ``dwblock`` sketch
(:mod:`aot.tune.auto.sketch`, :mod:`aot.kernels.depthwise_conv2d.blocked`),
measures on the board (instructions under QEMU, every candidate checked bit
for bit on the device, as the tuner does) the template's default (the kernel
library's schedule) and the ``dwblock`` points: each ``--point`` (an
auto-sketch config, e.g. ``{"sketch": "dwblock", "pixels": 2, ...}``; the
file knob ``optimize`` defaults to ``O2`` and ``unroll_widen`` to false, and
a point outside a workload's space is skipped for it), or every point of the
sketch (``--limit`` of them at random).  Prints one markdown row per
workload.  Estimated cycles of a point: ``bench/bench_block_cycles.py
--point WORKLOAD JSON`` (it takes any auto-sketch config).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path

from aot.kernels.template import ConfigError
from aot.target.tags import load_board
from aot.tune.auto import AutoWorkload
from aot.tune.measure import Builder, Runner, measure
from aot.tune.workload import extract_workloads

MODELS = Path(__file__).resolve().parents[1] / ".." / "shared" / "models"


def _points(aw, points, limit):
    if points:
        out = []
        for p in points:
            try:
                out.append(aw.space.config({"optimize": "O2", "unroll_widen": False, **p}))
            except ConfigError:
                continue
        return out
    off, n = aw.space.offsets["dwblock"], len(aw.space.sketches["dwblock"].space)
    every = [aw.space[off + i] for i in range(n)]
    return random.Random(0).sample(every, limit) if limit and limit < n else every


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", action="append", default=None)
    ap.add_argument("--board", default="qemu/mps2-an386")
    ap.add_argument("--models-dir", default=str(MODELS))
    ap.add_argument("--point", action="append", default=None, help="a dwblock config (JSON)")
    ap.add_argument("--limit", type=int, default=None, help="dwblock points per workload")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    try:
        points = [json.loads(p) for p in args.point or []]
    except json.JSONDecodeError as err:
        raise SystemExit(f"--point: not JSON: {err}") from None
    board = load_board(args.board)
    rows = []
    with tempfile.TemporaryDirectory(prefix="aot-bench-dwblock-") as tmp:
        builder = Builder(board, Path(tmp) / "work", cache_dir=Path(tmp) / "cache")
        runner = Runner()
        for model in args.model or ["mlperf_kws_dscnn"]:
            _, workloads = extract_workloads(Path(args.models_dir) / f"{model}.tflite",
                                             board.target)
            for wl in workloads:
                aw = AutoWorkload.of(wl)
                if "dwblock" not in aw.space.sketches:
                    continue
                configs = _points(aw, points, args.limit)
                results = measure(builder, runner, aw, [aw.default, *configs])
                default = next((r.cost for r in results if r.config == aw.default), None)
                ok = [r for r in results if r.ok and r.config != aw.default]
                best = min(ok, key=lambda r: r.cost) if ok else None
                row = {"model": model, "workload": wl.description, "default": default,
                       "dwblock_best": best.cost if best else None,
                       "dwblock_config": best.config.to_json() if best else None,
                       "points": {json.dumps(r.config.to_json()): r.cost for r in ok},
                       "failed": [(str(r.config), r.status, r.error[:200])
                                  for r in results if not r.ok]}
                rows.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
    print("| model | workload | library | dwblock best | dwblock / library | best point |")
    print("|---|---|---:|---:|---:|---|")
    for r in rows:
        ratio = (f"{r['dwblock_best'] / r['default']:.3f}"
                 if r["dwblock_best"] and r["default"] else "-")
        print(f"| {r['model']} | {r['workload']} | {r['default']} | {r['dwblock_best']} | "
              f"{ratio} | {json.dumps(r['dwblock_config'])} |")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
