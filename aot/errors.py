"""The error hierarchy shared by every stage.

Every error a user can cause (a bad model, target, board, schedule or
command-line argument) is an :class:`AotError`.  The command line prints its
message and exits with status 2, without a traceback.  Anything else that
escapes is a bug in this project.

Each stage defines its own subclasses next to the code that raises them
(``aot.target.TargetError``, ``aot.frontend.ModelError``, ...), so callers can
catch exactly what they expect.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class AotError(Exception):
    """An error caused by the user's input; the message says what to do next."""


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """Return ``" (did you mean 'x'?)"`` for the closest choice, or ``""``."""
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def one_of(choices: Iterable[str]) -> str:
    """Format the allowed values for an error message: ``one of: a, b, c``."""
    return "one of: " + ", ".join(sorted(choices))
