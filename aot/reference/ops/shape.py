"""Data movement: CONCATENATION, PAD, MIRROR_PAD, STRIDED_SLICE, TRANSPOSE,
RESHAPE, RESIZE_NEAREST_NEIGHBOR, RESIZE_BILINEAR, GATHER, GATHER_ND,
DYNAMIC_UPDATE_SLICE.

These never change values: quantized operands share one scale and zero
point (TFLM requires it), so the kernels work on raw values of any dtype.
"""

from __future__ import annotations

import numpy as np


def concatenation(xs, *, axis: int):
    """CONCATENATION along ``axis`` (negative counts from the end)."""
    return np.concatenate([np.asarray(x) for x in xs], axis=axis)


def pad(x, paddings, *, pad_value=0):
    """PAD: ``paddings`` is ``[[before, after], ...]`` per axis; padded
    elements hold ``pad_value`` (the output zero point for quantized tensors)."""
    x = np.asarray(x)
    p = np.asarray(paddings, dtype=np.int64).reshape(x.ndim, 2)
    return np.pad(x, [tuple(r) for r in p], constant_values=np.array(pad_value).astype(x.dtype))


def transpose(x, perm):
    """TRANSPOSE: output axis ``i`` is input axis ``perm[i]``."""
    return np.transpose(np.asarray(x), [int(p) for p in perm])


def reshape(x, shape):
    """RESHAPE: same data, new shape (one -1 allowed)."""
    return np.asarray(x).reshape([int(d) for d in shape])


def _bit(mask: int, i: int) -> bool:
    return bool((mask >> i) & 1)


def strided_slice(x, begin, end, strides, *, begin_mask=0, end_mask=0, shrink_axis_mask=0,
                  offset=False, ellipsis_mask=0, new_axis_mask=0):
    """STRIDED_SLICE with TFLite's start/stop resolution per axis.

    Start: ``begin[i]`` (negative counts from the end), or the first element
    in the stride's direction when the begin-mask bit is set; clamped to
    ``[0, dim]`` (positive stride) or ``[-1, dim - 1]`` (negative).  Stop: the
    same with ``end[i]``, or ``start + 1`` for a shrunk axis.  Shrunk axes are
    removed from the output.
    """
    if ellipsis_mask or new_axis_mask or offset:
        # TFLM ignores ``offset`` (measured), so a model using it has no
        # agreed meaning; refuse it rather than pick one.
        raise NotImplementedError(
            "STRIDED_SLICE: ellipsis/new-axis masks and offset are not supported")
    x = np.asarray(x)
    out = x
    keep = []
    for i in range(x.ndim):
        dim = x.shape[i]
        stride = int(strides[i])
        if stride == 0:
            raise ValueError("STRIDED_SLICE: stride 0")
        lo, hi = (0, dim) if stride > 0 else (-1, dim - 1)
        if _bit(begin_mask, i) and not _bit(shrink_axis_mask, i):
            start = 0 if stride > 0 else dim - 1
        else:
            start = int(begin[i])
            start = start + dim if start < 0 else start
            start = min(max(start, lo), hi)
        if _bit(shrink_axis_mask, i):
            stop = start + 1
        elif _bit(end_mask, i):
            stop = dim if stride > 0 else -1
        else:
            stop = int(end[i])
            stop = stop + dim if stop < 0 else stop
            stop = min(max(stop, lo), hi)
        out = np.take(out, np.arange(start, stop, stride, dtype=np.int64), axis=i)
        if not _bit(shrink_axis_mask, i):
            keep.append(out.shape[i])
    return out.reshape(keep)


def mirror_pad(x, paddings, *, mode: str):
    """MIRROR_PAD: ``reflect`` mirrors without the edge element, ``symmetric`` with it."""
    x = np.asarray(x)
    return np.pad(x, [tuple(int(v) for v in p) for p in paddings], mode=mode)


