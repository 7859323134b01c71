"""Start-up: the command line imports only what the command it runs uses.

Each check runs a fresh interpreter (a test process has imported everything
already) and reads its ``sys.modules`` at the end."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from support.models import MODELS_DIR, ROOT

#: Libraries no command needs before it does real work, and the commands that use them.
HEAVY = {"llvmlite": "llvm codegen and JIT", "capstone": "aot profile",
         "elftools": "aot profile", "ray": "aot tune --farm", "jinja2": "printing C",
         "numpy": "every model command", "serial": "real boards"}


def _modules_after(code: str, cache=None) -> set[str]:
    """Top-level packages and aot modules loaded by ``code`` in a fresh interpreter
    (``cache``: its AOT_CACHE_DIR)."""
    script = (code + "\nimport json, sys\n"
              "print('\\n' + json.dumps(sorted(sys.modules)))\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if cache is not None:
        env["AOT_CACHE_DIR"] = str(cache)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    names = json.loads(proc.stdout.strip().splitlines()[-1])
    return {n for n in names if n.startswith("aot")} | {n.split(".")[0] for n in names}


def test_importing_the_command_line_loads_no_heavy_library():
    loaded = _modules_after("import aot.cli")
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))
    # The commands' modules, the errors they raise and the atomic file writer the
    # compile record uses (standard library only): nothing of the pipeline.
    light = {"aot", "aot.cli", "aot.errors", "aot.fileio", "aot.tune", "aot.tune.errors",
             "aot.version"}
    assert {m for m in loaded if m.startswith("aot")} - light == \
        {m for m in loaded if m.startswith("aot.commands")}


@pytest.mark.parametrize("argv", [["--help"], ["compile", "--help"]])
def test_help_loads_no_heavy_library(argv):
    loaded = _modules_after(f"from aot.cli import main\ntry:\n    main({argv!r})\n"
                            "except SystemExit:\n    pass")
    heavy = {"llvmlite", "capstone", "elftools", "ray", "serial"}
    if argv == ["--help"]:
        heavy |= {"numpy", "jinja2"}  # a command's help may load its own modules' choices
    assert not loaded & heavy, sorted(loaded & heavy)


@pytest.mark.slow
def test_compile_loads_neither_llvm_nor_the_profiler_nor_the_tuner(tmp_path):
    model = MODELS_DIR / "tflm_hello_world_int8.tflite"
    loaded = _modules_after(
        "from aot.cli import main\n"
        f"assert main(['compile', {str(model)!r}, '--board', 'qemu/mps2-an386', '-o', "
        f"{str(tmp_path / 'art')!r}, '--no-code-size']) == 0", cache=tmp_path / "cache")
    assert "jinja2" in loaded and "aot.compile" in loaded  # it did compile
    # jsonschema: the shipped board record passed the schema as it is (boards/checked.json);
    # the memory chart: no --memory-report
    unused = {"llvmlite", "capstone", "elftools", "ray", "serial", "aot.tune.session",
              "aot.firmware", "aot.cycles", "jsonschema", "aot.executor.memory_chart"}
    assert not loaded & unused, sorted(loaded & unused)
