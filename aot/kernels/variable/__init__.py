"""Resource variables (READ_VARIABLE, ASSIGN_VARIABLE): hand-written copies
between a variable's state buffer and the run's tensors.

``read_variable`` copies the state into its output, so later assignments do
not change what was read; ``assign_variable`` copies its value into the
state and into its own output (which nothing needs, but every kernel writes
one).  Both are opaque nodes: each runs alone, where the model placed it.
"""

from __future__ import annotations

from aot.codegen.c import C_TYPES
from aot.kernels.kernel import KernelError, render_template_kernel
from aot.kernels.registry import handwritten


def _count(t) -> int:
    n = 1
    for d in t.shape:
        n *= int(d)
    return n


@handwritten("read_variable")
def read_variable(group, ag, target, name):
    node = group.nodes[0]
    (state,), y = node.inputs, node.outputs[0]
    if state.kind != "variable":
        raise KernelError(f"read_variable ({node.name}): reads a {state.kind}, not a variable")
    ctx = {"node": node.name, "what": "read", "count": _count(y), "ctype": C_TYPES[y.dtype],
           "source": "state", "targets": ["y"]}
    return render_template_kernel(__name__, "copy.c.j2", name, target,
                                  [(state, "state", "state"), (y, "output", "y")], {}, ctx,
                                  macs=0, op_names=("read_variable",))


@handwritten("assign_variable")
def assign_variable(group, ag, target, name):
    node = group.nodes[0]
    (state, value), y = node.inputs, node.outputs[0]
    if state.kind != "variable":
        raise KernelError(f"assign_variable ({node.name}): writes a {state.kind}, not a "
                          "variable")
    ctx = {"node": node.name, "what": "assign", "count": _count(y), "ctype": C_TYPES[y.dtype],
           "source": "x", "targets": ["state", "y"]}
    return render_template_kernel(__name__, "copy.c.j2", name, target,
                                  [(value, "input", "x"), (state, "state", "state"),
                                   (y, "output", "y")], {}, ctx,
                                  macs=0, op_names=("assign_variable",))
