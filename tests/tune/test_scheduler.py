"""The task scheduler: warm-up, gradient allocation, budget, early stopping."""

import pytest

from aot.tune.scheduler import Task, TaskScheduler


class Curve:
    """A fake tuner: its n-th config costs ``costs[n]`` (then the last one again)."""

    def __init__(self, costs, size=1000):
        self.costs, self.size = costs, size
        self.measured = {}
        self.best_cost = None
        self.best = None

    def has_next(self):
        return len(self.measured) < self.size

    def next_batch(self, size):
        n = len(self.measured)
        return [Cfg(i) for i in range(n, min(self.size, n + size))]

    def update(self, configs, costs):
        for c, cost in zip(configs, costs):
            self.measured[c.index] = cost
            if cost is not None and (self.best_cost is None or cost < self.best_cost):
                self.best, self.best_cost = c, cost


class Cfg:
    def __init__(self, index):
        self.index = index


def task(name, costs, weight=1.0, **kw):
    tuner = Curve(costs, **kw)

    def measure(configs):   # the caller's measure notes the default's cost
        out = [costs[min(c.index, len(costs) - 1)] for c in configs]
        if configs[0].index == 0:
            t.default_cost = out[0]
        return out
    t = Task(name, tuner, measure, weight=weight, first=[Cfg(0)])
    return t


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        self.now += 1.0     # one second per look at the clock
        return self.now


def test_the_improving_heavy_task_gets_the_trials():
    fast = task("improving", [1000 - 10 * i for i in range(100)], weight=4)
    flat = task("flat", [1000] * 100, weight=1)
    sched = TaskScheduler([fast, flat], batch_size=4, max_trials=60, epsilon=0.0)
    sched.run()
    # warm-up measures each default then one batch, round robin
    assert sched.order[:4] == ["improving", "improving", "flat", "flat"]
    # then the weighted, improving task first: it reaches its cap before the
    # flat one gets much more than its warm-up
    first = sched.order[4:4 + 14]
    assert first.count("improving") >= 3 * first.count("flat")
    assert fast.trials == 60 and flat.trials == 60   # no budget: both reach the cap
    assert sched.estimate() == 4 * fast.best + flat.best
    assert sched.untuned() == 5 * 1000


def test_the_budget_ends_the_run():
    a = task("a", [100 - i for i in range(100)])
    steps = []
    sched = TaskScheduler([a], batch_size=2, budget=5.0, clock=Clock(),
                          progress=steps.append)
    sched.run()
    assert 1 <= len(steps) <= 5 and steps[-1].elapsed <= 6
    assert "estimated total" in steps[-1].line() and "1/1" in steps[-1].line()


def test_early_stopping_and_an_exhausted_space_end_a_task():
    stuck = task("stuck", [50] * 100)
    small = task("small", [10, 9, 8], size=3)
    sched = TaskScheduler([stuck, small], batch_size=4, max_trials=100, early_stopping=8)
    sched.run()
    assert stuck.trials == 9          # the default, then two batches without a gain
    assert small.trials == 3 and small.best == 8


def test_a_schedule_needs_a_limit():
    with pytest.raises(ValueError, match="budget or a number of trials"):
        TaskScheduler([], batch_size=4)


class Wall:
    """A clock that only moves while a batch is measured: ``seconds(n)`` per batch of n."""

    def __init__(self, seconds):
        self.now, self.seconds = 0.0, seconds

    def __call__(self):
        return self.now

    def measuring(self, measure):
        def timed(configs):
            self.now += self.seconds(len(configs))
            return measure(configs)
        return timed


def test_a_batch_that_would_not_finish_in_the_budget_is_not_issued():
    wall = Wall(lambda n: 10.0)           # every batch takes 10 s
    a = task("a", [100 - i for i in range(100)])
    a.measure = wall.measuring(a.measure)
    sched = TaskScheduler([a], batch_size=4, budget=35.0, clock=wall)
    sched.run()
    # batches at 0, 10 and 20 s end at 30 s; one at 30 s would end at 40 s
    assert len(sched.order) == 3 and sched.elapsed == 30.0 and sched.overrun == 0.0
    assert sched.stopped_early == ("a", 10.0, 5.0)


def test_the_estimate_is_per_task_and_a_slower_batch_is_reported_as_overrun():
    slow, quick = task("slow", [100 - i for i in range(100)]), task("quick", [50] * 100)
    wall = Wall(lambda n: 1.0)
    slow.measure = wall.measuring(slow.measure)
    quick.measure = wall.measuring(quick.measure)
    sched = TaskScheduler([slow, quick], batch_size=4, budget=8.5, clock=wall, epsilon=0.0)
    wall.seconds = lambda n: 1.0 if n == 1 else 3.0   # the defaults are quick to measure
    sched.run()
    # warm-up: slow's default (1 s) and batch (3 s), quick's (1 s, 3 s) -> 8 s;
    # no 3 s batch fits in the 0.5 s left
    assert sched.order == ["slow", "slow", "quick", "quick"] and sched.overrun == 0.0
    assert sched.stopped_early[1:] == (3.0, 0.5)



def test_a_batch_slower_than_its_estimate_is_reported_as_overrun():
    late = task("late", [100 - i for i in range(100)])
    wall = Wall(lambda n: 1.0)
    late.measure = wall.measuring(late.measure)
    sched = TaskScheduler([late], batch_size=4, budget=6.5, clock=wall)
    wall.seconds = lambda n: 5.0 if wall.now >= 2 else 1.0   # the third batch is slower
    sched.run()
    # default 0-1 s, a batch 1-2 s, then one expected to take 1 s takes 5
    assert len(sched.order) == 3 and sched.elapsed == 7.0 and sched.overrun == 0.5
    assert sched.stopped_early is None


def test_aot_tune_says_how_a_budgeted_run_ended():
    from aot.tune.session import budget_notes

    wall = Wall(lambda n: 10.0)
    a = task("conv2d 1x8", [100 - i for i in range(100)])
    a.measure = wall.measuring(a.measure)
    sched = TaskScheduler([a], batch_size=4, budget=35.0, clock=wall)
    sched.run()
    assert budget_notes(sched) == ["stopped 5.0 s before the --budget of 35 s: the next "
                                   "batch (conv2d 1x8) would take about 10.0 s, as its last "
                                   "one did"]
    sched.overrun, sched.elapsed = 2.5, 37.5
    assert budget_notes(sched) == ["the run took 37.5 s, 2.5 s past the --budget of 35 s: a "
                                   "batch took longer than expected from its workload's last "
                                   "one (or was the first of its size)"]
