"""The arm_cpu strategies: int8 accumulation tensorized onto the support helpers
(aot_conv_s8, aot_depthwise_s8, aot_dot_s8).

On the host the helper's portable loop runs (under ASan/UBSan); on an
emulated Cortex-M4 (slow tests) the SXTB16/SMLAD path runs over the RPC and
must give the same bits as the reference interpreter.
"""

from __future__ import annotations

import re
import shutil

import numpy as np
import pytest
from graphs import conv_graph, dense_graph
from kernel_checks import all_values, check_graph, seeded_inputs
from support.disasm import disassemble
from support.host_c import assert_no_mismatches
from support.marks import fast_first

from aot.kernels import lower_group
from aot.passes import annotations, optimize

ARM = "c -keys=arm_cpu,cpu -mcpu=cortex-m4"
#: An unfused conv2d row call: aot_conv_s8 or one of its widened entry points
#: (conv2d/paths.py).
UNFUSED_CONV = r"\baot_conv_(acc_[a-z_]+_)?s8\("
M4_FLAGS = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"]
CASES = [
    ("conv2d", {}),
    ("conv2d", {"cin": 8, "strides": (2, 2), "activation": "relu"}),
    ("conv2d", {"cin": 13, "k": (1, 1), "padding": (0, 0, 0, 0), "residual": True}),
    ("conv2d", {"cin": 4, "cout": 6, "hw": (5, 7), "k": (3, 1), "dilation": (2, 1)}),
    ("conv2d", {"cin": 1, "cout": 7, "hw": (9, 5), "k": (4, 2), "strides": (2, 2),
                "padding": (1, 0, 2, 1)}),
    # widened-input path in chunks of 8 pixels (odd last chunk), with split taps
    ("conv2d", {"cin": 16, "cout": 7, "hw": (4, 21), "padding": (1, 1, 1, 1)}),
    ("conv2d", {"cin": 8, "cout": 4, "hw": (6, 9), "dilation": (1, 2), "strides": (1, 2)}),
    # widened im2col patches (kernel rows of 4 and 20 bytes) in the small patch
    # buffer (chunks of 20 and 2 pixels), then patches too big for it (144 bytes)
    ("conv2d", {"cin": 1, "cout": 5, "hw": (10, 9), "k": (3, 4), "strides": (2, 2),
                "padding": (1, 1, 1, 2)}),
    ("conv2d", {"cin": 2, "cout": 3, "hw": (6, 13), "k": (5, 10), "padding": (2, 4, 2, 5)}),
    ("conv2d", {"cin": 2, "cout": 3, "hw": (11, 12), "k": (9, 8), "padding": (4, 3, 4, 4)}),
    # pointwise rows for the assembly blocks (GCC, DSP): runs of 12, 20 and 24
    # channels (loop of four steps, then two and one), rows of 7, 4 and 5
    # pixels (3+2+2, 2+2, 3+2) and an odd output channel left over
    ("conv2d", {"cin": 12, "cout": 5, "hw": (2, 7), "k": (1, 1), "padding": (0, 0, 0, 0)}),
    ("conv2d", {"cin": 20, "cout": 4, "hw": (3, 4), "k": (1, 1), "padding": (0, 0, 0, 0)}),
    ("conv2d", {"cin": 24, "cout": 6, "hw": (2, 5), "k": (1, 1), "padding": (0, 0, 0, 0)}),
    # chunks of at most 4 pixels of 128 channels: 3 + 3, and 4 + 3 for 7
    # (chunks of 3 would leave a lone pixel)
    ("conv2d", {"cin": 128, "cout": 3, "hw": (2, 6), "k": (1, 1), "padding": (0, 0, 0, 0)}),
    ("conv2d", {"cin": 128, "cout": 2, "hw": (1, 7), "k": (1, 1), "padding": (0, 0, 0, 0)}),
    # one pixel's window wider than the widening buffer: one kernel row at a
    # time (chunks of 6 pixels: 3+3, then a pair), the sums carried over ...
    ("conv2d", {"cin": 64, "cout": 3, "hw": (3, 3)}),
    ("conv2d", {"cin": 64, "cout": 5, "hw": (3, 8)}),
    # ... and even one kernel row wider than it: the plain path
    ("conv2d", {"cin": 64, "cout": 3, "hw": (3, 9), "k": (2, 9), "padding": (0, 0, 0, 0)}),
    # a row of accumulators above the stack budget: one pixel at a time
    ("conv2d", {"cin": 5, "cout": 33, "hw": (3, 40), "strides": (1, 1)}),
    ("depthwise_conv2d", {"cin": 8}),
    ("depthwise_conv2d", {"cin": 6, "hw": (7, 7), "strides": (2, 2), "activation": "relu6"}),
    ("depthwise_conv2d", {"cin": 11, "hw": (6, 5), "k": (3, 2), "dilation": (1, 2),
                          "padding": (0, 1, 2, 1)}),
    ("depthwise_conv2d", {"cin": 36, "hw": (3, 40)}),
    # the 3x3 assembly taps (GCC, DSP) with a dilation of 2 as the pixels'
    # stride, two tail channels and an odd last pixel (rows of 5: 2 + 2 + 1)
    ("depthwise_conv2d", {"cin": 10, "hw": (9, 9), "strides": (2, 2), "dilation": (2, 2),
                          "padding": (2, 2, 2, 2)}),
    ("depthwise_conv2d", {"cin": 3, "depth_multiplier": 2}),  # generic fallback
    # one input channel (micro_speech): lowered as a convolution with C = 1
    ("depthwise_conv2d", {"cin": 1, "depth_multiplier": 8, "hw": (9, 8), "k": (4, 4),
                          "strides": (2, 2), "padding": (1, 1, 2, 1)}),
    ("dense", {"depth": 37, "per_channel": True}),
    ("dense", {"depth": 64, "units": 11, "rows": 3, "activation": "relu"}),
    # more units than the accumulator budget: chunks of 100 (a multiple of four) ...
    ("dense", {"depth": 12, "units": 1100, "rows": 1}),
    # ... of 75 (no multiple of four divides 150), and none at all for a prime
    ("dense", {"depth": 20, "units": 150, "rows": 2, "per_channel": True}),
    ("dense", {"depth": 8, "units": 131, "rows": 1}),
    # the widened input in segments of 128 (the last one short), with tail units
    ("dense", {"depth": 300, "units": 10, "rows": 2}),
    ("dense", {"depth": 1040, "units": 6, "rows": 1}),
    ("dense", {"depth": 16, "w_zp": 3}),
]

