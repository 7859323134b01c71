"""Find a board's serial port, and check it before flashing, so a wrong one is named with its fix.

:func:`find_serial_port` finds the port as esptool and the vendors' tools do
when none is given: among the ports pyserial lists
(``serial.tools.list_ports``), the one whose USB vendor and product id is one
the board record gives for its serial bridge (``console.usb``).  It refuses
to guess between several, and names them.

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
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

from serial.tools import list_ports

from aot.errors import AotWarning
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


def usb_id(port) -> str | None:
    """``vid:pid`` in lower-case hex of a pyserial ``ListPortInfo``; None off USB."""
    if port.vid is None or port.pid is None:
        return None
    return f"{port.vid:04x}:{port.pid:04x}"


def describe_port(port) -> str:
    """``/dev/ttyUSB0 (USB 10c4:ea60, CP2102N USB to UART Bridge, serial 0001)``."""
    facts = [f"USB {usb_id(port)}"] if usb_id(port) else []
    if port.description and port.description not in ("n/a", port.device):
        facts.append(port.description)
    if port.serial_number:
        facts.append(f"serial {port.serial_number}")
    return f"{port.device} ({', '.join(facts)})" if facts else port.device


def find_serial_port(usb: Sequence[str], comports: Callable[[], list] | None = None):
    """The one serial port (a pyserial ``ListPortInfo``) whose USB id is in
    ``usb`` (the board record's ``console.usb``) among ``comports()``
    (default: pyserial's ``list_ports.comports``); :class:`RunnerError` naming
    what is present when none is, and naming the candidates when several are."""
    ids = " or ".join(usb)
    if not usb:
        raise RunnerError("the board record gives no USB id of its serial bridge "
                          "(console.usb), so its serial port cannot be found: pass it with "
                          "--port (e.g. /dev/ttyACM0)")
    ports = sorted((comports or list_ports.comports)(), key=lambda p: p.device)
    found = [p for p in ports if usb_id(p) in usb]
    if len(found) == 1:
        return found[0]
    if found:
        raise RunnerError(f"{len(found)} serial ports have the board's USB id ({ids}): "
                          f"{'; '.join(describe_port(p) for p in found)}; pick one with --port")
    present = ", ".join(describe_port(p) for p in ports)
    seen = f"serial ports present: {present}" if present else "no serial port is present"
    raise RunnerError(f"no serial port has the board's USB id ({ids}): is the board plugged in "
                      f"(with a data cable)? {seen}; or pass the port with --port")


def pick_serial_port(usb: Sequence[str], who: str) -> str:
    """The device path :func:`find_serial_port` finds, announced as a notice
    (``note: runner esptool: using serial port ...``) for ``who`` uses it."""
    port = find_serial_port(usb)
    warnings.warn(AotWarning(f"{who}: using serial port {describe_port(port)}, the one with "
                             "the board's USB id; --port picks another"), stacklevel=2)
    return port.device


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
