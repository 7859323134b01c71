"""NaN and Inf inputs are refused before a run (``--allow-nonfinite`` passes
them), and ``aot verify`` fails on any non-finite difference."""

from __future__ import annotations

import json

import numpy as np
import pytest
from support.models import MODELS_DIR

import aot.firmware.verify as verify
from aot.cli import main
from aot.frontend import load_model
from aot.inputs import InputError, check_finite

WAND = str(MODELS_DIR / "tflm_magic_wand_float.tflite")
WAND_INPUT = "conv2d_input"


@pytest.fixture
def wand_nan(tmp_path):
    x = np.zeros((2, 1, 128, 3, 1), np.float32)
    x[1, 0, 5, 1, 0] = np.nan
    x[1, 0, 7, 2, 0] = np.inf
    path = tmp_path / "wand_nan.npy"
    np.save(path, x)
    return path


def test_check_finite_names_the_input_the_count_and_the_first_index():
    graph = load_model(WAND)
    x = np.zeros((2, 1, 128, 3, 1), np.float32)
    check_finite(graph, [x])   # all finite: nothing to say
    x[1, 0, 5, 1, 0], x[1, 0, 7, 2, 0], x[1, 0, 9, 0, 0] = np.nan, np.inf, -np.inf
    with pytest.raises(InputError) as info:
        check_finite(graph, [x], source="w.npy", hint="do this")
    assert str(info.value).startswith(
        f"w.npy: input '{WAND_INPUT}' holds 3 non-finite values (1 NaN, 2 Inf), the first at "
        "index [1, 0, 5, 1, 0]")
    assert str(info.value).endswith("; do this")


def test_integer_inputs_are_not_checked():
    graph = load_model(MODELS_DIR / "tflm_hello_world_int8.tflite")
    check_finite(graph, [np.zeros((1, 1, 1), np.int8)])


@pytest.mark.parametrize("command", ["interpret", "run", "verify", "profile"])
def test_every_command_refuses_nonfinite_inputs_before_running(command, wand_nan, tmp_path,
                                                               monkeypatch, capsys):
    import aot.commands.run as run
    import aot.cycles.profile as profile

    def no_run(*args, **kwargs):
        raise AssertionError("ran the model")

    for module, name in ((verify, "compile_model"), (verify, "run_on_board"),
                         (run, "run_on_host"), (profile, "compile_model")):
        monkeypatch.setattr(module, name, no_run)
    argv = {"interpret": ["--output", str(tmp_path / "y.npy")],
            "run": ["--output", str(tmp_path / "y.npy")],
            "verify": ["--board", "qemu/mps2-an386", "--report", str(tmp_path / "r.json")],
            "profile": ["--board", "qemu/mps2-an386"]}[command]
    assert main([command, WAND, "--input", str(wand_nan), *argv]) == 2
    err = capsys.readouterr().err
    assert (f"{wand_nan}: input '{WAND_INPUT}' holds 2 non-finite values (1 NaN, 1 Inf), the "
            "first at index [1, 0, 5, 1, 0]") in err
    assert "--allow-nonfinite runs them anyway" in err
    assert not (tmp_path / "y.npy").exists()


def test_interpret_with_allow_nonfinite_runs_them(wand_nan, tmp_path, capsys):
    out = tmp_path / "y.npy"
    assert main(["interpret", WAND, "--input", str(wand_nan), "--output", str(out),
                 "--allow-nonfinite"]) == 0
    y = np.load(out)
    assert np.isfinite(y[0]).all() and np.isnan(y[1]).all()   # the reference: NaN


def _compare(got, want):
    graph = load_model(WAND)
    return verify.compare(graph, [np.array(got, np.float32).reshape(-1, 1, 4)],
                          [np.array(want, np.float32).reshape(-1, 1, 4)],
                          float_tolerance=1e-5)[0]


@pytest.mark.parametrize("got,want,mismatches", [
    ([0.036, 0.53, 0.072, 0.362], [np.nan] * 4, 4),   # issue 33: printed PASS, max |diff| inf
    ([np.nan, 0, 0, 1], [0, 0, 0, 1], 1),
    ([np.inf, 0, 0, 1], [1e30, 0, 0, 1], 1),
    ([np.inf, 0, 0, 1], [-np.inf, 0, 0, 1], 1),
    ([np.inf, np.nan, -np.inf, 1], [np.inf, np.nan, -np.inf, 1], 0),
    ([1 + 1e-6, 0, 0, 1], [1, 0, 0, 1], 0),
], ids=["number-vs-nan", "nan-vs-number", "inf-vs-number", "inf-vs-minus-inf",
        "same-nonfinite", "within-tolerance"])
def test_compare_fails_on_any_nonfinite_difference(got, want, mismatches):
    check = _compare(got, want)
    assert check.mismatches == mismatches
    assert check.passed == (mismatches == 0)
    data = check.to_json()
    json.loads(json.dumps(data), parse_constant=lambda c: pytest.fail(f"{c} is not JSON"))
    if mismatches and not np.isfinite(check.max_abs_diff):
        assert data["max_abs_diff"] is None


@pytest.mark.slow
def test_verify_fails_on_a_nan_input_it_was_allowed_to_run(wand_nan, tmp_path, monkeypatch,
                                                           capsys):
    """The issue's reproduction: PASS with "max |diff| inf", exit 0."""
    monkeypatch.setenv("AOT_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["verify", WAND, "--board", "host/native", "--input", str(wand_nan),
                 "--random", "0", "--allow-nonfinite", "--report", str(tmp_path / "r.json")]) == 1
    out = capsys.readouterr().out
    assert out.startswith("FAIL") and "first in invocation 1" in out
