"""Several memory regions: the board's ranks, the region list, the split, the C and the link."""

from __future__ import annotations

import pytest

from aot.compile import CompileError, compile_group, compile_model
from aot.executor import check_plan, plan_memory
from aot.executor.regions import (MemoryRegionError, PlanRegion, buffer_heat, parse_regions,
                                  split_regions)
from aot.export.sdk import write_sdk_project
from aot.errors import AotError
from aot.frontend import load_model
from aot.passes import optimize
from aot.target import load_board
from support.models import MODELS_DIR

KWS = MODELS_DIR / "mlperf_kws_dscnn.tflite"
HELLO = MODELS_DIR / "tflm_hello_world_int8.tflite"
AN386 = "qemu/mps2-an386"


def test_boards_rank_their_data_memories():
    mem = load_board(AN386).memory
    assert (mem.ram.speed, mem.pool("psram").speed) == (1, 2)
    m55 = load_board("qemu/mps3-an547").memory
    assert (m55.ram.speed, m55.pool("isram").speed) == (1, 2)
    f7 = load_board("st/nucleo-f746zg").memory
    assert (f7.pool("dtcm").speed, f7.ram.speed) == (1, 2)


def test_region_list_names_sizes_and_ranks():
    board = load_board(AN386)
    regions = parse_regions("ram:9K, psram", board)
    assert regions == [PlanRegion("ram", 0x2000_0000, 9216, 1),
                       PlanRegion("psram", 0x2100_0000, 16 << 20, 2)]
    # ram defaults to what the stack leaves.
    assert parse_regions(["ram"], board)[0].capacity == board.memory.model_ram_bytes


@pytest.mark.parametrize("spec, message", [
    ("ram,flash", "has no data memory 'flash': it has ram (4186112 bytes at 0x20000000, "
                  "speed 1), psram (16777216 bytes at 0x21000000, speed 2)"),
    ("ram,dtcm", "has no data memory 'dtcm'"),
    ("ram,ram", "'ram' is given twice"),
    ("ram:5M", "asks for 5242880 bytes but ram on qemu/mps2-an386 has 4186112 (4194304 less "
               "the 8192-byte stack)"),
    ("psram:17M", "asks for 17825792 bytes but psram on qemu/mps2-an386 has 16777216"),
    ("ram:lots", "'ram:lots': memory budget 'lots' is not a size"),
    ("RAM", "expected NAME[:BYTES][+const]"),
    ("", "expected NAME[:BYTES][+const]"),
])
def test_a_region_list_that_does_not_match_the_board_is_refused(spec, message):
    with pytest.raises(MemoryRegionError) as err:
        parse_regions(spec, load_board(AN386))
    assert message in str(err.value)


def test_a_board_without_a_memory_map_takes_no_regions():
    with pytest.raises(MemoryRegionError, match="host/native has no memory map"):
        parse_regions("ram", load_board("host/native"))
    with pytest.raises(MemoryRegionError, match="host/native has no memory map"):
        compile_model(HELLO, "host/native", memory_regions="ram")


def test_overlapping_regions_in_a_board_record_are_refused(tmp_path):
    import aot.target.tags as tags
    text = (tags.BOARDS_DIR / "qemu" / "mps2-an386.toml").read_text()
    text = text.replace('name = "psram", origin = 0x2100_0000',
                        'name = "psram", origin = 0x203F_0000')
    folder = tmp_path / "qemu"
    folder.mkdir()
    (folder / "mps2-an386.toml").write_text(text)
    with pytest.raises(AotError) as err:
        tags.load_board_file(folder / "mps2-an386.toml")
    assert ("the regions 'ram' [0x20000000, 0x20400000) and 'psram' [0x203f0000, 0x213f0000) "
            "overlap by 65536 bytes") in str(err.value)


def _kws():
    return optimize(load_model(KWS))


