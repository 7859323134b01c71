"""The board path of ``aot run`` (aot.commands.run_board), on the emulated Cortex-M4."""

from __future__ import annotations

import pytest
import argparse
import json

import numpy as np
from support.models import MODELS_DIR

from aot.compile import compile_model
from aot.commands.model_io import top_classes
from aot.commands.run_board import run_command
from aot.firmware.verify import reference_outputs
from aot.frontend import load_model

SPEECH = MODELS_DIR / "tflm_micro_speech.tflite"


def _args(tmp_path, **kw) -> argparse.Namespace:
    return argparse.Namespace(output=tmp_path / "y.npy", json=False, sanitize=False,
                              port=None, runner=None, **kw)


@pytest.mark.slow
def test_run_writes_outputs_and_prints_counts_class_and_memory(tmp_path, monkeypatch,
                                                                capsys):
    monkeypatch.setenv("AOT_CACHE_DIR", str(tmp_path / "cache"))
    x = np.load(MODELS_DIR / "samples" / "tflm_micro_speech.npy")  # "yes", then "no"
    compiled = compile_model(SPEECH, "qemu/mps2-an386", measure_code=False)
    assert run_command(_args(tmp_path), compiled, [x], "x.npy") == 0
    got = np.load(tmp_path / "y.npy")
    np.testing.assert_array_equal(got, reference_outputs(compiled.graph, [x])[0])
    out = capsys.readouterr().out
    assert "2 invocations of tflm_micro_speech on qemu/mps2-an386" in out
    assert "instructions per inference (exact count under QEMU -icount)" in out
    assert "top class (argmax of the output) per invocation: [2, 3]" in out
    assert "flash" in out and "constants" in out and "workspace" in out

    args = _args(tmp_path)
    args.json = True
    assert run_command(args, compiled, [x[:1]], "x.npy") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["instructions_per_inference"] > 0 and data["top_class"] == [2]
    assert data["workspace_bytes"] == compiled.sizes.workspace
    assert data["flash_bytes"] > data["sizes"]["flash"]["constants"] > 0
    assert data["ram_bytes"] >= data["workspace_bytes"]


def test_top_classes_only_for_score_vectors():
    assert top_classes([np.array([[[0, 9, 1]], [[7, 0, 1]]])]) == [1, 0]
    assert top_classes([np.zeros((2, 1, 1))]) is None          # a regressor
    assert top_classes([np.zeros((2, 4, 4, 3))]) is None       # a feature map
    assert top_classes([np.zeros((2, 1, 3)), np.zeros((2, 1, 3))]) is None


@pytest.mark.slow
def test_aot_run_on_an_emulated_board(tmp_path, monkeypatch, capsys):
    from aot.cli import main

    monkeypatch.setenv("AOT_CACHE_DIR", str(tmp_path / "cache"))
    x = np.load(MODELS_DIR / "samples" / "tflm_micro_speech.npy")
    np.save(tmp_path / "x.npy", x)
    assert main(["run", str(SPEECH), "--board", "qemu/mps2-an386", "--input",
                 str(tmp_path / "x.npy"), "--output", str(tmp_path / "y.npy"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["board"] == "qemu/mps2-an386" and data["invocations"] == 2
    assert data["instructions_per_inference"] > 0 and data["top_class"] == [2, 3]
    assert {"workspace_bytes", "flash_bytes", "ram_bytes"} <= set(data)
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"),
                                  reference_outputs(load_model(SPEECH), [x])[0])
    assert main(["run", str(SPEECH), "--board", "qemu/mps2-an386", "--input",
                 str(tmp_path / "x.npy"), "--output", str(tmp_path / "y.npy"),
                 "--sanitize"]) == 2
    assert "--sanitize works on the host only" in capsys.readouterr().err
