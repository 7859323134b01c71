"""``aot config``: where this installation keeps what firmware builds use.

``aot config --cmake-dir`` prints the folder of the CMake package
(``find_package(aot)`` with ``-Daot_DIR=...``), ``--cmake-prefix`` a folder
to put on ``CMAKE_PREFIX_PATH`` instead, ``--runtime-dir`` the C runtime's
sources.  Without an option, all of them, one ``name: path`` per line.
docs/integration.md shows them in use.
"""

from __future__ import annotations

import argparse
from importlib import resources
from pathlib import Path


NAME = "config"
HELP = "print where this aot keeps its CMake package and C runtime (for firmware builds)"


def cmake_dir() -> Path:
    """The folder holding aotConfig.cmake and aot.cmake (package data of aot)."""
    return Path(str(resources.files("aot").joinpath("cmake")))


def _paths() -> dict[str, Path]:
    from aot.export import RUNTIME_DIR

    cmake = cmake_dir()
    # find_package searches <prefix>/<name>*/cmake/: the folder above the package.
    return {"cmake-dir": cmake, "cmake-prefix": cmake.parent.parent, "runtime-dir": RUNTIME_DIR}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    which = parser.add_mutually_exclusive_group()
    for key in _paths():
        which.add_argument(f"--{key}", dest="key", action="store_const", const=key,
                           help=f"print only the {key.replace('-', ' ')}")


def run(args: argparse.Namespace) -> int:
    paths = _paths()
    if args.key:
        print(paths[args.key])
    else:
        for key, path in paths.items():
            print(f"{key}: {path}")
    return 0
