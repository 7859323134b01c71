"""Runner ``host``: firmware built for the host port, as a local process.

The process serves one TCP connection on loopback (AOT_HOST_LISTEN, see
runtime_c/ports/host/port.c), so the RPC talks to it exactly as to QEMU.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from flash.base import ChildProcess, FlashImage, Runner, RunnerError

_LISTENING = re.compile(rb"aot-host: listening on 127\.0\.0\.1:(\d+)")


@dataclass(frozen=True)
class HostConfig:
    executable: Path
    args: tuple[str, ...] = ()
    start_timeout: float = 5.0


def host_argv(cfg: HostConfig) -> list[str]:
    return [str(cfg.executable), *cfg.args]


def host_env(base: dict[str, str]) -> dict[str, str]:
    """The child's environment: ask for any free loopback port."""
    return {**base, "AOT_HOST_LISTEN": "0"}


class HostRunner(Runner):
    name = "host"
    takes = ("elf",)  # the host build's executable (its "ELF": a program for this machine)
    reply_timeout = 5.0  # a process of this machine, scheduled as the load allows

    def __init__(self, config: HostConfig):
        self.config = config
        self._child: ChildProcess | None = None

    @classmethod
    def for_board(cls, board, image: FlashImage, serial_port: str | None) -> HostConfig:
        return HostConfig(executable=image.path)

    def argv(self) -> list[str]:
        return host_argv(self.config)

    def start(self) -> str:
        cfg = self.config
        if not Path(cfg.executable).is_file():
            raise RunnerError(f"host firmware {cfg.executable} does not exist; build it first")
        self._child = ChildProcess(host_argv(cfg), env=host_env(dict(os.environ)))
        deadline = time.monotonic() + cfg.start_timeout
        while time.monotonic() < deadline:
            self._child.stderr.seek(0)
            found = _LISTENING.search(self._child.stderr.read())
            if found:
                return f"socket://127.0.0.1:{int(found.group(1))}"
            if self._child.proc.poll() is not None:
                break
            time.sleep(0.01)
        raise RunnerError(f"{cfg.executable} did not start listening:\n{self._child.error_text()}")

    def stop(self) -> None:
        child, self._child = self._child, None
        if child is not None:
            child.stop()
