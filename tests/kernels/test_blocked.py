"""The blocked int8 intrinsic (conv2d/include/aot_block.h, aot.kernels.conv2d.blocked):
P pixels x O channels per step, against numpy on random shapes, and convolutions
scheduled by the auto tuner's ``block`` sketch against the reference interpreter
(portable path on the host, the SXTB16/SMLAD path on an emulated Cortex-M4)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest
from graphs import conv_graph
from kernel_checks import SANITIZE, all_values, seeded_inputs

from aot.kernels import lower_group, support_files
from aot.kernels.conv2d.blocked import (BLOCK_SHAPES, WIDE_INPUT_MAX, block_s8_intrin,
                                        pack_wide, pack_wide_pairs, wide_length)
from aot.kernels.conv2d.fuse import requant_rows
from aot.passes import annotations, optimize
from aot.quant.arith import multiply_by_quantized_multiplier
from aot.te.schedule import ScheduleError
from aot.tune.auto.sketch import apply_block

ARM = "c -keys=arm_cpu,cpu -mcpu=cortex-m4"

_CASE = """
static void case{i}(void) {{
  static const int8_t x[{xn}] = {{{x}}};
  static const int8_t w[{wn}] AOT_ALIGNED(8) = {{{w}}};
  int32_t acc[{an}];
  int32_t j;
  aot_block_reset_s32(acc, {aps}, {npix}, {nch});
  for (j = 0; j < {an}; ++j) if (j % {aps} >= {nch}) acc[j] = {seed};
  aot_block_row_s8(acc, {aps}, x, {xps}, w, {wos}, {npix}, {nch}, {p}, {o}, {k}, {steps},
                   {xw}, {ww});
  for (j = 0; j < {an}; ++j) printf("%ld\\n", (long)acc[j]);
}}
"""


def _host_cases(n: int, seed: int):
    """Random shapes of every block, some with several channel blocks per call,
    pre-widened weights (packed as the layout rule packs them) or input."""
    rng = np.random.default_rng(seed)
    cases = []
    for i in range(n):
        p, o = BLOCK_SHAPES[i % len(BLOCK_SHAPES)]
        npix = int(rng.integers(1, 9))
        nch = o * int(rng.integers(1, 4))
        k = int(rng.integers(1, 40))
        xw, ww = (i // len(BLOCK_SHAPES)) % 2, (i // (2 * len(BLOCK_SHAPES))) % 2
        if ww and o == 2 and i % 3 == 0:   # wide pairs: whole chunks of 4
            k, ww = 4 * max(1, k // 4), 2
        if xw and npix * wide_length(k) > WIDE_INPUT_MAX:
            xw = 0
        xps = k + int(rng.integers(0, 5))
        wos = 2 * ((k + 1) // 2) + 2 * int(rng.integers(0, 3))   # even: words stay aligned
        aps = nch + int(rng.integers(0, 3))
        xa = rng.integers(-128, 128, size=(npix - 1) * xps + k, dtype=np.int64)
        wa = rng.integers(-128, 128, size=(nch, wos), dtype=np.int64)
        if ww == 2:   # pairs of rows 2 * wos values apart, their chunks alternating
            stored = np.zeros((nch // 2, 4 * wos), np.int8)
            stored[:, :4 * k] = pack_wide_pairs(wa[:, :k], k).reshape(nch // 2, 4 * k)
        elif ww:
            packed = pack_wide(wa[:, :k], k).reshape(nch, 2 * k)
            stored = np.zeros((nch, 2 * wos), np.int8)
            stored[:, :2 * k] = packed
        else:
            stored = wa.astype(np.int8)
        cases.append(dict(i=i, p=p, o=o, npix=npix, nch=nch, k=k, xps=xps, wos=wos, aps=aps,
                          an=npix * aps, xn=len(xa), wn=stored.size, steps=1 + i % 2,
                          xw=xw, ww=ww, seed=int(rng.integers(-99, 99)), xa=xa, wa=wa,
                          x=", ".join(map(str, xa)),
                          w=", ".join(map(str, stored.reshape(-1)))))
    return cases


def _expected(c) -> np.ndarray:
    acc = np.full((c["npix"], c["aps"]), c["seed"], dtype=np.int64)
    for p in range(c["npix"]):
        xs = c["xa"][p * c["xps"]:p * c["xps"] + c["k"]]
        for o in range(c["nch"]):
            acc[p, o] = int(xs @ c["wa"][o, :c["k"]])
    return acc.reshape(-1)


def test_pack_wide_orders_each_chunk_as_sxtb16_pairs_it():
    data = np.arange(-3, 7, dtype=np.int8)            # one row of 10: two chunks, a tail of 2
    got = pack_wide(data, 10).view("<i2")
    assert got.tolist() == [-3, -1, -2, 0, 1, 3, 2, 4, 5, 6]


def test_pack_wide_pairs_alternates_the_chunks_of_two_channels():
    data = np.arange(16, dtype=np.int8).reshape(2, 8)   # two channels of 8 values
    got = pack_wide_pairs(data, 8).view("<i2")
    assert got.tolist() == [0, 2, 1, 3, 8, 10, 9, 11, 4, 6, 5, 7, 12, 14, 13, 15]
    with pytest.raises(ScheduleError, match="wide pairs need rows of a multiple of 4"):
        pack_wide_pairs(np.zeros((2, 6), np.int8), 6)


@pytest.mark.slow
def test_the_blocked_helper_computes_every_block_shape_on_random_shapes():
    cases = _host_cases(56, 5)
    assert any(c["ww"] == 2 for c in cases)
    src = ["#include <stdio.h>", '#include "aot_block.h"']
    src += [_CASE.format(**c) for c in cases]
    src.append("int main(void) {" + "".join(f" case{c['i']}();" for c in cases)
               + " return 0; }")
    got = _run_host(src)
    want = np.concatenate([_expected(c) for c in cases])
    np.testing.assert_array_equal(got, want)


def _run_host(src: list[str]) -> np.ndarray:
    """Compile and run a host program (under the sanitizers); its printed integers."""
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        for name, text in support_files().items():
            (d / name).write_text(text)
        (d / "main.c").write_text("\n".join(src))
        proc = subprocess.run(["gcc", *SANITIZE, "-I", str(d), "-o", str(d / "exe"),
                               str(d / "main.c")], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
        out = subprocess.run([str(d / "exe")], capture_output=True, text=True, env=env,
                             check=True).stdout.split()
    return np.array([int(v) for v in out], dtype=np.int64)


_FUSED_CASE = """
static void fcase{i}(void) {{
  static const int8_t x[{xn}] = {{{x}}};
  static const int8_t w[{wn}] AOT_ALIGNED(8) = {{{w}}};
  static const int32_t rows[{rn}] = {{{rows}}};
  int8_t y[{yn}];
  int32_t j;
  for (j = 0; j < {yn}; ++j) y[j] = {seed};
  aot_block_requant_s8(y, {yps}, x, {xps}, w, {wos}, rows, {npix}, {nch}, {p}, {o}, {k},
                       {steps}, {xw}, {ww}, {lo}, {hi});
  for (j = 0; j < {yn}; ++j) printf("%d\\n", (int)y[j]);
}}
"""


def _fused_cases(n: int, seed: int):
    """:func:`_host_cases` with the fused epilogue: per channel rows from
    :func:`aot.kernels.conv2d.fuse.requant_rows` (multipliers at both ends of
    their range, right shifts 1-20, offsets and clamps at the int8 limits),
    the first pixel's sums moved by the bias onto exact rounding ties
    (``(2j + 1) * 2^(e + 1)`` with ``m = 3 * 2^29``), and the expected bytes
    from TFLite's requantization (``multiply_by_quantized_multiplier``)."""
    rng = np.random.default_rng(seed)
    out = []
    for c in _host_cases(n, seed):
        nch, npix, k = c["nch"], c["npix"], c["k"]
        acc = np.array([[int(c["xa"][p * c["xps"]:p * c["xps"] + k] @ c["wa"][o, :k])
                         for o in range(nch)] for p in range(npix)], np.int64)
        m = rng.choice([2**30 + 1, 2**31 - 1, 3 * 2**29, 1518500250], nch).astype(np.int64)
        e = rng.integers(1, 21, nch).astype(np.int64)
        off = int(rng.choice([-128, 127, 0, int(rng.integers(-128, 128))]))
        lo, hi = [(-128, 127), (-128, 0), (off, 127), (-20, 30)][c["i"] % 4]
        lo, hi = min(lo, hi), max(lo, hi)
        bias = rng.integers(-2**14, 2**14, nch).astype(np.int64)
        tie = m == 3 * 2**29
        odd = 2 * rng.integers(-4, 4, nch) + 1
        bias[tie] = (odd * (1 << (e + 1)))[tie] - acc[0, tie]
        reach = 128 * np.abs(c["wa"][:, :k]).sum(axis=1) + np.abs(bias)
        rows = requant_rows(reach, bias, m, -e, off)
        assert rows is not None
        x = acc + bias
        want = np.asarray(multiply_by_quantized_multiplier(
            x.astype(np.int32), np.broadcast_to(m, x.shape).astype(np.int32),
            np.broadcast_to(-e, x.shape).astype(np.int32))).astype(np.int64) + off
        yps = nch + int(rng.integers(0, 3))
        y = np.full((npix, yps), c["seed"], np.int64)
        y[:, :nch] = np.clip(want, lo, hi)
        out.append(dict(c, rows=", ".join(map(str, rows)), rn=len(rows), yps=yps,
                        yn=npix * yps, lo=lo, hi=hi, want=y.reshape(-1)))
    return out


