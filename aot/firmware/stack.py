"""Peak stack use of firmware: GCC's call graph, the linked libraries and exceptions.

:func:`stack_usage` compiles the project's sources once more with the
project's flags plus ``-fcallgraph-info=su``, merges the per-file call
graphs and takes the deepest path: from the entry point (the reset handler,
which calls ``main``) for the runtime, from the descriptor's functions
(``<name>_rpc_run`` and ``<name>_rpc_kernel_<k>``) for the model.  The RPC
server calls the model through a function pointer, which the graph cannot
follow, so the firmware's peak is bounded by their sum.

GCC's graph ends at functions it did not compile: the C library and the
compiler's helpers (``memcpy``, ``memset``, ``__aeabi_uldivmod``...),
including the calls GCC itself emits while expanding code (a struct copy
becomes ``memcpy``), and the port's assembly.  Those come from the linked
ELF (which must exist: build the project first): each function's frame is
what its instructions push and subtract from the stack pointer (summed over
the whole function, an upper bound), its callees are its direct branches to
other functions, and the compiled functions gain the calls into them that
only the binary shows.

On Cortex-M an exception (an interrupt such as the port's SysTick, or a
fault) can arrive at the deepest point: the core pushes its frame on the
same stack, 8 words (32 bytes), or 26 words (104 bytes) once the thread has
used the FPU (S0-S15, FPSCR and one reserved word; the space is reserved
even with lazy stacking), plus a 4-byte word to realign the stack to 8
bytes (CCR.STKALIGN, on by default), and the handler then runs on top.
Handlers come from the vector table (``.isr_vector``); one level is
counted, since the fault handlers end the program.  RISC-V traps push
nothing in hardware (the port's trap handler is in the graph as assembly).

Recursion, dynamic frames or stack pointer arithmetic that is not a constant
make the result unbounded (``bounded`` False).

A model placed on two cores hands tasks to core 1, which runs them on a stack
of its own (the board record's ``cores.stack_bytes``): :class:`CoreStack`
bounds it from the core's start in the port's vector table, through the
worker loop and the tasks it calls through function pointers (named by
metadata.json's ``entry.tasks``), and :func:`check_core_stacks` refuses a
stack smaller than that.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from aot.errors import BuildError
from aot.firmware.project import Project

_NODE = re.compile(r'node: \{ title: "([^"]+)" label: "[^"]*?\\n(\d+) bytes \(([^)]*)\)')
_EDGE = re.compile(r'edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"')

#: Bytes the Cortex-M core pushes on exception entry: the basic frame, the
#: frame with the FP context, and the word that realigns the stack to 8 bytes.
CORTEX_M_FRAME = 32
CORTEX_M_FP_FRAME = 104
CORTEX_M_ALIGN_PAD = 4


@dataclass(frozen=True)
class CoreStack:
    """Worst-case stack bytes of a further core (``core``) against the stack
    its port gives it (``size``): the deepest ``chain`` of function names from
    the core's start through the worker loop into the deepest task it is
    handed (``chain_bytes``), plus an exception arriving on top (frame and
    handler, ``exception``)."""

    core: int
    size: int
    chain_bytes: int
    exception: int
    bounded: bool
    chain: tuple[str, ...]

    @property
    def need(self) -> int:
        return self.chain_bytes + self.exception

    @property
    def fits(self) -> bool:
        return self.need <= self.size

    def to_json(self) -> dict:
        return {"core": self.core, "size": self.size, "need": self.need,
                "chain_bytes": self.chain_bytes, "exception": self.exception,
                "bounded": self.bounded, "chain": list(self.chain)}


@dataclass(frozen=True)
class StackUsage:
    """Worst-case stack bytes of the runtime (from the entry point: the reset
    handler, or ``main`` where the binary is not read), of one inference,
    and of an exception arriving on top of both (frame plus handler);
    ``library`` names the functions from outside the compiled sources that
    the bound includes.  ``cores``: the stack of each further core the model
    hands tasks to (none on one core)."""

    runtime: int
    model: int
    bounded: bool
    exception: int = 0
    library: tuple[str, ...] = ()
    cores: tuple[CoreStack, ...] = ()

    @property
    def peak(self) -> int:
        return self.runtime + self.model + self.exception

    def to_json(self) -> dict:
        return {"runtime": self.runtime, "model": self.model, "exception": self.exception,
                "total": self.peak, "bounded": self.bounded, "library": list(self.library),
                **({"cores": [c.to_json() for c in self.cores]} if self.cores else {})}


def check_core_stacks(usage: StackUsage, board: str) -> None:
    """Refuse firmware whose further core's stack is smaller than the core's
    need (:class:`BuildError` naming the size, the need and the chain): an
    overflow there would silently overwrite whatever RAM lies below it."""
    for c in usage.cores:
        if c.fits:
            continue
        raise BuildError(
            f"core {c.core}'s stack on {board} is too small for what it runs: it needs "
            f"{c.need:,} bytes but has {c.size:,} (the board record's cores.stack_bytes). "
            f"Deepest chain ({c.chain_bytes:,} bytes): {' -> '.join(c.chain)}; then an "
            f"exception, {c.exception:,} bytes. Give cores.stack_bytes at least "
            f"{-(-c.need // 8) * 8:,} in the board record, or compile with --cores 1")


def _graph(texts: list[str]) -> tuple[dict[str, tuple[int, bool]], dict[str, set[str]]]:
    frames: dict[str, tuple[int, bool]] = {}
    calls: dict[str, set[str]] = {}
    for text in texts:
        for name, size, kind in _NODE.findall(text):
            frames[name] = (int(size), kind == "static" or "bounded" in kind)
        for src, dst in _EDGE.findall(text):
            calls.setdefault(src, set()).add(dst)
    return frames, calls


def deepest(root: str, frames: dict[str, tuple[int, bool]],
            calls: dict[str, set[str]]) -> tuple[int, bool]:
    """Bytes of the deepest call chain from ``root``, and whether it is bounded."""
    depth, bounded, _ = deepest_chain(root, frames, calls)
    return depth, bounded


def deepest_chain(root: str, frames: dict[str, tuple[int, bool]],
                  calls: dict[str, set[str]]) -> tuple[int, bool, tuple[str, ...]]:
    """:func:`deepest`, and the chain itself: the graph's titles from ``root``
    down to the last function of the deepest path (ties go to the first callee
    in name order, so the chain does not depend on the order files were read)."""
    memo: dict[str, tuple[int, bool, tuple[str, ...]]] = {}
    active: set[str] = set()

    def visit(fn: str) -> tuple[int, bool, tuple[str, ...]]:
        if fn in memo:
            return memo[fn]
        if fn in active:  # recursion: no static bound
            return 0, False, ()
        active.add(fn)
        own, bounded = frames.get(fn, (0, True))
        below, ok, chain = 0, True, ()
        for callee in sorted(calls.get(fn, ())):
            depth, callee_ok, callee_chain = visit(callee)
            if depth > below:
                below, chain = depth, callee_chain
            ok = ok and callee_ok
        active.discard(fn)
        memo[fn] = (own + below, bounded and ok, (fn, *chain))
        return memo[fn]

    return visit(root)


def reachable(roots, calls: dict[str, set[str]]) -> set[str]:
    seen, todo = set(), list(roots)
    while todo:
        fn = todo.pop()
        if fn not in seen:
            seen.add(fn)
            todo += calls.get(fn, ())
    return seen


def _title(name: str, frames) -> str:
    """The graph's title of function ``name`` (static functions are ``file:name``)."""
    return next((t for t in frames if t == name or t.endswith(":" + name)), name)


