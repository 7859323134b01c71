"""Every shared model as firmware on emulated boards, against TFLM (BASELINE.md).

    .venv/bin/python bench/bench_models_qemu.py [--board TAG]... [--model NAME]...
                                                [--json out/bench_models_qemu.json]

``--board`` is repeatable (default qemu/mps2-an386; ``rv32`` means
qemu/sifive-e).  Per board and model: compile, create the project, build
(gcc -O2), run the sample inputs (or two seeded random ones) over the RPC
under QEMU with ``-icount shift=0``, and report the columns of issue 8:

* instructions per inference (mean over the invocations; exact counts, see
  docs/runtime.md) and per MAC (MACs summed over the compiled kernels);
* the ratio to TFLM with CMSIS-NN and with its reference kernels
  (``../shared/docs/BASELINE.md``; below 1 means we execute fewer), only
  where the baseline was measured on the board's core, else "n/a";
* peak activation RAM: the planned workspace, the model's input/output
  buffers outside it (none by default: they live in the workspace) and the
  deepest stack of one inference (kernel scratch lives on the stack), against
  TFLM's arena, which holds the same three kinds of data (tensors incl. input
  and output, scratch buffers, plus its bookkeeping);
* the RAM of the whole RPC firmware: the runtime's own (frame buffers,
  .data/.bss of the server and port) and everything used (workspace, i/o,
  the deepest stack of the server with an inference under it, runtime);
* flash of a standalone image (model code, constants, startup, port, C
  library: the whole firmware minus the objects only the RPC needs) against
  TFLM's whole release firmware with CMSIS-NN and with reference kernels;
* whether the outputs equal aot.reference's (= TFLM's) bit for bit (float
  outputs: the largest difference, which must stay within 1e-5).

A model that does not fit a board gets a row saying so with the sizes (the
compiler's or linker's message).  Prints one markdown table per board (as in
docs/firmware.md) and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from aot.compile import compile_model  # noqa: E402
from aot.errors import AotError  # noqa: E402
from aot.executor.memory import MemoryPlanError  # noqa: E402
from aot.firmware import build_project, create_project, run_project  # noqa: E402
from aot.firmware.stack import stack_usage  # noqa: E402
from aot.firmware.verify import (  # noqa: E402
    FLOAT_TOLERANCE,
    compare,
    random_inputs,
    reference_outputs,
    sample_path,
)
from aot.target import load_board  # noqa: E402
from stamp import describe, stamp  # noqa: E402

MODELS_DIR = ROOT.parent / "shared" / "models"
DEFAULT_BOARD = "qemu/mps2-an386"
BOARD_SHORTHANDS = {"rv32": "qemu/sifive-e"}


@dataclass(frozen=True)
class Baseline:
    """TFLM's figures for one core (BASELINE.md, -O2 release builds); a model
    missing from a mapping has no figure there."""

    source: str
    cmsis_nn: dict[str, int] = field(default_factory=dict)
    reference: dict[str, int] = field(default_factory=dict)
    arena: dict[str, int] = field(default_factory=dict)
    flash_cmsis_nn: dict[str, int] = field(default_factory=dict)
    flash_reference: dict[str, int] = field(default_factory=dict)


_M4 = Baseline(
    source="TFLM on qemu/mps2-an386 (Cortex-M4), BASELINE.md",
    cmsis_nn={"mlperf_kws_dscnn": 7_697_356, "mlperf_vww_mobilenetv1_025": 24_101_905,
              "mlperf_ic_resnet8": 29_861_981, "mlperf_ad_fc_autoencoder": 582_884,
              "tflm_micro_speech": 1_495_366},
    reference={"mlperf_kws_dscnn": 43_095_459, "mlperf_vww_mobilenetv1_025": 100_371_813,
               "mlperf_ic_resnet8": 107_377_189, "mlperf_ad_fc_autoencoder": 1_953_601,
               "tflm_micro_speech": 9_312_920},
    # arena_used_bytes(); the autoencoder's arena must be 3,012 bytes to plan.
    arena={"mlperf_kws_dscnn": 22_820, "mlperf_vww_mobilenetv1_025": 100_708,
           "mlperf_ic_resnet8": 54_996, "mlperf_ad_fc_autoencoder": 2_580,
           "tflm_micro_speech": 6_836},
    flash_cmsis_nn={"mlperf_kws_dscnn": 143_876, "mlperf_vww_mobilenetv1_025": 423_268,
                    "mlperf_ic_resnet8": 183_264, "mlperf_ad_fc_autoencoder": 314_496,
                    "tflm_micro_speech": 81_976},
    flash_reference={"mlperf_kws_dscnn": 101_052, "mlperf_vww_mobilenetv1_025": 380_412,
                     "mlperf_ic_resnet8": 149_992, "mlperf_ad_fc_autoencoder": 302_976,
                     "tflm_micro_speech": 57_844},
)
# BASELINE.md gives only CMSIS-NN instruction counts for the Cortex-M7.
_M7 = Baseline(
    source="TFLM+CMSIS-NN on qemu/mps2-an500 (Cortex-M7), BASELINE.md",
    cmsis_nn={"mlperf_kws_dscnn": 7_643_123, "mlperf_vww_mobilenetv1_025": 24_025_529,
              "mlperf_ic_resnet8": 30_017_608, "mlperf_ad_fc_autoencoder": 583_205},
)
BASELINES = {"qemu/mps2-an386": _M4, "qemu/mps2-an500": _M7}
NO_BASELINE = Baseline(source="none: BASELINE.md has no TFLM figures for this core")

# Every object of runtime_c/src (server, framing, descriptor checks, main loop,
# ...) serves only the RPC, as does the model's descriptor <name>_rpc.o; the
# port (startup, UART, timer) and the C library stay in a standalone image.
RPC_RUNTIME_PREFIX = "runtime_src_"

_OUT = re.compile(r"^(\.\S+)(?:\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)(.*))?$")
_IN = re.compile(r"^ (\S+)(?:\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s*(.*))?$")
_CONT = re.compile(r"^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s*(.*)$")
_NOT_LOADED = (".debug", ".comment", ".ARM.attributes", ".riscv.attributes", ".stab", ".note",
               ".gnu.attributes", ".stack")
_ZEROED = (".bss", ".sbss", ".tbss", ".noinit", ".heap")


def flash_by_object(map_text: str, ram_origin: int, ram_end: int) -> dict[str, int]:
    """Flash bytes per object file (``""`` for alignment fill) from a GNU ld map.

    Counts what :mod:`aot.firmware.sizes` counts as flash: input sections at
    flash addresses plus the load image of initialized RAM sections.
    """
    sizes: dict[str, int] = {}
    lines = map_text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("Linker script and"))
    counted, pending = False, None

    def add(size: int, obj: str) -> None:
        if counted and size:
            key = Path(obj.split("(")[0]).name + (obj[obj.index("("):] if "(" in obj else "")
            sizes[key] = sizes.get(key, 0) + size

    for i, line in enumerate(lines[start + 1:], start + 1):
        if not line.strip():
            continue
        if line[0] not in " \t":
            pending = None
            m = _OUT.match(line)
            if m is None or m.group(1).startswith(_NOT_LOADED):
                counted = False
                continue
            addr, rest = m.group(2), m.group(4) or ""
            if addr is None and i + 1 < len(lines) and _CONT.match(lines[i + 1]):
                addr, _, rest = _CONT.match(lines[i + 1]).groups()
            in_ram = addr is not None and ram_origin <= int(addr, 16) < ram_end
            counted = not in_ram or ("load address" in rest
                                     and not m.group(1).startswith(_ZEROED))
            continue
        if pending is not None:
            cont = _CONT.match(line)
            if cont:
                add(int(cont.group(2), 16), cont.group(3))
            pending = None
            continue
        m = _IN.match(line)
        if m is None or m.group(1).startswith("*("):
            continue
        if m.group(2) is None:
            pending = m.group(1)
        else:
            add(int(m.group(3), 16), "" if m.group(1) == "*fill*" else m.group(4))
    return sizes


def rpc_only(obj: str, name: str) -> bool:
    """Whether object ``obj`` of model ``name``'s firmware serves only the RPC."""
    return obj.startswith(RPC_RUNTIME_PREFIX) or obj == f"model_codegen_{name}_rpc.o"


