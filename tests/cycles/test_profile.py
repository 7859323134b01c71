"""``aot profile``: refusals, the chart, and one real profile on QEMU."""

from __future__ import annotations

import dataclasses
import json
import shutil
import xml.etree.ElementTree as ET

import pytest
from support.models import CMSIS_NN_DIR, MODELS_DIR

from aot.cli import main
from aot.cycles import CycleModelError, get_core
from aot.cycles.chart import profile_svg
from aot.cycles.memory import memory_for_board
from aot.cycles.profile import ENTRY_ROW, KernelProfile, Profile, profile_model
from aot.cycles.session import check_emulated
from aot.errors import AotError
from aot.target import TargetError, load_board

HELLO = MODELS_DIR / "tflm_hello_world_int8.tflite"
SVG = "{http://www.w3.org/2000/svg}"


def _profile() -> Profile:
    rows = (KernelProfile("fused_0_dense", "m_k0", ("dense",), 100, 104, 150.0, 16, 64),
            KernelProfile("fused_1_dense", "m_k1", ("dense",), 300, 302, 420.0, 256, 96),
            KernelProfile(ENTRY_ROW, None, (), 10, None, 14.0, 0, None))
    return Profile("m", "qemu/mps2-an386", get_core("cortex-m4"),
                   memory_for_board(load_board("qemu/mps2-an386")), 25_000_000,
                   412, rows, {"alu": 584.0})


def test_the_chart_has_one_bar_per_kernel():
    root = ET.fromstring(profile_svg(_profile()))
    bars = [r for r in root.iter(f"{SVG}rect") if r.get("class") == "bar"]
    assert len(bars) == 2
    widths = [float(b.get("width")) for b in bars]
    assert widths[1] > widths[0]  # the longer kernel has the longer bar
    assert "fused_1_dense: 420 cycles" in bars[1].find(f"{SVG}title").text


def test_the_json_and_table_add_up():
    p = _profile()
    data = p.to_json()
    assert data["cycles"] == 584 and data["instructions"] == 410
    assert sum(k["share"] for k in data["kernels"]) == pytest.approx(1, abs=1e-3)
    assert data["kernels"][1]["cycles_per_mac"] == round(420 / 256, 3)
    assert data["ms"] == round(584 / 25e6 * 1e3, 6)
    assert "total" in p.table() and "0.02336 ms at 25 MHz" in p.table()
    assert data["trace_complete"] and "warning" not in p.table()


def test_a_trace_that_misses_code_is_reported():
    p = _profile()
    short = Profile(p.model, p.board, p.core, p.memory, p.clock_hz, 5_000, p.rows, p.by_class)
    assert not short.to_json()["trace_complete"]
    assert "warning: the trace holds 410 instructions but the RPC counted 5,000" in short.table()


@pytest.mark.parametrize("board", ["qemu/sifive-e", "host/native"])
def test_a_board_without_a_cycle_model_is_refused(board, capsys):
    assert main(["profile", str(HELLO), "--board", board]) == 2
    assert f"{board} has no cycle model" in capsys.readouterr().err


def test_a_real_board_without_memory_timing_is_refused(monkeypatch):
    """Never priced at zero wait states: the refusal names the missing fields."""
    board = load_board("st/nucleo-l4r5zi")
    bare = dataclasses.replace(board, memory=dataclasses.replace(board.memory, timing=None))
    monkeypatch.setattr("aot.cycles.profile.load_board", lambda tag: bare)
    with pytest.raises(CycleModelError, match="st/nucleo-l4r5zi .* has no memory timing: the "
                       "cycle estimate needs memory.timing with trace_board, flash, sram"):
        profile_model(HELLO, "st/nucleo-l4r5zi")


def test_a_model_that_fits_the_trace_board_only_is_refused_before_building(monkeypatch):
    """The trace board (4 MiB of flash) is not the real board: its memory is checked too."""
    if shutil.which("qemu-system-arm") is None:
        pytest.skip("needs qemu-system-arm (checked first)")
    board = load_board("st/nucleo-l4r5zi")
    small = dataclasses.replace(board, memory=dataclasses.replace(
        board.memory, flash=dataclasses.replace(board.memory.flash, length=64)))
    monkeypatch.setattr("aot.cycles.profile.load_board",
                        lambda tag: small if tag == board.tag else load_board(tag))
    monkeypatch.setattr("aot.cycles.profile.build_project", lambda *a, **k: pytest.fail())
    with pytest.raises(AotError, match="st/nucleo-l4r5zi has 64"):
        profile_model(HELLO, "st/nucleo-l4r5zi")


@pytest.mark.parametrize("target, error, match", [
    ("c -mcpu=cortex-m7", TargetError, "may add attributes, not change them"),
    ("c -libs=nosuch", AotError, "no external codegen is called 'nosuch'"),
])
def test_a_target_the_board_cannot_take_is_refused_before_any_build(target, error, match):
    if shutil.which("qemu-system-arm") is None:
        pytest.skip("needs qemu-system-arm (checked first)")
    with pytest.raises(error, match=match):
        profile_model(HELLO, "qemu/mps2-an386", target=target)


