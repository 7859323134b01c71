"""What every runner shares: the error type, the interface, process helpers."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from aot.errors import AotError


class RunnerError(AotError):
    """Flashing or starting a device failed; the message says what to try."""


#: The kinds of file a build makes for flashing, and what each holds.
IMAGE_FORMATS = {
    "elf": "an ELF executable (its load addresses inside)",
    "uf2": "a UF2 file (flash addresses in every block)",
    "esp": "an ESP app image (raw bytes, written at the app partition's flash offset)",
}


@dataclass(frozen=True)
class FlashImage:
    """One file a build made for flashing: ``format`` (a key of
    :data:`IMAGE_FORMATS`), its ``path``, and the flash ``offset`` it is
    written at for formats that carry no addresses (``esp``)."""

    format: str
    path: Path
    offset: int | None = None

    def __post_init__(self):
        if self.format not in IMAGE_FORMATS:
            raise ValueError(f"unknown image format {self.format!r}")
        if (self.format == "esp") != (self.offset is not None):
            need = "needs" if self.format == "esp" else "takes no"
            raise ValueError(f"a {self.format} image {need} flash offset")


class Runner:
    """Puts firmware on a device and opens its byte stream.

    Use as a context manager: ``with QemuRunner(cfg) as url:`` flashes/starts
    the device, yields the transport URL for :mod:`aot.rpc`, and always
    releases what it started (processes included), also on exceptions.
    Subclasses set :attr:`name` and build their command line in a pure
    module-level function, so it can be tested without hardware.
    """

    name: ClassVar[str]
    #: The image formats this runner's tool writes (:data:`IMAGE_FORMATS`),
    #: preferred first: :meth:`choose_image` picks from what a build made.
    takes: ClassVar[tuple[str, ...]]
    #: Whether the RPC reaches the board on its serial port (a real board), which
    #: must then be known, given or found (flash.serial_port.pick_serial_port).
    needs_serial_port: ClassVar[bool] = False
    #: Why a board record might not list this runner, added to the refusal
    #: of a board that does not (``aot flash --runner``).
    unlisted_hint: ClassVar[str] = ""
    #: Whether the serial port alone says which board this runner flashes (it
    #: flashes through the port, as esptool does): then several boards of one
    #: kind need no probe serial numbers (:meth:`with_probe`).
    port_selects_board: ClassVar[bool] = False
    #: Seconds one RPC attempt waits for the device's reply (aot.rpc.session:
    #: a call gives up after four attempts).  A board's UART answers in
    #: milliseconds; an emulator or host process is a process of this machine,
    #: which a loaded host may not schedule for seconds.
    reply_timeout: ClassVar[float] = 1.0

    @classmethod
    def choose_image(cls, images: Sequence[FlashImage], where: str) -> FlashImage:
        """The first of the formats this runner takes that ``images`` (what the
        build of ``where`` made) has; a :class:`RunnerError` naming both if none."""
        made = {image.format: image for image in images}
        for fmt in cls.takes:
            if fmt in made:
                return made[fmt]
        takes = " or ".join(cls.takes)
        offered = ", ".join(f"{i.path.name} ({i.format})" for i in images) or "nothing"
        raise RunnerError(f"runner {cls.name} writes {takes} images, and the build of {where} "
                          f"makes {offered}")

    @classmethod
    def for_board(cls, board, image: FlashImage, serial_port: str | None):
        """This runner's config for ``board`` and the built ``image`` (one it
        takes: :meth:`choose_image`), from the board record alone;
        :class:`RunnerError` if it cannot run it."""
        raise NotImplementedError

    @classmethod
    def with_probe(cls, config, probe: str):
        """``config`` flashing through the debug probe whose serial number is
        ``probe`` (one of several attached); a :class:`RunnerError` for runners
        that cannot choose a probe."""
        raise RunnerError(f"runner {cls.name} cannot choose one of several attached boards "
                          f"by probe serial number ({probe}); attach one such board at a time")

    def argv(self) -> list[str]:
        """The command line that flashes or starts the device (``aot flash --dry-run``)."""
        raise NotImplementedError

    def start(self) -> str:
        """Flash or launch; return the transport URL."""
        raise NotImplementedError

    def stop(self) -> None:
        """Release everything :meth:`start` acquired; safe to call twice."""

    def __enter__(self) -> str:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc) -> None:
        self.stop()


def run_tool(argv: Sequence[str], what: str, timeout: float, hint: str,
             install: str = "") -> None:
    """Run a flashing tool to completion or raise :class:`RunnerError`;
    ``install`` says how to get the tool when it is missing."""
    try:
        result = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        raise RunnerError(f"{argv[0]} is not installed or not on PATH; "
                          f"{install or hint}") from None
    except subprocess.TimeoutExpired:
        raise RunnerError(f"{what} did not finish within {timeout:g} s; {hint}") from None
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-8:])
        raise RunnerError(f"{what} failed with status {result.returncode}:\n{tail}\n{hint}")


#: prctl(2)'s option for the signal a process gets when its parent dies (linux/prctl.h).
PR_SET_PDEATHSIG = 1


def _prctl():
    """libc's ``prctl`` on Linux, else None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _prctl()


def die_with_owner() -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the child get SIGKILL when the process
    starting it dies (Linux's ``PR_SET_PDEATHSIG``; None elsewhere).

    Why this and not a process group or a reaper: an owner killed with
    SIGKILL (a farm worker, ``aot run`` under ``timeout -s KILL``) runs no
    code, so nothing it would do on exit (killing its group) happens, and a
    reaper is one more process whose own death leaves the same problem; the
    kernel signals the child whatever way the owner ends.  The signal follows
    the thread that started the child: aot starts a board from the thread
    that uses it (a worker's main thread).  A child whose owner died between
    the fork and the prctl sees another parent and ends at once."""
    if _PRCTL is None:
        return None
    owner = os.getpid()

    def preexec() -> None:
        _PRCTL(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != owner:
            os._exit(1)
    return preexec


class ChildProcess:
    """A background process whose stderr goes to a temporary file; it dies
    with the process that started it (:func:`die_with_owner`)."""

    def __init__(self, argv: Sequence[str], env: dict[str, str] | None = None):
        self.argv = list(argv)
        self.stderr = tempfile.TemporaryFile()
        try:
            self.proc = subprocess.Popen(
                self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=self.stderr, env=env, preexec_fn=die_with_owner(),
            )
        except OSError as err:
            self.stderr.close()
            raise RunnerError(f"cannot start {self.argv[0]}: {err}") from None

    def error_text(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace").strip()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.stderr.close()
