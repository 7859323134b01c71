"""The per-layer choice without a board: units of layers and cost tables.

Measuring on QEMU is tests/firmware/test_models_qemu_cmsis_nn.py (slow).
"""

from __future__ import annotations

import json

import pytest
from support.models import CMSIS_NN_DIR, MODELS_DIR

from aot.cli import main
from aot.compile import compile_model, resolve_target
from aot.tune.errors import TuneError
from aot.tune.layers import LayerChoice, _units, read_costs, write_costs

BOARD = "qemu/mps2-an386"
OPTIONS = {"cmsis-nn": {"path": str(CMSIS_NN_DIR)}}
RESNET = MODELS_DIR / "mlperf_ic_resnet8.tflite"
HELLO = MODELS_DIR / "tflm_hello_world_int8.tflite"
pytestmark = pytest.mark.skipif(not CMSIS_NN_DIR.is_dir(), reason="no CMSIS-NN tree")


def _both(path):
    ours = compile_model(path, BOARD, patches="off", measure_code=False)  # as choose_layers
    theirs = compile_model(path, resolve_target(BOARD, refine="c -libs=cmsis-nn")[0],
                           codegen_options=OPTIONS, measure_code=False)
    return ours, theirs


def test_units_pair_a_fused_kernel_with_the_kernels_covering_its_nodes():
    """ResNet-8's residual: aot fuses conv+add into one kernel, CMSIS-NN calls two."""
    ours, theirs = _both(RESNET)
    units = _units(ours, theirs)
    residual = [u for u in units if len(u[1]) == 1 and len(u[2]) == 2]
    assert len(residual) == 3
    for nodes, a, b in residual:
        assert set(ours.layers()[a[0]]["nodes"]) == nodes
        assert {theirs.layers()[k]["ops"][0] for k in b} == {"conv2d", "add"}
    # every kernel of either side is in exactly one unit
    assert sorted(k for u in units for k in u[1]) == list(range(len(ours.kernels)))
    assert sorted(k for u in units for k in u[2]) == list(range(len(theirs.kernels)))


def test_keep_with_aot_keeps_exactly_those_layers():
    target = resolve_target(BOARD, refine="c -libs=cmsis-nn")[0]
    compiled = compile_model(HELLO, target, codegen_options=OPTIONS, measure_code=False,
                             keep_with_aot=frozenset({"1:fully_connected"}))
    by = {layer["nodes"][0]: layer["by"] for layer in compiled.layers()}
    assert by == {"0:fully_connected": "cmsis-nn", "1:fully_connected": "aot",
                  "2:fully_connected": "cmsis-nn"}


def test_a_cost_table_round_trips_and_is_applied_by_the_cli(tmp_path, capsys):
    target = resolve_target(BOARD, refine="c -libs=cmsis-nn")[0]
    compiled = compile_model(HELLO, target, codegen_options=OPTIONS, measure_code=False)
    choice = LayerChoice(units=[
        {"nodes": ["0:fully_connected"], "aot": 10, "libs": 20, "chosen": "aot"},
        {"nodes": ["1:fully_connected"], "aot": 30, "libs": 20, "chosen": "cmsis-nn"},
        {"nodes": ["2:fully_connected"], "aot": 10, "libs": 20, "chosen": "aot"}],
        compiled=compiled, totals={"aot": 50, "libs": 60})
    path = tmp_path / "costs.json"
    write_costs(choice, path)
    assert read_costs(path, target) == {"0:fully_connected", "2:fully_connected"}
    with pytest.raises(TuneError, match="was measured for the target"):
        read_costs(path, resolve_target(BOARD)[0])
    assert main(["compile", str(HELLO), "--board", BOARD, "--target", "c -libs=cmsis-nn",
                 "--cmsis-nn", str(CMSIS_NN_DIR), "--layer-costs", str(path), "-o",
                 str(tmp_path / "a")]) == 0
    assert "layers: 2 by aot, 1 by cmsis-nn" in capsys.readouterr().out
    meta = json.loads((tmp_path / "a" / "metadata.json").read_text())
    assert [layer["by"] for layer in meta["layers"]] == ["aot", "cmsis-nn", "aot"]
    path.write_text("{}")
    assert main(["compile", str(HELLO), "--board", BOARD, "--target", "c -libs=cmsis-nn",
                 "--cmsis-nn", str(CMSIS_NN_DIR), "--layer-costs", str(path), "-o",
                 str(tmp_path / "b")]) == 2
    assert "is not an aot layer cost table" in capsys.readouterr().err
