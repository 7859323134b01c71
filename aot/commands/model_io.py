"""Model inputs and outputs as files and text, shared by the commands that run
a model (``aot interpret``, ``aot run``, ``aot verify``, ``aot profile``).

:mod:`aot.commands.interpret` describes the file convention and
:mod:`aot.commands.model_args` declares the options; this module does the work,
and is imported by the commands only when they run (it loads numpy and the
pipeline, which ``aot --help`` should not).
"""

from __future__ import annotations

import argparse
import zipfile
from pathlib import Path

import numpy as np

from aot.commands.model_args import DEFAULT_FILL, FILLS
from aot.errors import one_of
from aot.firmware.verify import random_inputs, sample_path
from aot.inputs import check_finite, check_inputs
from aot.ir import Graph
from aot.reference.interpreter import InterpretError, Session


def inputs_from_args(graph: Graph, args: argparse.Namespace) -> tuple[list[np.ndarray], str]:
    """The inputs ``--input`` or ``--fill`` name (default ``--fill random``),
    and what they are, for the summary.  A model without inputs (constants
    only) runs once on nothing; ``--input`` or ``--fill`` for it is refused."""
    if not graph.inputs:
        given = "--input" if args.input is not None else "--fill" if args.fill else None
        if given:
            raise InterpretError(f"{graph.name} has no inputs: {given} has nothing to feed; "
                                 f"drop {given} (the model runs once)")
        return [], "no inputs"
    if args.input is not None:
        return load_inputs(graph, args.input, allow_nonfinite=args.allow_nonfinite), \
            str(args.input)
    fill = args.fill or DEFAULT_FILL
    return fill_inputs(graph, args.model, fill, args.seed), \
        f"--fill {fill}" + (f", seed {args.seed}" if fill == "random" else "")


def fill_inputs(graph: Graph, model, fill: str, seed: int = 0) -> list[np.ndarray]:
    """Generated inputs for ``graph``: one invocation of zeros, ones or seeded
    random values (:func:`aot.firmware.verify.random_inputs`), or every
    invocation of the model file's sample (:func:`aot.firmware.verify.sample_path`)."""
    if fill in ("zeros", "ones"):
        return [np.full((1, *t.shape), 0 if fill == "zeros" else 1, t.type.np_dtype)
                for t in graph.inputs]
    if fill == "random":
        return random_inputs(graph, 1, seed)
    if fill == "sample":
        path = sample_path(model)
        if not path.is_file():
            raise InterpretError(f"--fill sample: {model} has no sample inputs (looked for "
                                 f"{path}); use --fill zeros, ones or random, or --input")
        if len(graph.inputs) != 1:
            raise InterpretError(f"not supported yet: --fill sample for a model with "
                                 f"{len(graph.inputs)} inputs (a sample file holds one)")
        return load_inputs(graph, path)
    raise InterpretError(f"--fill {fill!r}: expected {one_of(FILLS)}")


def load_inputs(graph: Graph, path: Path, *, allow_nonfinite: bool = False) -> list[np.ndarray]:
    """One ``[N, *shape]`` array per graph input, in graph-input order, checked
    against the model's inputs (:func:`aot.inputs.check_inputs`) and, unless
    ``allow_nonfinite``, refused when a float input holds NaN or Inf
    (:func:`aot.inputs.check_finite`)."""
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
    arrays = check_inputs(graph, arrays, source=path)
    if not allow_nonfinite:
        check_finite(graph, arrays, source=path, hint="--allow-nonfinite runs them anyway")
    return arrays


