"""annotate_external, merge_external, partition_external: regions for external codegens."""

from __future__ import annotations

import numpy as np
import pytest
from pass_checks import assert_same_semantics

from aot.errors import PassError
from aot.ir import GraphBuilder
from aot.passes import (FusedGroup, PassContext, Pattern, PatternTable, annotations, optimize)


def _net():
    """conv -> relu -> conv -> relu -> softmax (float, so nothing is legalized)."""
    rng = np.random.default_rng(0)
    b = GraphBuilder("net")
    x = b.input("x", (1, 4, 4, 2), "float32")
    y = b.op("conv2d", [x, b.constant("w0", rng.standard_normal((3, 1, 1, 2)).astype(np.float32)),
                        None], name="conv_a")
    y = b.op("relu", [y], name="relu_a")
    y = b.op("conv2d", [y, b.constant("w1", rng.standard_normal((3, 3, 3, 3)).astype(np.float32)),
                        None], padding=(1, 1, 1, 1), name="conv_b")
    y = b.op("relu", [y], name="relu_b")
    y = b.op("reshape", [y], newshape=(1, 48), name="flat")
    y = b.op("softmax", [y], name="soft")
    return b.build([y])


def _only_1x1(nodes, graph):
    kh, kw = nodes[0].inputs[1].shape[1:3]
    return None if (kh, kw) == (1, 1) else f"a {kh}x{kw} kernel (only 1x1)"


CONV_RELU = Pattern("conv_relu", ("conv2d", "relu"), _only_1x1)
SOFTMAX = Pattern("softmax", ("softmax",))


def _optimized(*tables, exclude=frozenset()):
    ctx = PassContext(config={"partition.tables": tables, "partition.exclude": exclude})
    return optimize(_net(), ctx)


def _groups(graph) -> list[tuple[str, str | None, tuple[str, ...]]]:
    return [(g.kind, g.codegen, tuple(n.name for n in g.nodes))
            for g in annotations(graph).groups]


def test_without_tables_nothing_is_partitioned():
    graph = optimize(_net())
    assert all(g.kind != "external" for g in annotations(graph).groups)
    assert not annotations(graph).regions


def test_regions_become_external_groups_and_the_rest_is_fused():
    """The first conv+relu chain matches; the second is declined by the predicate
    (3x3) and fuses with aot's rules; softmax goes to the codegen."""
    graph = _optimized(PatternTable("lib", (CONV_RELU, SOFTMAX)))
    assert _groups(graph) == [
        ("external", "lib", ("conv_a", "relu_a")),
        ("fused", None, ("conv_b", "relu_b")),
        ("view", None, ("flat",)),
        ("external", "lib", ("soft",)),
    ]
    ann = annotations(graph)
    conv_b = next(n for n in graph.nodes if n.name == "conv_b")
    assert ann.declined[conv_b] == "lib: a 3x3 kernel (only 1x1)"
    text = str(graph)
    assert "codegen=lib pattern=conv_relu" in text
    assert "declined by lib: a 3x3 kernel (only 1x1)" in text
    assert_same_semantics(_net(), graph, rtol=1e-6, atol=1e-6)


def test_the_first_table_in_libs_order_wins():
    first = PatternTable("first", (SOFTMAX,))
    second = PatternTable("second", (SOFTMAX,))
    assert _groups(_optimized(first, second))[-1] == ("external", "first", ("soft",))
    assert _groups(_optimized(second, first))[-1] == ("external", "second", ("soft",))


def test_excluded_nodes_stay_with_aot():
    graph = _optimized(PatternTable("lib", (CONV_RELU, SOFTMAX)), exclude=frozenset({"soft"}))
    assert _groups(graph)[-1] == ("opaque", None, ("soft",))
    assert _groups(graph)[0][0] == "external"


def test_merge_joins_a_chain_of_regions_of_one_codegen():
    """With merge=True the two single-op regions conv_a and relu_a become one."""
    conv = Pattern("conv", ("conv2d",), _only_1x1)
    relu = Pattern("relu", ("relu",))
    merged = _optimized(PatternTable("lib", (conv, relu), merge=True))
    apart = _optimized(PatternTable("lib", (conv, relu)))
    assert _groups(merged)[0] == ("external", "lib", ("conv_a", "relu_a"))
    assert annotations(merged).groups[0].pattern == "conv+relu"
    assert _groups(apart)[:2] == [("external", "lib", ("conv_a",)),
                                  ("external", "lib", ("relu_a",))]


def test_a_table_naming_an_unknown_operator_is_refused_naming_codegen_and_pattern():
    with pytest.raises(PassError, match=r"codegen 'lib': pattern 'p' names the unknown "
                                        r"operator 'conv3d'"):
        PatternTable("lib", (Pattern("p", ("conv3d",)),))


def test_the_config_takes_only_pattern_tables():
    with pytest.raises(PassError, match="not a PatternTable"):
        _optimized("softmax")


def test_partitioning_can_be_disabled_by_name():
    ctx = PassContext(disabled_pass=["partition_external"],
                      config={"partition.tables": (PatternTable("lib", (SOFTMAX,)),)})
    graph = optimize(_net(), ctx)
    assert all(isinstance(g, FusedGroup) and g.kind != "external"
               for g in annotations(graph).groups)


def test_a_failing_predicate_is_an_error_naming_codegen_pattern_and_node():
    def broken(nodes, graph):
        return nodes[0].attrs["no_such_attribute"]
    table = PatternTable("lib", (Pattern("soft", ("softmax",), broken),))
    with pytest.raises(PassError, match=r"pattern 'soft' of codegen 'lib' failed on softmax "
                                        r"'soft': KeyError"):
        _optimized(table)
