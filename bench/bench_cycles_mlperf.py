"""MLPerf Tiny models: exact instructions and estimated Cortex-M4 cycles against published results.

    .venv/bin/python bench/bench_cycles_mlperf.py [--board TAG] [--model NAME]...
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
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from aot.cycles.profile import profile_model  # noqa: E402

MODELS_DIR = ROOT.parent / "shared" / "models"
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--board", default="qemu/mps2-an386")
    ap.add_argument("--model", action="append", help="a model name (default: all four)")
    ap.add_argument("--json", type=Path, default=ROOT / "out" / "bench_cycles_mlperf.json")
    args = ap.parse_args()
    rows = []
    for name in args.model or list(PUBLISHED):
        p = profile_model(MODELS_DIR / f"{name}.tflite", args.board)
        published, source = PUBLISHED[name]
        rows.append({
            "model": name, "macs": p.macs, "instructions": p.rpc_instructions,
            "cycles": round(p.cycles), "cycles_per_mac": round(p.cycles / p.macs, 3),
            "core": p.core.name, "clock_hz": p.clock_hz, "ms_at_board_clock": p.ms(),
            "ms_at_120mhz": p.ms(L4R5_HZ), "published_cycles": published,
            "published_ms_at_120mhz": round(published / L4R5_HZ * 1e3, 2),
            "published_source": source, "ratio": round(p.cycles / published, 3),
        })
        print(f"{name}: {p.rpc_instructions:,} instructions, {round(p.cycles):,} cycles",
              file=sys.stderr)
    board_mhz = rows[0]["clock_hz"] / 1e6 if rows and rows[0]["clock_hz"] else None
    print(f"\n{args.board} ({rows[0]['core'] if rows else ''}), zero wait states\n")
    print(f"| model | MACs | instructions | est. cycles | cycles/MAC | ms @ {board_mhz:g} MHz | "
          "ms @ 120 MHz | best published (cycles, ms @ 120 MHz) | est. / published |")
    print("|---|---:|---:|---:|---:|---:|---:|---|---:|")
    for r in rows:
        print(f"| {r['model']} | {r['macs']:,} | {r['instructions']:,} | {r['cycles']:,} | "
              f"{r['cycles_per_mac']:.2f} | {r['ms_at_board_clock']:.1f} | "
              f"{r['ms_at_120mhz']:.1f} | {r['published_cycles'] / 1e6:g} M, "
              f"{r['published_ms_at_120mhz']:g} ms: {r['published_source']} | "
              f"{r['ratio']:.2f}x |")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(rows, indent=2) + "\n")
    print(f"\nJSON written to {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
