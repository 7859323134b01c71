"""Board tags: one validated data file per board, resolved in one lookup.

A board record lives in ``boards/<vendor>/<board>.toml`` (package data of the
wheel, :func:`aot.resources.boards_dir`) and is checked against
``boards/schema.json`` when loaded (:mod:`aot.target.records` finds and reads
the files); docs/boards.md describes every field. :func:`load_board` turns a
tag, an alias or a versioned tag (``qemu/mps2-an386:v1``) into a frozen
:class:`Board` holding the target, memory map, toolchain, runtime port,
runners, console and timer facts. The canonical tag (the file's path) is what
logs and artifacts record; ``Board.target.tag`` carries it.

The host board's target is the word ``native`` in its file: it becomes the
target of the machine running aot (``c -mtriple=x86_64-linux-gnu`` on this
one), because the host compiler builds for exactly that machine.
"""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from aot.target.errors import BoardError, TargetError, suggest
from aot.target.records import (BOARDS_DIR, find_record, native_target_string, read_record,
                                record_index, target_string)
from aot.target.target import Target

#: The board used when none is named: an emulated Cortex-M4F.
DEFAULT_BOARD = "qemu/mps2-an386"


@dataclass(frozen=True)
class Region:
    """A range of memory: ``origin`` and ``length`` in bytes; for data memories
    the ``speed`` rank (1 the fastest, None unranked)."""

    name: str
    origin: int
    length: int
    note: str = ""
    speed: int | None = None
    wait_states: int | None = None  # flash: what the port sets for the board's clock

    @property
    def end(self) -> int:
        """One past the last byte."""
        return self.origin + self.length


@dataclass(frozen=True)
class FlashReads:
    """What reading flash costs on a board, from its record's ``memory.timing``: the
    cycles a fetch and a data read wait when they miss everything in front of the
    flash (``memory.flash.wait_states``, or ``timing.flash.fetch_cycles`` and
    ``data_cycles`` where the flash has no such setting), the bytes one data-read
    miss brings (the line of the nearest data cache serving flash, else the
    flash's width), that cache's size (0: none), and SRAM's wait states.

    The cycle estimate simulates every access (:mod:`aot.cycles.memory`); this
    summary is what the compiler's placement prices with (docs/memory.md
    "Placement")."""

    fetch_cycles: int
    data_cycles: int
    data_line_bytes: int
    data_cache_bytes: int
    sram_wait_states: int

    @property
    def zero_wait(self) -> bool:
        """Flash data reads cost what SRAM's do (the emulated boards)."""
        return self.data_cycles <= self.sram_wait_states


#: Bytes a bare-metal port's linker script reserves for the stack at the top
#: of ``ram`` unless the board record says otherwise (``memory.stack_bytes``);
#: runtime_c/board.mk and runtime.cmake default to the same for port-only builds.
DEFAULT_STACK_BYTES = 0x2000


@dataclass(frozen=True)
class Memory:
    """Where code and constants go (``flash``), the main ``ram``, extra pools,
    and the stack the firmware reserves at the top of ``ram``."""

    flash: Region
    ram: Region
    pools: tuple[Region, ...] = ()
    stack_bytes: int = DEFAULT_STACK_BYTES
    caches: tuple[str, ...] | None = None  # switched on by the port; None: not described
    #: ``memory.timing`` as validated by the schema (None: not described); the cycle
    #: estimate reads it (``aot.cycles.memory.memory_for_board``)
    timing: dict | None = field(default=None, compare=False)
    #: ``memory.code_in_ram_bytes``: bytes of ``ram`` the hottest kernels' code may
    #: take, copied from flash at start-up (0: code runs from flash only)
    code_in_ram_bytes: int = 0

    @property
    def model_ram_bytes(self) -> int:
        """The part of ``ram`` left for a model (and the rest of the firmware's
        static data) once the stack is reserved."""
        return self.ram.length - self.stack_bytes

    def regions(self) -> tuple[Region, ...]:
        return (self.flash, self.ram, *self.pools)

    def flash_reads(self) -> FlashReads | None:
        """What a flash read costs (:class:`FlashReads`), or None where the record
        describes no memory timing or gives neither ``memory.flash.wait_states``
        nor ``timing.flash.fetch_cycles`` (the cycle estimate's
        :func:`aot.cycles.memory.memory_for_board` refuses such a record by name)."""
        timing = self.timing
        if timing is None:
            return None
        flash = timing["flash"]
        fetch = self.flash.wait_states
        if fetch is None:
            fetch = flash.get("fetch_cycles")
        if fetch is None:
            return None
        data_caches = [c for c in timing["caches"] if c["serves"] in ("flash", "all")
                       and c["access"] in ("data", "both")]
        nearest = data_caches[0] if data_caches else None
        return FlashReads(
            fetch_cycles=fetch, data_cycles=flash.get("data_cycles", fetch),
            data_line_bytes=nearest["line_bytes"] if nearest else flash["width_bytes"],
            data_cache_bytes=nearest.get("bytes", nearest["line_bytes"]) if nearest else 0,
            sram_wait_states=timing["sram"]["wait_states"])

    def linker_memory(self) -> str:
        """The ``MEMORY`` command of a GNU ld script for these regions.

        Region names are upper-cased (``FLASH``, ``RAM``, ``DTCM``); flash
        is ``rx``, everything else ``rwx``.
        """
        lines = ["MEMORY", "{"]
        for r in self.regions():
            mode = "rx" if r is self.flash else "rwx"
            where = f"ORIGIN = 0x{r.origin:08x}, LENGTH = 0x{r.length:08x}"
            lines.append(f"  {r.name.upper()} ({mode}) : {where}")
        return "\n".join([*lines, "}"]) + "\n"

    def pool(self, name: str) -> Region:
        for r in self.regions():
            if r.name == name:
                return r
        names = [r.name for r in self.regions()]
        raise BoardError(f"no memory pool {name!r}{suggest(name, names)}; pools: {names}")


