"""Resource variables (READ_VARIABLE, ASSIGN_VARIABLE): copies between a
variable's state buffer and the run's tensors, one call of the header helper
``aot_variable_copy`` (``include/aot_variable.h``,
:func:`aot.kernels.kernel.helper_kernel`).

``read_variable`` copies the state into its output, so later assignments do
not change what was read; ``assign_variable`` copies its value into the
state and into its own output (which nothing needs, but every kernel writes
one).  Both are opaque nodes: each runs alone, where the model placed it.
"""

from __future__ import annotations

from aot.kernels.kernel import KernelError, helper_kernel
from aot.kernels.registry import handwritten


@handwritten("read_variable", headers=("aot_variable.h",))
def read_variable(group, ag, target, name):
    node = group.nodes[0]
    (state,), y = node.inputs, node.outputs[0]
    if state.kind != "variable":
        raise KernelError(f"read_variable ({node.name}): reads a {state.kind}, not a variable")
    return helper_kernel(name, target, [(state, "state", "state"), (y, "output", "y")], {},
                         "aot_variable_copy", ("state", "y", "y", y.type.nbytes),
                         macs=0, op_names=("read_variable",))


@handwritten("assign_variable", headers=("aot_variable.h",))
def assign_variable(group, ag, target, name):
    node = group.nodes[0]
    (state, value), y = node.inputs, node.outputs[0]
    if state.kind != "variable":
        raise KernelError(f"assign_variable ({node.name}): writes a {state.kind}, not a "
                          "variable")
    return helper_kernel(name, target, [(value, "input", "x"), (state, "state", "state"),
                                        (y, "output", "y")], {},
                         "aot_variable_copy", ("x", "state", "y", y.type.nbytes),
                         macs=0, op_names=("assign_variable",))
