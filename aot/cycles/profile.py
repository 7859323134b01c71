"""Per-kernel profile of a model on a board: instructions, cycles, memory stalls, MACs, RAM.

The recipe of ``aot profile``::

    compile -> project -> build            (aot.compile, aot.firmware) for the trace board:
                                           the board itself when emulated, else the
                                           emulated board of its core (memory.timing)
    QEMU with -d exec,nochain              (aot.cycles.session)
      + the memory trace plugin            (aot.cycles.memtrace) where the memory waits
      RUN whole model once  -> one trace window, split per kernel at each kernel's entry
      RUN each kernel alone -> its exact instruction count from the RPC
    CostModel(core of the board).estimate  (aot.cycles.model, zero wait states)
    Walker(memory of the board).walk       (aot.cycles.memory: cache and flash stalls)

The whole-model window is split into segments at the entry of each kernel
function (``metadata.json``'s kernel names): everything executed from one
kernel's entry to the next one's (its helpers and C library calls included)
is that kernel's; blocks of the entry function and the RPC wrapper are the
"(entry)" row, so the rows add up to the traced total exactly.  The traced
total agrees with the RPC's exact count of the same run up to the timer's
constant (a few instructions, reported as ``rpc_instructions``).
"""

from __future__ import annotations

import re
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from aot.compile import compile_model, resolve_target
from aot.cycles.cores import CoreTiming, core_for_board
from aot.cycles.errors import CycleModelError
from aot.cycles.memory import MemorySystem, Stalls, Walker, memory_for_board
from aot.cycles.memtrace import Placement, accesses, plugin_args, plugin_library, read_log
from aot.cycles.model import CostModel
from aot.cycles.program import Program
from aot.cycles.session import check_emulated, traced_device
from aot.cycles.trace import TraceParser
from aot.executor.memory import check_fits_board
from aot.firmware import build_project, create_project
from aot.firmware.verify import random_inputs
from aot.inputs import check_inputs
from aot.target import load_board

#: Seconds for one RUN under QEMU with the execution log on (several times slower).
RUN_TIMEOUT = 600.0
ENTRY_ROW = "(entry)"
#: The port's function that ends the RPC's measurement (runtime_c/ports/*/port.c).
TIMER_STOP = "aot_port_timer_stop"
#: How far the traced count may be from the RPC's before the report warns: the RPC's call
#: sequence around the measured function differs from the traced window by a few instructions
#: (2 on every board tried); more means QEMU ran code the trace did not show.
TRACE_TOLERANCE = 16


@dataclass(frozen=True)
class KernelProfile:
    """One row: a kernel (or the entry function's own code)."""

    name: str                      # the RPC's kernel name, e.g. fused_0_conv2d
    symbol: str | None             # the kernel's C function
    ops: tuple[str, ...]
    instructions: int              # executed within the whole-model run (trace)
    instructions_alone: int | None  # the RPC's exact count running the kernel alone
    cycles: float                  # core cycles plus memory stalls
    macs: int
    activation_bytes: int | None   # tensors live while it runs, plus its scratch
    stalls: Stalls | None = None   # memory stalls (None: the memory never waits)

    @property
    def cycles_per_mac(self) -> float | None:
        return self.cycles / self.macs if self.macs else None


