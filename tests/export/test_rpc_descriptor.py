"""The generated RPC descriptor serves the model through the runtime's RPC server.

The artifact alone (its runtime/ folder and runtime.mk, no Python) builds
host-port firmware; the host writes an input, runs the model and reads the
output, which equals the reference interpreter's.
"""

from __future__ import annotations

import pytest
import subprocess

import numpy as np
from support.models import MODELS_DIR

from aot.compile import compile_model
from aot.frontend import load_model
from aot.reference.interpreter import run as reference_run
from aot.rpc import connect
from flash.host import HostConfig, HostRunner

MODEL = MODELS_DIR / "tflm_micro_speech.tflite"


@pytest.mark.slow
def test_rpc_firmware_runs_the_compiled_model(tmp_path):
    compiled = compile_model(MODEL, "host/native", name="speech", measure_code=False)
    art = compiled.write(tmp_path / "art")
    (art / "Makefile").write_text(
        "AOT_RUNTIME_DIR := runtime\nAOT_PORT := host\n"
        "AOT_APP_SRCS := $(wildcard codegen/*.c)\nAOT_EXTRA_CFLAGS := -Iinclude\n"
        "AOT_BOARD_TAG := host/native\n"
        "include runtime/runtime.mk\n.DEFAULT_GOAL := $(AOT_FIRMWARE)\n")
    proc = subprocess.run(["make", "-s", "CC=gcc"], cwd=art, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    graph = load_model(MODEL)
    x = np.random.default_rng(3).integers(-128, 128, graph.inputs[0].shape, dtype=np.int8)
    runner = HostRunner(HostConfig(art / "build" / "firmware.elf"))
    url = runner.start()
    try:
        with connect(url, timeout=5) as client:
            info = client.info()
            assert info.model_name == "speech"
            assert compiled.target.digest().startswith(info.target_hash)
            tensors = client.tensors()
            assert set(tensors) == {"reshape_1", "labels_softmax"}
            client.write_tensor("reshape_1", x)
            client.run(1)
            got = client.read_tensor("labels_softmax")
            # Each kernel alone, in order, recomputes the same output.
            names = client.kernels()
            assert names == [g.name for g in compiled.graph.annotations.groups
                             if g.kind != "view"]
            client.write_tensor("reshape_1", np.zeros_like(x))
            client.run(1)
            client.write_tensor("reshape_1", x)
            for kernel in names:
                client.run(1, kernel=kernel)
            by_kernel = client.read_tensor("labels_softmax")
    finally:
        runner.stop()
    np.testing.assert_array_equal(got, reference_run(graph, [x])[0])
    np.testing.assert_array_equal(by_kernel, got)
