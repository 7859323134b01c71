"""The default pipeline on every shared TFLite model keeps the reference outputs bit for bit."""

from __future__ import annotations

import pytest
from pass_checks import assert_same_semantics

from aot.frontend import load_model
from aot.ir import GraphBuilder
from aot.passes import PASSES, PassContext, annotations, optimize
from support.models import MODELS_DIR

TFLITE = sorted(p.name for p in MODELS_DIR.glob("*.tflite")) if MODELS_DIR.is_dir() else []


@pytest.fixture(scope="module", params=TFLITE)
def model(request):
    return load_model(MODELS_DIR / request.param)


def test_every_node_is_in_one_group_in_order(model):
    out = optimize(model)
    groups = annotations(out).groups
    assert [n for g in groups for n in g.nodes] == out.nodes
    assert len({id(n) for n in out.nodes}) == len(out.nodes)


def test_pipeline_output_equals_the_original_graph(model):
    out = optimize(model)
    exact = all(t.dtype != "float32" for t in model.outputs)
    if exact:
        assert_same_semantics(model, out, seeds=(0, 1))
    else:
        assert_same_semantics(model, out, seeds=(0, 1), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", list(PASSES))
def test_each_pass_alone_can_be_disabled(name):
    """Disabling any one pass still gives a valid graph with the same outputs."""
    path = MODELS_DIR / "mlperf_kws_dscnn.tflite"
    if not path.exists():
        pytest.fail(f"missing shared model {path}")
    graph = load_model(path)
    out = optimize(graph, PassContext(disabled_pass=[name]))
    assert_same_semantics(graph, out, seeds=(0,))


def test_opt_level_zero_still_legalizes_and_fuses():
    b = GraphBuilder("g")
    x = b.input("x", (1, 4), "float32")
    g = b.build([b.op("relu", [b.op("relu", [x])])])
    out = optimize(g, PassContext(opt_level=0))
    assert len(annotations(out).groups) == 1


@pytest.mark.parametrize("name", ["tflm_micro_speech", "mlperf_ic_resnet8"])
def test_optimized_graph_matches_golden(name):
    """The whole pipeline's printed result, groups and folded constants included.

    After an intended change, rewrite the file with
    ``str(optimize(load_model(path)))`` and review the diff.
    """
    from pathlib import Path

    golden = Path(__file__).parent / "golden" / f"{name}.txt"
    assert str(optimize(load_model(MODELS_DIR / f"{name}.tflite"))) == golden.read_text()


def test_every_optimized_model_prints_each_group(model):
    out = optimize(model)
    assert str(out).count("  group ") == len(annotations(out).groups)
