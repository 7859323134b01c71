"""The default placement runs bit-exact under QEMU (slow).

qemu/netduinoplus2 is emulated, and its record prices the STM32F405's flash (5 wait
states behind the ART accelerator), so a plain compile for it copies the hottest
constants to RAM at start-up: the ELF holds those kernels' arrays at RAM
addresses (the others in flash), and the outputs equal the reference's bit for bit.
"""

from __future__ import annotations

import pytest
from support import linked
from support.models import MODELS_DIR

from aot.compile import compile_model
from aot.firmware.verify import random_inputs

BOARD = "qemu/netduinoplus2"


@pytest.mark.slow
@pytest.mark.parametrize("model, stream", [
    ("mlperf_kws_dscnn", False),
    ("mlperf_ic_resnet8", True),   # the default stream stage's kernels placed too
])
def test_the_default_placement_runs_bit_exact(model, stream, object_cache, tmp_path):
    compiled = compile_model(MODELS_DIR / f"{model}.tflite", BOARD, name="m",
                             measure_code=False)
    assert (compiled.patches is not None) == stream
    moved = {k.name for k in compiled.kernels if k.constant_section}
    assert moved and moved == set(compiled.placement.homes)
    project, build = linked.build(compiled, tmp_path, object_cache)
    where = linked.symbols(compiled, build.elf)
    ram, flash = compiled.board.memory.ram, compiled.board.memory.flash
    for k in compiled.kernels:
        if k.func is None or not k.constants:
            continue
        inside = ram if k.name in moved else flash
        assert inside.origin <= where[k.constants[0].name] < inside.end, k.name
    linked.assert_exact(compiled, project, build, random_inputs(compiled.graph, 2, seed=5))
