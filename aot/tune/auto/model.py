"""A gradient-boosted regression-tree cost model in numpy.

:class:`BoostedTrees` fits ``log(cost)`` from feature rows: each round
fits a regression tree of depth ``depth`` to the residuals (least squares,
splits at feature quantiles) and adds it with a shrinkage ``rate``.  Few
measurements (tens to hundreds per workload) and few features (under 30)
make this fast enough to refit after every batch, so no library is needed.

The search ranks candidates by :meth:`predict`; only the order matters, so
``log`` keeps the big workloads from dominating the squared error and
makes the model's errors relative.
"""

from __future__ import annotations

import numpy as np


class _Tree:
    """A regression tree as arrays: node -> (feature, threshold, left, right, value)."""

    def __init__(self, depth: int, min_leaf: int, bins: int):
        self.depth, self.min_leaf, self.bins = depth, min_leaf, bins
        self.nodes: list[tuple] = []

    def fit(self, x: np.ndarray, r: np.ndarray) -> _Tree:
        self.nodes = []
        self._grow(x, r, np.arange(len(r)), 0)
        return self

    def _grow(self, x, r, idx, level) -> int:
        me = len(self.nodes)
        self.nodes.append((-1, 0.0, -1, -1, float(r[idx].mean())))
        if level >= self.depth or len(idx) < 2 * self.min_leaf:
            return me
        best = None
        base = ((r[idx] - r[idx].mean()) ** 2).sum()
        for f in range(x.shape[1]):
            col = x[idx, f]
            cuts = np.unique(np.quantile(col, np.linspace(0, 1, self.bins + 2)[1:-1]))
            for t in cuts:
                left = col <= t
                nl = int(left.sum())
                if nl < self.min_leaf or len(idx) - nl < self.min_leaf:
                    continue
                rl, rr = r[idx][left], r[idx][~left]
                sse = ((rl - rl.mean()) ** 2).sum() + ((rr - rr.mean()) ** 2).sum()
                if sse < base - 1e-12 and (best is None or sse < best[0]):
                    best = (sse, f, float(t))
        if best is None:
            return me
        _, f, t = best
        left = x[idx, f] <= t
        lo = self._grow(x, r, idx[left], level + 1)
        hi = self._grow(x, r, idx[~left], level + 1)
        self.nodes[me] = (f, t, lo, hi, self.nodes[me][4])
        return me

    def predict(self, x: np.ndarray) -> np.ndarray:
        out = np.empty(len(x))
        for i, row in enumerate(x):
            n = 0
            while self.nodes[n][0] >= 0:
                f, t, lo, hi, _ = self.nodes[n]
                n = lo if row[f] <= t else hi
            out[i] = self.nodes[n][4]
        return out


class BoostedTrees:
    """Least-squares gradient boosting of shallow trees (see the module docstring)."""

    def __init__(self, rounds: int = 60, depth: int = 3, rate: float = 0.2,
                 min_leaf: int = 2, bins: int = 8):
        self.rounds, self.depth, self.rate = rounds, depth, rate
        self.min_leaf, self.bins = min_leaf, bins
        self.base = 0.0
        self.trees: list[_Tree] = []

    @property
    def fitted(self) -> bool:
        return bool(self.trees) or self.base != 0.0

    def fit(self, x: np.ndarray, y: np.ndarray) -> BoostedTrees:
        x = np.asarray(x, dtype=float)
        y = np.log(np.asarray(y, dtype=float))
        self.base = float(y.mean())
        self.trees = []
        pred = np.full(len(y), self.base)
        for _ in range(self.rounds):
            r = y - pred
            if np.abs(r).max() < 1e-9:
                break
            tree = _Tree(self.depth, self.min_leaf, self.bins).fit(x, r)
            self.trees.append(tree)
            pred += self.rate * tree.predict(x)
        return self

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Predicted ``log(cost)`` of each row."""
        x = np.asarray(x, dtype=float)
        out = np.full(len(x), self.base)
        for tree in self.trees:
            out += self.rate * tree.predict(x)
        return out
