"""The wheel: it carries every file the packages read at run time (kernel
headers, templates, and the top-level runtime_c/ and boards/ that setup.py's
build hook maps to aot/runtime_c and aot/boards), aot imported from it finds
them, and aot installed from it into a fresh virtual environment outside this
checkout compiles, builds and runs a model.  An editable install finds the
top-level folders of its checkout.
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

import numpy as np
import pytest

from aot.kernels import support_files
from support.models import ROOT

#: The top-level packages pyproject.toml ships.
PACKAGES = ("aot", "flash")
#: Top-level folders the build maps into the package (setup.py's MAPPED).
MAPPED = {"runtime_c": "aot/runtime_c", "boards": "aot/boards"}
#: The files that build the distributions.
BUILD_FILES = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md")
_SKIP = shutil.ignore_patterns("__pycache__", "*.pyc")


def _setuptools_major() -> int:
    try:
        return int(metadata.version("setuptools").split(".")[0])
    except (metadata.PackageNotFoundError, ValueError):
        return 0


def _copy_sources(src: Path) -> None:
    """What a source checkout holds for building, copied to ``src`` (so no
    build/ or *.egg-info lands in the work tree)."""
    src.mkdir()
    for name in BUILD_FILES:
        shutil.copy(ROOT / name, src / name)
    for folder in (*PACKAGES, *MAPPED):
        shutil.copytree(ROOT / folder, src / folder, ignore=_SKIP)


def _borrowing_venv(env_dir: Path) -> Path:
    """A venv without pip that borrows this interpreter's third-party packages
    through a .pth file (so the tests need no network); its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True)
    site = next(env_dir.glob("lib/python*/site-packages"))
    deps = [p for p in sys.path if p.endswith("site-packages")]
    (site / "borrowed-deps.pth").write_text("\n".join(deps) + "\n")
    return env_dir / "bin" / "python"


def _needs_setuptools() -> None:
    if _setuptools_major() < 77:
        pytest.skip("building offline needs setuptools>=77 in this environment "
                    "(the test extra; scripts/setup.sh installs it)")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The project's wheel, built offline from a copy of the sources by this
    interpreter's setuptools."""
    _needs_setuptools()
    tmp = tmp_path_factory.mktemp("wheel")
    src, out = tmp / "src", tmp / "out"
    _copy_sources(src)
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


def _mapped_files() -> dict[str, bytes]:
    """Every file of the top-level runtime_c/ and boards/, by its wheel path."""
    return {f"{inside}/{path.relative_to(ROOT / folder).as_posix()}": path.read_bytes()
            for folder, inside in MAPPED.items()
            for path in sorted((ROOT / folder).rglob("*")) if path.is_file()}


def test_the_checkout_serves_the_top_level_folders():
    from aot.resources import boards_dir, runtime_dir

    assert runtime_dir() == ROOT / "runtime_c"
    assert boards_dir() == ROOT / "boards"
    assert not (ROOT / "aot" / "runtime_c").exists() and not (ROOT / "aot" / "boards").exists()


@pytest.mark.slow
def test_the_wheels_runtime_and_boards_are_the_top_level_folders(wheel):
    """One source of truth: the wheel's aot/runtime_c and aot/boards hold
    exactly the files of runtime_c/ and boards/, byte for byte."""
    want = _mapped_files()
    assert "aot/runtime_c/include/aot/config.h" in want and "aot/boards/schema.json" in want
    with zipfile.ZipFile(wheel) as z:
        got = {n: z.read(n) for n in z.namelist()
               if n.startswith(tuple(f"{inside}/" for inside in MAPPED.values()))}
    assert sorted(got) == sorted(want)
    assert [n for n in want if got[n] != want[n]] == []


def test_the_wheel_holds_every_data_file_of_the_packages(wheel):
    data = _data_files()
    headers = {p.rsplit("/", 1)[1] for p in data if p.startswith("aot/kernels/")
               and "/include/" in p}
    assert set(support_files(None)) == headers
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        assert sorted(set(data) - names) == []
        assert [p for p, b in data.items() if z.read(p) != b] == []


