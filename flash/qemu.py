"""Runner ``qemu``: an emulated board with its UART on a loopback TCP port."""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path

from flash.base import ChildProcess, FlashImage, Runner, RunnerError

# Deterministic virtual time: one instruction per nanosecond (see QEMU.md).
ICOUNT = "shift=0,align=off,sleep=off"


@dataclass(frozen=True)
class QemuConfig:
    """Everything the qemu runner needs; a board record provides these later."""

    elf: Path
    machine: str                      # -M, e.g. "mps2-an386"
    qemu: str = "qemu-system-arm"     # or "qemu-system-riscv32"
    cpu: str | None = None            # -cpu, when the machine's default is not wanted
    extra_args: tuple[str, ...] = ()  # e.g. ("-bios", "none") for riscv virt
    icount: bool = True               # exact instruction counts (slower)
    start_timeout: float = 10.0       # seconds for QEMU to open its serial port
    host: str = field(default="127.0.0.1")


def qemu_argv(cfg: QemuConfig, port: int) -> list[str]:
    """The QEMU command line; the guest waits until the host connects to ``port``."""
    argv = [cfg.qemu, "-M", cfg.machine]
    if cfg.cpu:
        argv += ["-cpu", cfg.cpu]
    argv += ["-nographic", "-monitor", "none"]
    if cfg.icount:
        argv += ["-icount", ICOUNT]
    argv += [
        "-semihosting-config", "enable=on,target=native",
        "-serial", f"tcp:{cfg.host}:{port},server=on,wait=on,nodelay=on",
        "-kernel", str(cfg.elf),
        *cfg.extra_args,
    ]
    return argv


# QEMU options the runner sets itself (with its own values).
_RUNNER_OWNED = {"-icount", "-semihosting-config", "-display", "-serial", "-monitor", "-kernel"}


def qemu_extra_args(args: tuple[str, ...]) -> tuple[str, ...]:
    """A board record's QEMU arguments minus the options the runner sets."""
    out, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg in _RUNNER_OWNED:
            skip = True
        else:
            out.append(arg)
    return tuple(out)


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free a moment ago (QEMU reports it if taken since)."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def is_listening(port: int, pid: int | None = None) -> bool:
    """Whether something listens on loopback ``port``, without connecting
    (a connection would be taken by QEMU as the host's); with ``pid``, whether
    that process does: the port came from :func:`free_port`, so another QEMU
    started at the same moment may have taken it, and its serial port must not
    be mistaken for ours.  (The runner's child is QEMU itself, or a wrapper that
    ``exec``s it: a wrapper that forks would never be seen listening.)"""
    want = f":{port:04X}"
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[1].endswith(want) and fields[3] == "0A":  # 0A: LISTEN
                if pid is None or f"socket:[{fields[9]}]" in _sockets_of(pid):
                    return True
    return False


def _sockets_of(pid: int) -> set[str]:
    """The ``socket:[inode]`` links of ``pid``'s open files (empty if gone)."""
    folder = Path(f"/proc/{pid}/fd")
    out = set()
    try:
        entries = list(folder.iterdir())
    except OSError:
        return out
    for entry in entries:
        try:
            out.add(os.readlink(entry))
        except OSError:
            continue
    return out


#: QEMU starts again on another port when the one it was given was taken meanwhile.
_PORT_ATTEMPTS = 3


class QemuRunner(Runner):
    """Starts QEMU; yields ``socket://127.0.0.1:PORT``; kills QEMU on exit."""

    name = "qemu"
    takes = ("elf",)  # -kernel loads an ELF at its addresses
    # QEMU shares the host's CPUs: at a load of 25 on two cores a VWW input's
    # WRITE went unanswered for four 1-second attempts
    reply_timeout = 5.0

    def __init__(self, config: QemuConfig):
        self.config = config
        self.port: int | None = None
        self._child: ChildProcess | None = None

    @classmethod
    def for_board(cls, board, image: FlashImage, serial_port: str | None) -> QemuConfig:
        if board.qemu is None:
            raise RunnerError(f"{board.tag} is not emulated: the qemu runner cannot run it; "
                              f"runners: {', '.join(r.name for r in board.runners)}")
        return QemuConfig(elf=image.path, machine=board.qemu.machine, qemu=board.qemu.system,
                          extra_args=qemu_extra_args(board.qemu.args))

    def argv(self) -> list[str]:
        """The command line; before :meth:`start` with a port that was free just now."""
        return qemu_argv(self.config, self.port or free_port(self.config.host))

    def start(self) -> str:
        cfg = self.config
        if not Path(cfg.elf).is_file():
            raise RunnerError(f"firmware {cfg.elf} does not exist; build the project first")
        for _ in range(_PORT_ATTEMPTS):
            self.port = free_port(cfg.host)
            try:
                self._child = ChildProcess(qemu_argv(cfg, self.port))
            except RunnerError as err:
                raise RunnerError(f"{err}; install QEMU (apt-get install qemu-system-arm "
                                  "qemu-system-misc)") from None
            if self._wait_listening(cfg):
                return f"socket://{cfg.host}:{self.port}"
            # another process took the port between free_port() and QEMU's bind
            self._child.stop()
        raise RunnerError(f"{cfg.qemu} found its serial port taken {_PORT_ATTEMPTS} times in a "
                          f"row (the last {self.port}): is something grabbing loopback ports?")

    def _wait_listening(self, cfg: QemuConfig) -> bool:
        """True once our QEMU listens on ``self.port``; False when it exited because
        the port was taken; a :class:`RunnerError` for any other exit or a timeout."""
        deadline = time.monotonic() + cfg.start_timeout
        while not is_listening(self.port, self._child.proc.pid):
            if self._child.proc.poll() is not None:
                text = self._child.error_text()
                if "Address already in use" in text:
                    return False
                raise RunnerError(
                    f"{cfg.qemu} exited with status {self._child.proc.returncode} before "
                    f"opening its serial port:\n{text}"
                )
            if time.monotonic() > deadline:
                raise RunnerError(f"{cfg.qemu} did not open port {self.port} within "
                                  f"{cfg.start_timeout:g} s")
            time.sleep(0.01)
        return True

    def wait(self, timeout: float) -> int:
        """Wait for the guest to end (semihosting exit); return QEMU's status."""
        return self._child.proc.wait(timeout=timeout)

    def stop(self) -> None:
        child, self._child = self._child, None
        if child is not None:
            child.stop()
