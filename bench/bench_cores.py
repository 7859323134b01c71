"""Two cores of qemu/mps2-an521 against one: measured (``--measured``) or projected.

    .venv/bin/python bench/bench_cores.py [--model NAME]... [--handover N] [--sizes]
                                          [--measured] [--json out/bench_cores.json]

Issue 36 asks for one core against two per MLPerf Tiny model.

``--measured`` runs each model under QEMU on one core and on two (``aot run
--json``, ``--cores 2``: the entry function hands core 1 its half of each
parallel step) and reports per core the instructions it executed per inference
(the per-vCPU plugin, ``"cores"``), and the two-core critical path: core 0's
serial work (the instructions of the one-core run less its split kernels',
``aot profile`` on one core) plus the larger of the two cores' split work (core
1's count; core 0's count less its serial work).  That is exact when every
parallel step's larger half runs on the same core (core 1 gets rows ``[H//2,
H)``, the larger half, of every split layer) and counts no bus contention
(QEMU has none).  Also each run's flash and RAM as ``aot run`` reports them.

Without ``--measured`` the bench projects the two-core run from one core's
profile, and says so in every row:

* measured: ``aot profile`` of the model on core 0 of qemu/mps2-an521 (exact
  instructions per kernel under QEMU ``-icount``, and the estimated cycles of
  the Cortex-M33 table, docs/cycles.md);
* projected: the critical path of the placement ``place_cores`` makes for two
  cores (docs/targets.md): each split kernel costs its larger part, its
  measured instructions and cycles times the larger part's share of the
  output rows (conv2d, depthwise_conv2d) or channels (dense), assumed linear
  in them (the halo rows each part reads again and the padding rows that cost
  less are not modelled), plus ``--handover`` instructions per split kernel
  for the queue hand-over and the barrier (default 80: the difference between
  the split and unsplit runs of tests/cores/fixture/second_core.c,
  513,703 - 513,624 = 79, rounded up); the other kernels run on core 0;
* the extra RAM and code of the runtime's two-core support, measured by
  compiling src/cores.c and the mps2 port with the record's [cores] defines
  (core 1's stack, the queue, the start code);
* with ``--sizes``, the model's own extra RAM and flash on two cores, measured
  on the two plans ``plan_one`` makes for the board (``placement.cores`` 1 and
  2): the workspace (the two-core plan keeps a parallel step's buffers apart,
  docs/memory.md "Graphs placed on several cores"), and the kernels a run needs,
  compiled with the board's compiler and flags: on one core every group's
  kernel, on two the split groups' parts' kernels (aot.kernels.parts) in place
  of their whole kernels (.text bytes, and the bytes of the constant arrays they
  define: the parts of a row split define the layer's arrays once, aot.kernels.parts).
  The entry function's hand-over code is not counted.

Under QEMU the two-core run's SysTick cannot show a speedup (both vCPUs share one
virtual clock: docs/targets.md "Several cores of one board"): the measured
critical path comes from the per-core counts.
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
sys.path.insert(0, str(ROOT / "bench"))

from aot.codegen.cc import CCompiler  # noqa: E402
from aot.compile import plan_one  # noqa: E402
from aot.export import board_defines  # noqa: E402
from aot.kernels import support_files  # noqa: E402
from aot.frontend import load_model  # noqa: E402
from aot.passes import PassContext, annotations, optimize  # noqa: E402
from aot.resources import runtime_dir  # noqa: E402
from aot.target import load_board  # noqa: E402
from stamp import stamp  # noqa: E402

BOARD = "qemu/mps2-an521"
MODELS = ["mlperf_kws_dscnn", "mlperf_vww_mobilenetv1_025", "mlperf_ic_resnet8",
          "mlperf_ad_fc_autoencoder"]
MODELS_DIR = ROOT.parent / "shared" / "models"
RUNTIME = runtime_dir()


def profile(model: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "aot", "profile", str(MODELS_DIR / f"{model}.tflite"),
         "--board", BOARD, "--json"],
        capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    data = json.loads(out.stdout)
    if "error" in data:
        raise SystemExit(f"{model}: {data['error']}")
    return data


def run_json(model: str, cores: int) -> dict:
    """``aot run MODEL --board qemu/mps2-an521 --cores N --json`` (one random input)."""
    out = subprocess.run(
        [sys.executable, "-m", "aot", "run", str(MODELS_DIR / f"{model}.tflite"),
         "--board", BOARD, "--cores", str(cores), "--json"],
        capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    if out.returncode != 0:
        raise SystemExit(f"{model} on {cores} cores: {out.stderr.strip() or out.stdout}")
    return json.loads(out.stdout)


def measure(model: str) -> dict:
    """One core against two, measured (module docstring)."""
    prof, parts = profile(model), larger_parts(model)
    kernels = [k for k in prof["kernels"] if k["ops"]]
    if [k["ops"] for k in kernels] != [ops for ops, _ in parts]:
        raise SystemExit(f"{model}: the profile's kernels are not the placement's groups")
    one, two = run_json(model, 1), run_json(model, 2)
    one_i = one["instructions_per_inference"]
    split_i = sum(k["instructions"] for k, (_, share) in zip(kernels, parts)
                  if share is not None)
    serial = one_i - split_i
    c0, c1 = (c["instructions"] for c in two["cores"])
    critical = serial + max(c1, c0 - serial)
    return {"model": model, "kernels": len(kernels),
            "split_kernels": sum(share is not None for _, share in parts),
            "one_core_instructions": one_i, "core0_instructions": c0,
            "core1_instructions": c1, "serial_instructions": serial,
            "critical_path_instructions": critical, "speedup": round(one_i / critical, 3),
            "flash_bytes": [one["flash_bytes"], two["flash_bytes"]],
            "ram_bytes": [one["ram_bytes"], two["ram_bytes"]],
            "sizes": [one["sizes"], two["sizes"]]}


def print_measured(models: list[str], out: Path | None) -> int:
    print(f"{BOARD}: one core against two, MEASURED (aot run --json; instructions per "
          "inference)")
    print(f"{'model':28} {'split':>7} {'1 core':>12} {'core 0':>12} {'core 1':>12} "
          f"{'critical path':>14} {'speedup':>8} {'flash 1 -> 2':>20} {'RAM 1 -> 2':>18}")
    rows = []
    for model in models:
        r = measure(model)
        rows.append(r)
        print(f"{model:28} {r['split_kernels']:>3}/{r['kernels']:<3} "
              f"{r['one_core_instructions']:>12,} {r['core0_instructions']:>12,} "
              f"{r['core1_instructions']:>12,} {r['critical_path_instructions']:>14,} "
              f"{r['speedup']:>7.2f}x {r['flash_bytes'][0]:>9,} -> {r['flash_bytes'][1]:<8,} "
              f"{r['ram_bytes'][0]:>7,} -> {r['ram_bytes'][1]:<8,}")
    _write(out, rows, "measured")
    return 0


def larger_parts(model: str) -> list[tuple[list[str], float | None]]:
    """Per kernel in order (views have none): its ops and the larger part's share of
    its output under place_cores on two cores (None: not split)."""
    with PassContext(config={"placement.cores": 2}):
        graph = optimize(load_model(MODELS_DIR / f"{model}.tflite"))
    ann = annotations(graph)
    out = []
    for group in ann.groups:
        if group.kind == "view":
            continue
        parts = ann.devices(group.nodes[0])
        share = None if parts[0].part == "whole" else \
            max(p.stop - p.start for p in parts) / parts[-1].stop
        out.append(([n.op for n in group.nodes], share))
    return out


def project(prof: dict, parts: list, handover: int) -> dict:
    """One core's measured totals and the projected two-core critical path."""
    kernels = [k for k in prof["kernels"] if k["ops"]]   # not the entry function's row
    if [k["ops"] for k in kernels] != [ops for ops, _ in parts]:
        raise SystemExit("the profile's kernels are not the placement's groups: "
                         f"{[k['ops'] for k in kernels]} / {[o for o, _ in parts]}")
    one_i, one_c = prof["instructions"], prof["cycles"]
    saved_i = saved_c = 0.0
    split = 0
    for k, (_, share) in zip(kernels, parts):
        if share is not None:
            split += 1
            saved_i += k["instructions"] * (1 - share) - handover
            saved_c += k["cycles"] * (1 - share) - handover
    two_i, two_c = one_i - saved_i, one_c - saved_c
    return {"kernels": len(prof["kernels"]), "split_kernels": split,
            "one_core_instructions": one_i, "one_core_cycles": one_c,
            "two_core_instructions_projected": round(two_i),
            "two_core_cycles_projected": round(two_c),
            "speedup_projected": round(one_c / two_c, 3)}


