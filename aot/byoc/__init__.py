"""Bring your own codegen: layers handed to external libraries (``-libs=``).

The pieces, in pipeline order:

* pattern tables and the partitioning passes live with the graph passes
  (:mod:`aot.passes.partition`: ``annotate_external``, ``merge_external``,
  ``partition_external``);
* :mod:`aot.byoc.contract`: what a codegen receives and returns;
* :mod:`aot.byoc.registry`: the codegens ``-libs`` may name (``cmsis-nn``
  ships; users :func:`register` theirs);
* :mod:`aot.byoc.lower`: a partitioned function -> a kernel the executor
  calls like any other;
* :mod:`aot.byoc.cmsis_nn`: Arm's CMSIS-NN from a source tree used in place.

docs/byoc.md is the user's guide.
"""

from aot.byoc.contract import (ExternalCode, ExternalCodegen, ExternalCodegenError,
                               ExternalFunction)
from aot.byoc.lower import build_info, lower_external
from aot.byoc.registry import CODEGENS, configure, get, register, tables, unregister

__all__ = ["CODEGENS", "ExternalCode", "ExternalCodegen", "ExternalCodegenError",
           "ExternalFunction", "build_info", "configure", "get", "lower_external", "register",
           "tables", "unregister"]
