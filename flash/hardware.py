"""Runners for real boards: a flashing tool, then the board's serial port.

Each runner's command line comes from a pure function of its config; the
config comes from the board record (:meth:`for_board`): the record's
``[[runners]]`` entry gives the tool's board-specific arguments verbatim
(openocd's ``-f`` files, pyocd's ``--target``, esptool's ``--baud``), the
build's :class:`~flash.base.FlashImage` what is written where, and the
record's ``console.usb`` how to find the board's serial port when none is
given (:func:`~flash.serial_port.find_serial_port`, as esptool finds its
port).  Nothing here branches on a board.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from flash.base import FlashImage, Runner, RunnerError, run_tool
from flash.serial_port import check_serial_port, pick_serial_port


def board_args(board, name: str) -> tuple[str, ...]:
    """The arguments the board record gives runner ``name``."""
    return next((r.args for r in board.runners if r.name == name), ())


class _FlashThenSerial(Runner):
    """Flash with a tool, then hand out the board's serial port as the URL.

    Without a port (``serial_url`` None) :meth:`start` finds it by the USB id
    of the board's serial bridge (``usb``) and says which it picked;
    :meth:`argv` alone never looks for hardware (``aot flash --dry-run``).
    """

    needs_serial_port = True

    #: What to install when the tool is missing.
    install = ""
    tool_hint = ""

    def __init__(self, config):
        self.config = config

    def argv(self) -> list[str]:
        raise NotImplementedError

    def find_port(self) -> None:
        """Set the serial port, when none was given, to the one attached port
        whose USB id the board record gives, and say so."""
        if self.config.serial_url is None:
            port = pick_serial_port(self.config.usb, f"runner {self.name}")
            self.config = replace(self.config, serial_url=port)

    def check(self) -> None:
        """Refuse early what would fail after (or during) a flash: the RPC needs the port."""
        check_serial_port(self.config.serial_url)

    def start(self) -> str:
        self.find_port()
        self.check()
        run_tool(self.argv(), f"{self.name} flash", self.config.timeout,
                 self.tool_hint, install=self.install)
        return self.config.serial_url


@dataclass(frozen=True)
class OpenOcdConfig:
    elf: Path
    args: tuple[str, ...]                # e.g. ("-f", "board/st_nucleo_f7.cfg")
    serial_url: str | None               # e.g. "/dev/ttyACM0"; the RPC's, not openocd's
    adapter_serial: str | None = None    # pick one probe when several are attached
    usb: tuple[str, ...] = ()            # USB ids of the board's serial bridge
    openocd: str = "openocd"
    timeout: float = 120.0


def openocd_argv(cfg: OpenOcdConfig) -> list[str]:
    argv = [cfg.openocd, *cfg.args]
    if cfg.adapter_serial:
        argv += ["-c", f"adapter serial {cfg.adapter_serial}"]
    return argv + ["-c", f"program {{{cfg.elf}}} verify reset exit"]


class OpenOcdRunner(_FlashThenSerial):
    name = "openocd"
    takes = ("elf",)  # `program` reads the load addresses from the ELF
    install = "install OpenOCD 0.12 or newer (apt-get install openocd)"
    tool_hint = ("Things to try: check the probe's USB cable, `openocd -f ... -c init -c exit`, "
                 "and the config files of your board")

    @classmethod
    def for_board(cls, board, image: FlashImage, serial_port: str | None) -> OpenOcdConfig:
        return OpenOcdConfig(elf=image.path, args=board_args(board, cls.name),
                             serial_url=serial_port, usb=board.console.usb)

    @classmethod
    def with_probe(cls, config: OpenOcdConfig, probe: str) -> OpenOcdConfig:
        return replace(config, adapter_serial=probe)

    def argv(self) -> list[str]:
        return openocd_argv(self.config)


@dataclass(frozen=True)
class PyOcdConfig:
    elf: Path
    args: tuple[str, ...]          # e.g. ("--target", "stm32f746zgtx")
    serial_url: str | None
    probe_uid: str | None = None
    frequency: int | None = None   # SWD clock in Hz
    usb: tuple[str, ...] = ()      # USB ids of the board's serial bridge
    pyocd: str = "pyocd"
    timeout: float = 120.0


def pyocd_argv(cfg: PyOcdConfig) -> list[str]:
    argv = [cfg.pyocd, "flash", *cfg.args]
    if cfg.probe_uid:
        argv += ["--uid", cfg.probe_uid]
    if cfg.frequency:
        argv += ["--frequency", str(cfg.frequency)]
    return argv + [str(cfg.elf)]


class PyOcdRunner(_FlashThenSerial):
    name = "pyocd"
    takes = ("elf",)  # `pyocd flash` needs --base-address for anything without addresses
    install = "install pyOCD (pip install pyocd)"
    tool_hint = ("Things to try: `pyocd list` to see probes, `pyocd pack install <target>` "
                 "for a missing target")

    @classmethod
    def for_board(cls, board, image: FlashImage, serial_port: str | None) -> PyOcdConfig:
        args = board_args(board, cls.name)
        if "--target" not in args and "-t" not in args:
            raise RunnerError(f"the board record of {board.tag} names no pyocd --target")
        return PyOcdConfig(elf=image.path, args=args, serial_url=serial_port,
                           usb=board.console.usb)

    @classmethod
    def with_probe(cls, config: PyOcdConfig, probe: str) -> PyOcdConfig:
        return replace(config, probe_uid=probe)

    def argv(self) -> list[str]:
        return pyocd_argv(self.config)


@dataclass(frozen=True)
class WestConfig:
    build_dir: Path               # a Zephyr build directory
    serial_url: str | None
    runner: str | None = None     # west's own runner, e.g. "jlink"
    extra_args: tuple[str, ...] = ()
    usb: tuple[str, ...] = ()     # USB ids of the board's serial bridge
    west: str = "west"
    timeout: float = 180.0


def west_argv(cfg: WestConfig) -> list[str]:
    argv = [cfg.west, "flash", "--build-dir", str(cfg.build_dir)]
    if cfg.runner:
        argv += ["--runner", cfg.runner]
    return argv + list(cfg.extra_args)


class WestRunner(_FlashThenSerial):
    name = "west"
    takes = ("elf",)  # the build directory's zephyr.elf, which west finds itself
    install = ("install west (pip install west) and set up a Zephyr workspace "
               "(west init, west update)")
    tool_hint = "Things to try: run `west flash` in the build directory yourself to see why"
    # `west flash` reads the runners Zephyr's CMake wrote into a Zephyr build
    # directory; an aot project is built by make and has none.
    unlisted_hint = ("Runner west flashes a Zephyr build directory, and an aot project is built "
                     "with make: build the generated model inside a Zephyr application and run "
                     "`west flash` there")

    @classmethod
    def for_board(cls, board, image: FlashImage, serial_port: str | None) -> WestConfig:
        others = [r.name for r in board.runners if r.name != cls.name]
        raise RunnerError(f"{cls.unlisted_hint}, or use one of the runners of {board.tag}: "
                          f"{', '.join(others) or 'none'}")

    def argv(self) -> list[str]:
        return west_argv(self.config)


def _python_tool(name: str) -> str:
    """``name`` on PATH, else the script installed beside this Python (a venv's bin)."""
    if shutil.which(name):
        return name
    beside = Path(sys.executable).with_name(name)
    return str(beside) if beside.is_file() else name


@dataclass(frozen=True)
class EsptoolConfig:
    images: tuple[tuple[int, Path], ...]  # (flash offset, binary), e.g. ((0x10000, app.bin),)
    chip: str                             # e.g. "esp32c3"
    serial_url: str | None                # e.g. "/dev/ttyUSB0": flashing and RPC share it
    args: tuple[str, ...] = ()            # global options, e.g. ("--baud", "460800")
    usb: tuple[str, ...] = ()             # USB ids of the board's serial bridge
    esptool: str = "esptool"
    timeout: float = 180.0


def esptool_argv(cfg: EsptoolConfig) -> list[str]:
    """esptool 5's command line (its commands are spelt with hyphens since v5);
    without a port, esptool's own form that makes it search the serial ports."""
    port = ["--port", cfg.serial_url] if cfg.serial_url else []
    argv = [cfg.esptool, "--chip", cfg.chip, *port, *cfg.args, "write-flash"]
    for offset, image in cfg.images:
        argv += [f"0x{offset:x}", str(image)]
    return argv


class EsptoolRunner(_FlashThenSerial):
    name = "esptool"
    takes = ("esp",)  # raw bytes at a flash offset, for the ESP-IDF boot loader
    port_selects_board = True   # it flashes through the board's serial port
    install = "install esptool 5 (pip install 'esptool>=5'; aot depends on it)"
    tool_hint = ("Things to try: hold BOOT while pressing RESET to enter the download mode, "
                 "lower the baud rate, check that no serial monitor holds the port")

    @classmethod
    def with_probe(cls, config: EsptoolConfig, probe: str) -> EsptoolConfig:
        raise RunnerError(f"runner esptool flashes through the serial port, which picks the "
                          f"board: give the port alone, without a probe ({probe})")

    @classmethod
    def for_board(cls, board, image: FlashImage, serial_port: str | None) -> EsptoolConfig:
        return EsptoolConfig(images=((image.offset, image.path),), chip=board.image.esp_chip,
                             serial_url=serial_port, args=board_args(board, cls.name),
                             usb=board.console.usb, esptool=_python_tool("esptool"))

    def argv(self) -> list[str]:
        return esptool_argv(self.config)


#: The name the RP2040 boot ROM gives its USB drive in BOOTSEL mode.
RP2_DRIVE = "RPI-RP2"


def find_drive(label: str, mounts: str) -> Path | None:
    """The mount point named ``label`` in ``/proc/mounts`` text, if one is mounted."""
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) >= 2:
            point = fields[1].replace("\\040", " ")
            if Path(point).name == label:
                return Path(point)
    return None


