"""``aot run --json`` on a board with several cores reports ``"cores"``: each core's
instructions per inference, from QEMU's per-vCPU plugin (aot/cycles/vcpus.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from support.models import MODELS_DIR

from aot.cli import main
from aot.commands.run_board import _core_counter
from aot.cycles.vcpus import CoreCounter
from aot.target import load_board

HELLO = str(MODELS_DIR / "tflm_hello_world_int8.tflite")


def test_counted_only_on_an_emulated_multi_core_board(tmp_path):
    an521 = load_board("qemu/mps2-an521")
    counter = _core_counter(an521, None, tmp_path)
    assert isinstance(counter, CoreCounter) and counter.cores == 2
    assert _core_counter(load_board("qemu/mps2-an386"), None, tmp_path) is None


@pytest.mark.slow
@pytest.mark.qemu
def test_run_json_has_each_cores_instructions(tmp_path, capsys):
    x = tmp_path / "x.npy"
    np.save(x, np.array([[[3]], [[-7]]], np.int8))
    assert main(["run", HELLO, "--board", "qemu/mps2-an521", "--input", str(x), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    core0, core1 = report["cores"]
    # The model runs on core 0 alone: the timer (which counts every core under
    # -icount) and the plugin's window agree to the instruction; core 1 never ran.
    assert core0 == {"instructions": report["instructions_per_inference"]}
    assert core1 == {"instructions": 0}


def test_a_single_core_report_has_no_cores_key():
    from aot.firmware.device import BoardRun
    from aot.rpc.protocol import TimerUnit

    meta = {"model": {"name": "m"}, "board": "b", "workspace": {"bytes": 0},
            "sizes": {"state": 0}}
    run = BoardRun([], [5], TimerUnit.INSTRUCTIONS, _NoSizes(), meta)
    assert "cores" not in run.report()
    two = BoardRun([], [5], TimerUnit.INSTRUCTIONS, _NoSizes(), meta, cores=(4, 1))
    assert two.report()["cores"] == [{"instructions": 4}, {"instructions": 1}]


class _NoSizes:
    sizes = None


