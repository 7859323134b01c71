"""Printing a model kernel (aot.codegen.kernel)."""

from __future__ import annotations

import numpy as np
import pytest

from aot.codegen.kernel import c_array
from aot.errors import BuildError


def test_float_constants_round_trip_exactly_and_non_finite_ones_are_refused():
    values = np.array([0.1, -0.0, 1e-30, 3.4028235e38, 1.0, 2.5e-45], np.float32)
    text = c_array("t", values)
    literals = text[text.index("{") + 1:text.rindex("}")].replace("\n", "").split(",")
    parsed = np.array([float(v.strip().rstrip("f")) for v in literals], np.float32)
    assert parsed.tobytes() == values.tobytes()
    with pytest.raises(BuildError, match="constant t holds a NaN or infinity"):
        c_array("t", np.array([np.inf], np.float32))


def test_integer_extremes_are_valid_c_literals():
    text = c_array("t", np.array([-(1 << 31), (1 << 31) - 1], np.int32))
    assert "(-2147483647 - 1), 2147483647" in text
    assert "INT64_C(-5)" in c_array("u", np.array([-5], np.int64))


def test_an_element_type_without_a_c_array_is_refused_by_name():
    with pytest.raises(BuildError, match="float64 cannot be emitted: use one of"):
        c_array("t", np.zeros(2, np.float64))


def test_bool_constants_are_0_or_1_bytes():
    text = c_array("t", np.array([True, False, True]))
    assert text.startswith("static const _Bool t[3]")
    assert "1, 0, 1" in text


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_byte_arrays_print_every_value_as_its_decimal(dtype):
    info = np.iinfo(dtype)
    values = np.arange(info.min, info.max + 1).astype(dtype)[::-1]  # every value, out of order
    body = c_array("t", values).split("{", 1)[1].rsplit("}", 1)[0]
    assert [int(v) for v in body.replace("\n", " ").split(",")] == values.tolist()
    rows = body.strip("\n").split(",\n")
    assert all(len(r.split(",")) == 16 for r in rows)  # sixteen values a row, as always
