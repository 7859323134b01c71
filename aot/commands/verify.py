"""``aot verify MODEL --board TAG [--json]``: outputs on the board == the reference, bit for bit.

The CI use case: compiles the model for the board, runs its sample inputs
(``samples/<model>.npy`` beside the model file, or ``--input``) followed by
seeded random ones on the board and on the reference interpreter
(:mod:`aot.reference`, bit-exact with TFLM), writes a JSON report, and
exits 0 only when every integer output value is bit-exact (float outputs:
within ``--float-tolerance`` x max(1, |value|), default 1e-5, as the board's FPU and libm round
differently from numpy), 1 otherwise (2 when the model could not be
compiled, built or run).
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from aot.commands.build import add_cache_arguments, cache_dir
from aot.commands.compile import (
    add_codegen_argument,
    add_cores_argument,
    add_model_arguments,
    add_tuning_arguments,
    check_cores_argument,
    input_shapes,
    kernel_library,
)
from aot.commands.model_args import add_input_arguments

NAME = "verify"
HELP = "run a model on a board and on the reference; exit 0 only when bit-exact"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from aot.firmware.verify import FLOAT_TOLERANCE  # `aot verify` only (aot.cli)

    parser.add_argument("model", nargs="+", help="a .tflite (or .onnx) model file")
    parser.add_argument("--board", required=True, help="board tag, e.g. qemu/mps2-an386")
    add_cores_argument(parser)
    add_codegen_argument(parser)
    add_input_arguments(parser, help="inputs instead of the sample file: .npy ([N, *shape]) "
                                     "or .npz")
    parser.add_argument("--random", type=int, default=2, metavar="N",
                        help="seeded random invocations after the samples (default 2)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    parser.add_argument("--float-tolerance", type=float, default=FLOAT_TOLERANCE, metavar="T",
                        help="difference allowed in float outputs, times max(1, |value|) "
                             f"(default {FLOAT_TOLERANCE:g}; 0: identical); integer outputs "
                             "are always compared bit for bit")
    parser.add_argument("--report", type=Path,
                        help="where to write the JSON report (default: "
                             "aot-verify-<model>-<board>.json in the current folder)")
    parser.add_argument("--runner", help="the runner (default: the board's first)")
    parser.add_argument("--port", help="the board's serial port (real boards)")
    add_tuning_arguments(parser)
    add_model_arguments(parser)
    add_cache_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from aot.commands.model_io import load_inputs
    from aot.compile import resolve_target
    from aot.firmware import FirmwareError, verify_model
    from aot.frontend import load_model

    if isinstance(args.model, list) and len(args.model) > 1:
        raise FirmwareError(f"not supported yet: aot verify of a model group "
                            f"({len(args.model)} models); `aot compile A B -o DIR` compiles a "
                            "group, verify each model alone")
    if isinstance(args.model, list):
        args.model = args.model[0]
    check_cores_argument(args)
    if args.random < 0:
        raise FirmwareError(f"--random must be 0 or more, got {args.random}")
    shapes = input_shapes(args)
    inputs = load_inputs(load_model(args.model, shapes), args.input,
                         allow_nonfinite=args.allow_nonfinite) if args.input else None
    report = verify_model(args.model, args.board, codegen=args.codegen, inputs=inputs,
                          input_shapes=shapes,
                          random_count=args.random,
                          seed=args.seed, float_tolerance=args.float_tolerance,
                          runner=args.runner, serial_port=args.port,
                          kernel_library=kernel_library(args, *resolve_target(args.board),
                                                        args.model, shapes),
                          cache_dir=cache_dir(args), cores=args.cores or 1)
    data = report.to_json()
    board = re.sub(r"[^\w.-]+", "_", report.board)
    path = args.report or Path(f"aot-verify-{Path(args.model).stem}-{board}.json")
    try:
        path.write_text(json.dumps(data, indent=2) + "\n")
    except OSError as err:
        raise FirmwareError(f"cannot write the report {path}: {err.strerror or err}") from None
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        print(report.summary())
        print(f"  report written to {path}")
    return 0 if report.passed else 1
