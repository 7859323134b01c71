"""Measuring candidates through the RAM loader: one image per workload, no reflashing.

Where the board record says its RAM is executable (``memory.ram_code_bytes``,
see :func:`ram_code_bytes`), a workload's candidates need no firmware image
each.  :class:`RamBuilder` builds one *base* image per workload: the batch
descriptor of :mod:`aot.tune.measure` (tensors ``in<i>``/``out``/
``expected``, kernels ``clear`` and ``check``) without any candidate, and
the runtime's RAM loader (``-DAOT_RPC_LOADER_BYTES=N``, docs/runtime.md),
which reserves N bytes of RAM for code.  Each candidate is then compiled
on the host with exactly the base project's compiler flags, together with
a wrapper ``tune_loaded(ctx)`` that calls it on the base image's tensors
(the same call the batch descriptor makes), and linked alone at the
region's address: the only symbols it takes from the base image are the
tensors' addresses (``--defsym``); the C library and compiler helpers it
needs are linked into it.  Constants come first in the image, so
candidates with the same weights share those bytes and the client sends
only what changed (:meth:`aot.rpc.Client.load_code`).

:class:`RamRunner` boots the base image once per workload, checks that
the device advertises the loader with the region the ELF file says, writes
the inputs and the reference once, and per candidate loads the code
(checked by CRC-32 on the device), runs ``clear``, the loaded code
``repeats`` times and ``check``: the same measurement as a batch image,
so the instruction counts are identical (tests/tune/test_ram_loader.py).
A candidate that crashes or hangs is recorded as ``error``/``timeout`` and
the base image is booted again (QEMU restarts; a real board is reflashed).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import shlex
import struct
import subprocess
import time
import tomllib
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from aot.codegen.c import C_TYPES
from aot.firmware import BuildError, build_project, open_device
from aot.firmware.errors import FirmwareError
from aot.kernels.template import Config
from aot.rpc import RpcError
from aot.rpc.errors import RpcTimeoutError
from aot.rpc.protocol import Capability
from aot.tune.errors import TuneError
from aot.tune.measure import (
    RUN_TIMEOUT,
    Builder,
    Candidate,
    Result,
    device_cost,
    render,
    stack_guard,
    timed_check,
    workload_params,
    write_inputs,
    write_project,
)

#: The board record field (in ``[memory]``) that allows the RAM loader.
RAM_CODE_FIELD = "ram_code_bytes"
#: The loader's region in the base image (runtime_c/src/rpc_loader.c).
REGION_SYMBOL = "aot_loader_region"
#: The base image's tensors, the only symbols candidates take from it.
_TENSOR = re.compile(r"tune_(in\d+|out|expected)")
#: Seconds one compile and link of a candidate may take.
COMPILE_TIMEOUT = 600.0


class LoaderUnavailable(TuneError):
    """The RAM loader cannot be used here (board, base image or device)."""


def ram_code_bytes(board) -> int:
    """Bytes of RAM a tuning image may reserve for loaded code on ``board``
    (``memory.ram_code_bytes`` of its record), or 0 when the board does not
    declare executable RAM."""
    if board.path is None or board.memory is None:
        return 0
    data = tomllib.loads(Path(board.path).read_text())
    return int(data.get("memory", {}).get(RAM_CODE_FIELD, 0))


@dataclass
class Base:
    """The built base image of one workload and what candidates link against."""

    workload: object
    project: object
    params: list
    origin: int
    size: int
    symbols: dict[str, int]     # tensor name in the image -> address
    cflags: list[str]           # the base project's compile flags (arch flags included)
    ldflags: list[str]
    build_seconds: float


@dataclass
class Image:
    """One candidate linked for the region: ``code`` starts at the region's origin."""

    candidate: Candidate
    code: bytes = b""
    entry: int = 0              # offset of tune_loaded in code (bit 0: Thumb)
    error: str = ""


def wrapper(base: Base, cand: Candidate) -> str:
    """C of ``tune_loaded``: the batch descriptor's call of a candidate, on the
    base image's tensors (declared extern; their addresses come from the
    link)."""
    tensors = [(C_TYPES[p.dtype], f"tune_in{i}" if p.role == "input" else "tune_out")
               for i, p in enumerate(base.params)]
    prototype = cand.kernel.prototype.replace(f"int32_t {cand.kernel.name}(",
                                              f"int32_t {cand.name}(")
    return render("loaded_entry.c.j2", tensors=tensors, prototype=prototype,
                  candidate=cand.name)


def linker_script(origin: int, size: int) -> str:
    """One output section at the region: constants first (shared between
    candidates), then code, then data and zeroed data as bytes to load."""
    return render("loaded.ld.j2", origin=origin, size=size)