def extra_cost() -> dict:
    """Bytes of code and RAM the two-core support adds on the board: src/cores.c plus
    the port's SSE-200 block (port.c with the [cores] defines against without)."""
    board = load_board(BOARD)
    tc = board.toolchain
    defines = board_defines(board)
    plain = [d for d in defines if "CORES" not in d]
    flags = [*tc.cpu_flags, "-O2", "-std=c99", f"-I{RUNTIME / 'include'}"]

    def sizes(src: Path, defs: list[str]) -> tuple[int, int]:
        with tempfile.TemporaryDirectory() as tmp:
            obj = Path(tmp) / "x.o"
            subprocess.run([tc.tool("gcc"), *flags, *defs, "-c", str(src), "-o", str(obj)],
                           check=True)
            out = subprocess.run([tc.tool("size"), str(obj)], capture_output=True,
                                 text=True, check=True).stdout.splitlines()[1].split()
            return int(out[0]), int(out[1]) + int(out[2])  # text, data + bss

    cores_code, cores_ram = sizes(RUNTIME / "src" / "cores.c", defines)
    port_code, port_ram = sizes(RUNTIME / "ports" / "mps2" / "port.c", defines)
    base_code, base_ram = sizes(RUNTIME / "ports" / "mps2" / "port.c", plain)
    return {"code_bytes": cores_code + port_code - base_code,
            "ram_bytes": cores_ram + port_ram - base_ram,
            "core1_stack_bytes": board.cores.stack_bytes}


