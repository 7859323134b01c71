"""Tuners on synthetic spaces whose best config is known: they must find it."""

import pytest

from aot.kernels.template import ConfigSpace, Knob
from aot.tune.tuner import EvolutionTuner, GridTuner, RandomTuner, run_search

SPACE = ConfigSpace([Knob(f"k{i}", tuple(range(4))) for i in range(4)])  # 256 configs
TARGET = {"k0": 3, "k1": 0, "k2": 2, "k3": 1}


def cost(config):
    """Separable, with one best config (TARGET) and a failed corner."""
    if config["k0"] == 0 and config["k1"] == 3:
        return None  # a candidate that "crashed"
    return 100 + sum((config[k] - v) ** 2 * (i + 1) for i, (k, v) in enumerate(TARGET.items()))


def measure_with(log):
    def measure(configs):
        log.extend(c.index for c in configs)
        return [cost(c) for c in configs]
    return measure


@pytest.mark.parametrize("cls", [GridTuner, RandomTuner, EvolutionTuner])
def test_exhaustive_search_finds_the_best_and_never_repeats(cls):
    seen = []
    best, best_cost = run_search(cls(SPACE, seed=1), measure_with(seen), trials=1000,
                                 batch_size=16)
    assert sorted(seen) == list(range(len(SPACE)))
    assert dict(best) == TARGET and best_cost == 100


@pytest.mark.parametrize("seed", range(5))
def test_evolution_finds_the_best_in_an_eighth_of_the_space(seed):
    """Random search has a 1-in-8 chance per seed; the cost model makes it sure."""
    seen = []
    best, best_cost = run_search(EvolutionTuner(SPACE, seed=seed), measure_with(seen),
                                 trials=32, batch_size=8)
    assert len(seen) == len(set(seen)) == 32
    assert dict(best) == TARGET and best_cost == 100


def test_the_cost_model_is_exact_on_an_additive_cost():
    tuner = EvolutionTuner(SPACE)
    configs = [SPACE[i] for i in range(0, 256, 5)]
    tuner.update(configs, [cost(c) for c in configs])
    tuner.fit()
    for c in (SPACE.config(TARGET), SPACE[77], SPACE[200]):
        assert tuner.predict(c) == pytest.approx(cost(c), abs=0.5)


def test_random_search_with_the_same_budget_is_seeded_and_valid():
    a, b = [], []
    run_search(RandomTuner(SPACE, seed=7), measure_with(a), trials=40, batch_size=8)
    run_search(RandomTuner(SPACE, seed=7), measure_with(b), trials=40, batch_size=8)
    assert a == b and len(set(a)) == 40


def test_resumed_tuner_skips_measured_configs():
    tuner = GridTuner(SPACE)
    tuner.update([SPACE[0], SPACE[1]], [cost(SPACE[0]), None])
    assert [c.index for c in tuner.next_batch(3)] == [2, 3, 4]
    assert tuner.best == SPACE[0]


def test_early_stopping_ends_a_search_that_stopped_improving():
    seen = []
    flat = ConfigSpace([Knob("a", tuple(range(100)))])
    best, _ = run_search(GridTuner(flat), lambda cs: seen.extend(cs) or [5] * len(cs),
                         trials=100, batch_size=4, early_stopping=8)
    assert best == flat[0]
    assert len(seen) == 12  # the first batch improves, two more do not
