"""``aot run``: compile, build and run on the host, with ``aot interpret``'s file conventions."""

from __future__ import annotations

import json

import numpy as np
import pytest
from support.models import MODELS_DIR

from aot.cli import main
from aot.commands.model_io import interpret
from aot.errors import AotError
from aot.frontend import load_model

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


def test_real_board_without_a_serial_port_is_a_user_error(tmp_path, capsys, monkeypatch,
                                                          no_build):
    monkeypatch.setattr("flash.serial_port.list_ports.comports", lambda: [])  # none attached
    np.save(tmp_path / "x.npy", np.zeros((1, 1, 1), np.int8))
    argv = ["run", HELLO, "--input", str(tmp_path / "x.npy"), "--output",
            str(tmp_path / "y.npy")]
    assert main([*argv, "--board", "raspberrypi/pico"]) == 2
    err = capsys.readouterr().err
    assert "no serial port has the board's USB id (2e8a:000c)" in err
    assert "no serial port is present; or pass the port with --port" in err
    assert not (tmp_path / "y.npy").exists()
    assert no_build == []  # said before the build, not after it


def test_bad_input_shape_is_a_user_error(tmp_path, capsys):
    np.save(tmp_path / "x.npy", np.zeros((1, 2), np.int8))
    assert main(["run", HELLO, "--input", str(tmp_path / "x.npy"),
                 "--output", str(tmp_path / "y.npy")]) == 2
    assert "expected an array of shape [N, 1, 1]" in capsys.readouterr().err


class _Built(AotError):
    """Raised by the stand-ins of the build and flash steps (they must not be reached)."""


@pytest.fixture
def no_build(monkeypatch):
    """Replaces building (firmware and host) and flashing; lists the calls."""
    import aot.export.host as host
    import aot.firmware.device as device

    calls = []

    def record(what):
        def called(*args, **kwargs):
            calls.append(what)
            raise _Built(f"{what} was called")
        return called
    monkeypatch.setattr(device, "build_project", record("build_project"))
    monkeypatch.setattr(device, "runner_for_board", record("runner_for_board"))
    monkeypatch.setattr(host, "build_program", record("build_program"))
    return calls


@pytest.mark.parametrize("board", ["host/native", "qemu/mps2-an386", "st/nucleo-f746zg",
                                   "raspberrypi/pico", "espressif/esp32c3-devkitm"])
@pytest.mark.parametrize("x, given", [
    (np.zeros((2, 1, 2), np.int8), "got [2, 1, 2] of int8"),       # right rank, wrong shape
    (np.full((2, 1, 1), 0.5, np.float32), "got [2, 1, 1] of float32"),  # not int8 values
    (np.full((2, 1, 1), 200, np.int32), "got [2, 1, 1] of int32"),      # out of int8's range
], ids=["shape", "fraction", "range"])
def test_wrong_inputs_are_refused_before_anything_is_built(tmp_path, capsys, no_build, board,
                                                           x, given):
    np.save(tmp_path / "x.npy", x)
    # Real boards: refused before the build and the flash, serial port given or not.
    assert main(["run", HELLO, "--board", board, "--input", str(tmp_path / "x.npy"),
                 "--output", str(tmp_path / "y.npy"), "--port", "/dev/ttyACM0"]) == 2
    err = capsys.readouterr().err
    assert "input 'serving_default_dense_input:0'" in err
    assert "expected an array of shape [N, 1, 1] of int8" in err and given in err
    assert str(tmp_path / "x.npy") in err and "Traceback" not in err
    assert no_build == []
    assert not (tmp_path / "y.npy").exists()


def test_inputs_of_another_integer_dtype_that_convert_exactly_run(tmp_path):
    x = np.arange(-128, 128, 64, dtype=np.int64).reshape(4, 1, 1)
    np.save(tmp_path / "x.npy", x)
    assert main(["run", HELLO, "--input", str(tmp_path / "x.npy"),
                 "--output", str(tmp_path / "y.npy")]) == 0
    want = interpret(load_model(HELLO), [x.astype(np.int8)])[0]
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), want)


def test_python_apis_refuse_wrong_inputs_before_building(no_build):
    from aot.commands.run import run_on_host
    from aot.compile import compile_model
    from aot.firmware import run_on_board
    from aot.inputs import InputError

    bad = [np.zeros((3, 2), np.int8)]   # the N axis missing
    for board, run in (("host/native", run_on_host), ("qemu/mps2-an386", run_on_board)):
        compiled = compile_model(HELLO, board, measure_code=False)
        with pytest.raises(InputError, match=r"expected an array of shape \[N, 1, 1\] of "
                                             r"int8 \(N invocations\), got \[3, 2\] of int8"):
            run(compiled, bad)
    assert no_build == []


