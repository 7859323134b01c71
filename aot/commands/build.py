"""``aot build PROJ``: build a firmware project with the board's toolchain.

Runs ``make -j`` in the project, reusing runtime objects compiled earlier
with the same compiler and flags (a cache in ``$AOT_CACHE_DIR``, default
``~/.cache/aot``), and prints flash and RAM use split into model code,
weights and runtime.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path


NAME = "build"
HELP = "build a firmware project and print its flash and RAM use"


def default_cache_dir() -> Path:
    """The object cache: ``$AOT_CACHE_DIR/objects`` or ``~/.cache/aot/objects``."""
    root = os.environ.get("AOT_CACHE_DIR") or Path.home() / ".cache" / "aot"
    return Path(root) / "objects"


def add_cache_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-cache", action="store_true",
                        help="compile every runtime object again (no object cache)")
    parser.add_argument("-j", "--jobs", type=int, default=None,
                        help="parallel compile jobs (default: one per CPU)")


def cache_dir(args: argparse.Namespace) -> Path | None:
    return None if args.no_cache else default_cache_dir()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("project", help="a project directory from `aot project create`")
    parser.add_argument("--json", action="store_true", help="print the sizes as JSON")
    parser.add_argument("--stack", action="store_true",
                        help="also bound the peak stack from GCC's call graph, the linked "
                             "libraries and the exception frame (compiles the sources once more)")
    add_cache_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from aot.firmware.stack import stack_usage
    from aot.firmware import build_project
    result = build_project(args.project, jobs=args.jobs, cache_dir=cache_dir(args))
    sizes = result.sizes
    stack = stack_usage(result.project) if args.stack else None
    if args.json:
        extra = {"stack_peak": {"runtime": stack.runtime, "model": stack.model,
                                "exception": stack.exception, "total": stack.peak,
                                "bounded": stack.bounded,
                                "library": list(stack.library)}} if stack else {}
        print(json.dumps({"elf": str(result.elf), "compiled": result.compiled,
                          "restored_from_cache": result.restored,
                          "sizes": sizes.to_json() if sizes else None, **extra}, indent=2))
        return 0
    print(f"built {result.elf} ({len(result.compiled)} files compiled, "
          f"{len(result.restored)} runtime objects from the cache)")
    if sizes is not None:
        print(f"  flash {sizes.flash:>9,} bytes: model code {sizes.model_code:,}, weights "
              f"{sizes.weights:,}, runtime {sizes.runtime_flash:,}")
        print(f"  RAM   {sizes.ram:>9,} bytes: workspace {sizes.workspace:,}, i/o buffers "
              f"{sizes.io:,}, stack {sizes.stack:,} (reserved), runtime {sizes.runtime_ram:,}")
    if stack is not None:
        bound = "" if stack.bounded else " (unbounded: recursion or dynamic frames)"
        print(f"  peak stack {stack.peak:,} bytes: runtime {stack.runtime:,} + one inference "
              f"{stack.model:,} + an exception {stack.exception:,}{bound}")
    return 0
