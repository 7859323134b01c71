"""A workspace split over two memories runs bit-exact under QEMU (slow).

KWS with 9 KiB of the fast ram and the rest in a slower memory: the linker
script of the artifact puts the region's array in that memory (checked in the
ELF's symbols), and the outputs equal the reference interpreter's bit for bit.
"""

from __future__ import annotations

import subprocess

import pytest
from support import linked
from support.models import MODELS_DIR

from aot.compile import compile_model
from aot.firmware.device import run_project
from aot.firmware.verify import random_inputs

KWS = MODELS_DIR / "mlperf_kws_dscnn.tflite"


@pytest.mark.slow
@pytest.mark.parametrize("board, spec, slow", [
    ("qemu/mps2-an386", "ram:9K,psram", "psram"),     # Cortex-M4: SSRAM, then PSRAM
    ("qemu/mps3-an547", "ram:9K,isram", "isram"),     # Cortex-M55: DTCM, then internal SRAM
])
def test_a_split_workspace_runs_bit_exact(board, spec, slow, object_cache, tmp_path):
    compiled = compile_model(KWS, board, name="kws", memory_regions=spec, measure_code=False)
    assert compiled.plan.regions.get(slow, 0) > 0 and compiled.plan.workspace_bytes <= 9216
    project, build = linked.build(compiled, tmp_path, object_cache)
    where = linked.symbols(compiled, build.elf)
    region = compiled.board.memory.pool(slow)
    assert region.origin <= where[f"kws_region_{slow}"] < region.end
    ram = compiled.board.memory.ram
    assert ram.origin <= where["kws_workspace"] < ram.end
    inputs = random_inputs(compiled.graph, 3, seed=1)
    linked.assert_exact(compiled, project, build, inputs)


@pytest.mark.slow
@pytest.mark.parametrize("spec, region", [
    ("ram:40K+const", "ram"),             # DTCM: .data, copied by every start-up
    ("ram:9K,isram:20K+const", "isram"),  # a pool: the start-up's .aot_copy_table
])
def test_constants_copied_to_a_memory_run_bit_exact(spec, region, object_cache, tmp_path):
    """KWS on the Cortex-M55 with its hottest weights copied at start-up into
    DTCM (its ram) or the internal SRAM: the ELF holds the kernels' constant
    arrays at RAM addresses, and the outputs equal the reference's."""
    compiled = compile_model(KWS, "qemu/mps3-an547", name="kws", memory_regions=spec,
                             measure_code=False)
    moved = [k for k in compiled.kernels if k.constant_section]
    assert moved and compiled.plan.region_constants.get(region, 0) > 0
    project, build = linked.build(compiled, tmp_path, object_cache)
    where = linked.symbols(compiled, build.elf)
    memory = (compiled.board.memory.ram if region == "ram"
              else compiled.board.memory.pool(region))
    flash = compiled.board.memory.flash
    for k in compiled.kernels:
        address = where[k.constants[0].name] if k.constants and k.func is not None else None
        if address is None:
            continue
        inside = memory if k.constant_section else flash
        assert inside.origin <= address < inside.end, (k.name, hex(address))
    inputs = random_inputs(compiled.graph, 3, seed=2)
    linked.assert_exact(compiled, project, build, inputs)


@pytest.mark.slow
def test_the_stack_in_another_memory_runs_bit_exact(object_cache, tmp_path):
    """KWS on the Cortex-M55 with the firmware's stack moved from DTCM to the
    internal SRAM (+stack): the linker script's _estack (the vector table's
    initial SP) and the stack's bottom lie there, and the outputs are exact."""
    compiled = compile_model(KWS, "qemu/mps3-an547", name="kws",
                             memory_regions="ram:9K,isram+stack", measure_code=False)
    assert compiled.plan.stack_region == "isram"
    project, build = linked.build(compiled, tmp_path, object_cache)
    where = linked.symbols(compiled, build.elf)
    isram = compiled.board.memory.pool("isram")
    stack = compiled.board.memory.stack_bytes
    assert isram.origin <= where["__aot_stack_limit"] < where["_estack"] <= isram.end
    assert where["_estack"] - where["__aot_stack_limit"] == stack
    assert where["kws_region_isram"] < where["__aot_stack_limit"]
    # The vector table's first word, the initial SP, is that _estack.
    objdump = compiled.board.toolchain.tool("objdump")
    dump = subprocess.run([objdump, "-s", "-j", ".isr_vector", str(build.elf)],
                          capture_output=True, text=True, check=True).stdout
    first = next(line for line in dump.splitlines() if line.startswith(" ")).split()[1]
    assert int.from_bytes(bytes.fromhex(first), "little") == where["_estack"]
    inputs = random_inputs(compiled.graph, 2, seed=3)
    linked.assert_exact(compiled, project, build, inputs)


@pytest.mark.slow
def test_a_start_up_that_does_not_copy_the_constants_makes_the_run_fail(object_cache, tmp_path):
    """The same firmware with its copy table emptied (what a start-up that does not
    walk .aot_copy_table amounts to): the entry function finds its mark missing in
    the region and returns -2 instead of computing with garbage."""
    from aot.firmware.errors import DeviceError
    compiled = compile_model(KWS, "qemu/mps3-an547", name="kws",
                             memory_regions="ram:9K,isram:20K+const", measure_code=False)
    project, build = linked.build(compiled, tmp_path, object_cache)
    objcopy = compiled.board.toolchain.tool("objcopy")
    zeros = tmp_path / "zeros.bin"
    zeros.write_bytes(bytes(12))  # one entry: load, start, end all 0 (nothing to copy)
    subprocess.run([objcopy, f"--update-section=.aot_copy_table={zeros}", str(build.elf)],
                   check=True, capture_output=True)
    with pytest.raises(DeviceError) as err:
        run_project(project, random_inputs(compiled.graph, 1, seed=4), build=build)
    # the device answered: the message says what -2 means, not "check the serial port"
    assert "answered with an error" in str(err.value)
    assert "returned -2 in run 0" in str(err.value)
    assert "did not copy the model's constants" in str(err.value)
    assert "serial port" not in str(err.value)
