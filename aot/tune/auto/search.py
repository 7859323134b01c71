"""The template-free tuner: evolutionary search over sketches, guided by a learned cost model.

:class:`AutoTuner` has the :class:`~aot.tune.tuner.Tuner` interface
(``next_batch``, ``update``, ``prior``, ``best``, ``best_cost``), over an
:class:`~aot.tune.auto.sketch.AutoSpace`.  Each batch:

1. every candidate considered is lowered through the normal pipeline (the
   workload's ``lower``); the loop IR gives its features
   (:mod:`aot.tune.auto.features`) and its C a digest, so candidates whose C
   equals one already measured or proposed are skipped; a candidate that
   does not lower is never proposed;
2. the cost model (:class:`~aot.tune.auto.model.BoostedTrees`) is refitted
   on every successful measurement so far;
3. an evolutionary search: the population starts from the best measured
   configs and random samples of every sketch (the template sketch holds
   the hand schedules), and for ``generations`` rounds produces children
   (one annotation mutated, or a crossover of two parents of the same
   sketch), keeping the ``population`` best by predicted cost;
4. the batch is the best-predicted unmeasured candidates, plus a share
   ``explore`` drawn at random (the model only knows what was measured).

Before two successful measurements, half the batch mutates the best point
so far (the library's schedule: the session measures it first) and half is
a random sample spread evenly over the sketches.
"""

from __future__ import annotations

import hashlib
import random

import numpy as np

from aot.tune.auto.features import config_features, loop_features
from aot.tune.auto.model import BoostedTrees


