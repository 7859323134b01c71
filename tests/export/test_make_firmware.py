"""The artifact's Makefile fragment (P.mk) and the runtime's board.mk in a
firmware project of its own, built with Make outside this tree: the model is
compiled by a rule of the project's Makefile, the firmware cross-built for
qemu/mps2-an386, run on QEMU and compared with TFLM, then rebuilt after
nothing, a touched model, new weights and new options.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from support.net_firmware import PROJECT, aot_program, compiled_objects, net_model, run_on_qemu


def make(project: Path, aot: Path, model: Path, *extra: str) -> tuple[str, set[str]]:
    """Run the project's Makefile in ``project``; its output and the C files it compiled."""
    done = subprocess.run(["make", "-f", str(PROJECT / "Makefile"), f"AOT={aot}",
                           f"NET_MODEL={model}", *extra], cwd=project,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout, compiled_objects(done.stdout)


@pytest.mark.slow
@pytest.mark.qemu
def test_make_firmware_builds_runs_bit_exact_and_rebuilds_only_what_changed(
        tmp_path, tflm):  # noqa: F811
    aot = aot_program(tmp_path)
    model = tmp_path / "net.tflite"
    first = net_model(seed=1)
    model.write_bytes(first)
    project = tmp_path / "project"
    project.mkdir()
    out, objects = make(project, aot, model)
    assert "aot compile" in out
    assert {"main.c", "net.c", "startup.c", "port.c"} <= objects
    elf = project / "build" / "firmware.elf"
    x = np.random.default_rng(7).integers(-128, 128, (1, 8, 8, 3)).astype(np.int8)
    np.testing.assert_array_equal(run_on_qemu(elf, x), tflm.run(first, [[x]])[0][0].ravel())

    out, objects = make(project, aot, model)
    assert objects == set() and "aot compile" not in out
    # A touched model is compiled again, but no file of the artifact changes.
    os.utime(model)
    out, objects = make(project, aot, model)
    assert "aot compile" in out and objects == set()
    # New weights: only the kernels whose constants changed are compiled again.
    second = net_model(seed=2)
    model.write_bytes(second)
    _, objects = make(project, aot, model)
    assert objects and all(re.fullmatch(r"net_kernels_\d+\.c", f) for f in objects), objects
    np.testing.assert_array_equal(run_on_qemu(elf, x), tflm.run(second, [[x]])[0][0].ravel())
    # New options compile the model again; main.c is compiled again exactly when
    # the header it includes changed (here the workspace grows without in-place
    # writes and overlaps: its size and the i/o offsets are in the header).
    header = project / "build" / "aot" / "net" / "include" / "net.h"
    before = header.read_bytes()
    out, objects = make(project, aot, model, "NET_OPTIONS=--no-inplace")
    assert "--no-inplace" in out and objects
    assert ("main.c" in objects) == (header.read_bytes() != before)
    np.testing.assert_array_equal(run_on_qemu(elf, x), tflm.run(second, [[x]])[0][0].ravel())
