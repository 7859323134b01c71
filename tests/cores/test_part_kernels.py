"""The parts of split layers compiled to C kernels accept their ranges.

Each part ``part_node`` makes (a conv's output rows with the input rows and
padding they need, a dense layer's output channels with their weights) is
compiled as a model of its own with aot's C kernels for this machine and run
on the part's input slice: its output is bit-exact with the same rows or
channels of the whole layer in the reference interpreter.  Layers: KWS's
strided first conv (padding 4 rows above and 5 below, shared out between the
parts) and its first depthwise conv, and AD's first dense layer.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.models import MODELS_DIR

from aot import reference
from aot.commands.run import run_on_host
from aot.compile import compile_model
from aot.frontend import load_model
from aot.ir import Graph, Node, Tensor
from aot.passes import PassContext, annotations, optimize, part_node


def _alone(node: Node, data_type) -> Graph:
    """``node`` as a one-layer model reading a graph input of ``data_type``."""
    x = Tensor("x", data_type, "input")
    y = Tensor("y", node.outputs[0].type)
    return Graph([x], [y], [Node(node.op, [x, *node.inputs[1:]], [y], dict(node.attrs),
                                 "layer")], "layer")


def _layers(model: str, ops: tuple[str, ...]):
    with PassContext(config={"placement.cores": 2}):
        graph = optimize(load_model(MODELS_DIR / f"{model}.tflite"))
    ann = annotations(graph)
    seen = set()
    for g in ann.groups:
        if g.anchor is not None and g.anchor.op in ops and g.anchor.op not in seen \
                and ann.devices(g.anchor)[0].part != "whole" and len(g.nodes) == 1:
            seen.add(g.anchor.op)
            yield g.anchor, ann.devices(g.anchor)


@pytest.mark.slow
@pytest.mark.parametrize("model, ops", [
    ("mlperf_kws_dscnn", ("conv2d", "depthwise_conv2d")),
    ("mlperf_ad_fc_autoencoder", ("dense",)),
])
def test_compiled_parts_match_the_whole_layer(model, ops, tmp_path):
    rng = np.random.default_rng(7)
    checked = 0
    for node, devices in _layers(model, ops):
        x_type = node.inputs[0].type
        x = rng.integers(-128, 128, x_type.shape, dtype=np.int8)
        whole = reference.run(_alone(node, x_type), [x])[0]
        for device in devices:
            part = part_node(node, device)
            data = x if part.data_rows is None else x[:, part.data_rows[0]:part.data_rows[1]]
            compiled = compile_model(_alone(part.node, part.node.inputs[0].type),
                                     "host/native", measure_code=False)
            got = run_on_host(compiled, [data[None]], workdir=tmp_path)[0][0]
            cut = [slice(None)] * whole.ndim
            cut[part.axis] = slice(*part.out)
            np.testing.assert_array_equal(got, whole[tuple(cut)], err_msg=part.node.name)
            checked += 1
    assert checked == 2 * len(ops)
