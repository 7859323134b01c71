"""The dataflow graph: tensors, nodes, and the graph that orders them.

A :class:`Graph` is a list of :class:`Node` in topological order, its input
and output tensors, and the tensors the nodes read and write.  A tensor is
one of four kinds:

* ``input``: fed by the caller at each invocation;
* ``constant``: data known ahead of time (weights, biases, shapes);
* ``variable``: state that persists across invocations (SVDF, LSTM), at
  :attr:`Tensor.fresh_value` (or the model's start values) at the start of a
  fresh session, read and updated in place by the node that owns it;
* ``activation``: produced by exactly one node.

Tensors compare by identity: two tensors with the same name and type are
still different values.  Names exist for printing and for error messages.

``str(graph)`` is the graph's stable text form (:func:`format_graph`, at the
end of this module), for golden tests and dumps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from aot.ir import ops
from aot.ir.types import DTYPES, IRError, Quantization, TensorType, numpy_dtype

TENSOR_KINDS = ("input", "constant", "variable", "activation")


@dataclass(eq=False)
class Tensor:
    """One value in the graph; ``data`` holds a constant's values, or a
    variable's start values (None: :attr:`fresh_value` everywhere)."""

    name: str
    type: TensorType
    kind: str = "activation"
    data: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.kind not in TENSOR_KINDS:
            raise IRError(f"tensor {self.name!r}: unknown kind {self.kind!r}")
        if self.kind == "constant" and self.data is None:
            raise IRError(f"constant tensor {self.name!r} has no data")
        if self.kind in ("constant", "variable") and self.data is not None:
            data = np.asarray(self.data)
            if tuple(data.shape) != self.type.shape or data.dtype != self.type.np_dtype:
                raise IRError(
                    f"{self.kind} tensor {self.name!r}: data is {data.dtype}{list(data.shape)}, "
                    f"its type says {self.type}"
                )
            data = data.copy()
            data.setflags(write=False)
            self.data = data
        elif self.data is not None:
            raise IRError(f"tensor {self.name!r} of kind {self.kind} cannot carry data")

    @property
    def shape(self) -> tuple[int, ...]:
        return self.type.shape

    @property
    def dtype(self) -> str:
        return self.type.dtype

    @property
    def quant(self) -> Quantization | None:
        return self.type.quant

    @property
    def is_constant(self) -> bool:
        return self.kind == "constant"

    @property
    def fresh_value(self) -> int:
        """What every element of a fresh variable without start values holds:
        TFLM sets an int8 variable to its zero point and any other type to 0
        (an int16 SVDF state with a zero point other than 0 starts at 0)."""
        q = self.quant
        return int(q.zero_point[0]) if q is not None and self.dtype == "int8" else 0


@dataclass(eq=False)
class Node:
    """One operator application.

    ``inputs`` has one entry per input slot of the operator (see
    :mod:`aot.ir.ops`); an absent optional input is ``None``.  ``attrs`` hold every attribute of
    the operator's schema, defaults filled in.
    """

    op: str
    inputs: list[Tensor | None]
    outputs: list[Tensor]
    attrs: dict[str, Any]
    name: str = ""

    def label(self) -> str:
        """How error messages name this node."""
        return f"{self.op} node {self.name!r}" if self.name else f"{self.op} node"