#: The dense cases whose units have no chunk that fits the accumulator
#: budget: one aot_dot_s8 per output instead of aot_dense_s8 per chunk.
DOT_PER_UNIT = {131}
#: The dense depths whose weights cannot be packed (dense.intrin.packable):
#: not a multiple of four, or sums that could pass 2^23 (1040 random weights).
#: The others run aot_dense_packed_s8.
PLAIN_WEIGHTS = {37, 1040}


def _dense_helper(variant) -> str:
    """Packed weights with a per-tensor epilogue and one widened segment
    (depth <= 128) fuse the chunk with its epilogue (dense.fuse)."""
    if variant.get("units") in DOT_PER_UNIT:
        return "aot_dot_s8("
    if variant.get("depth") in PLAIN_WEIGHTS:
        return "aot_dense_s8("
    if variant.get("per_channel") or variant.get("depth", 12) > 128:
        return "aot_dense_packed_s8("
    return "aot_dense_packed_requant_s8("


def _conv_fuses(variant):
    """The conv2d case's row call is fused with its epilogue by default
    (conv2d.schedules.conv_fuses, with a requantizing epilogue): channels a
    multiple of 4 and a window of at most 512 bytes, or widened patches
    (kernel rows of whole words, at most 512 bytes)."""
    kh, kw = variant.get("k", (3, 3))
    cin, dw = variant.get("cin", 3), variant.get("dilation", (1, 1))[1]
    wide = cin % 4 == 0 and kh * ((kw - 1) * dw + 1) * cin <= 512
    patch = dw == 1 and (kw * cin) % 4 == 0 and kh * kw * cin <= 512
    return (wide or patch) and not variant.get("residual")


def _graph(op, variant, seed):
    if op == "dense":
        return dense_graph(seed=seed, **variant)
    return conv_graph(op, seed=seed, **variant)