def standalone_flash(sizes: dict[str, int], name: str) -> int:
    """Flash of the image without the RPC-only objects (see :func:`rpc_only`)."""
    return sum(n for obj, n in sizes.items() if not rpc_only(obj, name))


def _ratio(ours, theirs) -> float | None:
    return None if ours is None or not theirs else ours / theirs


def bench_model(path: Path, board: str, workdir: Path, cache: Path,
                compile_options: dict | None = None) -> dict:
    """One model on one board; ``compile_options`` go to ``compile_model``
    (bench_memory.py compares memory plans this way)."""
    baseline = BASELINES.get(board, NO_BASELINE)
    compiled = compile_model(path, board, measure_code=False, **(compile_options or {}))
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
    # The model's MACs as its kernels count them without a stage (a stage's kernels count
    # one patch or band per call), so every plan of a model has the same MACs.
    whole = compiled if compiled.patches is None else compile_model(
        path, board, measure_code=False, **{**(compile_options or {}), "patches": "off"})
    macs = sum(k["macs"] for k in whole.metadata()["kernels"])
    instr = run.per_inference
    s = build.sizes
    mem = project.data["memory"]
    ram_origin = int(mem["ram_origin"], 16)
    objects = flash_by_object(project.map_file.read_text(errors="replace"), ram_origin,
                              ram_origin + int(mem["ram_length"], 16))
    standalone = standalone_flash(objects, project.name)
    # The model's own caller buffers (none with i/o in the workspace, the
    # default): the RPC firmware's copies of inputs and outputs belong to the
    # harness and are counted in its RAM below.
    io = compiled.sizes.io
    activations = s.workspace + io + stack.model
    name = graph.name
    return {
        "model": name, "board": board, "inputs": source, "invocations": len(run.timings),
        "bit_exact": all(c.exact for c in checks), "passed": all(c.passed for c in checks),
        "max_abs_diff": max(c.max_abs_diff for c in checks), "macs": macs,
        "instructions_per_inference": instr,
        "timings": list(run.timings),
        "instructions_per_mac": instr / macs if macs else None,
        "tflm_cmsis_nn": baseline.cmsis_nn.get(name),
        "tflm_reference": baseline.reference.get(name),
        "vs_tflm_cmsis_nn": _ratio(instr, baseline.cmsis_nn.get(name)),
        "vs_tflm_reference": _ratio(instr, baseline.reference.get(name)),
        "activation_ram": {"workspace": s.workspace, "io": io, "inference_stack": stack.model,
                           "total": activations, "stack_bounded": stack.bounded,
                           "tflm_arena": baseline.arena.get(name),
                           "vs_tflm_arena": _ratio(activations, baseline.arena.get(name))},
        "flash": {"model_code": s.model_code, "constants": s.constants,
                  "runtime": s.runtime_flash, "total": s.flash,
                  "rpc_only": s.flash - standalone, "standalone": standalone,
                  "tflm_cmsis_nn": baseline.flash_cmsis_nn.get(name),
                  "tflm_reference": baseline.flash_reference.get(name),
                  "vs_tflm_cmsis_nn": _ratio(standalone, baseline.flash_cmsis_nn.get(name)),
                  "vs_tflm_reference": _ratio(standalone, baseline.flash_reference.get(name))},
        "ram": {"workspace": s.workspace, "io": s.io, "stack_peak": stack.peak,
                "stack_bounded": stack.bounded, "stack_reserved": s.stack,
                "runtime": s.runtime_ram,
                "total_used": s.workspace + s.io + stack.peak + s.runtime_ram},
    }


