"""A small firmware project as a user writes it (tests/support/firmware_project:
main.c, CMakeLists.txt, Makefile) and what its tests share: the model it
runs, an ``aot`` program for its builds, and running the firmware on QEMU.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import serial

from aot.target import load_board
from flash import runner_for_board
from support.tflite_builder import ModelBuilder

ROOT = Path(__file__).resolve().parents[2]
PROJECT = Path(__file__).parent / "firmware_project"


def net_model(seed: int) -> bytes:
    """x int8[1,8,8,3] -> 3x3 convolution (ReLU) -> fully connected -> y int8[1,10]."""
    rng = np.random.default_rng(seed)
    mb = ModelBuilder()
    x = mb.input("x", [1, 8, 8, 3], "int8", scale=0.05, zero_point=-3)
    ws = rng.uniform(0.002, 0.01, 4)
    w = mb.const("w", rng.integers(-127, 128, (4, 3, 3, 3)), "int8", scale=ws,
                 zero_point=[0] * 4, axis=0)
    b = mb.const("b", rng.integers(-500, 500, 4), "int32", scale=0.05 * ws,
                 zero_point=[0] * 4, axis=0)
    h = mb.tensor("h", [1, 8, 8, 4], "int8", scale=0.04, zero_point=-128)
    mb.op("CONV_2D", [x, w, b], [h], padding="SAME", stride_w=1, stride_h=1,
          fused_activation_function="RELU")
    r = mb.tensor("r", [1, 256], "int8", scale=0.04, zero_point=-128)
    mb.op("RESHAPE", [h, mb.const("shape", np.array([1, 256]), "int32")], [r],
          new_shape=[1, 256])
    fw = mb.const("fw", rng.integers(-127, 128, (10, 256)), "int8", scale=0.004, zero_point=0)
    fb = mb.const("fb", rng.integers(-2000, 2000, 10), "int32", scale=0.04 * 0.004,
                  zero_point=0)
    y = mb.output("y", [1, 10], "int8", scale=0.2, zero_point=5)
    mb.op("FULLY_CONNECTED", [r, fw, fb], [y])
    return mb.finish()


def aot_program(tmp_path: Path) -> Path:
    """An ``aot`` that runs this checkout's package (what an installed aot does)."""
    script = tmp_path / "bin" / "aot"
    script.parent.mkdir()
    script.write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT}" exec "{sys.executable}" -m aot "$@"\n')
    script.chmod(0o755)
    return script


def compiled_objects(output: str) -> set[str]:
    """The C files a build compiled (from the compiler command lines)."""
    return {Path(m).name for m in re.findall(r" -c (\S+\.c)\b", output)}


def run_on_qemu(elf: Path, x: np.ndarray) -> np.ndarray:
    with runner_for_board("qemu", load_board("qemu/mps2-an386"), elf) as url:
        with serial.serial_for_url(url, timeout=10) as port:
            port.write(x.tobytes())
            got = port.read(10)
    assert len(got) == 10, "the firmware did not answer with 10 bytes"
    return np.frombuffer(got, dtype=np.int8)