def _kws_records(path, board):
    """An ``aot tune`` log with one faster config for the dense workload of KWS on ``board``."""
    from aot.target import load_board
    from aot.tune import records as rec
    from aot.tune.workload import extract_workloads

    target = load_board(board).target
    _, workloads = extract_workloads(MODELS_DIR / "mlperf_kws_dscnn.tflite", target)
    dense = workloads[-1]
    config = {**dense.default, "unroll_u": 4}
    rec.append(path, [rec.Record(dense.key, dense.description, str(target), board, config,
                                 "ok", 1, "instructions")])
    return path


@pytest.mark.slow
def test_run_ignores_records_of_another_target(tmp_path, capsys):
    log = _kws_records(tmp_path / "kws.jsonl", "qemu/mps2-an386")
    np.save(tmp_path / "x.npy", np.zeros((1, 1, 1), np.int8))
    assert main(["run", HELLO, "--input", str(tmp_path / "x.npy"),
                 "--output", str(tmp_path / "y.npy"), "--tuning-records", str(log)]) == 0
    err = capsys.readouterr().err
    assert "ignoring 1 tuning records made for another target" in err
    assert "tuning records applied to 0 of 0 tunable kernels" in err


@pytest.mark.slow
def test_run_with_records_on_qemu_stays_bit_exact(tmp_path, capsys):
    board = "qemu/mps2-an386"
    model = str(MODELS_DIR / "mlperf_kws_dscnn.tflite")
    log = _kws_records(tmp_path / "kws.jsonl", board)
    sample = str(MODELS_DIR / "samples" / "mlperf_kws_dscnn.npy")
    assert main(["run", model, "--board", board, "--input", sample, "--output",
                 str(tmp_path / "y.npy"), "--tuning-records", str(log)]) == 0
    assert "tuning records applied to 1 of 10 tunable kernels" in capsys.readouterr().err
    assert main(["interpret", model, "--input", sample,
                 "--output", str(tmp_path / "want.npy")]) == 0
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), np.load(tmp_path / "want.npy"))


def test_run_with_the_llvm_target_uses_the_jit_and_equals_the_c_build(tmp_path, capsys):
    x = np.arange(-128, 128, 8, dtype=np.int8).reshape(32, 1, 1)
    np.save(tmp_path / "x.npy", x)
    assert main(["run", HELLO, "--target", "llvm", "--input", str(tmp_path / "x.npy"),
                 "--output", str(tmp_path / "y.npy")]) == 0
    assert "on this machine (llvm -keys=cpu, LLVM JIT)" in capsys.readouterr().out
    assert main(["run", HELLO, "--board", "host/native", "--input", str(tmp_path / "x.npy"),
                 "--output", str(tmp_path / "want.npy")]) == 0
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), np.load(tmp_path / "want.npy"))


@pytest.mark.slow
def test_run_with_the_llvm_target_needs_no_c_compiler(tmp_path, capsys, monkeypatch):
    model = str(MODELS_DIR / "tflm_mnist_lstm_int8.tflite")
    x = np.random.default_rng(0).integers(-128, 128, (2, 1, 28, 28), dtype=np.int8)
    np.save(tmp_path / "x.npy", x)
    empty = tmp_path / "empty"
    empty.mkdir()
    with monkeypatch.context() as m:
        m.setenv("PATH", str(empty))
        assert main(["run", model, "--target", "llvm", "--input", str(tmp_path / "x.npy"),
                     "--output", str(tmp_path / "y.npy")]) == 0
    err = capsys.readouterr().err
    assert "C compiler" not in err
    assert main(["run", model, "--board", "host/native", "--input", str(tmp_path / "x.npy"),
                 "--output", str(tmp_path / "want.npy")]) == 0
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), np.load(tmp_path / "want.npy"))


@pytest.mark.parametrize("extra, message", [
    (["--target", "c"], "aot run takes a board, or the target 'llvm'"),
    (["--target", "llvm", "--sanitize"], "--sanitize builds the C with gcc's sanitizers"),
    (["--target", "llvm -mcpu=cortex-m4"], "running on a device needs a board"),
    (["--codegen", "llvm"], "--codegen llvm makes objects for a microcontroller board; on this "
                            "machine the llvm codegen runs through its JIT: use --target llvm"),
])
def test_run_refuses_what_it_cannot_do_in_one_line(extra, message, tmp_path, capsys):
    np.save(tmp_path / "x.npy", np.zeros((1, 1, 1), np.int8))
    assert main(["run", HELLO, "--input", str(tmp_path / "x.npy"), "--output",
                 str(tmp_path / "y.npy"), *extra]) == 2
    assert message in capsys.readouterr().err
