"""``aot verify``: exit 0 only when the board's outputs equal the reference's."""

from __future__ import annotations

import json

import numpy as np
import pytest
from support.models import MODELS_DIR

import aot.firmware.verify as verify
from aot.cli import main

HELLO = str(MODELS_DIR / "tflm_hello_world_int8.tflite")


@pytest.mark.slow
def test_verify_passes_and_writes_a_report(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("AOT_CACHE_DIR", str(tmp_path / "cache"))
    report = tmp_path / "report.json"
    assert main(["verify", HELLO, "--board", "qemu/mps2-an386", "--report", str(report),
                 "--json"]) == 0
    data = json.loads(report.read_text())
    assert data == json.loads(capsys.readouterr().out)
    assert data["passed"] and data["board"] == "qemu/mps2-an386"
    samples = len(np.load(MODELS_DIR / "samples" / "tflm_hello_world_int8.npy"))
    assert data["invocations"] == samples + 2  # the samples, then 2 seeded random inputs
    assert data["outputs"][0]["bit_exact"] and data["outputs"][0]["mismatches"] == 0
    assert data["instructions_per_inference"] > 0
    assert {"workspace_bytes", "flash_bytes", "ram_bytes"} <= set(data)


@pytest.mark.slow
def test_verify_fails_on_a_single_differing_value(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("AOT_CACHE_DIR", str(tmp_path / "cache"))
    real = verify.reference_outputs

    def off_by_one(graph, inputs):
        outputs = real(graph, inputs)
        outputs[0][1].flat[0] += 1
        return outputs

    monkeypatch.setattr(verify, "reference_outputs", off_by_one)
    x = np.zeros((3, 1, 1), np.int8)
    np.save(tmp_path / "x.npy", x)
    report = tmp_path / "report.json"
    assert main(["verify", HELLO, "--board", "qemu/mps2-an386", "--input",
                 str(tmp_path / "x.npy"), "--random", "0", "--report", str(report)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("FAIL") and "1 of 3 values differ (first in invocation 1" in out
    assert json.loads(report.read_text())["passed"] is False


@pytest.mark.slow
def test_verify_on_a_board_the_model_does_not_fit(tmp_path, capsys):
    assert main(["verify", str(MODELS_DIR / "mlperf_ic_resnet8.tflite"), "--board",
                 "qemu/sifive-e", "--report", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err
    assert "needs 32768 bytes of RAM" in err and "Traceback" not in err


def test_verify_refuses_wrong_inputs_before_compiling(tmp_path, monkeypatch, capsys):
    import aot.firmware.device as device

    calls = []
    monkeypatch.setattr(verify, "compile_model", lambda *a, **k: calls.append("compile"))
    monkeypatch.setattr(device, "build_project", lambda *a, **k: calls.append("build"))
    np.save(tmp_path / "x.npy", np.zeros((3, 2, 1), np.int8))
    report = tmp_path / "report.json"
    assert main(["verify", HELLO, "--board", "qemu/mps2-an386", "--input",
                 str(tmp_path / "x.npy"), "--report", str(report)]) == 2
    err = capsys.readouterr().err
    assert ("input 'serving_default_dense_input:0': expected an array of shape [N, 1, 1] of "
            "int8 (N invocations), got [3, 2, 1] of int8") in err
    # The Python API checks too (a caller need not go through the command).
    from aot.inputs import InputError
    with pytest.raises(InputError, match="float32 whose values do not convert exactly"):
        verify.verify_model(HELLO, "qemu/mps2-an386",
                            inputs=[np.full((1, 1, 1), 0.25, np.float32)])
    assert calls == [] and not report.exists()
