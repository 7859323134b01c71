"""A compiled model built into firmware: where the linker put its symbols, and
whether it runs exactly (the memory-region tests share these steps)."""

from __future__ import annotations

import subprocess

from aot.firmware import build_project, create_project
from aot.firmware.device import run_project
from aot.firmware.verify import compare, reference_outputs


def build(compiled, tmp_path, cache):
    """The project and build of ``compiled`` under ``tmp_path``."""
    project = create_project(compiled.write(tmp_path / "artifact"), compiled.board,
                             tmp_path / "project")
    return project, build_project(project, cache_dir=cache)


def symbols(compiled, elf) -> dict[str, int]:
    """Every symbol of ``elf`` by name, with its address (the board's ``nm``)."""
    nm = compiled.board.toolchain.tool("nm")
    lines = subprocess.run([nm, str(elf)], capture_output=True, text=True,
                           check=True).stdout.split("\n")
    return {line.split()[-1]: int(line.split()[0], 16) for line in lines if line.strip()}


def assert_exact(compiled, project, built, inputs) -> None:
    """Run ``inputs`` on the device; every output equals the reference."""
    run = run_project(project, inputs, build=built)
    checks = compare(compiled.graph, run.outputs, reference_outputs(compiled.graph, inputs),
                     float_tolerance=0)
    assert all(c.exact for c in checks), [c.to_json() for c in checks]
