"""Model groups (compile_group, group_models, `aot compile A B`): several models
in one artifact sharing one workspace, each kept apart under its own prefix."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest
from support.group import group_main, split_outputs, two_models
from support.models import MODELS_DIR, random_inputs

from aot.cli import main
from aot.compile import CompileError, compile_group, compile_model, group_models
from aot.executor.codegen import CodegenError
from aot.export.host import build_program
from aot.firmware.project import ProjectError, create_project
from aot.frontend import load_model
from aot.reference import interpreter

KWS = MODELS_DIR / "mlperf_kws_dscnn.tflite"
SPEECH = MODELS_DIR / "tflm_micro_speech.tflite"
RESNET = MODELS_DIR / "mlperf_ic_resnet8.tflite"
SCRAMBLED = MODELS_DIR / "tflm_keyword_scrambled_int16.tflite"
HELLO = MODELS_DIR / "tflm_hello_world_int8.tflite"


def run_sequence(tmp_path, group, order, seed=0):
    """Build the group on the host with a main running ``order`` (model names)
    one after another; each run's outputs and the reference's (one session per
    model, so state carries over from a model's earlier runs)."""
    artifact = group.write(tmp_path / "artifact")
    meta = {m["name"]: m for m in json.loads((artifact / "metadata.json").read_text())["models"]}
    graphs = {m.name: load_model(m.source) for m in group.models}
    sequence = [(meta[n], random_inputs(graphs[n], seed + k, 1)[0]) for k, n in enumerate(order)]
    program = build_program(artifact, group.name,
                            group_main(group.name, sequence, firmware=False),
                            tmp_path / "group", sanitize=True)
    done = subprocess.run([str(program)], capture_output=True, timeout=600)
    assert done.returncode == 0, done.stderr.decode()
    got = split_outputs(done.stdout, sequence)
    # One reference session per model: a model's state lives on across the others' runs.
    sessions = {n: interpreter.Session(g) for n, g in graphs.items()}
    want = [sessions[n].invoke(xs) for n, (_, xs) in zip(order, sequence)]
    return got, want


@pytest.mark.slow
def test_group_runs_each_model_in_turn_on_one_workspace_bit_exact(tmp_path):
    group = compile_group([KWS, SPEECH, RESNET], "host/native",
                          names=["kws", "speech", "resnet"], name="trio")
    assert [m.name for m in group.models] == ["kws", "speech", "resnet"]
    assert group.sizes.workspace == max(m.sizes.workspace for m in group.models)
    assert group.sizes.constants == sum(m.sizes.constants for m in group.models)
    # Each model overwrites what the one before left in the shared workspace.
    got, want = run_sequence(tmp_path, group, ["kws", "speech", "kws", "resnet", "speech"])
    for g, w in zip(got, want, strict=True):
        for a, b in zip(g, w, strict=True):
            np.testing.assert_array_equal(a, b.reshape(a.shape))


@pytest.mark.slow
def test_group_keeps_each_models_state_across_the_others_runs(tmp_path):
    group = compile_group([SCRAMBLED, HELLO], "host/native", names=["ks", "hello"])
    assert group.sizes.state == group.models[0].sizes.state > 0
    got, want = run_sequence(tmp_path, group, ["ks", "hello", "ks", "hello", "ks"])
    for g, w in zip(got, want, strict=True):
        for a, b in zip(g, w, strict=True):
            np.testing.assert_array_equal(a, b.reshape(a.shape))


@pytest.mark.slow
def test_group_artifact_has_every_model_and_one_shared_workspace(tmp_path):
    conv, dense = two_models(tmp_path)
    group = compile_group([conv, dense], "qemu/mps2-an386", name="pair")
    path = group.write(tmp_path / "out")
    meta = json.loads((path / "metadata.json").read_text())
    shared = meta["group"]["workspace"]
    sizes = [m.sizes.workspace for m in group.models]
    assert meta["group"]["models"] == ["conv", "dense"]
    assert shared["bytes"] == max(sizes) and shared["separate_bytes"] == sum(sizes)
    assert shared["symbol"] == "pair_workspace" and shared["alignment"] == 4
    assert [m["name"] for m in meta["models"]] == ["conv", "dense"]
    assert all(m["entry"]["rpc_descriptor"] is None for m in meta["models"])
    assert meta["board"] == "qemu/mps2-an386" and meta["sizes"]["workspace"] == max(sizes)
    header = (path / "include" / "pair.h").read_text()
    assert f"#define PAIR_WORKSPACE_BYTES {max(sizes)}u" in header
    assert '#include "conv.h"' in header and '#include "dense.h"' in header
    # One workspace array, in the group's file; the models' entries use it.
    assert "uint8_t pair_workspace[" in (path / "codegen" / "pair.c").read_text()
    for m in ("conv", "dense"):
        text = (path / "codegen" / f"{m}.c").read_text()
        assert "extern uint8_t pair_workspace[];" in text
        assert f"static uint8_t {m}_workspace[" not in text
    # No RPC descriptor: every model's would define aot_rpc_model.
    assert not list((path / "codegen").glob("*_rpc.c"))
    assert "codegen/pair.c" in meta["build"]["sources"]
    assert "PAIR_SRCS" in (path / "pair.mk").read_text()


def test_group_refuses_clashing_names(tmp_path):
    conv, _ = two_models(tmp_path)
    with pytest.raises(CompileError, match=r"the name 'conv' of .*conv.tflite clashes with "
                                           r"the model 'conv'"):
        compile_group([conv, conv], "host/native")
    with pytest.raises(CompileError, match="clashes with the group's name 'conv'"):
        compile_group([conv, conv], "host/native", names=["Conv", "b"], name="conv")
    with pytest.raises(CodegenError, match="not a usable C identifier"):
        compile_group([conv, conv], "host/native", names=["a", "2b"])
    with pytest.raises(CompileError, match="1 names for 2 models"):
        compile_group([conv, conv], "host/native", names=["a"])


def test_group_refuses_models_for_different_boards(tmp_path):
    conv, dense = two_models(tmp_path)
    a = compile_model(conv, "qemu/mps2-an386", name="a", measure_code=False)
    b = compile_model(dense, "host/native", name="b", measure_code=False)
    with pytest.raises(CompileError, match=r"disagree on the target: a was compiled for the "
                                           r"board qemu/mps2-an386, b for the board host/native"):
        group_models([a, b], "g")
    with pytest.raises(CompileError, match="two or more models, got 1"):
        group_models([a], "g")


def test_project_refuses_a_group_artifact(tmp_path):
    conv, dense = two_models(tmp_path)
    path = compile_group([conv, dense], "qemu/mps2-an386", name="pair",
                         measure_code=False).write(tmp_path / "out")
    with pytest.raises(ProjectError, match="not supported yet: RPC firmware for the model "
                                           "group pair"):
        create_project(path, "qemu/mps2-an386", tmp_path / "project")


def _aot(capsys, *args):
    status = main([str(a) for a in args])
    out = capsys.readouterr()
    return status, out.out, out.err


def test_cli_compiles_a_group_and_refuses_it_where_unsupported(tmp_path, capsys):
    conv, dense = two_models(tmp_path)
    status, out, err = _aot(capsys, "compile", conv, dense, "--board", "qemu/mps2-an386",
                            "--name", "pair", "--model-name", "net", "--model-name", "fc",
                            "-o", tmp_path / "out", "--memory-report")
    assert status == 0, err
    assert "compiled 2 models for qemu/mps2-an386" in out
    assert "shared workspace" in out
    meta = json.loads((tmp_path / "out" / "metadata.json").read_text())
    assert meta["group"]["models"] == ["net", "fc"]
    assert (tmp_path / "out" / "memory_net.svg").is_file()
    status, out, err = _aot(capsys, "compile", conv, dense, "--board", "qemu/mps2-an386",
                            "--model-name", "x", "-o", tmp_path / "bad")
    assert status == 2 and "1 --model-name for 2 models" in err
    status, out, err = _aot(capsys, "compile", conv, dense, "--board", "qemu/mps2-an386",
                            "--project", "esp-idf", "-o", tmp_path / "bad")
    assert status == 2 and "not supported yet: --project with several" in err
    status, out, err = _aot(capsys, "run", conv, dense, "--board", "host/native",
                            "--input", "x.npy", "--output", "y.npy")
    assert status == 2 and "not supported yet: aot run of a model group" in err


def test_group_refuses_models_whose_files_clash(tmp_path):
    conv, dense = two_models(tmp_path)
    # a's first kernel file is codegen/a_kernels_0.c, b's entry file too.
    with pytest.raises(CompileError, match=r"the models 'a' and 'a_kernels_0' of group "
                                           r"'models' both generate codegen/a_kernels_0.c"):
        compile_group([conv, dense], "host/native", names=["a", "a_kernels_0"],
                      measure_code=False)