@dataclass(frozen=True)
class Profile:
    model: str
    board: str
    core: CoreTiming
    memory: MemorySystem
    clock_hz: int | None
    rpc_instructions: int          # the RPC's exact count of the whole model
    rows: tuple[KernelProfile, ...]
    by_class: dict[str, float]
    #: what the traced whole-model run wrote to each model output, in the model's order
    outputs: tuple[np.ndarray, ...] = ()
    #: the emulated board whose QEMU run produced the trace
    trace_board: str | None = None
    #: what the compiler's placement copied to RAM (metadata.json's ``placement``), or None
    placement: dict | None = None

    @property
    def stall_cycles(self) -> float:
        return sum(r.stalls.total for r in self.rows if r.stalls is not None)

    @property
    def instructions(self) -> int:
        return sum(r.instructions for r in self.rows)

    @property
    def cycles(self) -> float:
        return sum(r.cycles for r in self.rows)

    @property
    def macs(self) -> int:
        return sum(r.macs for r in self.rows)

    @property
    def trace_complete(self) -> bool:
        """Whether the trace accounts for the RPC's exact count (docs/cycles.md)."""
        return abs(self.rpc_instructions - self.instructions) <= TRACE_TOLERANCE

    def kernels(self) -> tuple[KernelProfile, ...]:
        return tuple(r for r in self.rows if r.symbol is not None)

    def to_json(self) -> dict:
        total = self.cycles
        return {
            "model": self.model, "board": self.board, "core": self.core.name,
            "core_model": "approximate" if self.core.approximate else "TRM tables",
            "memory": self.memory.to_json(),
            "trace_board": self.trace_board,
            "placement": self.placement,
            "clock_hz": self.clock_hz,
            "instructions": self.instructions,
            "rpc_instructions": self.rpc_instructions,
            "trace_complete": self.trace_complete,
            "cycles": round(total),
            "memory_stall_cycles": round(self.stall_cycles),
            "ms": self.ms(),
            "macs": self.macs,
            "cycles_by_class": {k: round(v) for k, v in sorted(self.by_class.items())},
            "kernels": [{
                "name": r.name, "function": r.symbol, "ops": list(r.ops),
                "instructions": r.instructions, "instructions_alone": r.instructions_alone,
                "cycles": round(r.cycles), "macs": r.macs,
                "cycles_per_mac": None if r.cycles_per_mac is None else round(r.cycles_per_mac, 3),
                "activation_bytes": r.activation_bytes,
                "share": round(r.cycles / total, 4) if total else 0.0,
                "memory_stalls": None if r.stalls is None else r.stalls.to_json(),
            } for r in self.rows],
        }

    def ms(self, clock_hz: int | None = None) -> float | None:
        clock = clock_hz or self.clock_hz
        return round(self.cycles / clock * 1e3, 6) if clock else None

    def table(self) -> str:
        """The human-readable report of ``aot profile``."""
        total = self.cycles or 1
        head = ("kernel", "instructions", "cycles", "stalls", "MACs", "cycles/MAC", "act. RAM",
                "share")
        lines = [[r.name, f"{r.instructions:,}", f"{round(r.cycles):,}",
                  "" if r.stalls is None else f"{round(r.stalls.total):,}", f"{r.macs:,}",
                  "" if r.cycles_per_mac is None else f"{r.cycles_per_mac:.2f}",
                  "" if r.activation_bytes is None else f"{r.activation_bytes:,}",
                  f"{100 * r.cycles / total:.1f}%"] for r in self.rows]
        per_mac = f"{self.cycles / self.macs:.2f}" if self.macs else ""
        lines.append(["total", f"{self.instructions:,}", f"{round(self.cycles):,}",
                      f"{round(self.stall_cycles):,}", f"{self.macs:,}", per_mac, "", "100.0%"])
        widths = [max(len(str(x[k])) for x in [head, *lines]) for k in range(len(head))]

        def fmt(row) -> str:
            return "  ".join(str(c).ljust(w) if k == 0 else str(c).rjust(w)
                             for k, (c, w) in enumerate(zip(row, widths)))
        kind = "approximate model" if self.core.approximate else "TRM timings"
        title = f"{self.model} on {self.board}: {self.core.name} cycle estimate ({kind})"
        traced = ("" if self.trace_board in (None, self.board)
                  else f"; trace from {self.trace_board}, priced with {self.board}'s memory")
        out = [title, f"memory: {self.memory.describe()}{traced}"]
        if self.placement is not None:
            moved = self.placement["moved"]
            out.append(f"placement: {sum(m['bytes'] for m in moved):,} bytes of constants of "
                       f"{len(moved)} kernels copied to {self.placement['region']} (the "
                       f"compiler estimated {self.placement['cycles_saved']:,} cycles saved)")
        out += [fmt(head), fmt(["-" * w for w in widths])]
        out += [fmt(r) for r in lines]
        if not self.trace_complete:
            out.append(f"warning: the trace holds {self.instructions:,} instructions but the "
                       f"RPC counted {self.rpc_instructions:,}: QEMU ran code the trace does "
                       "not show, the estimate misses it (report it with the QEMU version)")
        ms = self.ms()
        if ms is not None:
            out.append(f"{ms:.4g} ms at {self.clock_hz / 1e6:g} MHz; exact instruction count "
                       f"from the RPC: {self.rpc_instructions:,}")
        return "\n".join(out)


