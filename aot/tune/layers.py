"""The per-layer choice: aot's kernels or an external codegen, whichever runs faster.

Both kernel libraries can implement most layers, and which is faster
depends on the layer's shape.  :func:`choose_layers` measures instead of
guessing:

1. compile the model twice for the board: with aot's kernels only, and
   with every layer the ``-libs`` codegens support handed to them;
2. build both firmware images and run each kernel alone over the RPC (the
   exact instruction count under QEMU, the cycle counter on hardware);
3. pair the two compilations' kernels by the model nodes they cover: nodes
   that share a kernel in either compilation form one *unit* (a fused
   conv+add of aot's against CMSIS-NN's conv and add), and each unit goes to
   the side whose kernels cost less (aot on a tie);
4. compile once more, keeping the units aot won with aot
   (``compile_model(..., keep_with_aot=...)``).

Kernel costs add up to the model's (the entry function between them costs
a few hundred instructions, the same on both sides), so the choice runs no
slower than either library alone, up to the data dependence of the counts
(within 0.03% under QEMU, see BASELINE.md).
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from aot.compile import CompiledModel, compile_model, resolve_target
from aot.firmware import build_project, create_project
from aot.firmware.device import open_device
from aot.tune.errors import TuneError


@dataclass
class LayerChoice:
    """What the choice measured and decided.

    ``units`` lists per unit its node names, the kernels and cost on aot's
    side and on the libraries' side, and who won; ``keep_with_aot`` is what
    :func:`compile_model` takes; ``compiled`` the chosen compilation."""

    units: list[dict] = field(default_factory=list)
    keep_with_aot: frozenset[str] = frozenset()
    compiled: CompiledModel | None = None
    totals: dict[str, int] = field(default_factory=dict)
    # The two measured compilations: aot's kernels only, every supported layer to -libs.
    ours: CompiledModel | None = None
    theirs: CompiledModel | None = None

    def to_json(self) -> dict:
        """The cost table: what :func:`read_costs` reads back (``--layer-costs FILE``)."""
        c = self.compiled
        return {"format": "aot-layer-costs", "version": 1, "model": c.graph.name,
                "board": c.board.tag if c.board else None, "target": str(c.target),
                "totals": self.totals, "units": self.units}

    def table(self) -> str:
        lines = [f"{'layer':<32} {'aot':>12} {'libs':>12}  chosen"]
        for u in self.units:
            nodes = ", ".join(u["nodes"])
            lines.append(f"{nodes[:32]:<32} {u['aot']:>12,} {u['libs']:>12,}  {u['chosen']}")
        return "\n".join(lines)


def kernel_instructions(compiled: CompiledModel, workdir: Path, *, cache_dir=None) -> list[int]:
    """Each kernel of ``compiled`` run alone on its board: instructions (or
    cycles) per call, in kernel order."""
    root = Path(workdir)
    project = create_project(compiled.write(root / "artifact"), compiled.board, root / "project")
    build_project(project, cache_dir=cache_dir)
    with open_device(project) as dev:
        names = dev.kernels()
        if len(names) != len(compiled.kernels):
            raise TuneError(f"the device lists {len(names)} kernels, the model has "
                            f"{len(compiled.kernels)}")
        return [dev.run(1, kernel=k).timings[0] for k in names]


def _units(a: CompiledModel, b: CompiledModel) -> list[tuple[set[str], list[int], list[int]]]:
    """Nodes grouped so that every kernel of ``a`` and of ``b`` lies in one group;
    per group the indices of its kernels in ``a`` and in ``b``."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    layers = (a.layers(), b.layers())
    for side in layers:
        for layer in side:
            first = layer["nodes"][0]
            for n in layer["nodes"][1:]:
                parent[find(n)] = find(first)
    groups: dict[str, tuple[set, list, list]] = {}
    for s, side in enumerate(layers):
        for k, layer in enumerate(side):
            root = find(layer["nodes"][0])
            unit = groups.setdefault(root, (set(), [], []))
            unit[0].update(layer["nodes"])
            unit[1 + s].append(k)
    return list(groups.values())


