"""``-libs=cmsis-nn``: layers handed to Arm's CMSIS-NN library (int8; int16 softmax).

Each supported layer becomes one C function that fills CMSIS-NN's
parameter structs with compile-time numbers and calls one CMSIS-NN entry
point; the per-channel multipliers and shifts, biases and weights are
``static const`` arrays computed here, not at run time:

=================== ========================================= ============================
pattern             CMSIS-NN call                             declined when
=================== ========================================= ============================
conv2d              ``arm_convolve_wrapper_s8`` (picks 1x1,   not int8, weights with a
                    1xN and im2col paths itself)              zero point
depthwise_conv2d    ``arm_depthwise_conv_wrapper_s8``         as conv2d
dense               ``arm_fully_connected_s8``                per-channel weights
avg_pool2d          ``arm_avgpool_s8``                        input and output scales differ
max_pool2d          ``arm_max_pool_s8``                       as avg_pool2d
softmax             ``arm_softmax_s8`` / ``_s8_s16`` /        float, or not int8 to int8 or int16,
                    ``arm_softmax_s16``                       or int16 to int16
add, mul            ``arm_elementwise_add_s8`` / ``_mul_s8``  broadcasting or a constant operand
=================== ========================================= ============================

Options: ``path``, the CMSIS-NN source tree (``aot compile --cmsis-nn PATH``);
it is checked before anything is compiled (:mod:`aot.byoc.cmsis_nn.tree`).
Scratch sizes follow CMSIS-NN's ``*_get_buffer_size`` rules (the largest
of the portable, DSP and Helium paths); on Helium cores the fully connected
layers' row sums (``arm_vector_sum_s8``) are compile-time constants too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from aot.byoc.cmsis_nn.tree import INCLUDE_DIRS, check_tree, sources_for
from aot.byoc.contract import ExternalCode, ExternalCodegen, ExternalCodegenError
from aot.passes import Pattern, PatternTable
from aot.quant import lut
from aot.quant.params import softmax_params_int8, softmax_params_int16
from aot.target import Target

NAME = "cmsis-nn"

#: The CMake/Make variable naming the tree in the artifact's build files.
VARIABLE = "CMSIS_NN_PATH"


# --------------------------------------------------------------------------- predicates

def _int8(node, count: int) -> str | None:
    """None when the first ``count`` inputs and the output are quantized int8."""
    for t in [*node.inputs[:count], *node.outputs]:
        if t is None or t.dtype != "int8" or t.quant is None:
            what = f"{t.dtype} tensor {t.name}" if t is not None else "a missing input"
            return f"{what} (CMSIS-NN is called for int8 layers only)"
    return None


def _layer(nodes, graph) -> str | None:
    """Conv, depthwise and dense: int8 data and weights, symmetric weights, int32 bias."""
    node = nodes[0]
    why = _int8(node, 2)
    if why:
        return why
    weight = node.inputs[1]
    if any(weight.quant.zero_point):
        return "weights with a zero point (CMSIS-NN expects symmetric weights)"
    bias = node.inputs[2] if len(node.inputs) > 2 else None
    if bias is not None and (bias.dtype != "int32" or bias.kind != "constant"):
        return f"a {bias.dtype} {bias.kind} bias (CMSIS-NN takes a constant int32 one)"
    if weight.kind != "constant":
        return "run-time weights (CMSIS-NN takes constant ones)"
    if node not in graph.annotations.quant:
        return "no folded quantization constants"
    if node.op == "dense" and (weight.quant.is_per_axis
                               and len(set(weight.quant.scale)) > 1):
        return "per-channel weights (arm_fully_connected_s8 takes one multiplier)"
    return None


def _pool(nodes, graph) -> str | None:
    node = nodes[0]
    why = _int8(node, 1)
    if why:
        return why
    x, y = node.inputs[0], node.outputs[0]
    if x.quant != y.quant:
        return "input and output quantization differ (CMSIS-NN pools do not requantize)"
    return None


def _softmax(nodes, graph) -> str | None:
    node = nodes[0]
    x, y = node.inputs[0], node.outputs[0]
    if x.quant is None or y.quant is None:
        return "a float softmax (CMSIS-NN's are quantized)"
    if (x.dtype, y.dtype) in (("int8", "int8"), ("int8", "int16"), ("int16", "int16")):
        return None
    return f"{x.dtype} to {y.dtype} (CMSIS-NN has int8 to int8 or int16, int16 to int16)"


def _binary(nodes, graph) -> str | None:
    node = nodes[0]
    why = _int8(node, 2)
    if why:
        return why
    a, b = node.inputs
    if a.kind == "constant" or b.kind == "constant":
        return "a constant operand"
    if a.shape != b.shape or a.shape != node.outputs[0].shape:
        return "broadcasting (CMSIS-NN adds and multiplies equal shapes)"
    if node not in graph.annotations.quant:
        return "no folded quantization constants"
    return None


TABLE = PatternTable(NAME, (
    Pattern("conv2d", ("conv2d",), _layer),
    Pattern("depthwise_conv2d", ("depthwise_conv2d",), _layer),
    Pattern("dense", ("dense",), _layer),
    Pattern("avg_pool2d", ("avg_pool2d",), _pool),
    Pattern("max_pool2d", ("max_pool2d",), _pool),
    Pattern("softmax", ("softmax",), _softmax),
    Pattern("add", ("add",), _binary),
    Pattern("mul", ("mul",), _binary),
))


# --------------------------------------------------------------------------- configure

def configure(target: Target, options: Mapping[str, Any]) -> Mapping[str, Any]:
    """Check the tree (``path``) before anything is compiled."""
    path = options.get("path")
    if not path:
        raise ExternalCodegenError(
            "cmsis-nn needs Arm's CMSIS-NN source tree: give its folder with --cmsis-nn PATH "
            "or $CMSIS_NN_PATH (compile_model(..., codegen_options={'cmsis-nn': "
            "{'path': PATH}}))")
    return {"path": check_tree(path)}


# --------------------------------------------------------------------------- C

def _dims(n, h, w, c) -> str:
    return f"{{{int(n)}, {int(h)}, {int(w)}, {int(c)}}}"


def _nhwc(t) -> tuple[int, int, int, int]:
    n, h, w, c = t.shape
    return n, h, w, c


def _bias(node, channels: int) -> np.ndarray:
    bias = node.inputs[2] if len(node.inputs) > 2 else None
    if bias is None:
        return np.zeros(channels, np.int32)
    return np.asarray(bias.data, np.int32).reshape(-1)


def _align4(n: int) -> int:
    return (n + 3) // 4 * 4


def _align16(n: int) -> int:
    return (n + 15) // 16 * 16


#: CH_IN_BLOCK_MVE of arm_nnsupportfunctions.h: channels per block of the Helium depthwise.
_MVE_CH_BLOCK = 124


def _conv(f, node, qp, cname) -> tuple[str, dict, int, int]:
    x, w, y = node.inputs[0], node.inputs[1], node.outputs[0]
    n, ih, iw, ic = _nhwc(x)
    _, oh, ow, oc = _nhwc(y)
    top, left, bottom, right = node.attrs["padding"]
    sh, sw = node.attrs["strides"]
    dh, dw = node.attrs["dilation"]
    lo, hi = qp.clamp
    consts = {f"{cname}_weights": np.asarray(w.data, np.int8),
              f"{cname}_bias": _bias(node, oc),
              f"{cname}_mult": np.asarray(qp.multiplier, np.int32).reshape(-1),
              f"{cname}_shift": np.asarray(qp.shift, np.int32).reshape(-1)}
    if node.op == "conv2d":
        _, kh, kw, _ = w.shape
        one_by_one = kh == kw == 1 and (top, left, bottom, right) == (0, 0, 0, 0) \
            and (dh, dw) == (1, 1)
        # The largest of CMSIS-NN's rules for the portable, DSP and Helium paths
        # (im2col of two columns of int16; four of int8 in 16-byte lanes; the 1xN row).
        cols = kh * kw * ic
        scratch = 4 * ic if one_by_one else max(4 * _align4(cols), 4 * _align16(cols),
                                                (kw + left + 1) * ic)
        macs = n * oh * ow * oc * kh * kw * ic
        params = (f"const cmsis_nn_conv_params params = {{{qp.input_offset}, "
                  f"{qp.output_offset}, {{{sw}, {sh}}}, {{{left}, {top}}}, {{{dw}, {dh}}}, "
                  f"{{{lo}, {hi}}}}};")
        call = "arm_convolve_wrapper_s8"
        filt = _dims(oc, kh, kw, ic)
    else:
        _, kh, kw, _ = w.shape
        mult = node.attrs["depth_multiplier"]
        fast = mult == 1 and n == 1 and (dh, dw) == (1, 1)
        three = kh == kw == 3 and top <= 1 and left <= 1
        if f.target.has_mve:
            # Helium: the blocked path's buffer; one input channel may run as a conv.
            scratch = 4 * _MVE_CH_BLOCK * kw * kh if fast else 0
            if ic == 1:
                scratch += 4 * _align16(kh * kw) + (kw + left + 1) + kh * kw * oc
        else:
            scratch = 2 * ic * kh * kw if fast and not three else 0
        macs = n * oh * ow * oc * kh * kw
        params = (f"const cmsis_nn_dw_conv_params params = {{{qp.input_offset}, "
                  f"{qp.output_offset}, {mult}, {{{sw}, {sh}}}, {{{left}, {top}}}, "
                  f"{{{dw}, {dh}}}, {{{lo}, {hi}}}}};")
        call = "arm_depthwise_conv_wrapper_s8"
        filt = _dims(1, kh, kw, oc)
    x0, y0 = f.arg_names[0], f.arg_names[-1]
    body = f"""  const cmsis_nn_context ctx = {{{'scratch' if scratch else 'NULL'}, {scratch}}};
  {params}
  const cmsis_nn_per_channel_quant_params quant = {{(int32_t *){cname}_mult,
                                                    (int32_t *){cname}_shift}};
  const cmsis_nn_dims input_dims = {_dims(n, ih, iw, ic)};
  const cmsis_nn_dims filter_dims = {filt};
  const cmsis_nn_dims bias_dims = {_dims(1, 1, 1, oc)};
  const cmsis_nn_dims output_dims = {_dims(n, oh, ow, oc)};
  return {call}(&ctx, &params, &quant, &input_dims, {x0}, &filter_dims, {cname}_weights,
                &bias_dims, {cname}_bias, &output_dims, {y0}) == ARM_CMSIS_NN_SUCCESS ? 0 : -1;