# --------------------------------------------------------------- the linked binary

_FUNCTION = re.compile(r"^([0-9a-f]+) <([^>]+)>:$")
_INSN = re.compile(r"^\s*[0-9a-f]+:\s+(\S+)\s*(.*)$")
_TARGET = re.compile(r"<([^>+]+)>")
_REGS = re.compile(r"\{([^}]*)\}")
# Direct branches: Thumb (bl, b.w, conditional b<cc> used as tail calls, cbz), RISC-V.
_CONDS = "eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le|al"
_BRANCH = re.compile(rf"^(bl|blx|b|(b({_CONDS})?)(\.w|\.n)?|cbn?z|jal|jalr|j|call|tail)$")


@dataclass
class BinaryFunction:
    """One function of the disassembly: its frame, its direct callees."""

    frame: int = 0
    bounded: bool = True
    callees: set[str] | None = None


def _reg_bytes(reglist: str) -> int:
    """Bytes a ``{r4, r5, lr}`` or ``{d8-d15}`` register list occupies on the stack."""
    total = 0
    for part in reglist.split(","):
        part = part.strip()
        if not part:
            continue
        size = 8 if part.startswith("d") else 4
        if "-" in part:
            lo, hi = part.split("-")
            total += size * (int(hi.strip()[1:]) - int(lo[1:]) + 1)
        else:
            total += size
    return total


