"""What every graph pass imports: :class:`Pass`, :func:`graph_pass` and the
options a pass reads (:data:`CONFIG_OPTIONS`, :class:`PassConfig`).

It sits below the passes and the registry that lists them: the registry
(:mod:`aot.passes.registry`) imports the passes, and the pass context that
checks pass names against the registry (:class:`aot.passes.PassContext`, a
:class:`PassConfig` that also says which passes run) sits above both.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from aot.errors import PassError, did_you_mean, one_of
from aot.ir import Graph


@dataclass(frozen=True)
class Pass:
    """A graph-to-graph function with a stable ``name`` (for dumps, timing and test ids).

    ``opt_level`` 0 passes are needed for correct code and run at every
    level; higher levels are optimizations.
    """

    name: str
    opt_level: int
    function: Callable[[Graph], Graph] = field(repr=False)
    doc: str = ""

    def __call__(self, graph: Graph) -> Graph:
        return self.function(graph)


def graph_pass(name: str, opt_level: int) -> Callable[[Callable[[Graph], Graph]], Pass]:
    """Decorate a ``Graph -> Graph`` function to make it a :class:`Pass`."""

    def wrap(fn: Callable[[Graph], Graph]) -> Pass:
        return Pass(name, opt_level, fn, (fn.__doc__ or "").strip())

    return wrap


@dataclass(frozen=True)
class ConfigOption:
    type: type
    default: Any
    help: str


#: Options a :class:`PassContext` accepts in ``config``, with their type and default.
CONFIG_OPTIONS: dict[str, ConfigOption] = {
    "fuse.max_depth": ConfigOption(
        int, 16, "most nodes in one fused group (a bound on kernel size)"),
    "fuse.injective": ConfigOption(
        bool, True, "let injective ops (pad, transpose, slices) fuse into their consumer"),
    "layout": ConfigOption(str, "NHWC", "the activation layout kernels expect (only NHWC)"),
    "partition.tables": ConfigOption(
        tuple, (), "pattern tables of the external codegens of -libs, in order "
        "(aot.passes.partition.PatternTable; the compiler sets them from the target)"),
    "partition.exclude": ConfigOption(
        frozenset, frozenset(), "names of nodes that stay with aot's kernels although an "
        "external codegen matched them (the per-layer choice)"),
    "placement.cores": ConfigOption(
        int, 1, "cores of the board that place_cores divides the kernels between "
        "(1: everything on core 0, the pass changes nothing)"),
    "placement.min_macs": ConfigOption(
        int, 16384, "fewest multiply-accumulates of a conv2d, depthwise_conv2d or dense "
        "that place_cores splits across the cores (below, a hand-over costs more than "
        "it saves)"),
}


_CURRENT: contextvars.ContextVar[PassConfig | None] = contextvars.ContextVar(
    "aot_pass_context", default=None)


class PassConfig:
    """The options passes read: ``config`` maps names of :data:`CONFIG_OPTIONS`
    to values of their type (an unknown name or a wrong type raises
    :class:`PassError`).  Entered as a context manager it is the one
    :meth:`current` returns; :class:`aot.passes.PassContext` adds which passes run.
    """

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        self.config = _check_config(config or {})
        self._token: contextvars.Token | None = None

    @classmethod
    def current(cls):
        """The innermost active context of this class, or a default one."""
        ctx = _CURRENT.get()
        return ctx if isinstance(ctx, cls) else cls()

    def get(self, key: str) -> Any:
        """A config option's value (its default when not set)."""
        return self.config.get(key, CONFIG_OPTIONS[key].default)

    def __enter__(self):
        self._token = _CURRENT.set(self)
        return self

    def __exit__(self, *exc) -> None:
        _CURRENT.reset(self._token)
        self._token = None


def _check_config(config: Mapping[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in config.items():
        if key not in CONFIG_OPTIONS:
            raise PassError(f"unknown pass config option {key!r}"
                            f"{did_you_mean(key, CONFIG_OPTIONS)}; "
                            f"known: {one_of(CONFIG_OPTIONS)}")
        want = CONFIG_OPTIONS[key].type
        if not isinstance(value, want) or (want is int and isinstance(value, bool)):
            raise PassError(f"pass config option {key!r} must be {want.__name__}, "
                            f"got {value!r}")
        out[key] = value
    return out
