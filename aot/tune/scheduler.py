"""Sharing a time budget among a model's workloads (tasks).

A model's inference time is, for the tunable kernels, ``sum(w_i * c_i)``:
``c_i`` the best cost of workload ``i`` so far and ``w_i`` how many of the
model's groups run it (its weight).  :class:`TaskScheduler` spends the
budget where that sum should fall fastest, as Ansor's task scheduler does
(gradient descent on the objective over the allocation of trials):

1. warm-up: every task measures its ``first`` configs (the default config,
   the untuned kernel, and records of another model to confirm) then one
   batch, round robin, so every task has a cost;
2. then, batch after batch, the task with the largest expected decrease of
   the objective per trial::

       w_i * (alpha * backward_i + (1 - alpha) * forward_i)

   ``backward_i``: how much the task's best fell per trial over its last
   ``window`` trials (recent progress); ``forward_i = c_i / t_i``: an
   optimistic guess that the next ``t_i`` trials gain as much as the first
   did (``t_i`` the task's trials so far), which shrinks as a task gets
   more trials; with probability ``epsilon`` a random task instead.

A task leaves the schedule when its space is exhausted, when it went
``early_stopping`` trials without improving, or after ``max_trials``.  A
batch is issued only if it should finish within the budget: its expected
time is the task's last batch of at least that size (else any task's;
:meth:`TaskScheduler.batch_seconds`), and the run ends when no live task's
next batch fits.  A batch slower than its estimate can still end the run
late: :attr:`TaskScheduler.overrun` says by how much.  Progress is
reported after every batch: the task's best so far and the estimated total
``sum(w_i * c_i)`` against the untuned one.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Task:
    """One workload in the schedule: its tuner, how to measure, its weight."""

    name: str
    tuner: object                       # next_batch / update / has_next / best_cost
    measure: Callable                   # configs -> list[cost | None]
    weight: float = 1.0
    default_cost: float | None = None
    # configs measured before the search: the default config (the baseline) unless
    # measured already, and imported records to confirm on this model
    first: list = field(default_factory=list)
    trials: int = 0                     # distinct configs measured (imported ones included)
    history: list[tuple[int, float]] = field(default_factory=list)   # (trials, best)
    since_best: int = 0
    done: bool = False
    failed: int = 0                     # candidates that did not run correctly (the caller's)
    imported: int = 0                   # trials taken from another model's records (the caller's)
    workload: object = None             # what the caller tunes (aot.tune.workload.Workload)

    @property
    def best(self) -> float | None:
        return self.tuner.best_cost


@dataclass
class ScheduleStep:
    """One progress report: after a batch of ``task``."""

    task: Task
    index: int              # 1-based task number
    tasks: int
    estimate: float | None  # sum of weight * best over the tasks that have a cost
    untuned: float | None   # the same with the default costs
    elapsed: float
    budget: float | None
    measured: int

    def line(self) -> str:
        t = self.task
        best = "-" if t.best is None else f"{t.best:.0f}"
        gain = f" ({t.best / t.default_cost:.3f}x default)" if t.best and t.default_cost else ""
        total = ""
        if self.estimate is not None and self.untuned:
            total = (f"; estimated total {self.estimate:.0f} "
                     f"({self.estimate / self.untuned:.3f}x untuned)")
        budget = f"/{self.budget:.0f}" if self.budget is not None else ""
        return (f"[{self.index}/{self.tasks}] {t.name}: trial {t.trials}, best {best}{gain}"
                f"{total}; {self.elapsed:.0f}{budget} s, {self.measured} measured")


def count_new(tuner, configs) -> int:
    """How many of ``configs`` ``tuner`` has not measured yet: a trial is a
    distinct config, so confirming an imported record adds none."""
    return len({c.index for c in configs} - set(tuner.measured))


class TaskScheduler:
    """Allocates batches of trials among tasks (see the module docstring)."""

    def __init__(self, tasks: list[Task], *, batch_size: int, budget: float | None = None,
                 max_trials: int | None = None, early_stopping: int | None = None,
                 alpha: float = 0.2, window: int = 3, epsilon: float = 0.05, seed: int = 0,
                 clock: Callable[[], float] = time.perf_counter,
                 progress: Callable[[ScheduleStep], None] | None = None):
        if budget is None and max_trials is None:
            raise ValueError("a schedule needs a time budget or a number of trials per task")
        self.tasks = tasks
        self.batch_size = batch_size
        self.budget = budget
        self.max_trials = max_trials
        self.early_stopping = early_stopping
        self.alpha, self.window, self.epsilon = alpha, window, epsilon
        self.rng = random.Random(seed)
        self.clock = clock
        self.progress = progress
        self.measured = 0
        self.order: list[str] = []     # the task of every batch, in order (for tests, reports)
        self._seconds: dict[int, list[tuple[int, float]]] = {}   # id(task) -> (configs, s)
        self._all_seconds: list[tuple[int, float]] = []
        # after run(): its wall time, how far past the budget it ended, and, when
        # it ended with time left because no next batch would have finished in
        # it, the quickest one (task name, expected seconds, seconds left)
        self.elapsed = 0.0
        self.overrun = 0.0
        self.stopped_early: tuple[str, float, float] | None = None

    # -- the objective -----------------------------------------------------------

    def estimate(self) -> float | None:
        """``sum(weight * best)`` over the tasks with a cost (None before any)."""
        costs = [t.weight * t.best for t in self.tasks if t.best is not None]
        return sum(costs) if costs else None

    def untuned(self) -> float | None:
        costs = [t.weight * t.default_cost for t in self.tasks if t.default_cost is not None]
        return sum(costs) if costs else None

    def gradient(self, task: Task) -> float:
        """Expected decrease of the objective per trial of ``task``."""
        if task.best is None or task.trials == 0:
            return float("inf")
        horizon = task.trials - self.window * self.batch_size
        then = [(n, b) for n, b in task.history if n <= horizon] or task.history[:1]
        n_then, b_then = then[-1]
        backward = (b_then - task.best) / (task.trials - n_then) if task.trials > n_then else 0.0
        forward = task.best / task.trials
        return task.weight * (self.alpha * backward + (1 - self.alpha) * forward)

    # -- the loop --------------------------------------------------------------

    def run(self) -> None:
        start = self.clock()
        for task in self.tasks:                 # warm-up, round robin
            if task.first and self._fits(task, len(task.first), start):
                self._batch(task, None, start)
            if self._live(task) and self._fits(task, self._size(task), start):
                self._batch(task, None, start)
        while True:
            live = [t for t in self.tasks if self._live(t)]
            fitting = [t for t in live if self._fits(t, self._size(t), start)]
            if not fitting:
                self._note_stop(live, start)
                break
            if self.rng.random() < self.epsilon:
                task = self.rng.choice(fitting)
            else:
                task = max(fitting, key=lambda t: (self.gradient(t), -self.tasks.index(t)))
            self._batch(task, None, start)
        self.elapsed = self.clock() - start
        if self.budget is not None:
            self.overrun = max(0.0, self.elapsed - self.budget)

    def batch_seconds(self, task: Task, size: int) -> float | None:
        """The expected wall time of a batch of ``size`` configs of ``task``: its
        last batch of at least that many configs, else the last such batch of any
        task (a batch's fixed cost, one image built and booted, dominates small
        ones, so this errs long); None before any batch was timed."""
        for timed in (self._seconds.get(id(task), []), self._all_seconds):
            for n, seconds in reversed(timed):
                if n >= size:
                    return seconds
        return None

    def _fits(self, task: Task, size: int, start: float) -> bool:
        """Whether a batch of ``size`` configs of ``task`` should finish within the
        budget (:meth:`batch_seconds`); a batch whose time cannot be estimated
        yet is issued while time is left."""
        if self.budget is None:
            return True
        left = self.budget - (self.clock() - start)
        if left <= 0:
            return False
        expected = self.batch_seconds(task, size)
        return expected is None or expected <= left

    def _note_stop(self, live: list[Task], start: float) -> None:
        """Record in :attr:`stopped_early` why a run with live tasks ends: the
        quickest of their next batches would not finish in the time left."""
        left = self.budget - (self.clock() - start) if self.budget is not None else 0.0
        if not live or left <= 0:
            return
        name, expected = min(((t.name, self.batch_seconds(t, self._size(t)) or 0.0)
                              for t in live), key=lambda x: x[1])
        self.stopped_early = (name, expected, left)

    def _size(self, task: Task) -> int:
        if self.max_trials is None:
            return self.batch_size
        return max(1, min(self.batch_size, self.max_trials - task.trials))

    def _live(self, task: Task) -> bool:
        if task.done or not task.tuner.has_next():
            return False
        if self.max_trials is not None and task.trials >= self.max_trials:
            return False
        if self.early_stopping is not None and task.since_best >= self.early_stopping:
            return False
        return True

    def _batch(self, task: Task, configs, start: float) -> None:
        if configs is None and task.first:   # (left over when the warm-up ran out of time)
            configs, task.first = task.first, []
        if configs is None:
            configs = task.tuner.next_batch(self._size(task))
            if not configs:
                task.done = True
                return
        before = task.best
        began = self.clock()
        costs = task.measure(configs)
        seconds = self.clock() - began
        self._seconds.setdefault(id(task), []).append((len(configs), seconds))
        self._all_seconds.append((len(configs), seconds))
        task.trials += count_new(task.tuner, configs)
        task.tuner.update(configs, costs)
        self.measured += len(configs)
        task.since_best = 0 if task.best != before else task.since_best + len(configs)
        if task.best is not None:
            task.history.append((task.trials, task.best))
        self.order.append(task.name)
        if self.progress is not None:
            self.progress(ScheduleStep(task, self.tasks.index(task) + 1, len(self.tasks),
                                       self.estimate(), self.untuned(), self.clock() - start,
                                       self.budget, self.measured))
