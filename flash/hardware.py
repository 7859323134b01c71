"""Runners for real boards: a flashing tool, then the board's serial port.

Each runner's command line comes from a pure function of its config.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from flash.base import Runner, run_tool


class _FlashThenSerial(Runner):
    """Flash with a tool, then hand out the board's serial port as the URL."""

    tool_hint = ""

    def __init__(self, config):
        self.config = config

    def argv(self) -> list[str]:
        raise NotImplementedError

    def start(self) -> str:
        run_tool(self.argv(), f"{self.name} flash", self.config.timeout, self.tool_hint)
        return self.config.serial_url


@dataclass(frozen=True)
class OpenOcdConfig:
    elf: Path
    config_files: tuple[str, ...]        # e.g. ("board/st_nucleo_f7.cfg",)
    serial_url: str                      # e.g. "/dev/ttyACM0"
    adapter_serial: str | None = None    # pick one probe when several are attached
    extra_commands: tuple[str, ...] = ()
    openocd: str = "openocd"
    timeout: float = 120.0


def openocd_argv(cfg: OpenOcdConfig) -> list[str]:
    argv = [cfg.openocd]
    for f in cfg.config_files:
        argv += ["-f", f]
    if cfg.adapter_serial:
        argv += ["-c", f"adapter serial {cfg.adapter_serial}"]
    for c in cfg.extra_commands:
        argv += ["-c", c]
    return argv + ["-c", f"program {{{cfg.elf}}} verify reset exit"]


class OpenOcdRunner(_FlashThenSerial):
    name = "openocd"
    tool_hint = ("Things to try: check the probe's USB cable, `openocd -f ... -c init -c exit`, "
                 "and the config files of your board")

    def argv(self) -> list[str]:
        return openocd_argv(self.config)


@dataclass(frozen=True)
class PyOcdConfig:
    elf: Path
    target: str                  # pyocd target name, e.g. "stm32f746zgtx"
    serial_url: str
    probe_uid: str | None = None
    frequency: int | None = None  # SWD clock in Hz
    pyocd: str = "pyocd"
    timeout: float = 120.0


def pyocd_argv(cfg: PyOcdConfig) -> list[str]:
    argv = [cfg.pyocd, "flash", "--target", cfg.target]
    if cfg.probe_uid:
        argv += ["--uid", cfg.probe_uid]
    if cfg.frequency:
        argv += ["--frequency", str(cfg.frequency)]
    return argv + [str(cfg.elf)]


class PyOcdRunner(_FlashThenSerial):
    name = "pyocd"
    tool_hint = ("Things to try: `pyocd list` to see probes, `pyocd pack install <target>` "
                 "for a missing target")

    def argv(self) -> list[str]:
        return pyocd_argv(self.config)


@dataclass(frozen=True)
class WestConfig:
    build_dir: Path               # a Zephyr build directory
    serial_url: str
    runner: str | None = None     # west's own runner, e.g. "jlink"
    extra_args: tuple[str, ...] = ()
    west: str = "west"
    timeout: float = 180.0


def west_argv(cfg: WestConfig) -> list[str]:
    argv = [cfg.west, "flash", "--build-dir", str(cfg.build_dir)]
    if cfg.runner:
        argv += ["--runner", cfg.runner]
    return argv + list(cfg.extra_args)


class WestRunner(_FlashThenSerial):
    name = "west"
    tool_hint = "Things to try: run `west flash` in the build directory yourself to see why"

    def argv(self) -> list[str]:
        return west_argv(self.config)


@dataclass(frozen=True)
class EsptoolConfig:
    images: tuple[tuple[int, Path], ...]  # (flash offset, binary), e.g. ((0x10000, app.bin),)
    chip: str                             # e.g. "esp32s3"
    serial_port: str                      # e.g. "/dev/ttyUSB0": flashing and RPC share it
    baud: int = 460800
    esptool: str = "esptool.py"
    timeout: float = 180.0

    @property
    def serial_url(self) -> str:
        return self.serial_port


def esptool_argv(cfg: EsptoolConfig) -> list[str]:
    argv = [cfg.esptool, "--chip", cfg.chip, "--port", cfg.serial_port, "--baud", str(cfg.baud),
            "write_flash"]
    for offset, image in cfg.images:
        argv += [f"0x{offset:x}", str(image)]
    return argv


class EsptoolRunner(_FlashThenSerial):
    name = "esptool"
    tool_hint = "Things to try: hold BOOT while pressing RESET, or lower the baud rate"

    def argv(self) -> list[str]:
        return esptool_argv(self.config)
