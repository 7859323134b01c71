"""Shape and padding helpers shared by the windowed kernels (conv, pool)."""

from __future__ import annotations

import numpy as np

from aot.quant import arith as quant
from aot.quant.params import f32


def pair(v) -> tuple[int, int]:
    """``3`` -> ``(3, 3)``; ``(h, w)`` stays."""
    if np.ndim(v) == 0:
        return int(v), int(v)
    a, b = v
    return int(a), int(b)


def same_valid_pads(in_size: int, k: int, stride: int, dilation: int,
                    padding) -> tuple[int, int, int]:
    """``(out_size, pad_before, pad_after)`` for one spatial axis.

    SAME: ``out = ceil(in / stride)``, total padding
    ``max(0, (out - 1) * stride + eff_k - in)`` with ``pad_before = total // 2``
    (TFLM's ``ComputePaddingHeightWidth``; the odd pixel goes after).
    VALID: ``out = (in - eff_k) // stride + 1``, no padding.
    Explicit ``(before, after)`` pads give ``out = (in + pads - eff_k) // stride + 1``.
    """
    eff = (k - 1) * dilation + 1
    if isinstance(padding, str):
        mode = padding.upper()
        if mode == "SAME":
            out = (in_size + stride - 1) // stride
            total = max(0, (out - 1) * stride + eff - in_size)
            return out, total // 2, total - total // 2
        if mode == "VALID":
            return (in_size - eff) // stride + 1, 0, 0
        raise ValueError(f"padding must be SAME, VALID or explicit pads, got {padding!r}")
    before, after = (int(p) for p in padding)
    return (in_size + before + after - eff) // stride + 1, before, after


def spatial_pads(x_shape, kh, kw, stride, dilation, padding):
    """Output size and pads of an NHWC input; ``padding`` may be a string or
    ``((top, bottom), (left, right))``."""
    sh, sw = pair(stride)
    dh, dw = pair(dilation)
    if isinstance(padding, str):
        ph = pw = padding
    else:
        ph, pw = padding
    oh, pt, pb = same_valid_pads(x_shape[1], kh, sh, dh, ph)
    ow, pl, pr = same_valid_pads(x_shape[2], kw, sw, dw, pw)
    return (oh, ow), ((pt, pb), (pl, pr))


def windows(x, kh, kw, stride, dilation, out_hw, pads, fill):
    """Gather the receptive fields of an NHWC input: ``[N, OH, OW, KH, KW, C]``.

    Positions outside the input read ``fill`` (the zero point for integer
    convolutions, so they contribute nothing after the offset is applied).
    """
    sh, sw = pair(stride)
    dh, dw = pair(dilation)
    oh, ow = out_hw
    (pt, pb), (pl, pr) = pads
    need_h = (oh - 1) * sh + (kh - 1) * dh + 1
    need_w = (ow - 1) * sw + (kw - 1) * dw + 1
    extra_h = max(0, need_h - (x.shape[1] + pt))
    extra_w = max(0, need_w - (x.shape[2] + pl))
    xp = np.pad(x, ((0, 0), (pt, extra_h), (pl, extra_w), (0, 0)), constant_values=fill)
    out = np.empty((x.shape[0], oh, ow, kh, kw, x.shape[3]), dtype=x.dtype)
    for i in range(kh):
        for j in range(kw):
            out[:, :, :, i, j, :] = xp[:, i * dh: i * dh + (oh - 1) * sh + 1: sh,
                                       j * dw: j * dw + (ow - 1) * sw + 1: sw, :]
    return out


def requantize(acc, x_scale, w_scale, y_scale, channels: int, wide: bool):
    """Requantize per-channel accumulators (last axis) as TFLM's conv/FC do.

    The effective scale per channel is ``double(x_scale) * double(w_scale[c]) /
    double(y_scale)``, turned into (multiplier, shift) by QuantizeMultiplier.
    ``wide`` selects the int64-accumulator variant (int16x8 with int64 bias).
    """
    ws = np.broadcast_to(np.asarray(w_scale, dtype=np.float32).reshape(-1), (channels,))
    eff = [f32(x_scale) * float(s) / f32(y_scale) for s in ws]
    mult, shift = quant.quantize_multipliers(eff)
    if wide:
        return quant.multiply_by_quantized_multiplier_int64(acc, mult, shift)
    return quant.multiply_by_quantized_multiplier(quant.wrap_int32(acc), mult, shift)
