"""Validate the Cortex-M4 cycle estimate (aot.cycles) on TFLM+CMSIS-NN's kernels.

    .venv/bin/python bench/validate_cycles.py [--cmsis-nn DIR] [--json out/validate_cycles.json]

BASELINE.md's TFLM+CMSIS-NN firmware cannot be rebuilt here (TFLM's sources
are not available offline), but its kernels can: ``cycles_validation/
kws_cmsis_nn.c`` runs MLPerf Tiny's keyword-spotting DS-CNN as the sequence
of CMSIS-NN calls TFLM makes (CMSIS-NN from ``../shared/third_party``, built
with arm-none-eabi-gcc 12 -O2 for the Cortex-M4F like the baseline).  The
script builds it, runs it under QEMU (qemu/mps2-an386) with the execution
log on, and reports:

* its executed instructions against BASELINE.md's TFLM+CMSIS-NN count (a
  check that the harness is the baseline's work: TFLM's interpreter adds
  only a few hundred instructions);
* the estimated Cortex-M4 cycles per CMSIS-NN function and in total, the
  same at 120 MHz against the published MLPerf Tiny latencies of
  CMSIS-NN-based KWS submissions on the NUCLEO-L4R5ZI (Cortex-M4, 120 MHz);
* how the estimate moves with the model's uncertain parameters (branch
  refill P from 1 to 3, IT folded or not, flash wait states on refills).

docs/cycles.md ("Validation") records a run and what it does not show.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from aot.cycles import CostModel, MemoryTiming, Program, TraceParser, get_core  # noqa: E402
from aot.cycles.session import trace_elf  # noqa: E402

HERE = Path(__file__).resolve().parent / "cycles_validation"
CMSIS_NN = ROOT.parent / "shared" / "third_party" / "CMSIS-NN"
FLAGS = ["-O2", "-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16",
         "-ffunction-sections", "-fdata-sections", "-std=c11"]
FUNCTIONS = ["arm_convolve_wrapper_s8", "arm_depthwise_conv_wrapper_s8", "arm_avgpool_s8",
             "arm_fully_connected_s8", "arm_softmax_s8"]
#: BASELINE.md, Cortex-M4, -O2, release: TFLM+CMSIS-NN instructions per KWS inference.
BASELINE_INSTRUCTIONS = 7_697_356
#: Published latencies of KWS on the NUCLEO-L4R5ZI at 120 MHz (BASELINE.md, MLPerf Tiny).
PUBLISHED_MS = {"microTVM with CMSIS-NN": 100.0, "TFLM reference submission": 182.0}
CLOCK = 120_000_000


def build(cmsis_nn: Path, out: Path) -> Path:
    if shutil.which("arm-none-eabi-gcc") is None:
        sys.exit("needs arm-none-eabi-gcc (scripts/setup.sh installs it)")
    sources = sorted(p for p in (cmsis_nn / "Source").rglob("*.c")
                     if not any(t in p.name for t in ("f16", "f32", "_flt")))
    elf = out / "kws_cmsis_nn.elf"
    subprocess.run(["arm-none-eabi-gcc", *FLAGS, "-I", str(cmsis_nn / "Include"),
                    "-nostartfiles", "-specs=nano.specs", "-specs=nosys.specs",
                    "-T", str(HERE / "link.ld"), "-Wl,--gc-sections", "-w",
                    str(HERE / "kws_cmsis_nn.c"), *map(str, sources), "-o", str(elf)],
                   check=True)
    return elf


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cmsis-nn", type=Path, default=CMSIS_NN)
    ap.add_argument("--json", type=Path, default=ROOT / "out" / "validate_cycles.json")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="aot-validate-") as tmp:
        elf = build(args.cmsis_nn, Path(tmp))
        program = Program(elf)
        parser = TraceParser({program.address_of("inference"): "inference"},
                             program.address_of("inference_done"),
                             {program.address_of(f): f for f in FUNCTIONS})
        trace_elf(elf, "mps2-an386", parser)
        (window,) = parser.windows
        m4 = get_core("cortex-m4")
        model = CostModel(program, m4)
        total = model.estimate(window.edges())
        rows = {name: model.estimate(edges) for name, edges in window.segments.items()}
        variants = {
            "P = 1": CostModel(program, dataclasses.replace(
                m4, refill={**m4.refill, "direct": 1, "register": 1, "load": 1})),
            "P = 3": CostModel(program, dataclasses.replace(
                m4, refill={**m4.refill, "direct": 3, "register": 3})),
            "IT folded (0 cycles)": CostModel(program, dataclasses.replace(
                m4, cycles={**m4.cycles, "it": 0})),
            "5 fetch wait states per refill": CostModel(program, m4, MemoryTiming(5, 0)),
        }
        sensitivity = {k: v.estimate(window.edges()).cycles for k, v in variants.items()}

    print(f"TFLM+CMSIS-NN KWS kernels (CMSIS-NN {args.cmsis_nn}) on qemu/mps2-an386\n")
    print("| function | instructions | est. M4 cycles | cycles/instr |")
    print("|---|---:|---:|---:|")
    for name, est in rows.items():
        print(f"| {name} | {est.instructions:,} | {round(est.cycles):,} | "
              f"{est.cycles / max(est.instructions, 1):.2f} |")
    print(f"| total | {total.instructions:,} | {round(total.cycles):,} | "
          f"{total.cycles / total.instructions:.3f} |\n")
    diff = total.instructions - BASELINE_INSTRUCTIONS
    print(f"instructions vs BASELINE.md's TFLM+CMSIS-NN: {total.instructions:,} vs "
          f"{BASELINE_INSTRUCTIONS:,} ({diff:+,}, {100 * diff / BASELINE_INSTRUCTIONS:+.3f}%)")
    est_ms = total.cycles / CLOCK * 1e3
    print(f"estimate at 120 MHz: {est_ms:.1f} ms ({total.cycles / 1e6:.2f} M cycles)")
    for who, ms in PUBLISHED_MS.items():
        print(f"  published {who}: {ms:g} ms ({ms * CLOCK / 1e9:.1f} M cycles): estimate "
              f"{100 * (est_ms - ms) / ms:+.0f}%")
    print("\nsensitivity (total cycles):")
    for k, v in sensitivity.items():
        print(f"  {k}: {round(v):,} ({100 * (v - total.cycles) / total.cycles:+.1f}%)")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({
        "instructions": total.instructions, "cycles": round(total.cycles),
        "baseline_instructions": BASELINE_INSTRUCTIONS,
        "functions": {k: {"instructions": v.instructions, "cycles": round(v.cycles)}
                      for k, v in rows.items()},
        "cycles_by_class": {k: round(v) for k, v in total.by_class.items()},
        "published_ms_at_120mhz": PUBLISHED_MS, "estimate_ms_at_120mhz": round(est_ms, 2),
        "sensitivity": {k: round(v) for k, v in sensitivity.items()},
    }, indent=2) + "\n")
    print(f"\nJSON written to {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