class Graph:
    """A typed dataflow graph whose node list is in a valid execution order.

    The constructor checks the structure: every node input is a graph input,
    a constant, a variable or the output of an earlier node; every tensor is
    produced at most once; inputs and node outputs have distinct names (plans
    and generated code name buffers after them); graph outputs are produced (or are inputs or
    constants).  It also checks each node against its operator schema and
    type inference (:func:`aot.ir.ops.check_node`).
    """

    def __init__(
        self,
        inputs: list[Tensor],
        outputs: list[Tensor],
        nodes: list[Node],
        name: str = "main",
    ) -> None:
        self.name = name
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.nodes = list(nodes)
        self._check()

    def _check(self) -> None:
        available: set[int] = set()
        # Memory plans, reports and generated code name buffers by tensor name:
        # two tensors that need memory may never share one (constants may).
        names: set[str] = set()

        def claim(t) -> None:
            if t.name in names:
                raise IRError(
                    f"two tensors are named {t.name!r}: tensor names must be unique "
                    "(constants excepted)"
                )
            names.add(t.name)

        for t in self.inputs:
            if t.kind != "input":
                raise IRError(f"graph input {t.name!r} is a {t.kind} tensor, not an input")
            if id(t) in available:
                raise IRError(f"tensor {t.name!r} is listed twice as a graph input")
            claim(t)
            available.add(id(t))
        for node in self.nodes:
            for t in node.inputs:
                if t is None or t.kind in ("constant", "variable"):
                    continue
                if id(t) not in available:
                    raise IRError(
                        f"{node.label()} reads tensor {t.name!r} before any node produces it "
                        "(the node list must be in topological order)"
                    )
            for t in node.outputs:
                if t.kind != "activation":
                    raise IRError(f"{node.label()} writes {t.kind} tensor {t.name!r}")
                if id(t) in available:
                    raise IRError(f"{node.label()}: tensor {t.name!r} is produced twice")
                claim(t)
                available.add(id(t))
            ops.check_node(node)
        for t in self.outputs:
            if t.kind != "constant" and id(t) not in available:
                raise IRError(f"graph output {t.name!r} is never produced")

    def tensors(self) -> list[Tensor]:
        """Every tensor once, in first-use order (inputs first)."""
        seen: dict[int, Tensor] = {}
        for t in self.inputs:
            seen.setdefault(id(t), t)
        for node in self.nodes:
            for t in [*node.inputs, *node.outputs]:
                if t is not None:
                    seen.setdefault(id(t), t)
        for t in self.outputs:
            seen.setdefault(id(t), t)
        return list(seen.values())

    def constants(self) -> list[Tensor]:
        return [t for t in self.tensors() if t.kind == "constant"]

    def variables(self) -> list[Tensor]:
        return [t for t in self.tensors() if t.kind == "variable"]

    def consumers(self) -> dict[int, list[Node]]:
        """Map ``id(tensor)`` to the nodes that read it, in node order."""
        users: dict[int, list[Node]] = {}
        for node in self.nodes:
            for t in node.inputs:
                if t is not None:
                    users.setdefault(id(t), []).append(node)
        return users

    def __str__(self) -> str:
        return format_graph(self)


class GraphBuilder:
    """Build a :class:`Graph` from Python, one operator at a time.

    >>> b = GraphBuilder()
    >>> x = b.input("x", (1, 4), "float32")
    >>> y = b.op("relu", [x])
    >>> g = b.build([y])

    :meth:`op` runs the operator's type inference to make its output; give
    ``out_type`` to fix the output's quantization (or a dtype the inference
    leaves open), and the builder checks it agrees with the inference.
    """

    def __init__(self, name: str = "main") -> None:
        self.name = name
        self._inputs: list[Tensor] = []
        self._nodes: list[Node] = []
        self._count = 0

    def _fresh(self, prefix: str) -> str:
        self._count += 1
        return f"{prefix}{self._count}"

    def input(
        self, name: str, shape, dtype: str, quant: Quantization | None = None
    ) -> Tensor:
        t = Tensor(name, TensorType(tuple(shape), dtype, quant), "input")
        self._inputs.append(t)
        return t

    def constant(
        self, name: str, data, dtype: str | None = None, quant: Quantization | None = None
    ) -> Tensor:
        arr = np.asarray(data)
        if dtype is not None:
            arr = arr.astype(numpy_dtype(dtype))
        ttype = TensorType(arr.shape, _dtype_name(arr.dtype, name), quant)
        return Tensor(name or self._fresh("c"), ttype, "constant", arr)

    def variable(
        self, name: str, shape, dtype: str, quant: Quantization | None = None
    ) -> Tensor:
        return Tensor(name, TensorType(tuple(shape), dtype, quant), "variable")

    def op(
        self,
        op: str,
        inputs: list[Tensor | None],
        out_type: TensorType | list[TensorType] | None = None,
        name: str = "",
        out_name: str | list[str] | None = None,
        **attrs,
    ) -> Tensor:
        """Append one node and return its output (or outputs, if several)."""
        opdef = ops.get_op(op)
        inputs = list(inputs)
        if not opdef.inputs[-1].endswith("*") and len(inputs) < len(opdef.inputs):
            inputs += [None] * (len(opdef.inputs) - len(inputs))  # absent optional inputs
        node_name = name or self._fresh(op + "_")
        full_attrs = opdef.normalize_attrs(attrs, f"{op} node {node_name!r}")
        inferred = opdef.infer_types(
            [t.type if t is not None else None for t in inputs],
            full_attrs,
            f"{op} node {node_name!r}",
        )
        if out_type is None:
            declared = inferred
        else:
            declared = out_type if isinstance(out_type, list) else [out_type]
        if out_name is None:
            names = [f"{node_name}:{i}" if len(declared) > 1 else node_name
                     for i in range(len(declared))]
        else:
            names = out_name if isinstance(out_name, list) else [out_name]
        outputs = [Tensor(n, t) for n, t in zip(names, declared, strict=True)]
        node = Node(op, list(inputs), outputs, full_attrs, node_name)
        ops.check_node(node)
        self._nodes.append(node)
        return outputs[0] if len(outputs) == 1 else outputs

    def build(self, outputs: list[Tensor]) -> Graph:
        return Graph(self._inputs, outputs, self._nodes, self.name)