@pytest.mark.slow
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
        "from aot.resources import boards_dir, runtime_dir",
        "print(json.dumps({'file': aot.__file__, 'headers': support_files(None),",
        "                  'c': mod.source, 'runtime': str(runtime_dir()),",
        "                  'boards': str(boards_dir())}))",
    ])
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(wheel)})
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got["file"].startswith(str(wheel))
    assert got["headers"] == support_files(None)
    assert "int32_t inc(" in got["c"]
    assert got["runtime"] == f"{wheel}/aot/runtime_c"
    assert got["boards"] == f"{wheel}/aot/boards"


@pytest.mark.slow
def test_an_editable_install_finds_the_top_level_folders(tmp_path):
    """``pip install -e .`` (what scripts/setup.sh does) copies nothing: aot
    imported through it finds runtime_c/ and boards/ of its checkout, and so
    does ``aot config --runtime-dir``."""
    _needs_setuptools()
    src = tmp_path / "src"
    _copy_sources(src)
    py = _borrowing_venv(tmp_path / "venv")
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q",
                           "--no-deps", "--no-build-isolation", "--no-index", "-e", str(src)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not (src / "aot" / "runtime_c").exists() and not (src / "aot" / "boards").exists()
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    code = ("import aot; from aot.resources import boards_dir, runtime_dir; "
            "from aot.target import list_boards; "
            "print(aot.__file__, runtime_dir(), boards_dir(), len(list_boards()))")
    out = subprocess.run([str(py), "-c", code], cwd=tmp_path, capture_output=True, text=True,
                         env=clean, check=True).stdout.split()
    assert out[:3] == [str(src / "aot" / "__init__.py"), str(src / "runtime_c"),
                       str(src / "boards")]
    assert int(out[3]) == len(list((ROOT / "boards").glob("*/*.toml")))
    config = subprocess.run([str(tmp_path / "venv" / "bin" / "aot"), "config", "--runtime-dir"],
                            cwd=tmp_path, capture_output=True, text=True, env=clean)
    assert config.returncode == 0, config.stderr
    assert config.stdout.strip() == str(src / "runtime_c")


