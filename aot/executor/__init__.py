"""The AOT executor: the static memory plan (:mod:`aot.executor.memory`).

The entry-point code generation will live beside the planner.
"""

from aot.executor.memory import (ALGORITHMS, Buffer, MemoryPlan, MemoryPlanError, check_fits,
                                 check_fits_board, check_plan, format_memory_report,
                                 plan_memory, workspace_alignment)

__all__ = ["ALGORITHMS", "Buffer", "MemoryPlan", "MemoryPlanError", "check_fits",
           "check_fits_board", "check_plan", "format_memory_report", "plan_memory",
           "workspace_alignment"]
