"""Build a firmware project with the board's toolchain: ``make -j`` plus an object cache.

The runtime's objects (RPC server, framing, port, startup, main) depend
only on the runtime sources, the compiler and the flags, so the same board
compiles them to the same bytes for every model.  :class:`ObjectCache`
keeps them under a key hashed from exactly those, and :func:`build_project`
puts cached copies into the project's build folder before running make.

The model's objects come from ``aot compile``: it measured the code size by
compiling the model's files with the project's own command
(:class:`aot.codegen.cc.FirmwareCommand`) and kept the objects in the same
cache folder.  :func:`build_project` asks make for the command it would run,
and where it is the same, puts those objects (and their ``-MMD`` dependency
files) into ``build/obj/`` too (:func:`aot.codegen.cc.place_objects`), so make
compiles only the RPC descriptor.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from aot.codegen.cc import FirmwareCommand, ObjectStore, compiler_identity, place_objects
from aot.errors import BuildError
from aot.fileio import write_atomic
from aot.firmware.images import image_path, write_image
from aot.firmware.project import Project, load_project
from aot.firmware.sizes import FirmwareSizes, read_sizes
from aot.firmware.stack import StackUsage, check_core_stacks, stack_usage

# project.json fields that name the model; everything else shapes runtime objects.
_MODEL_FIELDS = {"name", "model", "model_sources", "model_objects"}


@dataclass(frozen=True)
class BuildResult:
    """What one build produced; ``image`` is what the board's runner writes
    (the ELF, a UF2, an ESP app image: aot.firmware.images), ``compiled``
    lists the sources make compiled (cached runtime objects are absent from
    it), ``restored`` the runtime objects taken from the cache, ``reused``
    the model's objects taken from what ``aot compile`` compiled, ``stack``
    the stack bound (:func:`aot.firmware.stack.stack_usage`) when it was asked
    for or the model hands tasks to further cores, whose stacks it checks."""

    project: Project
    elf: Path
    sizes: FirmwareSizes | None
    compiled: list[str] = field(default_factory=list)
    restored: list[str] = field(default_factory=list)
    image: Path | None = None
    reused: list[str] = field(default_factory=list)
    stack: StackUsage | None = None


class ObjectCache:
    """Compiled runtime objects in ``root/<key>/<object name>``.

    Entries are written to a temporary file and renamed, so concurrent
    builds never see half an object.
    """

    def __init__(self, root: Path):
        self.root = Path(root)

    def key(self, project: Project) -> str:
        """A digest of the compiler, the flags and every runtime file."""
        settings = {k: v for k, v in project.data.items() if k not in _MODEL_FIELDS}
        digest = hashlib.sha256(repr(sorted(settings.items())).encode())
        digest.update(compiler_identity(project.data["cc"]).encode())
        runtime = project.path / "runtime"
        for path in sorted(runtime.rglob("*")):
            if path.is_file():
                digest.update(str(path.relative_to(runtime)).encode() + b"\0")
                digest.update(path.read_bytes())
        return digest.hexdigest()[:32]

    def restore(self, key: str, objects: list[Path]) -> list[Path]:
        """Copy cached objects that the build folder lacks, each with its ``-MMD``
        dependency file when one was kept (so make still compiles it again when a
        runtime header changes); return the objects copied."""
        restored = []
        for obj in objects:
            cached = self.root / key / obj.name
            if obj.exists() or not cached.is_file():
                continue
            obj.parent.mkdir(parents=True, exist_ok=True)
            deps = cached.with_suffix(".d")
            if deps.is_file():
                shutil.copyfile(deps, obj.with_suffix(".d"))
            shutil.copyfile(cached, obj)  # a fresh mtime: newer than the sources
            restored.append(obj)
        return restored

    def store(self, key: str, objects: list[Path]) -> None:
        folder = self.root / key
        folder.mkdir(parents=True, exist_ok=True)
        for obj in objects:
            dest = folder / obj.name
            if dest.exists() or not obj.is_file():
                continue
            for src, to in ((obj.with_suffix(".d"), dest.with_suffix(".d")), (obj, dest)):
                if not src.is_file():  # assembler sources have no .d
                    continue
                write_atomic(to, src.read_bytes())


def _check_tools(project: Project) -> None:
    cc = project.data["cc"]
    if shutil.which("make") is None:
        raise BuildError("make is not installed; install it (apt-get install make)")
    if shutil.which(cc) is None:
        raise BuildError(f"{cc} is not installed, so firmware for {project.board_tag} cannot be "
                         "built; install the cross toolchain (scripts/setup, or see "
                         "docs/firmware.md)")


def _make(project: Project, *args: str, timeout: float = 1800.0) -> subprocess.CompletedProcess:
    env = {**os.environ, "MAKEFLAGS": "", "LC_ALL": "C"}
    try:
        return subprocess.run(["make", "-C", str(project.path), *args], capture_output=True,
                              text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise BuildError(f"building {project.path} took more than {timeout:.0f} s") from None


def _runtime_objects(project: Project) -> list[Path]:
    proc = _make(project, "-s", "aot-print-runtime-objects")
    if proc.returncode != 0:
        raise BuildError(f"{project.path}/Makefile is broken:\n{proc.stderr.strip()}")
    return [project.path / p for p in proc.stdout.split()]


#: Prints the model sources' compile command and each source with its object.
_PRINT_MODEL_BUILD = ("aot-print-model-build: ; $(info $(CC) $(AOT_APP_CFLAGS))"
                      "$(foreach s,$(AOT_APP_SRCS),$(info $(s) $(call aot_obj,$(s))))@:")


def _model_build(project: Project) -> tuple[FirmwareCommand, list[str]] | None:
    """The command the project's make compiles the model's sources with, and
    those sources whose object is where :class:`FirmwareCommand` puts it;
    None when make cannot say (a project from before ``AOT_APP_CFLAGS``)."""
    proc = _make(project, "-s", "--eval", _PRINT_MODEL_BUILD, "aot-print-model-build")
    lines = proc.stdout.splitlines()
    if proc.returncode != 0 or not lines:
        return None
    try:
        cc, *flags = shlex.split(lines[0])
    except ValueError:
        return None
    if "-std=c99" not in flags:  # no AOT_APP_CFLAGS: an older runtime.mk
        return None
    command = FirmwareCommand(cc, tuple(flags))
    sources = [src for src, obj in (line.split() for line in lines[1:] if len(line.split()) == 2)
               if obj == command.object_path(src)]
    return command, sources


def _memory_text(project: Project) -> str:
    mem = project.data.get("memory") or {}
    return ", ".join(f"{part} {int(mem[part + '_length'], 16)} bytes" for part in ("flash", "ram")
                     if part + "_length" in mem) or "no memory map"


def _failure(project: Project, output: str) -> BuildError:
    """A build error that leads with the lines that say why."""
    overflow = re.findall(r"region [`'](\w+)' overflowed by (\d+) bytes", output)
    if overflow:
        parts = ", ".join(f"{region} overflows by {n} bytes" for region, n in overflow)
        return BuildError(f"the firmware of {project.data['model']} does not fit "
                          f"{project.board_tag}: {parts} ({_memory_text(project)}; model, "
                          "runtime and stack together); try a board with more memory or a "
                          "smaller model")
    if "RAM overflow" in output:
        return BuildError(f"the firmware of {project.data['model']} does not fit "
                          f"{project.board_tag}: .data + .bss + stack exceed its RAM "
                          f"({_memory_text(project)})")
    reasons = [line for line in output.splitlines() if "error" in line.lower()]
    detail = "\n".join((reasons or output.strip().splitlines())[-12:])
    return BuildError(f"building {project.path} for {project.board_tag} failed:\n{detail}")


def build_project(project, *, jobs: int | None = None, cache_dir: Path | None = None,
                  stack: bool = False) -> BuildResult:
    """Build ``project`` (a :class:`Project` or its folder) with ``make -j jobs``.

    With ``cache_dir``, runtime objects come from and go to an
    :class:`ObjectCache` there, and the model's objects that ``aot compile``
    kept there for its code size are put into the build folder when make
    would compile them with the same command.  With ``stack``, and always for
    a model that hands tasks to further cores, the stack is bounded
    (:func:`aot.firmware.stack.stack_usage`) and each further core's stack
    checked before the image is written.  Returns the ELF and its sizes; raises
    :class:`BuildError` with the toolchain's message (a firmware too big
    for the board names the region and the overflow in bytes), or naming a
    further core's stack, its need and the deepest chain when it is too small.
    """
    project = project if isinstance(project, Project) else load_project(project)
    _check_tools(project)
    cache = ObjectCache(cache_dir) if cache_dir is not None else None
    restored: list[Path] = []
    reused: list[str] = []
    if cache is not None:
        objects = _runtime_objects(project)
        key = cache.key(project)
        restored = cache.restore(key, objects)
        model = _model_build(project)
        if model is not None:
            reused = place_objects(*model, project.path, ObjectStore(cache_dir, "building"))
    jobs = jobs or os.cpu_count() or 1
    proc = _make(project, f"-j{jobs}")
    output = proc.stdout + proc.stderr
    if proc.returncode != 0:
        raise _failure(project, output)
    if cache is not None:
        cache.store(key, objects)
    compiled = re.findall(r" -c (\S+\.[cS])\b", output)
    usage = None
    if stack or project.core_tasks:
        usage = stack_usage(project, jobs)
        try:
            check_core_stacks(usage, project.board_tag)
        except BuildError:  # leave nothing to flash, as a failed link does
            for path in {project.elf, image_path(project)}:
                path.unlink(missing_ok=True)
            raise
    image = write_image(project)
    return BuildResult(project, project.elf, firmware_sizes(project), compiled,
                       [str(p.relative_to(project.path)) for p in restored], image, reused,
                       usage)


def firmware_sizes(project: Project) -> FirmwareSizes | None:
    """Sizes of the built firmware from its map; None for boards without a memory map."""
    mem = project.data.get("memory")
    if mem is None or not project.map_file.is_file():
        return None
    return read_sizes(project.map_file, project.name, int(mem["ram_origin"], 16),
                      int(mem["ram_length"], 16))

