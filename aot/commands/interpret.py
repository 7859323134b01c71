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
verify`` and ``aot profile`` share all of this: the options are declared in
:mod:`aot.commands.model_args`, the work is done in :mod:`aot.commands.model_io`.
"""

from __future__ import annotations

import argparse
import json

from aot.commands.compile import add_model_arguments, input_shapes
from aot.commands.model_args import add_input_arguments, add_output_argument

NAME = "interpret"
HELP = "run a model with the reference interpreter (bit-exact with TFLM)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", help="a .tflite or .onnx model file")
    add_input_arguments(parser, fill=True)
    add_output_argument(parser)
    add_model_arguments(parser)


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
