"""Tensors, operations and iteration variables of tensor expressions."""

from __future__ import annotations

import inspect

from aot.errors import AotError
from aot.tir import expr as E
from aot.tir.functor import walk
from aot.tir.simplify import simplify


class TEError(AotError):
    """A tensor expression is malformed (wrong arity, dtype, shape)."""


class Range:
    """The half-open integer interval ``[min, min + extent)``."""

    def __init__(self, min_, extent):
        self.min = E.convert(min_)
        self.extent = E.convert(extent)

    def __repr__(self):
        return f"Range({self.min}, {self.extent})"


class IterVar:
    """A loop variable with its domain.

    ``iter_type`` is ``data_par`` (an output axis) or ``reduce`` (a reduction
    axis).  Axes made by schedule primitives have ``dom = None`` until bound
    inference gives them an extent.
    """

    def __init__(self, dom: Range | None, name: str, iter_type: str = "data_par"):
        self.dom = dom
        self.var = E.Var(name, "int32")
        self.iter_type = iter_type

    @property
    def name(self) -> str:
        return self.var.name

    def __repr__(self):
        return f"IterVar({self.name}, {self.dom}, {self.iter_type})"

    # An IterVar stands for its variable inside expressions.
    def __add__(self, o): return self.var + o
    def __radd__(self, o): return o + self.var
    def __sub__(self, o): return self.var - o
    def __rsub__(self, o): return o - self.var
    def __mul__(self, o): return self.var * o
    def __rmul__(self, o): return o * self.var
    def __floordiv__(self, o): return self.var // o
    def __mod__(self, o): return self.var % o
    def __lt__(self, o): return self.var < o
    def __le__(self, o): return self.var <= o
    def __gt__(self, o): return self.var > o
    def __ge__(self, o): return self.var >= o
    __hash__ = object.__hash__


def _as_expr(x):
    return x.var if isinstance(x, IterVar) else E.convert(x)


class Tensor:
    """Output ``value_index`` of an operation; ``T[i, j]`` reads it."""

    def __init__(self, op, value_index: int = 0):
        self.op = op
        self.value_index = value_index

    @property
    def shape(self):
        return self.op.shape

    @property
    def dtype(self):
        return self.op.dtype

    @property
    def name(self):
        return self.op.name

    @property
    def ndim(self):
        return len(self.shape)

    def __getitem__(self, indices):
        if not isinstance(indices, tuple):
            indices = (indices,)
        if len(indices) != len(self.shape):
            raise TEError(
                f"tensor {self.name} has {len(self.shape)} dimensions, "
                f"indexed with {len(indices)}")
        idx = []
        for i in indices:
            i = _as_expr(i)
            if not E.is_int(i.dtype):
                raise TEError(f"index of {self.name} must be an integer, got {i.dtype}")
            if i.dtype != "int32":
                i = E.cast("int32", i)
            idx.append(i)
        return E.ProducerLoad(self, idx)

    def astype(self, dtype):
        raise TEError(f"cast an element, not the tensor: {self.name}[i].astype({dtype!r})")

    def __repr__(self):
        return f"Tensor({self.name}, {[str(s) for s in self.shape]}, {self.dtype})"

    __hash__ = object.__hash__


class Operation:
    name: str
    shape: tuple
    dtype: str

    def output(self, i: int = 0) -> Tensor:
        return self._outputs[i]

    @property
    def input_tensors(self) -> list[Tensor]:
        return []

    def __repr__(self):
        return f"{type(self).__name__}({self.name})"


class PlaceholderOp(Operation):
    def __init__(self, shape, dtype, name):
        self.name, self.dtype = name, dtype
        self.shape = tuple(E.convert(s) for s in shape)
        self._outputs = [Tensor(self)]


class ComputeOp(Operation):
    """``T[axis] = body``; ``body`` may be a :class:`aot.tir.expr.Reduce`."""

    def __init__(self, name, axis, body, reduce_axis=(), attrs=None, tag=""):
        self.name = name
        self.axis = list(axis)
        self.body = body
        self.reduce_axis = list(reduce_axis)
        self.attrs = dict(attrs or {})
        self.tag = tag
        self.dtype = body.dtype
        self.shape = tuple(iv.dom.extent for iv in self.axis)
        self._outputs = [Tensor(self)]

    @property
    def input_tensors(self) -> list[Tensor]:
        seen, out = set(), []
        for n in walk(self.body):
            if isinstance(n, E.ProducerLoad) and id(n.tensor.op) not in seen:
                seen.add(id(n.tensor.op))
                out.append(n.tensor)
        return out

    def with_body(self, body) -> ComputeOp:
        """The same axes with a new body (used by cache_read/cache_write)."""
        return ComputeOp(self.name, self.axis, body, self.reduce_axis, self.attrs, self.tag)


_SUPPORTED = ("bool", "int8", "uint8", "int16", "int32", "int64", "float32")


def placeholder(shape, dtype: str = "float32", name: str = "placeholder") -> Tensor:
    """An input tensor."""
    if dtype not in _SUPPORTED:
        raise TEError(f"unsupported dtype {dtype!r} for {name}: use one of {', '.join(_SUPPORTED)}")
    shape = shape if isinstance(shape, (tuple, list)) else (shape,)
    return PlaceholderOp(shape, dtype, name).output(0)


def compute(shape, fcompute, name: str = "compute", tag: str = "", attrs=None) -> Tensor:
    """``T[i0, ..., in] = fcompute(i0, ..., in)`` over ``shape``.

    ``fcompute`` takes one argument per dimension (named after its
    parameters) and returns an expression, possibly a reduction such as
    ``sum(A[i, k], axis=k)``.  A reduction must be the whole body.
    """
    shape = shape if isinstance(shape, (tuple, list)) else (shape,)
    params = list(inspect.signature(fcompute).parameters.values())
    if params and params[0].kind == inspect.Parameter.VAR_POSITIONAL:
        names = [f"i{n}" for n in range(len(shape))]
    else:
        names = [p.name for p in params]
    if len(names) != len(shape):
        raise TEError(f"compute {name}: fcompute takes {len(names)} arguments "
                      f"but the shape has {len(shape)} dimensions")
    axis = [IterVar(Range(0, s), n) for n, s in zip(names, shape)]
    body = fcompute(*[iv.var for iv in axis])
    if isinstance(body, (tuple, list)):
        raise TEError(f"compute {name}: operations with several outputs are not supported yet; "
                      "write one compute per output")
    body = E.convert(body)
    if isinstance(body, E.Reduce):
        reduce_axis = list(body.axis)
    else:
        if any(isinstance(n, E.Reduce) for n in walk(body)):
            raise TEError(f"compute {name}: a reduction must be the whole body "
                          "(compute it in its own stage and use the result)")
        reduce_axis = []
    if body.dtype not in _SUPPORTED:
        raise TEError(f"compute {name}: unsupported result dtype {body.dtype}")
    return ComputeOp(name, axis, body, reduce_axis, attrs, tag).output(0)


def reduce_axis(dom, name: str = "rv") -> IterVar:
    """A reduction axis over ``dom = (min, max_exclusive)``."""
    lo, hi = dom
    lo, hi = E.convert(lo), E.convert(hi)
    return IterVar(Range(lo, simplify(hi - lo)), name, "reduce")


def thread_axis(*_args, **_kw):
    raise TEError("thread axes are not supported: this compiler targets CPUs "
                  "and microcontrollers (use parallel on host targets)")
