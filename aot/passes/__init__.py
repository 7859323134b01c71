"""Graph passes: ``Graph -> Graph`` rewrites run under a :class:`PassContext`.

The pipeline (:data:`DEFAULT_PIPELINE`, run by :func:`optimize`)::

    check_layout -> remove_dead_code -> fold_constants -> simplify_inference
    -> canonicalize -> fold_pad -> legalize_quantized -> annotate_external
    -> merge_external -> partition_external -> fuse_ops -> place_cores

Its result is an :class:`AnnotatedGraph`: the same operators plus views,
fused groups and folded requantization constants, which the lowering and
the memory planner (:mod:`aot.executor.memory`) read.  docs/passes.md
describes each pass.
"""

from aot.passes.annotated import (AnnotatedGraph, Annotations, Barrier, FusedGroup,
                                  QuantParams, annotations, format_annotated, rebuild,
                                  substitute)
from aot.passes.base import CONFIG_OPTIONS, Pass, PassConfig, PassError, graph_pass
from aot.passes.cleanup import fold_constants, remove_dead_code
from aot.passes.context import (DumpAfter, PassContext, PassInstrument, PassTimer, Sequential,
                                default_pipeline, optimize)
from aot.passes.fuse import fuse_ops
from aot.passes.layout import check_layout
from aot.passes.legalize import legalize_quantized, quant_params
from aot.passes.partition import (Pattern, PatternTable, annotate_external, merge_external,
                                  partition_external)
from aot.passes.placement import GroupPart, Part, part_group, part_node, place_cores
from aot.passes.registry import DEFAULT_PIPELINE, PASSES
from aot.passes.simplify import canonicalize, fold_pad, simplify_inference

__all__ = [
    "CONFIG_OPTIONS", "DEFAULT_PIPELINE", "PASSES", "AnnotatedGraph", "Annotations",
    "Barrier", "DumpAfter", "FusedGroup", "GroupPart", "Part", "Pass", "PassConfig",
    "PassContext", "PassError", "PassInstrument", "PassTimer", "Pattern", "PatternTable",
    "QuantParams", "Sequential", "annotate_external", "annotations", "canonicalize",
    "check_layout", "default_pipeline", "fold_constants", "fold_pad", "format_annotated",
    "fuse_ops", "graph_pass", "legalize_quantized", "merge_external", "optimize",
    "part_group", "part_node", "partition_external", "place_cores", "quant_params",
    "rebuild", "remove_dead_code", "simplify_inference", "substitute",
]
