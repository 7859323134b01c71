"""Every IR operator has each piece docs/kernels.md's "Adding an operator" lists:
a frontend that produces it, a reference implementation, a compute rule or a
hand-written kernel (views need neither: the planner aliases them), and a row in
docs/operators.md (`aot operators --markdown`).  An operator added to
aot/ir/ops.py without one of them fails here, naming what it lacks.  The C
headers an operator's kernels include live in an operator's folder."""

from __future__ import annotations

from pathlib import Path

import aot.kernels  # (registers every compute rule and kernel)
from aot.commands.operators import extensions, onnx_only_rows, rows
from aot.executor.memory import VIEW_OPS
from aot.ir import REGISTRY
from aot.kernels.registry import COMPUTES, HANDWRITTEN, HEADERS
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


def test_each_operators_headers_live_in_its_folder():
    """A header of aot/kernels/<folder>/include/ is declared by an operator that
    folder registers (a Helium half ``*_mve.h`` is included by its header), and
    an operator declares only operator folders' headers (another's, as
    depthwise declares conv2d's, when it calls its helpers): the shared
    aot/kernels/include/ is what every kernel includes and what the operators'
    headers include."""
    root = Path(aot.kernels.__file__).parent
    owner = {h.name: h.parent.parent.name for h in root.glob("*/include/*.h")}
    declared: dict[str, set[str]] = {}
    for op, headers in HEADERS.items():
        folder = (COMPUTES.get(op) or HANDWRITTEN[op]).__module__.split(".")[2]
        assert set(headers) <= set(owner), f"{op} declares a header of no operator's folder"
        declared.setdefault(folder, set()).update(headers)
    unclaimed = {h: folder for h, folder in owner.items()
                 if not h.endswith("_mve.h") and h not in declared.get(folder, set())}
    assert unclaimed == {}
