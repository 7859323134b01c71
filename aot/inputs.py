"""The one check of the inputs given to a compiled model before anything is built or run.

Every path that runs a model on a device or the host (``aot run``, ``aot
verify``, :func:`aot.firmware.run_on_board`, :func:`aot.firmware.run_project`,
:func:`aot.commands.run.run_on_host`, :func:`aot.firmware.verify_model`) takes
one ``[N, *shape]`` array per model input: N invocations, each in the model's
own shape (batch dimension included), as ``aot interpret`` does.  A wrong
shape would otherwise reach the device as a tensor write of the wrong size,
after the build and the flash, and look like a device that stops answering.

Values must convert exactly to the input's dtype, the rule of the reference
interpreter (docs/models.md): an int64 array of int8 values is fine, 0.5 or
200 for an int8 input is an error.

NaN and Inf pass :func:`check_inputs` (a caller of the Python API may mean
them), but a model's answer to them is not defined: TFLM, the reference and
the compiled C each give something different, and a softmax turns it into a
plausible-looking wrong answer.  :func:`check_finite` refuses them; the
``aot`` commands call it on every input file unless ``--allow-nonfinite``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from aot.errors import AotError
from aot.ir import Graph


class InputError(AotError):
    """The inputs given do not match the model's inputs."""


@dataclass(frozen=True)
class InputSpec:
    """What one model input expects: its name, shape (without the N axis) and dtype."""

    name: str
    shape: tuple[int, ...]
    dtype: np.dtype

    def describe(self) -> str:
        return f"[N, {', '.join(map(str, self.shape))}] of {self.dtype}"


def input_specs(model) -> list[InputSpec]:
    """The inputs of a :class:`~aot.ir.Graph`, or of an artifact's metadata
    (``metadata["inputs"]``, as a built project has it)."""
    if isinstance(model, Graph):
        return [InputSpec(t.name, tuple(t.shape), np.dtype(t.type.np_dtype))
                for t in model.inputs]
    return [InputSpec(p["name"], tuple(p["shape"]), np.dtype(p["dtype"]))
            for p in model["inputs"]]


def _given(x: np.ndarray) -> str:
    return f"{list(x.shape)} of {x.dtype}"


def check_inputs(model, arrays: Sequence, *, source=None) -> list[np.ndarray]:
    """``arrays`` (one ``[N, *shape]`` array per input of ``model``, a Graph or
    metadata) converted to the inputs' dtypes, or an :class:`InputError`
    naming the input, the shape and dtype expected and those given.
    ``source`` (e.g. the input file) is named in the message."""
    specs = input_specs(model)
    where = f"{source}: " if source is not None else ""
    arrays = list(arrays)
    if len(arrays) != len(specs):
        raise InputError(f"{where}the model takes {len(specs)} input"
                         f"{'s' if len(specs) != 1 else ''} "
                         f"({', '.join(repr(s.name) for s in specs)}), got {len(arrays)} arrays")
    out = []
    for spec, x in zip(specs, arrays):
        x = np.asarray(x)
        if x.ndim != len(spec.shape) + 1 or tuple(x.shape[1:]) != spec.shape:
            raise InputError(
                f"{where}input {spec.name!r}: expected an array of shape {spec.describe()} "
                f"(N invocations), got {_given(x)}")
        out.append(_convert(spec, x, where))
    counts = sorted({x.shape[0] for x in out})
    if len(counts) > 1:
        raise InputError(f"{where}the inputs hold different numbers of invocations: {counts}")
    return out


def _convert(spec: InputSpec, x: np.ndarray, where: str) -> np.ndarray:
    if x.dtype == spec.dtype:
        return np.ascontiguousarray(x)
    try:
        with np.errstate(invalid="ignore", over="ignore"):
            cast = x.astype(spec.dtype)
            exact = np.array_equal(cast.astype(x.dtype), x,
                                   equal_nan=x.dtype.kind == "f" and spec.dtype.kind == "f")
    except (TypeError, ValueError):
        exact = False
    if not exact:
        raise InputError(
            f"{where}input {spec.name!r}: expected an array of shape {spec.describe()}, got "
            f"{_given(x)} whose values do not convert exactly to {spec.dtype} (e.g. "
            f"{_first_inexact(x, spec.dtype)}); save the array as {spec.dtype}")
    return np.ascontiguousarray(cast)


def _first_inexact(x: np.ndarray, dtype: np.dtype) -> str:
    flat = x.reshape(-1)
    try:
        with np.errstate(invalid="ignore", over="ignore"):
            bad = np.flatnonzero(flat.astype(dtype).astype(x.dtype) != flat)
    except (TypeError, ValueError):
        return f"a {x.dtype} value"
    return repr(flat[bad[0]].item()) if bad.size else f"a {x.dtype} value"


def check_finite(model, arrays: Sequence, *, source=None, hint: str = "") -> None:
    """An :class:`InputError` when a float input of ``model`` (a Graph or
    metadata) holds NaN or Inf, naming the input, how many values and the
    first one's index; ``hint`` (what to do to pass them anyway) ends the
    message.  ``arrays`` are :func:`check_inputs`'s result."""
    where = f"{source}: " if source is not None else ""
    for spec, x in zip(input_specs(model), arrays):
        if spec.dtype.kind != "f":
            continue
        bad = ~np.isfinite(x)
        count = int(bad.sum())
        if count == 0:
            continue
        nan = int(np.isnan(x).sum())
        first = [int(i) for i in np.unravel_index(int(np.argmax(bad)), x.shape)]
        kinds = ", ".join(f"{n} {what}" for n, what in ((nan, "NaN"), (count - nan, "Inf"))
                          if n)
        raise InputError(
            f"{where}input {spec.name!r} holds {count} non-finite value"
            f"{'s' if count != 1 else ''} ({kinds}), the first at index {first} "
            "(invocation first); a model's answer to NaN or Inf is not defined (TFLM, "
            "the reference and the compiled code differ)" + (f"; {hint}" if hint else ""))
