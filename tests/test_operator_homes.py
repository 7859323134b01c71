"""Every IR operator has each piece docs/kernels.md's "Adding an operator" lists:
a frontend that produces it, a reference implementation, a compute rule or a
hand-written kernel (views need neither: the planner aliases them), and a row in
docs/operators.md (`aot operators --markdown`).  An operator added to
aot/ir/ops.py without one of them fails here, naming what it lacks."""

from __future__ import annotations

import aot.kernels  # noqa: F401  (registers every compute rule and kernel)
from aot.commands.operators import extensions, onnx_only_rows, rows
from aot.executor.memory import VIEW_OPS
from aot.ir import REGISTRY
from aot.kernels.registry import COMPUTES, HANDWRITTEN
from aot.reference import supported_ops


def _imported_as() -> dict[str, set[str]]:
    """IR operator -> the TFLite builtins and ONNX-only operators the table maps to it."""
    out: dict[str, set[str]] = {}
    for row in [*rows(), *rows(extensions()), *onnx_only_rows()]:
        for op in row[1].replace(" ", "").split(","):
            out.setdefault(op, set()).add(row[0])
    return out


def test_every_ir_operator_has_a_frontend_a_reference_a_kernel_and_a_docs_row():
    imported = _imported_as()
    kernels = set(COMPUTES) | set(HANDWRITTEN) | set(VIEW_OPS)
    missing = {op: [what for what, ok in (
        ("a frontend mapping (docs/operators.md row)", op in imported),
        ("a reference (aot/reference/ops)", op in supported_ops()),
        ("a compute rule or hand-written kernel (aot/kernels)", op in kernels),
    ) if not ok] for op in REGISTRY}
    assert {op: m for op, m in missing.items() if m} == {}


def test_the_check_sees_an_operator_with_no_home(monkeypatch):
    from aot.ir.ops import OpDef

    monkeypatch.setitem(REGISTRY, "frobnicate",
                        OpDef("frobnicate", "injective", ("x",), {}, lambda *a: [], ""))
    try:
        test_every_ir_operator_has_a_frontend_a_reference_a_kernel_and_a_docs_row()
    except AssertionError as err:
        assert "frobnicate" in str(err)
    else:
        raise AssertionError("an operator with no frontend, reference or kernel passed")
