"""dense's packed weights (aot.kernels.dense.intrin.pack_dense_weights): the
layout, the arithmetic the DSP helper builds on it, and when it applies.

The DSP path itself runs on the emulated Cortex-M4 in tests/kernels/test_arm_cpu.py
(slow); here the SMLAD/SXTB16 arithmetic is emulated in numpy, exactly as the
instructions compute it (16-bit halves, wrapping int32 sums)."""

from __future__ import annotations

import numpy as np
import pytest
from graphs import dense_graph

from aot.kernels import lower_group
from aot.kernels.dense.fuse import MAX_DEPTH, dense_requant_rows
from aot.kernels.dense.intrin import PACKED_BOUND, pack_dense_weights, packable
from aot.passes import annotations, optimize


def _halves(words: np.ndarray) -> np.ndarray:
    """The two signed halfwords of each uint32 word, low first."""
    return np.stack([(words & 0xFFFF).astype(np.uint16).view(np.int16),
                     (words >> 16).astype(np.uint16).view(np.int16)], axis=-1).astype(np.int64)


def _packed_dot(weights: np.ndarray, x: np.ndarray) -> np.ndarray:
    """What aot_dense_packed_s8 computes with the DSP extension: the pair
    words p, q of each input word, SMLAD(p, v) + SMLAD(q, SXTB16(v)) per
    packed weight word v, int32 sums, then (sum >> 8) + correction."""
    units, depth = weights.shape
    packed = pack_dense_weights(weights)
    rows = packed[:units * depth].reshape(units, depth)
    corrections = packed[units * depth:].view("<i4").astype(np.int64)
    x = x.astype(np.int64)
    p = np.stack([x[1::4] - 127, x[3::4] - 127], axis=-1)
    q = np.stack([256 * x[0::4] - x[1::4] + 127, 256 * x[2::4] - x[3::4] + 127], axis=-1)
    assert p.min() >= -32768 and q.min() >= -32768 and q.max() <= 32767  # int16 halves
    words = rows.view(np.uint8).reshape(units, depth // 4, 4).astype(np.uint32)
    v = words[..., 0] | words[..., 1] << 8 | words[..., 2] << 16 | words[..., 3] << 24
    even = np.stack([rows[:, 0::4], rows[:, 2::4]], axis=-1).astype(np.int64)  # SXTB16
    total = (_halves(v) * p).sum(axis=(1, 2)) + (even * q).sum(axis=(1, 2))
    wrapped = ((total + (1 << 31)) % (1 << 32)) - (1 << 31)  # the int32 accumulator
    return (wrapped >> 8) + corrections


@pytest.mark.parametrize("seed", range(4))
def test_the_packed_arithmetic_is_the_dot_product(seed):
    rng = np.random.default_rng(seed)
    w = rng.integers(-127, 128, (9, 64))
    w[0] = 127
    w[1] = -127
    w[2, 0::2] = -1  # every odd byte compensated
    assert packable(w)
    inputs = [rng.integers(-128, 128, 64), np.full(64, -128), np.full(64, 127),
              np.tile([-128, 127], 32), np.tile([127, -128], 32)]
    for x in inputs:
        assert (_packed_dot(w, x) == w.astype(np.int64) @ x).all()


def test_the_layout_keeps_int8_rows_then_one_int32_per_unit():
    w = np.array([[-1, 5, 3, -127, 0, 0, -128 + 1, 127]])
    packed = pack_dense_weights(w)
    assert packed.dtype == np.int8 and packed.size == 8 + 4
    # odd bytes store w[odd] - [w[even] < 0]
    assert packed[:8].tolist() == [-1, 4, 3, -127, 0, 0, -127, 126]
    assert packed[8:].view("<i4")[0] == 127 * (5 - 127 + 0 + 127)


def test_weights_that_do_not_fit_the_packed_form_are_refused():
    assert not packable(np.full((2, 8), -128))      # the compensated byte would wrap
    assert not packable(np.ones((2, 6)))            # depth not a multiple of four
    deep = np.full((1, 1 << 16), 127)              # 128 * 127 * 65536 passes 2^23
    assert 128 * np.abs(deep).sum() >= PACKED_BOUND and not packable(deep)
    assert packable(np.full((1, 256), 127))


@pytest.mark.parametrize("board, helper", [("qemu/mps2-an386", "aot_dense_packed_requant_s8("),
                                           ("qemu/mps3-an547", "aot_dense_s8("),
                                           ("qemu/mps2-an385", "aot_dense_s8(")])
def test_arm_cpu_packs_the_weights_helium_and_armv7m_keep_them(board, helper):
    """The Cortex-M4 default stores the weights packed (the plain int8 array
    is then not emitted) and, fused with the epilogue, reads the rows
    (m, kh, e, 2 (bias + k) per unit) instead of the bias; Helium's VMLADAVA
    reads plain int8 weights, so the arm_mve default keeps them, and so does
    a core without the DSP extension (Cortex-M3: decoding the pairs in C
    would cost more than it saves)."""
    ag = optimize(dense_graph(seed=2, depth=64, units=8, rows=1))
    k = lower_group(annotations(ag).groups[0], ag, board, name="k")
    assert helper in k.source
    sizes = sorted(c.data.size for c in k.constants)
    assert sizes == ([3 + 8, 8 * 64 + 4 * 8] if "packed" in helper else [8, 8 * 64])


class _Quant:
    wide = False
    output_offset = -5


def test_the_fused_rows_turn_the_packed_sums_into_twice_acc_plus_bias():
    """dense.fuse: x2 = (s >> 7) + 2 (bias + k) = 2 (x . w + bias), the
    input of aot_dw_requant's one-rounding form (whose identity with the
    reference's requantization tests/kernels/test_depthwise_fused.py checks)."""
    rng = np.random.default_rng(7)
    w = rng.integers(-127, 128, (6, 32))
    bias = rng.integers(-5000, 5000, 6)
    imm = (1 << 30) + 12345, 0, 0, 6  # m, k_lo, k_hi, e - 1
    rows = dense_requant_rows(w, bias, _Quant(), imm)
    assert rows[:3].tolist() == [imm[0], (1 << 6) + _Quant.output_offset * (1 << 7), 7]
    for x in (rng.integers(-128, 128, 32), np.full(32, -128), np.tile([127, -128], 16)):
        k = 127 * w[:, 1::2].sum(axis=1)
        s = 256 * (_packed_dot(w, x) - k)  # the helper's packed sums
        assert ((s >> 7) + rows[3:] == 2 * (w @ x + bias)).all()


def test_the_fused_rows_refuse_what_the_form_cannot_do():
    w = np.ones((4, 32), np.int64)
    ok = ((1 << 30) + 1, 0, 0, 6)
    assert dense_requant_rows(w, None, _Quant(), ok) is not None
    assert dense_requant_rows(np.ones((4, MAX_DEPTH + 4)), None, _Quant(), ok) is None
    assert dense_requant_rows(w, None, _Quant(), ((1 << 30) + 1, 0, 0, 21)) is None  # e 22
    assert dense_requant_rows(w, None, _Quant(), (1 << 30, 0, 0, 6)) is None  # m not above 2^30
    assert dense_requant_rows(w, np.full(4, 1 << 30), _Quant(), ok) is None  # |acc + bias|
    assert dense_requant_rows(w, None, _Quant(), None) is None  # no per-tensor immediates
