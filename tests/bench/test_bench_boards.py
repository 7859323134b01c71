"""bench/bench_boards.py: the boards and models it covers (loaded by path)."""

from __future__ import annotations

import importlib.util
import sys

from support.models import MODELS_DIR, ROOT

from aot.cycles import core_for_board, memory_for_board
from aot.target import load_board

_spec = importlib.util.spec_from_file_location("bench_boards", ROOT / "bench" / "bench_boards.py")
bench = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = bench
_spec.loader.exec_module(bench)


def test_every_board_has_a_core_table_a_memory_and_an_emulated_trace_board():
    for tag in bench.BOARDS:
        board = load_board(tag)
        assert board.platform == "hardware"
        core_for_board(board)
        assert load_board(memory_for_board(board).trace_board).qemu is not None


def test_the_validation_covers_the_four_models_it_measures():
    assert set(bench.MICROTVM_CMSIS_NN_MS) == set(bench.MODELS)
    assert all((MODELS_DIR / f"{m}.tflite").exists() for m in bench.MODELS)
    assert bench.VALIDATION_BOARD in bench.BOARDS