def profile_model(model, board: str, *, inputs: list[np.ndarray] | None = None, seed: int = 0,
                  name: str = "model", target: str | None = None, workdir=None,
                  cache_dir: Path | None = None, jobs: int | None = None,
                  **compile_options) -> Profile:
    """Compile ``model`` for ``board`` (or, for a real board, the emulated board of its
    core that its ``memory.timing.trace_board`` names), run it traced, and profile it
    with ``board``'s core and memory.

    ``target`` refines the board's target as ``--target`` with ``--board`` does
    (``c -libs=cmsis-nn`` hands every layer CMSIS-NN supports to it, docs/byoc.md);
    ``compile_options`` go to :func:`aot.compile.compile_model` (``codegen_options=
    {"cmsis-nn": {"path": ...}}``, ``patches="off"``, ...).  The profile's ``outputs``
    are what the traced run computed, for the caller to check against the reference.
    The default placement (docs/memory.md "Placement") is made for ``board``'s memory,
    as ``aot compile --board`` makes it; ``placement=False`` keeps every constant in flash.
    """
    record = load_board(board)
    core = core_for_board(record)      # refuse before compiling anything
    memory = memory_for_board(record)
    trace = record if record.qemu is not None else load_board(memory.trace_board)
    if trace.qemu is None:
        raise CycleModelError(f"{record.tag}: memory.timing.trace_board {trace.tag} is not "
                              "emulated; name an emulated board of the same core")
    check_emulated(trace)
    compile_options.setdefault("placement", record)
    compiled = compile_model(model, resolve_target(trace.tag, refine=target)[0], name=name,
                             measure_code=False, **compile_options)
    graph = compiled.graph
    if trace is not record:  # planned for the trace board's memory: it must fit the real one
        check_fits_board(compiled.plan, graph, record, sizes=compiled.sizes,
                         kernels=compiled.kernels)
    if inputs is None:
        inputs = random_inputs(graph, 1, seed)
    inputs = check_inputs(graph, inputs)
    with tempfile.TemporaryDirectory(prefix="aot-profile-", dir=workdir) as tmp:
        root = Path(tmp)
        project = create_project(compiled.write(root / "artifact"), trace, root / "project")
        build_project(project, cache_dir=cache_dir, jobs=jobs)
        return profile_project(project, core, memory, [x[0] for x in inputs],
                               model_name=graph.name, board=record)


def profile_project(project, core: CoreTiming, memory: MemorySystem | None, inputs, *,
                    model_name: str, board=None) -> Profile:
    """Profile a built project (one invocation with ``inputs``, one array per model input).

    ``board`` is the board priced (default: the project's own); ``memory`` its memory
    system (None: the project board's, which must describe one).  Where any access
    waits, QEMU also runs the memory trace plugin and the stalls join each row."""
    meta = project.metadata
    name = meta["name"]
    board = board or project.board
    memory = memory or memory_for_board(project.board)
    program = Program(project.elf)
    kernels = meta["kernels"]
    run_fn = _function(program, f"{name}_rpc_run")
    stop = _function(program, TIMER_STOP)
    markers = {_function(program, k["name"]): k["name"] for k in kernels}
    glue = {f"{name}_rpc_run", meta["entry"]["run"], meta["entry"]["run_with_workspace"]}
    parser = TraceParser({run_fn: "model"}, stop, markers)
    with tempfile.TemporaryDirectory(prefix="aot-memtrace-") as tmp:
        log = Path(tmp) / "memtrace.bin"
        extra = () if memory.zero_wait else plugin_args(plugin_library(Path(tmp)), log,
                                                        run_fn, stop)
        with traced_device(project, parser, extra_args=extra) as (dev, reader):
            for port, x in zip(meta["inputs"], inputs):
                dev.write_tensor(port["c_name"], x)
            rpc_names = dev.kernels()
            # a stage's kernels run only inside its loop (per patch or band): the
            # RPC lists the others, in order, and times them alone
            callable_ = [k for k in kernels if not k.get("in_stage")]
            if len(rpc_names) != len(callable_):
                raise CycleModelError(f"the device lists {len(rpc_names)} kernels, "
                                      f"metadata.json {len(callable_)}: was the project "
                                      "built from this artifact?")
            whole = dev.run(1, timeout=RUN_TIMEOUT).timings[0]
            (window,) = reader.wait_windows(1, RUN_TIMEOUT)
            records = None if memory.zero_wait else read_log(log)
            outputs = tuple(dev.read_tensor(port["c_name"]) for port in meta["outputs"])
            alone = {k["name"]: (rpc, dev.run(1, kernel=rpc, timeout=RUN_TIMEOUT).timings[0])
                     for k, rpc in zip(callable_, rpc_names)}
    cost = CostModel(program, core)
    segments: dict[str, Counter] = {}
    for label, edges in window.segments.items():
        for edge, count in edges.items():
            row = ENTRY_ROW if program.function_at(edge[0]) in glue else label
            segments.setdefault(row, Counter())[edge] += count
    if records is not None:
        records = same_run(records, window, stop)
    stalls = None if records is None else _stalls(records, program, project, memory, markers,
                                                  glue, [k["name"] for k in kernels])
    by_class: Counter = Counter()
    rows = []
    live = _live_bytes(meta)
    entries = {name: addr for addr, name in markers.items()}
    for kernel in kernels:
        calls = 1
        if kernel.get("in_stage"):  # its MACs are one call's: count the calls in the trace
            calls = sum(c for edges in window.segments.values() for edge, c in edges.items()
                        if edge[2] == entries[kernel["name"]])
        est = cost.estimate(segments.pop(kernel["name"], Counter()))
        by_class.update(est.by_class)
        stall = None if stalls is None else stalls.get(kernel["name"], Stalls())
        # a stage kernel: its symbol names the row, its counts add up all its calls
        rpc_name, alone_count = alone.get(kernel["name"], (kernel["name"], None))
        step = _step(rpc_name) if kernel["name"] in alone else None
        rows.append(KernelProfile(
            name=rpc_name, symbol=kernel["name"], ops=tuple(kernel.get("ops", ())),
            instructions=est.instructions, instructions_alone=alone_count,
            cycles=est.cycles + (stall.total if stall else 0.0),
            macs=int(kernel.get("macs") or 0) * calls,
            activation_bytes=None if step is None else live(step) + kernel.get("scratch_bytes", 0),
            stalls=stall))
    rest: Counter = Counter()
    for edges in segments.values():  # the entry's own code, before the first kernel too
        rest.update(edges)
    est = cost.estimate(rest)
    by_class.update(est.by_class)
    stall = None if stalls is None else stalls.get(ENTRY_ROW, Stalls())
    rows.append(KernelProfile(ENTRY_ROW, None, (), est.instructions, None,
                              est.cycles + (stall.total if stall else 0.0), 0, None, stall))
    return Profile(model=model_name, board=board.tag, core=core, memory=memory,
                   clock_hz=board.clock_hz, rpc_instructions=whole, rows=tuple(rows),
                   by_class=dict(by_class), outputs=outputs, trace_board=project.board.tag,
                   placement=meta.get("placement"))