def choose_layers(model, board: str, libs: str = "c -libs=cmsis-nn", *, codegen_options=None,
                  cache_dir=None, workdir=None, **compile_args) -> LayerChoice:
    """Measure both kernel libraries per layer on ``board`` and compile the faster mix
    (see the module docstring).  ``libs`` refines the board's target
    (``--target`` with ``--board``); ``compile_args`` go to every compilation."""
    plain = resolve_target(board)[0]
    mixed = resolve_target(board, refine=libs)[0]
    if not mixed.attrs.get("libs"):
        raise TuneError(f"{libs!r} names no -libs: nothing to choose between")
    # Each kernel is timed alone (P_run_kernel): no stage, whose kernels run in its loop.
    measured = {**compile_args, "measure_code": False}  # code size: of the chosen mix only
    ours = compile_model(model, plain, **{**measured, "patches": "off"})
    theirs = compile_model(model, mixed, codegen_options=codegen_options, **measured)
    with tempfile.TemporaryDirectory(prefix="aot-layers-", dir=workdir) as tmp:
        cost_ours = kernel_instructions(ours, Path(tmp) / "aot", cache_dir=cache_dir)
        cost_theirs = kernel_instructions(theirs, Path(tmp) / "libs", cache_dir=cache_dir)
    choice = LayerChoice(totals={"aot": sum(cost_ours), "libs": sum(cost_theirs)},
                         ours=ours, theirs=theirs)
    keep: set[str] = set()
    order = {n: i for i, layer in enumerate(ours.layers()) for n in layer["nodes"]}
    for nodes, ks_ours, ks_theirs in sorted(_units(ours, theirs),
                                            key=lambda u: min(order.get(n, 0) for n in u[0])):
        a = sum(cost_ours[k] for k in ks_ours)
        b = sum(cost_theirs[k] for k in ks_theirs)
        by = sorted({theirs.layers()[k]["by"] for k in ks_theirs})
        chosen = "aot" if a <= b or by == ["aot"] else "+".join(by)
        if chosen == "aot":
            keep.update(nodes)
        choice.units.append({"nodes": sorted(nodes, key=lambda n: order.get(n, 0)),
                             "aot": a, "libs": b, "libs_by": by, "chosen": chosen})
    choice.keep_with_aot = frozenset(keep)
    choice.compiled = compile_model(model, mixed, codegen_options=codegen_options,
                                    keep_with_aot=choice.keep_with_aot, **compile_args)
    return choice


def write_costs(choice: LayerChoice, path) -> None:
    """Write the measured cost table of ``choice`` to ``path`` (JSON)."""
    try:
        Path(path).write_text(json.dumps(choice.to_json(), indent=2) + "\n")
    except OSError as err:
        raise TuneError(f"cannot write the layer costs to {path}: {err.strerror or err}") from None


def read_costs(path, target) -> frozenset[str]:
    """The nodes a cost table written by :func:`write_costs` keeps with aot, for
    ``target`` (the refined board target it was measured for, else an error)."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as err:
        raise TuneError(f"cannot read the layer costs {path}: {err}") from None
    if not isinstance(data, dict) or data.get("format") != "aot-layer-costs" \
            or data.get("version") != 1:
        raise TuneError(f"{path} is not an aot layer cost table (aot compile --choose-layers "
                        "--layer-costs FILE writes one)")
    if data["target"] != str(target):
        raise TuneError(f"{path} was measured for the target {data['target']!r}, not "
                        f"{str(target)!r}: measure again with --choose-layers")
    return frozenset(n for u in data["units"] if u["chosen"] == "aot" for n in u["nodes"])


def check_costs_match(path, compiled: CompiledModel) -> None:
    """Refuse a cost table measured on another model (its nodes are not all there)."""
    data = json.loads(Path(path).read_text())
    names = {n.name for n in compiled.graph.nodes}
    missing = sorted({n for u in data["units"] for n in u["nodes"]} - names)
    if data.get("model") != compiled.graph.name or missing:
        raise TuneError(f"{path} was measured for the model {data.get('model')!r}, not "
                        f"{compiled.graph.name!r}: measure again with --choose-layers")
