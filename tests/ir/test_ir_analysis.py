"""MACs and the activation lower bound on hand-counted toy graphs."""

from __future__ import annotations

import numpy as np
import pytest

from aot.ir import GraphBuilder
from aot.ir.analysis import activation_peak, node_macs, summarize


def _diamond():
    """x -> a -> (b, c) -> add: a stays alive while b and c are computed."""
    b = GraphBuilder()
    x = b.input("x", (1, 100), "int8")       # 100 bytes
    a = b.op("relu", [x])                    # 100
    r = b.op("reshape", [a], newshape=(1, 10, 10))
    c1 = b.op("relu", [r])                   # 100
    c2 = b.op("tanh", [r])                   # 100
    y = b.op("add", [c1, c2])                # 100
    return b.build([y])


def test_peak_of_a_diamond():
    peak = activation_peak(_diamond())
    # Live bytes per step, graph input x and output y included:
    #   0 relu x,a 200 | 1 reshape a,r 200 | 2 relu r,c1 200 | 3 tanh r,c1,c2 300
    #   4 add c1,c2,y 300.  Without x and y, step 4 drops to 200.
    assert (peak.bytes_with_io, peak.step_with_io) == (300, 3)
    assert (peak.bytes_without_io, peak.step_without_io) == (300, 3)


def test_inputs_count_only_when_asked():
    b = GraphBuilder()
    x = b.input("x", (1, 1000), "float32")   # 4000 bytes, read by the first node only
    y = b.op("relu", [x])
    z = b.op("reshape", [y], newshape=(1000,))
    g = b.build([z])
    peak = activation_peak(g)
    assert (peak.bytes_with_io, peak.step_with_io) == (8000, 0)
    assert (peak.bytes_without_io, peak.step_without_io) == (4000, 0)


def test_macs_by_definition():
    b = GraphBuilder()
    x = b.input("x", (1, 8, 8, 3), "float32")
    w = b.constant("w", np.zeros((4, 3, 3, 3), np.float32))
    y = b.op("conv2d", [x, w], strides=(2, 2), padding=(0, 0, 1, 1))  # 1x4x4x4 out
    dw = b.constant("dw", np.zeros((1, 3, 3, 8), np.float32))
    z = b.op("depthwise_conv2d", [y, dw], depth_multiplier=2, padding=(1, 1, 1, 1))
    f = b.op("reshape", [z], newshape=(2, 64))
    fw = b.constant("fw", np.zeros((5, 64), np.float32))
    out = b.op("dense", [f, fw])
    g = b.build([out])
    assert [node_macs(n) for n in g.nodes] == [
        1 * 4 * 4 * 4 * 3 * 3 * 3,   # conv: N*OH*OW*OC*KH*KW*IC
        1 * 4 * 4 * 8 * 3 * 3,       # depthwise: N*OH*OW*OC*KH*KW
        0,
        2 * 5 * 64,                  # dense: rows*units*depth
    ]
    info = summarize(g)
    assert info["total_macs"] == 1728 + 1152 + 640
    assert info["param_bytes"] == (4 * 27 + 72 + 320) * 4
    assert info["operators"] == {"conv2d": 1, "dense": 1, "depthwise_conv2d": 1, "reshape": 1}


@pytest.mark.parametrize("adj_x", [False, True])
def test_batch_matmul_macs_are_outputs_times_depth(adj_x):
    b = GraphBuilder()
    lhs = b.input("a", (2, 1, 5, 3) if adj_x else (2, 1, 3, 5), "float32")
    rhs = b.input("b", (4, 5, 6), "float32")
    g = b.build([b.op("batch_matmul", [lhs, rhs], adj_x=adj_x, adj_y=False)])
    assert g.nodes[0].outputs[0].shape == (2, 4, 3, 6)
    assert node_macs(g.nodes[0]) == 2 * 4 * 3 * 6 * 5


def test_transpose_conv2d_macs_count_every_scattered_tap():
    # was 0: the operator fell through to "not multiply-accumulate bound", so
    # `aot inspect` under-reported every upsampling model
    b = GraphBuilder()
    x = b.input("x", (1, 3, 5, 4), "float32")
    w = b.constant("w", np.zeros((6, 3, 2, 4), np.float32))
    g = b.build([b.op("transpose_conv2d", [x, w], strides=(2, 2), padding=(1, 0),
                      output_size=(5, 10))])
    assert node_macs(g.nodes[0]) == 1 * 3 * 5 * 4 * 3 * 2 * 6   # N*IH*IW*IC*KH*KW*OC
    assert summarize(g)["total_macs"] == 1 * 3 * 5 * 4 * 3 * 2 * 6
