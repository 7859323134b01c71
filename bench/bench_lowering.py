"""Lowering time per tuning candidate of the template-free tuner (``--tuner auto``).

    .venv/bin/python bench/bench_lowering.py [--model NAME]... [--per-sketch 4] [--seed 0]
                                             [--json out/bench_lowering.json]

Per model (default: mlperf_kws_dscnn and mlperf_ic_resnet8 on qemu/mps2-an386), every
workload the tuner extracts, ``--per-sketch`` seeded random points of every sketch:
wall time of ``AutoWorkload.lower`` (what ``AutoTuner.features`` calls for each
candidate it considers), and of the same lowering followed by the kernel's in-place and
overlap facts (what compilation asks the planner for).  Candidates that do not lower
are skipped (the tuner never proposes them).  Prints a markdown table and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from aot.target import Target  # noqa: E402
from aot.tune.auto.workload import AutoWorkload  # noqa: E402
from aot.tune.workload import extract_workloads  # noqa: E402

MODELS_DIR = ROOT.parent / "shared" / "models"


def _points(space, per_sketch: int, rng: random.Random) -> list:
    out = []
    for name in space.sketches:
        n = len(space.sketches[name].space)
        for _ in range(min(per_sketch, n)):
            out.append(space[space.offsets[name] + rng.randrange(n)])
    return out


def bench_model(name: str, per_sketch: int, seed: int) -> dict:
    _, workloads = extract_workloads(MODELS_DIR / f"{name}.tflite", Target("qemu/mps2-an386"))
    rng = random.Random(seed)
    lower_s, facts_s, kernels = [], [], 0
    for wl in workloads:
        auto = AutoWorkload.of(wl)
        for config in _points(auto.space, per_sketch, rng):
            start = time.perf_counter()
            try:
                kernel = auto.lower(config, "bench")
            except Exception:  # noqa: BLE001 - the tuner skips such candidates too
                continue
            lowered = time.perf_counter()
            kernel.inplace_allowed, kernel.overlap_allowed  # noqa: B018 - the planner's facts
            facts = time.perf_counter()
            lower_s.append(lowered - start)
            facts_s.append(facts - start)
            kernels += 1
    return {"model": name, "workloads": len(workloads), "candidates": kernels,
            "lower_mean_s": sum(lower_s) / max(kernels, 1),
            "lower_max_s": max(lower_s, default=0.0),
            "with_facts_mean_s": sum(facts_s) / max(kernels, 1)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", default=[])
    parser.add_argument("--per-sketch", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=str(ROOT / "out" / "bench_lowering.json"))
    args = parser.parse_args(argv)
    models = args.model or ["mlperf_kws_dscnn", "mlperf_ic_resnet8"]
    rows = [bench_model(m, args.per_sketch, args.seed) for m in models]
    print("| model | workloads | candidates | lowering per candidate (mean s) | max (s) "
          "| with in-place/overlap facts (mean s) |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['workloads']} | {r['candidates']} | "
              f"{r['lower_mean_s']:.3f} | {r['lower_max_s']:.3f} | "
              f"{r['with_facts_mean_s']:.3f} |")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
