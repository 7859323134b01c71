"""The ``aot`` command as a user meets it: help, exit codes, no tracebacks."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from support.models import MODELS_DIR

from aot.cli import EXIT_BROKEN_PIPE, EXIT_TERMINATED, main
from aot.commands import COMMANDS


def test_every_command_has_help(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for module in COMMANDS:
        assert module.NAME in out


@pytest.mark.parametrize("name", [m.NAME for m in COMMANDS])
def test_subcommand_help(name, capsys):
    with pytest.raises(SystemExit) as exc:
        main([name, "--help"])
    assert exc.value.code == 0
    assert "usage: aot " + name in capsys.readouterr().out


def test_command_names_are_unique():
    names = [m.NAME for m in COMMANDS]
    assert len(names) == len(set(names))


def test_unknown_command_is_a_usage_error():
    proc = subprocess.run(
        [sys.executable, "-m", "aot", "no-such-command"], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr


# --- what every command shares (aot/cli.py) -----------------------------------------------

ROOT = Path(__file__).resolve().parents[1]
HELLO = str(MODELS_DIR / "tflm_hello_world_int8.tflite")


def _aot(*argv, **kwargs) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), **kwargs.pop("env", {})}
    return subprocess.Popen([sys.executable, "-m", "aot", *argv], env=env, text=True,
                            stderr=subprocess.PIPE, **kwargs)


@pytest.mark.parametrize("argv", [["inspect", HELLO], ["boards"], ["--help"]],
                         ids=["inspect", "boards", "help"])
@pytest.mark.one_fast
def test_a_reader_that_goes_away_ends_the_command_quietly(argv):
    """``aot inspect M | head -2``: the pipe's reader is gone before aot writes."""
    read, write = os.pipe()
    os.close(read)
    proc = _aot(*argv, stdout=write)
    os.close(write)
    _, err = proc.communicate(timeout=60)
    assert "BrokenPipe" not in err and "internal error" not in err and err == ""
    assert proc.returncode in (EXIT_BROKEN_PIPE, 0)   # --help: argparse exits first


def test_an_internal_broken_pipe_is_still_a_bug(monkeypatch, capsys):
    """Only a closed stdout is quiet; a BrokenPipeError from elsewhere is reported."""
    import aot.commands.config as config

    def broken(args):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(config, "run", broken)
    assert main(["config"]) == 3
    assert "internal error: BrokenPipeError" in capsys.readouterr().err


@pytest.mark.parametrize("argv,status,message", [
    (["inspect", "no-such.tflite"], 2, "cannot read no-such.tflite"),
    (["inspect"], 2, "the following arguments are required: model"),
    (["boards", "show", "no/such-board"], 2, "no/such-board"),
    ([], 2, "no command given"),
], ids=["bad-input", "usage", "sub-action", "no-command"])
def test_with_json_a_failure_is_json_on_stdout(argv, status, message, capsys):
    for at in (0, len(argv)):    # `aot --json inspect M` and `aot inspect M --json`
        line = [*argv[:at], "--json", *argv[at:]]
        try:
            code = main(line)
        except SystemExit as exit_:   # usage errors exit, as argparse does
            code = exit_.code
        out, err = capsys.readouterr()
        assert code == status, line
        assert json.loads(out) == {"error": json.loads(out)["error"], "exit": status}
        assert message in json.loads(out)["error"] and err == ""


def test_with_json_an_internal_error_is_json_with_exit_3(monkeypatch, capsys):
    import aot.commands.config as config

    def bug(args):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(config, "run", bug)
    assert main(["config", "--json"]) == 3
    data = json.loads(capsys.readouterr().out)
    assert data["exit"] == 3
    assert data["error"].startswith("internal error: ZeroDivisionError: division by zero")


@pytest.mark.slow
def test_sigterm_removes_the_temporary_folders(tmp_path):
    """SIGTERM unwinds like Ctrl-C: the run's temporary folder goes, exit 143."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    x = tmp_path / "x.npy"
    np.save(x, np.zeros((200000, 1, 1), np.int8))   # long enough to be caught running
    proc = _aot("run", HELLO, "--input", str(x), "--output", str(tmp_path / "y.npy"),
                stdout=subprocess.PIPE,
                env={"TMPDIR": str(tmp), "AOT_CACHE_DIR": str(tmp_path / "cache")})
    deadline = time.monotonic() + 120
    while not list(tmp.glob("aot-run-*")) and proc.poll() is None:
        assert time.monotonic() < deadline, "the run never made its folder"
        time.sleep(0.01)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == EXIT_TERMINATED, err
    assert "aot run: terminated" in err and "Traceback" not in err
    assert list(tmp.iterdir()) == []


@pytest.mark.slow
def test_sigterm_during_a_board_run_removes_its_firmware_folder(tmp_path):
    """The issue's case: SIGTERM to `aot run --board qemu/...` left /tmp/aot-fw-* behind."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    x = tmp_path / "x.npy"
    np.save(x, np.zeros((5000, 1, 1), np.int8))
    proc = _aot("run", HELLO, "--board", "qemu/mps2-an386", "--input", str(x),
                stdout=subprocess.PIPE,
                env={"TMPDIR": str(tmp), "AOT_CACHE_DIR": str(tmp_path / "cache")})
    deadline = time.monotonic() + 300
    while not list(tmp.glob("aot-fw-*/**/firmware.elf")) and proc.poll() is None:
        assert time.monotonic() < deadline, "the run never built its firmware"
        time.sleep(0.02)
    time.sleep(0.5)   # into the flash and run
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == EXIT_TERMINATED, err
    assert "aot run: terminated" in err and "Traceback" not in err
    assert list(tmp.iterdir()) == []
