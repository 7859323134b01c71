"""``aot run`` at the ONNX graph's boundaries: a model with no inputs (constants
only) runs once with nothing to feed and its outputs keep their ONNX names;
inputs that declare a size 0 are refused by name."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from aot.cli import main
from aot.frontend import ModelError
from aot.frontend.onnx import parse_onnx

FLOAT = TensorProto.FLOAT


def _save(tmp_path, nodes, inputs, outputs, name="m"):
    graph = helper.make_graph(nodes, "t", [helper.make_tensor_value_info(*i) for i in inputs],
                              [helper.make_tensor_value_info(*o) for o in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, str(path))
    return path


def _constants(tmp_path):
    value = helper.make_tensor("v", FLOAT, [2, 2], [1.0, 2.0, 3.0, 4.0])
    nodes = [helper.make_node("Constant", [], ["y"], value=value),
             helper.make_node("Shape", ["y"], ["s"])]
    return _save(tmp_path, nodes, [], [("y", FLOAT, None), ("s", TensorProto.INT64, None)],
                 "consts")


def test_a_model_without_inputs_runs_once_and_prints_its_outputs(tmp_path, capsys):
    assert main(["run", str(_constants(tmp_path))]) == 0
    out = capsys.readouterr().out
    assert "1 invocation of consts on host/native (no inputs); outputs:" in out
    assert "output 0 'y' float32[2, 2]:" in out and "[[1. 2.]  [3. 4.]]" in out
    assert "output 1 's' int64[2]:" in out


def test_a_model_without_kernels_is_refused_by_the_llvm_jit_saying_why(tmp_path, capsys):
    # No kernel at all is not "every kernel hand-written C" (the old message).
    assert main(["run", str(_constants(tmp_path)), "--target", "llvm", "--json"]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert "no operator left to run" in error and "host/native" in error


def test_a_model_without_inputs_in_json(tmp_path, capsys):
    assert main(["run", str(_constants(tmp_path)), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["invocations"] == 1 and summary["inputs"] == "no inputs"
    assert [o["name"] for o in summary["outputs"]] == ["y", "s"]
    assert summary["outputs"][0]["values"] == [[[1.0, 2.0], [3.0, 4.0]]]
    assert summary["outputs"][1]["values"] == [[2, 2]]


@pytest.mark.parametrize("extra, option", [(["--fill", "zeros"], "--fill"),
                                           (["--input", "x.npy"], "--input")])
def test_inputs_for_a_model_without_inputs_are_refused(extra, option, tmp_path, capsys):
    np.save(tmp_path / "x.npy", np.zeros((1, 2), np.float32))
    extra = [str(tmp_path / e) if e.endswith(".npy") else e for e in extra]
    assert main(["run", str(_constants(tmp_path)), *extra]) == 2
    assert (f"consts has no inputs: {option} has nothing to feed; drop {option} (the model "
            "runs once)") in capsys.readouterr().err


def test_constant_outputs_keep_their_onnx_names():
    value = helper.make_tensor("v", FLOAT, [3], [1.0, 2.0, 3.0])
    graph = helper.make_graph([helper.make_node("Constant", [], ["c"], value=value)], "t", [],
                              [helper.make_tensor_value_info("c", FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    assert [t.name for t in parse_onnx(model.SerializeToString()).outputs] == ["c"]


@pytest.mark.parametrize("shape, dim", [([0, 3], 0), ([3, 0], 1)])
def test_an_input_declaring_size_zero_is_refused(shape, dim, tmp_path, capsys):
    path = _save(tmp_path, [helper.make_node("Relu", ["x"], ["y"])], [("x", FLOAT, shape)],
                 [("y", FLOAT, None)])
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert (f"graph input 'x' declares the size 0 in dimension {dim} ({shape}): empty inputs "
            "are not supported (nothing to compute); if the 0 means an open size, give the "
            "shape with --input-shape") in err
    # Given a shape, a 0 that stood for an open size is replaced.
    fixed = ",".join("2" if d == 0 else str(d) for d in shape)
    assert main(["run", str(path), "--input-shape", f"x={fixed}", "--fill", "ones"]) == 0


def test_a_given_empty_shape_is_refused():
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "t",
                              [helper.make_tensor_value_info("x", FLOAT, ["n", 3])],
                              [helper.make_tensor_value_info("y", FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    with pytest.raises(ModelError, match=r"the input shape \(0,3\) has the size 0; sizes "
                                         "must be positive"):
        parse_onnx(model.SerializeToString(), input_shapes={"x": (0, 3)})
