"""Workloads: the distinct tunable kernels of a model, and lowering them with a config.

A workload is a fused group whose anchor has a template
(:data:`aot.kernels.registry.TEMPLATES`), identified by a key computed from what
the schedule can see: the anchor, every node's operator, attributes and
tensor types (shapes, dtypes; not the weight values) and the stages the
compute rules expose.  Groups with the same key share one tuned config.

:func:`extract_workloads` also runs the reference interpreter on the
model's first sample input (or a seeded random one) to capture each
workload's real input activations and its expected output, against which
every candidate is checked.
"""

from __future__ import annotations

import copy
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from aot.firmware.verify import random_inputs, sample_path
from aot.frontend import load_model
from aot.ir import Graph
from aot.kernels import lower_group
from aot.kernels.kernel import Kernel
from aot.kernels.registry import find_template, select_strategy
from aot.kernels.template import Config, ConfigSpace, Template
from aot.passes import PassContext, optimize
from aot.reference.interpreter import Session, evaluate
from aot.tune.errors import TuneError
from aot.tune.keys import summary, workload_key


def lower_with(group, ag, target, *, name: str, schedule) -> Kernel:
    """The group's kernel scheduled by ``schedule(s, final, stages)``."""
    return lower_group(group, ag, target, name=name, schedule=schedule)


@dataclass
class Workload:
    """One distinct tunable kernel: the first group with this key, and the others."""

    key: str
    description: str
    group: object
    graph: object               # the annotated graph the group belongs to
    target: object
    template: Template
    space: ConfigSpace
    default: Config
    groups: list[str] = field(default_factory=list)
    inputs: dict[str, np.ndarray] = field(default_factory=dict)   # kernel param -> value
    expected: np.ndarray | None = None
    # The reference outputs of aot.tune.measure's check cases, by case name (computed
    # once, on first use).
    case_outputs: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    # What extract_workloads made it from, so another process can make it again
    # (a Workload itself does not pickle: its template holds local functions).
    source: WorkloadSource | None = field(default=None, repr=False)


    @classmethod
    def of(cls, wl: Workload) -> Workload:
        """This kind of workload made from the plain one ``wl`` (the template's
        space); a subclass with another space (aot.tune.auto) derives its own.
        Farm workers rebuild plain workloads and call this to get the kind the
        head measures."""
        return wl

    def lower(self, config: Config, name: str) -> Kernel:
        """The workload's kernel scheduled with ``config``, named ``name``."""
        def schedule(s, final, stages):
            self.template.apply(s, final, stages, config)
        kernel = lower_with(self.group, self.graph, self.target, name=name, schedule=schedule)
        return self.template.finish(kernel, config)

    def reference(self, inputs: dict[str, np.ndarray]) -> np.ndarray:
        """The group's output for ``inputs`` (kernel param tensor name -> value):
        the reference interpreter's operators, node by node, on the group alone."""

        values = {name: np.asarray(x) for name, x in inputs.items()}
        for node in self.group.nodes:
            args = []
            for t in node.inputs:
                if t is None:
                    args.append(None)
                elif t.kind == "constant":
                    args.append(t.data)
                elif t.name in values:
                    args.append(values[t.name])
                else:
                    raise TuneError(f"workload {self.description}: no value for {t.name!r}, "
                                    f"read by {node.label()}")
            for t, y in zip(node.outputs, evaluate(node, args)):
                values[t.name] = np.asarray(y)
        return values[self.group.outputs(self.graph)[0].name]


@dataclass(frozen=True)
class WorkloadSource:
    """The model graph, target and sample input that :func:`extract_workloads`
    made a set of workloads from: picklable, so a worker process or another
    machine (aot.tune.farm) rebuilds the same workloads with
    :meth:`workloads`.  ``token`` names this extraction (a cache key)."""

    graph: Graph
    target: object
    sample_input: tuple
    token: str

    def workloads(self) -> dict[str, Workload]:
        """The workloads again, by key."""
        _, found = extract_workloads(self.graph, self.target,
                                     sample_input=list(self.sample_input))
        return {w.key: w for w in found}


def _inspect(group, ag, target):
    """The (stages, final) the compute rules build for ``group``."""
    seen = {}

    def capture(s, final, stages):
        seen["stages"], seen["final"] = stages, final
        _, strategy = select_strategy(group.anchor.op, tuple(target.keys))
        strategy(s, final, stages)
    lower_with(group, ag, target, name="inspect", schedule=capture)
    return seen["stages"], seen["final"]


def extract_workloads(model, target, *, sample_input=None, seed: int = 0):
    """The annotated graph and the workloads of ``model`` (a path or a Graph) on ``target``.

    ``sample_input`` (one array per graph input, no batch axis added) feeds
    the reference; by default the first row of ``samples/<model>.npy`` or a
    seeded random input.
    """

    graph = model if isinstance(model, Graph) else load_model(model)
    source_graph = copy.deepcopy(graph)  # optimize may rewrite the graph it is given
    ag = optimize(graph, PassContext(opt_level=2))
    by_key: dict[str, Workload] = {}
    for group in ag.annotations.groups:
        if group.kind == "view" or group.anchor is None:
            continue
        template = find_template(group.anchor.op, target)
        if template is None:
            continue
        stages, final = _inspect(group, ag, target)
        if "acc" not in stages:
            continue
        key = workload_key(group, stages)
        if key in by_key:
            by_key[key].groups.append(group.name)
            continue
        by_key[key] = Workload(key, summary(group), group, ag, target, template,
                               template.space(stages, final, target),
                               template.default(stages, final, target), [group.name])
    workloads = list(by_key.values())
    if sample_input is None:
        path = None if isinstance(model, Graph) else sample_path(Path(model))
        if path is not None and path.is_file():
            sample_input = [np.load(path)[0]]
        else:
            sample_input = [x[0] for x in random_inputs(graph, 1, seed)]
    _capture_values(ag, workloads, sample_input)
    source = WorkloadSource(source_graph, target,
                            tuple(np.asarray(x) for x in sample_input), uuid.uuid4().hex)
    for wl in workloads:
        wl.source = source
    return ag, workloads


def _capture_values(ag, workloads, sample_input) -> None:
    """Run the reference on the annotated graph with every workload's inputs
    and output as extra graph outputs."""

    wanted = []
    for wl in workloads:
        for node in wl.group.nodes:
            wanted += [t for t in node.inputs if t is not None and
                       t.kind not in ("constant", "variable")]
        wanted.append(wl.group.outputs(ag)[0])
    unique = list({id(t): t for t in wanted}.values())
    probe = Graph(list(ag.inputs), unique, list(ag.nodes), name=ag.name)
    values = dict(zip((id(t) for t in unique), Session(probe).invoke(sample_input)))
    tensors = {t.name: t for t in unique}
    for wl in workloads:
        kernel = wl.lower(wl.default, "probe")
        for p in kernel.params:
            if p.role == "input":
                wl.inputs[p.tensor] = values[id(tensors[p.tensor])]
        wl.expected = values[id(wl.group.outputs(ag)[0])]
