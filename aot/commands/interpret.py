"""``aot interpret MODEL --input X --output Y``: run the reference interpreter.

Inputs and outputs carry a leading axis of N invocations: ``X[i]`` is one
input in the model's own shape (batch dimension included).  The N
invocations run in order on one fresh session, so a stateful model (SVDF,
LSTM) sees them as a sequence; the outputs are stacked the same way.

File convention:

* one input: ``X.npy`` holding ``[N, *input_shape]``; a model with several
  inputs takes ``X.npz`` with one such array per input, keyed by the input's
  tensor name or by ``input_<k>`` (k = its position);
* one output: ``Y.npy``; several outputs: ``Y.npz`` keyed ``output_<k>``
  (the output's position; ``aot inspect`` lists them in order).
"""

from __future__ import annotations

import argparse
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

from aot.commands.compile import add_model_arguments, input_shapes

if TYPE_CHECKING:
    import numpy as np

    from aot.ir import Graph

NAME = "interpret"
HELP = "run a model with the reference interpreter (bit-exact with TFLM)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", help="a .tflite or .onnx model file")
    parser.add_argument("--input", required=True, type=Path,
                        help=".npy ([N, *input shape]) or, for several inputs, .npz")
    parser.add_argument("--output", required=True, type=Path,
                        help=".npy, or .npz for models with several outputs")
    add_model_arguments(parser)


def load_inputs(graph: Graph, path: Path) -> list[np.ndarray]:
    """One ``[N, *shape]`` array per graph input, in graph-input order, checked
    against the model's inputs (:func:`aot.inputs.check_inputs`)."""
    import numpy as np

    from aot.inputs import check_inputs
    from aot.reference.interpreter import InterpretError
    try:
        with open(path, "rb") as f:
            magic = f.read(6)
        # Anything else would reach numpy's pickle fallback, whose message
        # ("pickled data") misleads for a file that is simply not numpy's.
        if magic and not magic.startswith((b"\x93NUMPY", b"PK\x03\x04")):
            raise InterpretError(f"cannot read {path}: not a .npy or .npz file "
                                 "(save arrays with numpy.save or numpy.savez)")
        data = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as err:
        # numpy raises EOFError for an empty or truncated file.
        raise InterpretError(f"cannot read {path} as .npy or .npz: {err or 'empty file'}") from None
    if isinstance(data, np.ndarray):
        if len(graph.inputs) != 1:
            raise InterpretError(
                f"the model has {len(graph.inputs)} inputs: give an .npz with one array "
                "per input (keys: input names or input_0, input_1, ...)"
            )
        arrays = [data]
    else:
        with data:
            arrays = []
            for k, t in enumerate(graph.inputs):
                key = t.name if t.name in data.files else f"input_{k}"
                if key not in data.files:
                    raise InterpretError(f"{path} has no array {t.name!r} or 'input_{k}'; "
                                         f"it holds {sorted(data.files)}")
                arrays.append(data[key])
    return check_inputs(graph, arrays, source=path)


def interpret(graph: Graph, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Run the N invocations in order on one fresh session; stack each output."""
    import numpy as np

    from aot.reference.interpreter import Session
    session = Session(graph)
    results = [session.invoke([x[i] for x in inputs]) for i in range(inputs[0].shape[0])]
    return [np.stack([r[k] for r in results]) if results else
            np.zeros((0, *t.shape), t.type.np_dtype) for k, t in enumerate(graph.outputs)]


def save_outputs(graph: Graph, outputs: list[np.ndarray], path: Path) -> None:
    import numpy as np

    from aot.reference.interpreter import InterpretError
    if len(outputs) == 1 and path.suffix != ".npz":
        np.save(path, outputs[0])
        return
    if path.suffix != ".npz":
        raise InterpretError(f"the model has {len(outputs)} outputs: name the output file "
                             "*.npz")
    np.savez(path, **{f"output_{k}": y for k, y in enumerate(outputs)})


def run(args: argparse.Namespace) -> int:
    from aot.frontend import load_model
    from aot.reference.interpreter import InterpretError
    graph = load_model(args.model, input_shapes(args))
    outputs = interpret(graph, load_inputs(graph, args.input))
    try:
        save_outputs(graph, outputs, args.output)
    except OSError as err:
        raise InterpretError(f"cannot write {args.output}: {err.strerror or err}") from None
    n = outputs[0].shape[0]
    print(f"{n} invocation{'s' if n != 1 else ''} of {graph.name}; outputs written to "
          f"{args.output}")
    return 0