def _n(v) -> str:
    return "n/a" if v is None else f"{v:,}"


def _x(v, digits=2) -> str:
    return "n/a" if v is None else f"{v:.{digits}f}x"


def _verdict(r: dict) -> str:
    if r["bit_exact"]:
        return "yes"
    return f"float, max diff {r['max_abs_diff']:.1e}" if r["passed"] else "NO"


COLUMNS = ("model", "MACs", "instructions", "instr/MAC", "vs TFLM+CMSIS-NN", "vs TFLM ref",
           "activation RAM: workspace + i/o + stack = total", "vs TFLM arena",
           "RPC firmware RAM: runtime, whole",
           "flash: code + constants + rest = standalone (RPC extra)",
           "vs TFLM flash CMSIS-NN / ref", "exact")


def table(rows: list[dict]) -> str:
    """The markdown table of one board's rows."""
    head = ("| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS) + "\n")
    lines = []
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['model']} | {_short(r['error'])} |" + " |" * (len(COLUMNS) - 2))
            continue
        a, f = r["activation_ram"], r["flash"]
        rest = f["standalone"] - f["model_code"] - f["constants"]
        per_mac = "n/a" if r["instructions_per_mac"] is None else \
            f"{r['instructions_per_mac']:.2f}"
        lines.append(
            f"| {r['model']} | {_n(r['macs'])} | {_n(r['instructions_per_inference'])} | "
            f"{per_mac} | {_x(r['vs_tflm_cmsis_nn'])} | {_x(r['vs_tflm_reference'])} | "
            f"{_n(a['workspace'])} + {_n(a['io'])} + {_n(a['inference_stack'])} = "
            f"{_n(a['total'])} | {_x(a['vs_tflm_arena'])} | "
            f"{_n(r['ram']['runtime'])}, {_n(r['ram']['total_used'])} | "
            f"{_n(f['model_code'])} + {_n(f['constants'])} + {_n(rest)} = "
            f"{_n(f['standalone'])} (+{_n(f['rpc_only'])}) | "
            f"{_x(f['vs_tflm_cmsis_nn'])} / {_x(f['vs_tflm_reference'])} | {_verdict(r)} |")
    return head + "\n".join(lines) + "\n"


