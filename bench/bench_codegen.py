"""The two backends on the host: how long each takes from model to runnable code.

    .venv/bin/python bench/bench_codegen.py [--repeat 3] [--model NAME]... [--json FILE]

Per shared model (every one runs through the llvm JIT, the stateful SVDF and
LSTM models included, with no C compiler):

* ``lower``: ``compile_model`` up to code generation, the part both paths
  share (load, passes, kernels, memory plan), measured on the C path;
* C path: ``compile_model`` for ``host/native`` (C printed) plus the gcc
  ``-O2`` build of the artifact and ``aot run``'s main into a program
  (what ``aot run --board host/native`` does before running);
* LLVM path: ``compile_model`` for ``llvm`` (IR emitted and verified) plus
  the JIT (link, LLVM's optimisation pipeline at ``-opt-level``, MCJIT),
  at opt levels 3 (the kind's default) and 2 (gcc's level here); the
  support headers' helpers are linked from their shipped bitcode
  (aot.codegen.llvm_helpers) and inlined, so their code is in the JIT time;
* the run time of one inference through the JIT (median over the model's
  sample and random inputs), for scale.

Each figure is the median of ``--repeat`` runs in one process.  Prints a
markdown table (docs/codegen.md) and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from support.models import MODELS, MODELS_DIR, model_sequence  # noqa: E402

from aot.compile import compile_model  # noqa: E402
from aot.executor.codegen import host_main  # noqa: E402
from aot.export.host import build_program  # noqa: E402


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def c_path(path: Path, tmp: Path) -> dict:
    compiled = compile_model(path, "host/native", measure_code=False)
    lower = sum(s for stage, s in compiled.timings if stage not in ("codegen", "sizes"))
    codegen = sum(s for stage, s in compiled.timings if stage in ("codegen", "sizes"))

    def build():
        art = compiled.write(tmp / "art")
        main = host_main(compiled.name, compiled.graph, compiled.plan, version="bench")
        return build_program(art, compiled.name, main, tmp / "model")
    t_build, _ = _timed(build)
    return {"lower": lower, "codegen": codegen, "build": t_build}


def llvm_path(path: Path, opt: int, entry: dict) -> dict:
    compiled = compile_model(path, f"llvm -opt-level={opt}", measure_code=False)
    codegen = sum(s for stage, s in compiled.timings if stage in ("codegen", "sizes"))
    t_jit, _ = _timed(compiled.llvm.compile)
    model = compiled.jit()
    runs = []
    for inv in model_sequence(entry, compiled.graph):
        t, _ = _timed(lambda inv=inv: model.run(inv))
        runs.append(t)
    return {"codegen": codegen, "jit": t_jit, "run": statistics.median(runs)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--model", action="append", default=[])
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    rows = []
    for entry in MODELS:
        if args.model and entry["name"] not in args.model:
            continue
        path = MODELS_DIR / entry["file"]
        runs = {"c": [], "llvm3": [], "llvm2": []}
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory(prefix="aot-bench-") as tmp:
                runs["c"].append(c_path(path, Path(tmp)))
            runs["llvm3"].append(llvm_path(path, 3, entry))
            runs["llvm2"].append(llvm_path(path, 2, entry))
        med = {k: {f: statistics.median(r[f] for r in v) for f in v[0]} for k, v in runs.items()}
        rows.append({"model": entry["name"], **med})
        print(f"{entry['name']}: {json.dumps(med)}", file=sys.stderr)
    print("| model | lower (shared) s | C: codegen + gcc -O2 build s | LLVM O3: IR + JIT s "
          "| LLVM O2: IR + JIT s | JIT run ms/inference (O3) |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        c, l3, l2 = r["c"], r["llvm3"], r["llvm2"]
        print(f"| {r['model']} | {c['lower']:.2f} | {c['codegen']:.2f} + {c['build']:.2f} = "
              f"{c['codegen'] + c['build']:.2f} | {l3['codegen']:.2f} + {l3['jit']:.2f} = "
              f"{l3['codegen'] + l3['jit']:.2f} | {l2['codegen'] + l2['jit']:.2f} | "
              f"{1000 * l3['run']:.2f} |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
