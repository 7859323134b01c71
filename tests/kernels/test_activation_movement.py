"""Activations (LOGISTIC, TANH, LEAKY_RELU, HARD_SWISH) and data movement
(TRANSPOSE, CONCATENATION, STRIDED_SLICE, PAD) against the reference
interpreter: bit-exact for int8, within 1e-5 for float32, under ASan/UBSan,
and cross-compiled for Cortex-M4."""

from __future__ import annotations

import numpy as np
import pytest
from graphs import Q
from kernel_checks import check_graph, seeded_inputs

from aot.ir import GraphBuilder, TensorType
from aot.kernels import KernelError, lower_group
from aot.passes import annotations, optimize

# (op, attrs, input quantization, output quantization): TFLM's fixed output
# scales for logistic and tanh, any for the others
ACTIVATIONS = [
    ("logistic", {}, Q(0.1, -7), Q(1 / 256, -128)),
    ("logistic", {}, Q(0.02, 30), Q(1 / 256, -128)),
    ("tanh", {}, Q(0.05, 4), Q(1 / 128, 0)),
    ("leaky_relu", {"alpha": 0.2}, Q(0.05, -3), Q(0.04, -20)),
    ("leaky_relu", {"alpha": 1.7}, Q(0.03, 10), Q(0.1, 5)),
    ("hard_swish", {}, Q(0.04, -10), Q(0.03, -60)),
]


def _unary(op, attrs, dtype, xq=None, yq=None, shape=(3, 5, 7)):
    b = GraphBuilder(op)
    x = b.input("x", shape, dtype, xq)
    out = None if yq is None else TensorType(shape, dtype, yq)
    return b.build([b.op(op, [x], out_type=out, **attrs)])


@pytest.mark.parametrize("op, attrs, xq, yq", ACTIVATIONS,
                         ids=[f"{a[0]}-{i}" for i, a in enumerate(ACTIVATIONS)])
def test_int8_activation_is_a_table_of_the_reference(op, attrs, xq, yq):
    g = _unary(op, attrs, "int8", xq, yq, shape=(2, 128))
    x = np.arange(-128, 128, dtype=np.int8).reshape(2, 128)  # every input value
    (kernel,) = check_graph(g, [x])
    assert "[256]" in kernel.source  # one 256-entry table


@pytest.mark.parametrize("op, attrs", [("logistic", {}), ("tanh", {}),
                                       ("leaky_relu", {"alpha": 0.3}), ("hard_swish", {})])
def test_float_activation(op, attrs):
    g = _unary(op, attrs, "float32")
    x = (np.random.default_rng(3).standard_normal((3, 5, 7)) * 4).astype(np.float32)
    check_graph(g, [x])


@pytest.mark.parametrize("op", ["logistic", "tanh"])
@pytest.mark.parametrize("scale", [0.001, 1 / 4096, 1 / 2048, 3e-5])
@pytest.mark.one_fast
def test_int16_logistic_and_tanh_match_the_reference_on_every_input(op, scale):
    g = _unary(op, {}, "int16", Q(scale, 0), Q(1 / 32768, 0), shape=(256, 256))
    x = np.arange(-32768, 32768, dtype=np.int16).reshape(256, 256)
    (kernel,) = check_graph(g, [x])
    assert "[256]" in kernel.source  # the sigmoid table, not one entry per input


def test_int16_activation_is_refused_with_the_reason():
    g = _unary("hard_swish", {}, "int16", Q(0.001, 0), Q(0.001, 0))
    ag = optimize(g)
    group = next(gr for gr in annotations(ag).groups if gr.kind != "view")
    with pytest.raises(KernelError, match="hard_swish .* from int16 to int16: not supported yet"):
        lower_group(group, ag, "c", name="k")


def _movement(op, shapes, dtype="int8", **attrs):
    b = GraphBuilder(op)
    q = None if dtype == "float32" else Q(0.05, 3)
    xs = [b.input(f"x{k}", s, dtype, q) for k, s in enumerate(shapes)]
    return b.build([b.op(op, xs, **attrs)])


MOVEMENT = [
    ("transpose", [(2, 3, 4)], {"perm": (2, 0, 1)}),
    ("transpose", [(1, 5, 6, 3)], {"perm": (0, 3, 1, 2)}),
    ("concatenate", [(2, 3, 4), (2, 5, 4), (2, 1, 4)], {"axis": 1, "activation": "none"}),
    ("concatenate", [(1, 4, 4, 3), (1, 4, 4, 5)], {"axis": -1, "activation": "none"}),
    ("strided_slice", [(4, 6, 5)], {"begin": (1, 5, 0), "end": (4, -7, 5),
                                    "strides": (2, -2, 1)}),
    ("strided_slice", [(3, 8)], {"begin": (1, 2), "end": (2, 8), "strides": (1, 3),
                                 "squeeze_axes": (0,)}),
    ("pad", [(2, 3, 4)], {"pad_width": ((0, 0), (1, 2), (3, 0)), "value": 0.0}),
    ("pad", [(1, 4, 4, 2)], {"pad_width": ((0, 0), (2, 2), (0, 1), (1, 1)), "value": 0.5}),
]


