"""The cost model on hand-written loops whose cycles the TRMs' tables give exactly.

Each expected figure is worked out in the comments from the core's
Technical Reference Manual (docs/cycles.md cites them); the model must
reproduce it, block by block, from a histogram like the one a trace gives.
"""

from __future__ import annotations

from collections import Counter

import pytest

from aot.cycles import CostModel, CycleModelError, MemoryTiming, Program, get_core

# loads_loop, per iteration: LDR 2, LDR 1 and LDR 1 (pipelined: the address is
# not the loaded register), SMLAD 1, STR 1 (store buffer; the next is no load
# or store), ADDS 1, SUBS 1, BNE 1 + P (P = 2) when taken, 1 when not.
M4_TAKEN, M4_LAST = 2 + 1 + 1 + 1 + 1 + 1 + 1 + 3, 2 + 1 + 1 + 1 + 1 + 1 + 1 + 1
ITERATIONS = 100


def _loop_edges(program: Program, symbol: str, iterations: int) -> Counter:
    start = program.address_of(symbol)
    block = program.block(start)
    return Counter({(start, 512, start): iterations - 1, (start, 512, block.end): 1})


def test_a_pipelined_load_loop_costs_what_the_m4_trm_says(loops_m4):
    program = Program(loops_m4)
    est = CostModel(program, get_core("cortex-m4")).estimate(
        _loop_edges(program, "loads_loop", ITERATIONS))
    assert est.instructions == 8 * ITERATIONS
    assert est.cycles == (ITERATIONS - 1) * M4_TAKEN + M4_LAST == 1098


def test_stack_multiples_divide_and_return(loops_m4):
    # PUSH {r4-r7, lr} 1 + 5, MOVS 1, UDIV 12 (the worst of 2-12),
    # POP {r4-r7, pc} 1 + 5 + P with P = 3 for a load into the PC.
    program = Program(loops_m4)
    start = program.address_of("stack_and_divide")
    block = program.block(start)
    assert [i.name for i in block.insns] == ["push", "mov", "udiv", "pop"]
    est = CostModel(program, get_core("cortex-m4")).estimate(
        Counter({(start, 512, program.address_of("reset")): 1}))  # returns elsewhere
    assert est.cycles == 6 + 1 + 12 + 9


def test_wait_states_are_board_parameters(loops_m4):
    # Two fetch wait states on each taken branch, one data wait state per access.
    program = Program(loops_m4)
    memory = MemoryTiming(fetch_wait_states=2, data_wait_states=1)
    est = CostModel(program, get_core("cortex-m4"), memory).estimate(
        _loop_edges(program, "loads_loop", ITERATIONS))
    assert est.cycles == 1098 + 4 * ITERATIONS + 2 * (ITERATIONS - 1)


def test_the_m0plus_table_prices_armv6m_code(loop_m0plus):
    # LDR 2, LDR 2 (no pipelining), MULS 1, SUBS 1, BNE 2 taken / 1 not taken.
    program = Program(loop_m0plus)
    est = CostModel(program, get_core("cortex-m0plus")).estimate(
        _loop_edges(program, "loop", 10))
    assert est.cycles == 9 * 8 + 7


def test_a_core_without_an_instruction_class_says_so(loops_m4):
    program = Program(loops_m4)
    with pytest.raises(CycleModelError, match="cortex-m0plus has no timing for 'smlad"):
        CostModel(program, get_core("cortex-m0plus")).estimate(
            _loop_edges(program, "loads_loop", 2))


def test_a_fall_through_that_is_not_the_next_address_is_refused(loops_m4):
    program = Program(loops_m4)
    start = program.address_of("stack_and_divide") + 2  # movs, udiv, pop: ends at a POP
    with pytest.raises(CycleModelError, match="does not branch"):
        # a block cut short by QEMU at a page end would look like this if the rule were wrong
        CostModel(program, get_core("cortex-m4")).estimate(
            Counter({(start, 1, 0x1234): 1}))


@pytest.mark.parametrize("core", ["cortex-m7", "cortex-m33", "cortex-m55", "cortex-m3"])
def test_every_core_prices_the_m4_loop_without_error(loops_m4, core):
    program = Program(loops_m4)
    est = CostModel(program, get_core(core)).estimate(_loop_edges(program, "loads_loop", 10))
    assert est.instructions == 80 and est.cycles >= 40  # at most dual issue: 2 per cycle


def test_a_block_qemu_split_costs_what_the_whole_block_costs(loops_m4):
    # QEMU ends blocks at 1 KiB pages and at its length limit; the pipeline does not.
    # Cut the loop after its first LDR: the second LDR still pipelines behind it.
    program = Program(loops_m4)
    start = program.address_of("loads_loop")
    end = program.block(start).end
    model = CostModel(program, get_core("cortex-m4"))
    whole = model.estimate(Counter({(start, 512, end): 1}))
    split = model.estimate(Counter({(start, 1, start + 2): 1, (start + 2, 512, end): 1}))
    assert (split.instructions, split.cycles) == (whole.instructions, whole.cycles) == (8, M4_LAST)


def test_helium_blocks_end_where_the_trace_says(helium_m55):
    # QEMU ends a block after an instruction that writes VPR only when it translated the
    # block without predication in use: the address executed next decides.
    program = Program(helium_m55)
    start = program.address_of("helium")
    names = [i.name for i in program.block(start).insns]
    assert names == ["dls", "vldrw", "vcmp", "vpst", "vadd", "le"]
    after_vcmp = start + 4 + 4 + 4
    cut = program.block(start, 512, after_vcmp)
    assert [i.name for i in cut.insns] == ["dls", "vldrw", "vcmp"]
    # The loop end's own target is a branch, not a cut.
    loop = program.block(start + 4, 512, start + 4)
    assert loop.insns[-1].name == "le" and loop.insns[-1].target == start + 4
    est = CostModel(program, get_core("cortex-m55")).estimate(
        Counter({(start + 4, 512, start + 4): 1}))
    assert est.by_class["mve_load"] == 2 and est.by_class["branch_loop"] == 1  # LE predicted