#: The fast subset keeps the first case of each operator (and every dense case,
#: which is cheap); the other layouts run with the slow tests.
FAST_CASES = [i for i, (op, _) in enumerate(CASES)
              if op == "dense" or i == [o for o, _ in CASES].index(op)]


@pytest.mark.parametrize("op, variant", fast_first(CASES, FAST_CASES, unpack=True),
                         ids=lambda v: str(v))
def test_tensorized_kernels_match_the_reference_on_the_host(op, variant):
    g = _graph(op, variant, 21)
    kernels = check_graph(g, seeded_inputs(g, 21), target=ARM)
    fuses = op == "conv2d" and _conv_fuses(variant)  # (not a depthwise computed as one)
    if op == "depthwise_conv2d" and variant.get("cin") == 1:
        op = "conv2d"
    helper = {"conv2d": re.escape("aot_conv_requant_") if fuses else UNFUSED_CONV,
              "dense": re.escape(_dense_helper(variant)),
              # the row helper fused with its epilogue (depthwise_conv2d.fuse)
              "depthwise_conv2d": re.escape("aot_depthwise_requant_s8(")}[op]
    untensorized = variant.get("w_zp") or (op == "depthwise_conv2d"
                                           and variant.get("depth_multiplier", 1) > 1)
    assert bool(re.search(helper, kernels[0].source)) != bool(untensorized)


@pytest.mark.parametrize("op, variant, row", [
    ("conv2d", {"cin": 8, "strides": (2, 2), "activation": "relu"}, True),
    ("conv2d", {"cin": 3}, True),  # not fused: three channels
    ("depthwise_conv2d", {"cin": 8}, True),
    ("depthwise_conv2d", {"cin": 36, "hw": (3, 40)}, False),  # rows pass the stack budget
])
def test_the_epilogue_is_one_helper_call_per_output_row(op, variant, row):
    """aot_requant_row_s8(y, y_ps, acc, acc_ps, bias, table, npix, n, lo, hi)
    (conv2d) and aot_depthwise_requant_s8(y, y_ps, x, x_rs, x_cs, w, rows,
    npix, n, ...) / aot_conv_requant_wide_s8 (the same without x_cs) (fused
    with its accumulators): with the row tile
    one call covers every pixel of an output row (pixel strides = channels,
    NHWC), with the per-pixel tile one pixel."""
    ag = optimize(_graph(op, variant, 5))
    k = lower_group(annotations(ag).groups[0], ag, "qemu/mps2-an386", name="k")
    fused = op == "depthwise_conv2d" or _conv_fuses(variant)
    helper, at = (("aot_requant_row_s8", 6) if not fused
                  else ("aot_depthwise_requant_s8", 7) if op == "depthwise_conv2d"
                  else ("aot_conv_requant_wide_s8", 6))
    calls = re.findall(helper + r"\(([^;]*)\);", k.source)
    assert calls
    assert ("aot_requant_row_s8(" in k.source) == (not fused)
    width = ag.outputs[0].type.shape[2]
    for call in calls:
        args = [a.strip() for a in re.split(r",(?![^(]*\))", call)]
        npix, n = int(args[at]), int(args[at + 1])
        if row:
            assert (npix, int(args[1])) == (width, n)
        else:
            assert npix == 1


@pytest.mark.parametrize("op", ["conv2d", "depthwise_conv2d", "dense"])
def test_int16_layers_fall_back_to_the_generic_loops(op):
    """The helpers take int8 data only: a 16x8 layer (int64 accumulators)
    gets plain loops on arm_cpu, bit-exact with the reference."""
    g = dense_graph(seed=24, dtype="int16", depth=40) if op == "dense" else \
        conv_graph(op, seed=24, dtype="int16", cin=8)
    kernels = check_graph(g, seeded_inputs(g, 24), target=ARM)
    assert kernels[0].op_names[0] == op
    assert "int64_t" in kernels[0].source
    assert not re.search(UNFUSED_CONV, kernels[0].source)
    assert not any(h in kernels[0].source for h in ("aot_depthwise_s8(", "aot_dot_s8(",
                                                    "aot_dense_s8("))


