"""Numbers of the wire protocol, mirrored from runtime_c/include/aot/*.h.

tests/rpc/test_protocol.py parses the C headers and checks every value here,
so the two sides cannot drift apart silently.  docs/runtime.md is the spec.
"""

from __future__ import annotations

import enum

PROTOCOL_VERSION = 1
REPLY = 0x80
WHOLE_MODEL = 0xFFFF
LOADED_KERNEL = 0xFFFE
HEADER_SIZE = 8
CRC_SIZE = 4


class Command(enum.IntEnum):
    HELLO = 0x01
    INFO = 0x02
    TENSOR_INFO = 0x03
    KERNEL_INFO = 0x04
    WRITE = 0x05
    READ = 0x06
    RUN = 0x07
    ECHO = 0x08
    LOAD_CODE = 0x09
    COMMIT_CODE = 0x0A


class Status(enum.IntEnum):
    OK = 0
    UNKNOWN_COMMAND = 1
    BAD_LENGTH = 2
    BAD_TENSOR = 3
    OUT_OF_RANGE = 4
    READ_ONLY = 5
    SESSION = 6
    DUPLICATE_ID = 7
    RUN_FAILED = 8
    BAD_KERNEL = 9
    BAD_COUNT = 10
    BAD_MODEL = 11
    BAD_ARGUMENT = 12
    BAD_CHECKSUM = 13


class Capability(enum.IntFlag):
    """Bits of the capabilities word at the end of the INFO reply."""

    RAM_LOADER = 0x01
    CLOCK = 0x02       # the device reports its core clock (DeviceInfo.clock_hz)
    DEVICE = 0x04      # the device report follows (DeviceInfo.device)


#: Bytes of the device report this host knows (a length byte precedes it;
#: a newer firmware may send more, which is skipped).
DEVICE_REPORT_BYTES = 7
#: flash_wait_states where the flash has none to set (XIP, nRF52).
NO_WAIT_STATES = 0xFF
#: The largest wait-state count any supported flash interface has (4 bits).
MAX_WAIT_STATES = 15


class Cache(enum.IntFlag):
    """Bits of the device report's caches word (AOT_CACHE_* in aot/platform.h);
    the lower-case names are what ``aot run --json`` prints and records list."""

    L1_ICACHE = 0x01        # Cortex-M7 L1 instruction cache
    L1_DCACHE = 0x02        # Cortex-M7 L1 data cache
    FLASH_PREFETCH = 0x04   # flash interface prefetch (STM32 PRFTEN)
    FLASH_ICACHE = 0x08     # flash instruction cache (STM32F4/L4 ICEN, nRF52 NVMC)
    FLASH_DCACHE = 0x10     # flash data cache (STM32F4/L4 DCEN)
    ART = 0x20              # STM32F7 ART accelerator (ITCM flash interface)
    XIP = 0x40              # cache in front of external flash (RP2040, ESP32-C3)


CACHE_NAMES = {c.name.lower(): c for c in Cache}


class Dtype(enum.IntEnum):
    INT8 = 1
    UINT8 = 2
    INT16 = 3
    UINT16 = 4
    INT32 = 5
    UINT32 = 6
    FLOAT32 = 7
    INT64 = 8


NUMPY_DTYPES = {
    Dtype.INT8: "<i1",
    Dtype.UINT8: "<u1",
    Dtype.INT16: "<i2",
    Dtype.UINT16: "<u2",
    Dtype.INT32: "<i4",
    Dtype.UINT32: "<u4",
    Dtype.FLOAT32: "<f4",
    Dtype.INT64: "<i8",
}


class Role(enum.IntEnum):
    INPUT = 1
    OUTPUT = 2
    WORKSPACE = 3
    CONSTANT = 4


TENSOR_WRITABLE = 0x01


class TimerUnit(enum.IntEnum):
    INSTRUCTIONS = 0
    CYCLES = 1
    NANOSECONDS = 2
