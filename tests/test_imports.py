"""Imports follow the pipeline (docs/architecture.md, "Import layers").

Every import between the project's packages, at module level or inside a
function, goes from a later layer to an earlier one; packages of one layer
do not import each other.  A function-local import cannot hide a cycle:
it is checked like any other.
"""

from __future__ import annotations

import pytest
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The layers, earliest first (docs/architecture.md says what each holds).
LAYERS = (
    ("errors",),
    ("resources",),
    ("target", "ir", "quant", "rpc", "flash"),
    ("frontend", "reference", "inputs"),
    ("passes", "tir"),
    ("te",),
    ("codegen",),
    ("kernels", "executor", "export"),
    ("byoc",),
    ("compile",),
    ("firmware",),
    ("cycles",),
    ("tune",),
    ("commands",),
    ("cli",),
    ("__main__", "west_commands"),
)
RANK = {pkg: n for n, layer in enumerate(LAYERS) for pkg in layer}


def _package(module: str) -> str | None:
    """The layer unit of a dotted module name: ``aot.<x>`` or ``flash``."""
    parts = module.split(".")
    if parts[0] == "flash":
        return "flash"
    if parts[0] == "aot" and len(parts) > 1:
        return parts[1]
    return None


def _imports(root: Path = ROOT):
    """(importing package, imported package, where) for every cross-package import."""
    files = list((root / "aot").rglob("*.py")) + list((root / "flash").rglob("*.py"))
    for path in files:
        rel = path.relative_to(root).with_suffix("")
        parts = [p for p in rel.parts if p != "__init__"]
        own = _package(".".join(parts))
        if own is None:  # aot/__init__.py: the public facade, imports lazily
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
                if node.module == "aot":  # from aot import te, kernels, ...
                    names = [f"aot.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            for name in names:
                other = _package(name)
                if other is not None and other != own and other != "__version__":
                    yield own, other, f"{path.relative_to(root)}:{node.lineno}"


def test_every_package_has_a_layer():
    packages = {p.name for p in (ROOT / "aot").iterdir()
                if (p / "__init__.py").exists() or p.suffix == ".py"}
    packages = {p.removesuffix(".py") for p in packages} - {"__init__"} | {"flash"}
    assert packages == set(RANK), "place new packages in LAYERS and in docs/architecture.md"


def _upward(root: Path = ROOT) -> list[str]:
    return sorted(f"{where}: {own} (layer {RANK[own]}) imports {other} (layer {RANK[other]})"
                  for own, other, where in _imports(root) if RANK[other] >= RANK[own])


@pytest.mark.slow
def test_imports_only_go_to_earlier_layers():
    assert _upward() == []


def test_an_upward_import_hidden_in_a_function_is_found(tmp_path):
    (tmp_path / "aot" / "firmware").mkdir(parents=True)
    (tmp_path / "flash").mkdir()
    (tmp_path / "aot" / "firmware" / "x.py").write_text(
        "from aot.compile import compile_model\n\n\ndef f():\n"
        "    from aot.commands.build import default_cache_dir\n")
    assert _upward(tmp_path) == [
        f"aot/firmware/x.py:5: firmware (layer {RANK['firmware']}) imports commands "
        f"(layer {RANK['commands']})"]