def _kernels_like(graph, macs_of):
    """Toy kernels: one per step, reading the step's inputs with ``macs_of(step)`` MACs."""
    from aot.kernels.kernel import KernelParam

    class K:
        def __init__(self, params, macs):
            self.params, self.macs = params, macs
    out = []
    for i, g in enumerate(graph.annotations.groups):
        ins = [t for n in g.nodes for t in n.inputs if t is not None and t.kind != "constant"]
        out.append(K(tuple(KernelParam(t.name, "input", t.dtype, t.type.nbytes) for t in ins),
                     macs_of(i)))
    return out


def test_hot_buffers_go_to_the_fastest_region_and_each_region_holds_its_capacity():
    graph = _kws()
    plan = plan_memory(graph, alignment=4, io_in_workspace=True)
    heat = buffer_heat(plan, _kernels_like(graph, lambda i: 0))
    # With no MACs each reader reads every byte once: heat is the size times 1 + readers.
    assert all(heat[id(b)] / b.size == int(heat[id(b)] / b.size) >= 1
               for b in plan.buffers if b.size)
    assert max(heat[id(b)] / b.size for b in plan.buffers if b.size) >= 2
    # The slow region listed first still comes second: ranks decide.
    split_regions(plan, graph, parse_regions("psram,ram:12000", load_board(AN386)), heat)
    check_plan(plan)
    assert plan.workspace_bytes <= 12000
    in_psram = [b for b in plan.buffers if b.region == "psram"]
    assert plan.regions == {"psram": max(b.offset + b.size for b in in_psram)}
    # The input and the output stay in the main workspace (the header points there).
    io = {id(t) for t in (*graph.inputs, *graph.outputs)}
    assert all(not b.region for b in plan.buffers if any(id(t) in io for t in b.tensors))
    assert plan.to_json()["regions"] == plan.regions


def test_the_hottest_per_byte_wins_the_fast_region():
    graph = _kws()
    plan = plan_memory(graph, alignment=4, io_in_workspace=True, inplace=False)
    steps = {b.name: b for b in plan.buffers}
    inner = [b for b in plan.buffers if not b.external and b.size == 8000]
    # Make the buffer read at step 5 the hottest by far: it must land in ram.
    hot = next(b for b in inner if b.end == 5)
    heat = {id(b): (1000.0 if b is hot else 1.0) * b.size for b in plan.buffers}
    split_regions(plan, graph, parse_regions("ram:9K,psram", load_board(AN386)), heat)
    assert hot.region == "" and steps[hot.name] is hot
    # 9 KiB of ram holds one 8,000-byte activation per step: never two alive together.
    fast = [b for b in inner if not b.region]
    assert not any(a.conflicts(b) for a in fast for b in fast if a is not b)
    assert len(fast) + sum(1 for b in inner if b.region == "psram") == len(inner)


def test_buffers_that_fit_no_region_name_the_bytes_placed():
    graph = _kws()
    plan = plan_memory(graph, alignment=4, io_in_workspace=True, inplace=False)
    heat = {id(b): float(b.size) for b in plan.buffers}
    with pytest.raises(MemoryRegionError) as err:
        split_regions(plan, graph, parse_regions("ram:9K,psram:1K", load_board(AN386)), heat)
    assert "(8000 bytes, steps" in str(err.value) and "psram 0 of 1024" in str(err.value)


def test_io_in_the_workspace_needs_ram_among_the_regions():
    graph = _kws()
    plan = plan_memory(graph, alignment=4, io_in_workspace=True)
    with pytest.raises(MemoryRegionError, match="add ram to the regions"):
        split_regions(plan, graph, parse_regions("psram", load_board(AN386)),
                      {id(b): 1.0 for b in plan.buffers})