@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.parametrize("op, shapes, attrs", MOVEMENT,
                         ids=[f"{m[0]}-{i}" for i, m in enumerate(MOVEMENT)])
@pytest.mark.one_fast
def test_data_movement(op, shapes, attrs, dtype):
    g = _movement(op, shapes, dtype, **attrs)
    check_graph(g, seeded_inputs(g, 9))


@pytest.mark.parametrize("op, dtype, attrs, out_shape", [
    ("concatenate", "int16", {"axis": 0, "activation": "none"}, (4, 3)),
    ("transpose", "int8", {"perm": (1, 0)}, (3, 2)),
    ("pad", "int8", {"pad_width": ((1, 0), (0, 2)), "value": 0.0}, (3, 5)),
])
def test_differently_quantized_operands_are_copied_raw(op, dtype, attrs, out_shape):
    """As TFLM: no requantization; the output reads the integers with its own
    quantization (PAD fills with the output's zero point)."""
    zp = 3 if dtype == "int8" else 0
    b = GraphBuilder(op)
    xs = [b.input("x0", (2, 3), dtype, Q(0.05, zp))]
    if op == "concatenate":
        xs.append(b.input("x1", (2, 3), dtype, Q(0.07, zp)))
    y = b.op(op, xs, **attrs, out_type=TensorType(out_shape, dtype, Q(0.2, -4 if zp else 0)))
    g = b.build([y])
    assert check_graph(g, seeded_inputs(g, 4))


def test_a_model_of_these_operators_compiles_and_runs_on_the_host_bit_exact(tmp_path):
    """Whole-model path: planner, executor and kernels, with a convolution
    whose padding stays folded and the data movement around it."""
    from aot.commands.run import run_on_host
    from aot.compile import compile_model
    from aot.reference.interpreter import run

    q = Q(0.05, 3)
    b = GraphBuilder("mixed")
    x = b.input("x", (1, 6, 5, 4), "int8", q)
    t = b.op("transpose", [x], perm=(0, 2, 1, 3))                        # 1x5x6x4
    s = b.op("strided_slice", [t], begin=(0, 0, 1, 0), end=(1, 5, 6, 4),
             strides=(1, 1, 1, 1))                                       # 1x5x5x4
    p = b.op("pad", [s], pad_width=((0, 0), (1, 0), (0, 1), (0, 0)), value=0.0)  # 1x6x6x4
    c = b.op("concatenate", [p, p], axis=3, activation="none")          # 1x6x6x8
    y = b.op("logistic", [c], out_type=TensorType((1, 6, 6, 8), "int8", Q(1 / 256, -128)))
    g = b.build([b.op("hard_swish", [y], out_type=TensorType((1, 6, 6, 8), "int8",
                                                              Q(0.01, -100)))])
    compiled = compile_model(g, "host/native", measure_code=False)
    inputs = seeded_inputs(g, 12)
    (got,) = run_on_host(compiled, [inputs[0][None]], sanitize=True, workdir=tmp_path)
    np.testing.assert_array_equal(got[0], run(g, inputs)[0])


MEANS = [
    ((1, 5, 4, 8), (1, 2), True),      # global average pooling, keepdims
    ((1, 5, 4, 8), (1, 2), False),
    ((2, 3, 7), (-1,), False),
    ((3, 6), (0, 1), False),           # down to a scalar
    ((2, 9, 3), (1,), True),
]


@pytest.mark.parametrize("dtype", ["int8", "int16", "float32"])
@pytest.mark.parametrize("shape, axes, keep", MEANS, ids=[str(m) for m in MEANS])
@pytest.mark.one_fast
def test_mean(shape, axes, keep, dtype):
    b = GraphBuilder("mean")
    if dtype == "float32":
        x = b.input("x", shape, dtype)
        g = b.build([b.op("mean", [x], axes=axes, keepdims=keep)])
    else:
        zp = 0 if dtype == "int16" else -4
        x = b.input("x", shape, dtype, Q(0.03, zp))
        reduced = {a % len(shape) for a in axes}
        out = [1 if a in reduced else d for a, d in enumerate(shape) if keep or a not in reduced]
        g = b.build([b.op("mean", [x], axes=axes, keepdims=keep,
                          out_type=TensorType(tuple(out), dtype, Q(0.02, zp)))])
    check_graph(g, seeded_inputs(g, 13))