def interpret(graph: Graph, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Run the N invocations in order on one fresh session; stack each output."""
    session = Session(graph)
    results = [session.invoke([x[i] for x in inputs]) for i in range(inputs[0].shape[0])]
    return [np.stack([r[k] for r in results]) if results else
            np.zeros((0, *t.shape), t.type.np_dtype) for k, t in enumerate(graph.outputs)]


def check_output_path(graph: Graph, path: Path) -> None:
    """The rule of ``--output``: the file written is exactly ``path``, so it
    names a ``.npy`` file (a model with one output) or a ``.npz`` file, and
    not a folder.  Checked before running, so a long run is not lost."""
    n = len(graph.outputs)
    if path.is_dir():
        raise InterpretError(f"--output {path} is a folder: name the file to write, e.g. "
                             f"{path / ('outputs.npy' if n == 1 else 'outputs.npz')}")
    if path.suffix not in (".npy", ".npz"):
        raise InterpretError(f"--output {path}: name a .npy file (a model with one output) or "
                             "a .npz file; the outputs are written to exactly the path given")
    if path.suffix == ".npy" and n != 1:
        raise InterpretError(f"--output {path}: the model has {n} outputs: name the output "
                             "file *.npz")
    if not path.absolute().parent.is_dir():
        raise InterpretError(f"--output {path}: the folder {path.parent} does not exist; "
                             "make it first")


def save_outputs(graph: Graph, outputs: list[np.ndarray], path: Path) -> None:
    """Write ``outputs`` to exactly ``path`` (:func:`check_output_path`)."""
    check_output_path(graph, path)
    try:
        with open(path, "wb") as f:  # a file object: numpy adds no suffix to it
            if path.suffix == ".npy":
                np.save(f, outputs[0])
            else:
                np.savez(f, **{f"output_{k}": y for k, y in enumerate(outputs)})
    except OSError as err:
        raise InterpretError(f"cannot write {path}: {err.strerror or err}") from None


def top_classes(outputs) -> list[int] | None:
    """The argmax of each invocation's output for a classifier (one output holding a
    vector of scores), else None."""
    if len(outputs) != 1:
        return None
    y = outputs[0]
    if y.ndim < 2 or y.shape[-1] < 2 or any(d != 1 for d in y.shape[1:-1]):
        return None
    return [int(i) for i in y.reshape(y.shape[0], -1).argmax(axis=1)]


#: How many classes the printed top list holds, and how many invocations are printed.
TOP_K = 5
SHOWN = 8


def _real(t, y: np.ndarray) -> np.ndarray | None:
    """The real values of a quantized output (per tensor), else None."""
    q = t.quant
    if q is None or q.is_per_axis:
        return None
    return q.scales()[0] * (y.astype(np.float64) - q.zero_points()[0])


def top_k(graph: Graph, outputs: list[np.ndarray], k: int = TOP_K) -> list[list[dict]] | None:
    """For a classifier (:func:`top_classes`): per invocation, the ``k`` best
    classes with their value (and real value when quantized), best first."""
    if top_classes(outputs) is None:
        return None
    t, y = graph.outputs[0], outputs[0].reshape(outputs[0].shape[0], -1)
    real = _real(t, y)
    out = []
    for i, row in enumerate(y):
        order = np.argsort(-row.astype(np.float64), kind="stable")[:k]
        out.append([{"class": int(c), "value": _scalar(row[c]),
                     **({"real": float(real[i, c])} if real is not None else {})}
                    for c in order])
    return out


def _scalar(v):
    v = v.item()
    return v if not isinstance(v, float) or np.isfinite(v) else None


def _number(v) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def _values(y: np.ndarray):
    """``y`` as nested lists for JSON (which has no NaN or Infinity: null)."""
    if y.dtype.kind == "f":
        return np.where(np.isfinite(y), y.astype(object), None).tolist()
    return y.tolist()


def outputs_json(graph: Graph, outputs: list[np.ndarray], *, values: bool) -> dict:
    """The outputs for ``--json``: each output's name, dtype and shape, its
    values (``values``: all invocations, NaN and Inf as null) and the top
    classes of a classifier."""
    data = {"outputs": [{"name": t.name, "dtype": str(y.dtype), "shape": list(y.shape),
                         **({"values": _values(y)} if values else {})}
                        for t, y in zip(graph.outputs, outputs)]}
    best = top_k(graph, outputs)
    if best is not None:
        data["top_k"] = best
        data["top_class"] = top_classes(outputs)
    return data


def format_outputs(graph: Graph, outputs: list[np.ndarray]) -> str:
    """The outputs as text: the top classes of a classifier, else the values,
    for the first :data:`SHOWN` invocations."""
    n = outputs[0].shape[0]
    lines = []
    best = top_k(graph, outputs)
    for k, (t, y) in enumerate(zip(graph.outputs, outputs)):
        real = _real(t, y)
        head = f"  output {k} {t.name!r} {y.dtype}{list(y.shape[1:])}"
        if best is not None:
            lines.append(f"{head}, top {len(best[0])} classes (class: value"
                         + (" = real value" if real is not None else "") + "):")
            for i in range(min(n, SHOWN)):
                lines.append(f"    invocation {i}: " + ", ".join(
                    f"{c['class']}: {_number(c['value'])}"
                    + (f" = {c['real']:.4g}" if "real" in c else "") for c in best[i]))
            continue
        lines.append(head + (" (real values after '=')" if real is not None else "") + ":")
        for i in range(min(n, SHOWN)):
            text = np.array2string(y[i], threshold=20, precision=4, separator=" ")
            if real is not None:
                text += " = " + np.array2string(real[i], threshold=20, precision=4,
                                                separator=" ")
            lines.append(f"    invocation {i}: " + text.replace("\n", " "))
    if n > SHOWN:
        lines.append(f"  ... and {n - SHOWN} more invocations (--output FILE keeps them all)")
    return "\n".join(lines)
