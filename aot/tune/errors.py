"""The tuner's error."""

from __future__ import annotations

from aot.errors import AotError


class TuneError(AotError):
    """A tuning request that cannot be served (no template, bad records, ...)."""
