"""``aot run``: compile, build and run on the host, with ``aot interpret``'s file conventions."""

from __future__ import annotations

import json

import numpy as np
from support.models import MODELS_DIR

from aot.cli import main

HELLO = str(MODELS_DIR / "tflm_hello_world_int8.tflite")


def test_run_matches_interpret(tmp_path, capsys):
    x = np.arange(-128, 128, 8, dtype=np.int8).reshape(32, 1, 1)
    np.save(tmp_path / "x.npy", x)
    assert main(["run", HELLO, "--board", "host/native", "--input", str(tmp_path / "x.npy"),
                 "--output", str(tmp_path / "y.npy")]) == 0
    assert main(["interpret", HELLO, "--input", str(tmp_path / "x.npy"),
                 "--output", str(tmp_path / "want.npy")]) == 0
    got, want = np.load(tmp_path / "y.npy"), np.load(tmp_path / "want.npy")
    assert got.shape == (32, 1, 1) and got.dtype == np.int8
    np.testing.assert_array_equal(got, want)
    assert "32 invocations" in capsys.readouterr().out


def test_run_json_summary(tmp_path, capsys):
    np.save(tmp_path / "x.npy", np.zeros((2, 1, 1), np.int8))
    assert main(["run", HELLO, "--input", str(tmp_path / "x.npy"),
                 "--output", str(tmp_path / "y.npy"), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["invocations"] == 2 and summary["board"] == "host/native"
    assert summary["sizes"]["workspace"] > 0


def test_board_without_a_runtime_port_is_a_user_error(tmp_path, capsys):
    np.save(tmp_path / "x.npy", np.zeros((1, 1, 1), np.int8))
    argv = ["run", HELLO, "--input", str(tmp_path / "x.npy"), "--output",
            str(tmp_path / "y.npy")]
    assert main([*argv, "--board", "raspberrypi/pico"]) == 2
    err = capsys.readouterr().err
    assert "not supported yet: the C runtime has no port 'rp2040'" in err
    assert not (tmp_path / "y.npy").exists()


def test_bad_input_shape_is_a_user_error(tmp_path, capsys):
    np.save(tmp_path / "x.npy", np.zeros((1, 2), np.int8))
    assert main(["run", HELLO, "--input", str(tmp_path / "x.npy"),
                 "--output", str(tmp_path / "y.npy")]) == 2
    assert "expected an array of shape [N, 1, 1]" in capsys.readouterr().err
