"""The contract between the compiler and an external codegen (docs/byoc.md).

An external codegen is an :class:`ExternalCodegen` record: a name (what
``-libs=`` says), a :class:`~aot.passes.PatternTable` (which chains of
operators it implements, with predicates), a ``generate`` function and,
optionally, a ``configure`` function and the names of the options it takes.

* ``configure(target, options) -> options`` runs once, before any pass:
  it checks that the codegen can serve this target with these options (a
  library path that exists and has the right layout, a core it supports)
  and returns the options ``generate`` sees.  It raises
  :class:`ExternalCodegenError` with what to do next.
* ``generate(function) -> ExternalCode`` runs once per partitioned function
  (:class:`ExternalFunction`: its nodes, its run-time tensors in argument
  order, the folded quantization constants, the target and the options).
  It returns the C that defines ``function.name`` with the signature
  :meth:`ExternalFunction.signature` gives, the constant arrays that C
  reads (the compiler prints them as aligned ``static const`` arrays), the
  scratch bytes it needs (the memory planner puts them in the workspace and
  passes them as the last argument), and the sources, include folders and
  defines of the library it calls (every build of the model compiles them).

Anything ``generate`` raises becomes an :class:`ExternalCodegenError`
naming the codegen and the layer; nothing is written then.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from aot.errors import AotError
from aot.ir import Node, Tensor
from aot.kernels.support import TARGET_HEADER
from aot.passes import PatternTable, QuantParams
from aot.target import Target

#: C types of the tensor dtypes an external function's arguments may have.
C_TYPES = {"int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t", "int32": "int32_t",
           "int64": "int64_t", "float32": "float", "bool": "uint8_t"}


class ExternalCodegenError(AotError):
    """An external codegen that cannot serve a target or failed on a layer."""


@dataclass(frozen=True)
class ExternalFunction:
    """What an external codegen receives: one partitioned function.

    ``inputs`` are the run-time tensors the function reads (graph inputs and
    activations; weights and biases are constant tensors among the nodes'
    inputs, with their values in ``tensor.data``), ``outputs`` the tensors it
    writes, both in C argument order: ``x0, x1, ...`` then ``y<n>, ...``
    (:meth:`arg_names`).  ``quant`` holds the folded requantization constants
    of the integer nodes (:class:`aot.passes.QuantParams`).
    """

    name: str
    codegen: str
    pattern: str
    nodes: tuple[Node, ...]
    inputs: tuple[Tensor, ...]
    outputs: tuple[Tensor, ...]
    quant: Mapping[Node, QuantParams]
    target: Target
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def layer(self) -> str:
        """The layer as errors and reports name it: ``conv2d 'model/conv1'``."""
        ops = "+".join(n.op for n in self.nodes)
        names = ", ".join(repr(n.name) for n in self.nodes)
        return f"{ops} {names}"

    @property
    def arg_names(self) -> tuple[str, ...]:
        n = len(self.inputs)
        return tuple([f"x{i}" for i in range(n)]
                     + [f"y{n + j}" for j in range(len(self.outputs))])

    def signature(self, scratch: bool) -> str:
        """``int32_t NAME(const int8_t *restrict x0, int8_t *restrict y1[, void *scratch])``.

        The function returns 0 on success; any other value stops the model's
        run function, which returns it.  ``scratch`` (when the code asked for
        scratch bytes) points at that many bytes of the workspace, aligned
        like its buffers, shared with every other kernel (no value survives
        a call)."""
        decl = [f"const {C_TYPES[t.dtype]} *restrict {a}"
                for t, a in zip(self.inputs, self.arg_names)]
        decl += [f"{C_TYPES[t.dtype]} *restrict {a}"
                 for t, a in zip(self.outputs, self.arg_names[len(self.inputs):])]
        if scratch:
            decl.append("void *scratch")
        return f"int32_t {self.name}({', '.join(decl) or 'void'})"


@dataclass(frozen=True)
class ExternalCode:
    """What an external codegen returns for one function.

    ``source`` is C99 that defines the function (and may include the
    library's headers); ``constants`` maps C names to arrays the compiler
    prints ahead of it as ``static const`` (aligned like the kernels'
    constants); ``scratch_bytes`` > 0 adds the ``void *scratch`` argument.
    ``sources`` and ``include_dirs`` are paths relative to ``root`` (the
    library's folder), which the artifact's CMake and Make files expose as
    the variable ``root_variable`` so a build can point elsewhere; ``defines``
    are ``NAME`` or ``NAME=VALUE``.  ``macs`` counts multiply-accumulates for
    the report.
    """

    source: str
    constants: Mapping[str, np.ndarray] = field(default_factory=dict)
    scratch_bytes: int = 0
    macs: int = 0
    root: str | None = None
    root_variable: str | None = None
    sources: tuple[str, ...] = ()
    include_dirs: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()


@dataclass(frozen=True)
class ExternalCodegen:
    """One external codegen (see the module docstring for the contract)."""

    name: str
    table: PatternTable
    generate: Callable[[ExternalFunction], ExternalCode]
    configure: Callable[[Target, Mapping[str, Any]], Mapping[str, Any]] | None = None
    options: tuple[str, ...] = ()
    doc: str = ""

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[a-z][a-z0-9_-]*", self.name):
            raise ExternalCodegenError(f"external codegen name {self.name!r}: use lower-case "
                                       "letters, digits, '-' and '_' (it is written in -libs=)")
        if self.table.codegen != self.name:
            raise ExternalCodegenError(f"external codegen {self.name!r} has the pattern table "
                                       f"of {self.table.codegen!r}")


def support_include() -> str:
    """The include line of aot's kernel support header of the core's facts
    (``AOT_ALIGNED``, which the constant arrays use)."""
    return f'#include "{TARGET_HEADER}"'
