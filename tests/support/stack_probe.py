"""Stack actually used by firmware under QEMU: inputs run over the RPC, then RAM read
back through the QEMU machine protocol (QMP ``memsave``)."""

from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path

import numpy as np

from aot.rpc import connect
from flash import QemuConfig
from flash.qemu import QemuRunner, free_port, qemu_extra_args


def symbol(project, name: str) -> tuple[int, int]:
    """Address and size of the ELF symbol ``name`` (``nm -S``; size 0 when it has none)."""
    nm = project.board.toolchain.tool("nm")
    out = subprocess.run([nm, "-S", str(project.elf)], capture_output=True, text=True,
                         check=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if parts[-1] == name:
            return int(parts[0], 16), int(parts[1], 16) if len(parts) == 4 else 0
    raise AssertionError(f"{project.elf} has no symbol {name}")


def qmp_commands(port: int, *commands: dict) -> None:
    """Send QEMU machine protocol commands, each answered before the next."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        stream = s.makefile("rw")
        json.loads(stream.readline())  # the greeting
        for command in [{"execute": "qmp_capabilities"}, *commands]:
            stream.write(json.dumps(command) + "\n")
            stream.flush()
            while True:
                reply = json.loads(stream.readline())
                if "error" in reply:
                    raise AssertionError(f"QMP {command['execute']}: {reply['error']}")
                if "return" in reply:
                    break


def run_and_read(project, inputs: list[np.ndarray], address: int, size: int,
                 dump: Path) -> np.ndarray:
    """Run the ``[N, ...]`` ``inputs`` on the project's firmware under QEMU (each
    written, run and its outputs read over the RPC), then stop the machine and
    return the ``size`` bytes of RAM at ``address`` as little-endian words."""
    board = project.board
    meta = project.metadata
    qmp = free_port()
    config = QemuConfig(elf=project.elf, machine=board.qemu.machine, qemu=board.qemu.system,
                        extra_args=(*qemu_extra_args(board.qemu.args), "-qmp",
                                    f"tcp:127.0.0.1:{qmp},server=on,wait=off"))
    with QemuRunner(config) as url, connect(url) as dev:
        for i in range(inputs[0].shape[0]):
            for port, x in zip(meta["inputs"], inputs):
                dev.write_tensor(port["c_name"], x[i])
            dev.run(1)
            for port in meta["outputs"]:
                dev.read_tensor(port["c_name"])
        # memsave reads through core 0's view (pmemsave's system view misses the
        # SSE-200's Secure aliases: zeros on the AN521).
        qmp_commands(qmp, {"execute": "stop"},
                     {"execute": "memsave", "arguments": {"val": address, "size": size,
                                                          "cpu-index": 0,
                                                          "filename": str(dump)}})
    return np.frombuffer(dump.read_bytes(), "<u4")