def code_bytes(kernels, board) -> int:
    """.text bytes of ``kernels`` compiled one by one as the board's firmware compiles
    the model's C."""
    cc = CCompiler.for_toolchain(board.toolchain)
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in support_files(board.target).items():
            (Path(tmp) / name).write_text(text)
        sources = []
        for k in kernels:
            (Path(tmp) / f"{k.name}.c").write_text(k.source)
            sources.append(f"{k.name}.c")
        return cc.text_bytes(sources, ["-I."], cwd=Path(tmp))


def plan_sizes(model: str) -> dict:
    """The model's workspace, kernel code and kernel constants on one core and on two."""
    board = load_board(BOARD)
    row = {}
    for cores in (1, 2):
        planned = plan_one(MODELS_DIR / f"{model}.tflite", BOARD,
                           config={"placement.cores": cores})
        kernels = planned.kernels_run
        row[f"cores{cores}"] = {"workspace_bytes": planned.sizes.workspace,
                                "kernels": len(kernels),
                                "code_bytes": code_bytes(kernels, board),
                                "constant_bytes": sum(k.constant_bytes for k in kernels)}
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", action="append", choices=MODELS)
    ap.add_argument("--handover", type=int, default=80,
                    help="instructions per split kernel for the hand-over (default 80)")
    ap.add_argument("--sizes", action="store_true",
                    help="only the model's RAM and flash on one core and on two (measured)")
    ap.add_argument("--measured", action="store_true",
                    help="run one core and two under QEMU and compare the per-core counts")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    if args.measured:
        return print_measured(args.model or MODELS, args.json)
    if args.sizes:
        return print_sizes(args.model or MODELS, args.json)
    extra = extra_cost()
    rows = []
    print(f"{BOARD}: one core MEASURED (aot profile on core 0), two cores PROJECTED")
    print(f"two-core support: +{extra['code_bytes']} B code, +{extra['ram_bytes']} B RAM "
          f"(of which core 1's stack {extra['core1_stack_bytes']} B)")
    print(f"{'model':28} {'kernels':>7} {'split':>5} {'1-core cycles':>14} "
          f"{'2-core cycles (proj.)':>22} {'speedup (proj.)':>16}")
    for model in args.model or MODELS:
        row = {"model": model, **project(profile(model), larger_parts(model), args.handover)}
        rows.append(row)
        print(f"{model:28} {row['kernels']:7} {row['split_kernels']:5} "
              f"{row['one_core_cycles']:14,} {row['two_core_cycles_projected']:22,} "
              f"{row['speedup_projected']:15.2f}x")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"stamp": stamp(), "board": BOARD, "extra": extra,
                                         "rows": rows, "handover_instructions": args.handover,
                                         "kind": "projection"}, indent=1))
    return 0


def print_sizes(models: list[str], out: Path | None) -> int:
    print(f"{BOARD}: the model's sizes on one core and on two (MEASURED: plans and kernels; "
          "no hand-over code)")
    print(f"{'model':28} {'workspace 1 -> 2':>20} {'kernels':>9} {'code 1 -> 2':>20} "
          f"{'constants 1 -> 2':>22}")
    rows = []
    for model in models:
        row = {"model": model, **plan_sizes(model)}
        rows.append(row)
        one, two = row["cores1"], row["cores2"]
        print(f"{model:28} {one['workspace_bytes']:>9,} -> {two['workspace_bytes']:<7,} "
              f"{one['kernels']:>3} -> {two['kernels']:<3} "
              f"{one['code_bytes']:>8,} -> {two['code_bytes']:<9,} "
              f"{one['constant_bytes']:>9,} -> {two['constant_bytes']:<9,}")
    _write(out, rows, "sizes")
    return 0



def _write(out: Path | None, rows: list[dict], kind: str) -> None:
    """The rows as JSON, stamped, where ``--json`` asked (else nothing)."""
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"stamp": stamp(), "board": BOARD, "rows": rows,
                                   "kind": kind}, indent=1))


if __name__ == "__main__":
    sys.exit(main())
