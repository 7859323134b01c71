"""The one place that runs a C compiler on generated code.

Three things compile generated C outside a firmware project's Makefile:
a kernel module called from Python (a cached shared object,
:meth:`CCompiler.shared_object`), a model's host program for ``aot run``
(:meth:`CCompiler.executable`), and the code-size measurement of
``aot compile`` (:func:`firmware_text_bytes` with the board's cross
toolchain, :meth:`CCompiler.text_bytes` for host targets).  They all live
here, so the compiler is found, invoked and its failures reported one way: a
:class:`BuildError` naming what was built and carrying the compiler's own
message.

The code-size measurement compiles the files in parallel (one job per core);
for a board with a runtime port it runs the board's firmware project's own
command (:class:`FirmwareCommand`), so that ``aot build`` can put the objects
into the project instead of compiling them again (:func:`place_objects`).  It
keeps each object in an :class:`ObjectStore` under a hash of everything that
shapes it: the compiler's identity (:func:`compiler_identity`: its
path and ``--version``, and the executable's size and time), its CPU flags,
the flags, the source and a digest of the headers it may include.  An object
whose key differs is never reused; a store that cannot be written or holds a
damaged object is bypassed with a note (:class:`aot.errors.AotWarning`).
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import struct
import subprocess
import tempfile
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from aot.errors import AotWarning, BuildError
from aot.fileio import write_atomic
from aot.target import DEFAULT_OPT_FLAGS

#: Flags every host build of generated code uses: the code is C99 and warning-free.
STRICT_FLAGS = ("-std=c99", "-Wall", "-Wextra", "-Werror")


@dataclass(frozen=True)
class CCompiler:
    """A C compiler program with the flags that select its CPU.

    ``firmware_flags`` are the optimisation and code-placement flags firmware
    builds give the model's C (a board's ``opt_flags`` and ``cflags``), with
    which :meth:`text_bytes` measures it.
    """

    cc: str
    cpu_flags: tuple[str, ...] = ()
    firmware_flags: tuple[str, ...] = (*DEFAULT_OPT_FLAGS, "-ffunction-sections")

    @classmethod
    def host(cls) -> CCompiler:
        """The machine's own compiler (``gcc``, else ``cc``)."""
        cc = shutil.which("gcc") or shutil.which("cc")
        if cc is None:
            raise BuildError("no host C compiler: install gcc (apt-get install gcc) to build "
                             "generated code on this machine")
        return cls(cc)

    @classmethod
    def for_toolchain(cls, toolchain) -> CCompiler:
        """The cross compiler of a board's :class:`aot.target.tags.Toolchain`."""
        return cls(toolchain.tool("gcc"), tuple(toolchain.cpu_flags),
                   (*toolchain.opt_flags, *toolchain.cflags))

    def missing(self) -> str | None:
        """The compiler's name if it is not installed, else None."""
        return self.cc if shutil.which(self.cc) is None else None

    def run(self, args, *, what: str) -> None:
        """Run the compiler with ``args``; a failure is a :class:`BuildError` about ``what``."""
        proc = subprocess.run([self.cc, *self.cpu_flags, *args], capture_output=True, text=True)
        if proc.returncode != 0:
            raise BuildError(f"{what} failed ({Path(self.cc).name}):\n{proc.stderr.strip()}")

    def shared_object(self, source: str, flags=(), headers=(), *,
                      what: str = "compiling the kernels") -> Path:
        """``source`` compiled into a shared object, cached by a hash of the
        compiler, its flags, the source and the ``headers`` (``(file name,
        text)`` pairs written beside it); returns its path."""
        flags = ["-O2", *STRICT_FLAGS, "-fPIC", "-shared", *flags]
        if "omp parallel" in source:
            flags.append("-fopenmp")
        headers = tuple(headers)
        key = hashlib.sha256("\0".join([self.cc, *self.cpu_flags, *flags, source,
                                        *(part for h in headers for part in h)])
                             .encode()).hexdigest()[:20]
        cache = _cache_dir()
        out = cache / f"k{key}.so"
        if out.exists():
            return out
        with tempfile.TemporaryDirectory(dir=cache) as tmp:
            src, tmp_out = Path(tmp) / "kernel.c", Path(tmp) / "kernel.so"
            src.write_text(source)
            for name, text in headers:
                (Path(tmp) / name).write_text(text)
            self.run([*flags, "-o", str(tmp_out), str(src), "-lm"], what=what)
            os.replace(tmp_out, out)
        return out

    def executable(self, sources, out: Path, flags=(), *, what: str) -> Path:
        """``sources`` compiled and linked (with libm) into the program ``out``."""
        self.run([*STRICT_FLAGS, *flags, *map(str, sources), "-o", str(out), "-lm"], what=what)
        return out

    def identity(self) -> str:
        """What identifies this compiler's output: :func:`compiler_identity` and its
        CPU flags."""
        return "\0".join([compiler_identity(self.cc), *self.cpu_flags])

    def text_bytes(self, sources, flags=(), *, cwd: Path | None = None,
                   headers_digest: str = "", store: ObjectStore | None = None,
                   jobs: int | None = None) -> int:
        """Bytes of executable code (``.text*`` sections) of ``sources`` compiled
        one by one to objects (``-std=c99``, :attr:`firmware_flags` and ``flags``),
        ``jobs`` at a time (default: one per core); a compile failure is a
        :class:`BuildError`.

        Relative ``sources`` and flags are taken from ``cwd``.  With a ``store``,
        each object is looked up under :meth:`ObjectStore.key` of the compiler,
        the flags, the source's bytes and ``headers_digest`` (a digest of every
        header the sources may include, which the caller knows), and kept there
        once compiled."""
        args = ["-std=c99", *self.firmware_flags, *flags, "-c"]
        identity = self.identity() if store is not None else ""
        base = Path(cwd) if cwd is not None else Path.cwd()

        def one(src, tmp: Path, i: int) -> int:
            key = None
            if store is not None:
                key = ObjectStore.key(identity, args, (base / src).read_bytes(),
                                      headers_digest)
                cached = store.get(key)
                if cached is not None:
                    return cached
            obj = tmp / f"o{i}.o"
            proc = subprocess.run([self.cc, *self.cpu_flags, *args, str(src), "-o", str(obj)],
                                  capture_output=True, text=True, cwd=cwd)
            if proc.returncode != 0:
                raise BuildError(f"compiling {Path(src).name} failed ({Path(self.cc).name}):"
                                 f"\n{proc.stderr.strip()}")
            data = obj.read_bytes()
            if store is not None:
                store.put(key, data)
            return elf_text_bytes(data)

        sources = list(sources)
        with tempfile.TemporaryDirectory(prefix="aot-size-") as tmp:
            workers = max(1, min(jobs or os.cpu_count() or 1, len(sources)))
            with ThreadPoolExecutor(workers) as pool:
                sizes = list(pool.map(one, sources, [Path(tmp)] * len(sources),
                                      range(len(sources))))
        return sum(sizes)