"""
    return body, consts, scratch, macs


def _dense(f, node, qp, cname) -> tuple[str, dict, int, int]:
    w = node.inputs[1]
    units, depth = w.shape
    rows = node.inputs[0].type.size // depth
    lo, hi = qp.clamp
    weights = np.asarray(w.data, np.int8).reshape(units, depth)
    consts = {f"{cname}_weights": weights, f"{cname}_bias": _bias(node, units)}
    weight_offset = qp.extra.get("weight_offset", 0)
    ctx = "NULL, 0"
    if f.target.has_mve:
        # Helium reads per row bias + input_offset * (sum of the row + depth *
        # weight_offset) from the context: arm_vector_sum_s8, done here.
        sums = consts[f"{cname}_bias"].astype(np.int64)
        if qp.input_offset:
            rows_sum = weights.astype(np.int64).sum(axis=1) + depth * weight_offset
            sums = sums + qp.input_offset * rows_sum
        consts[f"{cname}_sums"] = sums.astype(np.int32)
        ctx = f"(void *){cname}_sums, {4 * units}"
    x0, y0 = f.arg_names[0], f.arg_names[-1]
    body = f"""  const cmsis_nn_context ctx = {{{ctx}}};
  const cmsis_nn_fc_params params = {{{qp.input_offset}, {weight_offset}, {qp.output_offset},
                                     {{{lo}, {hi}}}}};
  const cmsis_nn_per_tensor_quant_params quant = {{{int(qp.multiplier[0])}, {int(qp.shift[0])}}};
  const cmsis_nn_dims input_dims = {_dims(rows, 1, 1, depth)};
  const cmsis_nn_dims filter_dims = {_dims(depth, 1, 1, units)};
  const cmsis_nn_dims bias_dims = {_dims(1, 1, 1, units)};
  const cmsis_nn_dims output_dims = {_dims(rows, 1, 1, units)};
  return arm_fully_connected_s8(&ctx, &params, &quant, &input_dims, {x0}, &filter_dims,
                                {cname}_weights, &bias_dims, {cname}_bias, &output_dims,
                                {y0}) == ARM_CMSIS_NN_SUCCESS ? 0 : -1;