def test_compiled_split_emits_the_arrays_their_sections_and_the_linker_script():
    c = compile_model(KWS, AN386, name="kws", memory_regions="ram:9K,psram",
                      measure_code=False)
    assert c.plan.regions == {"psram": 8000} and c.plan.workspace_bytes <= 9216
    source = c.files["codegen/kws.c"]
    assert ('static uint8_t kws_region_psram[8000]\n    __attribute__((section('
            '".aot_region.psram"), aligned(4)));') in source
    assert "(int8_t *)(region_psram + 0)" in source  # the entry function's parameter
    assert "kws_entry(ws, kws_region_psram, " in source
    script = c.files["codegen/kws_regions.ld"]
    assert "AOT_PSRAM (rw) : ORIGIN = 0x21000000, LENGTH = 0x01000000" in script
    assert ".aot_region.psram (NOLOAD)" in script and "> AOT_PSRAM" in script
    meta = c.metadata()
    assert meta["build"]["linker_scripts"] == ["codegen/kws_regions.ld"]
    assert meta["memory_plan"]["regions"] == {"psram": 8000}
    # Overlap pairs split over two regions share nothing, so they are not aliases.
    region = {t.name: b.region for b in c.plan.buffers for t in b.tensors}
    assert all(region[y] == region[x] for y, x, how in c.plan.aliases if how == "overlap")


def test_without_regions_nothing_changes():
    c = compile_model(HELLO, AN386, name="hello", measure_code=False)
    assert c.plan.regions == {} and "codegen/hello_regions.ld" not in c.files
    assert c.metadata()["build"]["linker_scripts"] == []
    assert "region" not in c.files["codegen/hello.c"]


def test_regions_are_refused_where_not_supported_yet(tmp_path):
    c = compile_model(KWS, AN386, name="kws", memory_regions="ram:9K,psram",
                      measure_code=False)
    with pytest.raises(AotError, match="not supported yet: --project pico-sdk with buffers"):
        write_sdk_project("pico-sdk", tmp_path / "p", c.name, c.files, c.metadata())


def test_the_build_files_link_the_regions_script_after_the_ports(tmp_path):
    from aot.firmware import create_project
    c = compile_model(KWS, AN386, name="kws", memory_regions="ram:9K,psram",
                      measure_code=False)
    artifact = c.write(tmp_path / "artifact")
    assert "-T$(KWS_DIR)/codegen/kws_regions.ld" in (artifact / "kws.mk").read_text()
    assert ("target_link_options(kws INTERFACE -T${CMAKE_CURRENT_LIST_DIR}/codegen/"
            "kws_regions.ld)") in (artifact / "CMakeLists.txt").read_text()
    project = create_project(artifact, c.board, tmp_path / "project")
    assert "-Tmodel/codegen/kws_regions.ld -Wl,-Map=" in (project.path / "Makefile").read_text()
    assert ("-T${CMAKE_CURRENT_LIST_DIR}/model/codegen/kws_regions.ld"
            in (project.path / "CMakeLists.txt").read_text())


def test_a_speed_rank_outside_1_to_9_is_refused_by_the_schema(tmp_path):
    import aot.target.tags as tags
    text = (tags.BOARDS_DIR / "qemu" / "mps2-an386.toml").read_text()
    folder = tmp_path / "qemu"
    folder.mkdir()
    (folder / "mps2-an386.toml").write_text(text.replace("speed = 2", "speed = 0"))
    with pytest.raises(AotError, match="speed"):
        tags.load_board_file(folder / "mps2-an386.toml")


@pytest.mark.parametrize("spec, message", [
    ("ram+fast", "unknown flag '+fast'; the flags are +const"),
    ("ram+const+const", "'+const' is given twice"),
])
def test_region_flags_are_checked(spec, message):
    with pytest.raises(MemoryRegionError, match=message.replace("+", r"\+")):
        parse_regions(spec, load_board(AN386))


def test_const_marks_a_region_for_constants():
    board = load_board(AN386)
    regions = parse_regions("ram:9K+const,psram", board)
    assert [(r.name, r.capacity, r.const) for r in regions] == [("ram", 9216, True),
                                                                ("psram", 16 << 20, False)]