def _dtype_name(dtype: np.dtype, name: str) -> str:
    for key, value in DTYPES.items():
        if value == dtype:
            return key
    raise IRError(f"constant {name!r}: numpy dtype {dtype} has no IR equivalent")


# -- the text form (str(graph)) ---------------------------------------------------
_SIGIL = {"input": "%", "activation": "%", "constant": "@", "variable": "$"}


def _fmt_attr(value) -> str:
    if isinstance(value, float):
        return f"{value:.9g}"
    if isinstance(value, tuple):
        return "[" + ",".join(_fmt_attr(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def format_graph(graph: Graph) -> str:
    """A stable text form of ``graph`` (``str(graph)``), for golden tests and dumps.

    One line per node: ``%3 = conv2d(%0, @1, @2) {activation=relu, ...} : int8[1,25,5,64]
    q(...)``.  Activations and inputs print as ``%N``, constants as ``@N`` and
    variables as ``$N``, numbered in first-use order, so the text depends only on
    the graph's structure, never on tensor names or object ids.  Attributes print
    sorted by name.  Constants are listed after the signature with their type only.
    """
    numbers: dict[int, str] = {}
    counters = {"%": 0, "@": 0, "$": 0}

    def ref(t: Tensor | None) -> str:
        if t is None:
            return "_"
        if id(t) not in numbers:
            sigil = _SIGIL[t.kind]
            numbers[id(t)] = f"{sigil}{counters[sigil]}"
            counters[sigil] += 1
        return numbers[id(t)]

    params = ", ".join(f"{ref(t)}: {t.type}" for t in graph.inputs)
    lines = [f"graph {graph.name}({params}) {{"]
    for t in graph.tensors():
        if t.kind in ("constant", "variable"):
            lines.append(f"  {ref(t)}: {t.kind} {t.type}")
    for node in graph.nodes:
        args = ", ".join(ref(t) for t in node.inputs)
        attrs = ", ".join(f"{k}={_fmt_attr(v)}" for k, v in sorted(node.attrs.items()))
        outs = ", ".join(ref(t) for t in node.outputs)
        types = ", ".join(str(t.type) for t in node.outputs)
        attr_text = f" {{{attrs}}}" if attrs else ""
        lines.append(f"  {outs} = {node.op}({args}){attr_text} : {types}")
    lines.append(f"  return {', '.join(ref(t) for t in graph.outputs)}")
    lines.append("}")
    return "\n".join(lines) + "\n"
