"""Runners that put firmware on a device and open its byte stream.

    from flash import get_runner
    with get_runner("qemu")(QemuConfig(elf=..., machine="mps2-an386")) as url:
        client = aot.rpc.connect(url)
    with runner_for_board("openocd", board, images, "/dev/ttyACM0") as url: ...

Each runner class builds its config from a board record (``for_board``) and
its command line from that config (``argv``), so which tool flashes a board
is data: the record's ``[[runners]]``, preferred first.  Which file it
writes is data too: the runner class declares the image formats it takes
(``takes``), the build says which it made (:class:`FlashImage`), and
:meth:`Runner.choose_image` matches the two.

:data:`RUNNERS` is the one explicit registry of runner names.
"""

from __future__ import annotations

from aot.errors import did_you_mean, one_of
from pathlib import Path

from flash.base import IMAGE_FORMATS, FlashImage, Runner, RunnerError
from flash.hardware import (
    EsptoolConfig,
    EsptoolRunner,
    OpenOcdConfig,
    OpenOcdRunner,
    PyOcdConfig,
    PyOcdRunner,
    Uf2Config,
    Uf2Runner,
    WestConfig,
    WestRunner,
)
from flash.host import HostConfig, HostRunner
from flash.qemu import QemuConfig, QemuRunner


def _registry(classes: list[type[Runner]]) -> dict[str, type[Runner]]:
    table: dict[str, type[Runner]] = {}
    for cls in classes:
        if cls.name in table:
            raise ValueError(f"two runners are named {cls.name!r}")
        table[cls.name] = cls
    return table


RUNNERS = _registry(
    [QemuRunner, HostRunner, OpenOcdRunner, PyOcdRunner, WestRunner, EsptoolRunner, Uf2Runner]
)


def get_runner(name: str) -> type[Runner]:
    """The runner class called ``name``, or a :class:`RunnerError` naming the choices."""
    if name not in RUNNERS:
        raise RunnerError(f"unknown runner {name!r}{did_you_mean(name, RUNNERS)}; "
                          f"{one_of(RUNNERS)}")
    return RUNNERS[name]


def runner_for_board(name: str, board, images, serial_port: str | None = None,
                     probe: str | None = None) -> Runner:
    """Runner ``name`` of ``board``'s record, set up from the record to write
    the one of ``images`` (what the build made: aot.firmware.images.built_images;
    a bare path is an ELF) that it takes; ``probe`` is the serial number of the
    debug probe to flash through when several are attached
    (:meth:`Runner.with_probe`).  A runner the record does not list is refused:
    its board-specific arguments would be missing."""
    cls = get_runner(name)
    listed = [r.name for r in board.runners]
    if name not in listed:
        hint = f". {cls.unlisted_hint}" if cls.unlisted_hint else ""
        raise RunnerError(f"{board.tag} has no runner {name!r} in its record; its runners: "
                          f"{', '.join(listed)}{hint}")
    if isinstance(images, (str, Path)):
        images = (FlashImage("elf", Path(images)),)
    config = cls.for_board(board, cls.choose_image(images, board.tag), serial_port)
    if probe is not None:
        config = cls.with_probe(config, probe)
    return cls(config)


__all__ = [
    "IMAGE_FORMATS", "RUNNERS", "EsptoolConfig", "FlashImage", "HostConfig", "OpenOcdConfig",
    "PyOcdConfig", "QemuConfig", "Runner", "RunnerError", "Uf2Config", "WestConfig", "get_runner",
    "runner_for_board",
]
