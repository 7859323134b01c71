"""The frontends' error type."""

from aot.errors import AotError


class ModelError(AotError):
    """A model file that cannot be read or uses something the frontend does not support."""