@dataclass(frozen=True)
class FirmwareCommand:
    """How a board's firmware project compiles the model's sources: runtime.mk's
    rule ``$(CC) $(AOT_APP_CFLAGS) -MMD -MP -c SRC -o OBJ`` from the project
    folder, as data.

    ``flags`` are ``AOT_APP_CFLAGS`` for the variables the project's Makefile
    sets (:func:`firmware_variables`, :func:`firmware_command`): ``-std=c99
    -Wall -Wextra -Werror``, the runtime's headers, the CPU flags, the optimisation, the port's
    ``AOT_PORT_CFLAGS`` and ``AOT_EXTRA_CFLAGS`` (``-Imodel/include``, the
    record's cflags, the board facts, the external libraries' ``-I``/``-D``).
    The board tag and build id are not among them: only the runtime's files
    use them (runtime.mk gives them to those alone), so the model's objects do
    not depend on them.  ``aot compile`` measures the code size with this
    command, and ``aot build`` puts the objects it made into the project's
    ``build/obj/`` when the project's make gives the same command
    (:func:`aot.firmware.build.build_project`)."""

    cc: str
    flags: tuple[str, ...]

    @staticmethod
    def object_path(source: str) -> str:
        """runtime.mk's ``aot_obj``: ``model/codegen/F.c`` -> ``build/obj/model_codegen_F.o``."""
        stem = os.path.splitext(source)[0] + ".o"
        return "build/obj/" + stem.replace("..", "up").replace("/", "_")

    def args(self, source: str) -> list[str]:
        """Every argument after the compiler that compiles ``source`` (project-relative)."""
        return [*self.flags, "-MMD", "-MP", "-c", source, "-o", self.object_path(source)]