def _sp_decrement(mnemonic: str, operands: str) -> int | None:
    """Bytes an instruction moves the stack pointer down: 0 if none, None if by an
    amount that is not a constant."""
    text = re.split(r"\s+[@;]", operands, maxsplit=1)[0].strip()  # drop objdump's comment
    base = mnemonic.split(".")[0]
    if base in ("push", "vpush") or (base in ("stmdb", "stmfd", "vstmdb")
                                     and text.startswith("sp!")):
        m = _REGS.search(text)
        return _reg_bytes(m.group(1)) if m else None
    m = re.search(r"\[sp,\s*#-(\d+)\]!", text)
    if m:  # str rX, [sp, #-4]!
        return int(m.group(1))
    m = re.fullmatch(r"sp,\s*(?:sp,\s*)?(\S+)", text)
    if m is None:
        return 0  # the stack pointer is not the destination
    operand = m.group(1).lstrip("#")
    if base in ("sub", "subw", "subs"):  # Thumb: sub sp, #N; sub.w sp, sp, #N
        return int(operand) if operand.isdigit() else None
    if base in ("add", "addw", "addi", "c.addi", "c.addi16sp"):  # RISC-V: addi sp,sp,-N
        try:
            return max(0, -int(operand, 0))
        except ValueError:
            return None
    return 0  # mov sp, r7 and the like: restoring it in an epilogue


def parse_disassembly(text: str) -> dict[str, BinaryFunction]:
    """Frames and direct callees of every function of ``objdump -d`` output.
    Functions with the same name (static ones of different files) are merged:
    the larger frame, every callee."""
    functions: dict[str, BinaryFunction] = {}
    current, name, own = None, "", 0
    for line in text.splitlines():
        m = _FUNCTION.match(line)
        if m:
            name, own = m.group(2), 0
            current = functions.setdefault(name, BinaryFunction(callees=set()))
            continue
        m = _INSN.match(line)
        if current is None or not m:
            continue
        mnemonic, operands = m.group(1), m.group(2)
        down = _sp_decrement(mnemonic, operands)
        if down is None:
            current.bounded = False
        else:
            own += down
            current.frame = max(current.frame, own)
        if _BRANCH.match(mnemonic):
            current.callees.update(t for t in _TARGET.findall(operands) if t != name)
    return functions


def _merge_binary(frames, calls, binary: dict[str, BinaryFunction]) -> None:
    """Add the binary's functions that GCC did not compile, and the calls into
    them that only the binary shows, to GCC's graph (in place)."""
    compiled: dict[str, list[str]] = {}
    for title in frames:
        compiled.setdefault(title.rsplit(":", 1)[-1], []).append(title)
    for name, fn in binary.items():
        outside = {c for c in fn.callees if c not in compiled}
        if name in compiled:
            for title in compiled[name]:
                calls.setdefault(title, set()).update(outside)
        else:
            frames[name] = (fn.frame, fn.bounded)
            calls[name] = set(fn.callees)


def _by_address(disassembly: str) -> dict[int, str]:
    out = {}
    for line in disassembly.splitlines():
        m = _FUNCTION.match(line)
        if m:
            out[int(m.group(1), 16)] = m.group(2)
    return out


