"""Errors raised while building targets and loading boards."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from aot.errors import AotError


class TargetError(AotError):
    """A target string, JSON object, kind, attribute or tag is not valid."""


class BoardError(TargetError):
    """A board tag is unknown or its record file is broken."""


def suggest(name: str, choices: Iterable[str], prefix: str = "") -> str:
    """Return ``" (did you mean -mcpu?)"`` for the closest choice, or ``""``.

    ``prefix`` is put before the suggestion as the user would type it
    (``"-"`` for options of a target string, ``""`` elsewhere).
    """
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    if not close:
        return ""
    shown = f"{prefix}{close[0]}" if prefix else repr(close[0])
    return f" (did you mean {shown}?)"
