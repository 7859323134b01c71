"""Open input sizes in ONNX models (aot.frontend.shapes): ``input_shapes`` /
``--input-shape``, the batch-1 default with its notice, and the errors.

The model is what PyTorch exports for ``x.view(x.size(0), -1)`` after a
conv block with ``dynamic_axes={"x": {0: "N"}}``: a symbolic batch ``N`` and
a Shape -> Gather -> Unsqueeze -> Concat -> Reshape flatten.  Outputs are
compared with onnxruntime within 1e-5 of the largest output magnitude, as in
test_onnx_ops.py.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from support.models import MODELS_DIR
from support.onnx_oracle import ort_session

from aot.cli import main
from aot.compile import compile_model
from aot.errors import AotWarning
from aot.frontend import ModelError, load_model
from aot.frontend.onnx import parse_onnx
from aot.reference.interpreter import run

FLOAT = TensorProto.FLOAT
HELLO = MODELS_DIR / "tflm_hello_world_int8.tflite"


def _rand(shape, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)


def torch_flatten_model(x_shape=("N", 3, 8, 8)) -> bytes:
    """Conv -> Relu -> MaxPool -> view(N, -1) -> Linear, as torch.onnx.export writes it."""
    inits = {"w": _rand((4, 3, 3, 3), 1), "b": _rand((4,), 2), "W": _rand((10, 64), 3),
             "B": _rand((10,), 4), "i0": np.array(0, np.int64),
             "axes": np.array([0], np.int64), "minus1": np.array([-1], np.int64)}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Shape", ["p"], ["s"]),
             helper.make_node("Gather", ["s", "i0"], ["n"], axis=0),
             helper.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
             helper.make_node("Concat", ["n1", "minus1"], ["target"], axis=0),
             helper.make_node("Reshape", ["p", "target"], ["flat"]),
             helper.make_node("Gemm", ["flat", "W", "B"], ["y"], transB=1)]
    graph = helper.make_graph(
        nodes, "torch_flatten", [helper.make_tensor_value_info("x", FLOAT, list(x_shape))],
        [helper.make_tensor_value_info("y", FLOAT, ["N", 10])],
        initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model.SerializeToString()


def _assert_matches_onnxruntime(data: bytes, x: np.ndarray, ours: np.ndarray) -> None:
    want = ort_session(data).run(None, {"x": x})[0]
    assert ours.shape == want.shape
    np.testing.assert_allclose(ours, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@pytest.fixture
def model_path(tmp_path):
    path = tmp_path / "torch_flatten.onnx"
    path.write_bytes(torch_flatten_model())
    return path


# ---------------------------------------------------------------------- import

def test_symbolic_batch_becomes_1_with_a_notice_naming_the_input():
    data = torch_flatten_model()
    with pytest.warns(AotWarning, match=r"graph input 'x': dimension 0 \(the batch\) has the "
                      r"symbolic size 'N'; compiling it as 1 \(set it with --input-shape x="):
        graph = parse_onnx(data)
    assert graph.inputs[0].shape == (1, 3, 8, 8) and graph.outputs[0].shape == (1, 10)
    # The shape subgraph was evaluated at import: only the layers and the
    # layout changes (NCHW input to NHWC, the flatten) are left.
    assert [n.op for n in graph.nodes] == ["transpose", "conv2d", "relu", "max_pool2d",
                                           "reshape", "dense"]
    x = _rand((1, 3, 8, 8), 5)
    _assert_matches_onnxruntime(data, x, run(graph, [x])[0])


def test_unknown_batch_size_also_becomes_1():
    with pytest.warns(AotWarning, match="dimension 0 \\(the batch\\) has no fixed size"):
        graph = parse_onnx(torch_flatten_model((None, 3, 8, 8)))
    assert graph.inputs[0].shape == (1, 3, 8, 8)


@pytest.mark.parametrize("batch", [1, 3])
def test_input_shapes_fix_the_batch_without_a_notice(batch):
    data = torch_flatten_model()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        graph = parse_onnx(data, input_shapes={"x": (batch, 3, 8, 8)})
    assert graph.outputs[0].shape == (batch, 10)
    x = _rand((batch, 3, 8, 8), 6)
    _assert_matches_onnxruntime(data, x, run(graph, [x])[0])


def test_fixed_model_gives_no_notice():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parse_onnx(torch_flatten_model((2, 3, 8, 8)))


def test_input_without_a_shape_takes_the_given_one():
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "noshape",
                              [helper.make_tensor_value_info("x", FLOAT, None)],
                              [helper.make_tensor_value_info("y", FLOAT, None)])
    data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    data = data.SerializeToString()
    assert parse_onnx(data, input_shapes={"x": [2, 5]}).outputs[0].shape == (2, 5)
    with pytest.raises(ModelError, match="graph input 'x' has no shape; give one with "
                       "--input-shape NAME=D0,D1,..."):
        parse_onnx(data)


# ---------------------------------------------------------------------- errors

SHAPE_ERRORS = {
    "not_an_input": ({"image": (1, 3, 8, 8)}, "an input shape is given for 'image', which is "
                     "not an input of the model; its inputs: 'x' [N, 3, 8, 8]"),
    "initializer_is_not_an_input": ({"w": (4, 3, 3, 3)}, "given for 'w', which is not an "
                                    "input of the model"),
    "rank": ({"x": (1, 3, 64)}, "graph input 'x': the input shape (1,3,64) has 3 dimensions "
             "but the model declares [N, 3, 8, 8] (4 dimensions)"),
    "zero": ({"x": (0, 3, 8, 8)}, "graph input 'x': the input shape (0,3,8,8) has the size 0; "
             "sizes must be positive (the model declares [N, 3, 8, 8])"),
    "negative": ({"x": (1, 3, -1, 8)}, "has the size -1; sizes must be positive"),
    "contradicts": ({"x": (1, 4, 8, 8)}, "graph input 'x': the input shape (1,4,8,8) sets "
                    "dimension 1 to 4, but the model declares [N, 3, 8, 8] (dimension 1 is 3)"),
    "not_integers": ({"x": "1,3,8,8"}, "input shape for 'x' must be a sequence of integers"),
}


@pytest.mark.parametrize("shapes,expected", SHAPE_ERRORS.values(), ids=SHAPE_ERRORS.keys())
def test_bad_input_shapes_name_the_input_and_the_declared_shape(shapes, expected):
    with pytest.raises(ModelError) as info:
        parse_onnx(torch_flatten_model(), input_shapes=shapes)
    assert expected in str(info.value)


def test_other_symbolic_dimensions_are_refused_with_the_fix():
    with pytest.raises(ModelError) as info:
        parse_onnx(torch_flatten_model(("N", 3, "H", "W")))
    message = str(info.value)
    assert ("graph input 'x' has a dynamic shape: dimension 2 has the symbolic size 'H' "
            "(the model declares [N, 3, H, W]); fix it with --input-shape NAME=D0,D1,... "
            "(input_shapes={NAME: (D0, D1, ...)} in Python)") in message
    graph = parse_onnx(torch_flatten_model(("N", 3, "H", "W")),
                       input_shapes={"x": (1, 3, 8, 8)})
    assert graph.outputs[0].shape == (1, 10)


def test_tflite_shapes_may_only_be_restated():
    name = load_model(HELLO).inputs[0].name
    shape = load_model(HELLO).inputs[0].shape
    assert load_model(HELLO, {name: shape}).inputs[0].shape == shape
    with pytest.raises(ModelError, match=f"graph input '{name}': the input shape .* sets "
                       "dimension 0 to 4, but the model declares"):
        load_model(HELLO, {name: (4,) + tuple(shape[1:])})
    with pytest.raises(ModelError, match="given for 'nope', which is not an input"):
        load_model(HELLO, {"nope": (1,)})


def test_compile_model_passes_the_shapes_on(model_path):
    compiled = compile_model(model_path, "host/native", input_shapes={"x": (2, 3, 8, 8)},
                             measure_code=False)
    assert compiled.graph.inputs[0].shape == (2, 3, 8, 8)


# ---------------------------------------------------------------------- command line

@pytest.mark.slow
def test_aot_run_on_the_host_with_and_without_input_shape(model_path, tmp_path, capsys):
    data = model_path.read_bytes()
    x1 = _rand((2, 1, 3, 8, 8), 7)  # two invocations of batch 1
    np.save(tmp_path / "x1.npy", x1)
    assert main(["run", str(model_path), "--input", str(tmp_path / "x1.npy"),
                 "--output", str(tmp_path / "y1.npy")]) == 0
    err = capsys.readouterr().err
    assert ("note: graph input 'x': dimension 0 (the batch) has the symbolic size 'N'; "
            "compiling it as 1") in err
    y1 = np.load(tmp_path / "y1.npy")
    for i in range(2):
        _assert_matches_onnxruntime(data, x1[i], y1[i])

    x3 = _rand((1, 3, 3, 8, 8), 8)  # one invocation of batch 3
    np.save(tmp_path / "x3.npy", x3)
    assert main(["run", str(model_path), "--input-shape", "x=3,3,8,8", "--input",
                 str(tmp_path / "x3.npy"), "--output", str(tmp_path / "y3.npy")]) == 0
    assert "note:" not in capsys.readouterr().err
    _assert_matches_onnxruntime(data, x3[0], np.load(tmp_path / "y3.npy")[0])


def _compile(model_path, tmp_path, argv) -> int:
    return main(["compile", str(model_path), "--board", "host/native", "-o",
                 str(tmp_path / "out"), *argv])


@pytest.mark.parametrize("value", ["x=1,a,8,8", "x", "=1,3", "x="])
def test_malformed_input_shape_is_a_usage_error(model_path, tmp_path, capsys, value):
    with pytest.raises(SystemExit) as info:
        _compile(model_path, tmp_path, ["--input-shape", value])
    assert info.value.code == 2
    assert (f"argument --input-shape: {value!r}: expected NAME=D0,D1,... with integer sizes"
            in capsys.readouterr().err)


@pytest.mark.parametrize("argv,expected", [
    (["--input-shape", "x=1,3,8,8", "--input-shape", "x=2,3,8,8"],
     "error: --input-shape gives the input 'x' twice"),
    (["--input-shape", "x=1,3,9,8"], "error: graph input 'x': the input shape (1,3,9,8) sets "
     "dimension 2 to 9, but the model declares [N, 3, 8, 8]"),
    (["--input-shape", "y=1,3,8,8"], "error: an input shape is given for 'y', which is not "
     "an input of the model; its inputs: 'x' [N, 3, 8, 8]"),
], ids=["twice", "contradicts", "not_an_input"])
def test_bad_input_shape_options_are_one_line_errors(model_path, tmp_path, capsys, argv,
                                                     expected):
    assert _compile(model_path, tmp_path, argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("aot compile: error:") and err.count("\n") == 1
    assert expected in err


@pytest.mark.parametrize("command", ["inspect", "interpret", "verify", "tune"])
def test_every_command_that_loads_a_model_takes_input_shape(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    assert "--input-shape NAME=D0,D1,..." in capsys.readouterr().out


def test_inspect_with_input_shape(model_path, capsys):
    assert main(["inspect", str(model_path), "--input-shape", "x=5,3,8,8"]) == 0
    assert "float32[5,10]" in capsys.readouterr().out


def test_verify_on_the_host_takes_input_shape(model_path, tmp_path, capsys):
    report = tmp_path / "report.json"
    assert main(["verify", str(model_path), "--board", "host/native", "--input-shape",
                 "x=2,3,8,8", "--report", str(report)]) == 0
    assert "PASS" in capsys.readouterr().out


# ---------------------------------------------------------------------- shape arithmetic

def _shape_model(nodes, x_shape, inits, opset: int = 13) -> bytes:
    graph = helper.make_graph(
        nodes, "shapes", [helper.make_tensor_value_info("x", FLOAT, list(x_shape))],
        [helper.make_tensor_value_info("y", FLOAT, None)],
        initializer=[numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model.SerializeToString()


def _i64(*values) -> np.ndarray:
    return np.array(values, np.int64)


def _node(op, inputs, outputs, **attrs):
    return helper.make_node(op, inputs, outputs, **attrs)


SHAPE_SUBGRAPHS = {
    # tf2onnx / Keras Flatten: Shape -> Slice -> Concat(-1) -> Reshape.
    "shape_slice_concat": ([
        _node("Shape", ["x"], ["s"]),
        _node("Slice", ["s", "zero", "one"], ["n"]),
        _node("Concat", ["n", "minus1"], ["target"], axis=0),
        _node("Reshape", ["x", "target"], ["y"])],
        {"zero": _i64(0), "one": _i64(1), "minus1": _i64(-1)}),
    # Sizes computed in float and cast back, as exported `h // 2` arithmetic looks.
    "cast_div_floor": ([
        _node("Shape", ["x"], ["s"]),
        _node("Cast", ["s"], ["sf"], to=TensorProto.DOUBLE),
        _node("Div", ["sf", "two"], ["half"]),
        _node("Floor", ["half"], ["fl"]),
        _node("Cast", ["fl"], ["si"], to=TensorProto.INT64),
        _node("Slice", ["si", "one", "two_i"], ["c2"]),  # floor(4 / 2) = 2
        _node("Slice", ["s", "two_i", "four"], ["hw"]),
        _node("ReduceProd", ["hw"], ["area"], keepdims=1),
        _node("Mul", ["area", "two_i"], ["size"]),  # 3 * 5 * 2 = 30
        _node("Slice", ["s", "zero", "one"], ["n"]),
        _node("Div", ["n", "two_i"], ["n2"]),  # integer division: 1 / 2 = 0
        _node("Max", ["n2", "one"], ["n3"]),
        _node("Concat", ["n3", "c2", "size"], ["target"], axis=0),
        _node("Reshape", ["x", "target"], ["y"])],
        {"two": np.array(2.0), "two_i": _i64(2), "four": _i64(4), "zero": _i64(0),
         "one": _i64(1)}),
    # ConstantOfShape / Expand / Range / Where / Equal on shapes.
    "constant_of_shape": ([
        _node("Shape", ["x"], ["s"]),
        _node("Size", ["x"], ["numel"]),
        _node("Gather", ["s", "idx"], ["c_hw"]),  # [C, H, W]
        _node("ReduceProd", ["c_hw"], ["chw"], keepdims=0),
        _node("Div", ["numel", "chw"], ["batch"]),
        _node("Unsqueeze", ["batch", "zero"], ["batch1"]),
        _node("ConstantOfShape", ["two"], ["ones"],
              value=numpy_helper.from_array(np.array([1], np.int64))),
        _node("Equal", ["ones", "ones"], ["same"]),
        _node("Where", ["same", "minus1", "ones"], ["rest"]),
        _node("Range", ["r0", "r2", "r1"], ["ar"]),
        _node("Sub", ["ar", "ar"], ["zeros"]),
        _node("Add", ["rest", "zeros"], ["rest2"]),
        _node("Slice", ["rest2", "zero", "one"], ["m1"]),
        _node("Expand", ["m1", "one"], ["m1e"]),
        _node("Concat", ["batch1", "m1e"], ["target"], axis=0),
        _node("Reshape", ["x", "target"], ["y"])],
        {"idx": _i64(1, 2, 3), "zero": _i64(0), "one": _i64(1), "two": _i64(2),
         "minus1": _i64(-1), "r0": np.array(0, np.int64), "r1": np.array(1, np.int64),
         "r2": np.array(2, np.int64)}),
}


@pytest.mark.parametrize("nodes,inits", SHAPE_SUBGRAPHS.values(), ids=SHAPE_SUBGRAPHS.keys())
def test_shape_subgraphs_are_evaluated_at_import(nodes, inits):
    data = _shape_model(nodes, ("N", 4, 3, 5), inits)
    with pytest.warns(AotWarning):
        graph = parse_onnx(data)
    assert {n.op for n in graph.nodes} <= {"reshape"}, [n.op for n in graph.nodes]
    x = _rand((1, 4, 3, 5), 9)
    _assert_matches_onnxruntime(data, x, run(graph, [x])[0])


DYNAMIC = {
    "data_into_shape": (
        [_node("Relu", ["x"], ["r"], name="act"),
         _node("Cast", ["r"], ["ri"], to=TensorProto.INT64, name="to_int"),
         _node("Reshape", ["x", "ri"], ["y"])],
        # Cast runs at run time now; the Reshape's shape is what cannot.
        "node 2 (Reshape): shape (input 1) must be known at import, but its value 'ri' is "
        "computed at run time by node 1 ('to_int', Cast) (from data, not from shapes or "
        "constants); dynamic shapes are not supported"),
    "data_into_range": (
        [_node("Relu", ["x"], ["r"], name="act"),
         _node("Range", ["r", "r", "r"], ["y"], name="range")],
        "node 1 ('range', Range): Range is only evaluated at import, on values known then "
        "(shapes and constants), but its value 'r' is computed at run time by node 0 ('act', "
        "Relu) (from data, not from shapes or constants); dynamic shapes are not supported"),
    "graph_input_as_shape": (
        [_node("Reshape", ["x", "x"], ["y"], name="reshape")],
        "node 0 ('reshape', Reshape): shape (input 1) must be known at import, but its value "
        "'x' is a graph input, known only at run time"),
}


@pytest.mark.parametrize("nodes,expected", DYNAMIC.values(), ids=DYNAMIC.keys())
def test_dynamic_shapes_left_after_folding_name_the_tensor_and_its_node(nodes, expected):
    with pytest.raises(ModelError) as info:
        parse_onnx(_shape_model(nodes, (1, 4), {}))
    assert expected in str(info.value)


def test_folded_values_have_a_size_limit():
    nodes = [_node("ConstantOfShape", ["big"], ["c"]), _node("Add", ["x", "c"], ["y"])]
    with pytest.raises(ModelError, match="would have 1099511627776 elements"):
        parse_onnx(_shape_model(nodes, (1, 4), {"big": _i64(1 << 20, 1 << 20)}))


@pytest.mark.parametrize("node,inits", [
    (_node("Range", ["a", "b", "d"], ["c"]),
     {"a": np.array(0.0, np.float32), "b": np.array(np.inf, np.float32),
      "d": np.array(1.0, np.float32)}),
    (_node("Range", ["a", "b", "d"], ["c"]),
     {"a": np.array(0, np.int64), "b": np.array(5, np.int64), "d": np.array(0, np.int64)}),
    (_node("ConstantOfShape", ["a"], ["c"]), {"a": _i64(2**40, 2**40, 2**40, 2**40)}),
    (_node("Expand", ["a", "b"], ["c"]), {"a": _i64(1), "b": _i64(-5)}),
    (_node("Div", ["a", "b"], ["c"]), {"a": _i64(4), "b": _i64(0)}),
], ids=["range_inf", "range_zero_delta", "huge_shape", "negative_expand", "div_zero"])
def test_malformed_shape_arithmetic_is_a_model_error(node, inits):
    nodes = [node, _node("Reshape", ["x", "c"], ["y"])]
    with pytest.raises(ModelError, match=r"node 0 \("):
        parse_onnx(_shape_model(nodes, (1, 4), inits))


@pytest.mark.parametrize("case", sorted(SHAPE_SUBGRAPHS))
def test_mutated_shape_subgraphs_raise_only_model_errors(case):
    """Changed bytes either still import or raise ModelError; nothing else escapes."""
    nodes, inits = SHAPE_SUBGRAPHS[case]
    good = _shape_model(nodes, (1, 4, 3, 5), inits)
    parse_onnx(good)
    rng = np.random.default_rng(11)
    for _ in range(150):
        data = bytearray(good)
        for pos in rng.integers(0, len(data), int(rng.integers(1, 4))):
            data[pos] = int(rng.integers(0, 256))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                parse_onnx(bytes(data))
        except ModelError:
            pass
