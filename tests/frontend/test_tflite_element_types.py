"""The importer's table of element types (ELEMENT_TYPES, docs/operators.md's
types column) is enforced: a type the table does not list for a builtin is
refused at import, naming the operator, its index, the type and the types aot
runs, even where the builtin's converter has no check of its own."""

from __future__ import annotations

import pytest
from support.tflite_builder import ModelBuilder

from aot.frontend import load_model
from aot.frontend.errors import ModelError
from aot.frontend.tflite import BUILTIN_CODES, ELEMENT_TYPES, element_types


@pytest.mark.parametrize("op, message", [
    ("ADD", "operator 1 (ADD): int64 input 0 ('x0'): not supported (aot runs ADD on float32, "
            "int8, int16, int32)"),
    ("MAXIMUM", "operator 1 (MAXIMUM): int64 input 0 ('x0'): not supported"),
])
def test_a_type_outside_the_table_is_refused_at_import(op, message, tmp_path):
    mb = ModelBuilder()
    x = mb.input("x", [2, 3], "float32")
    mb.op("RELU", [x], [mb.output("r", [2, 3], "float32")])  # operator 0 imports
    xs = [mb.input(f"x{i}", [2, 3], "int64") for i in range(2)]
    mb.op(op, xs, [mb.output("y", [2, 3], "int64")])
    path = tmp_path / "m.tflite"
    path.write_bytes(mb.finish())
    with pytest.raises(ModelError) as err:
        load_model(path)
    assert message in str(err.value)


def test_every_imported_builtin_has_its_types():
    assert set(ELEMENT_TYPES) == set(BUILTIN_CODES)
    assert element_types("CONV_2D") == "float32, int8, int16"
    assert element_types("RESHAPE") == "any"
    assert element_types("SVDF") == "float32; int8 with int16 state; int8 with int8 state"


def test_an_attribute_error_names_the_operator_once(tmp_path):
    mb = ModelBuilder()
    x = mb.input("x", [2, 3], "float32")
    mb.op("QUANTIZE", [x], [mb.output("y", [2, 3], "bool")])
    path = tmp_path / "m.tflite"
    path.write_bytes(mb.finish())
    with pytest.raises(ModelError) as err:
        load_model(path)
    assert str(err.value).startswith("operator 0 (QUANTIZE): attribute 'out_dtype': 'bool' is "
                                     "not allowed, expected one of: int16, int32")
    assert str(err.value).count("operator 0") == 1