def nearest_indices(in_size: int, out_size: int, *, align_corners: bool,
                    half_pixel_centers: bool) -> np.ndarray:
    """The input index each output index reads in TFLite's RESIZE_NEAREST_NEIGHBOR,
    with its float32 arithmetic: ``(o + offset) * scale``, rounded (align_corners)
    or floored, clamped to the input."""
    f = np.float32
    if align_corners and out_size > 1:
        scale = f(in_size - 1) / f(out_size - 1)
    else:
        scale = f(in_size) / f(out_size)
    offset = f(0.5) if half_pixel_centers else f(0.0)
    pos = (np.arange(out_size, dtype=np.float32) + offset) * scale
    # TfLiteRound rounds half away from zero; pos is never negative.
    idx = np.floor(pos + f(0.5)) if align_corners else np.floor(pos)
    idx = np.minimum(idx.astype(np.int64), in_size - 1)
    return np.maximum(idx, 0) if half_pixel_centers else idx


def resize_nearest(x, size, *, align_corners: bool = False, half_pixel_centers: bool = False):
    """RESIZE_NEAREST_NEIGHBOR of NHWC ``x`` to ``size = (height, width)``."""
    x = np.asarray(x)
    rows = nearest_indices(x.shape[1], size[0], align_corners=align_corners,
                           half_pixel_centers=half_pixel_centers)
    cols = nearest_indices(x.shape[2], size[1], align_corners=align_corners,
                           half_pixel_centers=half_pixel_centers)
    return x[:, rows][:, :, cols]


