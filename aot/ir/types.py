"""Tensor types: shape, element type and quantization.

A :class:`TensorType` is immutable and hashable.  Shapes are static (every
dimension is a non-negative int): microcontroller models have no dynamic
shapes, and every later stage relies on sizes known ahead of time.

Quantization follows the affine scheme shared by TFLite and ONNX:
``real = scale * (q - zero_point)``, either per tensor (one scale, one zero
point, ``axis`` is None) or per axis (one pair per slice along ``axis``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from aot.errors import AotError, one_of


class IRError(AotError):
    """A graph or tensor type that breaks the IR's rules (bad shape, dtype, attribute)."""


#: Element types the IR knows, with their numpy equivalents.
DTYPES: dict[str, np.dtype] = {
    "int8": np.dtype(np.int8),
    "uint8": np.dtype(np.uint8),
    "int16": np.dtype(np.int16),
    "int32": np.dtype(np.int32),
    "int64": np.dtype(np.int64),
    "float32": np.dtype(np.float32),
    "bool": np.dtype(np.bool_),
}

INTEGER_DTYPES = frozenset({"int8", "uint8", "int16", "int32", "int64"})


def check_dtype(dtype: str) -> str:
    """Return ``dtype`` if the IR knows it, else raise :class:`IRError`."""
    if dtype not in DTYPES:
        raise IRError(f"unknown dtype {dtype!r}: expected {one_of(DTYPES)}")
    return dtype


def numpy_dtype(dtype: str) -> np.dtype:
    return DTYPES[check_dtype(dtype)]


def _fmt_float(x: float) -> str:
    return f"{x:.9g}"


@dataclass(frozen=True)
class Quantization:
    """Affine quantization parameters.

    ``scale`` and ``zero_point`` are tuples of equal length.  With ``axis``
    None there is exactly one pair (per tensor); otherwise there is one pair
    per index of dimension ``axis`` (per axis, e.g. per output channel).
    """

    scale: tuple[float, ...]
    zero_point: tuple[int, ...]
    axis: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", tuple(float(s) for s in self.scale))
        object.__setattr__(self, "zero_point", tuple(int(z) for z in self.zero_point))
        if not self.scale or len(self.scale) != len(self.zero_point):
            raise IRError(
                f"quantization needs as many scales as zero points, and at least one: "
                f"got {len(self.scale)} scales, {len(self.zero_point)} zero points"
            )
        if self.axis is None and len(self.scale) != 1:
            raise IRError("per-tensor quantization has exactly one scale; give an axis")
        for s in self.scale:
            if not np.isfinite(s) or s <= 0:
                raise IRError(f"quantization scale must be finite and positive, got {s}")

    @classmethod
    def per_tensor(cls, scale: float, zero_point: int) -> Quantization:
        return cls((scale,), (zero_point,), None)

    @property
    def is_per_axis(self) -> bool:
        return self.axis is not None

    def scales(self) -> np.ndarray:
        return np.asarray(self.scale, dtype=np.float64)

    def zero_points(self) -> np.ndarray:
        return np.asarray(self.zero_point, dtype=np.int64)

    def __str__(self) -> str:
        if self.axis is None:
            return f"q({_fmt_float(self.scale[0])}, {self.zero_point[0]})"
        zps = set(self.zero_point)
        zp = str(self.zero_point[0]) if len(zps) == 1 else "[...]"
        return f"q(axis={self.axis}, n={len(self.scale)}, zp={zp})"

    def to_json(self) -> dict:
        return {"scale": list(self.scale), "zero_point": list(self.zero_point), "axis": self.axis}


@dataclass(frozen=True)
class TensorType:
    """Static shape, element type and optional quantization of one tensor."""

    shape: tuple[int, ...]
    dtype: str
    quant: Quantization | None = None

    def __post_init__(self) -> None:
        try:
            shape = tuple(int(d) for d in self.shape)
        except (TypeError, ValueError):
            raise IRError(f"a shape is a sequence of ints, got {self.shape!r}") from None
        if any(d < 0 for d in shape):
            raise IRError(f"negative dimension in shape {list(shape)}")
        object.__setattr__(self, "shape", shape)
        check_dtype(self.dtype)
        q = self.quant
        if q is not None and q.axis is not None:
            if not 0 <= q.axis < len(shape):
                raise IRError(
                    f"quantization axis {q.axis} is out of range for shape {list(shape)}"
                )
            if len(q.scale) != shape[q.axis]:
                raise IRError(
                    f"per-axis quantization has {len(q.scale)} scales but dimension "
                    f"{q.axis} of shape {list(shape)} has {shape[q.axis]} entries"
                )

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        """Number of elements."""
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def nbytes(self) -> int:
        return self.size * DTYPES[self.dtype].itemsize

    @property
    def np_dtype(self) -> np.dtype:
        return DTYPES[self.dtype]

    def with_quant(self, quant: Quantization | None) -> TensorType:
        return TensorType(self.shape, self.dtype, quant)

    def __str__(self) -> str:
        text = f"{self.dtype}[{','.join(str(d) for d in self.shape)}]"
        return f"{text} {self.quant}" if self.quant is not None else text

    def to_json(self) -> dict:
        return {
            "shape": list(self.shape),
            "dtype": self.dtype,
            "quantization": self.quant.to_json() if self.quant else None,
        }
