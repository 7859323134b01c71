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

``HANDWRITTEN`` maps the operators that are not tensor expressions (the
stateful SVDF, LSTM and variables) to functions ``lower(group, ag, target,
name) -> Kernel``: one call of a helper of their own header.
``HEADERS`` maps every operator of ``COMPUTES`` and ``HANDWRITTEN`` to the
support headers its kernels call, declared where it registers
(:func:`compute_rule`'s and :func:`handwritten`'s ``headers``): its
folder's ``include/`` headers, or another operator's whose helpers it
calls; :func:`kernel_includes` is the include list of a kernel file.
Registering a name twice is an error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from aot import te
from aot.kernels.support import COMMON_HEADERS, support_files
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
HEADERS: dict[str, tuple[str, ...]] = {}


def _register(table: dict, key, what: str):
    def wrap(fn):
        if key in table:
            raise ValueError(f"{what} {key!r} is registered twice")
        table[key] = fn
        return fn
    return wrap


def _declared(op: str, headers) -> tuple[str, ...]:
    """``headers`` as declared by ``op``; each must be a support header."""
    unknown = sorted(set(headers) - set(support_files()))
    if unknown:
        raise ValueError(f"operator {op!r} declares support headers that do not exist: "
                         f"{', '.join(unknown)} (an operator's headers live in "
                         "aot/kernels/<op>/include/)")
    return tuple(headers)


def _kernel_of(table: dict, op: str, what: str, headers):
    """Register the decorated function in ``table`` and ``headers`` as ``op``'s
    (an operator has one kernel: a compute rule or a hand-written one)."""
    declared = _declared(op, headers)

    def wrap(fn):
        if op in HEADERS:
            raise ValueError(f"{what} {op!r}: the operator's kernel is registered twice")
        _register(table, op, what)(fn)
        HEADERS[op] = declared
        return fn
    return wrap


def compute_rule(op: str, *, headers: tuple[str, ...] = ()):
    """Register the decorated function as the compute rule of IR operator
    ``op``, whose kernels include ``headers`` beside the shared ones."""
    return _kernel_of(COMPUTES, op, "compute rule", headers)


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


def handwritten(op: str, *, headers: tuple[str, ...]):
    """Register a hand-written kernel for the operator ``op``, one call of a
    helper of ``headers``."""
    return _kernel_of(HANDWRITTEN, op, "hand-written kernel", headers)


def kernel_includes(op_names) -> tuple[str, ...]:
    """The headers a kernel file of the operators ``op_names`` (a fused group's
    nodes) includes: the shared :data:`~aot.kernels.support.COMMON_HEADERS`,
    then each operator's own, each once.  Every header includes what it uses,
    so a kernel reads no helper of an operator it does not compute."""
    return tuple(dict.fromkeys([*COMMON_HEADERS, *(h for op in op_names for h in HEADERS[op])]))


def select_strategy(anchor: str, keys) -> tuple[str, Callable]:
    """The first strategy for ``anchor`` among the target ``keys``, then ``generic``."""
    for key in [*keys, "generic"]:
        if (anchor, key) in STRATEGIES:
            return key, STRATEGIES[(anchor, key)]
    raise KeyError(anchor)
