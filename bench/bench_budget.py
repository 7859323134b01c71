"""What a memory budget buys: RAM of every plan option, and the instruction cost
of the smallest against the cheapest, measured under QEMU.

    .venv/bin/python bench/bench_budget.py [--board TAG] [--model NAME]...
                                           [--json out/bench_budget.json]

Per shared model on one board (default qemu/mps2-an386): the RAM the model owns
(``aot.executor.budget.ram_bytes``: workspace with scratch, caller i/o, state)
under each option of ``aot.executor.budget.OPTIONS``, without building; then two
firmware builds run under QEMU (bench_models_qemu.bench_model: exact instruction
counts, outputs checked against the reference):

* ``cheapest``: what ``--memory-budget`` picks when everything fits (the first
  option: caller i/o, no aliasing);
* ``smallest``: what it picks at the smallest budget that fits (the budget set
  to the smallest RAM of all options).

Prints a markdown table (as in docs/memory.md) and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from bench_models_qemu import DEFAULT_BOARD, MODELS_DIR, bench_model, resolve_board  # noqa: E402

from aot.compile import compile_model  # noqa: E402
from aot.errors import AotError  # noqa: E402
from aot.executor.budget import OPTIONS, MemoryBudgetError  # noqa: E402
from stamp import stamp  # noqa: E402


def option_rams(path: Path, board: str) -> dict[str, int]:
    """RAM per option, from the budget's own report (a budget of 1 byte tries all)."""
    try:
        compile_model(path, board, memory_budget=1, measure_code=False)
    except MemoryBudgetError as err:
        return {o.label: ram for o, ram in err.tried}
    raise AssertionError("a model fit in one byte")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--board", default=DEFAULT_BOARD)
    parser.add_argument("--model", action="append", help="only this model (repeatable)")
    parser.add_argument("--json", type=Path, default=ROOT.parent / "out" / "bench_budget.json")
    args = parser.parse_args()
    board = resolve_board(args.board)
    paths = sorted(p for p in MODELS_DIR.iterdir() if p.suffix in (".tflite", ".onnx"))
    if args.model:
        paths = [p for p in paths if p.stem in args.model]
    rows = []
    with tempfile.TemporaryDirectory(prefix="aot-bench-budget-") as tmp:
        for i, path in enumerate(paths):
            rams = option_rams(path, board)
            row = {"model": path.stem, "options": rams, "smallest": min(rams.values())}
            for j, (plan, budget) in enumerate((("cheapest", 1 << 30),
                                                ("smallest", row["smallest"]))):
                try:
                    r = bench_model(path, board, Path(tmp) / f"{i}_{j}", Path(tmp) / "cache",
                                    {"memory_budget": budget})
                    row[plan] = r
                except AotError as err:
                    row[plan] = {"error": " ".join(str(err).split())}
            rows.append(row)
            print(f"  {path.stem}: done", file=sys.stderr)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"stamp": stamp(), "board": board, "rows": rows}, indent=2)
                         + "\n")
    labels = [o.label for o in OPTIONS]
    print(f"\n### {board}: RAM the model owns per plan option (bytes); the cheapest and the "
          "smallest plan under QEMU\n")
    print("| model | " + " | ".join(labels) + " | cheapest instr | smallest instr | cost | "
          "exact |")
    print("|---|" + "---|" * len(labels) + "---|---|---|---|")
    ok = True
    for row in rows:
        cells = [f"{row['options'][k]:,}" for k in labels]
        cheap, small = row["cheapest"], row["smallest"]
        if "error" in cheap or "error" in small:
            print(f"| {row['model']} | " + " | ".join(cells) + " | error | error | | NO |")
            ok = False
            continue
        a, b = cheap["instructions_per_inference"], small["instructions_per_inference"]
        exact = cheap["passed"] and small["passed"]
        ok = ok and exact
        print(f"| {row['model']} | " + " | ".join(cells) + f" | {a:,.0f} | {b:,.0f} | "
              f"{b / a - 1:+.2%} | {'yes' if exact else 'NO'} |")
    print(f"JSON written to {args.json}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