class AutoTuner:
    """Model-guided evolution over the sketches of one workload."""

    def __init__(self, space, lower, *, seed: int = 0, population: int = 24,
                 generations: int = 3, explore: float = 0.25, max_lowerings: int = 48):
        self.space = space
        self.lower = lower
        self.rng = random.Random(seed)
        self.population = population
        self.generations = generations
        self.explore = explore
        self.max_lowerings = max_lowerings
        self.measured: dict[int, float | None] = {}
        self.best = None
        self.best_cost: float | None = None
        self.model = BoostedTrees()
        self._features: dict[int, np.ndarray | None] = {}
        self._digest: dict[int, str] = {}
        self._seen_digests: set[str] = set()
        self._sketches = list(space.sketches)

    # -- the Tuner interface ---------------------------------------------------

    def has_next(self) -> bool:
        return len(self.measured) < len(self.space)

    def update(self, configs, costs) -> None:
        for config, cost in zip(configs, costs, strict=True):
            self.measured[config.index] = cost
            digest = self._digest.get(config.index)
            if digest is not None:
                self._seen_digests.add(digest)
            if cost is not None and (self.best_cost is None or cost < self.best_cost):
                self.best, self.best_cost = config, cost

    def prior(self, configs, costs) -> None:
        """Measured elsewhere: known to the search, never the best until
        measured here (as :meth:`aot.tune.tuner.Tuner.prior`)."""
        for config, cost in zip(configs, costs, strict=True):
            self.measured[config.index] = cost

    def next_batch(self, size: int):
        self._budget = self.max_lowerings
        taken: set[str] = set()
        ok = [(i, c) for i, c in self.measured.items() if c is not None]
        if len(ok) < 2:
            return self._first_batch(size, taken)
        self._fit(ok)
        ranked = self._evolve()
        n_explore = max(1, round(size * self.explore)) if size > 1 else 0
        out = []
        for _, config in ranked:
            if len(out) >= size - n_explore:
                break
            if self._fresh(config, taken):
                out.append(config)
        out += self._random_batch(size - len(out), taken)
        return out

    # -- internals ---------------------------------------------------------------

    def features(self, config) -> np.ndarray | None:
        """The config's features (None when it does not lower); lowered once."""
        if config.index not in self._features:
            self._budget -= 1
            try:
                kernel = self.lower(config, "auto_probe")
            except Exception:  # a rule that does not apply here: never proposed
                self._features[config.index] = None
                return None
            # the loop IR and the file's prelude: the C up to the kernel's name, and
            # much cheaper than printing the C with its constants
            body = "".join(kernel.prelude) + str(kernel.func.body)
            self._digest[config.index] = hashlib.sha256(body.encode()).hexdigest()
            sketch = [1.0 if config.sketch == s else 0.0 for s in self._sketches]
            self._features[config.index] = np.concatenate(
                [loop_features(kernel.func), config_features(config, self.space.file_knobs),
                 sketch])
        return self._features[config.index]

    def _fresh(self, config, taken: set[str]) -> bool:
        """Lowers, is not measured, and its C is new."""
        if config.index in self.measured or self.features(config) is None:
            return False
        digest = self._digest[config.index]
        if digest in self._seen_digests or digest in taken:
            return False
        taken.add(digest)
        return True

    def _sample(self, sketch: str | None = None):
        name = sketch or self.rng.choice(self._sketches)
        sub = self.space.sketches[name].space
        return self.space[self.space.offsets[name] + self.rng.randrange(len(sub))]

    def _first_batch(self, size: int, taken: set[str]) -> list:
        """Nothing to learn from yet: half the batch mutates the best measured
        point (the library's schedule, which the session measures first: the
        seed), half samples every sketch evenly."""
        out = []
        if self.best is not None:
            muts = self.space.mutations(self.best)
            self.rng.shuffle(muts)
            for config in muts:
                if len(out) >= size // 2:
                    break
                if self._fresh(config, taken):
                    out.append(config)
        return out + self._random_batch(size - len(out), taken)

    def _random_batch(self, size: int, taken: set[str]) -> list:
        out = []
        tries = 0
        while len(out) < size and tries < 20 * max(size, 1) and self._budget > -size * 4:
            tries += 1
            config = self._sample(self._sketches[len(out) % len(self._sketches)])
            if self._fresh(config, taken):
                out.append(config)
        return out

    def _fit(self, ok) -> None:
        rows = [(self.features(self.space[i]), c) for i, c in ok]
        rows = [(f, c) for f, c in rows if f is not None]
        self.model.fit(np.stack([f for f, _ in rows]), np.array([c for _, c in rows]))

    def _predict(self, configs) -> list[tuple[float, object]]:
        good = [(c, self.features(c)) for c in configs]
        good = [(c, f) for c, f in good if f is not None]
        if not good:
            return []
        scores = self.model.predict(np.stack([f for _, f in good]))
        return sorted(zip(scores.tolist(), (c for c, _ in good)), key=lambda p: (p[0],
                                                                                  p[1].index))

    def _evolve(self) -> list[tuple[float, object]]:
        ranked = sorted((c, i) for i, c in self.measured.items() if c is not None)
        start = [self.space[i] for _, i in ranked[:self.population // 2]]
        start += [self._sample() for _ in range(self.population)]
        pop = self._predict(start)[:self.population]
        seen = {c.index: (s, c) for s, c in pop}
        for _ in range(self.generations):
            if self._budget <= 0 or not pop:
                break
            kids = []
            for _ in range(self.population):
                a = self._pick(pop)
                if self.rng.random() < 0.3:
                    child = self.space.crossover(a, self._pick(pop), self.rng)
                else:
                    muts = self.space.mutations(a)
                    child = self.rng.choice(muts) if muts else None
                if child is not None and child.index not in seen:
                    kids.append(child)
                if self._budget <= 0:
                    break
            for s, c in self._predict(kids):
                seen[c.index] = (s, c)
            pop = sorted(seen.values(), key=lambda p: (p[0], p[1].index))[:self.population]
        return sorted(seen.values(), key=lambda p: (p[0], p[1].index))

    def _pick(self, pop):
        """Tournament of two by predicted cost."""
        a, b = self.rng.choice(pop), self.rng.choice(pop)
        return a[1] if a[0] <= b[0] else b[1]
