"""``--fill`` (inputs generated when ``--input`` is not given), outputs printed
when ``--output`` is not given, and ``--output`` writing exactly its path."""

from __future__ import annotations

import json

import numpy as np
import pytest
from support.models import MODELS_DIR

from aot.cli import main
from aot.commands.model_io import fill_inputs, format_outputs, interpret, top_k
from aot.frontend import load_model

HELLO = str(MODELS_DIR / "tflm_hello_world_int8.tflite")
KWS = str(MODELS_DIR / "mlperf_kws_dscnn.tflite")
WAND = str(MODELS_DIR / "tflm_magic_wand_float.tflite")
SPEECH = str(MODELS_DIR / "tflm_micro_speech.tflite")


@pytest.fixture
def x(tmp_path):
    path = tmp_path / "x.npy"
    np.save(path, np.array([[[1]], [[50]]], np.int8))
    return path


@pytest.mark.parametrize("command", ["interpret", "run"])
@pytest.mark.parametrize("name,message", [
    ("yy", "--output {}: name a .npy file (a model with one output) or a .npz file"),
    ("out.txt", "--output {}: name a .npy file"),
    ("folder", "--output {} is a folder: name the file to write, e.g. {}/outputs.npy"),
    ("no-such/y.npy", "--output {}: the folder no-such does not exist"),
])
def test_output_must_name_a_npy_or_npz_file(command, name, message, x, tmp_path, monkeypatch,
                                            capsys):
    """Issue 33: ``--output yy`` wrote yy.npy while saying "written to yy";
    ``--output DIR`` wrote beside the folder."""
    import aot.commands.run as run

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(run, "run_on_host", lambda *a, **k: pytest.fail("ran the model"))
    (tmp_path / "folder").mkdir()
    before = set(tmp_path.rglob("*"))
    assert main([command, HELLO, "--input", str(x), "--output", name]) == 2
    assert message.format(name, name) in capsys.readouterr().err
    assert set(tmp_path.rglob("*")) == before


@pytest.mark.parametrize("name", ["y.npy", "y.npz"])
def test_output_writes_exactly_the_path_named(name, x, tmp_path, capsys):
    out = tmp_path / name
    assert main(["interpret", HELLO, "--input", str(x), "--output", str(out)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["x.npy", name])
    assert f"outputs written to {out}" in capsys.readouterr().out
    y = np.load(out)
    got = y if name.endswith(".npy") else y["output_0"]
    assert got.shape == (2, 1, 1)


def test_fill_modes_make_one_invocation_of_the_inputs_dtype_and_shape():
    graph = load_model(KWS)
    t = graph.inputs[0]
    for fill, value in (("zeros", 0), ("ones", 1)):
        (a,) = fill_inputs(graph, KWS, fill)
        assert a.shape == (1, *t.shape) and a.dtype == t.type.np_dtype and (a == value).all()
    (r0,), (r1,) = fill_inputs(graph, KWS, "random", 0), fill_inputs(graph, KWS, "random", 1)
    assert r0.shape == (1, *t.shape) and not np.array_equal(r0, r1)
    np.testing.assert_array_equal(fill_inputs(graph, KWS, "random", 0)[0], r0)
    (s,) = fill_inputs(graph, KWS, "sample")
    np.testing.assert_array_equal(s, np.load(MODELS_DIR / "samples" / "mlperf_kws_dscnn.npy"))


def test_fill_sample_without_a_sample_file_says_where_it_looked(capsys):
    assert main(["interpret", WAND, "--fill", "sample"]) == 2
    err = capsys.readouterr().err
    assert "--fill sample:" in err and "samples/tflm_magic_wand_float.npy" in err


def test_input_and_fill_exclude_each_other(x, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["run", HELLO, "--input", str(x), "--fill", "zeros"])
    assert exit_.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_top_k_of_a_classifier_best_first_with_real_values():
    graph = load_model(KWS)
    inputs = fill_inputs(graph, KWS, "sample")
    outputs = interpret(graph, inputs)
    (best,) = top_k(graph, outputs)
    y = outputs[0].reshape(-1)
    assert [c["class"] for c in best] == list(np.argsort(-y.astype(int), kind="stable")[:5])
    assert best[0]["class"] == 5 and best[0]["value"] == int(y.max())
    q = graph.outputs[0].quant
    assert best[0]["real"] == pytest.approx(q.scale[0] * (int(y.max()) - q.zero_point[0]))
    text = format_outputs(graph, outputs)
    assert "top 5 classes (class: value = real value)" in text
    assert text.splitlines()[1].startswith(f"    invocation 0: 5: {int(y.max())} = ")
    assert top_k(load_model(HELLO), [np.zeros((1, 1, 1), np.int8)]) is None   # a regressor


@pytest.mark.slow
def test_run_without_input_or_output_prints_the_top_classes(capsys):
    """``aot run MODEL``: inputs generated (--fill random by default), outputs printed."""
    graph = load_model(SPEECH)
    want = interpret(graph, fill_inputs(graph, SPEECH, "sample"))   # "yes", then "no"
    assert main(["run", SPEECH, "--fill", "sample"]) == 0
    out = capsys.readouterr().out
    assert "2 invocations of tflm_micro_speech on host/native (--fill sample); outputs:" in out
    assert format_outputs(graph, want) in out
    assert "invocation 0: 2: " in out and "invocation 1: 3: " in out
    assert main(["run", SPEECH, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    want = interpret(graph, fill_inputs(graph, SPEECH, "random", 0))
    assert data["inputs"] == "--fill random, seed 0" and data["output"] is None
    assert data["outputs"][0]["values"] == want[0].tolist()
    assert data["top_k"] == top_k(graph, want) and data["top_class"] == [int(want[0].argmax())]


def test_json_values_hold_null_for_nan(tmp_path, capsys):
    x = np.zeros((1, 1, 128, 3, 1), np.float32)
    x[0, 0, 0, 0, 0] = np.nan
    np.save(tmp_path / "nan.npy", x)
    assert main(["interpret", WAND, "--input", str(tmp_path / "nan.npy"), "--allow-nonfinite",
                 "--json"]) == 0
    out = capsys.readouterr().out
    data = json.loads(out, parse_constant=lambda c: pytest.fail(f"{c} is not JSON"))
    assert data["outputs"][0]["values"] == [[[None] * 4]]