class RamBuilder(Builder):
    """Builds base images (once per workload) and candidate images (see the module
    docstring).  ``region_bytes`` defaults to the board's ``ram_code_bytes``."""

    def __init__(self, board, workdir: Path, *, cache_dir: Path | None = None,
                 jobs: int | None = None, region_bytes: int | None = None):
        super().__init__(board, workdir, cache_dir=cache_dir, jobs=jobs)
        self.region_bytes = region_bytes if region_bytes is not None else ram_code_bytes(board)
        self._bases: dict[str, Base] = {}

    def base(self, workload) -> Base:
        """The base image of ``workload``, built on first use."""
        if workload.key not in self._bases:
            self._bases[workload.key] = self._build_base(workload)
        return self._bases[workload.key]

    def _build_base(self, workload) -> Base:

        if self.region_bytes <= 0:
            raise LoaderUnavailable(f"{self.board.tag} does not declare executable RAM "
                                    f"(memory.{RAM_CODE_FIELD} in its board record)")
        start = time.perf_counter()
        tc = self.board.toolchain
        board = dataclasses.replace(self.board, toolchain=dataclasses.replace(
            tc, cflags=(*tc.cflags, f"-DAOT_RPC_LOADER_BYTES={self.region_bytes}")))
        self._count += 1
        project = write_project(workload, [], board, self.workdir / f"base{self._count}")
        try:
            build_project(project, cache_dir=self.cache_dir, jobs=self.jobs)
        except BuildError as err:
            raise LoaderUnavailable(f"the RAM loader's base image does not build: {err}") from None
        symbols = self._symbols(project)
        if REGION_SYMBOL not in symbols:
            raise LoaderUnavailable(f"{project.elf} has no {REGION_SYMBOL}: its runtime has no "
                                    "RAM loader")
        origin, size = symbols.pop(REGION_SYMBOL)
        cflags, ldflags = _make_flags(project)
        return Base(workload, project, list(workload_params(workload)), origin, size,
                    {k: v[0] for k, v in symbols.items()}, cflags, ldflags,
                    time.perf_counter() - start)

    def _symbols(self, project) -> dict[str, tuple[int, int]]:
        """Address and size of the tensors and the region in the base ELF."""
        nm = self.board.toolchain.tool("nm")
        out = subprocess.run([nm, "-S", str(project.elf)], capture_output=True, text=True,
                             check=True).stdout
        found = {}
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 4 and (_TENSOR.fullmatch(parts[3]) or parts[3] == REGION_SYMBOL):
                found[parts[3]] = (int(parts[0], 16), int(parts[1], 16))
        return found

    def images(self, base: Base, candidates: list[Candidate]) -> Iterator[Image]:
        """Compile and link ``candidates`` for ``base`` in parallel, yielding the
        images in order as they are ready (the runner loads the first ones
        while the others compile)."""
        pool = ThreadPoolExecutor(max_workers=self.jobs or os.cpu_count() or 1)
        try:
            futures = [pool.submit(self.image, base, c) for c in candidates]
            for future in futures:
                yield future.result()
        finally:
            pool.shutdown(cancel_futures=True)

    def image(self, base: Base, cand: Candidate) -> Image:
        """One candidate's image, or an :class:`Image` whose ``error`` says why not."""
        folder = base.project.path.parent / "loaded" / cand.name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "kernel.c").write_text(stack_guard(self.board) + cand.source)
        (folder / "entry.c").write_text(wrapper(base, cand))
        (folder / "link.ld").write_text(linker_script(base.origin, base.size))
        elf = folder / "candidate.elf"
        defsyms = [f"-Wl,--defsym={name}=0x{addr:08x}" for name, addr in base.symbols.items()]
        # -I: the support header sits beside the kernels in the base project.
        cmd = [self.board.toolchain.tool("gcc"), *base.cflags, "-Imodel/codegen",
               str(folder / "kernel.c"),
               str(folder / "entry.c"), f"-T{folder / 'link.ld'}", *defsyms, *base.ldflags,
               "-o", str(elf)]
        try:
            proc = subprocess.run(cmd, cwd=base.project.path, capture_output=True, text=True,
                                  timeout=COMPILE_TIMEOUT)
        except subprocess.TimeoutExpired:
            return Image(cand, error=f"compiling took more than {COMPILE_TIMEOUT:.0f} s")
        if proc.returncode != 0:
            return Image(cand, error="compile failed: " + (proc.stderr or proc.stdout)[-2000:])
        raw = folder / "candidate.bin"
        subprocess.run([self.board.toolchain.tool("objcopy"), "-O", "binary", "-j", ".image",
                        str(elf), str(raw)], check=True, capture_output=True)
        code = raw.read_bytes()
        entry = struct.unpack_from("<I", elf.read_bytes(), 24)[0] - base.origin
        if not 0 < len(code) <= base.size:
            return Image(cand, error=f"the candidate needs {len(code)} bytes; the RAM code "
                         f"region holds {base.size}")
        return Image(cand, code, entry)