#: The optimisation of a board's firmware when its record names none
#: (``toolchain.opt_flags``): what the kernels are tuned and sized with.
DEFAULT_OPT_FLAGS = ("-O2",)


@dataclass(frozen=True)
class Toolchain:
    """The cross compiler: ``prefix + "gcc"``, CPU flags, optimisation, extra flags.

    Every build of the board's firmware (``aot build``, the artifact's P.mk and
    CMakeLists.txt, ``aot_add_model``, the SDK layouts) takes these flags from
    here, through :func:`aot.export.board_build`.
    """

    prefix: str
    cpu_flags: tuple[str, ...]
    cflags: tuple[str, ...] = ()
    ldflags: tuple[str, ...] = ()
    opt_flags: tuple[str, ...] = DEFAULT_OPT_FLAGS

    def tool(self, name: str) -> str:
        """The program name of a tool (``gcc``, ``objcopy``, ``size``)."""
        return self.prefix + name


@dataclass(frozen=True)
class Runner:
    """A flash runner (``qemu``, ``openocd``...) and its board-specific arguments."""

    name: str
    args: tuple[str, ...] = ()


@dataclass(frozen=True)
class Image:
    """What the runner writes: the ELF, a UF2 (RP2040) or an ESP app image.

    ``uf2_family`` tags every UF2 block; ``esp_chip``, ``flash_mode``,
    ``flash_freq`` and ``flash_size`` go to esptool's elf2image and
    ``offset`` is where the image goes in flash (aot.firmware.images).
    """

    format: str = "elf"
    uf2_family: int | None = None
    esp_chip: str | None = None
    offset: int | None = None
    flash_mode: str | None = None
    flash_freq: str | None = None
    flash_size: str | None = None


@dataclass(frozen=True)
class Console:
    """The byte stream to the runtime: UART kind and base, baud rate, and the
    USB ids (``vid:pid``) its serial bridge may enumerate with (real boards)."""

    kind: str
    baud: int
    base: int | None = None
    usb: tuple[str, ...] = ()


@dataclass(frozen=True)
class Clocks:
    """How the runtime port reaches ``clock_hz``: the oscillator, the
    arithmetic, and what the firmware measures its clock against."""

    source: str
    derivation: str
    measured_by: str
    reference_hz: int | None = None


@dataclass(frozen=True)
class DeviceFacts:
    """What a board's firmware should report about itself (its device
    report, aot/rpc); None where the record says nothing."""

    core_clock_hz: int | None = None
    flash_wait_states: int | None = None
    caches: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Qemu:
    """How to emulate the board: ``system -M machine *args``; ``device`` holds
    what the firmware reports under the emulator where QEMU leaves the
    silicon's clock tree or flash interface unmodelled."""

    system: str
    machine: str
    args: tuple[str, ...] = ()
    device: DeviceFacts | None = None


