"""Schedule templates (aot.kernels.template): config spaces in mixed radix, printing,
lookups, neighbours, and the registered templates."""

import pytest

from aot.kernels import STRATEGIES, TEMPLATES
from aot.kernels.template import ConfigError, ConfigSpace, Knob


def space():
    return ConfigSpace([Knob("a", (1, 2, 4)), Knob("b", (False, True)), Knob("c", ("x", "y"))])


def test_size_and_enumeration_in_mixed_radix():
    s = space()
    assert len(s) == 12
    configs = list(s)
    assert [c.index for c in configs] == list(range(12))
    # the first knob varies slowest, the last fastest
    assert dict(configs[0]) == {"a": 1, "b": False, "c": "x"}
    assert dict(configs[1]) == {"a": 1, "b": False, "c": "y"}
    assert dict(configs[2]) == {"a": 1, "b": True, "c": "x"}
    assert dict(configs[11]) == {"a": 4, "b": True, "c": "y"}
    assert len({tuple(c.items()) for c in configs}) == 12


def test_index_of_inverts_getitem():
    s = space()
    for c in s:
        assert s.index_of(dict(c)) == c.index
        assert s.config(c.to_json()) == c


def test_lookups_name_the_problem():
    s = space()
    with pytest.raises(ConfigError, match="no value for knob 'c'"):
        s.index_of({"a": 1, "b": False})
    with pytest.raises(ConfigError, match="knob 'a' has no value 3"):
        s.index_of({"a": 3, "b": False, "c": "x"})
    with pytest.raises(IndexError):
        s[12]


def test_printable():
    text = str(ConfigSpace([Knob("tile", ("row", "pixel"), "where to accumulate")]))
    assert text == "config space: 2 configs\n  tile: ['row', 'pixel']  # where to accumulate"


def test_neighbours_change_exactly_one_knob():
    s = space()
    c = s[5]
    ns = s.neighbours(c)
    assert len(ns) == (3 - 1) + (2 - 1) + (2 - 1)
    for n in ns:
        assert sum(n[k] != c[k] for k in c) == 1


def test_knobs_refuse_repeats():
    with pytest.raises(ValueError):
        Knob("a", (1, 1))
    with pytest.raises(ValueError):
        ConfigSpace([Knob("a", (1,)), Knob("a", (2,))])


def test_registered_templates():
    assert set(TEMPLATES) == {(op, key) for op in ("conv2d", "depthwise_conv2d", "dense")
                              for key in ("arm_cpu", "riscv")} | {
        ("conv2d", "arm_mve"), ("depthwise_conv2d", "arm_mve")}


def test_every_template_is_the_strategy_of_its_key():
    """The library schedules with the template's default configuration: one
    piece of code for the untuned kernel and the tuner's starting point."""
    for key, tpl in TEMPLATES.items():
        assert STRATEGIES[key] == tpl.schedule
