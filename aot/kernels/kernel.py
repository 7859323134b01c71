"""The Kernel record and the builder that turns one fused group into it.

A kernel is one C function per fused group.  Its tensor expression takes
the group's run-time tensors *and* its constants (packed weights, bias,
requantization multipliers and shifts) as placeholders; lowering ends in
loop IR (:class:`aot.tir.PrimFunc`), which the :class:`Kernel` keeps with
its constants.  Only :mod:`aot.codegen` prints it
(:func:`aot.codegen.kernel.kernel_source`): constants as ``static const``
arrays, the loop nest as a ``static`` implementation, and an exported
function that binds the constants, so the caller passes only the
activations.

A kernel also knows, from its loop nest, which of its outputs may be
written over which of its inputs (:attr:`Kernel.inplace_allowed`,
:mod:`aot.kernels.inplace`); the memory planner reads that fact and the
executor binds the pairs the plan uses (:meth:`Kernel.with_inplace`).
The fact is proved the first time it is asked for, not at lowering: the
tuner lowers many candidates and plans none.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np


from aot import te
from aot.codegen.build import lower
from aot.codegen.c import c_identifier
from aot.codegen.kernel import ir_dtype, kernel_signature, kernel_source
from aot.errors import AotError
from aot.ir import Tensor
from aot.kernels.inplace import in_place_problem
from aot.kernels.overlap import overlap_limit
from aot.kernels.registry import kernel_includes
from aot.target import Target
from aot.tir import expr as E
from aot.tir import stmt as S
from aot.tir.functor import all_nodes
from aot.tir.stmt import PrimFunc


class KernelError(AotError):
    """A fused group that no kernel supports (yet)."""


def constant_alignment(target) -> int:
    """Bytes the kernels' constant arrays are aligned to: the target's
    ``-constants-byte-alignment``, else 8 (a doubleword: LDRD-friendly)."""
    attrs = getattr(target, "attrs", {})
    return attrs.get("constants-byte-alignment") or 8


@dataclass(frozen=True)
class KernelParam:
    """One argument of a kernel: the IR tensor it binds to and its direction."""

    tensor: str
    role: str  # "input" | "output"
    dtype: str
    nbytes: int


#: How a kernel's file holds a constant: ``static`` its own array, ``shared`` an array it
#: defines for other kernels too, ``extern`` a declaration of another kernel's array.
LINKAGES = ("static", "shared", "extern")


@dataclass(frozen=True)
class KernelConstant:
    """A compile-time array of a kernel: its C name, its values and which kernel's
    file defines it (``linkage``, :data:`LINKAGES`).  A kernel defines its arrays
    itself (``static``) unless it shares them: the parts of a split group
    (:mod:`aot.kernels.parts`) keep one copy of the arrays they have equal, which
    one part defines for the others (``shared``) and they declare (``extern``)."""

    name: str
    data: np.ndarray
    linkage: str = "static"

    def __post_init__(self):
        if self.linkage not in LINKAGES:
            raise KernelError(f"constant {self.name}: linkage {self.linkage!r} is none of "
                              f"{', '.join(LINKAGES)}")

    @property
    def defined(self) -> bool:
        """Its kernel's file holds the values (the bytes count as this kernel's)."""
        return self.linkage != "extern"


@dataclass(frozen=True)
class Kernel:
    """One kernel of one fused group (see docs/kernels.md).

    ``params`` are the exported function's arguments in C order, inputs
    then outputs; it returns 0.  The body is either loop IR (``func``, the
    implementation taking the inputs, then ``constants``, then the outputs)
    or, for a hand-written kernel, a finished C file (``c_source`` with its
    ``c_prototype``).  ``source`` and ``prototype`` are the C either way;
    the file includes ``includes``, the shared support headers and its
    operators' own (:func:`aot.kernels.registry.kernel_includes`).
    ``scratch_bytes`` > 0 adds a last ``void* scratch`` argument (the
    workspace's shared scratch area); aot's own kernels keep their scratch on
    the stack, so it is 0 for them, and an external codegen's function
    (``codegen``, :mod:`aot.byoc`) may ask for some.

    ``inplace_allowed`` lists ``(input index, output index)`` pairs of
    ``params`` whose loop nest reads each input element before the output
    element at the same index overwrites it (:mod:`aot.kernels.inplace`);
    ``overlap_allowed`` lists ``(input index, output index, D)``: the output
    may start ``d <= D`` bytes after the input's start, overlapping it
    (:mod:`aot.kernels.overlap`, proved from the loop nest's addresses).
    Both are ``allow_inplace`` and ``allow_overlap`` when given; when those
    are None they are proved from ``func`` the first time they are read (a
    kernel without ``func`` allows none).
    ``inplace`` the pairs the caller actually binds to shared bytes (one
    address or an overlap), which are declared without ``restrict``.  Every
    other pair of arguments must not overlap.
    """

    name: str
    params: tuple[KernelParam, ...]
    scratch_bytes: int
    macs: int
    op_names: tuple[str, ...]
    target: str = "c"
    func: PrimFunc | None = None
    constants: tuple[KernelConstant, ...] = ()
    includes: tuple[str, ...] = ()
    constant_alignment: int = 8        # bytes; the target's -constants-byte-alignment
    prelude: tuple[str, ...] = ()      # lines ahead of everything (a tuned kernel's pragmas)
    c_source: str | None = None
    c_prototype: str | None = None
    allow_inplace: tuple[tuple[int, int], ...] | None = None      # None: proved from func
    allow_overlap: tuple[tuple[int, int, int], ...] | None = None  # None: proved from func
    inplace: tuple[tuple[int, int], ...] = ()
    codegen: str = "aot"               # who implements it: aot, or an external codegen (-libs)
    # The linker section of its constant arrays ("": the compiler's, .rodata in
    # flash); set when the plan copies them into a faster memory at start-up
    # (aot.executor.regions.place_constants).
    constant_section: str = ""
    # The linker section of its functions ("": .text, in flash); set when the
    # default placement runs its code from RAM (aot.executor.code_placement).
    code_section: str = ""

    @property
    def constant_bytes(self) -> int:
        """Bytes of the constant arrays its file defines (not those it declares)."""
        return sum(c.data.nbytes for c in self.constants if c.defined)

    @property
    def arg_names(self) -> tuple[str, ...]:
        """The exported function's parameter names: ``x<i>`` for inputs, ``y<i>`` for outputs."""
        return tuple(("x" if p.role == "input" else "y") + str(i)
                     for i, p in enumerate(self.params))

    @cached_property
    def inplace_allowed(self) -> tuple[tuple[int, int], ...]:
        if self.allow_inplace is not None:
            return self.allow_inplace
        return tuple((i, j) for i, j, x, y in self._pairs()
                     if in_place_problem(self.func, x, y) is None)

    @cached_property
    def overlap_allowed(self) -> tuple[tuple[int, int, int], ...]:
        if self.allow_overlap is not None:
            return self.allow_overlap
        limits = ((i, j, overlap_limit(self.func, x, y)) for i, j, x, y in self._pairs())
        return tuple((i, j, d) for i, j, d in limits if d is not None)

    def _pairs(self):
        """``(input index, output index, input buffer, output buffer)`` of every
        pair of ``params``; ``func`` takes the constants between them."""
        if self.func is None:
            return []
        n_in = sum(p.role == "input" for p in self.params)
        n_out = len(self.params) - n_in
        first_out = len(self.func.params) - n_out
        return [(i, n_in + j, self.func.params[i], self.func.params[first_out + j])
                for i in range(n_in) for j in range(n_out)]

    @cached_property
    def source(self) -> str:
        """The kernel's C translation unit: a hand-written kernel's C whatever the
        target (it has no other form), a loop-IR kernel's printed C for a C
        target only (an ``llvm`` kernel's code is :mod:`aot.codegen.llvm`'s)."""
        if self.func is None:
            return "".join(self.prelude) + self.c_source
        if Target(self.target).kind != "c":
            raise KernelError(f"kernel {self.name} was lowered for {self.target!r}, whose code "
                              "is not C: aot.codegen.llvm builds it (docs/codegen.md)")
        return kernel_source(self)

    @property
    def prototype(self) -> str:
        if self.func is None:
            return self.c_prototype
        return kernel_signature(self, self.arg_names) + ";"

    def with_inplace(self, pairs) -> Kernel:
        """This kernel with the ``(input, output)`` index ``pairs`` bound to shared
        bytes (in place, or overlapping within ``overlap_allowed``)."""
        pairs = tuple(sorted(set(pairs)))
        allowed = set(self.inplace_allowed) | {(i, j) for i, j, _ in self.overlap_allowed}
        refused = set(pairs) - allowed
        if refused:
            raise KernelError(f"kernel {self.name} cannot write in place for the argument "
                              f"pairs {sorted(refused)}: its loop nest allows "
                              f"{sorted(allowed) or 'none'}")
        if pairs == self.inplace:
            return self
        # the facts just proved carry over (a replaced record starts without them)
        return replace(self, inplace=pairs, allow_inplace=self.inplace_allowed,
                       allow_overlap=self.overlap_allowed)

    def in_section(self, section: str) -> Kernel:
        """This kernel with its constant arrays in the linker section ``section``
        (a loop-IR kernel's; a hand-written kernel's constants are its C's)."""
        if self.func is None:
            raise KernelError(f"kernel {self.name} is hand-written C: its constants cannot be "
                              "moved to another section")
        if section == self.constant_section:
            return self
        return replace(self, constant_section=section, allow_inplace=self.inplace_allowed,
                       allow_overlap=self.overlap_allowed)

    def in_code_section(self, section: str) -> Kernel:
        """This kernel with its functions in the linker section ``section`` (a
        loop-IR kernel's; a hand-written kernel's code is its C's)."""
        if self.func is None:
            raise KernelError(f"kernel {self.name} is hand-written C: its code cannot be "
                              "moved to another section")
        if section == self.code_section:
            return self
        return replace(self, code_section=section, allow_inplace=self.inplace_allowed,
                       allow_overlap=self.overlap_allowed)


class KernelBuilder:
    """Collects the placeholders of one kernel and turns a schedule into a :class:`Kernel`.

    Run-time tensors (graph inputs, activations, variables) become parameters
    of the exported function; constants become ``static const`` arrays.
    """

    def __init__(self, name: str, target):
        self.name = c_identifier(name)
        self.target = target
        self._inputs: list[tuple[Tensor, te.Tensor]] = []
        self._consts: list[tuple[str, np.ndarray, te.Tensor]] = []
        self._views: dict[int, list[int]] = {}   # id(placeholder) -> the shape it views

    def input(self, t: Tensor, shape=None) -> te.Tensor:
        """The placeholder of run-time tensor ``t`` (one per tensor), viewed as ``shape``."""
        for known, ph in self._inputs:
            if known is t:
                seen = self._views[id(ph)]
                if shape is not None and [int(d) for d in shape] != seen:
                    # one placeholder per tensor: a second view of another shape
                    # would index the first one's and compute the wrong elements
                    raise KernelError(f"{self.name}: tensor {t.name} is already an input viewed "
                                      f"as {seen}, not {[int(d) for d in shape]}")
                return ph
        if t.kind == "constant":
            return self.const(t.name, np.asarray(t.data), shape)
        ph = te.placeholder(tuple(shape or t.shape), t.dtype,
                            name=c_identifier(f"in{len(self._inputs)}"))
        self._inputs.append((t, ph))
        self._views[id(ph)] = [int(d) for d in (shape or t.shape)]
        return ph

    def const(self, label: str, data, shape=None, dtype=None) -> te.Tensor:
        """A compile-time constant array, emitted into the kernel file."""
        data = np.asarray(data)
        if dtype is not None:
            data = data.astype(dtype)
        if shape is not None:
            data = data.reshape(shape)
        if data.ndim == 0:
            data = data.reshape(1)
        ident = c_identifier(label)
        ph = te.placeholder(data.shape, ir_dtype(data),
                            name=f"c{len(self._consts)}_{ident}"[:40])
        self._consts.append((f"{self.name}_c{len(self._consts)}", np.ascontiguousarray(data), ph))
        return ph

    def finish(self, sched, outputs: list[tuple[Tensor, te.Tensor]], *, macs: int,
               op_names: tuple[str, ...]) -> Kernel:
        """Lower ``sched`` to loop IR and record it with its constants (the
        in-place pairs its loop nest allows are proved when first asked for)."""
        args = ([ph for _, ph in self._inputs] + [ph for _, _, ph in self._consts]
                + [ph for _, ph in outputs])
        func = lower(sched, args, name=f"{self.name}_impl")
        consts = self._packed(sched, func)
        # constants the loops do not read are not emitted (a depthwise kernel
        # reads either the fused helper's rows or the bias and table: conv2d.fuse)
        func, keep = _without_unread_constants(func, len(self._inputs), len(self._consts))
        consts = [c for c, k in zip(consts, keep) if k]
        params = ([KernelParam(t.name, "input", t.dtype, t.type.nbytes) for t, _ in self._inputs]
                  + [KernelParam(t.name, "output", t.dtype, t.type.nbytes) for t, _ in outputs])
        return Kernel(self.name, tuple(params), 0, int(macs), tuple(op_names),
                      target=str(self.target), func=func,
                      constants=tuple(KernelConstant(cname, data) for cname, data in consts),
                      includes=kernel_includes(op_names),
                      constant_alignment=constant_alignment(self.target))

    def _packed(self, sched, func) -> list[tuple[str, np.ndarray]]:
        """The constants' C names and data, in the layouts the schedule asked for
        (:meth:`aot.te.Schedule.store_constant_as`); a repacked constant must be
        read only through intrinsics' pointers."""
        out = []
        layouts = getattr(sched, "constant_layouts", {})
        first = len(self._inputs)
        for i, (cname, data, ph) in enumerate(self._consts):
            if id(ph.op) in layouts:
                data = np.ascontiguousarray(layouts[id(ph.op)][1](data))
                if data.dtype != np.dtype(ph.dtype):
                    raise KernelError(f"{ph.name}: a packed constant keeps its dtype "
                                      f"{ph.dtype}, not {data.dtype}")
                buf = func.params[first + i].data
                for node in all_nodes(func.body):
                    if isinstance(node, (E.Load, S.Store)) and node.buffer.data is buf:
                        raise KernelError(f"{ph.name} is stored in a packed layout but the "
                                          "loop nest reads it element by element")
            out.append((cname, data))
        return out


def _without_unread_constants(func: PrimFunc, n_inputs: int, n_consts: int):
    """``func`` without the parameters of constants its body never reads, and
    which of the ``n_consts`` constants (after ``n_inputs`` inputs) it keeps."""
    used = {id(n.buffer.data) for n in all_nodes(func.body)
            if isinstance(n, (E.Load, E.AccessPtr, S.Store))}
    consts = func.params[n_inputs:n_inputs + n_consts]
    keep = [id(b.data) in used for b in consts]
    params = (func.params[:n_inputs] + [b for b, k in zip(consts, keep) if k]
              + func.params[n_inputs + n_consts:])
    return PrimFunc(func.name, params, func.body, func.attrs), keep


def helper_kernel(name: str, target, params, consts: dict, helper: str, args, *,
                  macs: int, op_names: tuple[str, ...], scratch: dict | None = None) -> Kernel:
    """A kernel whose loop IR is one call of ``helper``, a C function of the
    operator's own support header (``aot/kernels/<op>/include/``, declared by
    its :func:`~aot.kernels.registry.handwritten`): the
    kernels whose state is updated in place (SVDF, LSTM, variables), which
    tensor expressions cannot say.  Both code generators print that call
    (the LLVM one takes the header as bitcode), so the kernel has one source.

    ``params`` are ``(tensor, role, key)`` in argument order, inputs first
    (role ``input``, ``state`` or ``output``); ``consts`` maps a key to a
    constant array, ``scratch`` a key to ``(dtype, count)``: an array of the
    kernel's own, on the stack, of constant size (a variable-length array in
    the helper would cost the frame pointer's register); ``args`` are the
    helper's arguments: a key (a pointer to that parameter, constant or
    scratch array) or an int (an ``int32`` constant).
    The call reads and writes through pointers, so no pair of arguments may
    share memory (``allow_inplace`` is empty).
    """
    ident = c_identifier(name)
    bufs: dict[str, S.Buffer] = {}
    kparams, inputs, others = [], [], []
    for t, role, key in params:
        bufs[key] = S.decl_buffer((t.type.nbytes // np.dtype(t.dtype).itemsize,), t.dtype,
                                  c_identifier(key))
        kparams.append(KernelParam(t.name, role, t.dtype, t.type.nbytes))
        (inputs if role == "input" else others).append(bufs[key])
    if any(role == "input" for _, role, _ in params[len(inputs):]):
        raise KernelError(f"kernel {ident}: inputs must come first in its parameters")
    constants = []
    for key, data in consts.items():
        data = np.ascontiguousarray(data)
        bufs[key] = S.decl_buffer((data.size,), ir_dtype(data), c_identifier(key))
        constants.append(KernelConstant(f"{ident}_{key}", data))
    for key, (dtype, count) in (scratch or {}).items():
        bufs[key] = S.decl_buffer((count,), dtype, c_identifier(key), scope="local")
    call = E.call_extern("int32", helper, *[
        bufs[a].access_ptr("r" if bufs[a] in inputs or a in consts else "rw")
        if isinstance(a, str) else E.const(int(a), "int32") for a in args])
    body = S.Evaluate(call)
    for key in scratch or {}:
        body = S.Allocate(bufs[key], body)
    func = PrimFunc(f"{ident}_impl", inputs + [bufs[k] for k in consts] + others, body)
    return Kernel(ident, tuple(kparams), 0, int(macs), tuple(op_names), target=str(target),
                  func=func, constants=tuple(constants), includes=kernel_includes(op_names),
                  constant_alignment=constant_alignment(target), allow_inplace=(),
                  allow_overlap=())
