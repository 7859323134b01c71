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

from aot.commands.build import default_cache_dir
from aot.commands.interpret import save_outputs


def add_board_arguments(parser: argparse.ArgumentParser) -> None:
    """The options ``aot run`` needs for real boards."""
    parser.add_argument("--port", help="serial port of a real board, e.g. /dev/ttyACM0")
    parser.add_argument("--runner", help="flash runner (default: the board's first; 'none' "
                                         "for a board flashed already)")


def top_classes(outputs) -> list[int] | None:
    """The argmax of each invocation's output for a classifier (one output holding a
    vector of scores), else None."""
    if len(outputs) != 1:
        return None
    y = outputs[0]
    if y.ndim < 2 or y.shape[-1] < 2 or any(d != 1 for d in y.shape[1:-1]):
        return None
    return [int(i) for i in y.reshape(y.shape[0], -1).argmax(axis=1)]


def run_command(args: argparse.Namespace, compiled, inputs) -> int:
    from aot.firmware.device import run_on_board
    from aot.firmware.errors import FirmwareError
    from aot.reference.interpreter import InterpretError

    """Run ``inputs`` on ``compiled.board``, write the outputs, print the summary."""
    if getattr(args, "sanitize", False):
        raise FirmwareError("--sanitize works on the host only (--board host/native)")
    run = run_on_board(compiled, inputs, runner=getattr(args, "runner", None),
                       serial_port=getattr(args, "port", None), cache_dir=default_cache_dir())
    try:
        save_outputs(compiled.graph, run.outputs, args.output)
    except OSError as err:
        raise InterpretError(f"cannot write {args.output}: {err.strerror or err}") from None
    report = run.report()
    classes = top_classes(run.outputs)
    if args.json:
        extra = {"top_class": classes} if classes is not None else {}
        print(json.dumps({**report, "output": str(args.output), **extra}, indent=2))
        return 0
    n = report["invocations"]
    unit = next(k for k in report if k.endswith("_per_inference"))
    what = {"instructions_per_inference": "instructions", "cycles_per_inference": "cycles",
            "ns_per_inference": "nanoseconds"}[unit]
    print(f"{n} invocation{'s' if n != 1 else ''} of {report['model']} on {report['board']}; "
          f"outputs written to {args.output}")
    print(f"  {report[unit]:,} {what} per inference"
          + (" (exact count under QEMU -icount)" if unit.startswith("instructions") else ""))
    if classes is not None:
        print(f"  top class (argmax of the output) per invocation: {classes}")
    print(f"  workspace {report['workspace_bytes']:,} bytes")
    if run.build.sizes is not None:
        print(f"  {run.build.sizes}")
    return 0
