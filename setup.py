"""The build hook that puts runtime_c/ and boards/ into the wheel.

Everything else is in pyproject.toml.  The repository keeps the C runtime and
the board records at the top level (the design card's layout); an installed
aot finds them as package data, aot/runtime_c and aot/boards
(aot/resources.py).  This hook copies the two folders there, file by file and
byte for byte, when setuptools builds the package; tests/test_packaging.py
checks the wheel against the folders.

Why a hook and not [tool.setuptools.package-dir]: mapping ``aot.runtime_c``
to ``runtime_c`` would make both folders Python packages, which pyproject.toml
must then list by hand beside every real subpackage (``packages.find`` cannot
discover a mapped folder), and every data subfolder (include/aot, ports/mps2,
qemu/, ...) would trip setuptools' "package absent from packages" check.  The
hook leaves package discovery alone.  An editable install (``pip install -e
.``) copies nothing: the checkout is the package, and aot.resources finds the
top-level folders beside it.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
#: top-level folder -> its place inside the built package
MAPPED = {"runtime_c": "aot/runtime_c", "boards": "aot/boards"}


class BuildPyWithData(build_py):
    """build_py, then the mapped folders copied into the build tree."""

    def run(self):
        super().run()
        if self.editable_mode:
            return
        for src, dst in MAPPED.items():
            for path in sorted((HERE / src).rglob("*")):
                if path.is_file() and "__pycache__" not in path.parts:
                    out = Path(self.build_lib, dst, path.relative_to(HERE / src))
                    self.mkpath(str(out.parent))
                    self.copy_file(str(path), str(out))


setup(cmdclass={"build_py": BuildPyWithData})