def test_cmsis_nn_without_libs_is_refused_not_ignored(capsys):
    if shutil.which("qemu-system-arm") is None:
        pytest.skip("needs qemu-system-arm (checked first)")
    assert main(["profile", str(HELLO), "--board", "qemu/mps2-an386",
                 "--cmsis-nn", str(CMSIS_NN_DIR)]) == 2
    assert "the target's -libs does not name it" in capsys.readouterr().err


def test_a_missing_qemu_is_a_clear_error(monkeypatch):
    monkeypatch.setattr("aot.cycles.session.shutil.which", lambda name: None)
    with pytest.raises(CycleModelError, match="qemu-system-arm is not installed"):
        check_emulated(load_board("qemu/mps2-an386"))


@pytest.mark.slow
@pytest.mark.qemu
def test_profile_on_qemu(tmp_path, capsys):
    if shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("needs qemu-system-arm and arm-none-eabi-gcc")
    chart = tmp_path / "p.svg"
    assert main(["profile", str(HELLO), "--board", "qemu/mps2-an386", "--json",
                 "--chart", str(chart)]) == 0
    data = json.loads(capsys.readouterr().out)
    kernels = [k for k in data["kernels"] if k["function"] is not None]
    assert len(kernels) == 3 and all(k["ops"] == ["dense"] for k in kernels)
    # The rows add up to the traced whole-model run ...
    assert sum(k["instructions"] for k in data["kernels"]) == data["instructions"]
    # ... which is the RPC's exact count but for the few instructions of its call sequence.
    assert 0 <= data["rpc_instructions"] - data["instructions"] <= 8 and data["trace_complete"]
    # A kernel run alone (the RPC's own wrapper around it) executes at least as much.
    assert all(k["instructions"] <= k["instructions_alone"] for k in kernels)
    assert data["cycles"] > data["instructions"]  # loads take two cycles on an M4
    assert sum(k["macs"] for k in kernels) == 288
    bars = [r for r in ET.parse(chart).getroot().iter(f"{SVG}rect") if r.get("class") == "bar"]
    assert len(bars) == 3


@pytest.mark.slow
@pytest.mark.qemu
def test_profile_of_a_real_board_prices_the_emulated_trace_with_its_memory(capsys):
    """st/nucleo-l4r5zi runs on qemu/mps2-an386 (its core) and pays its flash."""
    if shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("needs qemu-system-arm and arm-none-eabi-gcc")
    assert main(["profile", str(HELLO), "--board", "st/nucleo-l4r5zi", "--json"]) == 0
    real = json.loads(capsys.readouterr().out)
    assert main(["profile", str(HELLO), "--board", "qemu/mps2-an386", "--json"]) == 0
    emulated = json.loads(capsys.readouterr().out)
    assert real["trace_board"] == "qemu/mps2-an386" and real["board"] == "st/nucleo-l4r5zi"
    assert real["instructions"] == emulated["instructions"]  # the same firmware ran
    assert real["memory_stall_cycles"] > 0 and emulated["memory_stall_cycles"] == 0
    assert real["cycles"] == pytest.approx(emulated["cycles"] + real["memory_stall_cycles"],
                                           abs=len(real["kernels"]))
    for k in real["kernels"]:
        stalls = k["memory_stalls"]
        assert set(stalls["cycles"]) <= {"flash", "sram", "tcm"}
        # every fetch is a flash line of 8 bytes: at least one per kernel
        assert stalls["accesses"]["flash_fetch"] > 0
    assert real["ms"] == pytest.approx(real["cycles"] / 120e6 * 1e3, abs=1e-6)


@pytest.mark.slow
@pytest.mark.qemu
def test_the_default_placement_lowers_the_real_boards_flash_stalls(capsys):
    """Placed as aot compile --board st/nucleo-l4r5zi places it, the model's hot
    constants are read from SRAM in the trace: fewer flash data stalls than with
    --no-placement, and the report names the bytes moved."""
    if shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("needs qemu-system-arm and arm-none-eabi-gcc")
    assert main(["profile", str(HELLO), "--board", "st/nucleo-l4r5zi", "--json"]) == 0
    placed = json.loads(capsys.readouterr().out)
    assert main(["profile", str(HELLO), "--board", "st/nucleo-l4r5zi", "--json",
                 "--no-placement"]) == 0
    kept = json.loads(capsys.readouterr().out)
    assert kept["placement"] is None and placed["placement"]["board"] == "st/nucleo-l4r5zi"
    assert placed["placement"]["moved"]

    def flash_loads(profile):
        return sum(k["memory_stalls"]["accesses"].get("flash_load", 0)
                   for k in profile["kernels"])
    assert flash_loads(placed) < flash_loads(kept)
    assert placed["memory_stall_cycles"] < kept["memory_stall_cycles"]
    assert main(["profile", str(HELLO), "--board", "st/nucleo-l4r5zi"]) == 0
    assert "placement: " in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.qemu
