"""The entry function's hand-over to core 1 (docs/targets.md "Several cores of one
board"): a model placed on two cores queues core 1's part of each parallel step as a
task, runs core 0's, and joins core 1 at the step's barrier; on one core the C has
none of it.  Under QEMU the an521 runs the four MLPerf models and the other shared
models on both cores, bit-exact with the reference, each core executing part of the
work (``aot run --json``'s per-core instructions)."""

from __future__ import annotations

import json
import re

import numpy as np

import pytest
from support.models import MODELS_DIR

from aot.cli import main
from aot.compile import CompileError, compile_model
from aot.ir import GraphBuilder, Quantization, TensorType

AN521 = "qemu/mps2-an521"
KWS = MODELS_DIR / "mlperf_kws_dscnn.tflite"
HELLO = MODELS_DIR / "tflm_hello_world_int8.tflite"


@pytest.fixture(scope="module")
def kws_on_two_cores():
    return compile_model(KWS, AN521, cores=2, measure_code=False)


@pytest.mark.slow
def test_each_split_layer_is_handed_over_and_joined(kws_on_two_cores):
    compiled = kws_on_two_cores
    c = compiled.files["codegen/model.c"]
    entry = c[c.index("static int32_t model_entry("):]
    entry = entry[:entry.index("\n}\n")]
    tasks = re.findall(r"static void (model_core1_step_\d+)\(const void \*arg\)", c)
    assert len(tasks) == 9  # KWS: 9 of its 13 layers split
    for task in tasks:
        submit = entry.index(f"aot_core_submit(1, {task}, ws)")
        assert entry.index("aot_core_join(1)", submit) > submit
    assert entry.count("aot_core_join(1)") == len(tasks)
    assert entry.count("aot_cores_start()") == 1
    assert '#include "aot/cores.h"' in c
    assert compiled.metadata()["build"]["runtime_sources"] == ["src/cores.c"]
    # The artifact holds the kernels the firmware runs: the 3 whole kernels not split
    # and 2 parts per split (the 9 split groups' whole kernels run nowhere).
    assert sum(p.startswith("codegen/model_kernels_") for p in compiled.files) == 3 + 2 * 9


def _conv():
    """A 3x3 conv of 18,432 multiply-accumulates: split by rows on two cores."""
    q = Quantization((0.05,), (0,))
    b = GraphBuilder("conv")
    x = b.input("x", (1, 8, 8, 4), "int8", q)
    w = b.constant("w", np.arange(8 * 3 * 3 * 4).reshape(8, 3, 3, 4) % 7 - 3, "int8",
                   Quantization((0.02,) * 8, (0,) * 8, 0))
    bias = b.constant("bias", np.arange(8) * 3 - 9, "int32",
                      Quantization((0.001,) * 8, (0,) * 8, 0))
    return b.build([b.op("conv2d", [x, w, bias], padding=(1, 1, 1, 1), strides=(1, 1),
                         name="conv", out_type=TensorType((1, 8, 8, 8), "int8",
                                                          Quantization((0.1,), (3,))))])