"""
    return body, consts, 0, rows * units * depth


def _pooling(f, node, qp, cname) -> tuple[str, dict, int, int]:
    x, y = node.inputs[0], node.outputs[0]
    n, ih, iw, c = _nhwc(x)
    _, oh, ow, _ = _nhwc(y)
    top, left, _, _ = node.attrs["padding"]
    sh, sw = node.attrs["strides"]
    kh, kw = node.attrs["pool_size"]
    lo, hi = qp.clamp
    avg = node.op == "avg_pool2d"
    scratch = 4 * c if avg else 0
    call = "arm_avgpool_s8" if avg else "arm_max_pool_s8"
    x0, y0 = f.arg_names[0], f.arg_names[-1]
    body = f"""  const cmsis_nn_context ctx = {{{'scratch' if scratch else 'NULL'}, {scratch}}};
  const cmsis_nn_pool_params params = {{{{{sw}, {sh}}}, {{{left}, {top}}}, {{{lo}, {hi}}}}};
  const cmsis_nn_dims input_dims = {_dims(n, ih, iw, c)};
  const cmsis_nn_dims filter_dims = {_dims(1, kh, kw, 1)};
  const cmsis_nn_dims output_dims = {_dims(n, oh, ow, c)};
  return {call}(&ctx, &params, &input_dims, {x0}, &filter_dims, &output_dims,
                {y0}) == ARM_CMSIS_NN_SUCCESS ? 0 : -1;