def test_constants_go_to_a_pool_only_where_the_start_up_copies_them():
    from aot.export import cortex_m_startup
    ports = {b: cortex_m_startup(load_board(b)) for b in
             (AN386, "qemu/mps3-an547", "st/nucleo-f746zg", "raspberrypi/pico",
              "espressif/esp32c3-devkitm", "host/native")}
    assert ports == {AN386: True, "qemu/mps3-an547": True, "st/nucleo-f746zg": True,
                     "raspberrypi/pico": True, "espressif/esp32c3-devkitm": False,
                     "host/native": False}
    esp = load_board("espressif/esp32c3-devkitm")
    with pytest.raises(MemoryRegionError, match="not supported yet: constants copied to "
                       "rtc_fast .* port 'esp32c3' does not walk .aot_copy_table"):
        parse_regions("ram,rtc_fast+const", esp, cortex_m_startup=False)
    # In ram they are .data, which every start-up copies.
    assert parse_regions("ram+const", esp)[0].const


def _constant_kernels(specs):
    """Toy loop-IR kernels: ``(name, macs, constant element counts)``."""
    import numpy as np
    from aot.kernels.kernel import Kernel, KernelConstant
    return [Kernel(name, (), 0, macs, ("conv2d",), func=object(),
                   constants=tuple(KernelConstant(f"{name}_c{i}", np.zeros(n, np.int8))
                                   for i, n in enumerate(sizes)))
            for name, macs, sizes in specs]


def test_the_hottest_constants_per_byte_take_the_fastest_room_left():
    from aot.executor.regions import constant_reuse, place_constants
    graph = _kws()
    plan = plan_memory(graph, alignment=4, io_in_workspace=True)
    kernels = _constant_kernels([("conv", 100 * 1000, [1000, 40]),   # reuse 100
                                 ("dense", 2000, [2000, 8]),         # reuse 1
                                 ("dw", 9 * 500, [500])])            # reuse 9
    assert [constant_reuse(k) for k in kernels] == [100.0, 1.0, 9.0]
    regions = [PlanRegion("ram", 0, 3000, 1, const=True),
               PlanRegion("psram", 1, 1 << 20, 2, const=True)]
    homes = place_constants(plan, kernels, regions, ram_used=1900)
    # ram has 1100 bytes left: conv (1040 bytes, hottest) fits, dw (504) then does not.
    assert homes == {"conv": "ram", "dw": "psram", "dense": "psram"}
    # Each constant is aligned to 8; a pool's first adds its 8-byte mark.
    assert plan.region_constants == {"ram": 1040, "psram": 8 + 504 + 2008}
    # Without +const nothing moves.
    regions = [PlanRegion("ram", 0, 1 << 20, 1), PlanRegion("psram", 1, 1 << 20, 2)]
    assert place_constants(plan, kernels, regions, ram_used=0) == {}
    assert plan.region_constants == {}


