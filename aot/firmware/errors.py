"""Errors of the firmware flow; each message says what to try next."""

from __future__ import annotations

from aot.errors import AotError


class FirmwareError(AotError):
    """A firmware project cannot be created, built, flashed or run."""


class ProjectError(FirmwareError):
    """The artifact, board or project folder is not usable for a project."""


class DeviceError(FirmwareError):
    """The device refused a request or returned something unexpected."""