@pytest.mark.slow
def test_the_fused_blocked_helper_requantizes_every_block_shape_as_tflite_does():
    cases = _fused_cases(64, 11)
    src = ["#include <stdio.h>", '#include "aot_block.h"']
    src += [_FUSED_CASE.format(**c) for c in cases]
    src.append("int main(void) {" + "".join(f" fcase{c['i']}();" for c in cases)
               + " return 0; }")
    got = _run_host(src)
    np.testing.assert_array_equal(got, np.concatenate([c["want"] for c in cases]))


def test_block_shapes_outside_the_family_are_refused():
    with pytest.raises(ScheduleError, match="no blocked helper for 3 x 3"):
        block_s8_intrin(6, 3, 3, 3, 16)
    with pytest.raises(ScheduleError, match="steps must be 1 or 2"):
        block_s8_intrin(4, 2, 2, 2, 16, steps=4)
    with pytest.raises(ScheduleError, match="do not fit the widening buffer"):
        block_s8_intrin(40, 4, 2, 2, 32, wide_x=True)
    with pytest.raises(ScheduleError, match="wide weights need an even number"):
        block_s8_intrin(4, 4, 2, 2, 15, wide_w=True)


#: (graph variant, block annotations): strides, padding, dilation, a row not
#: divisible by the block (a tail pixel), folded kernel columns, one channel,
#: whole rows per call with and without the widened input, wide weights.
BLOCKED = [
    ({"cin": 8, "cout": 4, "hw": (5, 7)},
     {"block": "2x2", "order": "channels_outer", "steps": 2, "requant_row": True}),
    ({"cin": 8, "cout": 8, "hw": (6, 8), "strides": (2, 2)},
     {"block": "2x4", "order": "pixels_outer", "weights": "wide", "requant_row": False}),
    ({"cin": 5, "cout": 6, "hw": (7, 9), "k": (3, 2), "dilation": (1, 2)},
     {"block": "4x2", "order": "row", "unroll_taps": True}),
    ({"cin": 6, "cout": 4, "hw": (6, 6), "k": (2, 3)},
     {"block": "4x1", "order": "row_widened", "fold_kw": True, "weights": "wide", "steps": 2}),
    ({"cin": 1, "cout": 8, "hw": (9, 10), "k": (4, 4), "strides": (2, 2),
      "padding": (1, 1, 2, 1)},
     {"block": "1x4", "order": "channels_outer", "fold_kw": True}),
    ({"cin": 16, "cout": 2, "hw": (3, 4), "k": (1, 1), "padding": (0, 0, 0, 0)},
     {"block": "2x1", "order": "row_widened", "weights": "wide", "steps": 2}),
    ({"cin": 10, "cout": 4, "hw": (5, 5), "k": (1, 1), "padding": (0, 0, 0, 0),
      "residual": True},
     {"block": "2x2", "order": "row", "weights": "wide"}),
    # the fused epilogue: 3x2 and 2x2 blocks of wide operands (the assembly
    # blocks on the M4: K of 16, and 24 with the kernel columns folded), and
    # plain operands with a stride, an odd K and a tail of pixels
    ({"cin": 16, "cout": 6, "hw": (4, 7), "k": (1, 1), "padding": (0, 0, 0, 0)},
     {"block": "3x2", "order": "row_widened", "weights": "wide", "requant_row": True,
      "epilogue": "fused"}),
    ({"cin": 8, "cout": 4, "hw": (5, 8), "k": (1, 3), "padding": (0, 0, 1, 1)},
     {"block": "2x2", "order": "row_widened", "fold_kw": True, "weights": "wide",
      "requant_row": True, "epilogue": "fused"}),
    ({"cin": 11, "cout": 8, "hw": (5, 10), "k": (1, 1), "strides": (2, 2),
      "padding": (0, 0, 0, 0)},
     {"block": "4x2", "order": "row", "steps": 2, "requant_row": True, "epilogue": "fused"}),
    # the patch order: whole im2col patches per block (fused: 3x2 blocks in
    # assembly over K = 16; 27 values of plain weights; one kernel column)
    ({"cin": 1, "cout": 8, "hw": (9, 10), "k": (4, 4), "strides": (2, 2),
      "padding": (1, 1, 2, 1)},
     {"block": "3x2", "order": "patch", "fold_kw": True, "weights": "wide",
      "requant_row": True, "epilogue": "fused"}),
    ({"cin": 3, "cout": 4, "hw": (7, 7), "k": (3, 3), "strides": (2, 2)},
     {"block": "2x2", "order": "patch", "fold_kw": True, "requant_row": True}),
    ({"cin": 4, "cout": 4, "hw": (6, 5), "k": (3, 1)},
     {"block": "4x1", "order": "patch", "weights": "wide", "steps": 2}),
    # 27 values padded to 28 for wide pairs, rows of 43 patches in two chunks (36 + 7)
    ({"cin": 3, "cout": 4, "hw": (5, 85), "k": (3, 3), "strides": (2, 2)},
     {"block": "3x2", "order": "patch", "fold_kw": True, "weights": "wide_pairs",
      "requant_row": True, "epilogue": "fused"}),
    # wide pairs (one LDM per step of the assembly blocks), fused and not
    ({"cin": 16, "cout": 6, "hw": (3, 5), "k": (1, 1), "padding": (0, 0, 0, 0)},
     {"block": "3x2", "order": "row_widened", "weights": "wide_pairs", "requant_row": True,
      "epilogue": "fused"}),
    ({"cin": 12, "cout": 4, "hw": (4, 3), "k": (1, 1), "padding": (0, 0, 0, 0)},
     {"block": "2x2", "order": "row", "weights": "wide_pairs", "steps": 2}),
    # 256 channels: 3-pixel blocks reach the first and third pixel from the middle
    ({"cin": 256, "cout": 4, "hw": (2, 3), "k": (1, 1), "padding": (0, 0, 0, 0)},
     {"block": "3x2", "order": "row_widened", "weights": "wide_pairs", "requant_row": True,
      "epilogue": "fused"}),
    # an activation's clamp: the blocks in assembly, the epilogue in C
    ({"cin": 12, "cout": 4, "hw": (3, 5), "k": (1, 1), "padding": (0, 0, 0, 0),
      "activation": "relu6"},
     {"block": "3x2", "order": "row_widened", "weights": "wide", "requant_row": True,
      "epilogue": "fused"}),
]


