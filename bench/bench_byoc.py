"""Our kernels, CMSIS-NN through the BYOC pipeline, and the per-layer choice, on QEMU.

    .venv/bin/python bench/bench_byoc.py [--model NAME]... [--json out/bench_byoc.json]

Per MLPerf Tiny model on qemu/mps2-an386 (Cortex-M4, gcc -O2): the exact
instructions per inference (QEMU -icount, over the RPC, mean over the sample
inputs) of one firmware each

* with aot's kernels only;
* with ``-libs=cmsis-nn``: every layer CMSIS-NN supports handed to it
  (CMSIS-NN compiled from ../shared/third_party/CMSIS-NN, used in place);
* with the per-layer choice (:func:`aot.tune.layers.choose_layers`: each
  kernel measured alone on both sides, the cheaper one kept);

next to TFLM+CMSIS-NN from ../shared/docs/BASELINE.md (the same CMSIS-NN
kernels under TFLM's interpreter).  Every output is checked against
aot.reference (bit-exact with TFLM).  The same graph, the same memory
planner, two kernel libraries: the difference between columns is the
kernels alone.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from aot.compile import CompiledModel  # noqa: E402
from aot.firmware import run_on_board  # noqa: E402
from aot.firmware.verify import random_inputs, reference_outputs, sample_path  # noqa: E402
from aot.tune.layers import choose_layers  # noqa: E402
from bench_models_qemu import BASELINES  # noqa: E402
from stamp import stamp  # noqa: E402

MODELS_DIR = ROOT.parent / "shared" / "models"
CMSIS_NN = ROOT.parent / "shared" / "third_party" / "CMSIS-NN"
BOARD = "qemu/mps2-an386"
MODELS = ("mlperf_kws_dscnn", "mlperf_vww_mobilenetv1_025", "mlperf_ic_resnet8",
          "mlperf_ad_fc_autoencoder")


def _inputs(name: str, graph) -> list[np.ndarray]:
    sample = sample_path(MODELS_DIR / f"{name}.tflite")
    if sample.exists():
        return [np.load(sample)]
    return random_inputs(graph, 2, 0)


def _run(compiled: CompiledModel, inputs, workdir: Path, cache: Path) -> tuple[int, bool]:
    """Mean instructions per inference and whether every output equals the reference."""
    run = run_on_board(compiled, inputs, workdir=workdir, cache_dir=cache)
    want = reference_outputs(compiled.graph, inputs)
    exact = all(np.array_equal(g, w) for g, w in zip(run.outputs, want))
    return round(sum(run.timings) / len(run.timings)), exact


def bench_model(name: str, workdir: Path, cache: Path) -> dict:
    path = MODELS_DIR / f"{name}.tflite"
    choice = choose_layers(path, BOARD, codegen_options={"cmsis-nn": {"path": str(CMSIS_NN)}},
                           cache_dir=cache, workdir=workdir)
    inputs = _inputs(name, choice.ours.graph)
    row = {"model": name, "macs": sum(k.macs for k in choice.ours.kernels)}
    for key, compiled in (("aot", choice.ours), ("cmsis_nn", choice.theirs),
                          ("choice", choice.compiled)):
        with tempfile.TemporaryDirectory(dir=workdir) as tmp:
            row[key], row[f"{key}_exact"] = _run(compiled, inputs, Path(tmp), cache)
    by = [layer["by"] for layer in choice.compiled.layers()]
    row["choice_layers"] = {who: by.count(who) for who in sorted(set(by))}
    row["cmsis_nn_layers"] = sum(k.codegen == "cmsis-nn" for k in choice.theirs.kernels)
    row["layers"] = len(choice.theirs.kernels)
    row["units"] = choice.units
    row["tflm_cmsis_nn"] = BASELINES[BOARD].cmsis_nn.get(name)
    return row


def table(rows: list[dict]) -> str:
    out = ["| model | MACs | aot kernels | CMSIS-NN via aot (layers) | per-layer choice (layers) "
           "| TFLM+CMSIS-NN | CMSIS-NN via aot / TFLM | choice / best | bit-exact |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        best = min(r["aot"], r["cmsis_nn"])
        tflm = r["tflm_cmsis_nn"]
        layers = ", ".join(f"{n} {who}" for who, n in r["choice_layers"].items())
        exact = all(r[f"{k}_exact"] for k in ("aot", "cmsis_nn", "choice"))
        out.append(f"| {r['model']} | {r['macs']:,} | {r['aot']:,} | {r['cmsis_nn']:,} "
                   f"({r['cmsis_nn_layers']}/{r['layers']}) | {r['choice']:,} ({layers}) | "
                   f"{tflm:,} | {r['cmsis_nn'] / tflm:.4f} | {r['choice'] / best:.4f} | "
                   f"{'yes' if exact else 'NO'} |")
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="append", choices=MODELS)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if not CMSIS_NN.is_dir():
        print(f"no CMSIS-NN source tree at {CMSIS_NN}", file=sys.stderr)
        return 2
    rows = []
    with tempfile.TemporaryDirectory(prefix="aot-bench-byoc-") as tmp:
        cache = Path(tmp) / "cache"
        for name in args.model or MODELS:
            rows.append(bench_model(name, Path(tmp), cache))
            print(f"{name}: aot {rows[-1]['aot']:,}, cmsis-nn {rows[-1]['cmsis_nn']:,}, "
                  f"choice {rows[-1]['choice']:,}", file=sys.stderr, flush=True)
    print(table(rows))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"stamp": stamp(), "board": BOARD, "models": rows},
                                        indent=2) + "\n")
    ok = all(r["choice"] <= min(r["aot"], r["cmsis_nn"]) * 1.0003 for r in rows)
    return 0 if ok and all(r[f"{k}_exact"] for r in rows for k in ("aot", "cmsis_nn",
                                                                   "choice")) else 1


if __name__ == "__main__":
    sys.exit(main())
