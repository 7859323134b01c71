"""What tracing costs a tuning batch: seconds per batch with and without QEMU's exec log.

    .venv/bin/python bench/bench_tune_trace.py [--model mlperf_kws_dscnn]
        [--board qemu/mps2-an386] [--workload "conv2d 1x25x5x64 * 64x1x1x64"]
        [--batch 16] [--rounds 3] [--seed 0]

Builds ONE batch image of ``--batch`` distinct candidates of the workload
(seeded random points of its template space, the library's default first)
and runs it ``--rounds`` times with each runner, interleaved: ``--cost
instructions`` (the device's count, QEMU untraced) and ``--cost cycles``
(QEMU with ``-d exec,nochain`` to a FIFO, aot.cycles.calls).  Prints the wall
seconds of every run (boot, inputs, each candidate's timed runs and checks)
and the best of each; the build is not included (it is the same for both).
The two runners must agree on every candidate's status.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

from aot.target import load_board
from aot.tune.measure import Builder, Runner
from aot.tune.workload import extract_workloads

MODELS = Path(__file__).resolve().parents[1] / ".." / "shared" / "models"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="mlperf_kws_dscnn")
    ap.add_argument("--board", default="qemu/mps2-an386")
    ap.add_argument("--workload", default="conv2d 1x25x5x64 * 64x1x1x64")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    board = load_board(args.board)
    _, workloads = extract_workloads(MODELS / f"{args.model}.tflite", board.target)
    (wl,) = [w for w in workloads if w.description.startswith(args.workload)]
    rng = random.Random(args.seed)
    configs = [wl.default] + [wl.space[i] for i in rng.sample(range(len(wl.space)), 4 * args.batch)]
    with tempfile.TemporaryDirectory(prefix="bench-trace-") as tmp:
        builder = Builder(board, Path(tmp) / "work", cache_dir=Path(tmp) / "cache")
        candidates, _ = builder.candidates(wl, configs)
        batch = builder.build(wl, candidates[:args.batch])
        if batch.build_error:
            print(batch.build_error, file=sys.stderr)
            return 1
        print(f"{wl.description}: {len(batch.candidates)} candidates, {board.tag}")
        seconds = {"instructions": [], "cycles": []}
        statuses = {}
        for k in range(args.rounds):
            for cost in seconds:
                start = time.perf_counter()
                results = Runner(cost=cost).run(batch)
                seconds[cost].append(time.perf_counter() - start)
                statuses.setdefault(cost, [r.status for r in results])
                print(f"round {k + 1} {cost:12s} {seconds[cost][-1]:6.2f} s "
                      f"({sum(r.ok for r in results)} ok)")
        if statuses["instructions"] != statuses["cycles"]:
            print("the two runners disagree on the statuses:", statuses, file=sys.stderr)
            return 1
        best = {cost: min(s) for cost, s in seconds.items()}
        ratio = best["cycles"] / best["instructions"]
        print(f"best: untraced {best['instructions']:.2f} s, traced {best['cycles']:.2f} s "
              f"per batch of {len(batch.candidates)} ({ratio:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
