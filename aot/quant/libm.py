"""libm's single-precision functions, as TFLM's host build computes them.

numpy's own float32 ``exp``/``log``/``sin``/``cos`` may differ from C's
``expf``/``logf``/``sinf``/``cosf`` in the last bit, and TFLM (the oracle)
calls C's; the reference interpreter and the compile-time tables use these.
On a device the C library's functions are used, which may round
differently from the host's (sqrt, floor, ceil and rint are exact everywhere).
"""

from __future__ import annotations

import ctypes
import ctypes.util

import numpy as np

_libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
FUNCTIONS = ("expf", "expm1f", "logf", "sinf", "cosf", "erff", "tanhf")
for _name in FUNCTIONS:
    getattr(_libm, _name).restype = ctypes.c_float
    getattr(_libm, _name).argtypes = [ctypes.c_float]


def call(name: str, x) -> np.ndarray:
    """C's ``name`` (one of :data:`FUNCTIONS`) on every element of ``x`` (float32)."""
    fn = getattr(_libm, name)
    x = np.asarray(x, dtype=np.float32)
    return np.array([fn(float(v)) for v in x.ravel()], dtype=np.float32).reshape(x.shape)


def expf(v) -> np.float32:
    """C ``expf`` of one value."""
    return np.float32(_libm.expf(float(v)))
