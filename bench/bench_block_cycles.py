"""Per layer, in estimated cycles: the library's kernels against ``block`` sketch points.

    .venv/bin/python bench/bench_block_cycles.py [--model mlperf_kws_dscnn]
        [--board qemu/mps2-an386] [--workload 'conv2d 1x25x5x64 * 64x1x1x64']
        [--config JSON]... [--json out/bench_block_cycles.json]

``bench/bench_block.py`` and the tuner rank points by instructions; this one
runs ``aot profile``'s recipe (:mod:`aot.cycles.profile`) on the whole model,
once with the library's kernels and once per ``--config`` (an auto-sketch
config as in a tuning record, e.g. ``{"sketch": "block", "block": "4x2", ...}``)
applied through a one-record kernel library to every layer of the workload
(default: the conv2d workloads whose description starts with ``--workload``),
and prints per layer the estimated Cortex-M cycles and instructions of each.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from aot.compile import compile_model
from aot.cycles.cores import core_for_board, memory_for_board
from aot.cycles.profile import profile_project
from aot.firmware import build_project, create_project
from aot.firmware.verify import random_inputs
from aot.inputs import check_inputs
from aot.target import load_board
from aot.tune import records as rec
from aot.tune.errors import TuneError
from aot.tune.session import TunedKernels
from aot.tune.workload import extract_workloads

MODELS = Path(__file__).resolve().parents[1] / ".." / "shared" / "models"

#: The best ``block`` point of KWS's pointwise layers in estimated cycles (docs/performance.md).
BEST_KWS = {"sketch": "block", "block": "4x2", "order": "row_widened", "weights": "wide",
            "steps": 2, "requant_row": True, "optimize": "unroll-loops"}


def block_library(model: Path, board, workload: str, config: dict) -> TunedKernels:
    """A kernel library applying ``config`` to the workloads of ``model`` whose
    description starts with ``workload`` (every other layer: the library's)."""
    _, workloads = extract_workloads(model, board.target)
    chosen = [w for w in workloads if w.description.startswith(workload)]
    if not chosen:
        raise TuneError(f"no workload of {model.name} starts with {workload!r} (there are: "
                        + ", ".join(w.description for w in workloads) + ")")
    best = {w.key: rec.Record(w.key, w.description, str(w.target), board.tag, config, "ok", 0,
                              "cycles") for w in chosen}
    return TunedKernels(best, board.target)


def profile(model: Path, board, library=None):
    """The profile of one seeded random inference of ``model`` (``library``: tuned kernels)."""
    compiled = compile_model(model, board.tag, name="model", measure_code=False,
                             kernel_library=library)
    if library is not None and not library.applied:
        raise TuneError("the config applied to no layer (not a point of the workload's space?)")
    graph = compiled.graph
    inputs = check_inputs(graph, random_inputs(graph, 1, 0))
    with tempfile.TemporaryDirectory(prefix="aot-bench-block-cycles-") as tmp:
        root = Path(tmp)
        project = create_project(compiled.write(root / "artifact"), board, root / "project")
        build_project(project)
        return profile_project(project, core_for_board(board), memory_for_board(board.tag),
                               [x[0] for x in inputs], model_name=graph.name)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="mlperf_kws_dscnn")
    ap.add_argument("--board", default="qemu/mps2-an386")
    ap.add_argument("--models-dir", default=str(MODELS))
    ap.add_argument("--workload", default="conv2d 1x25x5x64 * 64x1x1x64")
    ap.add_argument("--config", action="append", type=json.loads, default=None,
                    help="an auto-sketch config (JSON); default: the best KWS block point")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    board = load_board(args.board)
    model = Path(args.models_dir) / f"{args.model}.tflite"
    configs = args.config or [BEST_KWS]
    libraries = [block_library(model, board, args.workload, c) for c in configs]
    base = profile(model, board)
    runs = [profile(model, board, lib) for lib in libraries]
    rows = []
    for lib, config, run in zip(libraries, configs, runs):
        for name in lib.applied:
            b = next(r for r in base.rows if r.name == name)
            t = next(r for r in run.rows if r.name == name)
            rows.append({"layer": name, "config": config, "library_cycles": round(b.cycles),
                         "block_cycles": round(t.cycles), "library_instructions": b.instructions,
                         "block_instructions": t.instructions, "macs": b.macs,
                         "model_cycles": round(run.cycles)})
    print(f"library: {round(base.cycles):,} est. cycles for the model")
    print("| layer | library cycles | block cycles | block / library | library instr. | "
          "block instr. | model cycles | config |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        print(f"| {r['layer']} | {r['library_cycles']:,} | {r['block_cycles']:,} | "
              f"{r['block_cycles'] / r['library_cycles']:.3f} | {r['library_instructions']:,} | "
              f"{r['block_instructions']:,} | {r['model_cycles']:,} | {json.dumps(r['config'])} |")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"library_cycles": round(base.cycles),
                                               "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
