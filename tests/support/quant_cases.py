"""Random quantized tensors for operator tests (seeded, with edge values)."""

from __future__ import annotations

import numpy as np


def rand_int(rng, shape, dtype="int8", edges=True):
    """Uniform random integers over the dtype's range; when ``edges`` the
    first elements are the extremes, so saturation paths are exercised."""
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max + 1, size=shape, dtype=np.int64)
    flat = x.reshape(-1)
    if edges and flat.size >= 4:
        flat[:4] = [info.min, info.max, 0, info.min + 1]
    return x.astype(dtype)


def weight_scales(rng, n, per_channel=True):
    """Positive float32 weight scales, one per channel or one for the tensor."""
    s = rng.uniform(0.002, 0.05, size=n if per_channel else 1).astype(np.float32)
    return s if per_channel else s[0]


def bias_scale(x_scale, w_scale):
    """The int32 bias scale TFLite requires: x_scale * w_scale (float32)."""
    return (np.float32(x_scale) * np.asarray(w_scale, dtype=np.float32)).astype(np.float32)
