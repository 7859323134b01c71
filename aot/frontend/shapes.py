"""The shapes of a model's inputs: what the file declares, fixed by the user's ``input_shapes``.

The compiler needs every size at compile time.  ONNX exporters often leave
dimensions open: a symbolic size (``dim_param``, PyTorch's ``dynamic_axes``
writes ``"batch_size"`` or ``"N"``) or no size at all.  :func:`fix_input_shape`
decides one input's shape from what the model declares and what the user
gives (``--input-shape NAME=1,3,224,224`` on the command line,
``input_shapes={"NAME": (1, 3, 224, 224)}`` in Python):

* a given shape must name a graph input, have the declared rank, hold only
  positive sizes and agree with every size the model fixes;
* without one, an open first (batch) dimension becomes 1, with an
  :class:`~aot.errors.AotWarning` naming the input; any other open
  dimension is an error naming the input and suggesting ``--input-shape``.

A declared shape is a tuple of ``int`` (fixed), ``str`` (symbolic) or
``None`` (unknown) per dimension, or None when the file gives no shape.
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Mapping, Sequence

from aot.errors import AotWarning
from aot.frontend.errors import ModelError

Dim = int | str | None

#: How the two ways of giving shapes are spelled in messages.
HOW_TO_FIX = "--input-shape NAME=D0,D1,... (input_shapes={NAME: (D0, D1, ...)} in Python)"


def format_declared(dims: Sequence[Dim] | None) -> str:
    """``[N, 3, ?, 224]``: a declared shape as messages show it (``?`` = unknown)."""
    if dims is None:
        return "no shape"
    return "[" + ", ".join("?" if d is None else str(d) for d in dims) + "]"


def normalize_input_shapes(input_shapes: Mapping | None) -> dict[str, tuple[int, ...]]:
    """``input_shapes`` as ``{name: tuple of int}``; anything else is a :class:`ModelError`."""
    if input_shapes is None:
        return {}
    if not isinstance(input_shapes, Mapping):
        raise ModelError(f"input_shapes must map input names to shapes, got "
                         f"{type(input_shapes).__name__}")
    out = {}
    for name, dims in input_shapes.items():
        try:
            if isinstance(dims, (str, bytes)) or any(isinstance(d, bool) for d in dims):
                raise TypeError
            out[str(name)] = tuple(operator.index(d) for d in dims)
        except TypeError:
            raise ModelError(f"input shape for {name!r} must be a sequence of integers, "
                             f"got {dims!r}") from None
    return out


def check_input_names(given: Mapping[str, tuple[int, ...]],
                      declared: Mapping[str, Sequence[Dim] | None]) -> None:
    """Every given name must be a graph input; the message lists the inputs."""
    for name in given:
        if name not in declared:
            inputs = ", ".join(f"{n!r} {format_declared(d)}" for n, d in declared.items())
            raise ModelError(f"an input shape is given for {name!r}, which is not an input "
                             f"of the model; its inputs: {inputs or 'none'}")


def fix_input_shape(name: str, declared: Sequence[Dim] | None,
                    given: tuple[int, ...] | None) -> tuple[int, ...]:
    """The static shape of the graph input ``name`` (see the module docstring)."""
    where = f"graph input {name!r}"
    model = f"the model declares {format_declared(declared)}"
    if given is not None:
        text = "(" + ",".join(str(d) for d in given) + ")"
        bad = [d for d in given if d <= 0]
        if bad:
            raise ModelError(f"{where}: the input shape {text} has the size {bad[0]}; "
                             f"sizes must be positive ({model})")
        if declared is None:
            return given
        if len(given) != len(declared):
            raise ModelError(f"{where}: the input shape {text} has {len(given)} dimensions "
                             f"but {model} ({len(declared)} dimensions)")
        for k, (want, got) in enumerate(zip(declared, given)):
            if isinstance(want, int) and want != got:
                raise ModelError(f"{where}: the input shape {text} sets dimension {k} to "
                                 f"{got}, but {model} (dimension {k} is {want})")
        return given
    if declared is None:
        raise ModelError(f"{where} has no shape; give one with {HOW_TO_FIX}")
    for k, dim in enumerate(declared[1:], start=1):
        if not isinstance(dim, int):
            what = f"the symbolic size {dim!r}" if dim is not None else "no fixed size"
            raise ModelError(f"{where} has a dynamic shape: dimension {k} has {what} "
                             f"({model}); fix it with {HOW_TO_FIX}")
    if declared and not isinstance(declared[0], int):
        what = f"the symbolic size {declared[0]!r}" if declared[0] is not None \
            else "no fixed size"
        warnings.warn(AotWarning(f"{where}: dimension 0 (the batch) has {what}; compiling it "
                                 f"as 1 (set it with --input-shape {name}=...)"), stacklevel=2)
        return (1, *declared[1:])
    return tuple(declared)
