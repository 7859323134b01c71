"""MLPerf Tiny models: estimated cycles against TFLM+CMSIS-NN's and published results.

    .venv/bin/python bench/bench_cycles_mlperf.py [--board TAG] [--model NAME]...
                                                  [--side both|aot|cmsis-nn] [--no-stage]
                                                  [--json out/bench_cycles_mlperf.json]

Per model (KWS, VWW, ResNet-8, AD from ../shared/models): ``aot profile`` on
the board (default qemu/mps2-an386): the exact instruction count of one
inference (the RPC under QEMU ``-icount``), the cycles the board's core
table estimates from the execution trace (aot.cycles, docs/cycles.md), the
time at the board's clock and at 120 MHz (the NUCLEO-L4R5ZI's, where the
published results were measured), and the best published result on a
Cortex-M4 with its source.  The estimate assumes zero wait states (the
L4R5's flash needs 5 at 120 MHz, mostly hidden by its ART accelerator);
docs/performance.md records a run and its caveats.

Beside it, the TFLM+CMSIS-NN estimate: the same profile of the model compiled
with ``-libs=cmsis-nn`` (every layer handed to CMSIS-NN, compiled in place from
../shared/third_party/CMSIS-NN for the board's core, so its DSP paths on the
M4/M7/M33 and its Helium (MVE) paths on the M55), which runs TFLM's CMSIS-NN
kernels without TFLM's interpreter (docs/performance.md, "TFLM+CMSIS-NN,
estimated the same way"); BASELINE.md's TFLM+CMSIS-NN instruction count is printed beside it
where it has one (M4, M7).  Both firmwares run the same seeded input and their
outputs are checked bit-exact against aot.reference; the exit status is 1 when
one is not.  ``--side`` profiles one of the two only; ``--no-stage`` compiles
aot's side without a stream stage (``patches="off"``, as the ``-libs`` build
always is: ResNet-8 takes one by default, docs/memory.md "Row streaming").
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import numpy as np  # noqa: E402

from aot.cycles.profile import profile_model  # noqa: E402
from aot.firmware.verify import random_inputs, reference_outputs  # noqa: E402
from aot.frontend import load_model  # noqa: E402
from bench_models_qemu import BASELINES, NO_BASELINE  # noqa: E402
from stamp import describe, stamp  # noqa: E402

MODELS_DIR = ROOT.parent / "shared" / "models"
CMSIS_NN = ROOT.parent / "shared" / "third_party" / "CMSIS-NN"
L4R5_HZ = 120_000_000

#: Best published results on a Cortex-M4 (STM32L4R5 at 120 MHz), as quoted in issue 21:
#: MLPerf Tiny inference results (github.com/mlcommons/tiny_results_v1.0 and _v1.1,
#: closed division, NUCLEO-L4R5ZI): STMicroelectronics' X-CUBE-AI submissions for KWS,
#: VWW and ResNet-8, Plumerai's inference engine for the anomaly detector.
PUBLISHED = {
    "mlperf_kws_dscnn": (5.2e6, "X-CUBE-AI, STM32L4R5 @ 120 MHz (MLPerf Tiny)"),
    "mlperf_vww_mobilenetv1_025": (10.7e6, "X-CUBE-AI, STM32L4R5 @ 120 MHz (MLPerf Tiny)"),
    "mlperf_ic_resnet8": (19.8e6, "X-CUBE-AI, STM32L4R5 @ 120 MHz (MLPerf Tiny)"),
    "mlperf_ad_fc_autoencoder": (0.49e6, "Plumerai, STM32L4R5 @ 120 MHz (MLPerf Tiny)"),
}


def _profile(path: Path, board: str, inputs, want, cache: Path, libs: bool,
             no_stage: bool) -> dict:
    """One profile (aot's kernels, or every layer to CMSIS-NN) and its exactness."""
    options = {"target": "c -libs=cmsis-nn",
               "codegen_options": {"cmsis-nn": {"path": str(CMSIS_NN)}}} if libs else \
        ({"patches": "off"} if no_stage else {})
    p = profile_model(path, board, inputs=inputs, cache_dir=cache, **options)
    exact = len(p.outputs) == len(want) and all(
        np.array_equal(got, w[0]) for got, w in zip(p.outputs, want))
    kernels = sum(r.instructions for r in p.kernels())
    return {"p": p, "instructions": p.rpc_instructions, "cycles": round(p.cycles),
            "kernel_instructions": kernels, "entry_instructions": p.instructions - kernels,
            "cycles_per_instruction": round(p.cycles / p.rpc_instructions, 3),
            "trace_complete": p.trace_complete, "exact": exact}


def _n(value, fmt: str = ",") -> str:
    return "n/a" if value is None else format(value, fmt)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--board", default="qemu/mps2-an386")
    ap.add_argument("--model", action="append", choices=list(PUBLISHED),
                    help="a model name (default: all four)")
    ap.add_argument("--side", choices=("both", "aot", "cmsis-nn"), default="both",
                    help="profile aot's kernels, the TFLM+CMSIS-NN estimate, or both")
    ap.add_argument("--no-stage", action="store_true",
                    help="compile aot's side without a stream stage (patches off)")
    ap.add_argument("--cache-dir", type=Path, default=ROOT / "out" / "cache",
                    help="build cache shared by the runs (CMSIS-NN's objects)")
    ap.add_argument("--json", type=Path, default=ROOT / "out" / "bench_cycles_mlperf.json")
    args = ap.parse_args()
    if args.no_stage and args.side == "cmsis-nn":
        ap.error("--no-stage applies to aot's side: not with --side cmsis-nn")
    if args.side != "aot" and not CMSIS_NN.is_dir():
        print(f"no CMSIS-NN source tree at {CMSIS_NN}", file=sys.stderr)
        return 2
    baseline = BASELINES.get(args.board, NO_BASELINE)
    started = stamp()
    rows = []
    for name in args.model or list(PUBLISHED):
        path = MODELS_DIR / f"{name}.tflite"
        graph = load_model(path)
        inputs = random_inputs(graph, 1, 0)   # aot profile's default input (seed 0)
        want = reference_outputs(graph, inputs)
        published, source = PUBLISHED[name]
        row = {"model": name, "board": args.board, "aot_stage": not args.no_stage,
               "published_cycles": published,
               "published_ms_at_120mhz": round(published / L4R5_HZ * 1e3, 2),
               "published_source": source,
               "baseline_tflm_cmsis_nn_instructions": baseline.cmsis_nn.get(name)}
        for side, libs in (("aot", False), ("cmsis_nn", True)):
            if args.side not in ("both", side.replace("_", "-")):
                continue
            r = _profile(path, args.board, inputs, want, args.cache_dir, libs, args.no_stage)
            p = r.pop("p")
            row.update({"core": p.core.name, "clock_hz": p.clock_hz})
            if side == "aot":
                row.update({"macs": p.macs, "cycles_per_mac": round(p.cycles / p.macs, 3),
                            "ms_at_board_clock": p.ms(), "ms_at_120mhz": p.ms(L4R5_HZ),
                            "ratio": round(p.cycles / published, 3)})
            row[side] = r
            print(f"{name} {side}: {r['instructions']:,} instructions, {r['cycles']:,} cycles, "
                  f"{'bit-exact' if r['exact'] else 'OUTPUTS DIFFER'}", file=sys.stderr,
                  flush=True)
        if "aot" in row and "cmsis_nn" in row:
            row["ours_over_tflm_cmsis_nn"] = round(row["aot"]["cycles"]
                                                   / row["cmsis_nn"]["cycles"], 3)
        if "cmsis_nn" in row and row["baseline_tflm_cmsis_nn_instructions"]:
            base = row["baseline_tflm_cmsis_nn_instructions"]
            row["cmsis_nn_over_baseline_instructions"] = round(
                row["cmsis_nn"]["instructions"] / base, 5)
            # what TFLM executes besides the kernels (its interpreter, the kernels' Eval),
            # up to the input's effect on the kernels (BASELINE.md: at most 0.03 %)
            row["baseline_minus_kernels"] = base - row["cmsis_nn"]["kernel_instructions"]
        rows.append(row)
    core = rows[0].get("core", "") if rows else ""
    print(f"\n{args.board} ({core}), zero wait states; {describe(started)}\n")
    if args.side != "cmsis-nn":
        board_mhz = rows[0]["clock_hz"] / 1e6 if rows and rows[0]["clock_hz"] else None
        print(f"| model | MACs | instructions | est. cycles | cycles/MAC | "
              f"ms @ {board_mhz:g} MHz | ms @ 120 MHz | best published (cycles, ms @ 120 MHz) | "
              "est. / published |")
        print("|---|---:|---:|---:|---:|---:|---:|---|---:|")
        for r in rows:
            print(f"| {r['model']} | {r['macs']:,} | {r['aot']['instructions']:,} | "
                  f"{r['aot']['cycles']:,} | {r['cycles_per_mac']:.2f} | "
                  f"{r['ms_at_board_clock']:.1f} | {r['ms_at_120mhz']:.1f} | "
                  f"{r['published_cycles'] / 1e6:g} M, {r['published_ms_at_120mhz']:g} ms: "
                  f"{r['published_source']} | {r['ratio']:.2f}x |")
        print()
    if args.side != "aot":
        print("| model | ours: est. cycles | TFLM+CMSIS-NN: instructions (BASELINE.md) | "
              "est. cycles | cycles/instr. | ours / TFLM+CMSIS-NN | bit-exact |")
        print("|---|---:|---:|---:|---:|---:|---|")
        for r in rows:
            c = r["cmsis_nn"]
            ours = r.get("aot", {}).get("cycles")
            exact = all(r[s]["exact"] for s in ("aot", "cmsis_nn") if s in r)
            print(f"| {r['model']} | {_n(ours)} | {c['instructions']:,} "
                  f"({_n(r['baseline_tflm_cmsis_nn_instructions'])}) | {c['cycles']:,} | "
                  f"{c['cycles_per_instruction']:.2f} | "
                  f"{_n(r.get('ours_over_tflm_cmsis_nn'), '.2f')} | "
                  f"{'yes' if exact else 'NO'} |")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"stamp": started, "rows": rows}, indent=2) + "\n")
    print(f"\nJSON written to {args.json}")
    exact = all(r[s]["exact"] for r in rows for s in ("aot", "cmsis_nn") if s in r)
    return 0 if exact else 1


if __name__ == "__main__":
    raise SystemExit(main())
