"""A split plan linked for a board without an emulator: the STM32F746's DTCM.

KWS for st/nucleo-f746zg with ``ram,dtcm+const+stack``: the DTCM (speed 1)
takes the hot workspace buffers, the constants (loaded in flash, copied at
start-up) and the stack; the ELF's symbols show each where the linker script
put it.  The F746 is not emulated by QEMU, so this checks the link only
(tests/firmware/test_regions_qemu.py runs the same mechanisms on emulated boards).
"""

from __future__ import annotations


import pytest
from support import linked
from support.models import MODELS_DIR

from aot.compile import compile_model

KWS = MODELS_DIR / "mlperf_kws_dscnn.tflite"


@pytest.mark.slow
def test_dtcm_holds_workspace_constants_and_stack_on_the_f746(object_cache, tmp_path):
    compiled = compile_model(KWS, "st/nucleo-f746zg", name="kws",
                             memory_regions="ram,dtcm+const+stack", measure_code=False)
    plan = compiled.plan
    assert plan.regions["dtcm"] > 0 and plan.region_constants["dtcm"] > 0
    assert plan.stack_region == "dtcm"
    project, build = linked.build(compiled, tmp_path, object_cache)
    where = linked.symbols(compiled, build.elf)
    mem = compiled.board.memory
    dtcm, flash = mem.pool("dtcm"), mem.flash
    start, end = where["__aot_kws_const_dtcm_start"], where["__aot_kws_const_dtcm_end"]
    assert dtcm.origin <= start < end <= where["kws_region_dtcm"]
    assert end - start == plan.region_constants["dtcm"]
    assert flash.origin <= where["__aot_kws_const_dtcm_load"] < flash.end
    assert where["kws_region_dtcm"] + plan.regions["dtcm"] <= where["__aot_stack_limit"]
    assert where["_estack"] - where["__aot_stack_limit"] == mem.stack_bytes
    assert where["_estack"] <= dtcm.end
    moved = [k for k in compiled.kernels if k.constant_section]
    assert all(start <= where[k.constants[0].name] < end for k in moved)
    assert mem.ram.origin <= where["kws_workspace"] < mem.ram.end
