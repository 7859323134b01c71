"""TopK: the k largest (or smallest) elements along an axis, ONNX's order."""

from __future__ import annotations

import numpy as np


def topk_indices(x, *, k: int, axis: int, largest: bool) -> np.ndarray:
    """int64 positions along ``axis`` of the ``k`` largest (smallest) elements,
    best first, of equal elements the lower position first (ONNX's tie rule).
    Raw integers order as the real values they stand for (one positive scale)."""
    x = np.asarray(x)
    key = x.astype(np.float64) if x.dtype.kind == "f" else x.astype(np.int64)
    if largest:
        key = -key  # exact in float64 and int64; the stable sort keeps ties in order
    order = np.argsort(key, axis=axis, kind="stable")
    return np.take(order, np.arange(k), axis=axis).astype(np.int64)


def topk(x, *, k: int, axis: int, largest: bool, output: str) -> np.ndarray:
    """The values (``output`` "values") or the positions ("indices") of
    :func:`topk_indices`."""
    idx = topk_indices(x, k=k, axis=axis, largest=largest)
    if output == "indices":
        return idx
    return np.take_along_axis(np.asarray(x), idx, axis=axis)
