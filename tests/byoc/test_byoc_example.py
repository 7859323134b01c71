"""The example external codegen of docs/byoc.md, run as written."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from aot.byoc import CODEGENS, unregister
from aot.commands.run import run_on_host
from aot.compile import compile_model, resolve_target
from aot.ir import GraphBuilder
from aot.passes import PassContext, annotations, optimize
from aot.reference.interpreter import run

DOC = Path(__file__).resolve().parents[2] / "docs" / "byoc.md"


def _example_source() -> str:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.DOTALL)
    (block,) = [b for b in blocks if "register(ExternalCodegen(" in b]
    return block


@pytest.fixture
def my_relu():
    exec(compile(_example_source(), str(DOC), "exec"), {})
    yield CODEGENS["my-relu"]
    unregister("my-relu")


def _graph():
    rng = np.random.default_rng(3)
    b = GraphBuilder("example")
    x = b.input("x", (1, 4, 4, 2), "float32")
    w = b.constant("w", rng.standard_normal((3, 1, 1, 2)).astype(np.float32))
    y = b.op("conv2d", [x, w, None], name="conv")
    y = b.op("relu", [b.op("sub", [y, b.constant("c", np.float32([0.5]))], name="shift")],
             name="relu")
    return b.build([b.op("softmax", [b.op("reshape", [y], newshape=(1, 48))], name="soft")])


def test_the_documented_codegen_takes_the_float_relu_and_computes_the_same(my_relu,
                                                                           tmp_path):
    target = resolve_target("host/native", refine="c -libs=my-relu")[0]
    compiled = compile_model(_graph(), target, measure_code=False,
                             config={"fuse.max_depth": 16})
    layers = {tuple(layer["nodes"]): layer["by"] for layer in compiled.layers()}
    assert layers[("relu",)] == "my-relu"
    assert "aot" in layers.values()
    x = np.random.default_rng(0).standard_normal((3, 1, 4, 4, 2)).astype(np.float32)
    (got,) = run_on_host(compiled, [x], workdir=tmp_path)
    want = np.stack([run(_graph(), [xi])[0] for xi in x])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)


def test_the_documented_codegen_declines_what_its_predicate_refuses(my_relu):
    b = GraphBuilder("ints")
    x = b.input("x", (1, 8), "int32")
    graph = b.build([b.op("relu", [x], name="r")])
    optimized = optimize(graph, PassContext(config={"partition.tables": (my_relu.table,)}))
    (node,) = optimized.nodes
    assert annotations(optimized).declined[node] == "my-relu: int32 data (float32 only)"
    assert annotations(optimized).groups[0].kind != "external"