def test_ram_const_puts_the_hottest_kernels_constants_in_data():
    c = compile_model(KWS, "qemu/mps3-an547", name="kws", memory_regions="ram:40K+const",
                      measure_code=False)
    moved = [k for k in c.kernels if k.constant_section]
    assert moved and {k.constant_section for k in moved} == {".data.aot_const.kws"}
    copied = c.plan.region_constants["ram"]
    assert copied == sum(-(-x.data.nbytes // 8) * 8 for k in moved for x in k.constants)
    assert copied <= 40 * 1024 - c.sizes.workspace
    assert c.sizes.ram == c.sizes.workspace + copied and c.sizes.to_json()["ram_constants"]
    assert ('__attribute__((section(".data.aot_const.kws")))'
            in c.files[f"codegen/kws_kernels_{c.kernels.index(moved[0])}.c"])
    # .data needs no script of ours, and no copy-table entry.
    assert "codegen/kws_regions.ld" not in c.files
    assert ".aot_copy_table" not in c.files["codegen/kws.c"]
    assert c.metadata()["memory_plan"]["region_constants"] == {"ram": copied}
    sections = {k["name"]: k.get("constant_section") for k in c.metadata()["kernels"]}
    assert sections == {k.name: k.constant_section or None for k in c.kernels}


def test_pool_const_loads_in_flash_and_lists_the_copy():
    c = compile_model(KWS, "qemu/mps3-an547", name="kws",
                      memory_regions="ram:9K,isram:20K+const", measure_code=False)
    copied = c.plan.region_constants["isram"]
    assert 8 < copied and c.plan.regions["isram"] + copied <= 20 * 1024
    script = c.files["codegen/kws_regions.ld"]
    assert ("    .aot_const.kws.isram : ALIGN(8)\n    {\n        __aot_kws_const_isram_start = .;"
            "\n        KEEP(*(.aot_const.kws.isram))\n        . = ALIGN(4);\n"
            "        __aot_kws_const_isram_end = .;\n    } > AOT_ISRAM AT > FLASH\n"
            "    __aot_kws_const_isram_load = LOADADDR(.aot_const.kws.isram);") in script
    source = c.files["codegen/kws.c"]
    assert '__attribute__((section(".aot_copy_table"), used))' in source
    assert "return -2;" in source and "-2\n * when the constants" in c.files["include/kws.h"]
    # RAM counts no constants copied elsewhere.
    assert c.sizes.ram_constants == 0


def test_const_with_the_llvm_codegen_is_refused():
    with pytest.raises(CompileError, match=r"not supported yet: constants copied to a memory "
                       r"region \(\+const\) with the llvm codegen"):
        compile_model(HELLO, AN386, codegen="llvm", memory_regions="ram+const",
                      measure_code=False)


@pytest.mark.slow
def test_a_budget_with_regions_counts_ram_and_the_other_regions_take_the_rest():
    from aot.executor.budget import ram_bytes
    for budget in (12 * 1024, 6 * 1024):
        c = compile_model(KWS, AN386, name="kws", memory_regions="ram,psram",
                          memory_budget=budget, measure_code=False)
        # The cheapest option fits: psram takes what the budget leaves out of ram.
        assert c.budget.option.label == "caller i/o, no aliasing"
        assert c.budget.ram == ram_bytes(c.plan) == c.sizes.ram <= budget
        assert c.plan.regions["psram"] > 0
        assert f"outside the budget: psram {c.plan.regions['psram']} bytes" in c.budget.summary()
        assert c.metadata()["memory_budget"]["other_regions"] == c.plan.regions
    # Constants copied to ram stay within the budget too.
    c = compile_model(KWS, AN386, name="kws", memory_regions="ram+const,psram",
                      memory_budget="16K", measure_code=False)
    assert 0 < c.plan.region_constants["ram"] and c.sizes.ram <= 16 * 1024


def test_a_budget_below_what_ram_must_hold_names_the_smallest_plan():
    from aot.executor.budget import MemoryBudgetError
    # The caller's buffers alone (502 bytes) exceed it; with the i/o inside, the
    # input and output must stay in ram.
    with pytest.raises(MemoryBudgetError) as err:
        compile_model(KWS, AN386, name="kws", memory_regions="ram,psram", memory_budget=400,
                      measure_code=False)
    text = str(err.value)
    assert "does not fit the memory budget of 400 bytes" in text
    assert "outside the budget: psram" in text
    assert all(ram > 400 for _, ram in err.value.tried)


def test_stack_moves_the_firmwares_stack_to_a_region():
    board = load_board("qemu/mps3-an547")
    stack = board.memory.stack_bytes
    isram = board.memory.pool("isram")
    regions = parse_regions("ram:9K,isram+stack", board, cortex_m_startup=True)
    assert (regions[1].stack, regions[1].capacity) == (True, isram.length - stack)
    with pytest.raises(MemoryRegionError, match=f"has {isram.length - stack} "
                       rf"\({isram.length} less the {stack}-byte stack\)"):
        parse_regions(f"ram,isram:{isram.length}+stack", board, cortex_m_startup=True)
    with pytest.raises(MemoryRegionError, match="the stack is already in isram"):
        parse_regions("ram,isram+stack,sram+stack", board, cortex_m_startup=True)
    with pytest.raises(MemoryRegionError, match="the stack is already in isram"):
        parse_regions("isram+stack,ram+stack", board, cortex_m_startup=True)
    with pytest.raises(MemoryRegionError, match=r"not supported yet: the stack in rtc_fast "
                       r"\(\+stack\) on espressif/esp32c3-devkitm"):
        parse_regions("ram,rtc_fast+stack", load_board("espressif/esp32c3-devkitm"),
                      cortex_m_startup=False)
    c = compile_model(KWS, board, name="kws", memory_regions="ram:9K,isram+stack",
                      measure_code=False)
    assert (c.plan.stack_region, c.plan.stack_bytes) == ("isram", stack)
    script = c.files["codegen/kws_regions.ld"]
    assert ("    .aot_stack (NOLOAD) : ALIGN(8)\n    {\n        __aot_stack_limit = .;\n"
            f"        . = . + 0x{stack:x};\n        . = ALIGN(8);\n        _estack = .;\n"
            "    } > AOT_ISRAM") in script
    # After the region's workspace array, in the same memory.
    assert script.index(".aot_region.isram") < script.index(".aot_stack")
    assert c.metadata()["memory_plan"]["stack_region"] == "isram"
    # ram+stack is where the port puts it anyway: no script needed for it.
    c = compile_model(HELLO, AN386, name="hello", memory_regions="ram+stack",
                      measure_code=False)
    assert c.plan.stack_region == "ram" and "codegen/hello_regions.ld" not in c.files


SPEECH = MODELS_DIR / "tflm_micro_speech.tflite"


def test_a_group_shares_one_array_per_region_and_one_script():
    g = compile_group([KWS, SPEECH], AN386, names=["kws", "ms"], name="grp",
                      memory_regions="ram:6K,psram+const+stack", measure_code=False)
    kws, ms = g.models
    array = max(m.plan.regions.get("psram", 0) for m in g.models)
    assert array > 0 and all(m.plan.region_constants["psram"] for m in g.models)
    assert ("uint8_t grp_region_psram[%d]\n    __attribute__((section(\".aot_region.psram\")"
            % array) in g.files["codegen/grp.c"]
    for m in g.models:
        source = g.files[f"codegen/{m.name}.c"]
        assert f"{m.name}_region_psram" not in source
        if m.plan.regions:
            assert "extern uint8_t grp_region_psram[];" in source
    # One script: both models' constants, the shared array, then the stack.
    assert [p for p in g.files if p.endswith(".ld")] == ["codegen/grp_regions.ld"]
    script = g.files["codegen/grp_regions.ld"]
    assert script.count("AOT_PSRAM (rw)") == 1
    order = [script.index(k) for k in (".aot_const.kws.psram :", ".aot_const.ms.psram :",
                                       ".aot_region.psram (NOLOAD)", ".aot_stack (NOLOAD)")]
    assert order == sorted(order)
    assert g.metadata()["group"]["regions"] == {"psram": {"symbol": "grp_region_psram",
                                                          "bytes": array}}
    assert g.metadata()["build"]["linker_scripts"] == ["codegen/grp_regions.ld"]


@pytest.mark.slow
def test_a_group_refuses_memories_it_cannot_share():
    from aot.compile import group_models
    a = compile_model(KWS, "qemu/mps3-an547", name="a", memory_regions="ram:9K,isram+stack",
                      measure_code=False)
    b = compile_model(KWS, "qemu/mps3-an547", name="b", memory_regions="ram:9K,isram",
                      measure_code=False)
    with pytest.raises(CompileError, match=r"put the stack in different memories \(isram, ram\)"):
        group_models([a, b], "g")
    # Each model fits 12K of a 14K sram alone; both models' constants and the array do not.
    a, b = (compile_model(KWS, "qemu/mps3-an547", name=n, measure_code=False,
                          memory_regions="ram:9K,sram:12K+const") for n in "ab")
    import dataclasses
    small = dataclasses.replace(a.board.memory, pools=tuple(
        dataclasses.replace(p, length=14 * 1024) if p.name == "sram" else p
        for p in a.board.memory.pools))
    board = dataclasses.replace(a.board, memory=small)
    a, b = (dataclasses.replace(m, board=board) for m in (a, b))
    with pytest.raises(MemoryRegionError, match=r"model group 'g' needs \d+ bytes of sram "
                       r"\(shared workspace array \d+, constants copied there \d+: a \d+, "
                       r"b \d+\) but sram has 14336"):
        group_models([a, b], "g")
