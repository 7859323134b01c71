"""Frontends: model files -> :class:`aot.ir.Graph`.

:func:`load_model` picks the frontend from the file's contents (TFLite files
carry the identifier ``TFL3`` at byte 4) or, failing that, its suffix.
Every problem with the file is a :class:`ModelError`.  ``input_shapes``
fixes the sizes an ONNX model leaves open (:mod:`aot.frontend.shapes`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from aot.frontend.errors import ModelError
from aot.frontend.shapes import check_input_names, fix_input_shape, normalize_input_shapes
from aot.ir import Graph

__all__ = ["ModelError", "load_model"]

#: Suffixes the frontends know, for error messages.
SUFFIXES = (".tflite", ".onnx")


def load_model(path: str | Path, input_shapes: Mapping | None = None) -> Graph:
    """Read a model file into a :class:`Graph`.

    ``input_shapes`` (``{input name: shape}``) fixes symbolic or unknown
    dimensions of ONNX inputs; a TFLite model's shapes are fixed already, so
    there it may only restate them.
    """
    from aot.frontend.tflite import load_tflite, parse_tflite

    path = Path(path)
    given = normalize_input_shapes(input_shapes)
    try:
        head = path.open("rb").read(8)
    except OSError as err:
        raise ModelError(f"cannot read {path}: {err.strerror or err}") from None
    if head[4:8] == b"TFL3" or path.suffix == ".tflite":
        # load_tflite reports a .tflite file with the wrong identifier.
        graph = (parse_tflite(path.read_bytes(), name=path.stem) if head[4:8] == b"TFL3"
                 else load_tflite(path))
        declared = {t.name: tuple(t.shape) for t in graph.inputs}
        check_input_names(given, declared)
        for name, shape in given.items():
            fix_input_shape(name, declared[name], shape)
        return graph
    if path.suffix == ".onnx":
        from aot.frontend.onnx import load_onnx

        return load_onnx(path, input_shapes=given)
    raise ModelError(
        f"{path}: unknown model format; expected a file ending in {' or '.join(SUFFIXES)}"
    )
