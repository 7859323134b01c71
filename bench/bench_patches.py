"""What patch-based execution of the leading layers would save: the analysis's estimate.

    .venv/bin/python bench/bench_patches.py [--model NAME]... [--allowance 0.05]
                                            [--json out/bench_patches.json]

Per shared model (optimized graph, no build): the planner's most bytes alive at one
step (whole-step lifetimes, in-place writes, no overlaps) without patches and with the
stage ``aot.executor.patches.choose_stage`` picks, with the inputs and outputs in the
workspace and in the caller's buffers, and the stage's extra work (MACs recomputed in
the halos plus bytes copied, over the model's MACs).  Once within the allowance (the
default plan's rule), once without a limit (what the smallest plan could use).  Each
chosen stage is run patch by patch with the reference interpreter and compared with the
whole layers.  Estimates: code generation does not run patch stages yet.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
MODELS_DIR = ROOT.parent / "shared" / "models"

from aot.executor import patches as P  # noqa: E402
from aot.frontend import load_model  # noqa: E402
from aot.ir import Graph  # noqa: E402
from aot.passes import optimize  # noqa: E402
from aot.reference import interpreter  # noqa: E402

CNNS = ("mlperf_vww_mobilenetv1_025", "mlperf_ic_resnet8", "mlperf_kws_dscnn")


def _exact(stage: P.PatchStage) -> bool:
    rng = np.random.default_rng(0)
    x = rng.integers(-128, 128, stage.input.shape).astype(stage.input.type.np_dtype)
    whole = interpreter.run(Graph([stage.input], [stage.output], list(stage.nodes)), [x])[0]
    return bool(np.array_equal(P.run_stage(stage, x), whole))


def _row(est: P.PatchEstimate) -> dict:
    st = est.stage
    return {"before": est.bytes_before, "after": est.bytes_after,
            "stage_nodes": len(st.nodes) if st else 0, "grid": list(st.grid) if st else None,
            "extra_work": round(est.extra_work, 4), "exact": _exact(st) if st else None}


def bench(name: str, allowance: float) -> dict:
    graph = optimize(load_model(MODELS_DIR / f"{name}.tflite"))
    out = {}
    for io in (True, False):
        key = "io_inside" if io else "caller_io"
        out[key] = _row(P.choose_stage(graph, allowance=allowance, io_in_workspace=io))
        out[key + "_unlimited"] = _row(P.choose_stage(graph, allowance=1e9,
                                                      io_in_workspace=io))
    return out


def _cell(r: dict) -> str:
    if not r["stage_nodes"]:
        return f"{r['before']:,} (no stage)"
    grid = "x".join(map(str, r["grid"]))
    return (f"{r['before']:,} -> {r['after']:,} ({r['stage_nodes']} nodes, {grid}, "
            f"+{100 * r['extra_work']:.1f}%{'' if r['exact'] else ', NOT EXACT'})")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", action="append", help="a shared model's name (default: CNNs)")
    ap.add_argument("--allowance", type=float, default=0.05)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    results = {m: bench(m, args.allowance) for m in args.model or CNNS}
    print("| model | i/o inside | unlimited | caller i/o | unlimited |")
    print("|---|---|---|---|---|")
    for m, r in results.items():
        print(f"| {m} | " + " | ".join(_cell(r[k]) for k in (
            "io_inside", "io_inside_unlimited", "caller_io", "caller_io_unlimited")) + " |")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2))
    return 0 if all(r[k]["exact"] is not False for r in results.values() for k in r) else 1


if __name__ == "__main__":
    sys.exit(main())
