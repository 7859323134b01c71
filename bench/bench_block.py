"""Per layer: the auto tuner's ``block`` sketch against the conv2d template, on QEMU.

    .venv/bin/python bench/bench_block.py [--model NAME]... [--board qemu/mps2-an386]
                                          [--json out/bench_block.json] [--limit N]

For each conv2d workload of each model with a ``block`` sketch
(:mod:`aot.tune.auto.sketch`), measures on the board (instructions under
QEMU, every candidate checked bit for bit on the device, as the tuner does):

* the template's default (the kernel library's schedule) and its points
  that change only ``optimize`` (the file knob the tuner's winners changed
  most), and the template sketch's points of the auto space that differ from
  the default in one annotation (the template tuner's first neighbours);
* every point of the ``block`` sketch (or ``--limit`` of them at random).

Prints one markdown row per workload: the best template point, the best
block point and their ratio, and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path

from aot.target.tags import load_board
from aot.tune.auto import AutoWorkload
from aot.tune.measure import Builder, Runner, measure
from aot.tune.workload import extract_workloads

MODELS = Path(__file__).resolve().parents[1] / ".." / "shared" / "models"


def _best(results):
    ok = [r for r in results if r.ok]
    bad = [r for r in results if not r.ok]
    best = min(ok, key=lambda r: r.cost) if ok else None
    return best, bad


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", action="append", default=None)
    ap.add_argument("--board", default="qemu/mps2-an386")
    ap.add_argument("--models-dir", default=str(MODELS))
    ap.add_argument("--json", default=None)
    ap.add_argument("--limit", type=int, default=None, help="block points per workload")
    args = ap.parse_args(argv)
    board = load_board(args.board)
    rows = []
    with tempfile.TemporaryDirectory(prefix="aot-bench-block-") as tmp:
        builder = Builder(board, Path(tmp) / "work", cache_dir=Path(tmp) / "cache")
        runner = Runner()
        for model in args.model or ["mlperf_kws_dscnn"]:
            _, workloads = extract_workloads(Path(args.models_dir) / f"{model}.tflite",
                                             board.target)
            for wl in workloads:
                aw = AutoWorkload.of(wl)
                if "block" not in aw.space.sketches:
                    continue
                tpl = [aw.default] + aw.space.mutations(aw.default)
                off, n = aw.space.offsets["block"], len(aw.space.sketches["block"].space)
                block = [aw.space[off + i] for i in range(n)]
                if args.limit and args.limit < n:
                    block = random.Random(0).sample(block, args.limit)
                t_res = measure(builder, runner, aw, tpl)
                b_res = measure(builder, runner, aw, block)
                default = next((r.cost for r in t_res if r.config == aw.default), None)
                tb, tbad = _best(t_res)
                bb, bbad = _best(b_res)
                row = {"model": model, "workload": wl.description, "default": default,
                       "template_best": tb.cost if tb else None,
                       "template_config": str(tb.config) if tb else None,
                       "block_best": bb.cost if bb else None,
                       "block_config": str(bb.config) if bb else None,
                       "template_points": len(tpl), "block_points": len(block),
                       "failed": [(str(r.config), r.status, r.error[:200])
                                  for r in tbad + bbad]}
                rows.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
    print("| model | workload | library default | template best | block best | block / "
          "template | best block point |")
    print("|---|---|---:|---:|---:|---:|---|")
    for r in rows:
        ratio = (f"{r['block_best'] / r['template_best']:.3f}"
                 if r["block_best"] and r["template_best"] else "-")
        print(f"| {r['model']} | {r['workload']} | {r['default']} | {r['template_best']} | "
              f"{r['block_best']} | {ratio} | {r['block_config']} |")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
