"""Tuning records: the JSON-lines log, best per workload and target."""

import dataclasses

import pytest

from aot.tune import records as rec
from aot.tune.errors import TuneError

T1 = "c -keys=arm_cpu,cpu -mcpu=cortex-m4"
T2 = "c -keys=riscv,cpu -march=rv32imac"


def r(workload, target, cost, status="ok", config=None):
    return rec.Record(workload, "d", target, "qemu/x", config or {"a": cost}, status, cost,
                      "instructions")


def test_round_trip(tmp_path):
    log = tmp_path / "log.jsonl"
    rs = [r("w1", T1, 10), r("w1", T1, None, status="wrong")]
    rec.append(log, rs[:1])
    rec.append(log, rs[1:])
    assert rec.load(log) == rs


def test_best_per_workload_for_one_target(tmp_path):
    rs = [r("w1", T1, 10), r("w1", T1, 7), r("w1", T1, None, "timeout"), r("w2", T1, 3),
          r("w1", T2, 1), r("w1", T2, 2)]
    best, notes = rec.best(rs, T1)
    assert {k: v.cost for k, v in best.items()} == {"w1": 7, "w2": 3}
    assert notes == [f"ignoring 2 tuning records made for another target ({T2})"]


def test_compiling_never_applies_a_simulated_boards_record():
    """A simulated board's costs (benches of the tuning farm) are fakes: even the
    fastest, or a workload's only record, is not a schedule to compile with."""
    fake = dataclasses.replace(r("w1", T1, 1), unit=rec.SIMULATED)
    best, notes = rec.best([fake, r("w1", T1, 10), dataclasses.replace(fake, workload="w2")], T1)
    assert {k: v.cost for k, v in best.items()} == {"w1": 10}
    assert notes == ["ignoring 2 records of simulated boards (unit 'simulated'): their costs "
                     "are fakes for benches of the tuning farm, not measurements"]


def test_broken_lines_are_named(tmp_path):
    log = tmp_path / "log.jsonl"
    rec.append(log, [r("w1", T1, 10)])
    with open(log, "a") as f:
        f.write('{"version": 1, "workload": "w"}\n')
    with pytest.raises(TuneError, match=r"log.jsonl:2: not a tuning record"):
        rec.load(log)
    with pytest.raises(TuneError, match="does not exist"):
        rec.load(tmp_path / "missing.jsonl")