def test_a_split_layers_artifact_holds_its_parts_not_its_whole_kernel():
    """The firmware links what the entry function calls: the parts' kernels (their files
    follow the groups' numbers), one copy of the layer's constants between them; the
    whole kernel has no file, so nothing compiles or counts it."""
    one = compile_model(_conv(), AN521, measure_code=False)
    two = compile_model(_conv(), AN521, cores=2, measure_code=False)
    meta = two.metadata()
    [kernel] = meta["kernels"]
    assert kernel["name"] == "model_k0" and kernel["file"] is None
    assert kernel["parts"] == [
        {"core": 0, "name": "model_k0_p0", "file": "codegen/model_kernels_1.c",
         "constant_bytes": kernel["constant_bytes"]},
        {"core": 1, "name": "model_k0_p1", "file": "codegen/model_kernels_2.c",
         "constant_bytes": 0}]
    assert f"MODEL_CONSTANT_BYTES {two.sizes.constants}u" in two.files["include/model.h"]
    assert meta["build"]["sources"] == ["codegen/model.c", "codegen/model_kernels_1.c",
                                        "codegen/model_kernels_2.c"]
    assert "model_k0(" not in two.files["codegen/model.c"]
    assert two.sizes.constants == one.sizes.constants == one.kernels[0].constant_bytes
    assert "extern const int8_t model_k0_p0_c0[" in two.files["codegen/model_kernels_2.c"]
    assert one.metadata()["kernels"][0]["file"] == "codegen/model_kernels_0.c"
    # What core 1 is handed, for the bound of its stack (aot.firmware.stack).
    assert meta["entry"]["tasks"] == [{"core": 1, "function": "model_core1_step_0"}]
    assert "tasks" not in one.metadata()["entry"]


@pytest.mark.slow
def test_the_reported_code_is_the_code_the_firmware_links(tmp_path):
    """``aot compile``'s code size on two cores against the linked firmware's map: every
    kernel object is linked whole, and the link drops only the model's public functions
    the RPC firmware does not call (P_reset, the ``_with_workspace`` forms, the port
    accessors)."""
    from aot.firmware import build_project, create_project

    compiled = compile_model(_conv(), AN521, cores=2, cache_dir=tmp_path / "objects")
    project = create_project(compiled.write(tmp_path / "art"), AN521, tmp_path / "fw")
    built = build_project(project, jobs=1, cache_dir=tmp_path / "objects")
    dropped = {}
    text = project.map_file.read_text()
    discarded = text[text.index("Discarded input sections"):text.index("Memory Configuration")]
    for section, size, obj in re.findall(r" (\.text\.\S+)\s+0x[0-9a-f]+\s+(0x[0-9a-f]+) "
                                         r"\S*/model_codegen_(\S+)\.o", discarded):
        dropped[section] = (int(size, 16), obj)
    assert {obj for _, obj in dropped.values()} == {"model"}, dropped
    assert set(dropped) <= {".text.model_reset", ".text.model_run_with_workspace",
                            ".text.model_run_kernel_with_workspace", ".text.model_input_x",
                            ".text.model_output_conv"}, dropped
    assert compiled.sizes.code == built.sizes.model_code + sum(n for n, _ in dropped.values())


def _two_branches():
    """left = x + x beside right = z + z: too small to split, independent, so the
    placement runs them side by side."""
    q = Quantization((0.05,), (0,))
    b = GraphBuilder("two")
    x = b.input("x", (1, 8, 8, 4), "int8", q)
    z = b.input("z", (1, 8, 8, 4), "int8", q)
    out = TensorType((1, 8, 8, 4), "int8", q)
    return b.build([b.op("add", [x, x], out, name="left"),
                    b.op("add", [z, z], out, name="right")])


def test_side_by_side_groups_are_one_hand_over():
    c = compile_model(_two_branches(), AN521, cores=2, measure_code=False).files[
        "codegen/model.c"]
    assert c.count("aot_core_submit(1, model_core1_step_0, ws)") == 1
    assert "fused_0_add: add; beside fused_1_add: add, on core 1" in c
    task = c[c.index("static void model_core1_step_0"):]
    assert "model_k1(" in task[:task.index("\n}\n")]  # right's kernel runs on core 1


@pytest.mark.slow
@pytest.mark.qemu
def test_side_by_side_is_bit_exact_under_qemu():
    from aot.firmware.device import run_on_board
    from aot.firmware.verify import random_inputs, reference_outputs

    graph = _two_branches()
    compiled = compile_model(graph, AN521, cores=2, measure_code=False)
    inputs = random_inputs(graph, 2, 0)
    run = run_on_board(compiled, inputs)
    for got, want in zip(run.outputs, reference_outputs(graph, inputs), strict=True):
        assert np.array_equal(got, want)


