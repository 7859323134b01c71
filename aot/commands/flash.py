"""``aot flash PROJ [--runner R] [--port P] [--dry-run]``: put a built project on its board.

Flashes with the board's runner (or ``--runner``) and checks over the RPC
that the device now serves the project's model.  An emulated board (QEMU)
or the host process lives only while the command runs, so for those this
is a smoke test of the firmware; ``aot run`` and ``aot verify`` flash and
run in one go.  ``--dry-run`` prints the exact command instead of running it.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys


NAME = "flash"
HELP = "flash a built project onto its board and check that it answers"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("project", help="a built project directory")
    parser.add_argument("--runner", help="the runner (default: the board's first; "
                                         "'none' to only connect to --port)")
    parser.add_argument("--port", help="the board's serial port, e.g. /dev/ttyACM0")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the command that flashes the board and exit")


def run(args: argparse.Namespace) -> int:
    from aot.firmware.device import device_runner, device_warnings
    from aot.firmware import load_project, open_device
    project = load_project(args.project)
    if args.dry_run:
        if args.runner == "none":
            if args.json:
                print(json.dumps({"board": project.board_tag, "runner": "none", "argv": None,
                                  "port": args.port}, indent=2))
            else:
                print(f"# --runner none flashes nothing; the RPC opens {args.port}")
            return 0
        runner = device_runner(project, args.runner, args.port)
        if args.json:
            print(json.dumps({"board": project.board_tag, "runner": runner.name,
                              "argv": runner.argv(), "port": args.port}, indent=2))
        else:
            print(shlex.join(runner.argv()))
        return 0
    with open_device(project, runner=args.runner, serial_port=args.port) as dev:
        info = dev.info()
        tensors = dev.tensors()
    if args.json:
        print(json.dumps({"board": project.board_tag, "model": info.model_name,
                          "build_id": info.build_id, "protocol_version": info.protocol_version,
                          "tensors": len(tensors), "kernels": info.num_kernels}, indent=2))
        return 0
    print(f"{project.board_tag} runs {info.model_name} (build {info.build_id}, protocol "
          f"v{info.protocol_version}, {len(tensors)} tensors, {info.num_kernels} kernels)")
    if info.device is not None:  # the board's own report: is the port set up as recorded?
        print(f"  {info.device.summary()}")
    for warning in device_warnings(project.board, info.device):
        print(f"warning: {warning}", file=sys.stderr)
    return 0
