"""Search strategies over a :class:`~aot.kernels.template.ConfigSpace`.

Every tuner proposes configs in batches (:meth:`Tuner.next_batch`), never
the same config twice (configs already measured, for example loaded from a
log to resume a session, are passed to :meth:`Tuner.update` first; those
of another model's log to :meth:`Tuner.prior`), and learns from the costs
it is given (``None`` for a failed candidate).

* :class:`GridTuner`: configs in index order.
* :class:`RandomTuner`: uniformly among the configs not yet measured.
* :class:`EvolutionTuner`: model-guided: the children of the best measured
  configs (one or two knobs changed, or a crossover of two parents) and a
  random sample of the rest of the space, ranked by a cost model fitted on
  the measurements (additive in the knob values: ridge least squares on
  their one-hot encoding); a share of random configs keeps exploring.

:func:`run_search` is the loop with early stopping: it ends after
``trials`` configs, when the space is exhausted, or after
``early_stopping`` trials without improving the best cost.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np

from aot.kernels.template import Config, ConfigSpace


class Tuner:
    """Base: deduplication and the best config so far."""

    def __init__(self, space: ConfigSpace, seed: int = 0):
        self.space = space
        self.rng = random.Random(seed)
        self.measured: dict[int, float | None] = {}
        self.best: Config | None = None
        self.best_cost: float | None = None

    def has_next(self) -> bool:
        return len(self.measured) < len(self.space)

    def update(self, configs: list[Config], costs: list[float | None]) -> None:
        for config, cost in zip(configs, costs, strict=True):
            self.measured[config.index] = cost
            if cost is not None and (self.best_cost is None or cost < self.best_cost):
                self.best, self.best_cost = config, cost

    def prior(self, configs: list[Config], costs: list[float | None]) -> None:
        """Configs measured elsewhere (another model's records with the same
        workload): known to the search, which ranks and breeds from them and does
        not propose them again, but never the best until measured here
        (:meth:`update`)."""
        for config, cost in zip(configs, costs, strict=True):
            self.measured[config.index] = cost

    def next_batch(self, size: int) -> list[Config]:
        raise NotImplementedError

    def _unmeasured(self, indices, size: int, taken: set[int]) -> list[Config]:
        out = []
        for i in indices:
            if len(out) >= size:
                break
            if i not in self.measured and i not in taken:
                taken.add(i)
                out.append(self.space[i])
        return out

    def _random(self, size: int, taken: set[int]) -> list[Config]:
        n = len(self.space)
        free = n - len(self.measured) - len(taken)
        if free <= 0:
            return []
        if free * 4 < n or n <= 4096:  # few left: pick among the free ones directly
            left = [i for i in range(n) if i not in self.measured and i not in taken]
            picks = self.rng.sample(left, min(size, len(left)))
        else:
            picks = []
            while len(picks) < min(size, free):
                i = self.rng.randrange(n)
                if i not in self.measured and i not in taken and i not in picks:
                    picks.append(i)
        taken.update(picks)
        return [self.space[i] for i in picks]


class GridTuner(Tuner):
    """Configs in index order."""

    def next_batch(self, size: int) -> list[Config]:
        return self._unmeasured(range(len(self.space)), size, set())


class RandomTuner(Tuner):
    """Uniformly random configs, none repeated."""

    def next_batch(self, size: int) -> list[Config]:
        return self._random(size, set())


class EvolutionTuner(Tuner):
    """Mutations and crossovers of the best configs, ranked by an additive cost model.

    ``explore`` is the share of each batch drawn at random; the first batch
    (nothing measured yet) is all random.
    """

    def __init__(self, space: ConfigSpace, seed: int = 0, *, parents: int = 4,
                 explore: float = 0.25, pool: int = 256):
        super().__init__(space, seed)
        self.parents = parents
        self.pool = pool
        self.explore = explore

    def _features(self, config: Config) -> np.ndarray:
        """One-hot knob values (and a constant): the cost model's inputs."""
        row = [1.0]
        for knob in self.space.knobs:
            row += [1.0 if config[knob.name] == v else 0.0 for v in knob.values]
        return np.array(row)

    def fit(self) -> None:
        """Fit the additive cost model (ridge least squares on one-hot knob
        values) to the successful measurements."""
        ok = [(self.space[i], c) for i, c in self.measured.items() if c is not None]
        if not ok:
            self._weights = None
            return
        x = np.stack([self._features(cfg) for cfg, _ in ok])
        y = np.array([float(c) for _, c in ok])
        ridge = 1e-3 * np.eye(x.shape[1])
        ridge[0, 0] = 0.0
        self._weights = np.linalg.solve(x.T @ x + ridge * len(ok), x.T @ y)

    def predict(self, config: Config) -> float:
        """The cost the model expects for ``config`` (0 before any success)."""
        if getattr(self, "_weights", None) is None:
            return 0.0
        return float(self._features(config) @ self._weights)

    def _children(self, taken: set[int]) -> list[Config]:
        ranked = sorted(((c, i) for i, c in self.measured.items() if c is not None))
        parents = [self.space[i] for _, i in ranked[:self.parents]]
        kids: dict[int, Config] = {}
        for p in parents:
            for child in self.space.neighbours(p):
                kids[child.index] = child
                # two knobs changed: the neighbours of a neighbour, sampled
                for grandchild in self.rng.sample(self.space.neighbours(child),
                                                  min(3, len(self.space.neighbours(child)))):
                    kids[grandchild.index] = grandchild
        for a in parents:
            for b in parents:
                if a.index < b.index:
                    mixed = {k.name: (a if self.rng.random() < 0.5 else b)[k.name]
                             for k in self.space.knobs}
                    child = self.space.config(mixed)
                    kids[child.index] = child
        return [c for i, c in kids.items() if i not in self.measured and i not in taken]

    def next_batch(self, size: int) -> list[Config]:
        taken: set[int] = set()
        if not any(c is not None for c in self.measured.values()):
            return self._random(size, taken)
        n_explore = max(1, round(size * self.explore)) if size > 1 else 0
        # The model ranks the children and a sample of the rest of the space.
        self.fit()
        pool = {c.index: c for c in self._children(taken)}
        for c in self._random(self.pool, set(pool)):
            pool[c.index] = c
        ranked = sorted(pool.values(), key=lambda c: (self.predict(c), c.index))
        out = ranked[:size - n_explore]
        taken.update(c.index for c in out)
        out += self._random(size - len(out), taken)
        return out


TUNERS: dict[str, type[Tuner]] = {"grid": GridTuner, "random": RandomTuner,
                                  "evolution": EvolutionTuner}


def run_search(tuner: Tuner, measure: Callable[[list[Config]], list[float | None]], *,
               trials: int, batch_size: int = 8, early_stopping: int | None = None,
               on_batch: Callable | None = None) -> tuple[Config | None, float | None]:
    """Measure up to ``trials`` configs proposed by ``tuner``; returns the best.

    ``measure(configs)`` returns one cost per config (None: failed);
    ``on_batch(done, configs, costs)`` is called after each batch.
    """
    done = 0
    since_best = 0
    while done < trials and tuner.has_next():
        if early_stopping is not None and since_best >= early_stopping:
            break
        configs = tuner.next_batch(min(batch_size, trials - done))
        if not configs:
            break
        before = tuner.best_cost
        costs = measure(configs)
        tuner.update(configs, costs)
        done += len(configs)
        since_best = 0 if tuner.best_cost != before else since_best + len(configs)
        if on_batch is not None:
            on_batch(done, configs, costs)
    return tuner.best, tuner.best_cost
