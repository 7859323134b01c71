"""The one place that runs a C compiler on generated code.

Three things compile generated C outside a firmware project's Makefile:
a kernel module called from Python (a cached shared object,
:meth:`CCompiler.shared_object`), a model's host program for ``aot run``
(:meth:`CCompiler.executable`), and the code-size measurement of
``aot compile`` (:meth:`CCompiler.text_bytes`, with the board's cross
toolchain).  They all go through :class:`CCompiler`, so the compiler is
found, invoked and its failures reported one way: a :class:`BuildError`
naming what was built and carrying the compiler's own message.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from aot.errors import BuildError
from aot.target import DEFAULT_OPT_FLAGS

#: Flags every host build of generated code uses: the code is C99 and warning-free.
STRICT_FLAGS = ("-std=c99", "-Wall", "-Wextra", "-Werror")


@dataclass(frozen=True)
class CCompiler:
    """A C compiler program with the flags that select its CPU.

    ``size`` is the matching binutils ``size`` (for code-size measurement);
    ``firmware_flags`` are the optimisation and code-placement flags firmware
    builds give the model's C (a board's ``opt_flags`` and ``cflags``), with
    which :meth:`text_bytes` measures it.
    """

    cc: str
    cpu_flags: tuple[str, ...] = ()
    size: str = "size"
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
        return cls(toolchain.tool("gcc"), tuple(toolchain.cpu_flags), toolchain.tool("size"),
                   (*toolchain.opt_flags, *toolchain.cflags))

    def missing(self) -> str | None:
        """Which program of this toolchain is not installed, or None."""
        for program in (self.cc, self.size):
            if shutil.which(program) is None:
                return program
        return None

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

    def text_bytes(self, sources, flags=()) -> int:
        """Bytes of executable code (``.text*`` sections) of ``sources`` compiled
        one by one to objects with :attr:`firmware_flags`; a compile failure is a
        :class:`BuildError`."""
        with tempfile.TemporaryDirectory(prefix="aot-size-") as tmp:
            objects = []
            for i, src in enumerate(sources):
                obj = Path(tmp) / f"o{i}.o"
                self.run(["-std=c99", *self.firmware_flags, *flags, "-c", str(src),
                          "-o", str(obj)], what=f"compiling {Path(src).name}")
                objects.append(str(obj))
            proc = subprocess.run([self.size, "-A", *objects], capture_output=True, text=True)
        if proc.returncode != 0:
            raise BuildError(f"{self.size} failed:\n{proc.stderr.strip()}")
        return sum(int(m.group(1)) for m in re.finditer(r"^\.text\S*\s+(\d+)", proc.stdout, re.M))


def _cache_dir() -> Path:
    d = Path(tempfile.gettempdir()) / f"aot-kernels-{os.getuid()}"
    d.mkdir(exist_ok=True)
    return d