def test_the_cortex_m4_build_uses_smlad(tmp_path):
    g = conv_graph("conv2d", seed=22, cin=8)
    ag = optimize(g)
    k = lower_group(annotations(ag).groups[0], ag, ARM, name="k")
    dis = disassemble(k.source, M4_FLAGS, tmp_path)
    assert "smlad" in dis and "sxtb16" in dis


#: The levels other than the first run with the slow tests.
OPT_LEVELS = fast_first(["-O1", "-Os", "-O3", "-Og", "-O2 -fno-omit-frame-pointer"])


@pytest.mark.parametrize("opt", OPT_LEVELS)
def test_the_cortex_m4_convolutions_build_at_every_optimization_level(opt, tmp_path):
    """The inline-assembly blocks need 13 registers: where GCC cannot give them
    (size optimization) the C blocks stand in, never an "impossible
    constraints" error; a 3x3 convolution's frame is over 4 KiB."""
    for n, variant in enumerate([{"cin": 64, "cout": 8, "hw": (3, 5), "k": (1, 1),
                                  "padding": (0, 0, 0, 0)},
                                 {"cin": 16, "cout": 16, "hw": (32, 32)}]):
        ag = optimize(conv_graph("conv2d", seed=22, **variant))
        k = lower_group(annotations(ag).groups[0], ag, ARM, name="k")
        dis = disassemble(k.source, M4_FLAGS, tmp_path / str(n), opt=opt.split())
        assert "smlad" in dis


@pytest.mark.parametrize("opt", OPT_LEVELS)
def test_the_cortex_m4_packed_dense_builds_at_every_optimization_level(opt, tmp_path):
    """The packed dense block in assembly needs 13 registers (loop bound
    included); every optimization level builds it or the C loop, with every
    tail of the 8-step loop (depths 640, 28 and 8) and units % 4, alone and
    fused with the epilogue (depths 28 and 8)."""
    for n, (depth, units) in enumerate([(640, 8), (28, 6), (8, 128)]):
        ag = optimize(dense_graph(seed=22, depth=depth, units=units, rows=1))
        k = lower_group(annotations(ag).groups[0], ag, ARM, name="k")
        assert "aot_dense_packed_" in k.source  # depth 640: not fused
        dis = disassemble(k.source, M4_FLAGS, tmp_path / str(n), opt=opt.split())
        assert "smlad" in dis and "sxtb16" in dis


@pytest.mark.parametrize("opt", OPT_LEVELS)
def test_the_cortex_m4_depthwise_builds_at_every_optimization_level(opt, tmp_path):
    """The 3x3 depthwise assembly taps need 13 registers (as the convolution's
    blocks): every level builds, size optimization with the C loop."""
    ag = optimize(conv_graph("depthwise_conv2d", seed=22, cin=16, hw=(6, 9)))
    k = lower_group(annotations(ag).groups[0], ag, ARM, name="k")
    dis = disassemble(k.source, M4_FLAGS, tmp_path, opt=opt.split())
    assert "smlabb" in dis and "smlatt" in dis


@pytest.mark.parametrize("strides", [(1, 1), (2, 2)])
def test_the_cortex_m4_depthwise_3x3_taps_are_assembly(strides, tmp_path):
    """At -O2 the shared-column 3x3 taps take the assembly block: its code
    differs from the AOT_NO_ASM build's, and the seven loads of each kernel
    row and half come back to back (the C loop interleaves loads with the
    multiplies); with a stride of 2 too (pixels two columns apart)."""
    ag = optimize(conv_graph("depthwise_conv2d", seed=22, cin=16, hw=(6, 9), strides=strides))
    k = lower_group(annotations(ag).groups[0], ag, ARM, name="k")
    dis = disassemble(k.source, M4_FLAGS, tmp_path / "asm")
    plain = disassemble(k.source, M4_FLAGS, tmp_path / "c", opt=["-O2", "-DAOT_NO_ASM"])
    ops = [line.split("\t")[2].split()[0] for line in dis.splitlines()
           if line.count("\t") >= 2 and ":" in line.split("\t")[0]]
    runs, run = [], 0
    for op in ops + ["end"]:
        if op.startswith("ldr"):
            run += 1
        elif run:
            runs, run = runs + [run], 0
    assert sum(r >= 7 for r in runs) >= 6  # three kernel rows x two halves
    assert dis != plain


