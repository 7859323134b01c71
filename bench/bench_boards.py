"""MLPerf Tiny on the real boards: cycles at zero wait states and with each board's memory.

    .venv/bin/python bench/bench_boards.py [--board TAG]... [--model NAME]...
                                           [--side both|aot|cmsis-nn]
                                           [--json out/bench_boards.json]

Per MLPerf Tiny model (KWS, VWW, ResNet-8, AD from ../shared/models) and real
board with a core table (st/nucleo-l4r5zi, st/nucleo-f746zg, nordic/nrf52840dk,
raspberrypi/pico): ``aot profile --board TAG`` compiles the model for the
emulated board of the board's core (its record's ``memory.timing.trace_board``),
traces one inference under QEMU and prices it with the board's core table,
once as the core alone (zero wait states) and once with the board's memory
(flash wait states, caches, prefetch: docs/cycles.md "Memory stalls"), every
constant read from flash (``placement=False``); then again as ``aot compile
--board`` compiles by default: the placement it makes for that board (the hottest
constants copied to the RAM the plan leaves, docs/memory.md "Placement") and, for
aot's kernels, the pre-tuned records aot ships for the core (docs/tuning.md), the
"placed" columns, with the estimated gain the compiler reported beside it.  A last table
gives the compiler's own placement per model and board (aot's kernels, no QEMU:
the Pico's rows too, whose trace board is too small to profile them).  The
same for TFLM+CMSIS-NN's kernels (``-libs=cmsis-nn``, every layer CMSIS-NN
supports, compiled from ../shared/third_party/CMSIS-NN).  Both sides' outputs
are checked bit-exact against aot.reference (exit status 1 when one is not).

Validation (issue 31, item 3): the CMSIS-NN estimate on the NUCLEO-L4R5ZI over
microTVM + CMSIS-NN measured on that board (MLPerf Tiny v1.0, OctoML's closed
division submission, 120 MHz).  No parameter is fitted to these numbers: the
memory timing comes from the board record's documents.  What differs from the
measured setup: microTVM's AOT executor and its own int8 kernels for layers it
did not offload, an older CMSIS-NN, the benchmark harness around one inference;
ours runs the CMSIS-NN tree in ../shared (the version is printed).

A model that does not fit a trace board (the Pico's, QEMU's micro:bit: 16 KiB
of RAM) prints the compiler's refusal in its row.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from aot.compile import compile_model  # noqa: E402
from aot.cycles.profile import profile_model  # noqa: E402
from aot.errors import AotError  # noqa: E402
from aot.firmware.verify import random_inputs, reference_outputs  # noqa: E402
from aot.frontend import load_model  # noqa: E402
from aot.target import load_board  # noqa: E402
from aot.tune.library import TunedKernels  # noqa: E402

MODELS_DIR = ROOT.parent / "shared" / "models"
CMSIS_NN = ROOT.parent / "shared" / "third_party" / "CMSIS-NN"
MODELS = ["mlperf_kws_dscnn", "mlperf_vww_mobilenetv1_025", "mlperf_ic_resnet8",
          "mlperf_ad_fc_autoencoder"]
BOARDS = ["st/nucleo-l4r5zi", "st/nucleo-f746zg", "nordic/nrf52840dk", "raspberrypi/pico"]

#: microTVM + CMSIS-NN on the NUCLEO-L4R5ZI at 120 MHz, ms per inference: MLPerf Tiny
#: v1.0 results, closed division, OctoML's submission (as quoted in issue 31).
MICROTVM_CMSIS_NN_MS = {
    "mlperf_kws_dscnn": 99.8,
    "mlperf_vww_mobilenetv1_025": 301.2,
    "mlperf_ic_resnet8": 389.6,
    "mlperf_ad_fc_autoencoder": 8.60,
}
VALIDATION_BOARD = "st/nucleo-l4r5zi"


def _profile(path: Path, board: str, inputs, want, libs: bool) -> dict:
    options = {"target": "c -libs=cmsis-nn",
               "codegen_options": {"cmsis-nn": {"path": str(CMSIS_NN)}}} if libs else {}
    try:
        p = profile_model(path, board, inputs=inputs, placement=False, **options)
    except AotError as err:
        return {"error": str(err).splitlines()[0][:160]}
    exact = _exact(p, want)
    placed = _placed(path, board, inputs, want, options)
    core = p.cycles - p.stall_cycles
    clock = p.clock_hz
    return {"trace_board": p.trace_board, "instructions": p.rpc_instructions,
            "core_cycles": round(core), "cycles": round(p.cycles),
            "stall_cycles": round(p.stall_cycles),
            "ms_zero_wait": round(core / clock * 1e3, 3),
            "ms": round(p.cycles / clock * 1e3, 3), "clock_hz": clock,
            "exact": exact and placed.get("exact", True), "placed": placed}


def _exact(p, want) -> bool:
    return len(p.outputs) == len(want) and all(
        np.array_equal(got, w[0]) for got, w in zip(p.outputs, want))


def _placed(path: Path, board: str, inputs, want, options) -> dict:
    """The profile of what ``aot compile --board`` makes by default: the default
    placement for ``board`` and, for aot's kernels, the pre-tuned records aot ships
    for the board's core (docs/tuning.md); what it moved and how many records applied."""
    tuned = None
    if "target" not in options:   # aot's kernels: the shipped records apply
        tuned = TunedKernels.shipped_for(load_board(board).target)[0]
    try:
        p = profile_model(path, board, inputs=inputs, kernel_library=tuned, **options)
    except AotError as err:
        return {"error": str(err).splitlines()[0][:160]}
    moved = p.placement["moved"] if p.placement else []
    return {"cycles": round(p.cycles), "core_cycles": round(p.cycles - p.stall_cycles),
            "ms": round(p.cycles / p.clock_hz * 1e3, 3),
            "moved_bytes": sum(m["bytes"] for m in moved),
            "estimated_saving": p.placement["cycles_saved"] if p.placement else 0,
            "pretuned_applied": len(tuned.applied) if tuned is not None else 0,
            "exact": _exact(p, want)}


