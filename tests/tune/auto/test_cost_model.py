"""The boosted-trees cost model learns an interaction a linear model cannot."""

import pytest
import numpy as np

from aot.tune.auto.model import BoostedTrees


def _data(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, size=(n, 4))
    # cost depends on a product of two features and a threshold on a third
    y = 1000 * (1 + 3 * x[:, 0] * x[:, 1] + 2 * (x[:, 2] > 0.5))
    return x, y


@pytest.mark.slow
def test_it_ranks_unseen_points():
    x, y = _data(200, 0)
    model = BoostedTrees().fit(x, y)
    xt, yt = _data(100, 1)
    pred = model.predict(xt)
    rank = np.corrcoef(np.argsort(np.argsort(pred)), np.argsort(np.argsort(yt)))[0, 1]
    assert rank > 0.9
    # and beats the best linear fit of log(cost)
    a = np.c_[np.ones(len(x)), x]
    w = np.linalg.lstsq(a, np.log(y), rcond=None)[0]
    linear = np.c_[np.ones(len(xt)), xt] @ w
    assert ((pred - np.log(yt)) ** 2).mean() < ((linear - np.log(yt)) ** 2).mean()


def test_constant_costs_give_a_constant():
    x, _ = _data(10, 2)
    model = BoostedTrees().fit(x, np.full(10, 500.0))
    np.testing.assert_allclose(model.predict(x), np.log(500.0))
    assert model.fitted
