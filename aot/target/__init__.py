"""Targets, target kinds, board tags and virtual devices.

Public API (everything below is importable from ``aot.target``)::

    t = Target("c -keys=arm_cpu,cpu -mcpu=cortex-m4 -mfloat-abi=hard")
    t = Target({"kind": "c", "mcpu": "cortex-m4", "host": {"kind": "c"}})
    t = Target("qemu/mps2-an386")          # a board's target; t.tag is the canonical tag
    t.kind, t.keys, t.attrs["mcpu"], t.host, t.tag, t.device_type, t.targets
    str(t), t.to_json(), t.to_dict(), t.digest()   # canonical forms, SHA-256 key
    t.isa, t.family, t.has_dsp, t.has_fpu, t.fpu, t.float_abi, t.has_mve,
    t.pointer_bits, t.vector_bytes, t.triple       # derived facts
    t.with_host(h), t.with_tag(tag)                # immutable: new targets

    b = load_board("qemu/mps2-an386")      # alias or "tag:v1" too; BoardError if unknown
    b.tag, b.versioned_tag, b.target, b.cpu, b.platform, b.emulated, b.port,
    b.toolchain.prefix, .cpu_flags, .cflags, .ldflags, .tool("gcc"),
    b.memory.flash / .ram / .pools (Region: name, origin, length, end), b.memory.pool("dtcm"),
    b.memory.linker_memory()               # the MEMORY block of a GNU ld script
    b.runners[i].name/.args, b.runner, b.console.kind/.base/.baud/.usb,
    b.qemu.system/.machine/.args (None unless emulated),
    b.timer.kind/.clock_hz/.icount_instructions_per_tick, b.clock_hz, b.note, b.verified
    b.clocks.source/.derivation/.measured_by/.reference_hz (None where not described),
    b.memory.flash.wait_states, b.memory.caches, b.expected_device() (DeviceFacts)
    list_boards(), load_board_file(path), DEFAULT_BOARD, native_target(), runs_on_host(t)

    VirtualDevice.parse("qemu/mps2-an386:1"), TargetLabels().register("dsp", t)
    KINDS (registry: KINDS.get("c").attrs), TargetKind, AttrSpec
    TargetError (an AotError), BoardError (a TargetError)

``b.memory`` is None for the host board, ``b.qemu`` for non-emulated ones.
Facts are None/False where the target does not say (a bare ``c``).
See docs/targets.md and docs/boards.md.
"""

from aot.target.errors import BoardError, TargetError
from aot.target.facts import Facts
from aot.target.kinds import CODEGENS, KINDS, AttrSpec, KindRegistry, TargetKind
from aot.target.tags import (
    BOARDS_DIR,
    DEFAULT_BOARD,
    DEFAULT_OPT_FLAGS,
    Board,
    Clocks,
    Cores,
    board_devices,
    check_cores,
    Console,
    DeviceFacts,
    Memory,
    Qemu,
    Region,
    Runner,
    Timer,
    Toolchain,
    list_boards,
    load_board,
    load_board_file,
    native_target,
    runs_on_host,
)
from aot.target.target import Target, names_a_board
from aot.target.virtual_device import LABELS, TargetLabels, VirtualDevice

__all__ = [
    "AttrSpec",
    "BOARDS_DIR",
    "Board",
    "BoardError",
    "Clocks",
    "Cores",
    "board_devices", "check_cores",
    "Console",
    "DEFAULT_BOARD",
    "DEFAULT_OPT_FLAGS",
    "DeviceFacts",
    "Facts",
    "CODEGENS",
    "KINDS",
    "KindRegistry",
    "LABELS",
    "Memory",
    "Qemu",
    "Region",
    "Runner",
    "Target",
    "names_a_board",
    "TargetError",
    "TargetKind",
    "TargetLabels",
    "Timer",
    "Toolchain",
    "VirtualDevice",
    "list_boards",
    "load_board",
    "load_board_file",
    "native_target",
    "runs_on_host",
]