def bilinear_taps(in_size: int, out_size: int, *, align_corners: bool,
                  half_pixel_centers: bool, integer: bool):
    """Per output index ``o``, TFLite's RESIZE_BILINEAR taps along one axis:
    ``(lo, hi, w_lo, w_hi)``, the two input indices and their weights.

    float32 (``integer`` False): ``p = o * scale`` (``(o + .5) scale - .5``
    with half-pixel centers) in float32, ``lo = max(floor p, 0)``, ``hi =
    min(ceil p, in - 1)``, ``w_hi = p - lo``, ``w_lo = 1 - w_hi``, each one
    float32 operation as TFLite computes them.  int8: the same in Q10 with a
    rounded integer scale, C's truncating division, and int32 weights summing
    to 1024 (``w_hi`` may be negative near the border, as TFLite's)."""
    o = np.arange(out_size)
    if integer:
        num, den = (in_size - 1, out_size - 1) if align_corners and out_size > 1 else \
            (in_size, out_size)
        scale = ((1 << 10) * num + den // 2) // den
        p = o * scale + (scale // 2 - (1 << 9) if half_pixel_centers else 0)
        lo = np.maximum(np.trunc(p / 1024).astype(np.int64), 0)
        hi = np.minimum(np.trunc((p + 1023) / 1024).astype(np.int64), in_size - 1)
        w_hi = p - 1024 * lo
        return lo, hi, (1024 - w_hi).astype(np.int64), w_hi.astype(np.int64)
    f = np.float32
    if align_corners and out_size > 1:
        scale = f(in_size - 1) / f(out_size - 1)
    else:
        scale = f(in_size) / f(out_size)
    of = o.astype(np.float32)
    p = (of + f(0.5)) * scale - f(0.5) if half_pixel_centers else of * scale
    lo = np.maximum(np.floor(p).astype(np.int64), 0)
    hi = np.minimum(np.ceil(p).astype(np.int64), in_size - 1)
    w_hi = (p - lo.astype(np.float32)).astype(np.float32)
    return lo, hi, (f(1) - w_hi).astype(np.float32), w_hi


def resize_bilinear(x, size, *, align_corners: bool = False, half_pixel_centers: bool = False):
    """RESIZE_BILINEAR of NHWC ``x`` to ``size = (height, width)``: per output
    ``x[y0,x0] wy0 wx0 + x[y1,x0] wy1 wx0 + x[y0,x1] wy0 wx1 + x[y1,x1] wy1 wx1``
    added in that order (float32), or in int64 Q20 for int8, rounded half away
    from zero and cast without a clamp, as TFLite."""
    x = np.asarray(x)
    integer = x.dtype != np.float32
    kw = dict(align_corners=align_corners, half_pixel_centers=half_pixel_centers,
              integer=integer)
    y0, y1, wy0, wy1 = (a[None, :, None, None] for a in bilinear_taps(x.shape[1], size[0], **kw))
    x0, x1, wx0, wx1 = (a[None, None, :, None] for a in bilinear_taps(x.shape[2], size[1], **kw))
    rows0, rows1 = x[:, y0[0, :, 0, 0]], x[:, y1[0, :, 0, 0]]
    v00, v10 = rows0[:, :, x0[0, 0, :, 0]], rows1[:, :, x0[0, 0, :, 0]]
    v01, v11 = rows0[:, :, x1[0, 0, :, 0]], rows1[:, :, x1[0, 0, :, 0]]
    if not integer:
        return v00 * wy0 * wx0 + v10 * wy1 * wx0 + v01 * wy0 * wx1 + v11 * wy1 * wx1 + \
            np.float32(0.0)
    i64 = np.int64
    total = (v00.astype(i64) * wy0 * wx0 + v10.astype(i64) * wy1 * wx0
             + v01.astype(i64) * wy0 * wx1 + v11.astype(i64) * wy1 * wx1)
    rounded = total + np.where(total > 0, 1 << 19, -(1 << 19))
    out = np.trunc(rounded / float(1 << 20)).astype(i64)  # exact: |rounded| < 2**52
    return out.astype(x.dtype)


def gather(x, indices, *, axis: int, batch_dims: int = 0):
    """GATHER: ``x`` indexed along ``axis`` by ``indices`` (each in range, as
    TFLM checks), the first ``batch_dims`` axes of both walked together."""
    x, indices = np.asarray(x), np.asarray(indices)
    axis %= x.ndim
    bd = batch_dims + indices.ndim if batch_dims < 0 else batch_dims
    if indices.size and (indices.min() < 0 or indices.max() >= x.shape[axis]):
        bad = indices[(indices < 0) | (indices >= x.shape[axis])].reshape(-1)[0]
        raise IndexError(f"index {int(bad)} is out of range for axis {axis} of size "
                         f"{x.shape[axis]}")
    if bd == 0:
        return np.take(x, indices, axis=axis)
    batch = x.shape[:bd]
    xb = x.reshape((-1,) + x.shape[bd:])
    ib = indices.reshape((-1,) + indices.shape[bd:])
    out = np.stack([np.take(xb[k], ib[k], axis=axis - bd) for k in range(xb.shape[0])])
    return out.reshape(batch + out.shape[1:])


def gather_nd(x, indices):
    """GATHER_ND: each row ``r`` of ``indices`` (its last axis) selects
    ``x[r[0], ..., r[nd-1]]``, a slice of the remaining axes."""
    x, indices = np.asarray(x), np.asarray(indices)
    nd = indices.shape[-1]
    for k in range(nd):
        col = indices[..., k]
        if col.size and (col.min() < 0 or col.max() >= x.shape[k]):
            bad = col[(col < 0) | (col >= x.shape[k])].reshape(-1)[0]
            raise IndexError(f"index {int(bad)} is out of range for axis {k} of size "
                             f"{x.shape[k]}")
    return x[tuple(indices[..., k] for k in range(nd))]


def dynamic_update_slice(x, update, start):
    """DYNAMIC_UPDATE_SLICE: a copy of ``x`` with ``update`` at ``start``,
    each start clamped to ``[0, size - update size]``."""
    out = np.array(x, copy=True)
    update = np.asarray(update)
    begin = [min(max(0, int(s)), d - u) for s, d, u in zip(np.asarray(start).reshape(-1),
                                                          out.shape, update.shape)]
    out[tuple(slice(b, b + u) for b, u in zip(begin, update.shape))] = update
    return out
