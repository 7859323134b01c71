"""The one error class of the cycle estimate."""

from aot.errors import AotError


class CycleModelError(AotError):
    """No cycle model for a board or core, a trace that cannot be read, or no QEMU."""