@dataclass(frozen=True)
class Timer:
    """The timer the runtime measures with.

    ``icount_instructions_per_tick`` is how many guest instructions one tick
    is under QEMU's ``-icount shift=0`` (40 on mps2, 31.25 on the AN547, 1
    for RISC-V ``rdinstret``), so tick counts convert to instruction counts.
    """

    kind: str
    clock_hz: int | None = None
    icount_instructions_per_tick: float | None = None


@dataclass(frozen=True)
class Cores:
    """The processor cores of a board that the compiler may place work on.

    Core 0 boots, runs the RPC and the timer; ``start`` says how it starts
    the others (``sse200_cpuwait``: write core 1's vector table address to
    the SSE-200's INITSVTOR1 and clear its CPUWAIT bit, at ``sysctl_base``;
    ``rp2040_fifo``: send the boot ROM's launch command through the SIO's
    inter-core FIFO, ``sysctl_base`` being the SIO).
    ``identity_base`` is a register reading the running core's number.
    Each further core gets ``stack_bytes`` of stack (a static array of the port).
    ``shared`` names the memories every core reaches at the same address.
    A board whose record has no ``[cores]`` has one core.
    """

    count: int = 1
    start: str | None = None
    sysctl_base: int | None = None
    identity_base: int | None = None
    stack_bytes: int = 0
    shared: tuple[str, ...] = ()
    note: str = ""

    def reach(self, core: int) -> tuple[str, ...] | None:
        """The data memories ``core`` reaches: every memory of a one-core board (None
        stands for all of them), the ``shared`` ones of a board with several (no
        record declares core-local RAM yet)."""
        if not 0 <= core < self.count:
            raise TargetError(f"core {core}: the board has cores 0 to {self.count - 1}")
        return self.shared if self.count > 1 else None


@dataclass(frozen=True)
class Board:
    """Everything about one board, from its record file.

    ``memory`` and ``qemu`` are None where they do not apply (the host has
    no fixed memory map; only emulated boards have a QEMU machine).
    """

    tag: str
    version: int
    aliases: tuple[str, ...]
    description: str
    platform: str
    cpu: str
    target: Target
    port: str
    verified: str
    note: str
    toolchain: Toolchain
    runners: tuple[Runner, ...]
    console: Console
    timer: Timer
    memory: Memory | None = None
    qemu: Qemu | None = None
    clock_hz: int | None = None
    image: Image = Image()
    path: Path | None = None
    clocks: Clocks | None = None
    cores: Cores = Cores()

    @property
    def versioned_tag(self) -> str:
        return f"{self.tag}:v{self.version}"

    @property
    def emulated(self) -> bool:
        return self.platform == "qemu"

    @property
    def runner(self) -> Runner:
        """The preferred runner."""
        return self.runners[0]

    def expected_device(self) -> DeviceFacts:
        """What the firmware's device report should say: the record's clock,
        flash wait states and caches, or under QEMU what ``[qemu] device``
        says the emulator shows instead."""
        mem = self.memory
        facts = DeviceFacts(self.clock_hz, mem.flash.wait_states if mem else None,
                            mem.caches if mem else None)
        if self.emulated and self.qemu is not None and self.qemu.device is not None:
            override = self.qemu.device
            facts = DeviceFacts(
                override.core_clock_hz or facts.core_clock_hz,
                facts.flash_wait_states if override.flash_wait_states is None
                else override.flash_wait_states,
                facts.caches if override.caches is None else override.caches)
        return facts

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: the record's fields, the canonical target string and JSON."""
        out = asdict(self)
        out["target"] = str(self.target)
        out["target_json"] = self.target.to_dict()
        out["path"] = None if self.path is None else str(self.path)
        out["emulated"] = self.emulated
        return out


@functools.cache
def native_target() -> Target:
    """The target of the machine running aot, as the host's gcc sees it."""
    return Target(native_target_string())


def runs_on_host(target: Target) -> bool:
    """True if code for ``target`` runs on the machine running aot.

    That is a target naming no processor (a bare ``c``: portable C) or one
    with this machine's instruction set, such as the ``host/native`` board's.
    """
    return all(t.isa in (None, native_target().isa) for t in target.targets)


def load_board_file(path: str | Path) -> Board:
    """Load and validate one board record from any path (tests use this).

    A broken file raises :class:`BoardError` naming the file and the field.
    """
    path = Path(path)
    return _board(path, read_record(path))