def test_profile_of_a_model_with_a_stream_stage(tmp_path, capsys):
    """magic_wand compiles with a stream stage by default: the stage's kernels run
    only inside its band loop, so they are not timed alone, and their MACs are one
    band's times the calls the trace saw, adding up to the layers' whole MACs plus
    what the stage computes beyond them."""
    if shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("needs qemu-system-arm and arm-none-eabi-gcc")
    from aot.compile import compile_model
    wand = MODELS_DIR / "tflm_magic_wand_float.tflite"
    staged = compile_model(wand, "qemu/mps2-an386", measure_code=False)
    assert staged.stage_kernels, "magic_wand no longer takes a stream stage by default"
    whole = compile_model(wand, "qemu/mps2-an386", measure_code=False, patches="off")
    assert main(["profile", str(wand), "--board", "qemu/mps2-an386", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    kernels = [k for k in data["kernels"] if k["function"] is not None]
    in_stage = [k for k in kernels if k["function"] in staged.stage_kernels]
    assert len(in_stage) == len(staged.stage_kernels)
    assert all(k["instructions_alone"] is None for k in in_stage)
    assert all(k["instructions_alone"] is not None for k in kernels if k not in in_stage)
    assert sum(k["instructions"] for k in data["kernels"]) == data["instructions"]
    assert data["macs"] == sum(k.macs for k in whole.kernels) \
        + staged.metadata()["patches"]["extra_macs"]


@pytest.mark.slow
@pytest.mark.qemu
def test_profile_with_every_layer_handed_to_cmsis_nn(tmp_path):
    """``target="c -libs=cmsis-nn"``: the profiled firmware calls CMSIS-NN for each
    layer (the TFLM+CMSIS-NN estimate of bench/bench_cycles_mlperf.py), and the
    outputs of the traced run are the reference's."""
    if shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("needs qemu-system-arm and arm-none-eabi-gcc")
    if not CMSIS_NN_DIR.is_dir():
        pytest.skip("needs the CMSIS-NN tree in ../shared/third_party")
    from aot.firmware.verify import random_inputs, reference_outputs
    from aot.frontend import load_model
    graph = load_model(HELLO)
    inputs = random_inputs(graph, 1, 3)
    ours = profile_model(HELLO, "qemu/mps2-an386", inputs=inputs, workdir=tmp_path)
    theirs = profile_model(HELLO, "qemu/mps2-an386", inputs=inputs, workdir=tmp_path,
                           target="c -libs=cmsis-nn",
                           codegen_options={"cmsis-nn": {"path": str(CMSIS_NN_DIR)}})
    (want,) = reference_outputs(graph, inputs)
    for p in (ours, theirs):
        assert len(p.outputs) == 1 and (p.outputs[0] == want[0]).all()
        assert p.trace_complete and sum(r.macs for r in p.rows) == 288
    # Different code ran: CMSIS-NN's generic loops against aot's specialised ones.
    assert theirs.rpc_instructions != ours.rpc_instructions
    assert theirs.cycles > theirs.rpc_instructions


def test_tuning_records_that_do_not_exist_are_refused(tmp_path, capsys):
    assert main(["profile", str(HELLO), "--board", "qemu/mps2-an386", "--tuning-records",
                 str(tmp_path / "missing.jsonl")]) == 2
    assert "missing.jsonl does not exist" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.qemu
def test_profile_with_tuning_records(tmp_path, capsys):
    """``--tuning-records`` profiles the model as ``aot compile --tuning-records`` builds it."""
    if shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("needs qemu-system-arm and arm-none-eabi-gcc")
    from aot.tune import records as rec
    from aot.tune.workload import extract_workloads

    board = load_board("qemu/mps2-an386")
    _, workloads = extract_workloads(HELLO, board.target)
    wl = workloads[0]
    config = next(c for c in wl.space if c.to_json().get("accumulate") == "loops")
    log = tmp_path / "hello.jsonl"
    rec.append(log, [rec.Record(wl.key, wl.description, str(wl.target), board.tag,
                                config.to_json(), "ok", 100, "estimated_cycles",
                                model=rec.model_identity(HELLO))])
    runs = {}
    for label, extra in (("untuned", ["--no-tuned-defaults"]),
                         ("tuned", ["--tuning-records", str(log)])):
        assert main(["profile", str(HELLO), "--board", board.tag, "--json", *extra]) == 0
        runs[label] = json.loads(capsys.readouterr().out)
    assert runs["tuned"]["tuning_records"] == {"applied": len(wl.groups), "tunable": 3,
                                               "stale": [], "shipped": None}
    assert "tuning_records" not in runs["untuned"]
    cycles = {label: [k["cycles"] for k in run["kernels"]] for label, run in runs.items()}
    assert cycles["tuned"] != cycles["untuned"]   # the loops differ from the library's kernel
