"""Ports proven on the closest emulated silicon (slow, QEMU).

qemu/netduinoplus2 runs the stm32 port of the st/ boards on QEMU's STM32F405,
qemu/mps2-an505 the mps2 port on a Cortex-M33 (Armv8-M mainline, Secure
state), qemu/microbit the nrf51 port on a Cortex-M0 (Armv6-M).  Every shared
model runs there through ``aot verify``'s path (compile, project, build, QEMU,
RPC) against the reference interpreter (bit-exact with TFLM); a model that
cannot fit the board is refused by the compiler with both sizes.
"""

from __future__ import annotations

import pytest
from support.models import MODELS, MODELS_DIR

from aot.compile import compile_model
from aot.errors import AotError
from aot.firmware.verify import verify_model

#: board -> (clock the firmware reports under QEMU, models the compiler refuses
#: for their size, models the linker refuses: they fit beside the stack but not
#: beside the RPC runtime's own data as well)
BOARDS = {
    # No RCC in QEMU: the clock setup gives up and the core stays on HSI.
    "qemu/netduinoplus2": (16_000_000, set(), set()),
    # The FPGA image's fixed 20 MHz.
    "qemu/mps2-an505": (20_000_000, set(), set()),
    # 16 KiB of RAM less a 4 KiB stack, 256 KiB of flash (the autoencoder's
    # weights need 270,880 bytes).  The keyword model fits: its layers overlap
    # (9,280 bytes of workspace).  The magic wand fits with its default stream
    # stage (3,904 bytes; without it its 12,288 bytes take all the RAM the stack
    # leaves, and the RPC runtime needs about 1.1 KiB more).
    "qemu/microbit": (16_000_000,
                      {"mlperf_ad_fc_autoencoder", "mlperf_ic_resnet8",
                       "mlperf_vww_mobilenetv1_025", "onnx_mnist8"},
                      set()),
}

CASES = [pytest.param(tag, m["file"], id=f"{tag.split('/')[1]}-{m['name']}")
         for tag in BOARDS for m in MODELS]


@pytest.mark.slow
@pytest.mark.qemu
@pytest.mark.parametrize("tag, model", CASES)
def test_shared_model_on_the_board_is_bit_exact_or_refused_with_sizes(tag, model, object_cache,
                                                                      tmp_path):
    clock_hz, too_big, too_big_linked = BOARDS[tag]
    path = MODELS_DIR / model
    if path.stem in too_big:
        with pytest.raises(AotError, match=rf"needs \d+ bytes of (RAM|flash) .* but {tag} has \d+"):
            compile_model(path, tag, measure_code=False)
        return
    if path.stem in too_big_linked:
        with pytest.raises(AotError, match=rf"does not fit {tag}: RAM overflows by \d+ bytes"):
            verify_model(path, tag, workdir=tmp_path, cache_dir=object_cache)
        return
    report = verify_model(path, tag, workdir=tmp_path, cache_dir=object_cache)
    assert report.passed, report.summary()
    if path.suffix != ".onnx" and "float" not in path.stem:
        assert all(o.exact for o in report.outputs), report.summary()
    run = report.to_json()
    assert run["board"] == tag and run["instructions_per_inference"] > 0
    assert run["clock_hz"] == clock_hz
    assert run["device"]["core_clock_hz"] == clock_hz and run["device_warnings"] == []


@pytest.mark.parametrize("tag", sorted(BOARDS))
@pytest.mark.one_fast
def test_a_model_larger_than_the_boards_ram_is_refused_with_both_sizes(tag):
    from kernels.graphs import conv_graph  # tests/kernels/graphs.py

    from aot.target import load_board

    memory = load_board(tag).memory
    ram, stack = memory.ram.length, memory.stack_bytes
    side = int((ram // 8) ** 0.5) + 2  # an int8 input of side x side x 8 is over the RAM alone
    graph = conv_graph("conv2d", hw=(side, side), cin=8, cout=8)
    with pytest.raises(AotError, match=rf"needs (\d+) bytes of RAM .* but {tag} has "
                                       rf"{ram - stack} \({ram} bytes of RAM less its "
                                       rf"{stack}-byte stack\);"):
        compile_model(graph, tag, measure_code=False)


def test_a_model_that_fits_the_ram_but_not_beside_the_stack_is_refused_at_compile_time():
    # With its input and output in the caller's buffers and no stream stage the
    # magic wand needs 13,840 of the micro:bit's 16,384 bytes of RAM; the 4 KiB
    # stack leaves 12,288.  The linker would say so only after a build.
    with pytest.raises(AotError, match=r"needs 13840 bytes of RAM .* but qemu/microbit has 12288 "
                                       r"\(16384 bytes of RAM less its 4096-byte stack\)"):
        compile_model(MODELS_DIR / "tflm_magic_wand_float.tflite", "qemu/microbit",
                      measure_code=False, io_in_workspace=False, patches="off")
