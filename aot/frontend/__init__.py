"""Frontends: model files -> :class:`aot.ir.Graph`.

:func:`load_model` picks the frontend from the file's contents (TFLite files
carry the identifier ``TFL3`` at byte 4) or, failing that, its suffix.
Every problem with the file is a :class:`ModelError`.
"""

from __future__ import annotations

from pathlib import Path

from aot.frontend.errors import ModelError
from aot.ir import Graph

__all__ = ["ModelError", "load_model"]

#: Suffixes the frontends know, for error messages.
SUFFIXES = (".tflite", ".onnx")


def load_model(path: str | Path) -> Graph:
    """Read a model file into a :class:`Graph`."""
    from aot.frontend.tflite import load_tflite, parse_tflite

    path = Path(path)
    try:
        head = path.open("rb").read(8)
    except OSError as err:
        raise ModelError(f"cannot read {path}: {err.strerror or err}") from None
    if head[4:8] == b"TFL3":
        return parse_tflite(path.read_bytes(), name=path.stem)
    if path.suffix == ".tflite":
        return load_tflite(path)  # reports the wrong identifier
    if path.suffix == ".onnx":
        from aot.frontend.onnx import load_onnx

        return load_onnx(path)
    raise ModelError(
        f"{path}: unknown model format; expected a file ending in {' or '.join(SUFFIXES)}"
    )
