"""Check a board's serial port before flashing, so a wrong one is named with its fix.

:func:`check_serial_port` opens the device the way the RPC will and turns
the three usual failures into messages that say what to do: the port does
not exist (board unplugged, another name), permission is denied (not in the
group that owns it, ``dialout`` on Debian and Ubuntu), another program holds
it (a serial monitor: an exclusive lock or a UUCP lock file).
"""

from __future__ import annotations

import errno
import fcntl
import glob
import grp
import os
from pathlib import Path

from flash.base import RunnerError

#: Where serial monitors (minicom, picocom, screen) leave UUCP lock files.
LOCK_DIRS = ("/var/lock", "/run/lock")


def is_device_path(url: str) -> bool:
    """A local serial device (``/dev/ttyACM0``), not a pyserial URL (``socket://``)."""
    return "://" not in url


def _present_ports() -> str:
    ports = sorted(glob.glob("/dev/ttyACM*") + glob.glob("/dev/ttyUSB*"))
    return f"serial ports present: {', '.join(ports)}" if ports else "no /dev/ttyACM* or " \
        "/dev/ttyUSB* is present: check the USB cable (a charge-only cable has no data lines)"


def _group_of(path: str) -> str:
    try:
        return grp.getgrgid(os.stat(path).st_gid).gr_name
    except (KeyError, OSError):
        return "dialout"


def _lock_holder(path: str, lock_dirs: tuple[str, ...]) -> int | None:
    """The live process named by a UUCP lock file of ``path`` (``LCK..ttyACM0``)."""
    for folder in lock_dirs:
        lock = Path(folder) / f"LCK..{Path(path).name}"
        try:
            pid = int(lock.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue  # a stale lock
        except PermissionError:
            pass  # alive, another user's
        return pid
    return None


def _busy(path: str, who: str) -> RunnerError:
    return RunnerError(f"serial port {path} is busy: {who} holds it (a serial monitor such as "
                       f"screen, minicom, picocom or an IDE's monitor); close it and try again "
                       f"(`fuser -v {path}` shows which program)")


def check_serial_port(path: str, lock_dirs: tuple[str, ...] = LOCK_DIRS) -> None:
    """Raise :class:`RunnerError` naming ``path`` and the fix unless it can be opened."""
    if not is_device_path(path):
        return
    if not os.path.exists(path):
        raise RunnerError(f"serial port {path} does not exist: is the board plugged in and "
                          f"powered? {_present_ports()}; pass the right one with --port")
    holder = _lock_holder(path, lock_dirs)
    if holder is not None:
        raise _busy(path, f"process {holder}")
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
    except PermissionError:
        group = _group_of(path)
        raise RunnerError(f"permission denied on serial port {path}: add yourself to the "
                          f"{group} group (sudo usermod -aG {group} $USER), then log out and "
                          "in again") from None
    except OSError as err:
        if err.errno == errno.EBUSY:
            raise _busy(path, "another program") from None
        raise RunnerError(f"cannot open serial port {path}: {err.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # what pyserial's exclusive mode takes
    except BlockingIOError:
        raise _busy(path, "another program") from None
    finally:
        os.close(fd)  # closing drops our lock too


def probe_serial(port: str, sys_root: Path = Path("/sys")) -> str | None:
    """The USB serial number of the device behind serial port ``port``
    (``/dev/ttyACM0``, or a ``/dev/serial/by-id/...`` link to it), read from
    sysfs: for a debug probe with a virtual COM port (ST-LINK, CMSIS-DAP,
    J-Link OB) the number openocd's ``adapter serial`` and pyocd's ``--uid``
    take, so several such boards are each flashed through their own probe.
    None when ``port`` is not a USB serial device of this machine."""
    if not is_device_path(port):
        return None
    name = Path(os.path.realpath(port)).name
    try:
        here = (sys_root / "class" / "tty" / name / "device").resolve(strict=True)
    except OSError:
        return None
    top = sys_root.resolve()
    for folder in (here, *here.parents):
        if (folder / "idVendor").is_file() and (folder / "serial").is_file():
            return (folder / "serial").read_text().strip() or None
        if folder == top:
            break
    return None
