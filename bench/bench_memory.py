"""Activation RAM of each memory plan against TFLM's arena, with its instruction cost.

    .venv/bin/python bench/bench_memory.py [--board TAG] [--model NAME]...
                                           [--json out/bench_memory.json]

Per shared model on one board (default qemu/mps2-an386), three plans, each
built into firmware and run under QEMU (bench_models_qemu.bench_model: exact
instruction counts, outputs checked against the reference):

* ``in place, caller i/o``: the plan before this work (in-place elementwise
  writes only, inputs and outputs in the caller's buffers:
  ``overlap=False, io_in_workspace=False``);
* ``caller i/o``: outputs overlapping the part of a dying input their kernel
  has finished reading (docs/memory.md), i/o still in the caller's buffers;
* ``no stage``: the default plan with ``--patches off`` (no stream stage);
* ``default``: what ``aot compile`` does with no options: overlaps, the inputs and
  outputs in the workspace (as TFLM's arena), and a stream stage where one lowers the
  RAM (docs/memory.md, "Row streaming").

The first two plans are also without stages, so the columns before the last differ
from each other by the plan alone.

Activation RAM is the planned workspace + the model's caller input/output
buffers (none by default) + the measured deepest stack of one inference, the
same three kinds of data TFLM's arena holds (tensors incl. input and output,
scratch, plus its bookkeeping), so the ratio to ``arena_used_bytes()`` from
../shared/docs/BASELINE.md is a like-for-like comparison.  Instructions are
relative to the first plan.  Prints a markdown table (as in docs/memory.md)
and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from bench_models_qemu import (  # noqa: E402
    BASELINES,
    DEFAULT_BOARD,
    MODELS_DIR,
    NO_BASELINE,
    bench_model,
    resolve_board,
)

from aot.errors import AotError  # noqa: E402
from stamp import describe, stamp  # noqa: E402

PLANS = {
    "in place, caller i/o": {"overlap": False, "io_in_workspace": False, "patches": "off"},
    "caller i/o": {"io_in_workspace": False, "patches": "off"},
    "no stage": {"patches": "off"},
    "default": {},
}


def _cell(r: dict | None, arena: int | None, base: int | None) -> str:
    if r is None or "error" in r:
        return "does not fit" if r else "n/a"
    a = r["activation_ram"]
    ratio = f" ({a['total'] / arena:.2f}x)" if arena else ""
    cost = ""
    if base:
        cost = f", instr {r['instructions_per_inference'] / base - 1:+.1%}"
    return f"{a['total']:,}{ratio}{cost}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--board", default=DEFAULT_BOARD)
    parser.add_argument("--model", action="append", help="only this model (repeatable)")
    parser.add_argument("--json", type=Path, default=ROOT.parent / "out" / "bench_memory.json")
    args = parser.parse_args()
    board = resolve_board(args.board)
    arenas = BASELINES.get(board, NO_BASELINE).arena
    paths = sorted(p for p in MODELS_DIR.iterdir() if p.suffix in (".tflite", ".onnx"))
    if args.model:
        paths = [p for p in paths if p.stem in args.model]
    started = stamp()
    rows = []
    with tempfile.TemporaryDirectory(prefix="aot-bench-mem-") as tmp:
        for i, path in enumerate(paths):
            row = {"model": path.stem}
            for j, (plan, options) in enumerate(PLANS.items()):
                work = Path(tmp) / f"{i}_{j}"
                try:
                    row[plan] = bench_model(path, board, work, Path(tmp) / "cache", options)
                except AotError as err:
                    row[plan] = {"error": " ".join(str(err).split())}
            rows.append(row)
            print(f"  {path.stem}: done", file=sys.stderr)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"stamp": started, "board": board, "rows": rows}, indent=2)
                         + "\n")
    print(f"\n### {board}: activation RAM (workspace + i/o + stack), vs TFLM's arena, "
          f"instructions vs the first plan; {describe(started)}\n")
    print("| model | TFLM arena | " + " | ".join(PLANS) + " | exact |")
    print("|---|---|" + "---|" * len(PLANS) + "---|")
    ok = True
    for row in rows:
        arena = arenas.get(row["model"])
        first = row[next(iter(PLANS))]
        base = None if "error" in first else first["instructions_per_inference"]
        exact = all(r.get("passed") for r in (row[p] for p in PLANS) if "error" not in r)
        ok = ok and exact
        cells = [_cell(row[p], arena, base if k else None) for k, p in enumerate(PLANS)]
        print(f"| {row['model']} | {arena and f'{arena:,}' or 'n/a'} | " + " | ".join(cells)
              + f" | {'yes' if exact else 'NO'} |")
    print(f"JSON written to {args.json}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
