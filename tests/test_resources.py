"""aot.resources: the one lookup of the C runtime and the board records,
inside the package (a wheel) or beside it (a checkout)."""

from __future__ import annotations

import pytest

from aot.errors import AotError
from aot.resources import find_folder


def _runtime(root):
    (root / "include" / "aot").mkdir(parents=True)
    (root / "include" / "aot" / "config.h").write_text("/* config */\n")


def test_the_packaged_copy_wins(tmp_path):
    _runtime(tmp_path / "aot" / "runtime_c")
    _runtime(tmp_path / "runtime_c")
    assert find_folder("runtime_c", tmp_path / "aot") == tmp_path / "aot" / "runtime_c"


def test_a_checkout_is_served_from_beside_the_package(tmp_path):
    (tmp_path / "aot").mkdir()
    (tmp_path / "boards").mkdir()
    (tmp_path / "boards" / "schema.json").write_text("{}")
    assert find_folder("boards", tmp_path / "aot") == tmp_path / "boards"


def test_a_stale_folder_inside_the_package_is_not_taken(tmp_path):
    # What git leaves of aot/runtime_c after the move when untracked files sat in it.
    (tmp_path / "aot" / "runtime_c" / "build").mkdir(parents=True)
    _runtime(tmp_path / "runtime_c")
    assert find_folder("runtime_c", tmp_path / "aot") == tmp_path / "runtime_c"


def test_neither_home_is_a_clear_error(tmp_path):
    (tmp_path / "aot").mkdir()
    with pytest.raises(AotError, match=r"board records is missing: neither .*aot/boards "
                       r"\(an installed wheel\) nor .*/boards \(a source checkout\) holds "
                       r"schema.json"):
        find_folder("boards", tmp_path / "aot")
