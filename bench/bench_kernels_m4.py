"""Instructions per kernel on an emulated Cortex-M4 (qemu/mps2-an386, -icount: exact),
arm_cpu strategies (optionally also generic) against TFLM's figures in BASELINE.md.

    .venv/bin/python bench/bench_kernels_m4.py [--models kws,vww] [--generic] [--per-kernel]
                                               [--out FILE]

For each model and each strategy (target keys), every kernel group is
lowered and linked, each with its own static buffers, into one RPC firmware built from
runtime_c (arm-none-eabi-gcc -O2); the host then runs each kernel alone over
the RPC and reads its instruction count.  "Instructions per inference" is
the sum over the model's kernels (the executor's glue, a few hundred
instructions, is not counted; TFLM's interpreter costs 113-565).  Inputs are
the zero-initialized buffers, so data-dependent branches (clamps, softmax)
take one path: counts are exact for that input, a close estimate for others
(TFLM's vary by at most 0.03% with the input).  Prints, per model,
instructions, instructions per MAC and the ratios to TFLM with CMSIS-NN and
to TFLM's reference kernels (measured the same way on the same emulated
board, ../shared/docs/BASELINE.md), and writes JSON.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from aot.frontend import load_model  # noqa: E402
from aot.kernels import lower_group  # noqa: E402
from aot.passes import annotations, optimize  # noqa: E402
from aot.rpc import connect  # noqa: E402
from flash.qemu import QemuConfig, QemuRunner  # noqa: E402

MODELS = ROOT.parent / "shared" / "models"
# "c" has only the cpu key (generic); -mcpu=cortex-m4 adds arm_cpu.
TARGETS = {"generic": "c", "arm_cpu": "c -keys=arm_cpu,cpu -mcpu=cortex-m4"}
DEFAULT = "mlperf,micro_speech"
#: Instructions per inference of TFLM on qemu/mps2-an386 (BASELINE.md, -O2 release):
#: (with CMSIS-NN kernels, with its reference kernels).
TFLM = {
    "mlperf_kws_dscnn": (7_697_356, 43_095_459),
    "mlperf_vww_mobilenetv1_025": (24_101_905, 100_371_813),
    "mlperf_ic_resnet8": (29_861_981, 107_377_189),
    "mlperf_ad_fc_autoencoder": (582_884, 1_953_601),
    "tflm_micro_speech": (1_495_366, 9_312_920),
}


def _firmware():
    path = ROOT / "tests" / "kernels" / "m4_firmware.py"
    spec = importlib.util.spec_from_file_location("m4_firmware", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build(path: Path, tmp: Path, target: str):
    ag = optimize(load_model(path))
    groups = [g for g in annotations(ag).groups if g.kind != "view"]
    kernels = [lower_group(g, ag, target, name=f"k{i}") for i, g in enumerate(groups)]
    return _firmware().build(kernels, [g.name for g in groups], tmp), kernels, groups


def bench_model(path: Path, target: str) -> list[dict]:
    with tempfile.TemporaryDirectory() as tmp:
        elf, kernels, groups = build(path, Path(tmp), target)
        rows = []
        with QemuRunner(QemuConfig(elf=elf, machine="mps2-an386")) as url:
            with connect(url, timeout=30) as client:
                for k, g in zip(kernels, groups):
                    insns = client.run(1, g.name).timings[0]
                    rows.append({"group": g.name, "macs": k.macs, "instructions": insns,
                                 "per_mac": insns / k.macs if k.macs else None})
        return rows


def summary(model: str, rows: list[dict]) -> dict:
    """Totals of one model and strategy, with the ratios to TFLM when known."""
    insns = sum(r["instructions"] for r in rows)
    macs = sum(r["macs"] for r in rows)
    out = {"instructions": insns, "macs": macs, "per_mac": insns / macs if macs else None}
    if model in TFLM:
        cmsis, ref = TFLM[model]
        out.update(tflm_cmsis_nn=cmsis, tflm_reference=ref, vs_cmsis_nn=insns / cmsis,
                   vs_reference=insns / ref)
    return out


def _ratio(v) -> str:
    return f"{v:.2f}x" if v is not None else "-"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=DEFAULT, help="comma-separated name substrings")
    parser.add_argument("--generic", action="store_true",
                        help="also measure the generic strategies")
    parser.add_argument("--per-kernel", action="store_true", help="print every kernel")
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "bench_kernels_m4.json")
    args = parser.parse_args()
    wanted = [w for w in args.models.split(",") if w]
    keys = ["arm_cpu", "generic"] if args.generic else ["arm_cpu"]
    report = {}
    for path in sorted(MODELS.glob("*.tflite")):
        if any(w in path.stem for w in wanted):
            kernels = {key: bench_model(path, TARGETS[key]) for key in keys}
            report[path.stem] = {"kernels": kernels,
                                 "totals": {k: summary(path.stem, v) for k, v in kernels.items()}}
    if args.per_kernel:
        print(f"{'model':28} {'group':34} {'MACs':>9} {'arm_cpu':>10} {'per MAC':>7}"
              + (f" {'generic':>10}" if args.generic else ""))
        for model, entry in report.items():
            for i, a in enumerate(entry["kernels"]["arm_cpu"]):
                per = f"{a['per_mac']:7.2f}" if a["per_mac"] else f"{'-':>7}"
                extra = (f" {entry['kernels']['generic'][i]['instructions']:10}"
                         if args.generic else "")
                print(f"{model:28} {a['group']:34} {a['macs']:9} {a['instructions']:10} {per}"
                      + extra)
        print()
    print("| model | strategy | MACs | instructions | per MAC | vs TFLM+CMSIS-NN "
          "| vs TFLM reference |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for model, entry in report.items():
        for key, t in entry["totals"].items():
            print(f"| {model} | {key} | {t['macs']:,} | {t['instructions']:,} | "
                  f"{t['per_mac']:.2f} | {_ratio(t.get('vs_cmsis_nn'))} | "
                  f"{_ratio(t.get('vs_reference'))} |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
