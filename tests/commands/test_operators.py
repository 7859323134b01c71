"""``aot operators``: the table of TFLM's builtins and docs/operators.md."""

from __future__ import annotations

from pathlib import Path

from aot.cli import main
from aot.commands.operators import extensions, markdown, rows
from aot.frontend.tflite import BUILTIN_CODES
from aot.frontend.tflm_builtins import TFLM_BUILTINS

DOC = Path(__file__).resolve().parents[2] / "docs" / "operators.md"


def test_docs_operators_md_is_the_commands_output():
    assert DOC.read_text() == markdown(), "regenerate: aot operators --markdown > docs/operators.md"


def test_every_imported_builtin_runs_in_the_reference_and_has_c_kernels():
    table = {r[0]: r for r in rows() + rows(extensions())}
    assert set(table) == set(TFLM_BUILTINS) | set(extensions())
    for builtin in BUILTIN_CODES:
        assert table[builtin][3:5] == ("yes", "yes"), builtin
    refused = [b for b, r in table.items() if r[1].startswith("refused at import")]
    assert sorted(refused) == sorted(set(TFLM_BUILTINS) - set(BUILTIN_CODES))


def test_the_table_has_one_line_per_builtin(capsys):
    assert main(["operators"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["TFLite", "builtin", "imported", "as", "element", "types",
                                "reference", "C", "kernels", "tuned", "schedules", "ONNX"]
    assert len(lines) == 1 + len(TFLM_BUILTINS) + len(extensions())
    assert any(line.split()[:5] == ["CONV_2D", "conv2d", "float32,", "int8,", "int16"]
               for line in lines)


def test_gelu_is_listed_as_an_extension():
    assert extensions() == ("GELU",)
    assert rows(extensions())[0][:5] == ("GELU", "gelu", "float32, int8", "yes", "yes")


def test_the_onnx_column_names_imported_onnx_operators_and_real_builtins():
    from aot.frontend.onnx import SUPPORTED_OPERATORS
    from aot.frontend.onnx_ops import TFLITE_COUNTERPARTS

    assert set(TFLITE_COUNTERPARTS) <= set(SUPPORTED_OPERATORS)
    assert {b for bs in TFLITE_COUNTERPARTS.values() for b in bs} <= set(TFLM_BUILTINS) | set(
        extensions())
    table = {r[0]: r for r in rows()}
    assert table["CONV_2D"][6] == "Conv, QLinearConv"
    assert table["BATCH_MATMUL"][6] == "Gemm, MatMul, QLinearMatMul"


def test_gelu_reaches_the_gelu_extension_and_the_onnx_only_operators_have_kernels():
    from aot.commands.operators import onnx_only_rows
    from aot.frontend.onnx import SUPPORTED_OPERATORS
    from aot.frontend.onnx_ops import ONNX_ONLY, TFLITE_COUNTERPARTS

    assert rows(extensions())[0][6] == "Gelu"
    assert set(ONNX_ONLY) <= set(SUPPORTED_OPERATORS)
    assert not set(ONNX_ONLY) & set(TFLITE_COUNTERPARTS)
    assert onnx_only_rows() == [("Erf", "erf", "yes", "yes"), ("TopK", "topk", "yes", "yes")]
    text = markdown()
    assert "## ONNX operators without a TFLite builtin" in text
    assert "| TopK | topk | yes | yes |" in text
