"""The external codegen registry and contract: -libs, options, failing codegens."""

from __future__ import annotations

import numpy as np
import pytest
from support.models import MODELS_DIR

from aot.byoc import (CODEGENS, ExternalCode, ExternalCodegen, ExternalCodegenError, register,
                      unregister)
from aot.cli import main
from aot.commands.run import run_on_host
from aot.compile import compile_model, resolve_target
from aot.ir import GraphBuilder
from aot.passes import Pattern, PatternTable

HELLO = MODELS_DIR / "tflm_hello_world_int8.tflite"


def test_the_registry_lists_exactly_the_builtin_codegens():
    assert sorted(CODEGENS) == ["cmsis-nn"]


def _relu_graph():
    b = GraphBuilder("g")
    x = b.input("x", (1, 8), "float32")
    y = b.op("relu", [x], name="the_relu")
    return b.build([b.op("softmax", [y], name="soft")])


@pytest.fixture
def codegen():
    """Registers ``test-lib`` (float relu) with the given generate function."""
    made = []

    def make(generate, **kwargs):
        table = PatternTable("test-lib", (Pattern("relu", ("relu",)),))
        made.append(register(ExternalCodegen("test-lib", table, generate, **kwargs)))
        return made[-1]
    yield make
    unregister("test-lib")


def test_a_name_registered_twice_is_refused(codegen):
    cg = codegen(lambda f: None)
    with pytest.raises(ExternalCodegenError, match="registered twice"):
        register(cg)


def test_unknown_libs_are_refused_naming_the_registered_ones():
    with pytest.raises(ExternalCodegenError, match=r"no external codegen is called 'cmsisnn' "
                                                   r"\(did you mean 'cmsis-nn'\?\); registered: "
                                                   r"cmsis-nn"):
        compile_model(HELLO, "c -libs=cmsisnn")


def test_options_for_a_codegen_the_target_does_not_name_are_refused():
    with pytest.raises(ExternalCodegenError, match="does not name it: add -libs=cmsis-nn"):
        compile_model(HELLO, "c", codegen_options={"cmsis-nn": {"path": "/x"}})


def test_unknown_options_are_refused(codegen):
    codegen(lambda f: None)
    with pytest.raises(ExternalCodegenError, match="has no option 'speed'; its options: none"):
        compile_model(_relu_graph(), "c -libs=test-lib", codegen_options={"test-lib":
                                                                          {"speed": 1}})


def test_a_failing_codegen_is_named_with_the_layer_and_nothing_is_written(codegen, tmp_path,
                                                                          capsys):
    def boom(f):
        raise ValueError("cannot do that")
    codegen(boom)
    with pytest.raises(ExternalCodegenError, match=r"external codegen 'test-lib' on the layer "
                                                   r"relu 'the_relu' failed: ValueError: cannot "
                                                   r"do that"):
        compile_model(_relu_graph(), "c -libs=test-lib")


def test_c_that_does_not_define_the_function_is_refused(codegen):
    codegen(lambda f: ExternalCode("int32_t something_else(void) { return 0; }\n"))
    with pytest.raises(ExternalCodegenError, match=r"relu 'the_relu': its C does not define "
                                                   r"model_k0\(\)"):
        compile_model(_relu_graph(), "c -libs=test-lib")


def test_a_bad_constant_is_refused(codegen):
    def gen(f):
        return ExternalCode(f"{f.signature(False)} {{ return 0; }}\n",
                            constants={"bad name": np.zeros(3, np.int8)})
    codegen(gen)
    with pytest.raises(ExternalCodegenError, match="constant 'bad name'"):
        compile_model(_relu_graph(), "c -libs=test-lib")


def test_scratch_is_planned_in_the_workspace_and_passed_last(codegen, tmp_path):
    """A codegen asking for scratch gets a ``void *scratch`` argument and the
    workspace grows by at least that much; its constants count as model constants."""
    def gen(f):
        x, y = f.arg_names
        body = (f"{f.signature(True)} {{\n  float *tmp = (float *)scratch;\n"
                f"  for (int i = 0; i < 8; ++i) {{ tmp[i] = {x}[i] * model_k0_one[0]; }}\n"
                f"  for (int i = 0; i < 8; ++i) {{ {y}[i] = tmp[i] > 0.0f ? tmp[i] : 0.0f; }}\n"
                "  return 0;\n}\n")
        return ExternalCode(body, constants={"model_k0_one": np.ones(1, np.float32)},
                            scratch_bytes=4096)
    codegen(gen)
    board = resolve_target("host/native", refine="c -libs=test-lib")[0]
    with_lib = compile_model(_relu_graph(), board, measure_code=False)
    plain = compile_model(_relu_graph(), "host/native", measure_code=False)
    assert with_lib.sizes.workspace >= plain.sizes.workspace + 4096
    kernel = with_lib.kernels[0]
    assert kernel.codegen == "test-lib" and kernel.scratch_bytes == 4096
    assert "void *scratch" in kernel.prototype
    # the scratch: the workspace past the 64 bytes of planned buffers, passed last
    entry = with_lib.files["codegen/model.c"]
    assert "model_k0((const float *)(ws + 0), (float *)(ws + 32), (ws + 64));" in entry
    assert "4096 of kernel scratch at offset 64)" in entry
    assert with_lib.sizes.constants == plain.sizes.constants + 4
    assert [layer["by"] for layer in with_lib.layers()] == ["test-lib", "aot"]
    x = np.random.default_rng(0).standard_normal((2, 1, 8)).astype(np.float32)
    (got,) = run_on_host(with_lib, [x], workdir=tmp_path)
    (want,) = run_on_host(plain, [x], workdir=tmp_path)
    np.testing.assert_array_equal(got, want)


def test_the_cli_refuses_a_bad_cmsis_nn_path_in_one_line_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "art"
    assert main(["compile", str(HELLO), "--board", "qemu/mps2-an386", "--target",
                 "c -libs=cmsis-nn", "--cmsis-nn", str(tmp_path / "nowhere"), "-o",
                 str(out)]) == 2
    err = capsys.readouterr().err
    assert "cmsis-nn: the CMSIS-NN source tree" in err and "does not exist" in err
    assert err.count("\n") == 1 and not out.exists()
