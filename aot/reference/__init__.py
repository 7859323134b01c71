"""The reference interpreter: numpy execution of a Graph, bit-exact with TFLM.

:mod:`aot.reference.ops` holds the kernels (pure array functions);
:mod:`aot.reference.interpreter` walks a graph and calls them.
"""

from aot.reference.interpreter import InterpretError, Session, run, supported_ops

__all__ = ["InterpretError", "Session", "run", "supported_ops"]
