"""Template-free search (auto-scheduling) of a workload's schedule.

Sketches made by rules from the workload's tensor expression
(:mod:`~aot.tune.auto.sketch`), annotations sampled and evolved
(:mod:`~aot.tune.auto.search`), ranked by a cost model
(:mod:`~aot.tune.auto.model`) learned from features of the loop IR
(:mod:`~aot.tune.auto.features`).  docs/tuning.md describes it.
"""

from aot.tune.auto.search import AutoTuner
from aot.tune.auto.sketch import AutoConfig, AutoSpace
from aot.tune.auto.workload import AutoWorkload

__all__ = ["AutoConfig", "AutoSpace", "AutoTuner", "AutoWorkload"]
