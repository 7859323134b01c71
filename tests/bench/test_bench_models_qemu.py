"""bench/bench_models_qemu.py: board selection, flash split, baselines and table.

The script is loaded by path (bench/ is not a package).
"""

from __future__ import annotations

import importlib.util
import shutil
import sys

import pytest
from support.models import MODELS_DIR, ROOT

from aot.compile import compile_model
from aot.errors import AotError
from aot.firmware import build_project, create_project

_spec = importlib.util.spec_from_file_location("bench_models_qemu",
                                               ROOT / "bench" / "bench_models_qemu.py")
bench = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = bench  # dataclasses look their module up there
_spec.loader.exec_module(bench)

HELLO = MODELS_DIR / "tflm_hello_world_int8.tflite"
needs_arm = pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None,
                               reason="arm-none-eabi-gcc is not installed")


def test_board_tags_aliases_and_the_rv32_shorthand_resolve():
    assert bench.resolve_board("rv32") == "qemu/sifive-e"
    assert bench.resolve_board("qemu/an500") == "qemu/mps2-an500"
    with pytest.raises(AotError):
        bench.resolve_board("qemu/no-such-board")


def test_baselines_exist_only_for_the_cores_baseline_md_measured():
    assert set(bench.BASELINES) == {"qemu/mps2-an386", "qemu/mps2-an500"}
    m7 = bench.BASELINES["qemu/mps2-an500"]
    assert set(m7.cmsis_nn) == {"mlperf_kws_dscnn", "mlperf_vww_mobilenetv1_025",
                                "mlperf_ic_resnet8", "mlperf_ad_fc_autoencoder"}
    assert not (m7.reference or m7.arena or m7.flash_cmsis_nn or m7.flash_reference)


@needs_arm
@pytest.mark.slow
def test_flash_split_covers_the_whole_image_and_drops_only_rpc_objects(tmp_path):
    compiled = compile_model(HELLO, "qemu/mps2-an386", name="hello", measure_code=False)
    project = create_project(compiled.write(tmp_path / "art"), compiled.board, tmp_path / "p")
    build = build_project(project)
    mem = project.data["memory"]
    origin = int(mem["ram_origin"], 16)
    objects = bench.flash_by_object(project.map_file.read_text(), origin,
                                    origin + int(mem["ram_length"], 16))
    assert sum(objects.values()) == build.sizes.flash
    rpc = {o for o in objects if bench.rpc_only(o, "hello")}
    assert {"runtime_src_rpc_server.o", "runtime_src_frame.o", "model_codegen_hello_rpc.o"} <= rpc
    standalone = bench.standalone_flash(objects, "hello")
    assert standalone == build.sizes.flash - sum(objects[o] for o in rpc)
    # What stays: the model, startup, port and the C library.
    assert standalone > build.sizes.model_code + build.sizes.constants
    assert "runtime_ports_cortex-m_startup.o" in objects


def _row(model, **extra):
    return {"model": model, "board": "b", "inputs": "samples", "invocations": 1,
            "bit_exact": True, "passed": True, "max_abs_diff": 0, "macs": 100,
            "instructions_per_inference": 250, "instructions_per_mac": 2.5,
            "vs_tflm_cmsis_nn": None, "vs_tflm_reference": None,
            "activation_ram": {"workspace": 10, "io": 2, "inference_stack": 30, "total": 42,
                               "vs_tflm_arena": None},
            "ram": {"runtime": 3, "total_used": 50},
            "flash": {"model_code": 5, "constants": 6, "standalone": 20, "rpc_only": 7,
                      "vs_tflm_cmsis_nn": None, "vs_tflm_reference": None}, **extra}


def test_table_prints_n_a_without_a_baseline_and_short_fit_errors():
    error = ("model 'm' needs 16502 bytes of RAM (workspace 16000) but the target has 16384; "
             "largest tensors: 'x' (8000 bytes)")
    text = bench.table([_row("a"), {"model": "m", "error": error, "does_not_fit": True}])
    lines = text.splitlines()
    assert len({line.count("|") for line in lines}) == 1  # every row has every column
    assert "| a | 100 | 250 | 2.50 | n/a | n/a | 10 + 2 + 30 = 42 | n/a | 3, 50 | " \
           "5 + 6 + 9 = 20 (+7) | n/a / n/a | yes |" in lines
    assert "needs 16502 bytes of RAM (workspace 16000) but the target has 16384 |" in lines[3]
    assert "largest tensors" not in text


@needs_arm
@pytest.mark.slow
def test_an500_row_uses_the_m7_baseline_and_no_m4_figures(tmp_path):
    path = MODELS_DIR / "mlperf_ad_fc_autoencoder.tflite"
    row = bench.bench_model(path, "qemu/mps2-an500", tmp_path / "w", tmp_path / "cache")
    assert row["bit_exact"]
    assert row["tflm_cmsis_nn"] == 583_205
    assert row["vs_tflm_cmsis_nn"] == row["instructions_per_inference"] / 583_205
    assert row["vs_tflm_reference"] is None and row["flash"]["vs_tflm_cmsis_nn"] is None
    assert row["activation_ram"]["vs_tflm_arena"] is None
