"""Imports follow the pipeline (docs/architecture.md, "Import layers").

Every import between the project's packages, at module level or inside a
function, goes from a later layer to an earlier one; packages of one layer
do not import each other.  Inside a package, the modules import each other
without a circle.  A function-local import cannot hide a cycle: it is
checked like any other.
"""

from __future__ import annotations

import pytest
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The layers, earliest first (docs/architecture.md says what each holds).
LAYERS = (
    ("errors", "version"),
    ("resources", "fileio"),
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
                if other is not None and other != own:
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


# -- circles between modules ---------------------------------------------------
def _modules(root: Path) -> dict[str, tuple[Path, bool]]:
    """Every module of ``aot/`` and ``flash/``: dotted name -> (file, is a package)."""
    modules = {}
    for path in sorted([*(root / "aot").rglob("*.py"), *(root / "flash").rglob("*.py")]):
        parts = list(path.relative_to(root).with_suffix("").parts)
        package = parts[-1] == "__init__"
        modules[".".join(parts[:-1] if package else parts)] = (path, package)
    return modules


def _module_edges(root: Path = ROOT):
    """(importer, imported, where) for every import of one project module by another.

    Every ``import`` counts, at module level, in a function or under
    ``if TYPE_CHECKING``.  ``from P import name`` imports the submodule
    ``P.name`` when there is one, else it reads ``name`` from ``P``'s
    ``__init__`` and so imports ``P`` (also from inside ``P``: the name exists
    only once ``P``'s ``__init__`` has run that far).  Importing ``P.M`` runs
    the ``__init__`` of each enclosing package too; those count, except the
    packages that enclose the importer, which are running already.
    """
    modules = _modules(root)
    for name, (path, package) in modules.items():
        here = name if package else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the importer's package upwards
                    up = here.split(".")[:len(here.split(".")) + 1 - node.level]
                    base = ".".join(up + ([base] if base else []))
                subs = [f"{base}.{a.name}" for a in node.names]
                targets = [s for s in subs if s in modules]
                if len(targets) < len(subs):
                    targets.append(base)
            else:
                continue
            for target in targets:
                parts = target.split(".")
                for n in range(1, len(parts) + 1):
                    imported = ".".join(parts[:n])
                    running = n < len(parts) and (name + ".").startswith(imported + ".")
                    if imported in modules and imported != name and not running:
                        yield name, imported, f"{path.relative_to(root)}:{node.lineno}"


def _circles(root: Path = ROOT) -> list[str]:
    """Each set of modules that import one another in a circle (a strongly
    connected component of the import graph), with the imports inside it."""
    graph: dict[str, set[str]] = {}
    where: dict[tuple[str, str], str] = {}
    for a, b, at in _module_edges(root):
        graph.setdefault(a, set()).add(b)
        where.setdefault((a, b), at)
    # Tarjan's algorithm, iterative: one pass, components in reverse topological order.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, successors = work[-1]
            for w in successors:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))
    out = []
    for component in sorted(components):
        inside = set(component)
        imports = [f"{at}: {a} imports {b}" for (a, b), at in sorted(where.items())
                   if a in inside and b in inside]
        out.append(" <-> ".join(component) + "\n  " + "\n  ".join(imports))
    return out


def test_no_module_imports_itself_through_others():
    circles = _circles()
    assert not circles, "import circles:\n" + "\n".join(circles)


def _dynamic_imports(root: Path = ROOT) -> list[str]:
    """Imports the import graph cannot see: ``importlib.import_module`` and ``__import__``."""
    found = []
    for path in sorted([*(root / "aot").rglob("*.py"), *(root / "flash").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
                if name in ("import_module", "__import__"):
                    found.append(f"{path.relative_to(root)}:{node.lineno}: {name}")
    return found


def test_every_import_is_written_as_an_import_statement():
    """A module named at run time could close a circle the graph above never sees."""
    assert _dynamic_imports() == []


def test_a_circle_through_a_function_and_a_package_init_is_found(tmp_path):
    pkg = tmp_path / "aot" / "ir"
    pkg.mkdir(parents=True)
    (tmp_path / "flash").mkdir()
    (tmp_path / "aot" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("from .graph import Graph\n")
    (pkg / "graph.py").write_text("class Graph:\n    def __str__(self):\n"
                                  "        from . import printer\n")
    (pkg / "printer.py").write_text("from aot.ir import Graph\n")
    (pkg / "types.py").write_text("from aot.ir import graph\n")  # graph is a submodule
    assert _circles(tmp_path) == [
        "aot.ir <-> aot.ir.graph <-> aot.ir.printer\n"
        "  aot/ir/__init__.py:1: aot.ir imports aot.ir.graph\n"
        "  aot/ir/graph.py:3: aot.ir.graph imports aot.ir.printer\n"
        "  aot/ir/printer.py:1: aot.ir.printer imports aot.ir"]


def test_a_dynamic_import_is_found(tmp_path):
    (tmp_path / "aot").mkdir()
    (tmp_path / "flash").mkdir()
    (tmp_path / "aot" / "x.py").write_text(
        "import importlib\n\n\ndef f(n):\n    return importlib.import_module(f'aot.{n}')\n")
    assert _dynamic_imports(tmp_path) == ["aot/x.py:5: import_module"]