def test_the_cortex_m4_depthwise_uses_halfword_multiplies(tmp_path):
    g = conv_graph("depthwise_conv2d", seed=22, cin=8)
    ag = optimize(g)
    k = lower_group(annotations(ag).groups[0], ag, ARM, name="k")
    dis = disassemble(k.source, M4_FLAGS, tmp_path)
    assert "smlabb" in dis and "smlatt" in dis and "sxtb16" in dis


def _cases(ag, values, target, prefix):
    """(kernel, name, before, after) of every kernel group of ``ag`` (see m4_firmware)."""
    tensors = {t.name: t for t in ag.tensors()}
    cases = []
    for group in annotations(ag).groups:
        if group.kind == "view":
            continue
        k = lower_group(group, ag, target, name=f"{prefix}_{len(cases)}")
        before, after = [], []
        for p in k.params:
            key = id(tensors[p.tensor])
            state = p.role == "state"
            before.append(None if p.role == "output"
                          else values[("before", key)] if state else values[key])
            after.append(None if p.role == "input"
                         else values[("after", key)] if state else values[key])
        cases.append((k, f"{prefix}_{group.name}", before, after))
    return cases


QEMU = pytest.mark.skipif(shutil.which("qemu-system-arm") is None, reason="needs qemu-system-arm")


@pytest.mark.slow
@QEMU
def test_dsp_kernels_are_bit_exact_on_an_emulated_cortex_m4(tmp_path):
    import m4_firmware
    cases = []
    for n, (op, variant) in enumerate(CASES):
        ag = optimize(_graph(op, variant, 23))
        cases += _cases(ag, all_values(ag, seeded_inputs(ag, 23)), ARM, f"case{n}")
    assert m4_firmware.check_on_qemu(cases, tmp_path) == len(cases)