def _entry(headers: str, disassembly: str) -> str | None:
    """The function at the ELF entry point (``objdump -f``): the reset handler
    or ``_start``, whose frame sits under ``main``'s."""
    m = re.search(r"start address 0x([0-9a-f]+)", headers)
    return _by_address(disassembly).get(int(m.group(1), 16) & ~1) if m else None


def _dump_words(text: str) -> list[int]:
    """The little-endian 32-bit words of ``objdump -s`` output."""
    words = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and re.fullmatch(r"[0-9a-f]{4,}", parts[0]):
            for word in parts[1:5]:
                if re.fullmatch(r"[0-9a-f]{8}", word):
                    words.append(int.from_bytes(bytes.fromhex(word), "little"))
    return words


def _handlers(words: list[int], by_address: dict[int, str]) -> list[str]:
    """The functions a vector table's words point to, past the initial stack
    pointer and the reset handler, each once."""
    handlers = []
    for word in words[2:]:
        name = by_address.get(word & ~1)
        if word and name is not None and name not in handlers:
            handlers.append(name)
    return handlers


def _vector_handlers(text: str, disassembly: str) -> list[str]:
    """The functions the vector table (``objdump -s -j .isr_vector``) points to,
    past the initial stack pointer and the reset handler."""
    return _handlers(_dump_words(text), _by_address(disassembly))


def _symbols(text: str) -> dict[str, tuple[int, int]]:
    """Address and size of every symbol of ``objdump -t`` output, by name."""
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 4 and re.fullmatch(r"[0-9a-f]{8,}", parts[0]) \
                and re.fullmatch(r"[0-9a-f]{8,}", parts[-2]):
            out[parts[-1]] = (int(parts[0], 16), int(parts[-2], 16))
    return out


# ------------------------------------------------------------------------ the project

def _make_vars(project: Project, *names: str) -> list[list[str]]:
    """The values of the project Makefile's variables (e.g. the port's flags and
    sources from its port.mk), as make computes them."""
    rule = "aot-print-vars: ;" + "".join(f"$(info {n}=$({n}))" for n in names) + "@:"
    proc = subprocess.run(["make", "-s", "-C", str(project.path), "--eval", rule,
                           "aot-print-vars"], capture_output=True, text=True,
                          env={**os.environ, "MAKEFLAGS": ""})
    if proc.returncode != 0:
        raise BuildError(f"cannot read the port flags of {project.path}:\n"
                         f"{proc.stderr.strip()}")
    values = dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)
    return [values.get(n, "").split() for n in names]


def _port_cflags(project: Project) -> list[str]:
    """The port's own compile flags (e.g. picolibc's specs on RISC-V), from its port.mk."""
    return _make_vars(project, "AOT_PORT_CFLAGS")[0]


def _macros(cc: str, flags: list[str], cwd: Path) -> dict[str, str]:
    proc = subprocess.run([cc, *flags, "-dM", "-E", "-x", "c", "-"], input="",
                          capture_output=True, text=True, cwd=cwd)
    if proc.returncode != 0:
        raise BuildError(f"cannot read the predefined macros of {cc}:\n{proc.stderr.strip()}")
    out = {}
    for line in proc.stdout.splitlines():
        parts = line.split(None, 2)
        if len(parts) >= 2 and parts[0] == "#define":
            out[parts[1]] = parts[2] if len(parts) == 3 else ""
    return out


def exception_frame(macros: dict[str, str]) -> int:
    """Bytes the core pushes on exception entry for code built with these
    predefined macros (0 where the hardware pushes nothing: RISC-V, the host)."""
    if macros.get("__ARM_ARCH_PROFILE") not in ("77", "'M'"):
        return 0
    # The same condition as the Cortex-M startup's: it turns the FPU on, and once
    # the thread has used it every exception reserves the FP context.
    fp = "__ARM_FP" in macros or "__ARM_FEATURE_MVE" in macros
    return (CORTEX_M_FP_FRAME if fp else CORTEX_M_FRAME) + CORTEX_M_ALIGN_PAD


