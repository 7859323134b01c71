"""The two backends on an emulated board: instructions, code size, compile time.

    .venv/bin/python bench/bench_codegen_qemu.py [--board qemu/mps2-an386]
        [--model NAME]... [--repeat 1] [--json FILE]

Per MLPerf Tiny model (KWS, VWW, ResNet-8, AD; ``--model`` for others), the
board's C path (kernels printed as C, built by the board's gcc ``-O2``) next
to its LLVM path (``--codegen llvm``: the same kernels and entry function,
the kernels compiled by LLVM to objects at ``--codegen llvm``'s ``-opt-level``
2 with the support headers' helpers from their bitcode, except the row
helpers on DSP and Helium cores, which stay gcc's through specialised
wrappers: aot.codegen.llvm_helpers.gcc_rows):

* instructions per inference: exact under QEMU ``-icount`` (docs QEMU.md),
  one inference of the model's sample input (or a seeded random one);
* model code: ``.text`` of the model's objects in the linked firmware (the
  kernels, the entry function and, for LLVM, the helpers' wrappers), from
  the map file (:mod:`aot.firmware.sizes`);
* compile time: ``compile_model`` (for LLVM it includes emitting the
  objects) and the firmware build of the model's sources (the runtime's
  objects come from a warm cache, so both builds compile only the model);
  medians of ``--repeat`` runs;
* whether both paths gave the same outputs, bit for bit.

Prints a markdown table (docs/codegen.md) and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from aot.compile import compile_model, resolve_target  # noqa: E402
from aot.firmware.build import build_project  # noqa: E402
from aot.firmware.device import run_project  # noqa: E402
from aot.firmware.project import create_project  # noqa: E402
from aot.firmware.verify import random_inputs, sample_path  # noqa: E402
from aot.target import Target  # noqa: E402

MODELS_DIR = ROOT.parent / "shared" / "models"
MLPERF = ["mlperf_kws_dscnn", "mlperf_vww_mobilenetv1_025", "mlperf_ic_resnet8",
          "mlperf_ad_fc_autoencoder"]


def llvm_target(board: str, opt: int | None) -> Target:
    """The board's target with the kind llvm (``--codegen llvm``), at ``opt``."""
    target, _ = resolve_target(board, "llvm")
    return target if opt is None else Target({**target.to_dict(), "opt-level": opt})


def one_path(path: Path, where, inputs, work: Path, cache: Path) -> dict:
    start = time.perf_counter()
    compiled = compile_model(path, where, measure_code=False)
    t_compile = time.perf_counter() - start
    project = create_project(compiled.write(work / "artifact"), compiled.board,
                             work / "project")
    start = time.perf_counter()
    build = build_project(project, cache_dir=cache)
    t_build = time.perf_counter() - start
    run = run_project(project, inputs, build=build)
    return {"compile_s": t_compile, "build_s": t_build,
            "instructions_per_inference": run.per_inference,
            "model_code": build.sizes.model_code, "constants": build.sizes.constants,
            "outputs": run.outputs}


def bench_model(path: Path, board: str, repeat: int, cache: Path, opt: int | None) -> dict:
    graph = compile_model(path, board, measure_code=False).graph
    inputs = ([np.load(sample_path(path))[:1]] if sample_path(path).is_file()
              else random_inputs(graph, 1, seed=0))
    row = {"model": path.stem, "board": board}
    for codegen, where in (("c", board), ("llvm", llvm_target(board, opt))):
        runs = []
        for _ in range(repeat):
            with tempfile.TemporaryDirectory(prefix="aot-bench-") as tmp:
                runs.append(one_path(path, where, inputs, Path(tmp), cache))
        first = runs[0]
        row[codegen] = {"compile_s": statistics.median(r["compile_s"] for r in runs),
                        "build_s": statistics.median(r["build_s"] for r in runs),
                        **{k: first[k] for k in ("instructions_per_inference", "model_code",
                                                 "constants")}}
        row[codegen + "_outputs"] = first["outputs"]
    row["bit_exact"] = all(np.array_equal(a, b) for a, b in
                           zip(row.pop("c_outputs"), row.pop("llvm_outputs")))
    return row


def table(rows: list[dict]) -> str:
    lines = ["| model | instructions gcc | instructions LLVM | LLVM / gcc | model code gcc "
             "| model code LLVM | compile + build s gcc | compile + build s LLVM | "
             "same outputs |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        c, ll = r["c"], r["llvm"]
        ratio = ll["instructions_per_inference"] / c["instructions_per_inference"]
        lines.append(
            f"| {r['model']} | {c['instructions_per_inference']:,} | "
            f"{ll['instructions_per_inference']:,} | {ratio:.2f} | {c['model_code']:,} | "
            f"{ll['model_code']:,} | {c['compile_s']:.2f} + {c['build_s']:.2f} | "
            f"{ll['compile_s']:.2f} + {ll['build_s']:.2f} | "
            f"{'yes' if r['bit_exact'] else 'NO'} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--board", default="qemu/mps2-an386")
    ap.add_argument("--model", action="append", default=[])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--llvm-opt-level", type=int, metavar="N",
                    help="the llvm target's -opt-level (default: the kind's default)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="aot-bench-cache-") as cache:
        for name in args.model or MLPERF:
            row = bench_model(MODELS_DIR / f"{name}.tflite", args.board, args.repeat,
                              Path(cache), args.llvm_opt_level)
            print(f"{name}: {json.dumps(row)}", file=sys.stderr)
            rows.append(row)
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