def test_one_core_has_no_hand_over():
    compiled = compile_model(HELLO, AN521, measure_code=False)
    assert "aot_core" not in compiled.files["codegen/model.c"]
    assert "runtime_sources" not in compiled.metadata()["build"]


def test_a_composite_target_of_two_cores_places_on_both():
    compiled = compile_model(HELLO, "composite -targets={c -tag=qemu/mps2-an521},"
                             "{c -tag=qemu/mps2-an521}", measure_code=False)
    assert compiled.board.tag == AN521
    assert compiled.graph.annotations.cores in (1, 2)  # hello world: too small to split


@pytest.mark.parametrize("options, message", [
    ({"codegen": "llvm"}, "not supported yet: 2 cores with the llvm codegen"),
    ({"patches": "auto"}, "not supported yet: patches or streams on 2 cores"),
    ({"config": {"placement.cores": 1}}, "the pass config placement.cores = 1 but the model "
                                         "runs on 2 cores"),
    ({"memory_regions": "ram+const"}, "not supported yet: constants copied to a memory "
                                      "region (+const) on 2 cores"),
])
def test_what_two_cores_do_not_honour_is_refused(options, message):
    with pytest.raises(CompileError, match=re.escape(message)):
        compile_model(HELLO, AN521, cores=2, measure_code=False, **options)


SHARED = ["mlperf_kws_dscnn", "mlperf_vww_mobilenetv1_025", "mlperf_ic_resnet8",
          "mlperf_ad_fc_autoencoder"]


@pytest.mark.slow
@pytest.mark.qemu
@pytest.mark.parametrize("model", SHARED)
def test_bit_exact_on_both_cores(model, tmp_path, capsys):
    path = str(MODELS_DIR / f"{model}.tflite")
    report = tmp_path / "verify.json"
    assert main(["verify", path, "--board", AN521, "--cores", "2", "--random", "1",
                 "--report", str(report)]) == 0
    assert json.loads(report.read_text())["passed"]
    capsys.readouterr()
    assert main(["run", path, "--board", AN521, "--cores", "2", "--json"]) == 0
    cores = json.loads(capsys.readouterr().out)["cores"]
    assert len(cores) == 2 and all(c["instructions"] > 100_000 for c in cores), cores


OTHERS = ["tflm_hello_world_int8.tflite", "tflm_keyword_scrambled_int16.tflite",
          "tflm_magic_wand_float.tflite", "tflm_micro_speech.tflite",
          "tflm_mnist_lstm_int8.tflite", "onnx_mnist8.onnx", "onnx_mnist8_int8_qdq.onnx"]


@pytest.mark.slow
@pytest.mark.qemu
@pytest.mark.parametrize("model", OTHERS)
def test_the_other_shared_models_pass_on_two_cores(model, tmp_path):
    """Split where the placement splits (micro speech, magic wand, the MNISTs), on core 0
    alone where nothing is large enough (hello world, the LSTM, the int16 keyword model);
    floats within verify's tolerance."""
    report = tmp_path / "verify.json"
    assert main(["verify", str(MODELS_DIR / model), "--board", AN521, "--cores", "2",
                 "--random", "1", "--report", str(report)]) == 0
    assert json.loads(report.read_text())["passed"]


@pytest.mark.slow
def test_running_the_picos_two_cores_is_refused():
    """KWS splits on the Pico too; its firmware builds, but no run checks it."""
    from aot.errors import AotError
    from aot.firmware.device import run_on_board

    compiled = compile_model(KWS, "raspberrypi/pico", cores=2, measure_code=False)
    assert compiled.cores == 2
    with pytest.raises(AotError, match=re.escape("not supported yet: running on "
                                                 "raspberrypi/pico's 2 cores (build-only")):
        run_on_board(compiled, [np.zeros((1, 49, 10, 1), np.int8)])
