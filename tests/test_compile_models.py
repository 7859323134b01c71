"""Every shared model, compiled and run on the host, equals its oracle.

TFLite models run their sample inputs (when the shared folder has them)
and seeded random inputs as one sequence from a fresh state, on the host
build (``-std=c99 -Wall -Wextra -Werror``) and on TFLM; integer outputs
agree bit for bit, float outputs within 1e-5.  ONNX models: the float one
against onnxruntime, the QDQ one against the reference interpreter (which
the import tests hold within one output step of onnxruntime).  The slow
tests also build every model under AddressSanitizer/UndefinedBehaviorSanitizer
and for Cortex-M4 with warnings as errors.

Every model also runs through the LLVM backend (target ``llvm``: kernels
and the same entry function compiled by MCJIT) and equals the C path bit for
bit, floats included, with no C compiler on PATH; the stateful kernels (SVDF,
LSTM, variables) are loop IR calling their header's helper like the others.
"""

from __future__ import annotations

import functools
import shutil
import subprocess

import numpy as np
import pytest
from support.models import MODELS, MODELS_DIR, model_sequence, random_inputs

from aot.commands.run import run_on_host
from aot.compile import compile_model
from aot.frontend import load_model
from aot.kernels import COMPUTES, HANDWRITTEN
from aot.passes import optimize
from aot.reference.interpreter import Session

FAST = {"tflm_hello_world_int8", "tflm_micro_speech"}


@functools.lru_cache(maxsize=None)
def _missing_kernels(path) -> list[str]:
    annotated = optimize(load_model(path))
    have = set(COMPUTES) | set(HANDWRITTEN)
    return sorted({n.op for g in annotated.annotations.groups if g.kind != "view"
                   for n in g.nodes} - have)


def _params(entries):
    params = []
    for entry in entries:
        marks = [] if entry["name"] in FAST else [pytest.mark.slow]
        missing = _missing_kernels(MODELS_DIR / entry["file"])
        if missing:
            marks.append(pytest.mark.xfail(strict=True, reason="not supported yet: no kernel "
                                           f"for {', '.join(missing)}"))
        params.append(pytest.param(entry, marks=marks, id=entry["name"]))
    return params


@functools.lru_cache(maxsize=None)
def _handwritten(path) -> list[str]:
    annotated = optimize(load_model(path))
    return sorted({n.op for g in annotated.annotations.groups if g.kind != "view"
                   for n in g.nodes} & set(HANDWRITTEN))


TFLITE = [m for m in MODELS if m["file"].endswith(".tflite")]
ONNX = [m for m in MODELS if m["file"].endswith(".onnx")]


def _stack(graph, sequence) -> list[np.ndarray]:
    return [np.stack([inv[k] for inv in sequence]) for k in range(len(graph.inputs))]


def assert_outputs_equal(got, want_per_invocation):
    for step, want in enumerate(want_per_invocation):
        for k, w in enumerate(want):
            g = got[k][step]
            assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.shape)
            if g.dtype == np.float32:
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5 * max(np.abs(w).max(), 1),
                                           err_msg=f"invocation {step}, output {k}")
            else:
                bad = np.flatnonzero(g != w)
                assert bad.size == 0, (
                    f"invocation {step}, output {k}: {bad.size} values differ, first at "
                    f"{bad[0]}: ours {g.flat[bad[0]]}, oracle {w.flat[bad[0]]}")


@pytest.mark.parametrize("entry", _params(TFLITE))
@pytest.mark.one_fast
def test_tflite_model_on_host_equals_tflm(entry, tflm, tmp_path):  # noqa: F811
    path = MODELS_DIR / entry["file"]
    compiled = compile_model(path, "host/native", name="model", measure_code=False)
    sequence = model_sequence(entry, compiled.graph)
    got = run_on_host(compiled, _stack(compiled.graph, sequence), workdir=tmp_path)
    assert_outputs_equal(got, tflm.run(path.read_bytes(), sequence))


@pytest.mark.slow
@pytest.mark.parametrize("entry", _params(ONNX))
def test_onnx_model_on_host_equals_its_oracle(entry, tmp_path):
    path = MODELS_DIR / entry["file"]
    compiled = compile_model(path, "host/native", name="model", measure_code=False)
    sequence = model_sequence(entry, compiled.graph)
    got = run_on_host(compiled, _stack(compiled.graph, sequence), workdir=tmp_path)
    if "qdq" in entry["name"]:
        session = Session(compiled.graph)
        want = [session.invoke(inv) for inv in sequence]
    else:
        from support.onnx_oracle import ort_session

        session = ort_session(path)
        name = session.get_inputs()[0].name
        want = [session.run(None, {name: inv[0]}) for inv in sequence]
    assert_outputs_equal(got, want)


@pytest.mark.slow
@pytest.mark.parametrize("entry", _params(TFLITE + ONNX))
def test_model_is_clean_under_sanitizers(entry, tmp_path):
    path = MODELS_DIR / entry["file"]
    compiled = compile_model(path, "host/native", name="model", measure_code=False)
    sequence = random_inputs(compiled.graph, seed=1, count=2)
    got = run_on_host(compiled, _stack(compiled.graph, sequence), sanitize=True,
                      workdir=tmp_path)
    assert all(np.isfinite(y).all() for y in got if y.dtype == np.float32)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None, reason="no arm-none-eabi-gcc")
@pytest.mark.parametrize("entry", _params(TFLITE + ONNX))
def test_model_compiles_warning_free_for_cortex_m4(entry, tmp_path):
    compiled = compile_model(MODELS_DIR / entry["file"], "qemu/mps2-an386", name="model",
                             measure_code=False)
    art = compiled.write(tmp_path / "art")
    cmd = ["arm-none-eabi-gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-O2",
           "-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16",
           f"-I{art / 'include'}", f"-I{art / 'runtime' / 'include'}", "-c",
           *map(str, (art / "codegen").glob("*.c"))]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


HAND_WRITTEN = [m for m in MODELS if _handwritten(MODELS_DIR / m["file"])]


@pytest.mark.parametrize("entry", _params(MODELS))
@pytest.mark.one_fast
def test_model_through_the_llvm_jit_equals_the_c_path(entry, tmp_path, monkeypatch):
    """The JIT runs every shared model bit for bit as the C path, with no C
    compiler on PATH (the support headers' helpers are shipped bitcode)."""
    path = MODELS_DIR / entry["file"]
    c_model = compile_model(path, "host/native", name="model", measure_code=False)
    inputs = _stack(c_model.graph, model_sequence(entry, c_model.graph))
    want = run_on_host(c_model, inputs, workdir=tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    llvm_model = compile_model(path, "llvm", name="model", measure_code=False)
    got = run_on_host(llvm_model, inputs)
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype and g.shape == w.shape
        bad = np.flatnonzero(g.view(np.uint8) != w.view(np.uint8))
        assert bad.size == 0, f"output {k}: {bad.size} bytes differ from the C path"


@pytest.mark.parametrize("entry", [pytest.param(m, id=m["name"]) for m in HAND_WRITTEN])
def test_stateful_kernels_are_loop_ir_for_the_jit(entry):
    """SVDF, LSTM and the variables' kernels are one call of their header's
    helper in loop IR, compiled by LLVM like every other kernel."""
    path = MODELS_DIR / entry["file"]
    compiled = compile_model(path, "llvm", name="model", measure_code=False)
    ops = set(_handwritten(path))
    stateful = [k for k in compiled.kernels if set(k.op_names) & ops]
    assert stateful and all(k.func is not None for k in stateful)
    assert all(k.name in compiled.llvm.units for k in stateful)