def same_run(records: np.ndarray, window, stop: int) -> np.ndarray:
    """The plugin's records up to the timer's stop block (which ends the window,
    outside every row), checked against the execution log's window: that counts
    one edge per block after the first, as many as the records' blocks before
    the stop block.  Anything else means the two saw different runs."""
    ends = np.flatnonzero(((records[:, 1] & 3) == 0) & (records[:, 0] == stop))
    records = records[:ends[0]] if len(ends) else records
    blocks, edges = int(np.count_nonzero((records[:, 1] & 3) == 0)), window.edges().total()
    if not len(ends) or blocks != edges:
        raise CycleModelError(f"the memory trace holds {blocks} blocks of the measured run"
                              f"{'' if len(ends) else ' and no end'}, the execution log "
                              f"{edges}: they do not describe the same run (report it with "
                              "the QEMU version)")
    return records


def _stalls(records, program: Program, project, memory: MemorySystem, markers: dict,
            glue: set, kernels: list[str]) -> dict[str, Stalls]:
    """Memory stalls per row (kernel name or ENTRY_ROW) from the plugin's records."""
    blocks = np.flatnonzero((records[:, 1] & 3) == 0)
    if not len(blocks):
        raise CycleModelError("the memory trace holds no block of the measured run: did "
                              "QEMU load the plugin?")
    names = [*kernels, ENTRY_ROW]
    index = {n: k for k, n in enumerate(names)}
    pcs, inverse = np.unique(records[blocks, 0], return_inverse=True)
    marker = np.array([index.get(markers.get(int(pc)), -1) for pc in pcs])[inverse]
    is_glue = np.array([program.function_at(int(pc)) in glue for pc in pcs])[inverse]
    # the segment a block belongs to: the last kernel entry at or before it
    last = np.maximum.accumulate(np.where(marker >= 0, np.arange(len(marker)), -1))
    label = np.where(last >= 0, marker[np.clip(last, 0, None)], index[ENTRY_ROW])
    rows = np.where(is_glue, index[ENTRY_ROW], label)
    ram = project.board.memory.ram
    placement = Placement.of(project.elf, (ram.origin, ram.length), memory.tcm_region)
    walker = Walker(memory)
    out: dict[str, Stalls] = {}
    for row, acc in accesses(records, rows, placement, memory, names):
        out.setdefault(names[row], Stalls()).add(walker.walk(acc))
    return out


def _function(program: Program, symbol: str) -> int:
    if not program.has_function(symbol):
        raise CycleModelError(f"the firmware {program.path} has no function {symbol!r}: the "
                              "profile needs RPC firmware built by aot (aot build)")
    return program.address_of(symbol)


def _step(rpc_name: str) -> int | None:
    """The fused group index in a kernel's RPC name (``fused_3_conv2d`` -> 3)."""
    m = re.search(r"_(\d+)(?:_|$)", rpc_name)
    return int(m.group(1)) if m else None


def _live_bytes(meta: dict):
    """Bytes of the planned buffers (workspace and caller i/o) live at a step."""
    buffers = meta["memory_plan"]["buffers"]

    def live(step: int) -> int:
        return sum(b["bytes"] for b in buffers if b["first_step"] <= step <= b["last_step"])
    return live