def _board(path: Path, data: dict[str, Any]) -> Board:
    """The board of a record read from ``path`` (:func:`aot.target.records.read_record`)."""
    try:
        target = Target(target_string(data))
    except TargetError as err:
        raise BoardError(f"{path}: field 'target': {err}") from None
    if target.tag is not None:
        raise BoardError(f"{path}: field 'target': leave -tag out, the file's tag is used")
    mem = data.get("memory")
    memory = None
    if mem is not None:
        memory = Memory(
            flash=Region("flash", **mem["flash"]),
            ram=Region("ram", **mem["ram"]),
            pools=tuple(Region(**p) for p in mem.get("pools", ())),
            stack_bytes=mem.get("stack_bytes", DEFAULT_STACK_BYTES),
            caches=tuple(mem["caches"]) if "caches" in mem else None,
            timing=mem.get("timing"),
            code_in_ram_bytes=mem.get("code_in_ram_bytes", 0),
        )
        if memory.stack_bytes >= memory.ram.length:
            raise BoardError(f"{path}: field 'memory.stack_bytes': {memory.stack_bytes} bytes "
                             f"of stack leave nothing of the {memory.ram.length} bytes of RAM")
        names = [r.name for r in memory.regions()]
        if len(set(names)) != len(names):
            raise BoardError(f"{path}: field 'memory.pools': a pool name is used twice")
        spans = sorted(memory.regions(), key=lambda r: r.origin)
        for a, b in zip(spans, spans[1:]):
            if b.origin < a.end:
                raise BoardError(
                    f"{path}: field 'memory': the regions {a.name!r} [0x{a.origin:08x}, "
                    f"0x{a.end:08x}) and {b.name!r} [0x{b.origin:08x}, 0x{b.end:08x}) overlap "
                    f"by {min(a.end, b.end) - b.origin} bytes; give each memory once")
    cores = _cores(path, data.get("cores"), memory)
    tc = data["toolchain"]
    qemu = data.get("qemu")
    return Board(
        tag=data["tag"],
        version=data["version"],
        aliases=tuple(data.get("aliases", ())),
        description=data["description"],
        platform=data["platform"],
        cpu=data["cpu"],
        target=target.with_tag(data["tag"]),
        port=data["port"],
        verified=data["verified"],
        note=data["note"].strip(),
        toolchain=Toolchain(
            prefix=tc["prefix"],
            cpu_flags=tuple(tc["cpu_flags"]),
            cflags=tuple(tc.get("cflags", ())),
            ldflags=tuple(tc.get("ldflags", ())),
            opt_flags=tuple(tc.get("opt_flags", DEFAULT_OPT_FLAGS)),
        ),
        runners=tuple(Runner(r["name"], tuple(r.get("args", ()))) for r in data["runners"]),
        console=Console(**{**data["console"], "usb": tuple(data["console"].get("usb", ()))}),
        timer=Timer(**data["timer"]),
        memory=memory,
        qemu=None
        if qemu is None
        else Qemu(qemu["system"], qemu["machine"], tuple(qemu.get("args", ())),
                  _device_facts(qemu.get("device"))),
        clock_hz=data.get("clock_hz"),
        image=Image(**data.get("image", {})),
        path=path,
        clocks=Clocks(**data["clocks"]) if "clocks" in data else None,
        cores=cores,
    )


#: What each way of starting further cores needs from the record.
_CORE_START_NEEDS = {"sse200_cpuwait": ("sysctl_base", "identity_base", "stack_bytes"),
                     "rp2040_fifo": ("sysctl_base", "identity_base", "stack_bytes")}


def _cores(path: Path, table: dict | None, memory: Memory | None) -> Cores:
    if table is None:
        return Cores()
    cores = Cores(**{**table, "shared": tuple(table["shared"])})
    missing = [f for f in _CORE_START_NEEDS[cores.start] if not table.get(f)]
    if missing:
        raise BoardError(f"{path}: field 'cores': start = {cores.start!r} needs "
                         f"{', '.join('cores.' + f for f in missing)}")
    names = [r.name for r in memory.regions()] if memory is not None else []
    unknown = [n for n in cores.shared if n not in names or n == "flash"]
    if unknown:
        raise BoardError(f"{path}: field 'cores.shared': {', '.join(map(repr, unknown))} "
                         f"is not a data memory of the record; memories: {names[1:]}")
    if memory is not None and memory.stack_bytes + cores.stack_bytes * (cores.count - 1) \
            >= memory.ram.length:
        raise BoardError(f"{path}: field 'cores.stack_bytes': {cores.count} stacks "
                         f"do not fit the {memory.ram.length} bytes of RAM")
    return cores


