"""FULLY_CONNECTED (dense): compute (:mod:`~aot.kernels.dense.compute`), the
schedule template (:mod:`~aot.kernels.dense.schedules`) and the row
intrinsic (:mod:`~aot.kernels.dense.intrin`)."""

from aot.kernels.dense import compute, schedules  # noqa: F401  (register the rule and templates)
