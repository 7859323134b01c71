"""What identifies a tunable kernel: its workload key, and how messages name it.

Light on purpose (no tuner, no firmware): compiling with tuning records
(:mod:`aot.tune.library`) computes the key of every group it lowers.
"""

from __future__ import annotations

import hashlib
import json


def _describe(group, stages) -> dict:
    nodes = []
    for node in group.nodes:
        nodes.append({
            "op": node.op,
            "attrs": {k: v for k, v in sorted(node.attrs.items())},
            "inputs": [None if t is None else [list(t.shape), t.dtype, t.kind == "constant"]
                       for t in node.inputs],
            "outputs": [[list(t.shape), t.dtype] for t in node.outputs],
        })
    return {"anchor": group.anchor.op, "nodes": nodes, "stages": sorted(stages)}


def workload_key(group, stages) -> str:
    """``anchor:digest`` of :func:`_describe` (stable across runs and machines)."""
    text = json.dumps(_describe(group, stages), sort_keys=True, default=str)
    return f"{group.anchor.op}:{hashlib.sha256(text.encode()).hexdigest()[:16]}"


def summary(group) -> str:
    """A short human description: ``conv2d 1x25x5x64 * 64x1x1x64 -> 1x25x5x64``."""
    a = group.anchor
    shapes = [t for t in a.inputs[:2] if t is not None]
    return (f"{a.op} " + " * ".join("x".join(map(str, t.shape)) for t in shapes)
            + " -> " + "x".join(map(str, a.outputs[0].shape)))
