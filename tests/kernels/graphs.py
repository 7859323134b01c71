"""Tiny quantized graphs for kernel tests, built with aot.ir.GraphBuilder."""

from __future__ import annotations

import numpy as np

from aot.ir import GraphBuilder, Quantization, TensorType

Q = Quantization.per_tensor


def per_axis(scales, axis: int) -> Quantization:
    return Quantization(tuple(float(s) for s in scales), (0,) * len(scales), axis)


def weights_int8(rng, shape):
    return rng.integers(-127, 128, size=shape).astype(np.int8)


def _out_hw(hw, k, strides, dilation, padding):
    top, left, bottom, right = padding
    pads = ((top, bottom), (left, right))
    return tuple((hw[i] + sum(pads[i]) - ((k[i] - 1) * dilation[i] + 1)) // strides[i] + 1
                 for i in range(2))


def conv_graph(op, *, seed=0, dtype="int8", hw=(7, 6), cin=3, cout=5, k=(3, 3),
               strides=(1, 1), dilation=(1, 1), padding=(1, 1, 1, 1), depth_multiplier=1,
               activation="none", per_channel=True, bias=True, x_zp=-3, y_zp=5,
               residual=False):
    """x -> conv2d/depthwise_conv2d [-> add(residual input)] with random weights
    (``residual="channel"``: the residual input has one value per channel)."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder(op)
    x_scale, y_scale = 0.05, 0.08
    if op == "depthwise_conv2d":
        cout = cin * depth_multiplier
        wshape, axis = (1, *k, cout), 3
    else:
        wshape, axis = (cout, *k, cin), 0
    attrs = dict(strides=strides, padding=padding, dilation=dilation, activation=activation)
    if op == "depthwise_conv2d":
        attrs["depth_multiplier"] = depth_multiplier
    if dtype == "float32":
        x = b.input("x", (1, *hw, cin), "float32")
        w = b.constant("w", rng.standard_normal(wshape).astype(np.float32))
        bt = b.constant("b", rng.standard_normal(cout).astype(np.float32)) if bias else None
        y = b.op(op, [x, w, bt], **attrs)
        return b.build([y])
    if dtype == "int16":  # 16x8: symmetric activations, an int64 bias
        x_zp = y_zp = 0
    x = b.input("x", (1, *hw, cin), dtype, Q(x_scale, x_zp))
    ws = rng.uniform(0.002, 0.05, cout if per_channel else 1).astype(np.float32)
    wq = per_axis(ws, axis) if per_channel else Q(float(ws[0]), 0)
    w = b.constant("w", weights_int8(rng, wshape), quant=wq)
    bt = None
    if bias:
        bs = (np.float32(x_scale) * np.broadcast_to(ws, (cout,))).astype(np.float32)
        bq = per_axis(bs, 0) if per_channel else Q(float(bs[0]), 0)
        bias_type = np.int64 if dtype == "int16" else np.int32
        bt = b.constant("b", rng.integers(-3000, 3000, cout).astype(bias_type), quant=bq)
    shape = (1, *_out_hw(hw, k, strides, dilation, padding), cout)
    y = b.op(op, [x, w, bt], out_type=TensorType(shape, dtype, Q(y_scale, y_zp)), **attrs)
    if residual:
        # residual="channel": one value per channel, broadcast over the pixels
        r = b.input("r", (1, 1, 1, cout) if residual == "channel" else shape, "int8",
                    Q(0.06, -7))
        y = b.op("add", [y, r], out_type=TensorType(shape, "int8", Q(0.1, 2)),
                 activation="relu")
    return b.build([y])


def dense_graph(*, seed=0, dtype="int8", rows=2, depth=12, units=5, per_channel=False,
                bias=True, activation="none", w_zp=0, keep_num_dims=False):
    rng = np.random.default_rng(seed)
    b = GraphBuilder("dense")
    shape = (rows, 1, depth) if keep_num_dims else (rows, depth)
    if dtype == "float32":
        x = b.input("x", shape, "float32")
        w = b.constant("w", rng.standard_normal((units, depth)).astype(np.float32))
        bt = b.constant("b", rng.standard_normal(units).astype(np.float32)) if bias else None
        return b.build([b.op("dense", [x, w, bt], activation=activation,
                             keep_num_dims=keep_num_dims)])
    x_scale = 0.05
    wide = dtype == "int16"
    x = b.input("x", shape, dtype, Q(x_scale, 0 if wide else 4))
    ws = rng.uniform(0.002, 0.05, units if per_channel else 1).astype(np.float32)
    wq = per_axis(ws, 0) if per_channel else Q(float(ws[0]), w_zp)
    w = b.constant("w", weights_int8(rng, (units, depth)), quant=wq)
    bt = None
    if bias:
        bs = (np.float32(x_scale) * np.broadcast_to(ws, (units,))).astype(np.float32)
        bq = per_axis(bs, 0) if per_channel else Q(float(bs[0]), 0)
        bdt = np.int64 if wide else np.int32
        bt = b.constant("b", rng.integers(-3000, 3000, units).astype(bdt), quant=bq)
    out_shape = (rows, 1, units) if keep_num_dims else (rows, units)
    y = b.op("dense", [x, w, bt], activation=activation, keep_num_dims=keep_num_dims,
             out_type=TensorType(out_shape, dtype, Q(0.07, 0 if wide else -6)))
    return b.build([y])


def pool_graph(op, *, seed=0, dtype="int8", hw=(7, 6), c=3, pool=(3, 3), strides=(2, 2),
               padding=(0, 0, 0, 0), activation="none"):
    del seed
    b = GraphBuilder(op)
    q = None if dtype == "float32" else Q(0.05, -3)
    x = b.input("x", (1, *hw, c), dtype, q)
    return b.build([b.op(op, [x], pool_size=pool, strides=strides, padding=padding,
                         activation=activation)])


def binary_graph(op, *, dtype="int8", a_shape=(2, 3, 4), b_shape=(2, 3, 4), activation="none",
                 scales=(0.05, 0.03, 0.07)):
    b = GraphBuilder(op)
    if dtype == "float32":
        x1 = b.input("a", a_shape, dtype)
        x2 = b.input("b", b_shape, dtype)
        attrs = {} if op in ("maximum", "minimum") else {"activation": activation}
        return b.build([b.op(op, [x1, x2], **attrs)])
    x1 = b.input("a", a_shape, dtype, Q(scales[0], 0 if dtype == "int16" else 3))
    x2 = b.input("b", b_shape, dtype, Q(scales[1], 0 if dtype == "int16" else -9))
    shape = tuple(np.broadcast_shapes(a_shape, b_shape))
    yq = Q(scales[2], 0 if dtype == "int16" else 4)
    return b.build([b.op(op, [x1, x2], activation=activation,
                         out_type=TensorType(shape, dtype, yq))])


def softmax_graph(*, dtype="int8", out_dtype="same", shape=(3, 10), beta=1.0, x_scale=0.1):
    b = GraphBuilder("softmax")
    if dtype == "float32":
        x = b.input("x", shape, "float32")
        return b.build([b.op("softmax", [x], beta=beta)])
    x = b.input("x", shape, dtype, Q(x_scale, 0 if dtype == "int16" else -5))
    out = dtype if out_dtype == "same" else out_dtype
    yq = {"int8": Q(1 / 256, -128), "int16": Q(1 / 32768, 0) if dtype == "int16"
          else Q(1 / 65536, -32768)}[out]
    return b.build([b.op("softmax", [x], beta=beta, out_dtype=out_dtype,
                         out_type=TensorType(shape, out, yq))])


def quantize_graph(*, src="float32", dst="int8"):
    b = GraphBuilder("quantize")
    q_in = None if src == "float32" else Q(0.02, 0 if src == "int16" else 7)
    x = b.input("x", (4, 9), src, q_in)
    y = b.op("quantize", [x], out_dtype=dst,
             out_type=TensorType((4, 9), dst, Q(0.05, 0 if dst == "int16" else -6)))
    return b.build([y, b.op("dequantize", [y])])


def svdf_graph(*, dtype="int8", batch=2, depth=5, filters=6, memory=4, rank=2, bias=True,
               activation="none", state="int16", state_zp=0, seed=0):
    """``state``: int16 (int16 time weights) or int8 (int8 time weights)."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder("svdf")
    units = filters // rank
    if dtype == "float32":
        x = b.input("x", (batch, depth), "float32")
        wf = b.constant("wf", rng.standard_normal((filters, depth)).astype(np.float32))
        wt = b.constant("wt", rng.standard_normal((filters, memory)).astype(np.float32))
        bt = b.constant("b", rng.standard_normal(units).astype(np.float32)) if bias else None
        st = b.variable("state", (batch, filters * memory), "float32")
        return b.build([b.op("svdf", [x, wf, wt, bt, st], rank=rank, activation=activation)])
    x = b.input("x", (batch, depth), "int8", Q(0.05, 3))
    wf = b.constant("wf", weights_int8(rng, (filters, depth)), quant=Q(0.01, 0))
    info = np.iinfo(state)
    wt = b.constant("wt", rng.integers(info.min + 1, info.max + 1,
                                       (filters, memory)).astype(state), quant=Q(0.0002, 0))
    st_scale = 0.002 if state == "int16" else 0.05  # the int8 state saturates now and then
    bt = (b.constant("b", rng.integers(-30000, 30000, units).astype(np.int32),
                     quant=Q(st_scale * 0.0002, 0)) if bias else None)
    st = b.variable("state", (batch, filters * memory), state, Q(st_scale, state_zp))
    y = b.op("svdf", [x, wf, wt, bt, st], rank=rank, activation=activation,
             out_type=TensorType((batch, units), "int8", Q(0.03, -2)))
    return b.build([y])