def _blocked_cases(prefix: str, seed: int):
    cases = []
    for n, (variant, cfg) in enumerate(BLOCKED):
        ag = optimize(conv_graph("conv2d", seed=seed + n, **variant))
        values = all_values(ag, seeded_inputs(ag, seed + n))
        tensors = {t.name: t for t in ag.tensors()}
        (group,) = [g for g in annotations(ag).groups if g.kind != "view"]
        kernel = lower_group(group, ag, ARM, name=f"{prefix}{n}",
                             schedule=lambda s, final, stages, c=cfg: apply_block(
                                 s, final, stages, c))
        fused = cfg.get("epilogue") == "fused"
        call = ("aot_block_" + ("patch_" if cfg["order"] == "patch" else "")
                + ("requant_s8(" if fused else "row_s8("))
        assert call in kernel.source
        assert not fused or "aot_requant_row_s8(" not in kernel.source
        before = [values[id(tensors[p.tensor])] if p.role == "input" else None
                  for p in kernel.params]
        after = [values[id(tensors[p.tensor])] if p.role == "output" else None
                 for p in kernel.params]
        cases.append((kernel, f"{prefix}{n}", before, after))
    return cases


@pytest.mark.slow
def test_blocked_convolutions_match_the_reference_on_the_host():
    from kernel_checks import run_kernel
    for kernel, name, before, after in _blocked_cases("blk", 31):
        (got,) = run_kernel(kernel, [b for b in before if b is not None])
        want = next(a for a in after if a is not None)
        np.testing.assert_array_equal(got, want.reshape(-1), err_msg=name)