@pytest.mark.slow
def test_aot_installed_from_the_wheel_anywhere_compiles_builds_and_runs(wheel, tmp_path):
    """A venv in a temporary folder, the wheel installed into it, no source tree
    on any path: ``aot run`` on the host, a firmware project for an emulated
    board (C runtime and board record from the package), KWS run on QEMU and a
    CMake project work there.  The
    venv borrows this interpreter's third-party packages through a .pth file,
    so the test needs no network."""
    env_dir = tmp_path / "venv"
    py = _borrowing_venv(env_dir)
    site = next(env_dir.glob("lib/python*/site-packages"))
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q",
                           "--no-deps", "--no-index", str(wheel)], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    work = tmp_path / "elsewhere"
    work.mkdir()
    model = ROOT.parent / "shared" / "models" / "tflm_hello_world_int8.tflite"
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}

    def aot(*args):
        return subprocess.run([str(env_dir / "bin" / "aot"), *map(str, args)], cwd=work,
                              capture_output=True, text=True, env=clean, timeout=600)

    where = subprocess.run([str(py), "-c", "import aot; print(aot.__file__)"], cwd=work,
                           capture_output=True, text=True, env=clean, check=True).stdout
    assert where.startswith(str(site)), where
    x = work / "x.npy"
    np.save(x, np.array([[[-5]], [[17]], [[90]]], np.int8).reshape(3, 1, 1))
    run = aot("run", model, "--board", "host/native", "--input", x, "--output", work / "y.npy")
    assert run.returncode == 0, run.stdout + run.stderr
    want = aot("interpret", model, "--input", x, "--output", work / "want.npy")
    assert want.returncode == 0, want.stderr
    assert np.array_equal(np.load(work / "y.npy"), np.load(work / "want.npy"))
    compiled = aot("compile", model, "--board", "qemu/mps2-an386", "-o", work / "art")
    assert compiled.returncode == 0, compiled.stderr
    project = aot("project", "create", "--board", "qemu/mps2-an386", "--artifact", work / "art",
                  "-o", work / "fw")
    assert project.returncode == 0, project.stderr
    assert (work / "fw" / "runtime" / "ports" / "mps2" / "port.mk").is_file()
    if shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("arm-none-eabi-gcc is not installed (scripts/setup.sh installs it)")
    built = aot("build", work / "fw")
    assert built.returncode == 0, built.stdout + built.stderr
    # KWS compiled, built with the packaged runtime and board record, and run
    # on QEMU: bit-exact with the reference interpreter.
    if shutil.which("qemu-system-arm") is None:
        pytest.skip("qemu-system-arm is not installed (scripts/setup.sh installs it)")
    kws = ROOT.parent / "shared" / "models" / "mlperf_kws_dscnn.tflite"
    fill = ("--fill", "random", "--seed", "3")
    on_qemu = aot("run", kws, "--board", "qemu/mps2-an386", *fill, "--output", work / "kws.npy")
    assert on_qemu.returncode == 0, on_qemu.stdout + on_qemu.stderr
    ref = aot("interpret", kws, *fill, "--output", work / "kws_want.npy")
    assert ref.returncode == 0, ref.stderr
    assert np.array_equal(np.load(work / "kws.npy"), np.load(work / "kws_want.npy"))
    if shutil.which("cmake") is None:
        pytest.skip("cmake is not installed (scripts/setup.sh installs it)")
    # find_package(aot) through the prefix `aot config` prints, and
    # aot_add_model finding the venv's aot by itself.
    prefix = aot("config", "--cmake-prefix")
    assert prefix.returncode == 0 and prefix.stdout.strip().startswith(str(site))
    # The toolchain files ship in the wheel.
    toolchain = aot("config", "--toolchain-file", "qemu/mps2-an386")
    assert toolchain.returncode == 0, toolchain.stderr
    assert toolchain.stdout.strip().startswith(str(site))
    runtime = aot("config", "--runtime-dir")
    assert runtime.returncode == 0, runtime.stderr
    assert runtime.stdout.strip() == str(site / "aot" / "runtime_c")
    assert Path(toolchain.stdout.strip()).is_file()
    src = work / "cmake-app"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.19)\nproject(app C)\nfind_package(aot REQUIRED)\n"
        "add_executable(app main.c)\n"
        f"aot_add_model(app MODEL {model} BOARD host/native NAME hello)\n")
    (src / "main.c").write_text(
        '#include <stdio.h>\n#include "hello.h"\nint main(void) {\n'
        "  static const int8_t x[3] = {-5, 17, 90};\n  int8_t y;\n"
        "  for (int i = 0; i < 3; ++i) {\n"
        "    struct hello_inputs in = {&x[i]};\n    struct hello_outputs out = {&y};\n"
        '    if (hello_run(&in, &out) != 0) return 1;\n    printf("%d\\n", y);\n  }\n'
        "  return 0;\n}\n")
    for argv in (["cmake", "-S", src, "-B", work / "cmake-build",
                  f"-DCMAKE_PREFIX_PATH={prefix.stdout.strip()}"],
                 ["cmake", "--build", work / "cmake-build"]):
        done = subprocess.run(list(map(str, argv)), cwd=work, capture_output=True, text=True,
                              env=clean, timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
    app = subprocess.run([str(work / "cmake-build" / "app")], capture_output=True, text=True)
    assert app.returncode == 0
    assert [int(v) for v in app.stdout.split()] == np.load(work / "want.npy").ravel().tolist()
