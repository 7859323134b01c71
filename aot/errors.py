"""The error hierarchy shared by every stage.

Every error a user can cause (a bad model, target, board, schedule or
command-line argument) is an :class:`AotError`.  The command line prints its
message and exits with status 2, without a traceback.  Anything else that
escapes is a bug in this project.

Each stage defines its own subclasses next to the code that raises them
(``aot.target.TargetError``, ``aot.frontend.ModelError``, ...), so callers can
catch exactly what they expect.  The two kinds of failure that several stages
share, a pass that refuses (:class:`PassError`) and a toolchain that fails
(:class:`BuildError`), are defined here once, as is :class:`AotWarning`, the
notices that do not stop the work.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class AotError(Exception):
    """An error caused by the user's input; the message says what to do next."""


class PassError(AotError):
    """A bad pass name, option or pipeline, or a program a pass refuses.

    Raised by the graph passes (:mod:`aot.passes`, naming the node) and the
    loop passes (:mod:`aot.tir.passes`) alike: both are "a pass".
    """


class BuildError(AotError):
    """A C compiler or toolchain step failed: a missing compiler, a compile or
    link error, generated code that cannot be printed, firmware too big.

    One class for every build the project drives (kernels on the host, a
    model's host program, code-size measurement, firmware with ``make``), so
    callers catch one thing whichever stage built.
    """


class AotWarning(UserWarning):
    """A notice about the user's input that does not stop the work (through
    :mod:`warnings`); the command line prints it as ``note: ...``.

    For example an ONNX model with a symbolic batch dimension, compiled with
    batch 1 (:mod:`aot.frontend.shapes`).
    """


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """Return ``" (did you mean 'x'?)"`` for the closest choice, or ``""``."""
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def one_of(choices: Iterable[str]) -> str:
    """Format the allowed values for an error message: ``one of: a, b, c``."""
    return "one of: " + ", ".join(sorted(choices))
