"""``aot config``: where this installation keeps what firmware builds use.

``aot config --cmake-dir`` prints the folder of the CMake package
(``find_package(aot)`` with ``-Daot_DIR=...``), ``--cmake-prefix`` a folder
to put on ``CMAKE_PREFIX_PATH`` instead, ``--runtime-dir`` the C runtime's
sources, ``--toolchain-file BOARD`` the CMake toolchain file of a board's cross
compiler.  Without an option, the folders, one ``name: path`` per line.
docs/integration.md shows them in use.
"""

from __future__ import annotations

import argparse
import json
from importlib import resources
from pathlib import Path

from aot.errors import AotError


NAME = "config"
HELP = "print where this aot keeps its CMake package and C runtime (for firmware builds)"


def cmake_dir() -> Path:
    """The folder holding aotConfig.cmake and aot.cmake (package data of aot)."""
    return Path(str(resources.files("aot").joinpath("cmake")))


def toolchain_file(board) -> Path:
    """The CMake toolchain file shipped for ``board``'s cross compiler:
    ``cmake/toolchains/<toolchain.prefix without its dash>.cmake`` (one per
    compiler family the boards use); an :class:`AotError` for a board built
    with the host's compiler or a prefix aot ships no file for."""
    prefix = board.toolchain.prefix
    if board.platform == "host" or not prefix:
        raise AotError(f"{board.tag} builds with this machine's own C compiler: it needs no "
                       "toolchain file (configure without CMAKE_TOOLCHAIN_FILE)")
    folder = cmake_dir() / "toolchains"
    path = folder / f"{prefix.rstrip('-')}.cmake"
    if not path.is_file():
        shipped = ", ".join(sorted(p.name for p in folder.glob("*.cmake")))
        raise AotError(f"aot ships no CMake toolchain file for {board.tag}'s compiler "
                       f"{prefix}gcc (it ships {shipped}): write one that sets "
                       f"CMAKE_SYSTEM_NAME Generic and CMAKE_C_COMPILER {prefix}gcc")
    return path


def _paths() -> dict[str, Path]:
    from aot.resources import runtime_dir

    cmake = cmake_dir()
    # find_package searches <prefix>/<name>*/cmake/: the folder above the package.
    return {"cmake-dir": cmake, "cmake-prefix": cmake.parent.parent, "runtime-dir": runtime_dir()}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    which = parser.add_mutually_exclusive_group()
    for key in _paths():
        which.add_argument(f"--{key}", dest="key", action="store_const", const=key,
                           help=f"print only the {key.replace('-', ' ')}")
    which.add_argument("--toolchain-file", metavar="BOARD", dest="toolchain_board",
                       help="print the CMake toolchain file of BOARD's cross compiler "
                            "(for -DCMAKE_TOOLCHAIN_FILE=...)")


def run(args: argparse.Namespace) -> int:
    if args.toolchain_board:
        from aot.target import load_board

        path = toolchain_file(load_board(args.toolchain_board))
        print(json.dumps({"toolchain-file": str(path)}) if args.json else path)
        return 0
    paths = _paths()
    if args.json:
        print(json.dumps({key: str(path) for key, path in paths.items()
                          if args.key in (None, key)}, indent=2))
        return 0
    if args.key:
        print(paths[args.key])
    else:
        for key, path in paths.items():
            print(f"{key}: {path}")
    return 0