def check_cores(board: Board | None, cores: int) -> None:
    """Refuse ``--cores N`` that the board cannot have: none, fewer than 1, more than
    the board's (``--cores 1`` is core 0 alone, what every build does).  Two cores
    split the model's layers across both (:func:`aot.passes.place_cores`) and the
    entry function hands core 1 its half of each step (docs/targets.md).
    """
    if board is None:
        raise TargetError(f"--cores {cores}: the number of cores is a board fact; give --board")
    have = board.cores.count
    multi = [b.tag for b in list_boards() if b.cores.count > 1]
    if cores < 1:
        raise TargetError(f"--cores {cores}: give 1 to {have}, the cores {board.tag} has")
    if cores > have:
        hint = (f"; boards with several cores: {', '.join(multi)}" if have == 1
                else f"; give 1 to {have}")
        raise TargetError(f"--cores {cores}: {board.tag} has {have} "
                          f"core{'s' if have > 1 else ''}{hint}")
    if cores > 2:
        raise TargetError(f"not supported yet: --cores {cores} (the entry function hands "
                          "work to core 1 only); give 1 or 2")


def board_devices(composite: Target, board: Board | None = None) -> tuple[Target, Board, int]:
    """A composite target's devices as cores of one board: the board's target refined
    by its members, the board, and how many cores they name (then :func:`check_cores`).

    The board is ``board`` (``--board``) or the one every member names with
    ``-tag``.  Each member refines the board's target as ``--target`` does
    (:meth:`Target.refined_by`: same kind, may add attributes, never change
    them); the members must come out equal (the cores of one board run one
    target) and be no more than the board's cores.  Refused with the names and
    numbers: members of several boards, no board at all, members that differ,
    more members than cores, a ``-host``.
    """
    members = composite.targets
    shown = ", ".join(repr(str(m)) for m in members)
    if composite.host is not None:
        raise TargetError(f"not supported yet: a composite target with -host "
                          f"(-host={{{composite.host}}}): aot generates device code only")
    tags = sorted({m.tag for m in members if m.tag})
    if board is None:
        if len(tags) > 1:
            raise TargetError(f"not supported yet: a composite target over several boards "
                              f"({', '.join(tags)}): its devices must be cores of one board")
        if not tags:
            multi = [b.tag for b in list_boards() if b.cores.count > 1]
            raise TargetError(f"the composite target's devices ({shown}) are cores of a "
                              f"board: give --board TAG (boards with several cores: "
                              f"{', '.join(multi)}), or -tag=TAG on its members")
        board = load_board(tags[0])
    elif tags and tags != [board.tag]:
        raise TargetError(f"the composite target's members name {', '.join(tags)} but "
                          f"--board is {board.tag}")
    where = f"the board {board.tag} ({board.target})"
    refined = [board.target.refined_by(m.with_tag(None), where=where) for m in members]
    for k, r in enumerate(refined[1:], start=1):
        if r != refined[0]:
            raise TargetError(f"not supported yet: composite members that differ ({members[0]} "
                              f"and {members[k]}): the cores of {board.tag} run one target "
                              f"({board.target})")
    n = len(members)
    if n > board.cores.count:
        have = board.cores.count
        raise TargetError(f"the composite target names {n} devices but {board.tag} has "
                          f"{have} core{'s' if have > 1 else ''}")
    return refined[0], board, n


def _device_facts(table: dict | None) -> DeviceFacts | None:
    if table is None:
        return None
    caches = table.get("caches")
    return DeviceFacts(table.get("core_clock_hz"), table.get("flash_wait_states"),
                       None if caches is None else tuple(caches))


@functools.cache
def _boards(folder: Path) -> dict[str, Board]:
    """Every board under ``folder``, by canonical tag, in tag order."""
    return {tag: _board(path, data) for tag, (path, data) in record_index(folder).records.items()}


def list_boards(boards_dir: str | Path | None = None) -> list[Board]:
    """Every board record, sorted by canonical tag."""
    return list(_boards(Path(boards_dir or BOARDS_DIR).resolve()).values())


def load_board(tag: str, boards_dir: str | Path | None = None) -> Board:
    """The board for a canonical tag, an alias, or either with ``:vN``.

    An unknown tag or version raises :class:`BoardError` (a
    :class:`~aot.target.errors.TargetError`) with a close match and the
    known tags.
    """
    _, data = find_record(tag, boards_dir)
    return _boards(Path(boards_dir or BOARDS_DIR).resolve())[data["tag"]]
