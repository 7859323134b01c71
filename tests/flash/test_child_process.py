"""A board process (QEMU, the host port) dies with the process that started it."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

needs_linux = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                 reason="PR_SET_PDEATHSIG is Linux's")

OWNER = """
import sys, time
from flash.base import ChildProcess
child = ChildProcess(["sleep", "600"])
print(child.proc.pid, flush=True)
time.sleep(600)
"""


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its reaper does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def gone(pid: int, wait: float = 30.0) -> bool:
    """Whether ``pid`` ends within ``wait`` seconds (a bound for a loaded machine,
    not a measurement)."""
    deadline = time.monotonic() + wait
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@needs_linux
def test_a_child_is_killed_when_its_owner_is_killed():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    owner = subprocess.Popen([sys.executable, "-c", OWNER], stdout=subprocess.PIPE, env=env,
                             text=True)
    try:
        child = int(owner.stdout.readline())
        assert alive(child)
        owner.send_signal(signal.SIGKILL)    # the owner runs no code of its own
        owner.wait()
        assert gone(child), f"process {child} outlived its owner"
    finally:
        owner.kill()
        owner.wait()
        owner.stdout.close()
        if alive(child):
            os.kill(child, signal.SIGKILL)


@needs_linux
def test_a_child_started_by_a_live_owner_keeps_running(tmp_path):
    from flash.base import ChildProcess

    child = ChildProcess(["sleep", "600"])
    try:
        assert alive(child.proc.pid)
    finally:
        child.stop()
    assert not alive(child.proc.pid)