def _tool(cc: str, name: str) -> str:
    """The binutils tool beside the compiler (``arm-none-eabi-gcc`` ->
    ``arm-none-eabi-objdump``)."""
    return cc[:-3] + name if cc.endswith("gcc") else name


def _compile_graphs(project: Project, cc: str, flags: list[str], sources: list[str],
                    jobs: int) -> list[str]:
    """The ``-fcallgraph-info=su`` text of each source, compiled ``jobs`` at a time."""
    with tempfile.TemporaryDirectory(prefix="aot-stack-") as tmp:
        def one(i: int, src: str) -> str:
            obj = Path(tmp) / f"o{i}.o"
            proc = subprocess.run([cc, *flags, "-fcallgraph-info=su", "-c", src,
                                   "-o", str(obj)],
                                  cwd=project.path, capture_output=True, text=True)
            if proc.returncode != 0:
                raise BuildError(f"cannot analyse the stack of {src}:\n{proc.stderr.strip()}")
            return obj.with_suffix(".ci").read_text()

        with ThreadPoolExecutor(max_workers=jobs) as pool:
            return list(pool.map(one, range(len(sources)), sources))


def _exception(frame: int, handlers: list[str], frames, calls) -> tuple[int, bool]:
    """An exception at the deepest point: the frame the core pushes plus the
    deepest of ``handlers`` (one level: the fault handlers end the program)."""
    depths = [deepest(h, frames, calls) for h in handlers]
    return (frame + max((depth for depth, _ in depths), default=0),
            all(ok for _, ok in depths))


def stack_usage(project: Project, jobs: int | None = None) -> StackUsage:
    """:class:`StackUsage` of a built project (compiles its sources again, into a
    temp folder, ``jobs`` at a time (default: one per CPU), and disassembles its
    ELF file)."""
    d = project.data
    if not project.elf.is_file():
        raise BuildError(f"{project.elf} does not exist: the stack bound reads the linked "
                         f"firmware, build the project first (aot build {project.path})")
    # The sources the Makefile links (runtime.mk's list, the port's), not every file
    # of runtime/src: some there are linked only by firmware that needs them (cores.c,
    # which a model placed on two cores lists among its own sources).
    port_cflags, runtime_srcs, port_srcs = _make_vars(
        project, "AOT_PORT_CFLAGS", "AOT_RUNTIME_SRCS", "AOT_PORT_SRCS")
    runtime = [s for s in [*runtime_srcs, *port_srcs] if s.endswith(".c")]
    flags = [*d["arch_flags"], *d["opt_flags"], *d["cflags"], *port_cflags,
             "-std=c99", "-Imodel/include", "-Iruntime/include"]
    texts = _compile_graphs(project, d["cc"], flags, [*runtime, *d["model_sources"]],
                            jobs or os.cpu_count() or 1)
    frames, calls = _graph(texts)
    compiled = set(frames)
    macros = _macros(d["cc"], flags, project.path)
    objdump = _tool(d["cc"], "objdump")
    disassembly = ""
    if "__arm__" in macros or "__riscv" in macros:  # the instruction sets read here
        disassembly = _run(objdump, "-d", "--no-show-raw-insn", str(project.elf))
        _merge_binary(frames, calls, parse_disassembly(disassembly))

    entry = None
    if disassembly:
        entry = _entry(_run(objdump, "-f", str(project.elf)), disassembly)
    main = _title(entry or "main", frames)
    rt, rt_ok = deepest(main, frames, calls)
    # What the server calls through the descriptor: the whole model, or one of its
    # kernels (RUN of a named kernel).
    pattern = re.compile(rf"{re.escape(project.name)}_rpc_(run|kernel_\d+)")
    entries = [t for t in frames if pattern.fullmatch(t.rsplit(":", 1)[-1])]
    depths = [deepest(t, frames, calls) for t in entries] or [(0, True)]
    model, model_ok = max(depth for depth, _ in depths), all(ok for _, ok in depths)
    roots = [main, *entries]
    exception, exc_ok = 0, True
    frame = exception_frame(macros)
    if frame:
        vectors = _run(objdump, "-s", "-j", ".isr_vector", str(project.elf), check=False)
        handlers = [_title(h, frames) for h in _vector_handlers(vectors, disassembly)]
        roots += handlers
        exception, exc_ok = _exception(frame, handlers, frames, calls)
    cores = ()
    if project.core_tasks:
        cores, core_roots = _core_stacks(project, frames, calls, frame, objdump, disassembly)
        roots += core_roots
    library = sorted(fn for fn in reachable(roots, calls) - compiled if fn in frames)
    return StackUsage(rt, model, rt_ok and model_ok and exc_ok, exception, tuple(library),
                      cores)


