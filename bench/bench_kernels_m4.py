"""Instructions per kernel on an emulated Cortex-M4 (qemu/mps2-an386, -icount: exact),
generic against arm_cpu strategies.

    .venv/bin/python bench/bench_kernels_m4.py [--models kws,micro_speech] [--out FILE]

For each model and each strategy (target keys), every kernel group is
lowered and linked, each with its own static buffers, into one RPC firmware built from
runtime_c (arm-none-eabi-gcc -O2); the host then runs each kernel alone over
the RPC and reads its instruction count.  Inputs are the zero-initialized
buffers, so data-dependent branches (clamps, softmax) take one path: counts
are exact for that input, a close estimate for others.  Prints a table and
writes JSON.
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
DEFAULT = "kws_dscnn,micro_speech,hello_world,magic_wand,keyword_scrambled,lstm,autoencoder"


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=DEFAULT, help="comma-separated name substrings")
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "bench_kernels_m4.json")
    args = parser.parse_args()
    wanted = [w for w in args.models.split(",") if w]
    report = {}
    for path in sorted(MODELS.glob("*.tflite")):
        if any(w in path.stem for w in wanted):
            report[path.stem] = {key: bench_model(path, t) for key, t in TARGETS.items()}
    print(f"{'model':28} {'group':34} {'MACs':>9} {'generic':>10} {'arm_cpu':>10} {'ratio':>6}")
    for model, by_target in report.items():
        for g, a in zip(by_target["generic"], by_target["arm_cpu"]):
            print(f"{model:28} {g['group']:34} {g['macs']:9} {g['instructions']:10} "
                  f"{a['instructions']:10} {g['instructions'] / a['instructions']:6.2f}")
        tg = sum(r["instructions"] for r in by_target["generic"])
        ta = sum(r["instructions"] for r in by_target["arm_cpu"])
        macs = sum(r["macs"] for r in by_target["generic"])
        print(f"{model:28} {'total (per MAC: ' + f'{tg / macs:.2f} / {ta / macs:.2f})':34} "
              f"{macs:9} {tg:10} {ta:10} {tg / ta:6.2f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