def include_digest(root: Path, flags, folder: str) -> str:
    """A digest of every file but C sources in the folders a compile with
    ``flags`` from ``root`` of a source in ``folder`` can include from (each
    ``-I`` folder and ``folder``), by path: the same tree gives the same digest
    whether it is the code size's temporary copy or the firmware project."""
    folders = {f[2:] for f in flags if f.startswith("-I") and len(f) > 2}
    folders.add(folder)
    digest = hashlib.sha256()
    for folder in sorted(folders):
        base = Path(root) / folder
        digest.update(f"{folder}\0".encode())
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            if path.is_file() and path.suffix != ".c":
                digest.update(f"{path.relative_to(base).as_posix()}\0".encode())
                digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def firmware_text_bytes(command: FirmwareCommand, sources, *, cwd: Path,
                        store: ObjectStore | None = None,
                        jobs: int | None = None) -> dict[str, int]:
    """Bytes of executable code of each of ``sources`` (project-relative, under ``cwd``
    laid out as the project: ``model/``, ``runtime/include/``) compiled by
    ``command`` exactly as the project's make would, ``jobs`` at a time.  With a
    ``store``, each object and its dependency file are kept under
    :meth:`ObjectStore.key` of the compiler, the arguments, the source and the
    :func:`include_digest` of the tree; :func:`place_objects` finds them there."""
    identity = compiler_identity(command.cc) if store is not None else ""
    headers = _folder_digests(cwd, command.flags, sources) if store is not None else {}
    (Path(cwd) / "build" / "obj").mkdir(parents=True, exist_ok=True)

    def one(src: str) -> int:
        args = command.args(src)
        key = None
        if store is not None:
            key = ObjectStore.key(identity, args, (Path(cwd) / src).read_bytes(),
                                  headers[os.path.dirname(src)])
            cached = store.get(key)
            if cached is not None:
                return cached
        proc = subprocess.run([command.cc, *args], capture_output=True, text=True, cwd=cwd)
        if proc.returncode != 0:
            raise BuildError(f"compiling {Path(src).name} failed ({Path(command.cc).name}):"
                             f"\n{proc.stderr.strip()}")
        obj = Path(cwd) / command.object_path(src)
        data = obj.read_bytes()
        if store is not None:
            store.put(key, data, obj.with_suffix(".d").read_bytes())
        return elf_text_bytes(data)

    sources = [str(s) for s in sources]
    workers = max(1, min(jobs or os.cpu_count() or 1, len(sources)))
    with ThreadPoolExecutor(workers) as pool:
        return dict(zip(sources, pool.map(one, sources)))


def _folder_digests(root: Path, flags, sources) -> dict[str, str]:
    """:func:`include_digest` per folder holding some of ``sources``."""
    return {folder: include_digest(root, flags, folder)
            for folder in {os.path.dirname(str(s)) for s in sources}}


def place_objects(command: FirmwareCommand, sources, project: Path,
                  store: ObjectStore) -> list[str]:
    """Put the objects :func:`firmware_text_bytes` kept for ``sources`` into the
    project's ``build/obj/`` with their dependency files, where the project has
    no such object yet; returns the objects placed.

    An object is taken only under the key the project's own source, headers,
    compiler and ``command`` give, so it is the object make would compile.  Its
    time is now, later than the sources it was compiled from, and its ``.d``
    names the headers, so make compiles it again when any of them changes."""
    identity = compiler_identity(command.cc)
    headers = _folder_digests(project, command.flags, sources)
    placed = []
    for src in sources:
        obj = Path(project) / command.object_path(src)
        source = Path(project) / src
        if obj.exists() or not source.is_file():
            continue
        key = ObjectStore.key(identity, command.args(src), source.read_bytes(),
                              headers[os.path.dirname(src)])
        found = store.fetch(key, command.object_path(src))
        if found is None:
            continue
        try:
            obj.parent.mkdir(parents=True, exist_ok=True)
            for path, data in ((obj.with_suffix(".d"), found[1]), (obj, found[0])):
                write_atomic(path, data)
        except OSError as err:
            raise BuildError(f"cannot write {obj}: {err.strerror or err}") from None
        placed.append(command.object_path(src))
    return placed


