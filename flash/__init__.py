"""Runners that put firmware on a device and open its byte stream.

    from flash import get_runner
    with get_runner("qemu")(QemuConfig(elf=..., machine="mps2-an386")) as url:
        client = aot.rpc.connect(url)
    with runner_for_board("openocd", board, image, "/dev/ttyACM0") as url: ...

Each runner class builds its config from a board record (``for_board``) and
its command line from that config (``argv``), so which tool flashes a board
is data: the record's ``[[runners]]``, preferred first.

:data:`RUNNERS` is the one explicit registry of runner names.
"""

from __future__ import annotations

from aot.errors import did_you_mean, one_of
from flash.base import Runner, RunnerError
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


def runner_for_board(name: str, board, image, serial_port: str | None = None,
                     probe: str | None = None) -> Runner:
    """Runner ``name`` set up for ``board`` from its record, writing ``image``
    (the build's flashable file: aot.firmware.images); ``probe`` is the serial
    number of the debug probe to flash through when several are attached
    (:meth:`Runner.with_probe`)."""
    cls = get_runner(name)
    config = cls.for_board(board, image, serial_port)
    if probe is not None:
        config = cls.with_probe(config, probe)
    return cls(config)


__all__ = [
    "RUNNERS", "EsptoolConfig", "HostConfig", "OpenOcdConfig", "PyOcdConfig", "QemuConfig",
    "Runner", "RunnerError", "Uf2Config", "WestConfig", "get_runner", "runner_for_board",
]