def test_pixel_blocks_must_divide_the_row():
    from aot.kernels.template import ConfigError
    ag = optimize(conv_graph("conv2d", seed=1, cin=8, cout=4, hw=(5, 5)))
    (group,) = [g for g in annotations(ag).groups if g.kind != "view"]
    with pytest.raises(ConfigError, match="2 pixels do not divide the row of 5"):
        lower_group(group, ag, ARM, name="k", schedule=lambda s, f, st: apply_block(
            s, f, st, {"block": "2x2", "order": "pixels_outer"}))


def test_the_patch_chunks_are_the_same_in_python_and_in_c():
    from aot.kernels.conv2d.blocked import patch_chunk, patch_length
    shapes = [(npix, p, k, ww) for npix in (1, 5, 43, 48, 200) for p in (1, 2, 3, 4)
              for k in (4, 27, 40, 100, 1000) for ww in (0, 1)]
    src = ["#include <stdio.h>", '#include "aot_block.h"', "int main(void) {"]
    src += [f'  printf("%d\\n", (int)aot_block_patch_chunk({n}, {p}, '
            f'aot_block_patch_len({k}, {ww})));' for n, p, k, ww in shapes]
    src.append("  return 0;\n}")
    got = _run_host(src)
    assert got.tolist() == [patch_chunk(n, p, patch_length(k, ww)) for n, p, k, ww in shapes]
    assert patch_chunk(43, 3, patch_length(27, 1)) == 36


