"""Per layer, in estimated cycles: the library's kernels against ``block`` sketch points.

    .venv/bin/python bench/bench_block_cycles.py [--model mlperf_kws_dscnn]
        [--board qemu/mps2-an386] [--point WORKLOAD JSON]... [--json FILE]

``bench/bench_block.py`` and the tuner rank points by instructions; this one
runs ``aot profile``'s recipe (:mod:`aot.cycles.profile`) on the whole model
twice: with the library's kernels, and with a kernel library that applies
each ``--point`` (the conv2d workloads whose description starts with
WORKLOAD get the auto-sketch config JSON, as in a tuning record, e.g.
``{"sketch": "block", "block": "3x2", ...}``; every other layer keeps the
library's kernel).  Prints per layer the estimated Cortex-M cycles and the
instructions of both.  Default points: KWS's best on its pointwise workload
(``BEST_KWS``) and on its first convolution (``BEST_KWS_FIRST``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from aot.compile import compile_model
from aot.cycles.cores import core_for_board
from aot.cycles.memory import memory_for_board
from aot.cycles.profile import profile_project
from aot.firmware import build_project, create_project
from aot.firmware.verify import random_inputs
from aot.inputs import check_inputs
from aot.kernels.template import ConfigError
from aot.target import load_board
from aot.tune import records as rec
from aot.tune.auto import AutoWorkload
from aot.tune.errors import TuneError
from aot.tune.library import TunedKernels
from aot.tune.workload import extract_workloads

MODELS = Path(__file__).resolve().parents[1] / ".." / "shared" / "models"

#: The best ``block`` points of KWS's pointwise layers and first convolution
#: (docs/tuning.md, "The `block` sketch against the templates").
BEST_KWS = {"sketch": "block", "block": "3x2", "order": "row_widened", "weights": "wide_pairs",
            "steps": 1, "requant_row": True, "epilogue": "fused", "optimize": "unroll-loops"}
KWS_POINTWISE = "conv2d 1x25x5x64 * 64x1x1x64"
BEST_KWS_FIRST = {"sketch": "block", "block": "3x2", "order": "patch", "weights": "wide_pairs",
                  "fold_kw": True, "requant_row": True, "epilogue": "fused",
                  "optimize": "unroll-loops"}
KWS_FIRST = "conv2d 1x49x10x1 * 64x10x4x1"


def block_library(model: Path, board, points) -> TunedKernels:
    """A kernel library applying each ``(workload, config)`` of ``points`` to the
    workloads of ``model`` whose description starts with ``workload`` (every
    other layer: the library's); a config outside the workload's space is refused."""
    _, workloads = extract_workloads(model, board.target)
    best = {}
    for prefix, config in points:
        chosen = [w for w in workloads if w.description.startswith(prefix)]
        if not chosen:
            raise TuneError(f"no workload of {model.name} starts with {prefix!r} (there are: "
                            + ", ".join(w.description for w in workloads) + ")")
        for w in chosen:
            try:
                AutoWorkload.of(w).space.config(config)
            except ConfigError as err:
                raise TuneError(f"{w.description}: not a point of its auto space: {err}") from None
            best[w.key] = rec.Record(w.key, w.description, str(w.target), board.tag, config,
                                     "ok", 0, "cycles")
    return TunedKernels(best, board.target)


def profile(model: Path, board, library=None):
    """The profile of one seeded random inference of ``model`` (``library``: tuned kernels)."""
    compiled = compile_model(model, board.tag, name="model", measure_code=False,
                             kernel_library=library)
    if library is not None and not library.applied:
        raise TuneError("the points applied to no layer of the model")
    graph = compiled.graph
    inputs = check_inputs(graph, random_inputs(graph, 1, 0))
    with tempfile.TemporaryDirectory(prefix="aot-bench-block-cycles-") as tmp:
        root = Path(tmp)
        project = create_project(compiled.write(root / "artifact"), board, root / "project")
        build_project(project)
        return profile_project(project, core_for_board(board), memory_for_board(board),
                               [x[0] for x in inputs], model_name=graph.name)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="mlperf_kws_dscnn")
    ap.add_argument("--board", default="qemu/mps2-an386")
    ap.add_argument("--models-dir", default=str(MODELS))
    ap.add_argument("--point", nargs=2, action="append", metavar=("WORKLOAD", "JSON"),
                    default=None, help="a workload description prefix and an auto-sketch "
                    "config (JSON) for it; default: the best KWS block points")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    board = load_board(args.board)
    model = Path(args.models_dir) / f"{args.model}.tflite"
    try:
        points = ([(w, json.loads(c)) for w, c in args.point or []]
                  or [(KWS_POINTWISE, BEST_KWS), (KWS_FIRST, BEST_KWS_FIRST)])
    except json.JSONDecodeError as err:
        raise SystemExit(f"--point: the config is not JSON: {err}") from None
    library = block_library(model, board, points)
    base = profile(model, board)
    run = profile(model, board, library)
    rows = []
    for name in library.applied:
        b = next(r for r in base.rows if r.name == name)
        t = next(r for r in run.rows if r.name == name)
        rows.append({"layer": name, "library_cycles": round(b.cycles),
                     "block_cycles": round(t.cycles), "library_instructions": b.instructions,
                     "block_instructions": t.instructions, "macs": b.macs})
    print(f"library: {round(base.cycles):,} est. cycles for the model")
    print(f"with the points: {round(run.cycles):,} est. cycles")
    print("| layer | MACs | library cycles | block cycles | block / library | library instr. | "
          "block instr. |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['layer']} | {r['macs']:,} | {r['library_cycles']:,} | {r['block_cycles']:,} | "
              f"{r['block_cycles'] / r['library_cycles']:.3f} | {r['library_instructions']:,} | "
              f"{r['block_instructions']:,} |")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"points": points, "rows": rows,
                                               "library_cycles": round(base.cycles),
                                               "block_cycles": round(run.cycles)}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