@pytest.mark.slow
@QEMU
def test_packed_dense_is_exact_for_extreme_inputs_on_an_emulated_cortex_m4(tmp_path):
    """aot_dense_packed_s8's widened pairs reach the ends of int16 (x_even =
    -128 with x_odd = 127 and the reverse) and its scaled sums the bound of
    dense.intrin.packable: inputs at the int8 extremes, over all four helper
    paths (4-step loop, 2- and 1-step tails, units % 4, several segments)."""
    import m4_firmware
    cases = []
    for n, (depth, units) in enumerate([(64, 8), (28, 5), (300, 7), (640, 5)]):
        ag = optimize(dense_graph(seed=30 + n, depth=depth, units=units, rows=2))
        x = np.tile(np.array([-128, 127, 127, -128], np.int8), 2 * depth // 4)
        x[-depth // 2:] = -128  # the second row all -128
        x = x.reshape(ag.inputs[0].type.shape)
        cases += _cases(ag, all_values(ag, [x]), ARM, f"xcase{n}")
        assert "aot_dense_packed_" in cases[-1][0].source
    assert m4_firmware.check_on_qemu(cases, tmp_path) == len(cases)


@pytest.mark.slow
@QEMU
@pytest.mark.parametrize("model", ["mlperf_kws_dscnn", "mlperf_vww_mobilenetv1_025",
                                   "mlperf_ic_resnet8", "mlperf_ad_fc_autoencoder",
                                   "tflm_micro_speech",
                                   "tflm_keyword_scrambled_int16", "tflm_mnist_lstm_int8",
                                   "tflm_magic_wand_float"])
def test_every_kernel_of_a_model_matches_the_reference_on_cortex_m4(model, models_dir, tmp_path):
    """Each kernel cross-compiled with the arm_cpu strategy, run alone on the emulated
    board on the reference's intermediate tensors (and states after two steps)."""
    import m4_firmware

    from aot.frontend import load_model
    ag = optimize(load_model(models_dir / f"{model}.tflite"))
    cases = _cases(ag, all_values(ag, seeded_inputs(ag, 24)), ARM, "m")
    assert m4_firmware.check_on_qemu(cases, tmp_path) >= len(cases)


def _requant_batch(rng, n, max_shift, offset):
    from aot.kernels.conv2d.compute import fast_requant_tables
    from aot.quant.arith import multiply_by_quantized_multiplier

    x = rng.integers(-2**31, 2**31, n, dtype=np.int64)
    x[:n // 4] = rng.integers(-5000, 5000, n // 4)
    x[n // 4:n // 4 + 8] = [-2**31, 2**31 - 1, -1, 0, 1, -2**30, 2**30, -(2**31 - 1)]
    m = rng.integers(2**30 + 1, 2**31, n, dtype=np.int64)
    m[:4] = [2**30 + 1, 2**31 - 1, 2**30 + 1, 2**31 - 1]
    e = rng.integers(1, max_shift + 1, n, dtype=np.int64)
    e[-1] = max_shift
    want = np.asarray(multiply_by_quantized_multiplier(
        x.astype(np.int32), m.astype(np.int32), (-e).astype(np.int32))).astype(np.int64) + offset

    class Ctx:
        def const(self, label, values):
            return values
    qp = type("Q", (), {"multiplier": m, "shift": -e, "output_offset": offset})
    rows, rest = fast_requant_tables(Ctx(), type("N", (), {"name": "n"}), qp)
    return x, rows, rest, want


def test_one_rounding_requantization_equals_the_reference(tmp_path):
    """aot_requant (merged roundings, output offset folded when exact) against
    TFLM's two-rounding MultiplyByQuantizedMultiplier on random and extreme
    accumulators, multipliers and shifts, compiled for the host with sanitizers."""
    import numpy as np

    from aot.kernels import support_files

    rng = np.random.default_rng(5)
    # right shifts up to 23 fold the offset (the extreme offsets too), 24 and up keep it
    batches = [_requant_batch(rng, 1000, 23, off) for off in (-7, -128, 127)]
    batches.append(_requant_batch(rng, 1000, 31, 5))
    assert [b[2] for b in batches] == [0, 0, 0, 5]  # the offset is folded only when exact
    x, rows, want = (np.concatenate([b[k] for b in batches]) for k in (0, 1, 3))
    n = len(x)
    rest = np.repeat([b[2] for b in batches], 1000)
    for name, text in support_files(None).items():
        (tmp_path / name).write_text(text)

    def arr(name, values):
        return (f"static const int32_t {name}[{len(values)}] = "
                f"{{{', '.join(str(v) if v != -2**31 else 'INT32_MIN' for v in values)}}};")
    src = "\n".join([
        '#include "aot_kernel_fixedpoint.h"', "#include <stdio.h>",
        arr("xs", x.tolist()), arr("rows", rows.reshape(-1).tolist()),
        arr("rest", rest.tolist()), arr("want", want.tolist()),
        "int main(void) {", "  int bad = 0;",
        f"  for (int i = 0; i < {n}; ++i) {{",
        "    const int32_t* r = rows + 4 * i;",
        "    if (aot_requant(xs[i], r[0], r[1], r[2], r[3]) + rest[i] != want[i]) { ++bad; }",
        "  }", '  printf("%d\\n", bad);', "  return bad != 0;", "}"])
    assert_no_mismatches(tmp_path, src)


@pytest.mark.parametrize("units, depth, chunk, fused", [
    (1100, 12, 100, True), (640, 128, 128, True), (128, 640, 128, False),
    (150, 20, 75, False)])
def test_wide_dense_layers_accumulate_in_chunks_of_units(units, depth, chunk, fused):
    """The accumulators of a dense layer stay within 512 bytes of stack: a
    wider layer runs aot_dense_packed_s8 once per chunk of units, each
    followed by its part of the epilogue (the chunk divides the units, so no
    tail); fused with it (dense.fuse: per-tensor epilogue, depth <= 128) one
    aot_dense_packed_requant_s8 per chunk and no accumulator row at all."""
    g = dense_graph(seed=3, units=units, depth=depth, rows=1, per_channel=units == 150)
    ag = optimize(g)
    k = lower_group(annotations(ag).groups[0], ag, ARM, name="k")
    if fused:
        assert "acc[" not in k.source
        assert k.source.count("aot_dense_packed_requant_s8(") == 1
        assert f", {chunk}, {depth}, " in k.source
    else:
        assert f"int32_t acc[{chunk}];" in k.source
        assert k.source.count("aot_dense_packed_s8(") == 1
        assert f", {chunk}, {depth});" in k.source