def _make_flags(project) -> tuple[list[str], list[str]]:
    """The compile flags make uses for the base project's sources, and its link
    flags without the map file, as the project's Makefile computes them."""
    rule = ("aot-print-flags: ; $(info $(AOT_RUNTIME_CFLAGS))"
            "$(info $(AOT_PORT_LDFLAGS))@:")
    out = subprocess.run(["make", "-s", "-C", str(project.path), "--eval", rule,
                          "aot-print-flags"], capture_output=True, text=True, check=True,
                         env={**os.environ, "MAKEFLAGS": ""}).stdout.splitlines()
    cflags = shlex.split(out[0])
    ldflags = [f for f in shlex.split(out[1]) if not f.startswith("-Wl,-Map=")]
    return cflags, ldflags


class RamRunner:
    """Runs loaded candidates on a booted base image (see the module docstring).

    The device stays booted between calls for the same base; :meth:`close`
    (or leaving the ``with`` block) stops it.
    """

    def __init__(self, *, runner: str | None = None, serial_port: str | None = None,
                 repeats: int = 3, timeout: float = RUN_TIMEOUT, probe: str | None = None,
                 cost: str = "instructions"):
        self.runner = runner
        self.serial_port = serial_port
        self.probe = probe
        self.repeats = repeats
        self.timeout = timeout
        # ``cycles`` here is the device's timer (a real board's cycle counter): the
        # estimate from QEMU's trace cannot see RAM-loaded code (the session refuses it)
        self.cost = cost
        self._stack: contextlib.ExitStack | None = None
        self._dev = None
        self._base: Base | None = None
        self.bytes_sent = 0  # code bytes loaded so far (only changed parts are sent)

    def __enter__(self) -> RamRunner:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._stack is not None:
            self._stack.close()
        self._stack = self._dev = self._base = None

    def _open(self, base: Base):

        self.close()
        stack = contextlib.ExitStack()
        try:
            dev = stack.enter_context(open_device(base.project, runner=self.runner,
                                                  serial_port=self.serial_port,
                                                  probe=self.probe))
            info = dev.info()
            if not info.capabilities & Capability.RAM_LOADER:
                raise LoaderUnavailable(f"the device does not advertise the RAM loader "
                                        f"(firmware {info.build_id} on {info.board_tag})")
            if (info.code_origin, info.code_size) != (base.origin, base.size):
                raise LoaderUnavailable(
                    f"the device's RAM code region (0x{info.code_origin:08x}, "
                    f"{info.code_size} bytes) is not the base image's (0x{base.origin:08x}, "
                    f"{base.size} bytes): is another firmware running?")
            write_inputs(dev, base.params, base.workload)
        except BaseException:
            stack.close()
            raise
        self._stack, self._dev, self._base = stack, dev, base
        return dev

    def run(self, base: Base, images: Iterable[Image]) -> list[Result]:
        """One result per config of ``images``' candidates, in order.  The device
        boots while the first images compile; a candidate's ``seconds`` is the
        wall time since the previous result (waiting for its image included)."""

        out = []
        down = ""  # set when the base image does not answer at all
        last = time.perf_counter()
        if self._base is not base:
            try:
                self._open(base)
            except (FirmwareError, RpcError) as err:
                down = f"device: the base image did not answer: {err}"
        for img in images:
            if img.error or down:
                status = "build" if img.error else "error"
                outcome = (status, None, (), "", img.error or down)
            else:
                outcome = self._measure(base, img)
                if outcome is None:
                    down = "device: the base image did not answer after a restart"
                    outcome = ("error", None, (), "", down)
            now = time.perf_counter()
            out += [Result(c, *outcome, now - last) for c in img.candidate.configs]
            last = now
        return out

    def _measure(self, base: Base, img: Image) -> tuple | None:

        try:
            dev = self._dev if self._base is base else self._open(base)
        except (FirmwareError, RpcError):
            return None
        try:
            self.bytes_sent += dev.load_code(img.code, img.entry)
            outcome = device_cost(timed_check(dev, base.workload,
                                              lambda n: dev.run_loaded(n, timeout=self.timeout),
                                              self.repeats, self.timeout), self.cost)
        except RpcError as err:
            self.close()  # boot the base image again for the next candidate
            status = "timeout" if isinstance(err, RpcTimeoutError) else "error"
            return (status, None, (), "", f"device: {err}")
        if outcome[0] == "wrong":
            write_inputs(dev, base.params, base.workload)  # it may have overwritten them
        return outcome


def measure_ram(builder: RamBuilder, runner: RamRunner, workload,
                configs: list[Config]) -> list[Result]:
    """Measure ``configs`` of ``workload`` through the RAM loader; one
    :class:`Result` per config, as :func:`aot.tune.measure.measure`.  Raises
    :class:`LoaderUnavailable` when the loader cannot be used at all."""
    candidates, failed = builder.candidates(workload, configs)
    results = [Result(c, "build", error=e) for c, e in failed]
    if not candidates:
        return results
    base = builder.base(workload)  # built by the first batch of the workload only
    return results + runner.run(base, builder.images(base, candidates))
