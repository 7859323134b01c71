"""``aot compile``: the artifact, the printed sizes, the memory report, errors in one line."""

from __future__ import annotations

import pytest
import json

from support.models import MODELS_DIR

from aot.cli import main

HELLO = str(MODELS_DIR / "tflm_hello_world_int8.tflite")
KWS = str(MODELS_DIR / "mlperf_kws_dscnn.tflite")
RESNET = str(MODELS_DIR / "mlperf_ic_resnet8.tflite")


def test_compile_writes_the_artifact_and_prints_sizes(tmp_path, capsys):
    out = tmp_path / "art"
    assert main(["compile", HELLO, "--board", "qemu/mps2-an386", "-o", str(out),
                 "--name", "hello"]) == 0
    text = capsys.readouterr().out
    meta = json.loads((out / "metadata.json").read_text())
    sizes = meta["sizes"]
    assert f"workspace {sizes['workspace']} bytes" in text
    assert f"constants {sizes['constants']} bytes" in text
    assert f"code {sizes['code']} bytes" in text
    assert (out / "include" / "hello.h").exists()


def test_compile_with_target_and_tar(tmp_path, capsys):
    out = tmp_path / "art"
    assert main(["compile", HELLO, "--target", "c -mcpu=cortex-m4", "-o", str(out),
                 "--tar"]) == 0
    assert (tmp_path / "art.tar").exists()
    assert "art.tar" in capsys.readouterr().out


@pytest.mark.slow
def test_memory_report(tmp_path, capsys):
    assert main(["compile", KWS, "--board", "host/native", "-o", str(tmp_path / "a"),
                 "--memory-report"]) == 0
    text = capsys.readouterr().out
    assert "lower bound" in text and "bytes per column" in text


def test_dump_after_prints_the_graph(tmp_path, capsys):
    assert main(["compile", HELLO, "--board", "host/native", "-o", str(tmp_path / "a"),
                 "--dump-after", "fuse_ops", "--disabled-pass", "fold_pad"]) == 0
    assert "// after pass fuse_ops" in capsys.readouterr().out


