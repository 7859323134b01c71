"""The registry of graph passes and the default pipeline.

:data:`PASSES` is built from one explicit list; a duplicate name is an
error at import.  :data:`DEFAULT_PIPELINE` is the order
:func:`aot.passes.optimize` runs them in.  The registry imports the passes,
never the reverse: they import :mod:`aot.passes.base`.
"""

from __future__ import annotations

from collections.abc import Iterable

from aot.passes.base import Pass
from aot.passes.cleanup import fold_constants, remove_dead_code
from aot.passes.fuse import fuse_ops
from aot.passes.layout import check_layout
from aot.passes.legalize import legalize_quantized
from aot.passes.placement import place_cores
from aot.passes.partition import annotate_external, merge_external, partition_external
from aot.passes.simplify import canonicalize, fold_pad, simplify_inference


def build_registry(passes: Iterable[Pass]) -> dict[str, Pass]:
    """Map names to passes; refuse two passes with one name."""
    registry: dict[str, Pass] = {}
    for p in passes:
        if p.name in registry:
            raise ValueError(f"pass {p.name!r} is registered twice")
        registry[p.name] = p
    return registry


#: The default pipeline, in order: checks, cleanups, rewrites, then partitioning for the
#: external codegens of ``-libs`` (nothing without them), grouping, then
#: placement on the board's cores (nothing on one core).
DEFAULT_PIPELINE: tuple[Pass, ...] = (
    check_layout,
    remove_dead_code,
    fold_constants,
    simplify_inference,
    canonicalize,
    fold_pad,
    legalize_quantized,
    annotate_external,
    merge_external,
    partition_external,
    fuse_ops,
    place_cores,
)

#: Every graph pass by name.
PASSES: dict[str, Pass] = build_registry(DEFAULT_PIPELINE)