class ObjectStore:
    """Objects compiled for the code size, as ``root/size/<key>.o`` with, for a
    firmware project's command, the dependency file ``<key>.d`` that ``-MMD``
    wrote (each written to a temporary file and renamed, the ``.d`` first, so
    concurrent compilations never see half an entry).

    The root is the object cache the command line chooses
    (``aot.commands.build.default_cache_dir``), which ``aot build`` reads too
    (:func:`place_objects`).  A root that cannot be written or read is
    bypassed, and a damaged object compiled again, each with one note."""

    def __init__(self, root: Path, doing: str = "measuring the code size"):
        self.folder = Path(root) / "size"
        self.doing = doing  # what goes on without the store, for its notes
        self._noted: set[str] = set()
        self._usable = True

    @staticmethod
    def key(identity: str, args, source: bytes, headers_digest: str) -> str:
        digest = hashlib.sha256("\0".join([identity, *args, headers_digest]).encode())
        digest.update(b"\0" + source)
        return digest.hexdigest()[:32]

    def get(self, key: str) -> int | None:
        """The ``.text`` bytes of the object stored under ``key``, or None."""
        if not self._usable:
            return None
        path = self.folder / f"{key}.o"
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as err:
            self._unusable(err)
            return None
        try:
            return elf_text_bytes(data)
        except ValueError as err:
            self._note("damaged", f"the cached object {path} is damaged ({err}); "
                       "compiling it again")
            return None

    def fetch(self, key: str, obj: str) -> tuple[bytes, bytes] | None:
        """The object and dependency file stored under ``key``, or None; the
        ``.d`` must name ``obj`` (the object's path in the project) as its target."""
        if not self._usable or self.get(key) is None:
            return None
        try:
            data = (self.folder / f"{key}.o").read_bytes()
            deps = (self.folder / f"{key}.d").read_bytes()
        except FileNotFoundError:
            return None
        except OSError as err:
            self._unusable(err)
            return None
        if not deps.startswith(f"{obj}:".encode()) or not deps.endswith(b"\n"):
            self._note("damaged", f"the cached dependency file {self.folder / key}.d is "
                       "damaged; compiling its object again")
            return None
        return data, deps

    def put(self, key: str, data: bytes, deps: bytes | None = None) -> None:
        """Keep the object ``data`` (and its dependency file ``deps``) under ``key``."""
        if not self._usable:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            for suffix, content in ((".d", deps), (".o", data)):
                if content is not None:
                    write_atomic(self.folder / f"{key}{suffix}", content)
        except OSError as err:
            self._unusable(err)

    def _unusable(self, err: OSError) -> None:
        self._usable = False
        self._note("unusable", f"the object cache {self.folder} cannot be used "
                   f"({err.strerror or err}): {self.doing} without it")

    def _note(self, kind: str, message: str) -> None:
        if kind not in self._noted:  # once per kind: not one note per kernel file
            self._noted.add(kind)
            warnings.warn(message, AotWarning, stacklevel=4)


@functools.lru_cache(maxsize=None)
def _identity(path: str, size: int, mtime_ns: int) -> str:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True,
                             timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return path
    first = out.stdout.splitlines()[0] if out.stdout else ""
    return f"{path} {size} {mtime_ns} {first}"


def compiler_identity(cc: str) -> str:
    """The compiler ``cc`` as objects depend on it: its full path, its ``--version``
    line, and the size and time of its executable (a compiler replaced in place is
    another compiler).  Asked once per process and executable."""
    path = shutil.which(cc)
    if path is None:
        return cc
    st = os.stat(path)
    return _identity(path, st.st_size, st.st_mtime_ns)


def elf_text_bytes(data: bytes) -> int:
    """Bytes of the ``.text*`` sections (and ``.aot_ram_text*``: kernels run from
    RAM, docs/memory.md) of an ELF object (32 or 64 bit, either byte
    order): what ``size -A`` lists under those names.  Anything that is not such an
    object is a ValueError."""
    if len(data) < 16 or data[:4] != b"\x7fELF" or data[4] not in (1, 2) \
            or data[5] not in (1, 2):
        raise ValueError("not an ELF file")
    wide, order = data[4] == 2, "<" if data[5] == 1 else ">"
    if len(data) < (64 if wide else 52):
        raise ValueError("truncated ELF header")
    if wide:
        shoff, = struct.unpack_from(order + "Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from(order + "HHH", data, 0x3A)
        entry = order + "IIQQQQIIQQ"
    else:
        shoff, = struct.unpack_from(order + "I", data, 0x20)
        shentsize, shnum, shstrndx = struct.unpack_from(order + "HHH", data, 0x2E)
        entry = order + "IIIIIIIIII"
    if shnum == 0 or shstrndx >= shnum or shentsize < struct.calcsize(entry) \
            or shoff + shnum * shentsize > len(data):
        raise ValueError("truncated section table")
    sections = [struct.unpack_from(entry, data, shoff + i * shentsize) for i in range(shnum)]
    names_at, names_size = sections[shstrndx][4], sections[shstrndx][5]
    if names_at + names_size > len(data):
        raise ValueError("truncated section names")
    names = data[names_at:names_at + names_size]
    total = 0
    for sec in sections:
        name = names[sec[0]:names.find(b"\0", sec[0])]
        if name.startswith((b".text", b".aot_ram_text")):  # code run from flash or RAM
            total += sec[5]
    return total


def _cache_dir() -> Path:
    d = Path(tempfile.gettempdir()) / f"aot-kernels-{os.getuid()}"
    d.mkdir(exist_ok=True)
    return d
