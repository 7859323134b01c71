"""The typed graph IR: tensor types, the operator registry, graphs and their text form.

Frontends produce a :class:`Graph`; passes map graphs to graphs; the
reference interpreter and the lowering read them.  See :mod:`aot.ir.ops` for
the operators and their conventions (layouts, padding, fused activations).
"""

from aot.ir.device import PARTS, SCOPES, DeviceAnnotation
from aot.ir.graph import Graph, GraphBuilder, Node, Tensor, format_graph
from aot.ir.ops import ACTIVATIONS, PATTERNS, REGISTRY, Attr, OpDef, get_op
from aot.ir.types import DTYPES, IRError, Quantization, TensorType

__all__ = [
    "ACTIVATIONS", "DTYPES", "PARTS", "PATTERNS", "REGISTRY", "SCOPES", "Attr",
    "DeviceAnnotation", "Graph", "GraphBuilder", "IRError", "Node", "OpDef", "Quantization",
    "Tensor", "TensorType", "format_graph", "get_op",
]
