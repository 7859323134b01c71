"""Two cores of qemu/mps2-an521 against one: a PROJECTION, not a two-core run.

    .venv/bin/python bench/bench_cores.py [--model NAME]... [--handover N] [--sizes]
                                          [--json out/bench_cores.json]

Issue 36 asks for one core against two per MLPerf Tiny model.  Models cannot
run split yet (the entry function's hand-over to core 1 is missing:
``--cores 2`` is refused), so this bench measures what exists and projects
the rest, and says so in every row:

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
  of their whole kernels (.text bytes, and the bytes of their constant arrays, also
  with each array of equal values counted once: what sharing them would leave).
  The entry function's hand-over code is not counted (it does not exist yet).

Under QEMU the two-core run itself cannot show a speedup (both vCPUs share one
virtual clock: docs/targets.md "Several cores of one board"); a measured
critical path will come from the per-core counts (``aot run --json``'s
``cores``) once the hand-over exists.
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


def run_kernels(planned) -> list:
    """The kernels one inference runs: every group's, a split group's parts' in place
    of its whole kernel (the groups of these models are plain: no patches, no -libs)."""
    groups = [g for g in planned.groups if g.kind != "view"]
    out = []
    for g, k in zip(groups, planned.kernels, strict=True):
        out += [p.kernel for p in planned.parts[g.name]] if g.name in planned.parts else [k]
    return out


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
        kernels = run_kernels(planned)
        row[f"cores{cores}"] = {"workspace_bytes": planned.sizes.workspace,
                                "kernels": len(kernels),
                                "code_bytes": code_bytes(kernels, board),
                                "constant_bytes": sum(k.constant_bytes for k in kernels),
                                "distinct_constant_bytes": distinct_constant_bytes(kernels)}
    return row


def distinct_constant_bytes(kernels) -> int:
    """Bytes of the kernels' constant arrays, each array of equal type and values counted
    once: what sharing them between kernels (a row split's parts) would leave."""
    seen = {(c.data.dtype.str, c.data.shape, c.data.tobytes()) for k in kernels
            for c in k.constants}
    return sum(len(data) for _, _, data in seen)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", action="append", choices=MODELS)
    ap.add_argument("--handover", type=int, default=80,
                    help="instructions per split kernel for the hand-over (default 80)")
    ap.add_argument("--sizes", action="store_true",
                    help="only the model's RAM and flash on one core and on two (measured)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
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
          f"{'constants 1 -> 2':>22} {'2, shared':>9}")
    rows = []
    for model in models:
        row = {"model": model, **plan_sizes(model)}
        rows.append(row)
        one, two = row["cores1"], row["cores2"]
        print(f"{model:28} {one['workspace_bytes']:>9,} -> {two['workspace_bytes']:<7,} "
              f"{one['kernels']:>3} -> {two['kernels']:<3} "
              f"{one['code_bytes']:>8,} -> {two['code_bytes']:<9,} "
              f"{one['constant_bytes']:>9,} -> {two['constant_bytes']:<9,} "
              f"{two['distinct_constant_bytes']:>9,}")
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"stamp": stamp(), "board": BOARD, "rows": rows,
                                   "kind": "sizes"}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
