"""``aot interpret MODEL [--input X | --fill F] [--output Y]``: run the reference interpreter.

Inputs and outputs carry a leading axis of N invocations: ``X[i]`` is one
input in the model's own shape (batch dimension included).  The N
invocations run in order on one fresh session, so a stateful model (SVDF,
LSTM) sees them as a sequence; the outputs are stacked the same way.

File convention:

* one input: ``X.npy`` holding ``[N, *input_shape]``; a model with several
  inputs takes ``X.npz`` with one such array per input, keyed by the input's
  tensor name or by ``input_<k>`` (k = its position);
* one output: ``Y.npy``; several outputs: ``Y.npz`` keyed ``output_<k>``
  (the output's position; ``aot inspect`` lists them in order).  The file
  written is exactly the path given (:func:`aot.commands.model_io.check_output_path`).

Without ``--input``, ``--fill`` generates the inputs; without ``--output`` the
outputs are printed (the top classes of a classifier).  ``aot run``, ``aot
verify`` and ``aot profile`` share all of this; the work is done in
:mod:`aot.commands.model_io`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from aot.commands.compile import add_model_arguments, input_shapes

NAME = "interpret"
HELP = "run a model with the reference interpreter (bit-exact with TFLM)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", help="a .tflite or .onnx model file")
    add_input_arguments(parser, fill=True)
    add_output_argument(parser)
    add_model_arguments(parser)


#: ``--fill``: what runs when no ``--input`` is given
#: (:func:`aot.commands.model_io.fill_inputs`).
FILLS = ("zeros", "ones", "random", "sample")
DEFAULT_FILL = "random"


def add_input_arguments(parser: argparse.ArgumentParser, *, required: bool = False,
                        fill: bool = False,
                        help: str = ".npy ([N, *input shape]) or, for several inputs, "
                                    ".npz") -> None:
    """``--input`` and ``--allow-nonfinite``, the options of every command that
    runs a model on the user's inputs (read by :func:`aot.commands.model_io.load_inputs`); with
    ``fill``, also ``--fill`` and ``--seed`` in place of ``--input``
    (:func:`aot.commands.model_io.inputs_from_args`)."""
    if not fill:
        parser.add_argument("--input", required=required, type=Path, help=help)
    else:
        which = parser.add_mutually_exclusive_group()
        which.add_argument("--input", type=Path, help=help)
        which.add_argument("--fill", choices=FILLS,
                           help="run one invocation of generated inputs instead of --input: "
                                "zeros or ones (the stored value, the raw integer of a "
                                "quantized input), seeded random values (as aot verify makes "
                                "them), or the model's sample inputs (samples/<model>.npy "
                                f"beside the model file); default {DEFAULT_FILL} when --input "
                                "is not given")
        parser.add_argument("--seed", type=int, default=0, help="seed of --fill random")
    parser.add_argument("--allow-nonfinite", action="store_true",
                        help="run float inputs holding NaN or Inf (refused by default: a "
                             "model's answer to them is not defined)")


def add_output_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output", type=Path, metavar="FILE.npy|FILE.npz",
                        help="write the outputs to exactly this file: .npy (a model with one "
                             "output) or .npz (any model; keys output_0, output_1, ...); "
                             "without it the outputs are printed (top 5 for a classifier)")


def run(args: argparse.Namespace) -> int:
    from aot.commands.model_io import (
        check_output_path, format_outputs, inputs_from_args, interpret, outputs_json,
        save_outputs,
    )
    from aot.frontend import load_model

    graph = load_model(args.model, input_shapes(args))
    if args.output is not None:
        check_output_path(graph, args.output)
    inputs, source = inputs_from_args(graph, args)
    outputs = interpret(graph, inputs)
    n = outputs[0].shape[0]
    if args.output is not None:
        save_outputs(graph, outputs, args.output)
    if args.json:
        print(json.dumps({"model": graph.name, "invocations": n, "inputs": source,
                          "output": str(args.output) if args.output else None,
                          **outputs_json(graph, outputs, values=args.output is None)},
                         indent=2))
        return 0
    where = f"outputs written to {args.output}" if args.output else "outputs:"
    print(f"{n} invocation{'s' if n != 1 else ''} of {graph.name} ({source}); {where}")
    if args.output is None:
        print(format_outputs(graph, outputs))
    return 0
