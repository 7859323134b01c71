"""Fake measurement flows for tuning sessions (no board): a config's cost is a
deterministic function of its values, the library's default costs most."""

from __future__ import annotations

import zlib

from aot.tune.measure import Result


class CrcFlows:
    """A config costs 2000-3999 by the CRC of its values, the default 5000;
    the configs equal to ``wrong`` (a config's JSON) give a wrong result; costs
    are in ``unit``.
    ``measured`` lists every config's JSON in the order measured."""

    def __init__(self, wrong: dict | None = None, unit: str = "instructions"):
        self.wrong = wrong
        self.unit = unit
        self.boards, self.ram, self.measured = 1, False, []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def measure(self, workload, configs):
        out = []
        for c in configs:
            self.measured.append(c.to_json())
            if self.wrong is not None and c.to_json() == self.wrong:
                out.append(Result(c, "wrong", error="differs"))
                continue
            cost = 5000 if c == workload.default else \
                2000 + zlib.crc32(repr(sorted(c.to_json().items())).encode()) % 2000
            out.append(Result(c, "ok", cost, (cost,), self.unit))
        return out