def mount_table() -> str:
    """The kernel's table of mounted file systems (empty where there is none)."""
    try:
        return Path("/proc/mounts").read_text()
    except OSError:
        return ""


def _default_drive(label: str) -> Path:
    """Where desktop Linux mounts the drive (udisks): ``/media/$USER/<label>``."""
    return Path("/media") / os.environ.get("USER", "root") / label


@dataclass(frozen=True)
class Uf2Config:
    image: Path                    # a .uf2 file
    serial_url: str | None
    drive: Path                    # the mounted RPI-RP2 drive (without picotool)
    picotool: str | None = None    # picotool's path when it is on PATH
    usb: tuple[str, ...] = ()      # USB ids of the board's serial bridge
    timeout: float = 60.0


def uf2_argv(cfg: Uf2Config) -> list[str]:
    """picotool when present (it finds the board in BOOTSEL mode over USB by itself),
    else a copy onto the boot ROM's USB drive, which writes and reboots."""
    if cfg.picotool:
        return [cfg.picotool, "load", "-v", "-x", str(cfg.image)]
    return ["cp", str(cfg.image), f"{cfg.drive}/"]


class Uf2Runner(_FlashThenSerial):
    name = "uf2"
    takes = ("uf2",)  # what the boot ROM's drive takes (picotool takes it too)
    install = "install picotool (apt-get install picotool), or mount the RPI-RP2 drive"
    tool_hint = ("Things to try: hold BOOTSEL while plugging the USB cable in, so the boot ROM "
                 "shows the RPI-RP2 drive")

    @classmethod
    def for_board(cls, board, image: FlashImage, serial_port: str | None) -> Uf2Config:
        return Uf2Config(image=image.path, serial_url=serial_port,
                         drive=find_drive(RP2_DRIVE, mount_table()) or _default_drive(RP2_DRIVE),
                         picotool=shutil.which("picotool"), usb=board.console.usb)

    def check(self) -> None:
        super().check()
        if not self.config.picotool and not self.config.drive.is_dir():
            raise RunnerError(
                f"no {RP2_DRIVE} drive is mounted (looked for {self.config.drive}) and picotool "
                f"is not on PATH: hold BOOTSEL while plugging the board in and mount the drive, "
                f"or {self.install}")

    def argv(self) -> list[str]:
        return uf2_argv(self.config)
