"""Every shared model as firmware on the emulated Cortex-M4 (qemu/mps2-an386).

    .venv/bin/python bench/bench_models_qemu.py [--json out/bench_models_qemu.json]
                                                [--model NAME]...

Per model: compile, create the project, build (gcc -O2), run the sample
inputs (or two seeded random ones) over the RPC under QEMU with
``-icount shift=0``, and report

* instructions per inference (mean over the invocations; exact counts, see
  docs/runtime.md), per MAC (MACs summed over the compiled kernels), and the
  ratio to TFLM with CMSIS-NN and with its reference kernels on the same
  emulated board (../shared/docs/BASELINE.md; above 1 means we execute more);
* flash from the linker map: model code, weights, runtime (RPC server, port,
  startup, C library);
* RAM: workspace (the model's planned activations and state), the RPC
  input/output buffers, the peak stack (runtime + one inference, from GCC's
  call graph) and the runtime's static data;
* whether the outputs equal aot.reference's bit for bit (float outputs:
  the largest difference, which must stay within 1e-5).

Prints a markdown table (as in docs/firmware.md) and writes JSON.
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

from aot.compile import compile_model  # noqa: E402
from aot.errors import AotError  # noqa: E402
from aot.firmware import build_project, create_project, run_project  # noqa: E402
from aot.firmware.stack import stack_usage  # noqa: E402
from aot.firmware.verify import (  # noqa: E402
    FLOAT_TOLERANCE,
    compare,
    random_inputs,
    reference_outputs,
    sample_path,
)

MODELS_DIR = ROOT.parent / "shared" / "models"
BOARD = "qemu/mps2-an386"
# Instructions per inference on qemu/mps2-an386, -O2 release builds (BASELINE.md).
TFLM_CMSIS_NN = {"mlperf_kws_dscnn": 7_697_356, "mlperf_vww_mobilenetv1_025": 24_101_905,
                 "mlperf_ic_resnet8": 29_861_981, "mlperf_ad_fc_autoencoder": 582_884,
                 "tflm_micro_speech": 1_495_366}
TFLM_REFERENCE = {"mlperf_kws_dscnn": 43_095_459, "mlperf_vww_mobilenetv1_025": 100_371_813,
                  "mlperf_ic_resnet8": 107_377_189, "mlperf_ad_fc_autoencoder": 1_953_601,
                  "tflm_micro_speech": 9_312_920}


def bench_model(path: Path, workdir: Path, cache: Path) -> dict:
    compiled = compile_model(path, BOARD, measure_code=False)
    graph = compiled.graph
    if sample_path(path).is_file():
        inputs = [np.load(sample_path(path))]
        source = "samples"
    else:
        inputs = random_inputs(graph, 2, seed=0)
        source = "random"
    project = create_project(compiled.write(workdir / "artifact"), compiled.board,
                             workdir / "project")
    build = build_project(project, cache_dir=cache)
    stack = stack_usage(project)
    run = run_project(project, inputs, build=build)
    checks = compare(graph, run.outputs, reference_outputs(graph, inputs),
                     float_tolerance=FLOAT_TOLERANCE)
    macs = sum(k["macs"] for k in compiled.metadata()["kernels"])
    instr = run.per_inference
    s = build.sizes
    return {
        "model": graph.name, "inputs": source, "invocations": len(run.timings),
        "bit_exact": all(c.exact for c in checks), "passed": all(c.passed for c in checks),
        "max_abs_diff": max(c.max_abs_diff for c in checks), "macs": macs,
        "instructions_per_inference": instr,
        "timings": list(run.timings),
        "instructions_per_mac": instr / macs if macs else None,
        "vs_tflm_cmsis_nn": instr / TFLM_CMSIS_NN[graph.name]
        if graph.name in TFLM_CMSIS_NN else None,
        "vs_tflm_reference": instr / TFLM_REFERENCE[graph.name]
        if graph.name in TFLM_REFERENCE else None,
        "flash": {"model_code": s.model_code, "weights": s.weights,
                  "runtime": s.runtime_flash, "total": s.flash},
        "ram": {"workspace": s.workspace, "io": s.io, "stack_peak": stack.peak,
                "stack_bounded": stack.bounded, "stack_reserved": s.stack,
                "runtime": s.runtime_ram,
                "total_used": s.workspace + s.io + stack.peak + s.runtime_ram},
    }


def _n(v) -> str:
    return "-" if v is None else f"{v:,}"


def _x(v, digits=2) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def _verdict(r: dict) -> str:
    if r["bit_exact"]:
        return "yes"
    return f"float, max diff {r['max_abs_diff']:.1e}" if r["passed"] else "NO"


def table(rows: list[dict]) -> str:
    head = ("| model | MACs | instructions | instr/MAC | vs TFLM+CMSIS-NN | vs TFLM ref | "
            "flash: code / weights / runtime | RAM: workspace / i/o / stack / runtime | "
            "exact |\n|---|---|---|---|---|---|---|---|---|\n")
    lines = []
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['model']} | {r['error']} |||||||| ")
            continue
        f, m = r["flash"], r["ram"]
        lines.append(
            f"| {r['model']} | {_n(r['macs'])} | {_n(r['instructions_per_inference'])} | "
            f"{_x(r['instructions_per_mac'])} | {_x(r['vs_tflm_cmsis_nn'])}x | "
            f"{_x(r['vs_tflm_reference'])}x | {_n(f['model_code'])} / {_n(f['weights'])} / "
            f"{_n(f['runtime'])} | {_n(m['workspace'])} / {_n(m['io'])} / "
            f"{_n(m['stack_peak'])} / {_n(m['runtime'])} | "
            f"{_verdict(r)} |")
    return head + "\n".join(lines).replace("-x |", "- |") + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=ROOT / "out" / "bench_models_qemu.json")
    parser.add_argument("--model", action="append", help="only this model (repeatable)")
    args = parser.parse_args()
    paths = sorted(p for p in MODELS_DIR.iterdir() if p.suffix in (".tflite", ".onnx"))
    if args.model:
        paths = [p for p in paths if p.stem in args.model]
    rows = []
    with tempfile.TemporaryDirectory(prefix="aot-bench-fw-") as tmp:
        for i, path in enumerate(paths):
            try:
                rows.append(bench_model(path, Path(tmp) / str(i), Path(tmp) / "cache"))
            except AotError as err:
                rows.append({"model": path.stem, "error": str(err).splitlines()[0]})
            print(f"  {path.stem}: done", file=sys.stderr)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"board": BOARD, "models": rows}, indent=2) + "\n")
    print(table(rows), end="")
    print(f"JSON written to {args.json}")
    return 0 if all(r.get("passed") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
