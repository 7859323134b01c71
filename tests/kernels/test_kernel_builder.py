"""KernelBuilder keeps one placeholder per run-time tensor."""

from __future__ import annotations

import pytest

from aot.ir import GraphBuilder
from aot.kernels.kernel import KernelBuilder, KernelError


def _tensor():
    b = GraphBuilder()
    x = b.input("x", (2, 3), "int8")
    b.build([b.op("relu", [x])])
    return x


def test_a_tensor_is_one_placeholder_in_the_shape_first_asked():
    x = _tensor()
    kb = KernelBuilder("k", "c")
    first = kb.input(x, (6,))
    assert kb.input(x) is first and kb.input(x, (6,)) is first
    assert len(first.shape) == 1


def test_a_second_view_of_another_shape_is_refused():
    # it used to return the first placeholder: indexing it as (3, 2) would
    # read the wrong elements without a word
    x = _tensor()
    kb = KernelBuilder("k", "c")
    kb.input(x, (2, 3))
    with pytest.raises(KernelError, match=r"tensor x is already an input viewed as \[2, 3\], "
                                          r"not \[3, 2\]"):
        kb.input(x, (3, 2))