"""
    return body, {}, scratch, n * oh * ow * c * kh * kw


def _softmax_c(f, node, qp, cname) -> tuple[str, dict, int, int]:
    x = node.inputs[0]
    depth = x.shape[-1]
    rows = x.type.size // depth
    x0, y0 = f.arg_names[0], f.arg_names[-1]
    if x.dtype == "int16":
        # The two 513-entry tables TFLM's Prepare builds, here at compile time.
        mult, shift = softmax_params_int16(x.quant.scale[0], node.attrs["beta"])
        consts = {f"{cname}_exp": lut.exp_lut_int16().astype(np.int16),
                  f"{cname}_recip": lut.one_over_one_plus_x_lut_int16().astype(np.int16)}
        body = f"""  const cmsis_nn_softmax_lut_s16 luts = {{{cname}_exp, {cname}_recip}};
  return arm_softmax_s16({x0}, {rows}, {depth}, {mult}, {shift}, &luts,
                         {y0}) == ARM_CMSIS_NN_SUCCESS ? 0 : -1;
"""
        return body, consts, 0, rows * depth
    mult, shift, diff_min = softmax_params_int8(x.quant.scale[0], node.attrs["beta"])
    call = "arm_softmax_s8" if node.outputs[0].dtype == "int8" else "arm_softmax_s8_s16"
    body = f"""  {call}({x0}, {rows}, {depth}, {mult}, {shift}, {diff_min}, {y0});
  return 0;
"""
    return body, {}, 0, rows * depth


def _binary_c(f, node, qp, cname) -> tuple[str, dict, int, int]:
    size = node.outputs[0].type.size
    lo, hi = qp.clamp
    a, b = (f.arg_names[f.inputs.index(t)] for t in node.inputs)
    y0 = f.arg_names[-1]
    if node.op == "add":
        (m1, e1), (m2, e2) = qp.extra["input1"], qp.extra["input2"]
        call = (f"arm_elementwise_add_s8({a}, {b}, {qp.input_offset}, {m1}, {e1}, "
                f"{qp.extra['input2_offset']}, {m2}, {e2}, {qp.extra['left_shift']}, {y0}, "
                f"{qp.output_offset}, {int(qp.multiplier[0])}, {int(qp.shift[0])}, {lo}, {hi}, "
                f"{size})")
    else:
        call = (f"arm_elementwise_mul_s8({a}, {b}, {qp.input_offset}, "
                f"{qp.extra['input2_offset']}, {y0}, {qp.output_offset}, "
                f"{int(qp.multiplier[0])}, {int(qp.shift[0])}, {lo}, {hi}, {size})")
    return f"  return {call} == ARM_CMSIS_NN_SUCCESS ? 0 : -1;\n", {}, 0, 0


_EMIT = {"conv2d": _conv, "depthwise_conv2d": _conv, "dense": _dense,
         "avg_pool2d": _pooling, "max_pool2d": _pooling, "softmax": _softmax_c,
         "add": _binary_c, "mul": _binary_c}

_ENTRY = {"conv2d": "arm_convolve_wrapper_s8", "depthwise_conv2d": "arm_depthwise_conv_wrapper_s8",
          "dense": "arm_fully_connected_s8", "avg_pool2d": "arm_avgpool_s8",
          "max_pool2d": "arm_max_pool_s8", "softmax": "arm_softmax_s8",
          "add": "arm_elementwise_add_s8", "mul": "arm_elementwise_mul_s8"}


def generate(f) -> ExternalCode:
    """One CMSIS-NN call for the single node of ``f`` (see the module docstring)."""
    (node,) = f.nodes
    qp = f.quant.get(node)
    body, consts, scratch, macs = _EMIT[node.op](f, node, qp, f.name)
    entry = _ENTRY[node.op]
    if node.op == "softmax" and node.inputs[0].dtype == "int16":
        entry = "arm_softmax_s16"
    elif node.op == "softmax" and node.outputs[0].dtype == "int16":
        entry = "arm_softmax_s8_s16"
    root = f.options["path"]
    source = ('#include <stddef.h>\n#include "arm_nnfunctions.h"\n\n'
              f"{f.signature(scratch > 0)}\n{{\n{body}}}\n")
    return ExternalCode(source, consts, scratch, macs, root=str(root), root_variable=VARIABLE,
                        sources=sources_for(root, (entry,)),
                        include_dirs=INCLUDE_DIRS)


CODEGEN = ExternalCodegen(NAME, TABLE, generate, configure, options=("path",),
                          doc="Arm CMSIS-NN (int8 conv, depthwise, fully connected, pools, "
                              "softmax, add, mul) from a source tree given with --cmsis-nn")
