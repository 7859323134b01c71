"""Pass infrastructure: passes, the pass context, sequences and instruments.

A :class:`Pass` is a named function ``Graph -> Graph`` with an
``opt_level``.  Graphs are never changed in place: a pass returns a new
graph (or the same object when it had nothing to do).

A :class:`PassContext` says which passes run: those whose ``opt_level`` is
at most the context's, plus the ``required_pass`` names, minus the
``disabled_pass`` names (disabling wins).  ``config`` holds typed options
declared in :data:`CONFIG_OPTIONS`.  Contexts nest as context managers;
:meth:`PassContext.current` is the innermost one (or the defaults).

A :class:`Sequential` runs passes in order under the current context and
tells every instrument of the context before and after each pass; that is
how a driver prints the graph after a named pass (:class:`DumpAfter`) or
times each pass (:class:`PassTimer`).
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

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


class PassInstrument:
    """Hooks called by :class:`Sequential` around every pass that runs."""

    def before(self, pass_: Pass, graph: Graph) -> None:
        """Called before ``pass_`` runs on ``graph``."""

    def after(self, pass_: Pass, graph: Graph, seconds: float) -> None:
        """Called with the pass's result and its wall-clock duration."""


class DumpAfter(PassInstrument):
    """Write the graph after the pass called ``name`` to ``stream``.

    ``name`` must be a registered pass (:class:`PassError` with the closest
    name otherwise); ``seen`` tells whether it ran, so a driver can say
    when the pass was disabled.
    """

    def __init__(self, name: str, stream: TextIO) -> None:
        from aot.passes.registry import PASSES

        if name not in PASSES:
            raise PassError(f"cannot dump after unknown pass {name!r}"
                            f"{did_you_mean(name, PASSES)}; the passes are {one_of(PASSES)}")
        self.name = name
        self.stream = stream
        self.seen = False

    def after(self, pass_: Pass, graph: Graph, seconds: float) -> None:
        if pass_.name == self.name:
            self.seen = True
            self.stream.write(f"// after pass {pass_.name}\n{graph}")


class PassTimer(PassInstrument):
    """Record ``(pass name, seconds)`` for every pass that runs, in order."""

    def __init__(self) -> None:
        self.times: list[tuple[str, float]] = []

    def after(self, pass_: Pass, graph: Graph, seconds: float) -> None:
        self.times.append((pass_.name, seconds))

    def table(self) -> str:
        width = max([len(n) for n, _ in self.times] + [4])
        lines = [f"{'pass':<{width}}  ms"]
        lines += [f"{n:<{width}}  {s * 1e3:.2f}" for n, s in self.times]
        return "\n".join(lines)


_CURRENT: contextvars.ContextVar[PassContext | None] = contextvars.ContextVar(
    "aot_pass_context", default=None)


class PassContext:
    """Which passes run and with which options (see the module docstring).

    Pass names in ``required_pass`` and ``disabled_pass`` must be registered
    (:data:`aot.passes.PASSES`); an unknown name or config key raises
    :class:`PassError` with the closest known name.
    """

    def __init__(self, opt_level: int = 2, required_pass: Iterable[str] = (),
                 disabled_pass: Iterable[str] = (), config: Mapping[str, Any] | None = None,
                 instruments: Iterable[PassInstrument] = ()) -> None:
        from aot.passes.registry import PASSES

        if not isinstance(opt_level, int) or not 0 <= opt_level <= 3:
            raise PassError(f"opt_level must be an integer from 0 to 3, got {opt_level!r}")
        self.opt_level = opt_level
        self.required_pass = tuple(required_pass)
        self.disabled_pass = tuple(disabled_pass)
        for what, names in (("required", self.required_pass),
                            ("disabled", self.disabled_pass)):
            for name in names:
                if name not in PASSES:
                    raise PassError(f"unknown {what} pass {name!r}{did_you_mean(name, PASSES)}; "
                                    f"the passes are {one_of(PASSES)}")
        self.config = _check_config(config or {})
        self.instruments = tuple(instruments)
        self._token: contextvars.Token | None = None

    @staticmethod
    def current() -> PassContext:
        """The innermost active context, or a default one."""
        ctx = _CURRENT.get()
        return ctx if ctx is not None else PassContext()

    def get(self, key: str) -> Any:
        """A config option's value (its default when not set)."""
        return self.config.get(key, CONFIG_OPTIONS[key].default)

    def enabled(self, pass_: Pass) -> bool:
        if pass_.name in self.disabled_pass:
            return False
        return pass_.opt_level <= self.opt_level or pass_.name in self.required_pass

    def __enter__(self) -> PassContext:
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


class Sequential:
    """Run passes in order under the current :class:`PassContext`.

    Pass names in one sequence must be unique, so ``--dump-after NAME``
    names one point of the pipeline.
    """

    def __init__(self, passes: Iterable[Pass], name: str = "sequential") -> None:
        self.passes = tuple(passes)
        self.name = name
        names = [p.name for p in self.passes]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise PassError(f"pass {dupes[0]!r} appears twice in {name}")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.passes)

    def __call__(self, graph: Graph) -> Graph:
        ctx = PassContext.current()
        for pass_ in self.passes:
            if not ctx.enabled(pass_):
                continue
            for inst in ctx.instruments:
                inst.before(pass_, graph)
            start = time.perf_counter()
            graph = pass_(graph)
            seconds = time.perf_counter() - start
            for inst in ctx.instruments:
                inst.after(pass_, graph, seconds)
        return graph