def _estimate(path: Path, board: str) -> dict:
    """What ``aot compile --board`` places for ``board`` and the gain it estimates."""
    try:
        placement = compile_model(path, board, measure_code=False).placement
    except AotError as err:
        return {"error": str(err).splitlines()[0][:160]}
    if placement is None:
        return {"moved_bytes": 0, "left_bytes": 0, "estimated_saving": 0}
    return {"moved_bytes": sum(m.bytes for m in placement.moved),
            "left_bytes": sum(m.bytes for m in placement.left),
            "estimated_saving": round(placement.cycles_saved)}


def _cmsis_version() -> str:
    """The upstream commit ../shared/third_party/README.md records for the tree."""
    try:
        text = (CMSIS_NN.parent / "README.md").read_text()
    except OSError:
        return "version unknown"
    m = re.search(r"CMSIS-NN at commit (\w+)", text)
    return f"upstream commit {m.group(1)}" if m else "version unknown"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--board", action="append", choices=BOARDS)
    ap.add_argument("--model", action="append", choices=MODELS)
    ap.add_argument("--side", choices=("both", "aot", "cmsis-nn"), default="both")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    boards, models = args.board or BOARDS, args.model or MODELS
    sides = {"both": ("aot", "cmsis-nn"), "aot": ("aot",), "cmsis-nn": ("cmsis-nn",)}[args.side]
    results, ok = [], True
    print(f"CMSIS-NN: {CMSIS_NN} ({_cmsis_version()})")
    head = ("model", "board", "side", "trace", "cycles 0 WS", "ms 0 WS", "cycles mem",
            "ms mem", "stalls", "cycles placed", "ms placed", "moved bytes",
            "est. saving", "exact")
    rows = []
    for name in models:
        path = MODELS_DIR / f"{name}.tflite"
        graph = load_model(path)
        inputs = random_inputs(graph, 1, 0)
        want = reference_outputs(graph, inputs)
        for board in boards:
            mhz = load_board(board).clock_hz / 1e6
            for side in sides:
                r = _profile(path, board, inputs, want, side == "cmsis-nn")
                r.update(model=name, board=board, side=side)
                results.append(r)
                if "error" in r:
                    rows.append((name, f"{board} @{mhz:g}", side, "", r["error"],
                                 *[""] * (len(head) - 5)))
                    continue
                ok &= r["exact"]
                placed = r["placed"]
                rows.append((name, f"{board} @{mhz:g}", side, r["trace_board"],
                             f"{r['core_cycles']:,}", f"{r['ms_zero_wait']:.3f}",
                             f"{r['cycles']:,}", f"{r['ms']:.3f}",
                             f"{100 * r['stall_cycles'] / r['cycles']:.1f}%",
                             *((placed["error"], "", "", "") if "error" in placed else
                               (f"{placed['cycles']:,}", f"{placed['ms']:.3f}",
                                f"{placed['moved_bytes']:,}",
                                f"{placed['estimated_saving']:,}")),
                             "yes" if r["exact"] else "NO"))
                print(" | ".join(rows[-1]), flush=True)
    print()
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print()
    print(f"Validation: CMSIS-NN estimate on {VALIDATION_BOARD} (its memory) over microTVM + "
          "CMSIS-NN measured there (MLPerf Tiny v1.0, OctoML)")
    print("| model | estimate ms | measured ms | ratio | within 20% |")
    print("|---|---|---|---|---|")
    within = 0
    for r in results:
        if r["board"] != VALIDATION_BOARD or r["side"] != "cmsis-nn" or "error" in r:
            continue
        measured = MICROTVM_CMSIS_NN_MS[r["model"]]
        ratio = r["ms"] / measured
        r["validation_ratio"] = round(ratio, 3)
        within += abs(ratio - 1) <= 0.2
        print(f"| {r['model']} | {r['ms']:.2f} | {measured:.2f} | {ratio:.3f} | "
              f"{'yes' if abs(ratio - 1) <= 0.2 else 'no'} |")
    print(f"{within} of the models within 20%")
    print()
    print("The compiler's placement (aot compile --board, aot's kernels): bytes of constants "
          "copied to RAM, left in flash for lack of room, estimated cycles saved per inference")
    print("| model | board | moved bytes | left in flash | est. cycles saved | est. ms saved |")
    print("|---|---|---|---|---|---|")
    estimates = []
    for name in models:
        for board in boards:
            e = _estimate(MODELS_DIR / f"{name}.tflite", board)
            e.update(model=name, board=board)
            estimates.append(e)
            if "error" in e:
                print(f"| {name} | {board} | {e['error']} | | | |")
                continue
            ms = e["estimated_saving"] / load_board(board).clock_hz * 1e3
            print(f"| {name} | {board} | {e['moved_bytes']:,} | {e['left_bytes']:,} | "
                  f"{e['estimated_saving']:,} | {ms:.2f} |")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"profiles": results, "placement": estimates},
                                        indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
