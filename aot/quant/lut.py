"""int16 look-up tables with linear interpolation (TFLM's ``gen_lut`` and
``generic_int16_table_lookup``), used by the int16 softmax.

A table samples ``func`` at 512 steps over [input_min, input_max] plus one
extra entry for the last slope.  Each entry is corrected by half the error
of linear interpolation at the midpoint of its step.  Everything is float32
arithmetic with libm's ``expf``, as TFLM computes it, so tables match bit for
bit on the host.
"""

from __future__ import annotations

import functools

import numpy as np

from aot.quant.arith import round_half_away
from aot.quant.libm import expf

F = np.float32


def gen_lut_int16(func, input_min: float, input_max: float, output_min: float,
                  output_max: float) -> np.ndarray:
    """``gen_lut<float, int16_t, int16_t>``: a 513-entry int16 table of ``func``."""
    nb_steps = 512
    step = (F(input_max) - F(input_min)) / F(nb_steps)
    half_step = step / F(2)
    scale = F(65536) / (F(output_max) - F(output_min))
    lut = np.empty(nb_steps + 1, dtype=np.int64)
    for i in range(nb_steps):
        val = func(F(input_min) + F(i) * step)
        val_mid = func(F(input_min) + F(i) * step + half_step)
        val_next = func(F(input_min) + F(i + 1) * step)
        sample = round_half_away(F(val * scale))
        rounded = round_half_away(F(val * scale))
        mid_interp = round_half_away(F((F(val_next * scale) + rounded) / F(2)))
        mid = round_half_away(F(val_mid * scale))
        bias = round_half_away(F(F(mid_interp - mid) / F(2)))
        lut[i] = min(max(F(sample - bias), F(-32768)), F(32767))
    lut[nb_steps] = min(max(round_half_away(F(func(F(input_max)) * scale)), F(-32768)), F(32767))
    return lut


@functools.cache
def exp_lut_int16() -> np.ndarray:
    """exp on [-10, 0] into [-1, 1) (Q0.15)."""
    return gen_lut_int16(expf, -10.0, 0.0, -1.0, 1.0)


@functools.cache
def one_over_one_plus_x_lut_int16() -> np.ndarray:
    """1 / (1 + x) on [0, 1] into [-1, 1) (Q0.15)."""
    return gen_lut_int16(lambda v: F(F(1) / (F(1) + v)), 0.0, 1.0, -1.0, 1.0)


def lookup_int16(value, lut: np.ndarray):
    """``generic_int16_table_lookup``: 9-bit index plus 7-bit interpolation."""
    value = np.asarray(value, dtype=np.int64)
    index = 256 + (value >> 7)
    offset = value & 0x7F
    base = lut[index]
    slope = lut[index + 1] - base
    return base + ((slope * offset + 64) >> 7)
