"""Where the C runtime and the board records are: :func:`runtime_dir`, :func:`boards_dir`.

In the repository they are top-level folders, ``runtime_c/`` and ``boards/``,
beside the ``aot`` package (the design card's layout, docs/architecture.md).
The wheel carries them inside the package, as ``aot/runtime_c`` and
``aot/boards``: setup.py's build step copies them there when the wheel is
built, so an installed aot finds them with importlib.resources and needs no
source tree.  A source checkout, with or without an editable install
(``pip install -e .``), has no such copy and is served from the top-level
folders.

These functions are the one place that knows both homes; every module, test,
benchmark and ``aot config --runtime-dir`` asks them instead of working a
path out.  A folder counts only if it holds the file every complete copy has
(``include/aot/config.h``, ``schema.json``), so a stale leftover folder in a
checkout is not taken for the real one.
"""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path

from aot.errors import AotError

#: folder name -> (what it is, a file every complete copy of it holds)
_FOLDERS = {
    "runtime_c": ("C runtime", "include/aot/config.h"),
    "boards": ("board records", "schema.json"),
}


@functools.cache
def _folder(name: str) -> Path:
    return find_folder(name, resources.files("aot"))


def find_folder(name: str, package) -> Path:
    """``name`` (``runtime_c`` or ``boards``) for the package at ``package``
    (a Traversable): inside it (a wheel), else beside it (a checkout)."""
    what, marker = _FOLDERS[name]
    packaged = package.joinpath(name)
    if packaged.joinpath(marker).is_file():  # an installed wheel (also zip-imported)
        return Path(str(packaged))
    checkout = Path(str(package)).parent / name  # a source checkout or editable install
    if (checkout / marker).is_file():
        return checkout
    raise AotError(f"aot's {what} is missing: neither {packaged} (an installed wheel) nor "
                   f"{checkout} (a source checkout) holds {marker}; reinstall aot from its "
                   "wheel, or in a checkout restore the top-level folder with "
                   f"`git checkout -- {name}`")


def runtime_dir() -> Path:
    """The C runtime's folder (include/, src/, ports/, runtime.mk, runtime.cmake)."""
    return _folder("runtime_c")


def boards_dir() -> Path:
    """The board records' folder (``<vendor>/<board>.toml`` and schema.json)."""
    return _folder("boards")
