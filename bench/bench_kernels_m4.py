"""Instructions per kernel on an emulated Cortex-M4 (qemu/mps2-an386, -icount: exact).

    .venv/bin/python bench/bench_kernels_m4.py [--models kws,micro_speech] [--out FILE]

For each model, every kernel group is lowered with the generic strategy and
linked, each with its own static buffers, into one RPC firmware built from
runtime_c (arm-none-eabi-gcc -O2); the host then runs each kernel alone over
the RPC and reads its instruction count.  Inputs are the zero-initialized
buffers, so data-dependent branches (clamps, softmax) take one path: counts
are exact for that input, a close estimate for others.  Prints a table and
writes JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from aot.codegen.c import C_TYPES  # noqa: E402
from aot.frontend import load_model  # noqa: E402
from aot.kernels import lower_group, support_files  # noqa: E402
from aot.passes import annotations, optimize  # noqa: E402
from aot.rpc import connect  # noqa: E402
from flash.qemu import QemuConfig, QemuRunner  # noqa: E402

MODELS = ROOT.parent / "shared" / "models"
ARCH = "-mcpu=cortex-m4 -mfloat-abi=hard -mfpu=fpv4-sp-d16"
DEFAULT = "kws_dscnn,micro_speech,hello_world,magic_wand,keyword_scrambled,lstm,autoencoder"


def descriptor(kernels, groups) -> str:
    """C source of an aot_rpc_model exposing each kernel on its own static buffers."""
    lines = ["#include <stdint.h>", "#include <stddef.h>", '#include "aot/model.h"', ""]
    table = []
    for i, (k, g) in enumerate(zip(kernels, groups)):
        lines.append(k.prototype)
        args = []
        for j, p in enumerate(k.params):
            ident = f"b{i}_{j}"
            lines.append(f"static {C_TYPES[p.dtype]} {ident}[{max(p.nbytes, 1)}] "
                         "__attribute__((aligned(8)));")
            args.append(ident)
        lines.append(f"static int32_t run_{i}(void *ctx) {{ (void)ctx; "
                     f"return {k.name}({', '.join(args)}); }}")
        table.append(f'    {{"{g.name}", run_{i}}},')
    lines += ["", "static int32_t run_all(void *ctx) {", "    (void)ctx;"]
    lines += [f"    run_{i}(ctx);" for i in range(len(kernels))]
    lines += ["    return 0;", "}", "", "static const aot_kernel_t kernels[] = {", *table, "};",
              "const aot_model_t aot_rpc_model = {",
              f'    AOT_MODEL_ABI_VERSION, "bench", "", 0, NULL, {len(kernels)}, kernels, '
              "run_all, 0,", "};", ""]
    return "\n".join(lines)


def build(path: Path, tmp: Path):
    ag = optimize(load_model(path))
    groups = [g for g in annotations(ag).groups if g.kind != "view"]
    kernels = [lower_group(g, ag, "c -keys=arm_cpu,cpu -mcpu=cortex-m4", name=f"k{i}")
               for i, g in enumerate(groups)]
    for name, text in support_files(None).items():
        (tmp / name).write_text(text)
    srcs = []
    for k in kernels:
        (tmp / f"{k.name}.c").write_text(k.source)
        srcs.append(str(tmp / f"{k.name}.c"))
    (tmp / "model.c").write_text(descriptor(kernels, groups))
    srcs.append(str(tmp / "model.c"))
    elf = tmp / "bench.elf"
    subprocess.run(["make", "-s", "-f", str(ROOT / "runtime_c" / "runtime.mk"), str(elf),
                    f"AOT_RUNTIME_DIR={ROOT / 'runtime_c'}", "AOT_PORT=mps2",
                    "CC=arm-none-eabi-gcc", f"AOT_ARCH_FLAGS={ARCH}", f"AOT_BUILD_DIR={tmp}",
                    f"AOT_FIRMWARE={elf}", f"AOT_APP_SRCS={' '.join(srcs)}",
                    f"AOT_EXTRA_CFLAGS=-I{tmp}", "AOT_BOARD_TAG=qemu/mps2-an386",
                    # float kernels call expf/fmaxf: the port's flags plus libm
                    "AOT_PORT_LDFLAGS=-nostartfiles --specs=nano.specs --specs=nosys.specs "
                    "-Wl,--gc-sections -lm"],
                   check=True, env={**os.environ, "MAKEFLAGS": ""})
    return elf, kernels, groups


def bench_model(path: Path) -> list[dict]:
    with tempfile.TemporaryDirectory() as tmp:
        elf, kernels, groups = build(path, Path(tmp))
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
            report[path.stem] = bench_model(path)
    print(f"{'model':30} {'group':36} {'MACs':>9} {'instructions':>13} {'per MAC':>8}")
    for model, rows in report.items():
        for r in rows:
            per = f"{r['per_mac']:8.2f}" if r["per_mac"] else f"{'-':>8}"
            print(f"{model:30} {r['group']:36} {r['macs']:9} {r['instructions']:13} {per}")
        total = sum(r["instructions"] for r in rows)
        macs = sum(r["macs"] for r in rows)
        print(f"{model:30} {'total':36} {macs:9} {total:13} {total / macs:8.2f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
