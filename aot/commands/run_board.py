"""``aot run MODEL --board TAG`` for boards other than the host (called by aot/commands/run.py).

Same conventions as on the host: ``--input`` holds ``[N, *shape]`` (an
``.npz`` for several inputs), the N invocations run in order on one boot,
``--output`` receives the stacked outputs.  Prints the per-inference
instruction count (emulated boards) or cycle count (hardware) and the
flash and RAM use; ``--json`` prints :meth:`BoardRun.report`.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from aot.commands.build import default_cache_dir


def add_board_arguments(parser: argparse.ArgumentParser) -> None:
    """The options ``aot run`` needs for real boards."""
    parser.add_argument("--port", help="serial port of a real board, e.g. /dev/ttyACM0")
    parser.add_argument("--runner", help="flash runner (default: the board's first; 'none' "
                                         "for a board flashed already)")


def _core_counter(board, runner: str | None, workdir: Path):
    """Per-core instruction counts where they can be had: an emulated board with
    several cores, run by QEMU (``aot.cycles.vcpus``); else None (no board included:
    :func:`~aot.firmware.device.run_on_board` says what is missing)."""
    if board is None or board.cores.count == 1 or board.qemu is None:
        return None
    if (runner or board.runner.name) != "qemu":
        return None
    from aot.cycles.vcpus import CoreCounter

    return CoreCounter(workdir, board.cores.count)


def run_command(args: argparse.Namespace, compiled, inputs, source: str) -> int:
    """Run ``inputs`` (described by ``source``) on ``compiled.board``, write or
    print the outputs, print the summary."""
    from aot.commands.model_io import format_outputs, outputs_json, save_outputs, top_classes
    from aot.firmware.device import run_on_board
    from aot.firmware.errors import FirmwareError

    if getattr(args, "sanitize", False):
        raise FirmwareError("--sanitize works on the host only (--board host/native)")
    runner = getattr(args, "runner", None)
    with tempfile.TemporaryDirectory(prefix="aot-cores-") as tmp:
        run = run_on_board(compiled, inputs, runner=runner,
                           serial_port=getattr(args, "port", None), cache_dir=default_cache_dir(),
                           core_counter=_core_counter(compiled.board, runner, Path(tmp)))
    graph = compiled.graph
    if args.output is not None:
        save_outputs(graph, run.outputs, args.output)
    report = run.report()
    for warning in run.device_warnings:  # stderr, so --json stays parseable
        print(f"warning: {warning}", file=sys.stderr)
    if args.json:
        print(json.dumps({**report, "inputs": source,
                          "output": str(args.output) if args.output else None,
                          **outputs_json(graph, run.outputs, values=args.output is None)},
                         indent=2))
        return 0
    n = report["invocations"]
    unit = next(k for k in report if k.endswith("_per_inference"))
    what = {"instructions_per_inference": "instructions", "cycles_per_inference": "cycles",
            "ns_per_inference": "nanoseconds"}[unit]
    written = f"outputs written to {args.output}" if args.output else "outputs:"
    print(f"{n} invocation{'s' if n != 1 else ''} of {report['model']} on {report['board']} "
          f"({source}); {written}")
    if args.output is None:
        print(format_outputs(graph, run.outputs))
    print(f"  {report[unit]:,} {what} per inference"
          + (" (exact count under QEMU -icount)" if unit.startswith("instructions") else ""))
    classes = top_classes(run.outputs)
    if classes is not None and args.output is not None:
        print(f"  top class (argmax of the output) per invocation: {classes}")
    if "cores" in report:
        print("  per core: " + ", ".join(f"core {k} {c['instructions']:,} instructions"
                                         for k, c in enumerate(report["cores"])))
    print(f"  workspace {report['workspace_bytes']:,} bytes")
    if run.build.sizes is not None:
        print(f"  {run.build.sizes}")
    return 0