# ------------------------------------------------------------------- further cores

#: The function each further core runs once its port has started it: the loop
#: taking tasks from the core's queue (runtime_c/src/cores.c, which hands it to
#: ``aot_port_start_cores``).
CORE_WORKER = "aot_core_worker"


def _core_stacks(project: Project, frames, calls, frame: int, objdump: str,
                 disassembly: str) -> tuple[tuple[CoreStack, ...], list[str]]:
    """The stack of each core the model's tasks (:attr:`Project.core_tasks`) run
    on, and the functions reached from its start; ``frame`` is what the core
    pushes on exception entry.

    The port starts core ``k`` from its vector table ``core<k>_vectors``
    (runtime_c/include/aot/cores.h): word 0 is the initial stack pointer, the
    end of the stack array, whose symbol gives the stack's size; word 1 the
    function core ``k`` starts in; the rest its exception handlers.  The start
    calls the worker and the worker each task through a function pointer, which
    GCC's graph cannot follow: those calls are added to a copy of the graph."""
    elf = str(project.elf)
    symbols = _symbols(_run(objdump, "-t", elf))
    by_address = _by_address(disassembly)
    by_core: dict[int, list[str]] = {}
    for task in project.core_tasks:
        by_core.setdefault(task["core"], []).append(_title(task["function"], frames))
    out, roots = [], []
    for core, tasks in sorted(by_core.items()):
        table = f"core{core}_vectors"
        if table not in symbols or not disassembly:
            raise BuildError(f"{elf} has no {table}: the port of {project.board_tag} does "
                             f"not start core {core} from a vector table of that name "
                             "(runtime_c/include/aot/cores.h), so its stack cannot be bounded")
        address, length = symbols[table]
        words = _dump_words(_run(objdump, "-s", f"--start-address={address:#x}",
                                 f"--stop-address={address + length:#x}", elf))
        top = words[0] if words else None
        size = next((n for at, n in symbols.values() if n and at + n == top), None)
        start = by_address.get(words[1] & ~1) if len(words) > 1 else None
        if size is None or start is None:
            raise BuildError(f"{elf}: {table} does not begin with the end of a stack array "
                             "and the function the core starts in "
                             "(runtime_c/include/aot/cores.h)")
        start, worker = _title(start, frames), _title(CORE_WORKER, frames)
        followed = {**calls, start: calls.get(start, set()) | {worker},
                    worker: calls.get(worker, set()) | set(tasks)}
        chain_bytes, ok, chain = deepest_chain(start, frames, followed)
        handlers = [_title(h, frames) for h in _handlers(words, by_address)]
        exception, exc_ok = _exception(frame, handlers, frames, calls) if frame else (0, True)
        out.append(CoreStack(core, size, chain_bytes, exception, ok and exc_ok,
                             tuple(t.rsplit(":", 1)[-1] for t in chain)))
        roots += reachable([start, *handlers], followed)
    return tuple(out), roots


def _run(tool: str, *args: str, check: bool = True) -> str:
    try:
        proc = subprocess.run([tool, *args], capture_output=True, text=True)
    except FileNotFoundError:
        raise BuildError(f"{tool} is not installed: the stack bound needs the toolchain's "
                         "binutils") from None
    if proc.returncode != 0 and check:
        raise BuildError(f"{tool} {' '.join(args)} failed:\n{proc.stderr.strip()}")
    return proc.stdout if proc.returncode == 0 else ""
