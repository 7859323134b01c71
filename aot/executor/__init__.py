"""The AOT executor: the static memory plan (:mod:`aot.executor.memory`) and the
entry-point code generation (:mod:`aot.executor.codegen`: header, entry function,
RPC descriptor, host main).
"""

from aot.executor import codegen
from aot.executor.memory import (ALGORITHMS, Buffer, MemoryPlan, MemoryPlanError, Sizes,
                                 check_fits, check_fits_board, check_plan,
                                 format_memory_report, plan_memory, workspace_alignment)

__all__ = ["ALGORITHMS", "codegen", "Buffer", "MemoryPlan", "MemoryPlanError", "Sizes",
           "check_fits", "check_fits_board", "check_plan", "format_memory_report",
           "plan_memory", "workspace_alignment"]
