"""``aot build PROJ``: build a firmware project with the board's toolchain.

Runs ``make -j`` in the project, reusing runtime objects compiled earlier
with the same compiler and flags (a cache in ``$AOT_CACHE_DIR``, default
``$XDG_CACHE_HOME/aot`` or ``~/.cache/aot``; bypassed with a note when it
cannot be written), and prints flash and RAM use split into model code,
weights and runtime.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import warnings
from pathlib import Path

from aot.errors import AotWarning


NAME = "build"
HELP = "build a firmware project and print its flash and RAM use"


def default_cache_dir() -> Path | None:
    """The object cache: ``$AOT_CACHE_DIR/objects``, else
    ``$XDG_CACHE_HOME/aot/objects``, else ``~/.cache/aot/objects``.

    The one place that picks it.  The cache only saves time, so a folder that
    cannot be made or written (a read-only home, as in some CI containers)
    is bypassed with a note naming it and AOT_CACHE_DIR: None, no cache.
    """
    if os.environ.get("AOT_CACHE_DIR"):
        root, where = Path(os.environ["AOT_CACHE_DIR"]), "AOT_CACHE_DIR"
    elif os.environ.get("XDG_CACHE_HOME"):
        root, where = Path(os.environ["XDG_CACHE_HOME"]) / "aot", "XDG_CACHE_HOME"
    else:
        root, where = Path(os.path.expanduser("~")) / ".cache" / "aot", "the home folder"
    folder = root / "objects"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()  # writable, not only present
    except OSError as err:
        warnings.warn(AotWarning(
            f"the object cache {folder} (from {where}) cannot be written "
            f"({err.strerror or err}); building without it: set AOT_CACHE_DIR to a writable "
            "folder to reuse compiled runtime objects"), stacklevel=2)
        return None
    return folder


def add_cache_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-cache", action="store_true",
                        help="compile every runtime object again (no object cache)")
    parser.add_argument("-j", "--jobs", type=int, default=None,
                        help="parallel compile jobs (default: one per CPU)")


def cache_dir(args: argparse.Namespace) -> Path | None:
    return None if args.no_cache else default_cache_dir()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("project", help="a project directory from `aot project create`")
    parser.add_argument("--stack", action="store_true",
                        help="also bound the peak stack from GCC's call graph, the linked "
                             "libraries and the exception frame (compiles the sources once "
                             "more; always done, and further cores' stacks checked, for a "
                             "model placed on several cores)")
    add_cache_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from aot.firmware import build_project
    result = build_project(args.project, jobs=args.jobs, cache_dir=cache_dir(args),
                           stack=args.stack)
    sizes, stack = result.sizes, result.stack
    if args.json:
        extra = {"stack_peak": stack.to_json()} if stack else {}
        print(json.dumps({"elf": str(result.elf), "compiled": result.compiled,
                          "restored_from_cache": result.restored,
                          "reused_from_compile": result.reused,
                          "sizes": sizes.to_json() if sizes else None, **extra}, indent=2))
        return 0
    print(f"built {result.elf} ({len(result.compiled)} files compiled, "
          f"{len(result.restored)} runtime objects from the cache, "
          f"{len(result.reused)} model objects from aot compile)")
    if sizes is not None:
        print(f"  flash {sizes.flash:>9,} bytes: model code {sizes.model_code:,}, constants "
              f"{sizes.constants:,}, runtime {sizes.runtime_flash:,}")
        print(f"  RAM   {sizes.ram:>9,} bytes: workspace {sizes.workspace:,}, i/o buffers "
              f"{sizes.io:,}, stack {sizes.stack:,} (reserved), runtime {sizes.runtime_ram:,}")
    if stack is not None:
        if args.stack:
            bound = "" if stack.bounded else " (unbounded: recursion or dynamic frames)"
            print(f"  peak stack {stack.peak:,} bytes: runtime {stack.runtime:,} + one "
                  f"inference {stack.model:,} + an exception {stack.exception:,}{bound}")
        for core in stack.cores:
            bound = "" if core.bounded else " (unbounded: recursion or dynamic frames)"
            print(f"  core {core.core} stack {core.need:,} of {core.size:,} bytes: "
                  f"{' -> '.join(core.chain)} ({core.chain_bytes:,}) + an exception "
                  f"{core.exception:,}{bound}")
    return 0
