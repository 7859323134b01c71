"""A simulated board for showing how a farm scales: wall time, no host work.

On this project's machines a QEMU board is the host's own CPU (compiling its
image and emulating it), so more QEMU boards on one machine do not measure
more.  A real farm is different: flashing and running an image takes wall
time while the host that drives the board is idle.  :class:`SimBoard`
measures a chunk of candidates the way such a board's worker spends time, and
nothing else:

* each image (at most :func:`aot.tune.measure.max_batch` candidates) takes
  ``image_seconds`` of sleep (building on the node, flashing and booting a
  real board), each candidate ``candidate_seconds`` more (running it);
* each candidate's cost is a deterministic fake derived from the workload key
  and the config's knob values (:func:`sim_cost`), so a tuner still has
  something to rank; its unit is :data:`aot.tune.records.SIMULATED`, never
  compared with a real cost's, and compiling never applies such a record.

It lowers and compiles nothing: its wall time stands for all of that, so a
farm of simulated boards measures the farm's own scheduling (the head's
work per candidate and how chunks are spread), not this machine's cores.

A simulated board is a farm option (:class:`aot.tune.farm.BoardSpec`'s
``sim``) for benches and tests only: it is not a board record, not listed by
``aot boards``, not reachable from the ``aot`` command, and a spec that also
names a real board's port, a runner, the RAM loader or a cost other than
instructions is refused (:func:`check_sim`).
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from dataclasses import dataclass

from aot.tune.errors import TuneError
from aot.tune.measure import Result, max_batch
from aot.tune.records import SIMULATED
#: Fake costs fall in ``[SIM_BASE, SIM_BASE + SIM_SPREAD)``.
SIM_BASE = 100_000
SIM_SPREAD = 900_000


@dataclass(frozen=True)
class SimBoard:
    """How long a simulated board takes: per image and per candidate (seconds)."""

    image_seconds: float = 2.0
    candidate_seconds: float = 0.0

    def __post_init__(self):
        if self.image_seconds < 0 or self.candidate_seconds < 0:
            raise TuneError(f"a simulated board's times must not be negative: {self}")

    def seconds(self, candidates: int) -> float:
        """Wall time of measuring ``candidates`` configs (one image per
        :func:`max_batch` of them)."""
        images = math.ceil(candidates / max_batch())
        return images * self.image_seconds + candidates * self.candidate_seconds


def sim_cost(key: str, config) -> int:
    """The fake cost of ``config`` of workload ``key``: a hash of both, so the
    same config always costs the same, on any board and in any process."""
    text = json.dumps([key, config.to_json()], sort_keys=True, default=str)
    digest = hashlib.sha256(text.encode()).digest()
    return SIM_BASE + int.from_bytes(digest[:8], "big") % SIM_SPREAD


def check_sim(spec) -> None:
    """Refuse a :class:`~aot.tune.farm.BoardSpec` that asks for a simulated
    board together with what only a real (or emulated) board has."""
    if spec.sim is None:
        return
    given = [name for name, bad in (("serial port", spec.serial_port is not None),
                                    ("runner", spec.runner is not None),
                                    ("debug probe", spec.probe is not None),
                                    ("RAM loader", spec.ram),
                                    (f"--cost {spec.cost}", spec.cost != "instructions"))
             if bad]
    if given:
        raise TuneError(f"a simulated board ({spec.sim}) measures nothing real: it takes no "
                        f"{', '.join(given)}; drop them or measure on a board")


class SimFlows:
    """The measuring flow of one simulated board (the interface of
    :class:`aot.tune.farm.Flows`)."""

    boards = 1
    ram = False

    def __init__(self, sim: SimBoard):
        self.sim = sim
        self.images = 0       # images "flashed" so far
        self.measured = 0     # configs measured so far

    def __enter__(self) -> SimFlows:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        pass

    def measure(self, workload, configs) -> list[Result]:
        configs = list(configs)
        if not configs:
            return []
        seconds = self.sim.seconds(len(configs))
        time.sleep(seconds)   # the board works; the host waits
        self.images += math.ceil(len(configs) / max_batch())
        self.measured += len(configs)
        share = seconds / len(configs)
        out = []
        for c in configs:
            cost = sim_cost(workload.key, c)
            out.append(Result(c, "ok", cost, (cost,), SIMULATED, "", share))
        return out
