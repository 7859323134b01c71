"""Core 1's stack: the bound of what it runs against the stack its port gives it.

Core 1 starts in the port's ``core1_vectors`` (its stack's end, its start
function), runs the worker loop, which calls each task through a function
pointer; aot.firmware.stack follows those calls and ``build_project`` refuses
firmware whose core-1 stack is smaller than the bound (docs/firmware.md).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from support.models import MODELS_DIR
from support.stack_probe import run_and_read, symbol
from support.tools import needs_arm_qemu

from aot.compile import compile_model
from aot.firmware import BuildError, build_project, create_project
from aot.firmware.images import image_path
from aot.firmware.stack import CoreStack, StackUsage, check_core_stacks
from aot.target import load_board

AN521 = "qemu/mps2-an521"
KWS = "mlperf_kws_dscnn.tflite"
VWW = "mlperf_vww_mobilenetv1_025.tflite"
IC = "mlperf_ic_resnet8.tflite"   # needs more than the 4,096 bytes the records once gave
AD = "mlperf_ad_fc_autoencoder.tflite"
CHAIN = ("core1_reset", "aot_core_worker", "m_core1_step_0", "m_k0_p1")


def test_a_core_stack_smaller_than_its_need_is_refused_with_the_numbers():
    core = CoreStack(1, 1024, 1544, 44, True, CHAIN)
    with pytest.raises(BuildError) as err:
        check_core_stacks(StackUsage(216, 1552, True, 44, cores=(core,)), AN521)
    assert str(err.value) == (
        "core 1's stack on qemu/mps2-an521 is too small for what it runs: it needs 1,588 "
        "bytes but has 1,024 (the board record's cores.stack_bytes). Deepest chain (1,544 "
        "bytes): core1_reset -> aot_core_worker -> m_core1_step_0 -> m_k0_p1; then an "
        "exception, 44 bytes. Give cores.stack_bytes at least 1,592 in the board record, "
        "or compile with --cores 1")
    # A stack of exactly the need holds it.
    check_core_stacks(StackUsage(216, 1552, True, 44,
                                 cores=(dataclasses.replace(core, size=1588),)), AN521)


def _project(model: str, board, tmp_path):
    compiled = compile_model(MODELS_DIR / model, board, cores=2, name="m", measure_code=False)
    return create_project(compiled.write(tmp_path / "art"), board, tmp_path / "p")


@pytest.mark.slow
@pytest.mark.parametrize("model", [KWS, VWW, IC, AD])
def test_the_mlperf_models_fit_core_1s_stack(model, tmp_path, object_cache):
    project = _project(model, AN521, tmp_path)
    [core] = build_project(project, cache_dir=object_cache).stack.cores
    print(f"{model}: core 1 needs {core.need} of {core.size} bytes "
          f"({' -> '.join(core.chain)}: {core.chain_bytes} + exception {core.exception})")
    assert core.core == 1 and core.size == load_board(AN521).cores.stack_bytes
    assert core.bounded and core.fits
    # The port's start, the worker, then one of the tasks the model hands over.
    assert core.chain[:2] == ("core1_reset", "aot_core_worker")
    assert core.chain[2] in {t["function"] for t in project.core_tasks}
    assert core.chain_bytes > 256  # a part kernel's frame, not just the loop


@pytest.mark.slow
@needs_arm_qemu
@pytest.mark.parametrize("model", [KWS, IC])
def test_the_bound_covers_core_1s_stack_used_under_qemu(model, tmp_path, object_cache):
    """Two random inputs on both cores; core 1's stack is in .bss, zeroed at
    start-up, so its lowest word no longer 0 shows how deep core 1 went (at least)."""
    project = _project(model, AN521, tmp_path)
    [core] = build_project(project, cache_dir=object_cache).stack.cores
    rng = np.random.default_rng(0)
    inputs = [rng.integers(-128, 128, (2, *p["shape"])).astype(p["dtype"])
              for p in project.metadata["inputs"]]
    low, size = symbol(project, "core1_stack")
    words = run_and_read(project, inputs, low, size, tmp_path / "core1.bin")
    used = np.flatnonzero(words)
    measured = size - 4 * int(used[0]) if used.size else 0
    print(f"{model}: core 1's bound {core.need} (chain {core.chain_bytes}), used {measured}")
    assert 1024 < measured <= core.chain_bytes  # no exception was taken


@pytest.mark.slow
def test_a_board_whose_core_1_stack_is_too_small_gets_no_firmware(tmp_path, object_cache):
    board = load_board(AN521)
    small = dataclasses.replace(board, cores=dataclasses.replace(board.cores, stack_bytes=1024))
    project = _project(KWS, small, tmp_path)
    with pytest.raises(BuildError, match=r"core 1's stack on qemu/mps2-an521 is too small "
                                         r"for what it runs: it needs [\d,]+ bytes but has "
                                         r"1,024 .* core1_reset -> aot_core_worker -> "
                                         r"m_core1_step_\d+ -> m_k\d+_p1"):
        build_project(project, cache_dir=object_cache)
    # Nothing left for `aot flash` to put on the board.
    assert not project.elf.exists() and not image_path(project).exists()
