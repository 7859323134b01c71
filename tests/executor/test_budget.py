"""The memory budget: size parsing, the order of the choices, the plan chosen, the refusal."""

from __future__ import annotations

import pytest

from aot.compile import CompileError, compile_group, compile_model
from aot.executor.budget import (OPTIONS, MemoryBudgetError, PlanOption, choose_plan,
                                 open_options, parse_memory_size, ram_bytes)
from aot.executor.memory import MemoryPlanError
from aot.executor import plan_memory
from support.models import MODELS_DIR

KWS = MODELS_DIR / "mlperf_kws_dscnn.tflite"
HELLO = MODELS_DIR / "tflm_hello_world_int8.tflite"


@pytest.mark.parametrize("text, size", [("64K", 65536), ("64k", 65536), ("1M", 1 << 20),
                                        ("65536", 65536), (" 2 KiB ", 2048), ("3MB", 3 << 20),
                                        (4096, 4096)])
def test_sizes_take_k_and_m_suffixes_and_plain_bytes(text, size):
    assert parse_memory_size(text) == size


@pytest.mark.parametrize("text", ["", "64Q", "-1", "0", "1.5K", "K", True, 0])
def test_bad_sizes_are_refused_with_the_forms_accepted(text):
    with pytest.raises(MemoryBudgetError, match="budget"):
        parse_memory_size(text)


def test_budget_errors_are_memory_plan_errors():
    assert issubclass(MemoryBudgetError, MemoryPlanError)


def test_options_go_from_no_copies_no_aliasing_to_everything():
    assert OPTIONS[0] == PlanOption(False, False, False)
    assert OPTIONS[-1] == PlanOption(True, True, True)
    assert len(set(OPTIONS)) == 6


def test_fixed_choices_close_the_options():
    assert open_options(None, None, None) == list(OPTIONS)
    assert open_options(True, None, None) == [o for o in OPTIONS if o.io_in_workspace]
    # No in-place writes means no overlaps either.
    assert open_options(None, False, None) == [o for o in OPTIONS if not o.inplace]
    assert all(not o.overlap for o in open_options(None, None, False))
    assert open_options(False, True, True) == [PlanOption(False, True, True)]


def test_ram_counts_the_aligned_scratch_the_caller_buffers_and_the_state():
    class Plan:
        alignment, workspace_bytes, io_bytes, state_bytes = 8, 13, 5, 7
    assert ram_bytes(Plan()) == 13 + 5 + 7
    assert ram_bytes(Plan(), scratch_bytes=10) == 16 + 10 + 5 + 7


def _kws_plans():
    from aot.frontend import load_model
    from aot.passes import optimize
    graph = optimize(load_model(KWS))
    return lambda o: plan_memory(graph, alignment=4, io_in_workspace=o.io_in_workspace,
                                 inplace=o.inplace)


def test_the_first_option_that_fits_wins_and_the_tried_ones_are_listed():
    plans = _kws_plans()
    big = choose_plan(plans, list(OPTIONS), 1 << 20)
    assert big.option == OPTIONS[0] and [o for o, _ in big.tried] == [OPTIONS[0]]
    assert big.ram == big.plan.workspace_bytes + big.plan.io_bytes
    assert big.cost().startswith("none")
    # Caller i/o costs 16,000 + the 490-byte input + the 12-byte output; inside, 16,000.
    tight = choose_plan(plans, list(OPTIONS), 16_000, io_copy_bytes=502)
    assert tight.option.io_in_workspace and tight.ram == 16_000
    assert [r for _, r in tight.tried][:3] == [16_502] * 3
    assert "copies 502 bytes" in tight.cost()
    assert tight.to_json()["ram_bytes"] == 16_000


def test_nothing_fits_names_the_smallest_reachable_the_budget_and_the_peak():
    with pytest.raises(MemoryBudgetError) as err:
        choose_plan(_kws_plans(), list(OPTIONS), 15_000, where="model 'kws'")
    text = str(err.value)
    assert "memory budget of 15000 bytes" in text
    assert "smallest plan reachable needs 16000 bytes" in text and "1000 bytes over" in text
    # The peak: two 8,000-byte activations live at one depthwise convolution.
    assert "16000 bytes are live" in text and "(8000 bytes, written at step 0" in text
    assert "fused_1_depthwise_conv2d" in text
    assert [o for o, _ in err.value.tried] == list(OPTIONS)
    assert min(r for _, r in err.value.tried) == 16_000


@pytest.mark.slow
def test_compile_model_with_a_budget_trades_aliasing_for_ram():
    roomy = compile_model(KWS, "qemu/mps2-an386", memory_budget="64K", measure_code=False)
    assert roomy.budget.option == PlanOption(False, False, False)
    assert roomy.sizes.workspace == 16_000 and roomy.sizes.io == 502
    assert not [a for a in roomy.plan.aliases if a[2] != "view"]
    tight = compile_model(KWS, "qemu/mps2-an386", memory_budget=10_000, measure_code=False)
    assert tight.budget.option == PlanOption(False, True, True)
    assert tight.sizes.ram == tight.budget.ram <= 10_000
    assert tight.budget.aliased_pairs == 9
    assert tight.metadata()["memory_budget"]["ram_bytes"] == tight.sizes.ram
    # Without a budget, the default plan (i/o inside, overlaps) and no budget record.
    plain = compile_model(KWS, "qemu/mps2-an386", measure_code=False)
    assert plain.budget is None and "memory_budget" not in plain.metadata()
    assert plain.plan.io_in_workspace and plain.sizes.workspace == 9_280


@pytest.mark.slow
def test_compile_model_honours_the_choices_given_with_a_budget():
    with pytest.raises(MemoryBudgetError, match=r"needs 16000 bytes \(i/o inside, no aliasing"):
        compile_model(KWS, "qemu/mps2-an386", memory_budget="12K", inplace=False,
                      measure_code=False)
    kept = compile_model(KWS, "qemu/mps2-an386", memory_budget="1M", io_in_workspace=True,
                         measure_code=False)
    assert kept.budget.option == PlanOption(True, False, False)


def test_a_bad_budget_fails_before_anything_is_lowered():
    with pytest.raises(MemoryBudgetError, match="'64 bananas' is not a size"):
        compile_model(KWS, "qemu/mps2-an386", memory_budget="64 bananas")


def test_a_group_refuses_a_budget():
    with pytest.raises(CompileError, match="not supported yet: memory_budget for a model group"):
        compile_group([HELLO, HELLO], "host/native", names=["a", "b"], memory_budget="1M")


def test_the_boards_ram_caps_a_larger_budget():
    # The micro:bit leaves 12,288 bytes (16 KiB less a 4 KiB stack): the cheapest plan
    # (16,502 bytes) would fit 1 MiB but not the board.
    c = compile_model(KWS, "qemu/microbit", memory_budget="1M", measure_code=False)
    assert c.budget.budget == 12_288 and c.budget.given == 1 << 20
    assert c.budget.option == PlanOption(False, True, True) and c.sizes.ram == 9_782
    assert "the board leaves 12288 of the 1048576 asked" in c.budget.summary()
    with pytest.raises(MemoryBudgetError, match=r"12288 bytes \(the board's RAM less its "
                                                r"stack; 1048576 asked\)"):
        choose_plan(_kws_plans(), list(OPTIONS), 1 << 20, board_bytes=12_288)