def _does_not_fit(err: AotError) -> bool:
    """Whether ``err`` says the model is too big for the board (a finding, not a failure)."""
    return isinstance(err, MemoryPlanError) or "does not fit" in str(err)


def _short(error: str) -> str:
    """An error for a table cell: without the list of the largest tensors."""
    return error.split("; largest tensors")[0]


def resolve_board(tag: str) -> str:
    """The canonical tag of a board (``rv32`` is qemu/sifive-e); AotError if unknown."""
    return load_board(BOARD_SHORTHANDS.get(tag, tag)).tag


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--board", action="append",
                        help=f"board tag (repeatable; default {DEFAULT_BOARD}; rv32 = "
                             "qemu/sifive-e)")
    parser.add_argument("--json", type=Path, default=ROOT / "out" / "bench_models_qemu.json")
    parser.add_argument("--model", action="append", help="only this model (repeatable)")
    args = parser.parse_args()
    try:
        boards = [resolve_board(b) for b in args.board or [DEFAULT_BOARD]]
    except AotError as err:
        parser.error(str(err).splitlines()[0])
    paths = sorted(p for p in MODELS_DIR.iterdir() if p.suffix in (".tflite", ".onnx"))
    if args.model:
        paths = [p for p in paths if p.stem in args.model]
    started = stamp()
    runs = []
    with tempfile.TemporaryDirectory(prefix="aot-bench-fw-") as tmp:
        for board in boards:
            rows = []
            for i, path in enumerate(paths):
                work = Path(tmp) / board.replace("/", "_") / str(i)
                try:
                    rows.append(bench_model(path, board, work, Path(tmp) / "cache"))
                except AotError as err:
                    rows.append({"model": path.stem, "board": board,
                                 "error": " ".join(str(err).split()),
                                 "does_not_fit": _does_not_fit(err)})
                print(f"  {board} {path.stem}: done", file=sys.stderr)
            runs.append({"board": board, "cpu": load_board(board).cpu,
                         "baseline": BASELINES.get(board, NO_BASELINE).source, "models": rows})
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"stamp": started, "runs": runs}, indent=2) + "\n")
    print(describe(started))
    for run in runs:
        print(f"\n### {run['board']} ({run['cpu']}); baseline: {run['baseline']}\n")
        print(table(run["models"]), end="")
    print(f"JSON written to {args.json}")
    ok = all(r.get("passed") or r.get("does_not_fit") for run in runs for r in run["models"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
