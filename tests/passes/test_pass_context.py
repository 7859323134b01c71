"""PassContext, Sequential, the pass registry and instruments."""

from __future__ import annotations

import io

import numpy as np
import pytest

from aot.errors import AotError
from aot.ir import GraphBuilder
from aot.passes import (DEFAULT_PIPELINE, PASSES, DumpAfter, Pass, PassContext, PassError,
                        PassTimer, Sequential, graph_pass, optimize)
from aot.passes.registry import build_registry


def _graph():
    b = GraphBuilder("g")
    x = b.input("x", (1, 4), "float32")
    c = b.constant("c", np.ones((1, 4), np.float32))
    y = b.op("add", [b.op("relu", [x]), c])
    b.op("relu", [x])  # unused: dead code
    return b.build([y])


def test_registry_lists_exactly_the_passes_in_pipeline_order():
    assert list(PASSES) == [
        "check_layout", "remove_dead_code", "fold_constants", "simplify_inference",
        "canonicalize", "fold_pad", "legalize_quantized", "annotate_external",
        "merge_external", "partition_external", "fuse_ops", "place_cores",
    ]
    assert tuple(PASSES.values()) == DEFAULT_PIPELINE


def test_registry_refuses_duplicate_names():
    p = PASSES["fuse_ops"]
    with pytest.raises(ValueError, match="registered twice"):
        build_registry([p, Pass("fuse_ops", 1, lambda g: g)])


def test_sequential_refuses_a_pass_twice():
    p = PASSES["remove_dead_code"]
    with pytest.raises(PassError, match="appears twice"):
        Sequential([p, p])


@pytest.mark.parametrize("field", ["required_pass", "disabled_pass"])
def test_unknown_pass_names_suggest_the_closest(field):
    with pytest.raises(PassError, match="did you mean 'fuse_ops'"):
        PassContext(**{field: ["fuse_op"]})
    assert issubclass(PassError, AotError)


def test_config_options_are_checked():
    with pytest.raises(PassError, match="did you mean 'fuse.max_depth'"):
        PassContext(config={"fuse.max_dept": 3})
    with pytest.raises(PassError, match="must be int"):
        PassContext(config={"fuse.max_depth": "3"})
    with pytest.raises(PassError, match="opt_level"):
        PassContext(opt_level=7)
    assert PassContext(config={"fuse.max_depth": 3}).get("fuse.max_depth") == 3
    assert PassContext().get("fuse.injective") is True


def test_opt_level_required_and_disabled_select_passes():
    ran = []

    def make(name, level):
        def fn(g):
            ran.append(name)
            return g
        return Pass(name, level, fn)

    seq = Sequential([make("a", 0), make("b", 1), make("c", 3)])
    g = _graph()
    with PassContext(opt_level=1):
        seq(g)
    assert ran == ["a", "b"]
    ran.clear()
    # Names must be registered passes, so gate real passes through `enabled`.
    ctx = PassContext(opt_level=0, required_pass=["fold_constants"],
                      disabled_pass=["remove_dead_code", "fold_constants"])
    assert not ctx.enabled(PASSES["remove_dead_code"])  # level 0 but disabled
    assert not ctx.enabled(PASSES["fold_constants"])  # disabling wins over requiring
    assert ctx.enabled(PASSES["check_layout"])
    assert not ctx.enabled(PASSES["fold_pad"])  # level 1 > 0
    assert PassContext(opt_level=0, required_pass=["fold_pad"]).enabled(PASSES["fold_pad"])


def test_contexts_nest_and_restore():
    outer, inner = PassContext(opt_level=1), PassContext(opt_level=3)
    assert PassContext.current().opt_level == 2
    with outer:
        with inner:
            assert PassContext.current() is inner
        assert PassContext.current() is outer
    assert PassContext.current().opt_level == 2


def test_dump_after_prints_the_graph_after_the_named_pass_and_timer_records_all():
    out = io.StringIO()
    dump, timer = DumpAfter("remove_dead_code", out), PassTimer()
    result = optimize(_graph(), PassContext(instruments=[dump, timer]))
    assert dump.seen
    text = out.getvalue()
    assert text.startswith("// after pass remove_dead_code\ngraph g(")
    assert text.count("relu(") == 1  # the dead relu is gone at that point
    assert [name for name, _ in timer.times] == list(PASSES)
    assert all(s >= 0 for _, s in timer.times)
    assert "fuse_ops" in timer.table()
    assert len(result.nodes) == 2


def test_disabled_pass_does_not_run():
    timer = PassTimer()
    optimize(_graph(), PassContext(disabled_pass=["fuse_ops"], instruments=[timer]))
    assert "fuse_ops" not in [n for n, _ in timer.times]


def test_graph_pass_decorator_keeps_name_level_and_doc():
    @graph_pass("my_pass", opt_level=2)
    def my_pass(graph):
        """Do nothing."""
        return graph

    g = _graph()
    assert my_pass.name == "my_pass" and my_pass.opt_level == 2 and my_pass.doc == "Do nothing."
    assert my_pass(g) is g


def test_dump_after_refuses_unknown_pass_names():
    with pytest.raises(PassError, match="did you mean 'fold_pad'"):
        DumpAfter("fold_pads", io.StringIO())
