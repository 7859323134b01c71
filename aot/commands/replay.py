"""An unchanged ``aot compile`` replayed: the artifact is already there.

A firmware build runs ``aot compile`` at every configure (CMake's
``aot_add_model``, Zephyr), mostly with nothing changed since the last time.
After a compile, :class:`CompileRecord` keeps what it printed and the digest
of every file of the artifact folder, under a key hashed from everything the
result depends on:

* aot itself: every file of the installed package (sources, templates, kernel
  headers, board records, the C runtime; :func:`source_digest`) and Python's
  version;
* the model file's bytes and the path given, the output folder, every option;
* the C compiler that measures the code size (:func:`aot.codegen.cc.compiler_identity`
  of the board's toolchain, or the host's).

When a later ``aot compile`` has the same key and the folder holds exactly
the recorded files with the recorded bytes, the command prints the recorded
report and touches nothing (what compiling again would do: writing replaces
only files whose bytes change).  Anything else compiles.  Options that read
more than the model file (``--tuning-records``, ``-libs`` and its library
tree, ``--layer-costs``, ``--choose-layers``), write elsewhere (``--project``,
``--tar``, ``--memory-report``'s chart), print the graph (``--dump-after``),
or compile with LLVM (``--codegen llvm``) are never recorded, nor is a compile
that printed a note.  The records live in the object cache
(``aot.commands.build.default_cache_dir``); one that cannot be read or
written is bypassed with a note.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import sys
import warnings
from pathlib import Path

import aot
from aot.errors import AotError, AotWarning
from aot.fileio import write_atomic

FORMAT = "aot-compile-record-1"

# Options whose result depends on more than the key holds, or that write more than the
# artifact folder: such compiles are not recorded.
_NOT_RECORDED = ("tuning_records", "cmsis_nn", "layer_costs", "choose_layers", "project",
                 "tar", "memory_report", "dump_after")


@functools.cache
def source_digest() -> str:
    """A digest of every file of the aot package (its code and package data)."""
    root = Path(aot.__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if "__pycache__" in path.parts or not path.is_file():
            continue
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def _folder_digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _compiler(args: argparse.Namespace) -> str:
    """The identity of the compiler that measures the code size."""
    from aot.codegen.cc import compiler_identity
    from aot.target import load_board

    board = load_board(args.board) if args.board else None
    cc = board.toolchain.tool("gcc") if board is not None else "gcc"
    return compiler_identity(cc)


class CompileRecord:
    """The record of one ``aot compile`` (see the module docstring)."""

    def __init__(self, path: Path, output: Path):
        self.path = path
        self.output = output

    @classmethod
    def of(cls, args: argparse.Namespace, cache_dir: Path | None) -> CompileRecord | None:
        """The record of this command line, or None where compiles are not recorded."""
        if cache_dir is None or not isinstance(args.model, str) or \
                any(getattr(args, o, None) for o in _NOT_RECORDED) or \
                args.codegen == "llvm" or (args.target and "libs" in args.target):
            return None
        options = {k: v for k, v in sorted(vars(args).items())
                   if k not in ("_run", "debug") and not k.startswith("_")}
        digest = hashlib.sha256()
        try:
            model = Path(args.model).read_bytes()
            for part in (FORMAT, source_digest(), sys.version,
                         json.dumps(options, default=str, sort_keys=True),
                         str(Path(args.output).resolve()), _compiler(args)):
                digest.update(part.encode() + b"\0")
        except (OSError, AotError):
            return None  # the compilation reports an unreadable model or a bad board
        digest.update(model)
        return cls(Path(cache_dir) / "compile" / f"{digest.hexdigest()[:32]}.json",
                   Path(args.output))

    def replay(self) -> str | None:
        """The recorded report if the artifact folder is as recorded, else None."""
        try:
            record = json.loads(self.path.read_text())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as err:
            warnings.warn(f"the compile record {self.path} cannot be read ({err}); "
                          "compiling", AotWarning, stacklevel=2)
            return None
        if not isinstance(record, dict) or record.get("format") != FORMAT or \
                not self.output.is_dir() or _folder_digests(self.output) != record.get("files"):
            return None
        return record.get("stdout")

    def save(self, stdout: str) -> None:
        """Record ``stdout`` and the artifact folder as it is now."""
        data = json.dumps({"format": FORMAT, "stdout": stdout,
                           "files": _folder_digests(self.output)})
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(self.path, data.encode())
        except OSError as err:
            warnings.warn(f"the compile record {self.path} cannot be written "
                          f"({err.strerror or err}); the next compile will not be replayed",
                          AotWarning, stacklevel=2)


class Tee:
    """A text stream writing to ``stream`` and keeping a copy (:attr:`text`)."""

    def __init__(self, stream):
        self.stream = stream
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        self.parts.append(text)
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()

    @property
    def text(self) -> str:
        return "".join(self.parts)