def test_errors_are_one_line_with_status_2(tmp_path, capsys):
    assert main(["compile", HELLO, "--board", "nowhere/x", "-o", str(tmp_path / "a")]) == 2
    assert main(["compile", HELLO, "--board", "host/native", "-o", str(tmp_path / "a"),
                 "--disabled-pass", "nope"]) == 2
    assert main(["compile", HELLO, "--board", "host/native", "-o", str(tmp_path / "a"),
                 "--name", "9lives"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 3 and "Traceback" not in err
    assert "not a usable C identifier" in err


@pytest.mark.slow
def test_model_too_big_for_the_board_names_sizes_and_tensors(tmp_path, capsys):
    # qemu/sifive-e has 16 KiB of RAM, 12 KiB beside its stack; ResNet-8 needs
    # 32,768 bytes of workspace plus its i/o.
    assert main(["compile", RESNET, "--board", "qemu/sifive-e", "-o", str(tmp_path / "a")]) == 2
    err = capsys.readouterr().err
    assert "needs 32768 bytes of RAM" in err and "has 12288" in err
    assert "largest tensors:" in err and "(16384 bytes)" in err
    assert not (tmp_path / "a").exists()


def test_compile_for_llvm_is_refused_not_printed_as_c(tmp_path, capsys):
    out = tmp_path / "art"
    assert main(["compile", HELLO, "--target", "llvm", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "not supported yet: an artifact for the target 'llvm -keys=cpu'" in err
    assert "aot run MODEL --target llvm" in err
    assert not out.exists()


@pytest.mark.slow
def test_codegen_llvm_writes_objects_for_every_kernel(tmp_path, capsys):
    out = tmp_path / "art"
    svdf = str(MODELS_DIR / "tflm_keyword_scrambled_int16.tflite")
    assert main(["compile", svdf, "--board", "qemu/mps2-an386", "--codegen", "llvm",
                 "-o", str(out)]) == 0
    text = capsys.readouterr().out
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["target"].startswith("llvm -keys=arm_cpu,cpu -mcpu=cortex-m4")
    assert meta["board"] == "qemu/mps2-an386"
    assert meta["build"]["objects"] and all((out / o).is_file() for o in meta["build"]["objects"])
    assert all(k["file"].endswith(".o") for k in meta["kernels"])  # svdf too
    assert "note: C kernels" not in text


def test_codegen_llvm_refuses_the_sdk_layouts(tmp_path, capsys):
    assert main(["compile", HELLO, "--board", "qemu/mps2-an386", "--codegen", "llvm",
                 "--project", "pico-sdk", "-o", str(tmp_path / "p")]) == 2
    assert "not supported yet: --project pico-sdk with the llvm codegen" in \
        capsys.readouterr().err


def test_target_with_board_refines_the_board(tmp_path, capsys):
    out = tmp_path / "art"
    assert main(["compile", HELLO, "--board", "qemu/mps2-an386", "--target",
                 "c -mcpu=cortex-m4", "-o", str(out)]) == 0
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["board"] == "qemu/mps2-an386"
    assert main(["compile", HELLO, "--board", "qemu/mps2-an386", "--target",
                 "c -mcpu=cortex-m0plus", "-o", str(out)]) == 2
    assert "-mcpu=cortex-m0plus but the board qemu/mps2-an386" in capsys.readouterr().err


def test_print_passes_lists_the_pipeline_with_the_partitioning_and_placement(capsys):
    import pytest

    with pytest.raises(SystemExit) as done:
        main(["compile", "--print-passes"])
    assert done.value.code == 0
    names = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert names[-5:] == ["annotate_external", "merge_external", "partition_external",
                          "fuse_ops", "place_cores"]


def test_libs_print_who_implements_each_layer(tmp_path, capsys):
    from support.models import CMSIS_NN_DIR

    assert main(["compile", HELLO, "--board", "qemu/mps2-an386", "--target",
                 "c -libs=cmsis-nn", "--cmsis-nn", str(CMSIS_NN_DIR), "-o",
                 str(tmp_path / "a")]) == 0
    out = capsys.readouterr().out
    assert "layers: 3 by cmsis-nn" in out
    assert "dense: cmsis-nn" in out


def test_choose_layers_needs_a_board_and_libs(tmp_path, capsys):
    assert main(["compile", HELLO, "--target", "c -libs=cmsis-nn", "--choose-layers",
                 "-o", str(tmp_path / "a")]) == 2
    assert "give --board and --target 'c -libs=cmsis-nn'" in capsys.readouterr().err


def test_cmsis_nn_path_from_the_environment_serves_only_targets_asking_for_it(
        tmp_path, capsys, monkeypatch):
    from support.models import CMSIS_NN_DIR

    monkeypatch.setenv("CMSIS_NN_PATH", str(CMSIS_NN_DIR))
    assert main(["compile", HELLO, "--board", "qemu/mps2-an386", "--target",
                 "c -libs=cmsis-nn", "-o", str(tmp_path / "a")]) == 0
    assert "layers: 3 by cmsis-nn" in capsys.readouterr().out
    assert main(["compile", HELLO, "--board", "qemu/mps2-an386", "-o",
                 str(tmp_path / "b")]) == 0


def test_memory_budget_prints_the_choice_and_its_cost(tmp_path, capsys):
    out = tmp_path / "a"
    assert main(["compile", KWS, "--board", "qemu/mps2-an386", "-o", str(out),
                 "--memory-budget", "10K"]) == 0
    text = capsys.readouterr().out
    assert "memory budget 10240 bytes: chose caller i/o, overlaps" in text
    assert "instruction cost: 9 aliased kernel argument pairs lose restrict" in text
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["memory_budget"]["ram_bytes"] <= 10240
    assert meta["memory_plan"]["io_in_workspace"] is False


@pytest.mark.slow
def test_memory_budget_too_small_or_malformed_is_one_line(tmp_path, capsys):
    assert main(["compile", KWS, "--board", "qemu/mps2-an386", "-o", str(tmp_path / "a"),
                 "--memory-budget", "8K"]) == 2
    assert main(["compile", KWS, "--board", "qemu/mps2-an386", "-o", str(tmp_path / "a"),
                 "--memory-budget", "8X"]) == 2
    assert main(["compile", KWS, HELLO, "--board", "host/native", "-o", str(tmp_path / "a"),
                 "--memory-budget", "8K"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 3 and "Traceback" not in err
    assert "smallest plan reachable needs 9280 bytes" in err and "budget of 8192" in err
    assert "'8X' is not a size" in err
    assert "not supported yet: --memory-budget with several models" in err


def test_no_inplace_with_a_budget_keeps_every_kernel_apart(tmp_path, capsys):
    out = tmp_path / "a"
    assert main(["compile", KWS, "--board", "qemu/mps2-an386", "-o", str(out),
                 "--memory-budget", "16000", "--no-inplace"]) == 0
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["memory_budget"]["inplace"] is False
    assert meta["memory_budget"]["io_in_workspace"] is True


def test_memory_regions_print_the_split_and_refuse_unknown_memories(tmp_path, capsys):
    out = tmp_path / "a"
    assert main(["compile", KWS, "--board", "qemu/mps2-an386", "-o", str(out), "--name", "kws",
                 "--memory-regions", "ram:9K,psram"]) == 0
    text = capsys.readouterr().out
    assert "memory regions: ram (the workspace) 8960 bytes, psram 8000 bytes" in text
    assert (out / "codegen" / "kws_regions.ld").is_file()
    assert main(["compile", KWS, "--board", "qemu/mps2-an386", "-o", str(tmp_path / "b"),
                 "--memory-regions", "ram,ccm"]) == 2
    assert main(["compile", KWS, "--board", "qemu/mps2-an386", "-o", str(tmp_path / "c"),
                 "--memory-regions", "ram+fast"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and "Traceback" not in err
    assert "qemu/mps2-an386 has no data memory 'ccm': it has ram (4186112 bytes" in err
    assert "unknown flag '+fast'; the flags are +const, +stack" in err


def test_memory_regions_with_constants_stack_and_report(tmp_path, capsys):
    import xml.etree.ElementTree as ET
    out = tmp_path / "a"
    assert main(["compile", KWS, "--board", "qemu/mps3-an547", "-o", str(out), "--name", "kws",
                 "--memory-regions", "ram:9K,isram:20K+const+stack", "--memory-report"]) == 0
    text = capsys.readouterr().out
    meta = json.loads((out / "metadata.json").read_text())["memory_plan"]
    copied = meta["region_constants"]["isram"]
    assert f"constants copied at start-up: {copied} bytes to isram (the kernels kws_k" in text
    assert "stack: 8192 bytes in isram" in text
    assert (f"regions: ram {meta['workspace_bytes']} bytes (speed 1), isram "
            f"{meta['regions']['isram']} bytes + {copied} bytes of constants + the 8192-byte "
            "stack (speed 2)") in text
    assert "isram: offset 0 .. " in text and "peak: step " in text
    svg = ET.parse(out / "memory.svg").getroot()
    panels = [g.get("id") for g in svg.iter("{http://www.w3.org/2000/svg}g")]
    assert panels == ["region-ram", "region-isram"]


def test_the_default_placement_is_reported_and_recorded(tmp_path, capsys):
    """qemu/netduinoplus2's record prices its flash: the hot constants move to ram,
    the report says what and the estimated gain; --no-placement keeps them in flash."""
    out = tmp_path / "a"
    assert main(["compile", HELLO, "--board", "qemu/netduinoplus2", "-o", str(out),
                 "--no-code-size"]) == 0
    text = capsys.readouterr().out
    placed = json.loads((out / "metadata.json").read_text())["placement"]
    moved = placed["moved"]
    assert moved and all(m["region"] == "ram" for m in moved)
    assert (f"  placement (qemu/netduinoplus2's flash waits): the constants of {len(moved)} "
            f"kernels") in text
    assert f"{sum(m['bytes'] for m in moved)} bytes, copied to ram at start-up, about " \
           f"{placed['cycles_saved']:,} cycles per inference saved" in text
    assert main(["--json", "compile", HELLO, "--board", "qemu/netduinoplus2", "-o",
                 str(tmp_path / "c"), "--no-code-size", "--no-placement"]) == 0
    assert json.loads(capsys.readouterr().out)["placement"] is None
    assert "placement" not in json.loads((tmp_path / "c" / "metadata.json").read_text())


def test_a_group_takes_memory_regions_on_the_command_line(tmp_path, capsys):
    out = tmp_path / "g"
    assert main(["compile", KWS, HELLO, "--board", "qemu/mps2-an386", "-o", str(out),
                 "--name", "grp", "--memory-regions", "ram:9K,psram"]) == 0
    text = capsys.readouterr().out
    assert "shared region arrays: grp_region_psram 8000 bytes" in text
    assert (out / "codegen" / "grp_regions.ld").is_file()


@pytest.mark.slow
def test_patches_option_prints_the_stage_and_refuses_a_graph_without_one(tmp_path, capsys):
    out = tmp_path / "a"
    assert main(["compile", KWS, "--board", "host/native", "-o", str(out),
                 "--patches", "5x1"]) == 0
    text = capsys.readouterr().out
    assert "patches: the first 1 layers in 5x1 patches" in text
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["patches"]["grid"] == [5, 1]
    assert main(["compile", HELLO, "--board", "host/native", "-o", str(tmp_path / "b"),
                 "--patches", "2x2"]) == 2
    assert main(["compile", HELLO, "--board", "host/native", "-o", str(tmp_path / "b"),
                 "--patches", "two"]) == 2
    err = capsys.readouterr().err
    assert "has no patch stage" in err and "a grid 'RxC'" in err and "Traceback" not in err


def test_no_code_size_says_the_code_size_was_not_measured(tmp_path, capsys, monkeypatch):
    from aot import compile as compile_mod

    def refuse(*args, **kwargs):
        raise AssertionError("the code size was measured")

    monkeypatch.setattr(compile_mod, "_code_bytes", refuse)
    out = tmp_path / "art"
    assert main(["compile", HELLO, "--board", "qemu/mps2-an386", "-o", str(out),
                 "--no-code-size"]) == 0
    assert "code unknown (code size not measured)" in capsys.readouterr().out
    sizes = json.loads((out / "metadata.json").read_text())["sizes"]
    assert sizes["code"] is None and sizes["code_note"] == "code size not measured"


@pytest.mark.slow
def test_a_second_compile_takes_the_code_size_objects_from_the_cache(tmp_path, capsys,
                                                                     monkeypatch):
    from aot.codegen import cc as cc_module
    monkeypatch.setenv("AOT_CACHE_DIR", str(tmp_path / "cache"))
    args = ["compile", KWS, "--board", "host/native", "-o"]
    assert main([*args, str(tmp_path / "a")]) == 0
    first = capsys.readouterr().out
    assert list((tmp_path / "cache" / "objects" / "size").glob("*.o"))
    compiles = []
    real = cc_module.subprocess.run
    monkeypatch.setattr(cc_module.subprocess, "run",
                        lambda argv, **kw: compiles.append(argv) or real(argv, **kw)
                        if "-c" in argv else real(argv, **kw))
    assert main([*args, str(tmp_path / "b")]) == 0  # another folder: not a replay
    again = capsys.readouterr().out
    assert again.replace(str(tmp_path / "b"), "") == first.replace(str(tmp_path / "a"), "")
    assert compiles == [] and (tmp_path / "b" / "metadata.json").is_file()
