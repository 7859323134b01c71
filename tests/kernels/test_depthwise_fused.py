"""The depthwise row helper fused with its requantizing epilogue
(aot.kernels.depthwise_conv2d.fuse, on aot.kernels.conv2d.fuse's rows).

The fused requantization's identity against TFLM's two-rounding arithmetic
(host C under sanitizers), the rewrite of the two row calls into one, the
cases where it must not fuse, and the kernels bit for bit on the host.
The DSP (SMMLAR) and Helium paths run in the slow QEMU tests of
test_arm_cpu.py and test_arm_mve.py (every depthwise case and model).
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from support.host_c import assert_no_mismatches
from graphs import conv_graph
from kernel_checks import DepthwiseFusion, check_graph, seeded_inputs

from aot.kernels import lower_group, support_files
from aot.kernels.conv2d import fuse
from aot.kernels.depthwise_conv2d import fuse as dw_fuse
from aot.kernels.registry import TEMPLATES
from aot.passes import annotations, optimize
from aot.quant.arith import multiply_by_quantized_multiplier
from aot.tir import expr as E
from aot.tir import stmt as S
from aot.tir.functor import all_nodes

ARM = "qemu/mps2-an386"


def _identity_batch(rng, n):
    """Channels of random rows and accumulators inside the rows' bound, with
    the extremes: |acc + bias| up to just below 2^30, m at both ends, right
    shifts 1..31 (the offset folded into kh past a shift of 21 as well),
    channels whose rows are refused left out."""
    m = rng.integers(2**30 + 1, 2**31, n, dtype=np.int64)
    m[:4] = [2**30 + 1, 2**31 - 1, 2**30 + 1, 2**31 - 1]
    e = rng.integers(1, 32, n, dtype=np.int64)
    e[n // 2:] = rng.integers(1, 24, n - n // 2)
    e[:8] = [1, 21, 21, 1, 22, 22, 23, 31]
    off = rng.integers(-128, 128, n, dtype=np.int64)
    off[4:8] = [-128, 127, -128, 0]
    bias = rng.integers(-2**29, 2**29, n, dtype=np.int64)
    bias[n // 2:] = rng.integers(-20000, 20000, n - n // 2)
    reach = 2**30 - 1 - np.abs(bias)
    reach[1::3] = rng.integers(1, 2**22, len(reach[1::3]))  # small layers, large shifts
    rows = [fuse.requant_rows(reach[i:i + 1] + abs(bias[i]), bias[i:i + 1], m[i], -e[i], off[i])
            for i in range(n)]
    kept = np.array([r is not None for r in rows])
    assert kept[:8].all() and (e[kept] >= 22).sum() > n // 10
    rows = np.array([fuse.row_of(r, 0) for r in rows if r is not None])
    m, e, off, bias, reach = (a[kept] for a in (m, e, off, bias, reach))
    acc = rng.integers(-reach, reach + 1)
    acc[:8] = [reach[0], -reach[1], 0, -1, 1, reach[5], -reach[6], reach[7]]
    x = acc + bias
    assert (np.abs(x) < 2**30).all()
    want = np.asarray(multiply_by_quantized_multiplier(
        x.astype(np.int32), m.astype(np.int32), (-e).astype(np.int32))).astype(np.int64) + off
    return acc, rows, want


@pytest.mark.slow
def test_fused_requantization_equals_the_reference(tmp_path):
    """aot_dw_requant (SMMLAR form, rows (2*bias, m, kh, e)) equals TFLM's
    MultiplyByQuantizedMultiplier plus the output offset for every
    accumulator the rows allow, compiled for the host with sanitizers."""
    acc, rows, want = _identity_batch(np.random.default_rng(7), 4000)
    for name, text in support_files(None).items():
        (tmp_path / name).write_text(text)

    def arr(name, values):
        return f"static const int32_t {name}[{len(values)}] = {{{', '.join(map(str, values))}}};"
    src = "\n".join([
        '#include "aot_kernel_fixedpoint.h"', "#include <stdio.h>",
        arr("acc", acc.tolist()), arr("rows", rows.reshape(-1).tolist()),
        arr("want", want.tolist()),
        "int main(void) {", "  int bad = 0;",
        f"  for (int i = 0; i < {len(acc)}; ++i) {{",
        "    const int32_t* r = rows + 4 * i;",
        "    if (aot_dw_requant(acc[i], r[0], r[1], r[2], r[3]) != want[i]) { ++bad; }",
        "  }", '  printf("%d\\n", bad);', "  return bad != 0;", "}"])
    assert_no_mismatches(tmp_path, src)


@pytest.mark.parametrize("m, shift, bias, offset, why", [
    (2**30, -3, 0, 3, "multiplier not above 2^30"),
    (2**30 + 5, 0, 0, 3, "no right shift"),
    (2**30 + 5, -32, 0, 3, "right shift past 31"),
    (2**30 + 5, -3, 2**30 - 100, 3, "|acc + bias| can reach 2^30"),
    (2**30 + 5, -30, 0, 3, "kh = 2^29 + 3 * 2^30 is past int32"),
    (2**31 - 1, -25, 2**30 - 200000, -33, "kh plus x*m/2^31 can pass int32"),
])
def test_rows_are_refused_outside_the_identity(m, shift, bias, offset, why):
    w = np.full((3, 3, 1), 127, np.int64)
    assert fuse.fused_requant_rows(w, np.array([bias]), m, shift, offset) is None, why
    assert fuse.fused_requant_rows(w, np.array([0]), 2**30 + 5, -3, offset) is not None


def test_rows_fold_the_offset_past_a_shift_of_21():
    """VWW's layers 21 and 23: a right shift of 22 and an output offset of
    -128, where the one-rounding table keeps the offset apart; the fused
    rows fold it into kh = 2^21 - 128 * 2^22."""
    w = np.full((3, 3, 1), 127, np.int64)
    rows = fuse.fused_requant_rows(w, np.array([-5000]), 2**31 - 7, -22, -128)
    assert fuse.row_of(rows, 0) == (-10000, 2**31 - 7, 2**21 - 2**29, 22)


def test_the_rewrite_fuses_each_row_pair_and_drops_the_accumulators():
    """Before: an accumulator row call and its epilogue per output row, through
    a scratch row and the bias and table constants; after: one fused call per
    row reading the rows constant, no accumulator buffer, no bias or table."""
    g = conv_graph("depthwise_conv2d", seed=3, cin=8)
    ag = optimize(g)
    k = lower_group(annotations(ag).groups[0], ag, ARM, name="k")
    assert k.source.count("aot_depthwise_requant_s8(") == 3  # top, interior loop, bottom
    assert "aot_depthwise_s8(" not in k.source and "aot_requant_row_s8(" not in k.source
    assert "int32_t acc[" not in k.source
    assert [c.name.split("_", 2)[-1] for c in k.constants] == ["c0", "c2"]
    assert k.constants[1].data.shape == (32,)  # (2*bias, m, kh, e) per channel


def _statements(stmt):
    return [n for n in all_nodes(stmt) if isinstance(n, S.Stmt)]


def _call(name, *args):
    return S.Evaluate(E.Call("int32", name, args, "extern"))


def _pair_func(reader=False):
    """A depthwise row pair on hand-made buffers; ``reader``: a store reads the
    accumulator row afterwards."""
    acc = S.Buffer("acc", "int32", (8,), scope="local")
    x = S.Buffer("x", "int8", (64,))
    w = S.Buffer("w", "int8", (72,))
    b = S.Buffer("b", "int32", (8,))
    t = S.Buffer("t", "int32", (32,))
    rows = S.Buffer("rows", "int32", (32,))
    y = S.Buffer("y", "int8", (8,))
    ptr = [E.AccessPtr(buf, E.const(0), "r") for buf in (acc, x, w, b, t, y)]
    c = E.const
    body = [_call(dw_fuse.ACC_CALL, ptr[0], c(8), ptr[1], c(24), c(8), ptr[2], c(1), c(8), c(3),
                  c(3), c(1), c(1), c(1)),
            _call(fuse.EPILOGUE_CALL, ptr[5], c(8), ptr[0], c(8), ptr[3], ptr[4], c(1), c(8),
                  c(-128), c(127))]
    if reader:
        body.append(S.Store(y, E.Cast("int8", E.Load("int32", acc, c(0))), c(0)))
    return S.PrimFunc("f", [x, w, b, t, rows, y], S.Allocate(acc, S.seq(*body)))


def test_the_rewrite_is_exact_or_does_nothing():
    fused = dw_fuse.fuse_depthwise_epilogue("rows")(_pair_func())
    calls = [n.value.name for n in _statements(fused.body) if isinstance(n, S.Evaluate)]
    assert calls == [dw_fuse.FUSED_CALL]
    assert not any(isinstance(n, S.Allocate) for n in _statements(fused.body))
    # the accumulator row is read again: fusing would lose it
    kept = _pair_func(reader=True)
    assert dw_fuse.fuse_depthwise_epilogue("rows")(kept) is kept
    # no rows parameter of that name: nothing to read instead
    plain = _pair_func()
    assert dw_fuse.fuse_depthwise_epilogue("other")(plain) is plain


@pytest.mark.parametrize("variant", [
    {"cin": 8},
    {"cin": 11, "hw": (6, 5), "k": (3, 2), "dilation": (1, 2), "padding": (0, 1, 2, 1)},
    {"cin": 6, "hw": (7, 7), "strides": (2, 2), "activation": "relu6"},
    {"cin": 36, "hw": (3, 40)},  # one pixel at a time
])
@pytest.mark.one_fast
def test_fused_kernels_match_the_reference_on_the_host(variant):
    g = conv_graph("depthwise_conv2d", seed=11, **variant)
    kernels = check_graph(g, seeded_inputs(g, 11), target=ARM)
    assert "aot_depthwise_requant_s8(" in kernels[0].source


def test_the_knob_off_keeps_the_two_calls():
    """fuse_epilogue is a knob of the depthwise template (on by default, the
    library's schedule); off, the row is the two calls through the
    accumulator row, reading the bias and table."""
    ag = optimize(conv_graph("depthwise_conv2d", seed=3, cin=8))
    group = annotations(ag).groups[0]
    tpl = TEMPLATES[("depthwise_conv2d", "arm_cpu")]

    def schedule(s, final, stages):
        values = tpl.default_values(stages, final)
        assert values["fuse_epilogue"] is True
        tpl.apply(s, final, stages, {**values, "fuse_epilogue": False})
    k = lower_group(group, ag, ARM, name="k", schedule=schedule)
    assert "aot_depthwise_s8(" in k.source and "aot_requant_row_s8(" in k.source
    assert "aot_depthwise_requant_s8(" not in k.source
    assert len(k.constants) == 3  # weights, bias, table; not the unread rows


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("qemu-system-arm") is None or
                    shutil.which("arm-none-eabi-gcc") is None,
                    reason="needs qemu-system-arm and arm-none-eabi-gcc")
@pytest.mark.parametrize("variant", [
    {"cin": 8},
    {"cin": 11, "hw": (6, 5), "k": (3, 2), "dilation": (1, 2), "padding": (0, 1, 2, 1)},
    {"cin": 6, "hw": (7, 7), "strides": (2, 2), "activation": "relu6"},
    {"cin": 36, "hw": (3, 40)},
], ids=str)
def test_the_helium_fused_helper_is_bit_exact_on_an_emulated_cortex_m55(variant, tmp_path):
    from aot.compile import compile_model
    from aot.firmware import run_on_board
    from aot.firmware.verify import compare, reference_outputs

    g = conv_graph("depthwise_conv2d", seed=25, **variant)
    inputs = [np.stack([a, b]) for a, b in zip(seeded_inputs(g, 25), seeded_inputs(g, 26))]
    compiled = compile_model(g, "qemu/mps3-an547", measure_code=False,
                             kernel_library=DepthwiseFusion("arm_mve", True))
    assert any("aot_depthwise_requant_s8(" in k.source for k in compiled.kernels)
    run = run_on_board(compiled, inputs, workdir=tmp_path)
    assert all(c.exact for c in compare(g, run.outputs, reference_outputs(g, inputs)))


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None, reason="needs arm-none-eabi-gcc")
@pytest.mark.parametrize("fuse_epilogue", [False, True])
@pytest.mark.one_fast
def test_rows_of_three_pixels_compile_with_the_projects_warnings(models_dir, tmp_path,
                                                                 fuse_epilogue):
    """VWW's last depthwise layer (3x3 pixels, 256 channels) unfused: the
    two-pixel loop once left GCC unable to tell where the channel tail
    starts, and -Werror turned its warning (aggressive-loop-optimizations)
    into a failed build of every such candidate."""
    import subprocess

    from aot.target import load_board
    from aot.tune.workload import extract_workloads

    board = load_board(ARM)
    _, workloads = extract_workloads(models_dir / "mlperf_vww_mobilenetv1_025.tflite",
                                     board.target)
    wl = next(w for w in workloads if w.description.startswith("depthwise_conv2d 1x3x3x256"))
    config = next(c for c in wl.space if c["fuse_epilogue"] is fuse_epilogue
                  and c["unroll_epilogue"] == 8 and c["optimize"] == "O2")
    for rel, text in support_files(wl.target).items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    (tmp_path / "k.c").write_text(wl.lower(config, "k").source)
    proc = subprocess.run(["arm-none-eabi-gcc", "-std=c99", "-Wall", "-Wextra", "-Werror",
                           "-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard",
                           "-mfpu=fpv4-sp-d16", "-O2", "-I.", "-c", "k.c", "-o", "k.o"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