def test_the_patch_order_folds_the_kernel_columns():
    from aot.kernels.template import ConfigError
    ag = optimize(conv_graph("conv2d", seed=1, cin=2, cout=4, hw=(5, 5)))   # 3x3 taps
    (group,) = [g for g in annotations(ag).groups if g.kind != "view"]
    for cfg in ({"fold_kw": False}, {"fold_kw": True, "unroll_taps": True}):
        with pytest.raises(ConfigError, match="order patch folds the kernel columns"):
            lower_group(group, ag, ARM, name="k", schedule=lambda s, f, st, c=cfg: apply_block(
                s, f, st, {**c, "block": "2x2", "order": "patch"}))


def test_the_fused_epilogue_needs_one_reduction_call_per_row():
    from aot.kernels.template import ConfigError
    ag = optimize(conv_graph("conv2d", seed=1, cin=8, cout=4, hw=(5, 5)))   # 3x3 taps
    (group,) = [g for g in annotations(ag).groups if g.kind != "view"]
    for cfg in ({"block": "2x2", "order": "row", "fold_kw": True},
                {"block": "2x2", "order": "channels_outer"}):
        with pytest.raises(ConfigError, match="one reduction call per row"):
            lower_group(group, ag, ARM, name="k", schedule=lambda s, f, st, c=cfg: apply_block(
                s, f, st, {**c, "requant_row": True, "epilogue": "fused"}))


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("qemu-system-arm") is None, reason="needs qemu-system-arm")
def test_blocked_convolutions_are_bit_exact_on_an_emulated_cortex_m4(tmp_path):
    import m4_firmware
    cases = _blocked_cases("blk", 37)
    assert m4_firmware.check_on_qemu(cases, tmp_path) == len(cases)


def test_a_packed_constant_must_not_be_read_by_the_loop_nest():
    from aot.kernels import KernelError
    from aot.kernels.conv2d.blocked import weight_tensor
    ag = optimize(conv_graph("conv2d", seed=2, cin=4, cout=4, hw=(4, 4)))
    (group,) = [g for g in annotations(ag).groups if g.kind != "view"]

    def packs_only(s, final, stages):   # packs the weights but keeps the plain loops
        s.store_constant_as(weight_tensor(stages["acc"]), lambda d: pack_wide(d, 4))
    with pytest.raises(KernelError, match="packed layout but the loop nest reads it"):
        lower_group(group, ag, ARM, name="k", schedule=packs_only)

    def packs_a_stage(s, final, stages):
        s.store_constant_as(stages["acc"], lambda d: d)
    with pytest.raises(ScheduleError, match="is computed, not a constant"):
        lower_group(group, ag, ARM, name="k", schedule=packs_a_stage)
