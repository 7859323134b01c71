"""The two explicit registries of the kernel library.

* ``COMPUTES``: IR operator -> compute rule, a function ``rule(ctx, node)``
  that builds the node's tensor expression from its inputs (see
  :class:`aot.kernels.group.GroupContext`) and returns a :class:`Computed`.
* ``STRATEGIES``: (anchor kind, target key) -> schedule function
  ``schedule(s, final, stages)``.  The anchor kind is the group's anchor
  operator, or ``"elementwise"`` for a group without one.  A target's keys
  are tried in order (``arm_cpu``, ``cpu``, ...), then ``generic``, which
  every anchor kind has.
* ``TEMPLATES``: (anchor kind, target key) -> :class:`aot.kernels.template.Template`
  for the operators whose schedule has knobs.  Registering a template
  (:func:`template`) also registers its default configuration as the
  strategy of that key, so the library's schedule and the tuner's default
  are one piece of code; keys in ``tunable=False`` registrations (``generic``)
  get the strategy only.

``HANDWRITTEN`` maps opaque operators that are not tensor expressions
(softmax, ...) to functions ``lower(group, ag, target, name) -> Kernel``
that render a C template with their constants folded at compile time.
Registering a name twice is an error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from aot import te
from aot.kernels.template import Template


@dataclass
class Computed:
    """What a compute rule built: its output tensor, the stages the strategy
    schedules (by role, e.g. ``{"acc": acc}``; every other stage is inlined),
    and its multiply-accumulate count."""

    tensor: te.Tensor
    stages: dict[str, te.Tensor] = field(default_factory=dict)
    macs: int = 0


COMPUTES: dict[str, Callable] = {}
STRATEGIES: dict[tuple[str, str], Callable] = {}
TEMPLATES: dict[tuple[str, str], Template] = {}
HANDWRITTEN: dict[str, Callable] = {}


def _register(table: dict, key, what: str):
    def wrap(fn):
        if key in table:
            raise ValueError(f"{what} {key!r} is registered twice")
        table[key] = fn
        return fn
    return wrap


def compute_rule(op: str):
    """Register the decorated function as the compute rule of IR operator ``op``."""
    return _register(COMPUTES, op, "compute rule")


def strategy(anchor: str, key: str = "generic"):
    """Register a schedule for groups anchored on ``anchor`` on targets with ``key``."""
    return _register(STRATEGIES, (anchor, key), "strategy")


def template(tpl: Template, *, tunable: bool = True) -> Template:
    """Register ``tpl`` (for ``tpl.anchor`` on ``tpl.key``): its default
    configuration becomes that key's strategy and, when ``tunable``, the
    tuner finds it with :func:`find_template`."""
    _register(STRATEGIES, (tpl.anchor, tpl.key), "strategy")(tpl.schedule)
    if tunable:
        _register(TEMPLATES, (tpl.anchor, tpl.key), "template")(tpl)
    return tpl


def find_template(anchor: str, target) -> Template | None:
    """The template for ``anchor`` under the first of the target's keys that has one."""
    for key in getattr(target, "keys", ()) or ():
        if (anchor, key) in TEMPLATES:
            return TEMPLATES[(anchor, key)]
    return None


def handwritten(op: str):
    """Register a template kernel for the opaque operator ``op``."""
    return _register(HANDWRITTEN, op, "hand-written kernel")


def select_strategy(anchor: str, keys) -> tuple[str, Callable]:
    """The first strategy for ``anchor`` among the target ``keys``, then ``generic``."""
    for key in [*keys, "generic"]:
        if (anchor, key) in STRATEGIES:
            return key, STRATEGIES[(anchor, key)]
    raise KeyError(anchor)
