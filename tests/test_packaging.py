"""The wheel: it carries every file the packages read at run time, and aot
imported from it (with no source tree behind it) finds them.

runtime_c/ and boards/ are read from the source tree beside the packages
(aot/export, aot/firmware/project.py, aot/target/tags.py) and are not in
the wheel yet; these tests cover what lives inside the packages.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

from aot.kernels import support_files
from support.models import ROOT

#: The top-level packages pyproject.toml ships.
PACKAGES = ("aot", "flash")
_SKIP = shutil.ignore_patterns("__pycache__", "*.pyc")


def _setuptools_major() -> int:
    try:
        return int(metadata.version("setuptools").split(".")[0])
    except (metadata.PackageNotFoundError, ValueError):
        return 0


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The project's wheel, built offline from a copy of the sources (so no
    build/ or *.egg-info lands in the work tree) by this interpreter's
    setuptools."""
    if _setuptools_major() < 77:
        pytest.skip("building the wheel offline needs setuptools>=77 in this environment "
                    "(the test extra; scripts/setup.sh installs it)")
    tmp = tmp_path_factory.mktemp("wheel")
    src, out = tmp / "src", tmp / "out"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for pkg in PACKAGES:
        shutil.copytree(ROOT / pkg, src / pkg, ignore=_SKIP)
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                           "--no-build-isolation", "--no-index", "-w", str(out), str(src)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (whl,) = out.glob("*.whl")
    return whl


def _data_files() -> dict[str, bytes]:
    """Every file of the packages that is not Python source, by wheel path."""
    found = {}
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*"):
            if path.is_file() and path.suffix not in (".py", ".pyc") \
                    and "__pycache__" not in path.parts:
                found[path.relative_to(ROOT).as_posix()] = path.read_bytes()
    return found


def test_the_wheel_holds_every_data_file_of_the_packages(wheel):
    data = _data_files()
    headers = {p.rsplit("/", 1)[1] for p in data if p.startswith("aot/kernels/")
               and "/include/" in p}
    assert set(support_files(None)) == headers
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        assert sorted(set(data) - names) == []
        assert [p for p, b in data.items() if z.read(p) != b] == []


def test_aot_imported_from_the_wheel_reads_its_headers_and_templates(wheel, tmp_path):
    # The wheel itself first on sys.path: zipimport, so importlib.resources and
    # jinja2's PackageLoader must read from the archive, not from a folder.
    code = "\n".join([
        "import json, aot",
        "from aot import te",
        "from aot.kernels import support_files",
        "A = te.placeholder((4,), 'float32', name='A')",
        "B = te.compute((4,), lambda i: A[i] + 1.0, name='B')",
        "mod = aot.build(te.create_schedule(B.op), [A, B], target='c', name='inc')",
        "print(json.dumps({'file': aot.__file__, 'headers': support_files(None),",
        "                  'c': mod.source}))",
    ])
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(wheel)})
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got["file"].startswith(str(wheel))
    assert got["headers"] == support_files(None)
    assert "int32_t inc(" in got["c"]
