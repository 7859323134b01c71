"""aot.executor.stages: which stage runs the leading layers, chosen by the planned RAM of
the plans a fake planner makes (no kernels lowered, no memory planned)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from test_patch_codegen import _int8_chain

from aot.executor import stages
from aot.executor.budget import MemoryBudgetError
from aot.executor.memory import MemoryPlanError
from aot.executor.stages import PatchChoice, StageRequest, StreamChoice, choose_planned
from aot.passes import PassContext, optimize


@dataclass
class _Sizes:
    ram: int
    workspace: int


@dataclass
class _Plan:
    choice: object
    sizes: _Sizes


class _Planner:
    """Plans each choice with the RAM ``ram[kind]`` (kind: ``off``, ``stream``,
    ``patch``); a kind mapped to an exception class raises it.  Records the choices."""

    def __init__(self, **ram):
        self.ram, self.made = ram, []

    def __call__(self, choice):
        self.made.append(choice)
        kind = {StreamChoice: "stream", PatchChoice: "patch"}.get(type(choice), "off")
        ram = self.ram[kind]
        if isinstance(ram, type):
            raise ram(f"{kind} does not fit")
        return _Plan(choice, _Sizes(ram, ram))


@pytest.fixture(scope="module")
def chain():
    """A graph with stages: conv, max pool, depthwise, pointwise on 12x11 int8."""
    return optimize(_int8_chain(), PassContext(opt_level=2))


@pytest.fixture
def generous(monkeypatch):
    """An allowance under which the chain has a default stream stage (4 layers, estimated
    1,056 bytes) and an "auto" patch stage (2 layers, 2x2)."""
    monkeypatch.setattr(stages, "PATCH_ALLOWANCE", 0.5)


def _choose(planner, graph, laps=None, **request):
    return choose_planned(planner, StageRequest(**request), lambda: graph,
                          (laps if laps is not None else []).append)


def test_the_default_keeps_the_stream_stage_with_less_ram(chain, generous):
    planner = _Planner(off=4000, stream=3000)
    laps = []
    chosen = _choose(planner, chain, laps)
    assert chosen.choice == StreamChoice(4, 1, default=True, estimate=1056)
    assert planner.made == ["off", chosen.choice] and laps == ["planning"]


def test_the_default_keeps_the_plan_without_a_stage_on_a_tie(chain, generous):
    planner = _Planner(off=3000, stream=3000)
    assert _choose(planner, chain).choice == "off" and len(planner.made) == 2


def test_the_default_does_not_plan_a_stream_its_estimate_does_not_beat(chain, generous):
    planner = _Planner(off=1000, stream=500)  # the plan's 1,000 bytes <= the 1,056 estimated
    assert _choose(planner, chain).choice == "off" and planner.made == ["off"]


def test_the_default_streams_what_does_not_fit_the_board_without(chain, generous):
    assert _choose(_Planner(off=MemoryPlanError, stream=9000), chain).choice.nodes == 4
    with pytest.raises(MemoryPlanError, match="off does not fit"):  # the first plan's error
        _choose(_Planner(off=MemoryPlanError, stream=MemoryPlanError), chain)


def test_no_default_stream_where_stages_are_not_supported(chain, generous):
    planner = _Planner(off=4000, stream=10)
    assert _choose(planner, chain, stream_by_default=False).choice == "off"
    assert planner.made == ["off"]


def test_no_default_stream_within_five_percent_more_work(chain):
    planner = _Planner(off=4000, stream=10)
    assert _choose(planner, chain).choice == "off" and planner.made == ["off"]


def test_auto_keeps_the_patch_stage_with_less_ram(chain, generous):
    assert _choose(_Planner(off=4000, patch=3000), chain, patches="auto").choice == \
        PatchChoice(2, (2, 2))
    assert _choose(_Planner(off=3000, patch=3000), chain, patches="auto").choice == "off"


def test_auto_under_a_budget_keeps_the_plan_that_meets_it(chain, generous):
    budget = dict(patches="auto", budget=True)
    assert _choose(_Planner(off=MemoryBudgetError, patch=3000), chain, **budget).choice == \
        PatchChoice(2, (2, 2))
    assert _choose(_Planner(off=3000, patch=MemoryBudgetError), chain, **budget).choice == "off"
    with pytest.raises(MemoryBudgetError, match="off does not fit"):
        _choose(_Planner(off=MemoryBudgetError, patch=MemoryBudgetError), chain, **budget)


def test_a_budget_tries_the_stages_least_extra_work_first(chain):
    planner = _Planner(off=MemoryBudgetError, stream=MemoryBudgetError, patch=100)
    chosen = _choose(planner, chain, budget=True)
    # Three stream stages (2, 3 and 4 layers in bands of 1 row) cost less work than the
    # patch stage, which is the fourth and last tried.
    assert planner.made[0] is None and chosen.choice == PatchChoice(2, (2, 2))
    assert [c.nodes for c in planner.made[1:4]] == [2, 3, 4]
    assert len(planner.made) == 1 + stages.BUDGET_STAGES


def test_a_budget_no_stage_meets_fails_with_the_plan_without_a_stage(chain):
    planner = _Planner(off=MemoryBudgetError, stream=MemoryBudgetError,
                       patch=MemoryBudgetError)
    with pytest.raises(MemoryBudgetError, match="off does not fit"):
        _choose(planner, chain, budget=True)


@pytest.mark.parametrize("request_", [
    dict(patches=(2, 2)), dict(patches="off", budget=True), dict(budget=True, regions=True)])
def test_an_asked_stage_or_a_budget_with_regions_is_one_plan(chain, request_):
    planner = _Planner(off=MemoryBudgetError, stream=1, patch=1)
    with pytest.raises(MemoryBudgetError):
        _choose(planner, chain, **request_)
    assert planner.made == [request_.get("patches")]
