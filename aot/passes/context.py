"""Running passes: the pass context, sequences, instruments and the default pipeline.

A :class:`~aot.passes.base.Pass` is a named function ``Graph -> Graph`` with an
``opt_level`` (:mod:`aot.passes.base`).  Graphs are never changed in place: a
pass returns a new graph (or the same object when it had nothing to do).

A :class:`PassContext` says which passes run: those whose ``opt_level`` is
at most the context's, plus the ``required_pass`` names, minus the
``disabled_pass`` names (disabling wins).  ``config`` holds typed options
declared in :data:`~aot.passes.base.CONFIG_OPTIONS` (the part a pass reads,
:class:`~aot.passes.base.PassConfig`).  Contexts nest as context managers;
:meth:`PassContext.current` is the innermost one (or the defaults).  The names
are checked against the registry (:data:`aot.passes.registry.PASSES`), which
imports the passes: this module sits above them, :mod:`aot.passes.base` below.

A :class:`Sequential` runs passes in order under the current context and
tells every instrument of the context before and after each pass; that is
how a driver prints the graph after a named pass (:class:`DumpAfter`) or
times each pass (:class:`PassTimer`).  :func:`optimize` runs the default
pipeline (:data:`~aot.passes.registry.DEFAULT_PIPELINE`) under a context.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any, TextIO

from aot.errors import PassError, did_you_mean, one_of
from aot.ir import Graph
from aot.passes.base import Pass, PassConfig
from aot.passes.registry import DEFAULT_PIPELINE, PASSES


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


class PassContext(PassConfig):
    """Which passes run and with which options (see the module docstring).

    Pass names in ``required_pass`` and ``disabled_pass`` must be registered
    (:data:`aot.passes.PASSES`); an unknown name or config key raises
    :class:`PassError` with the closest known name.
    """

    def __init__(self, opt_level: int = 2, required_pass: Iterable[str] = (),
                 disabled_pass: Iterable[str] = (), config: Mapping[str, Any] | None = None,
                 instruments: Iterable[PassInstrument] = ()) -> None:
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
        super().__init__(config)
        self.instruments = tuple(instruments)

    def enabled(self, pass_: Pass) -> bool:
        if pass_.name in self.disabled_pass:
            return False
        return pass_.opt_level <= self.opt_level or pass_.name in self.required_pass


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


def default_pipeline() -> Sequential:
    return Sequential(DEFAULT_PIPELINE, name="default")


def optimize(graph: Graph, context: PassContext | None = None) -> Graph:
    """Run the default pipeline on ``graph`` under ``context`` (or the current one)."""
    if context is None:
        return default_pipeline()(graph)
    with context:
        return default_pipeline()(graph)
