"""``aot profile MODEL --board TAG``: where the cycles go, kernel by kernel.

Compiles the model for an emulated board (a real board's: the emulated board
of its core that its record's ``memory.timing.trace_board`` names), runs one
inference under QEMU with its execution log on and prices every executed
instruction with the board's core timing table, plus the stalls of the
board's memory from the addresses the run touched (:mod:`aot.cycles`,
docs/cycles.md "Memory stalls").  Prints per kernel the executed
instructions (exact), the estimated cycles, memory stalls, MACs,
cycles per MAC, the activation RAM live while it runs and its share of the
total; ``--json`` prints the same as JSON and ``--chart FILE.svg`` writes a
bar chart.  ``--target`` refines the board's target as for ``aot compile``:
``--target 'c -libs=cmsis-nn' --cmsis-nn PATH`` profiles the model with every
layer CMSIS-NN supports handed to it (TFLM+CMSIS-NN's kernels, estimated the
same way, docs/performance.md).  ``--tuning-records`` compiles with an
``aot tune`` log's best configs, as ``aot compile`` does (the tuned model's
cycles, docs/tuning.md).  Boards whose CPU has no timing table are refused
(exit 2), and so are boards whose record lacks ``memory.timing``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from aot.commands.build import add_cache_arguments, cache_dir
from aot.commands.compile import (
    add_tuning_arguments, codegen_options, describe_tuned, kernel_library, tuning_json,
)
from aot.commands.model_args import add_input_arguments

NAME = "profile"
HELP = ("estimate cycles per kernel on a Cortex-M board, its memory's stalls included "
        "(instructions, MACs, RAM)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", help="a .tflite (or .onnx) model file")
    parser.add_argument("--board", required=True,
                        help="a board with a core table, e.g. qemu/mps2-an386 or "
                        "st/nucleo-l4r5zi (traced on the emulated board of its core)")
    add_input_arguments(parser, help="the invocation to profile: .npy ([1, *shape]) or .npz "
                                     "(default: one seeded random input)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random input")
    parser.add_argument("--target", help="refines the board's target, e.g. 'c -libs=cmsis-nn' "
                        "(docs/targets.md, docs/byoc.md)")
    parser.add_argument("--cmsis-nn", metavar="PATH", dest="cmsis_nn",
                        help="Arm's CMSIS-NN source tree, used in place by -libs=cmsis-nn; "
                        "default: $CMSIS_NN_PATH")
    add_tuning_arguments(parser)
    parser.add_argument("--no-placement", action="store_false", dest="placement",
                        help="keep every constant in flash (by default they are placed as "
                        "aot compile --board places them; docs/memory.md \"Placement\")")
    parser.add_argument("--chart", type=Path, metavar="FILE.svg",
                        help="also write a bar chart of the cycles per kernel")
    add_cache_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from aot.compile import resolve_target
    from aot.cycles import CycleModelError
    from aot.cycles.chart import profile_svg
    from aot.cycles.profile import profile_model
    from aot.commands.model_io import load_inputs
    from aot.frontend import load_model

    inputs = None
    if args.input is not None:
        inputs = [x[:1] for x in load_inputs(load_model(args.model), args.input,
                                             allow_nonfinite=args.allow_nonfinite)]
    target, board = resolve_target(args.board, refine=args.target)
    tuned = kernel_library(args, target, board, args.model)
    profile = profile_model(args.model, args.board, inputs=inputs, seed=args.seed,
                            target=args.target, codegen_options=codegen_options(args, target),
                            cache_dir=cache_dir(args), jobs=args.jobs, kernel_library=tuned,
                            **({} if args.placement else {"placement": False}))
    if args.chart is not None:
        try:
            args.chart.write_text(profile_svg(profile))
        except OSError as err:
            raise CycleModelError(f"cannot write the chart {args.chart}: "
                                  f"{err.strerror or err}") from None
    if args.json:
        out = profile.to_json()
        if tuned is not None:
            out["tuning_records"] = tuning_json(tuned)
        print(json.dumps(out, indent=2))
    else:
        print(profile.table())
        if describe_tuned(tuned):
            print(describe_tuned(tuned))
        for note in [] if tuned is None else tuned.stale:
            print(f"note: {note}", file=sys.stderr)
        if args.chart is not None:
            print(f"  chart written to {args.chart}")
    return 0
