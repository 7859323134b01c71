"""``aot run MODEL [--board TAG] [--input X | --fill F] [--output Y]``: compile, build, run.

Inputs and outputs follow ``aot interpret``: a leading axis of N
invocations that run in order on one state, ``.npy`` for one tensor and
``.npz`` for several; without ``--input`` the inputs are generated
(``--fill``, default random), without ``--output`` the outputs are
printed.  Other boards go through the firmware flow
(:mod:`aot.commands.run_board`: project, build, flash, RPC).  ``--target
llvm`` (the only target ``aot run`` takes) runs the model on this machine
with its kernels compiled by LLVM's JIT instead of gcc (docs/codegen.md).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from aot.commands.compile import (
    add_compile_arguments, add_target_arguments, describe_tuned, input_shapes, kernel_library,
    options_from_args, target_from_args,
)
from aot.commands.model_args import add_input_arguments, add_output_argument
from aot.commands.run_board import add_board_arguments, run_command

NAME = "run"
HELP = "compile a model, build it and run it on a board (emulated, real or the host)"

HOST_BOARD = "host/native"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", nargs="+", help="a .tflite (or .onnx) model file")
    add_target_arguments(parser, board_default=HOST_BOARD)
    add_input_arguments(parser, fill=True)
    add_output_argument(parser)
    parser.add_argument("--sanitize", action="store_true",
                        help="build with AddressSanitizer and UndefinedBehaviorSanitizer")
    add_board_arguments(parser)
    add_compile_arguments(parser)


def run_on_host(compiled, inputs, *, sanitize: bool = False, workdir=None):
    """Build ``compiled`` with the host gcc and run the ``[N, ...]`` ``inputs``; the outputs.
    A model compiled for the ``llvm`` target runs through the LLVM JIT instead."""
    from aot.compile import CompileError
    from aot.executor.codegen import host_main
    from aot.export.host import build_program, run_program
    from aot.inputs import check_inputs

    if compiled.is_jit:
        if sanitize:
            raise CompileError("--sanitize builds the C with gcc's sanitizers: not supported "
                               "with the llvm target; drop --sanitize or use --board "
                               f"{HOST_BOARD}")
        return compiled.jit().run_sequence(inputs)
    if compiled.board is None or compiled.board.tag != HOST_BOARD:
        where = compiled.board.tag if compiled.board else str(compiled.target)
        raise CompileError(f"not supported yet: running on {where} needs the firmware flow; "
                           f"use --board {HOST_BOARD}")
    inputs = check_inputs(compiled.graph, inputs)  # before the build, not after it
    with tempfile.TemporaryDirectory(prefix="aot-run-", dir=workdir) as tmp:
        root = Path(tmp)
        artifact = compiled.write(root / "artifact")
        main = host_main(compiled.name, compiled.graph, compiled.plan,
                         version=compiled.metadata()["aot_version"])
        program = build_program(artifact, compiled.name, main, root / "model",
                                sanitize=sanitize)
        return run_program(program, compiled.graph, inputs, root)


def run(args: argparse.Namespace) -> int:
    from aot.commands.model_io import (
        check_output_path, format_outputs, inputs_from_args, outputs_json, save_outputs,
    )
    from aot.compile import CompileError, compile_model, resolve_target

    if isinstance(args.model, list) and len(args.model) > 1:
        raise CompileError(f"not supported yet: aot run of a model group ({len(args.model)} "
                           "models); `aot compile A B -o DIR` compiles a group, run each "
                           "model alone")
    if isinstance(args.model, list):
        args.model = args.model[0]
    if args.board is None and args.target is not None:
        target, board = resolve_target(args.target)
        if target.kind != "llvm":
            raise CompileError(f"not supported yet: aot run takes a board, or the target 'llvm' "
                               f"(this machine through the LLVM JIT), not {args.target!r}; use "
                               f"--board {HOST_BOARD} (a --target given with --board refines "
                               "the board's target)")
    else:
        target, board = target_from_args(args, HOST_BOARD)
    on_host = board is not None and board.tag == HOST_BOARD
    if args.codegen == "llvm" and on_host:
        raise CompileError(f"--codegen llvm makes objects for a microcontroller board; on this "
                           f"machine the llvm codegen runs through its JIT: use --target llvm "
                           f"instead of --board {HOST_BOARD}")
    tuned = kernel_library(args, target, board, args.model, input_shapes(args))
    compiled = compile_model(args.model, options_from_args(args, target, board,
                                                           kernel_library=tuned,
                                                           measure_code=False))
    if describe_tuned(tuned):
        print(describe_tuned(tuned), file=sys.stderr)
    if tuned is not None:
        for note in tuned.stale:
            print(f"note: {note}", file=sys.stderr)
    if args.output is not None:
        check_output_path(compiled.graph, args.output)  # before the run, not after it
    inputs, source = inputs_from_args(compiled.graph, args)
    if not compiled.is_jit and not on_host:
        return run_command(args, compiled, inputs, source)
    outputs = run_on_host(compiled, inputs, sanitize=args.sanitize)
    if args.output is not None:
        save_outputs(compiled.graph, outputs, args.output)
    n = outputs[0].shape[0]
    board = compiled.board.tag if compiled.board is not None else None
    if args.json:
        print(json.dumps({"model": compiled.graph.name, "board": board,
                          "target": str(compiled.target), "invocations": n, "inputs": source,
                          "output": str(args.output) if args.output else None,
                          "sizes": compiled.sizes.to_json(),
                          **outputs_json(compiled.graph, outputs, values=args.output is None)},
                         indent=2))
    else:
        where = board or f"this machine ({compiled.target}, LLVM JIT)"
        written = f"outputs written to {args.output}" if args.output else "outputs:"
        print(f"{n} invocation{'s' if n != 1 else ''} of {compiled.graph.name} on "
              f"{where} ({source}); {written}")
        if args.output is None:
            print(format_outputs(compiled.graph, outputs))
        print(f"  {compiled.sizes}")
    return 0