def lstm_graph(*, batch=2, steps=3, depth=4, n_cell=5, time_major=False, cell_clip=0.0,
               h_zp=3, cell_scale=2.0 ** -11, dtype="int8", seed=0):
    """``dtype``: int8, or int16 (16x8: int16 input and hidden state, zero points 0,
    int64 biases)."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder("lstm")
    wide = dtype == "int16"
    x_shape = (steps, batch, depth) if time_major else (batch, steps, depth)
    x_scale = 0.02 / 256 if wide else 0.02
    h_zp = 0 if wide else h_zp
    x = b.input("x", x_shape, dtype, Q(x_scale, 0 if wide else -4))
    h_scale = 0.008 / 256 if wide else 0.008
    ins = [x]
    for i in range(8):
        cols = depth if i < 4 else n_cell
        scale = float(rng.uniform(0.004, 0.012))
        ins.append(b.constant(f"w{i}", weights_int8(rng, (n_cell, cols)), quant=Q(scale, 0)))
    ins += [None, None, None]
    for i in range(4):
        bias = rng.integers(-2000, 2000, n_cell) * (256 if wide else 1)
        ins.append(b.constant(f"b{i}", bias.astype(np.int64 if wide else np.int32),
                              quant=Q(x_scale * 0.008, 0)))
    ins += [None, None]
    ins.append(b.variable("hidden", (batch, n_cell), dtype, Q(h_scale, h_zp)))
    ins.append(b.variable("cell", (batch, n_cell), "int16", Q(cell_scale, 0)))
    ins += [None] * 4
    y_shape = x_shape[:2] + (n_cell,)
    y = b.op("lstm", ins, time_major=time_major, cell_clip=cell_clip,
             out_type=TensorType(y_shape, dtype, Q(h_scale, h_zp)))
    return b.build([y])
