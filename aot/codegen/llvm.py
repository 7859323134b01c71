"""LLVM IR generation from PrimFuncs (llvmlite's ``ir`` builder), and the host module.

The second backend of :mod:`aot.codegen`, selected by the target kind
``llvm``: ``aot.build(s, args, target="llvm")`` returns an
:class:`LLVMModule` whose ``source`` is LLVM IR and which, on this machine,
runs the kernels on numpy arrays after compiling them in-process with
LLVM's MCJIT (:mod:`aot.codegen.llvm_jit`); no C compiler sees the kernels.
See docs/codegen.md for what it supports and refuses.

Semantics are the C path's (:mod:`aot.tir.expr`, :mod:`aot.codegen.c`),
operation by operation, so both backends give the same bits:

* ``int8``/``uint8``/``int16`` values are ``i8``/``i16``; results wrap to
  the type.  Where C's promotion to ``int`` changes a result (shifts by the
  element width or more, ``INT8_MIN / -1``, floor division) the operation
  runs on ``i32`` and is truncated, as the C printer's casts do.
* ``/`` and ``%`` truncate (``sdiv``/``srem``), ``//`` and ``%`` of
  :func:`~aot.tir.expr.floordiv` round toward minus infinity; ``uint8`` is
  unsigned (``udiv``, ``lshr``, ``zext``, unsigned comparisons); ``>>`` of a
  signed value is arithmetic.  Value arithmetic has no ``nsw``/``nuw``
  flags (it wraps, which is what C compilers do in practice); only the
  int32/int64 arithmetic of buffer indices and loop counters is ``nsw``,
  where overflow would address outside the buffer anyway (C's undefined
  behaviour), so LLVM can widen and vectorize the induction variables.
* Casts as in C: ``fptosi`` truncates toward zero (to ``i32`` first for
  narrow types, as GCC does), int to bool is ``!= 0``.
* Floats: IEEE operations without fast-math flags (no contraction, no
  reassociation), ``!=`` is unordered; ``sqrt``, ``floor``, ``round``,
  ``fabs`` are LLVM intrinsics (exact), ``exp`` and ``tanh`` call libm's
  ``expf``/``tanhf`` as the C does.
* A scalar ``select`` whose branches may read memory or call a function
  evaluates only the chosen branch (C's ``?:``), and ``&&``/``||``
  short-circuit the same way; vector selects blend both sides, as GCC's
  vector code does.
* Vectors (``Ramp``/``Broadcast`` lanes) are LLVM vectors; loads and
  stores of a ramp with stride 1 are vector accesses aligned to the
  element, other strides are lane by lane.

Buffers are pointer parameters with ``noalias`` except the pairs a caller
binds to one address (``attrs["may_alias"]``, :func:`aot.codegen.c`'s
signature), scratch buffers are ``alloca``\\s in the entry block (16-byte
aligned), and a kernel's constants are ``internal constant`` globals.
Calls: ``intrin`` calls are builtins (above); ``pure``/``extern`` calls
of the support headers' helpers are linked from the headers' LLVM bitcode
(:mod:`aot.codegen.llvm_helpers`) and inlined with the call's constants,
for the JIT and for objects alike; any other call (``import_c`` code) is
an external function the host JIT builds from its C
(:mod:`aot.codegen.llvm_jit`) and objects leave to the board's compiler,
except a call of another unit of the module (an entry function calling the
kernels), which the link resolves.  ``memcpy``/``memmove``/``memset`` are
LLVM's intrinsics; an ``Address`` is a byte ``getelementptr``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np
from llvmlite import ir

from aot.codegen import llvm_helpers
from aot.codegen.c import KernelModule, c_identifier, canonical_target
from aot.codegen.llvm_jit import (HostJit, check_target, invalid_ir_file,
                                  object_text_bytes, verify)
from aot.codegen.llvm_object import emit_object, text_bytes
from aot.errors import BuildError
from aot.target import Target
from aot.tir import expr as E
from aot.tir import stmt as S
from aot.tir.functor import walk

_INT_TYPES = {"bool": ir.IntType(1), "int8": ir.IntType(8), "uint8": ir.IntType(8),
              "int16": ir.IntType(16), "int32": ir.IntType(32), "int64": ir.IntType(64)}
I1, I8, I32, I64 = (_INT_TYPES[t] for t in ("bool", "int8", "int32", "int64"))
F32 = ir.FloatType()
PTR = ir.PointerType()
_NARROW = ("int8", "uint8", "int16")
#: Scratch buffers (on this machine) and constant arrays are aligned to this many bytes.
ALIGN = 16
_FCMP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_LIBM = {"exp": "expf", "tanh": "tanhf", "erf": "erff"}
_FLOAT_INTRINSICS = {"sqrt": "llvm.sqrt", "floor": "llvm.floor", "round": "llvm.round",
                     "abs": "llvm.fabs"}
#: Builtins called in libm on hard-float microcontrollers (see llvm_object).
_LIBM_ROUNDING = {"floor": "floorf", "round": "roundf"}


def scalar_type(dtype: str) -> ir.Type:
    """The LLVM type of an element held in a register (``bool`` is ``i1``)."""
    if dtype == "float32":
        return F32
    if dtype == "handle":
        return PTR
    return _INT_TYPES[dtype]


def value_type(dtype: str) -> ir.Type:
    elem, lanes = E.split_dtype(dtype)
    t = scalar_type(elem)
    return t if lanes == 1 else ir.VectorType(t, lanes)


def memory_type(dtype: str) -> ir.Type:
    """The LLVM type of an element in memory (``bool`` is a byte, as C's ``_Bool``)."""
    elem, lanes = E.split_dtype(dtype)
    t = I8 if elem == "bool" else scalar_type(elem)
    return t if lanes == 1 else ir.VectorType(t, lanes)


def _with_lanes(t: ir.Type, lanes: int) -> ir.Type:
    return t if lanes == 1 else ir.VectorType(t, lanes)


def _const(t: ir.Type, value):
    """A constant of type ``t`` (a vector type splats it)."""
    if isinstance(t, ir.VectorType):
        return ir.Constant(t, [_const(t.element, value)] * t.count)
    if isinstance(t, ir.FloatType):
        return ir.Constant(t, float(np.float32(value)))
    width = t.width
    value = int(value) & ((1 << width) - 1)
    if width > 1 and value >= 1 << (width - 1):
        value -= 1 << width
    return ir.Constant(t, value)


@dataclass(frozen=True)
class CSupport:
    """C that defines the functions a kernel calls and the backend does not
    implement: ``text`` (a translation unit's head: includes, ``import_c``
    code, a tuned kernel's defines) and the ``headers`` it includes, by file
    name.  Only the host JIT uses it (:mod:`aot.codegen.llvm_jit`)."""

    text: str = ""
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Unit:
    """One exported function of an LLVM module.

    ``func`` is the loop IR; the parameters bound in ``constants``
    (``id(buffer.data)`` -> (global name, array)) become internal constant
    globals and the others, in order, the function's pointer parameters
    (``noalias`` unless in ``may_alias``).  ``label`` names the function in
    messages (``kernel model_k3 (conv2d, add)``).
    """

    func: S.PrimFunc
    name: str
    label: str
    constants: dict = field(default_factory=dict)
    may_alias: frozenset = frozenset()
    support: CSupport = CSupport()

    @property
    def params(self) -> list[S.Buffer]:
        return [b for b in self.func.params if id(b.data) not in self.constants]

    def helper_variant(self, machine) -> str:
        """The helper bitcode this unit links for ``machine`` (None: this one);
        a tuned kernel's ``AOT_NO_MVE`` keeps the DSP helpers on a Helium core."""
        return llvm_helpers.variant_of(machine, no_mve="AOT_NO_MVE" in self.support.text)


@dataclass(frozen=True)
class External:
    """A function a module calls but does not define, and who calls it.

    ``name`` is the symbol the IR calls.  A call specialised on its integer
    constants (objects: :attr:`_FuncEmitter.specialize`) calls ``callee``
    (the C function) with ``fixed`` (argument position, value) filled in by
    the wrapper that defines ``name``; ``args`` are the remaining ones.
    """

    name: str
    ret: str                  # aot.tir dtype of the result
    args: tuple[str, ...]     # aot.tir dtypes of the arguments passed
    value_used: bool          # False when every call is a statement (result ignored)
    unit: str                 # label of the first unit calling it
    callee: str = ""          # the C function (default: name)
    fixed: tuple = ()         # ((position, dtype, value), ...) the wrapper passes
    bitcode: bool = False     # defined by the support headers' bitcode (llvm_helpers)

    @property
    def c_name(self) -> str:
        return self.callee or self.name


class _FuncEmitter:
    """Emit one :class:`Unit` into ``module``."""

    def __init__(self, module: ir.Module, unit: Unit, externals: dict[str, External],
                 constants_align: int, machine=None):
        self.module, self.unit, self.externals = module, unit, externals
        self.func = unit.func
        # Objects for a hard-float core: functions that may pass floats use AAPCS-VFP
        # (aot.codegen.llvm_object); the host JIT uses the C convention of this machine.
        self.cconv = machine.calling_convention if machine is not None else ""
        self.libm_rounding = machine is not None and machine.libm_rounding
        # On a microcontroller, scratch takes the stack's own alignment (8, AAPCS):
        # more would make every kernel realign sp and give up r7 as frame pointer.
        self.scratch_align = ALIGN if machine is None else 8
        # The support headers' helpers come as bitcode (aot.codegen.llvm_helpers),
        # linked into the module and inlined there with each call's constants.
        variant = unit.helper_variant(machine)
        self.helpers = llvm_helpers.helper_types(variant)
        if llvm_helpers.gcc_rows(variant):
            rows = llvm_helpers.row_helpers(variant)
            self.helpers = {n: t for n, t in self.helpers.items() if n not in rows}
        # Other C functions (import_c code) of objects are called through
        # wrappers specialised on the calls' integer constants (shapes,
        # strides), so the board's compiler inlines and unrolls them.
        self.specialize = machine is not None
        types = [PTR] * len(unit.params)
        self.fn = ir.Function(module, ir.FunctionType(I32, types), unit.name)
        self.fn.calling_convention = self.cconv
        self.fn.attributes.add("nounwind")
        self.buffers: dict[int, ir.Value] = {}
        for arg, b in zip(self.fn.args, unit.params):
            arg.name = c_identifier(b.name)
            if id(b.data) not in unit.may_alias:
                arg.add_attribute("noalias")
            arg.attributes.align = E.bits(b.dtype) // 8 if b.dtype != "bool" else 1
            self.buffers[id(b.data)] = arg
        for b in self.func.params:
            if id(b.data) in unit.constants:
                gname, data = unit.constants[id(b.data)]
                self.buffers[id(b.data)] = _constant_global(module, gname, data,
                                                            constants_align)
        self.entry = self.fn.append_basic_block("entry")
        self.allocas = ir.IRBuilder(self.entry)
        body = self.fn.append_basic_block("body")
        self.b = ir.IRBuilder(body)
        self.vars: dict[int, ir.Value] = {}
        self.in_index = False

    def error(self, what: str) -> BuildError:
        return BuildError(f"{self.unit.label}: {what}")

    def emit(self) -> ir.Function:
        self.stmt(self.func.body)
        self.b.ret(I32(0))
        self.allocas.branch(self.fn.blocks[1])
        return self.fn

    # -- buffers ------------------------------------------------------------------------
    def pointer(self, buf) -> ir.Value:
        # a parameter, an allocation, or a view of an address bound by a LetStmt
        ptr = self.buffers.get(id(buf.data), self.vars.get(id(buf.data)))
        if ptr is None:
            raise self.error(f"buffer {buf.name} is neither a parameter nor allocated "
                             "(lower the schedule first)")
        return ptr

    def address(self, buf, index) -> ir.Value:
        return self.b.gep(self.pointer(buf), [index], source_etype=memory_type(buf.dtype))

    def index(self, e) -> ir.Value:
        outer, self.in_index = self.in_index, True
        try:
            return self.expr(e)
        finally:
            self.in_index = outer

    # -- expressions --------------------------------------------------------------------
    def expr(self, e) -> ir.Value:
        method = getattr(self, "visit_" + type(e).__name__, None)
        if method is None:
            raise self.error(f"cannot generate LLVM IR for {type(e).__name__} "
                             "(lower the schedule first)")
        return method(e)

    def visit_IntImm(self, e):
        return _const(value_type(e.dtype), e.value)

    def visit_FloatImm(self, e):
        return _const(value_type(e.dtype), e.value)

    def visit_StringImm(self, e):
        data = bytearray(e.value.encode()) + b"\0"
        name = f".str.{len(self.module.globals)}"
        g = ir.GlobalVariable(self.module, ir.ArrayType(I8, len(data)), name)
        g.global_constant, g.linkage, g.unnamed_addr = True, "private", True
        g.initializer = ir.Constant(ir.ArrayType(I8, len(data)), data)
        g.type = PTR
        return g

    def visit_Var(self, e):
        try:
            return self.vars[id(e)]
        except KeyError:
            raise self.error(f"the variable {e.name} is not bound (only loop variables may "
                             "appear in a lowered function)") from None

    def visit_Not(self, e):
        a = self.expr(e.a)
        if E.element(e.a.dtype) == "bool":
            return self.b.xor(a, _const(a.type, 1))
        zero = self.b.icmp_signed("==", a, _const(a.type, 0))
        return self.b.zext(zero, a.type)

    def visit_Binary(self, e):
        elem, lanes = E.split_dtype(e.a.dtype)
        if e.op in ("and", "or") and lanes == 1 and _may_trap(e.b):
            return self.short_circuit(e)
        a, b = self.expr(e.a), self.expr(e.b)
        if elem == "float32":
            return self.float_binary(e.op, a, b)
        if elem == "bool" and e.op not in ("and", "or", "eq", "ne", "bitand", "bitor",
                                           "bitxor"):
            raise self.error(f"the operation {e.op} on bool values has no C meaning here")
        return self.int_binary(e.op, elem, lanes, a, b)

    def float_binary(self, op, a, b):
        bld = self.b
        if op in ("add", "sub", "mul", "div"):
            return {"add": bld.fadd, "sub": bld.fsub, "mul": bld.fmul, "div": bld.fdiv}[op](a, b)
        if op in _FCMP:
            if op == "ne":
                return bld.fcmp_unordered("!=", a, b)  # C's != is true for NaN
            return bld.fcmp_ordered(_FCMP[op], a, b)
        if op in ("min", "max"):
            return bld.select(bld.fcmp_ordered("<" if op == "min" else ">", a, b), a, b)
        raise self.error(f"no float form of {op}")

    def int_binary(self, op, elem, lanes, a, b):
        bld = self.b
        signed = E.is_signed(elem) or elem == "bool"
        if op in ("add", "sub", "mul", "bitand", "bitor", "bitxor", "and", "or"):
            # wrap-around at the element width equals C's int arithmetic truncated
            name = {"add": "add", "sub": "sub", "mul": "mul", "bitand": "and_",
                    "bitor": "or_", "bitxor": "xor", "and": "and_", "or": "or_"}[op]
            if self.in_index and op in ("add", "sub", "mul") and elem in ("int32", "int64"):
                return getattr(bld, name)(a, b, flags=("nsw",))
            return getattr(bld, name)(a, b)
        if op in _FCMP:
            cmp = bld.icmp_signed if E.is_signed(elem) else bld.icmp_unsigned
            return cmp(_FCMP[op], a, b)
        if op in ("min", "max"):
            cmp = bld.icmp_signed if E.is_signed(elem) else bld.icmp_unsigned
            return bld.select(cmp("<" if op == "min" else ">", a, b), a, b)
        # Shifts and divisions: C computes narrow operands as int, then the
        # printer's cast wraps the result to the element type.
        narrow = elem in _NARROW
        wa, wb = (self.widen(a, elem, lanes), self.widen(b, elem, lanes)) if narrow else (a, b)
        if op == "shl":
            r = bld.shl(wa, wb)
        elif op == "shr":
            r = bld.ashr(wa, wb) if signed else bld.lshr(wa, wb)
        elif op == "div":
            r = bld.sdiv(wa, wb) if signed or narrow else bld.udiv(wa, wb)
        elif op == "mod":
            r = bld.srem(wa, wb) if signed or narrow else bld.urem(wa, wb)
        elif op in ("floordiv", "floormod"):
            r = self.floor_divmod(op, wa, wb)
        else:
            raise self.error(f"no integer form of {op}")
        return bld.trunc(r, a.type) if narrow else r

    def widen(self, v, elem, lanes):
        t = _with_lanes(I32, lanes)
        return self.b.sext(v, t) if E.is_signed(elem) else self.b.zext(v, t)

    def floor_divmod(self, op, a, b):
        """Floor division / modulo from the truncating ones: the C helpers'
        ``q - 1`` / ``r + b`` when the remainder is non-zero and its sign
        differs from the divisor's (which is the sign of ``a`` then)."""
        bld = self.b
        q, r = bld.sdiv(a, b), bld.srem(a, b)
        zero = _const(a.type, 0)
        adjust = bld.and_(bld.icmp_signed("!=", r, zero),
                          bld.icmp_signed("<", bld.xor(r, b), zero))
        if op == "floordiv":
            return bld.sub(q, bld.zext(adjust, a.type))
        return bld.select(adjust, bld.add(r, b), r)

    def short_circuit(self, e):
        """``a && b`` / ``a || b`` evaluating ``b`` only when it decides (C)."""
        a = self.expr(e.a)
        start = self.b.block
        rhs = self.fn.append_basic_block("rhs")
        done = self.fn.append_basic_block("sc")
        if e.op == "and":
            self.b.cbranch(a, rhs, done)
        else:
            self.b.cbranch(a, done, rhs)
        self.b.position_at_end(rhs)
        b = self.expr(e.b)
        rhs_end = self.b.block
        self.b.branch(done)
        self.b.position_at_end(done)
        phi = self.b.phi(I1)
        phi.add_incoming(I1(0 if e.op == "and" else 1), start)
        phi.add_incoming(b, rhs_end)
        return phi

    def visit_Select(self, e):
        if E.lanes_of(e.dtype) == 1 and (_may_trap(e.t) or _may_trap(e.f)):
            cond = self.expr(e.cond)
            then, other = self.fn.append_basic_block("sel.t"), self.fn.append_basic_block("sel.f")
            done = self.fn.append_basic_block("sel")
            self.b.cbranch(cond, then, other)
            self.b.position_at_end(then)
            t = self.expr(e.t)
            t_end = self.b.block
            self.b.branch(done)
            self.b.position_at_end(other)
            f = self.expr(e.f)
            f_end = self.b.block
            self.b.branch(done)
            self.b.position_at_end(done)
            phi = self.b.phi(t.type)
            phi.add_incoming(t, t_end)
            phi.add_incoming(f, f_end)
            return phi
        cond, t, f = self.expr(e.cond), self.expr(e.t), self.expr(e.f)
        return self.b.select(cond, t, f)  # a scalar condition selects whole vectors

    def visit_Cast(self, e):
        v = self.expr(e.value)
        src, lanes = E.split_dtype(e.value.dtype)
        dst = E.element(e.dtype)
        return self.convert(v, src, dst, lanes)

    def convert(self, v, src, dst, lanes):
        bld = self.b
        to = _with_lanes(scalar_type(dst), lanes)
        if src == dst:
            return v
        if dst == "bool":
            if src == "float32":
                return bld.fcmp_unordered("!=", v, _const(v.type, 0.0))
            return bld.icmp_signed("!=", v, _const(v.type, 0))
        if src == "float32":
            if dst == "float32":
                return v
            if E.bits(dst) < 32:  # through int, as GCC converts (cvttss2si, then truncation)
                return bld.trunc(bld.fptosi(v, _with_lanes(I32, lanes)), to)
            return bld.fptosi(v, to)
        if dst == "float32":
            return bld.sitofp(v, to) if E.is_signed(src) else bld.uitofp(v, to)
        if src == "handle" or dst == "handle":
            raise self.error(f"cannot cast {src} to {dst}")
        sw, dw = scalar_type(src).width, scalar_type(dst).width
        if dw < sw:
            return bld.trunc(v, to)
        if dw > sw:
            return bld.sext(v, to) if E.is_signed(src) else bld.zext(v, to)
        return v  # int8 <-> uint8: the same bits

    def visit_Load(self, e):
        elem, lanes = E.split_dtype(e.dtype)
        if isinstance(e.index, E.Ramp):
            if E.is_const_int(e.index.stride, 1):
                ptr = self.address(e.buffer, self.index(e.index.base))
                v = self.b.load(ptr, typ=memory_type(e.dtype), align=_elem_align(elem))
                return self.from_memory(v, elem, lanes)
            return self.gather(e)
        if lanes != 1:
            raise self.error(f"a {e.dtype} load needs a ramp index")
        v = self.b.load(self.address(e.buffer, self.index(e.index)), typ=memory_type(elem),
                        align=_elem_align(elem))
        return self.from_memory(v, elem, 1)

    def gather(self, e):
        elem, lanes = E.split_dtype(e.dtype)
        base, stride = self.expr(e.index.base), self.expr(e.index.stride)
        out = ir.Constant(value_type(e.dtype), ir.Undefined)
        for i in range(lanes):
            idx = self.b.add(base, self.b.mul(stride, _const(stride.type, i)))
            v = self.b.load(self.address(e.buffer, idx), typ=memory_type(elem),
                            align=_elem_align(elem))
            out = self.b.insert_element(out, self.from_memory(v, elem, 1), I32(i))
        return out

    def from_memory(self, v, elem, lanes):
        if elem == "bool":
            return self.b.icmp_unsigned("!=", v, _const(v.type, 0))
        return v

    def to_memory(self, v, elem, lanes):
        if elem == "bool":
            return self.b.zext(v, _with_lanes(I8, lanes))
        return v

    def visit_Ramp(self, e):
        base, stride = self.expr(e.base), self.expr(e.stride)
        t = ir.VectorType(base.type, e.lanes)
        steps = ir.Constant(t, [_const(base.type, i) for i in range(e.lanes)])
        return self.b.add(self.b.mul(steps, self.splat(stride, e.lanes)), self.splat(base, e.lanes))

    def visit_Broadcast(self, e):
        return self.splat(self.expr(e.value), e.lanes)

    def splat(self, v, lanes):
        t = ir.VectorType(v.type, lanes)
        one = self.b.insert_element(ir.Constant(t, ir.Undefined), v, I32(0))
        return self.b.shuffle_vector(one, ir.Constant(t, ir.Undefined),
                                     ir.Constant(ir.VectorType(I32, lanes), [0] * lanes))

    def visit_AccessPtr(self, e):
        return self.address(e.buffer, self.index(e.offset))

    def visit_Address(self, e):
        return self.b.gep(self.pointer(e.buffer), [self.index(e.offset)], source_etype=I8)

    def visit_Call(self, e):
        if e.kind == "intrin":
            return self.intrinsic(e)
        return self.call_external(e, value_used=True)

    def call_external(self, e, value_used: bool):
        """A call of a C function: bools cross the boundary as C's one-byte ``_Bool``."""
        fixed = tuple((i, a.dtype, int(a.value)) for i, a in enumerate(e.args)
                      if isinstance(a, E.IntImm) and a.dtype in _INT_TYPES
                      and a.dtype != "bool") if (self.specialize
                                                 and e.name not in self.helpers) else ()
        skip = {i for i, _, _ in fixed}
        passed = [a for i, a in enumerate(e.args) if i not in skip]
        args = [self.to_memory(self.expr(a), a.dtype, 1) if a.dtype == "bool"
                else self.expr(a) for a in passed]
        result = self.b.call(self.external(e, value_used, fixed), args)
        return self.from_memory(result, e.dtype, 1)

    def external(self, e, value_used: bool, fixed: tuple = ()) -> ir.Function:
        skip = {i for i, _, _ in fixed}
        args = tuple(a.dtype for i, a in enumerate(e.args) if i not in skip)
        if any(E.lanes_of(a.dtype) != 1 for a in e.args) or E.lanes_of(e.dtype) != 1:
            raise self.error(f"the call of {e.name} passes vectors: not supported yet by the "
                             "llvm codegen")
        name = e.name
        if fixed:  # one symbol per helper and set of constants, stable across runs
            digest = hashlib.sha256(repr(fixed).encode()).hexdigest()[:10]
            name = f"{e.name}__{digest}"
        known = self.externals.get(name)
        if known is not None and (known.ret, known.args) != (e.dtype, args):
            raise self.error(f"{e.name} is called as {e.dtype}({', '.join(args)}) here and "
                             f"as {known.ret}({', '.join(known.args)}) in {known.unit}")
        self.externals[name] = External(name, e.dtype, args,
                                        value_used or (known is not None and known.value_used),
                                        known.unit if known else self.unit.label,
                                        e.name if fixed else "", fixed,
                                        name in self.helpers)
        if name in self.module.globals:
            return self.module.globals[name]
        ftype = ir.FunctionType(memory_type(e.dtype), [memory_type(t) for t in args])
        if name in self.helpers and str(ftype) != self.helpers[name]:
            raise self.error(f"{name} is defined by the support headers as "
                             f"{self.helpers[name]}, called as {ftype}")
        fn = ir.Function(self.module, ftype, name)
        fn.attributes.add("nounwind")
        # the helpers are the bitcode's C functions, of the C convention
        fn.calling_convention = "" if name in self.helpers else self.cconv
        # The C ABI extends narrow integers; say how, as clang does.
        for arg, t in zip(fn.args, args):
            if t in _NARROW or t == "bool":
                arg.add_attribute("signext" if E.is_signed(t) else "zeroext")
        if e.dtype in _NARROW or e.dtype == "bool":
            fn.return_value.add_attribute("signext" if E.is_signed(e.dtype) else "zeroext")
        return fn

    def memory(self, e):
        """memcpy, memmove, memset: LLVM's intrinsics (byte-aligned, not volatile)."""
        dst, src, n = (self.expr(a) for a in e.args)
        if e.name == "memset":
            fn = self.module.declare_intrinsic("llvm.memset", [PTR, I32])
            src = self.b.trunc(src, I8)
        else:
            fn = self.module.declare_intrinsic(f"llvm.{e.name}", [PTR, PTR, I32])
        self.b.call(fn, [dst, src, n, I1(0)])
        return dst

    def intrinsic(self, e):
        if e.name in E.MEMORY_BUILTINS:
            return self.memory(e)
        if e.name == "likely":
            cond = self.expr(e.args[0])
            expect = self.module.declare_intrinsic("llvm.expect", [I1],
                                                   ir.FunctionType(I1, [I1, I1]))
            return self.b.call(expect, [cond, I1(1)])
        if len(e.args) != 1:
            raise self.error(f"the builtin {e.name} takes one argument")
        x = self.expr(e.args[0])
        if e.name == "abs" and not E.is_float(e.dtype):
            neg = self.b.sub(_const(x.type, 0), x)
            return self.b.select(self.b.icmp_signed("<", x, _const(x.type, 0)), neg, x)
        if not E.is_float(e.dtype):
            raise self.error(f"the builtin {e.name} needs float32, got {e.dtype}")
        if e.name in _LIBM_ROUNDING and self.libm_rounding:
            return self.per_lane(self.libm(_LIBM_ROUNDING[e.name]), x)
        if e.name in _FLOAT_INTRINSICS:
            fn = self.module.declare_intrinsic(_FLOAT_INTRINSICS[e.name], [x.type])
            return self.b.call(fn, [x])
        if e.name in _LIBM and E.lanes_of(e.dtype) == 1:
            return self.b.call(self.libm(_LIBM[e.name]), [x])
        raise self.error(f"no LLVM form for the builtin {e.name} on {e.dtype}")

    def libm(self, name: str) -> ir.Function:
        """The declaration of libm's ``float name(float)``."""
        fn = self.module.globals.get(name)
        if fn is None:
            fn = ir.Function(self.module, ir.FunctionType(F32, [F32]), name)
            fn.attributes.add("nounwind")
            fn.calling_convention = self.cconv
        return fn

    def per_lane(self, fn: ir.Function, x):
        """``fn`` applied to the scalar ``x`` or to each lane of the vector ``x``."""
        if not isinstance(x.type, ir.VectorType):
            return self.b.call(fn, [x])
        out = ir.Constant(x.type, ir.Undefined)
        for i in range(x.type.count):
            lane = self.b.call(fn, [self.b.extract_element(x, I32(i))])
            out = self.b.insert_element(out, lane, I32(i))
        return out

    # -- statements ---------------------------------------------------------------------
    def stmt(self, s) -> None:
        if isinstance(s, S.SeqStmt):
            for part in s.seq:
                self.stmt(part)
        elif isinstance(s, S.For):
            self.loop(s)
        elif isinstance(s, S.Store):
            self.store(s)
        elif isinstance(s, S.IfThenElse):
            self.if_then_else(s)
        elif isinstance(s, S.Allocate):
            self.allocate(s.buffer)
            self.stmt(s.body)
        elif isinstance(s, S.Evaluate):
            if isinstance(s.value, E.Call) and s.value.kind != "intrin":
                self.call_external(s.value, value_used=False)
            elif isinstance(s.value, E.Call):
                self.expr(s.value)
            # any other expression has no effect (the C printer drops it too)
        elif isinstance(s, S.LetStmt):
            self.vars[id(s.var)] = self.expr(s.value)
            self.stmt(s.body)
            del self.vars[id(s.var)]
        elif isinstance(s, S.Comment):
            pass  # for the reader of the C
        elif isinstance(s, S.Return):
            self.b.ret(self.expr(s.value))
            # what follows is reached only around the return (a branch's other side)
            self.b.position_at_end(self.fn.append_basic_block("after_return"))
        elif s is not None:
            raise self.error(f"cannot generate LLVM IR for {type(s).__name__}")

    def store(self, s):
        elem, lanes = E.split_dtype(s.value.dtype)
        value = self.to_memory(self.expr(s.value), elem, lanes)
        if isinstance(s.index, E.Ramp):
            if E.is_const_int(s.index.stride, 1):
                ptr = self.address(s.buffer, self.index(s.index.base))
                self.b.store(value, ptr, align=_elem_align(elem))
                return
            base, stride = self.expr(s.index.base), self.expr(s.index.stride)
            for i in range(s.index.lanes):
                idx = self.b.add(base, self.b.mul(stride, _const(stride.type, i)))
                lane = self.b.extract_element(value, I32(i))
                self.b.store(lane, self.address(s.buffer, idx), align=_elem_align(elem))
            return
        self.b.store(value, self.address(s.buffer, self.index(s.index)), align=_elem_align(elem))

    def if_then_else(self, s):
        cond = self.expr(s.cond)
        then = self.fn.append_basic_block("then")
        other = self.fn.append_basic_block("else") if s.else_case is not None else None
        done = self.fn.append_basic_block("endif")
        self.b.cbranch(cond, then, other or done)
        self.b.position_at_end(then)
        self.stmt(s.then_case)
        self.b.branch(done)
        if other is not None:
            self.b.position_at_end(other)
            self.stmt(s.else_case)
            self.b.branch(done)
        self.b.position_at_end(done)

    def allocate(self, buf) -> None:
        if id(buf.data) in self.buffers:
            return  # an unrolled loop holds several copies of one allocation
        size = buf.size()
        if size is None:
            raise self.error(f"scratch buffer {buf.name} has a symbolic size")
        t = ir.ArrayType(memory_type(buf.dtype), size)
        # In the entry block: one stack slot for the whole call, not one per iteration.
        slot = self.allocas.alloca(t, name=c_identifier(buf.name))
        slot.align = self.scratch_align
        slot.type = PTR  # an opaque pointer: loads and stores of any element type
        self.buffers[id(buf.data)] = slot

    def loop(self, s):
        if s.kind == "parallel":
            raise self.error(f"loop {s.var.name} is parallel: not supported yet by the llvm "
                             "codegen (use target 'c', which runs it with OpenMP, or drop "
                             "parallel from the schedule)")
        t = value_type(s.var.dtype)
        lo = self.expr(s.min)
        hi = self.b.add(lo, self.expr(s.extent))
        pre = self.b.block
        head = self.fn.append_basic_block(f"for.{c_identifier(s.var.name)}")
        body = self.fn.append_basic_block("body")
        done = self.fn.append_basic_block("endfor")
        self.b.branch(head)
        self.b.position_at_end(head)
        i = self.b.phi(t, name=c_identifier(s.var.name))
        i.add_incoming(lo, pre)
        self.b.cbranch(self.b.icmp_signed("<", i, hi), body, done)
        self.b.position_at_end(body)
        self.vars[id(s.var)] = i
        self.stmt(s.body)
        nxt = self.b.add(i, _const(t, 1), flags=("nsw",))
        i.add_incoming(nxt, self.b.block)
        latch = self.b.branch(head)
        hint = dict(s.pragmas).get("unroll_hint")
        if hint is not None:
            latch.set_metadata("llvm.loop", self.unroll_metadata(int(hint)))
        del self.vars[id(s.var)]
        self.b.position_at_end(done)

    def unroll_metadata(self, count: int):
        """``!{!self, !{"llvm.loop.unroll.count", i32 count}}``: GCC's ``#pragma GCC unroll``."""
        opt = self.module.add_metadata([ir.MetaDataString(self.module, "llvm.loop.unroll.count"),
                                        I32(count)])
        # One node per loop, referring to itself (add_metadata would share equal nodes).
        loop_id = ir.values.MDValue(self.module, [opt], name=str(len(self.module.metadata)))
        loop_id.operands = (loop_id, opt)
        return loop_id


def _elem_align(elem: str) -> int:
    return 1 if elem == "bool" else E.bits(elem) // 8


def _may_trap(e) -> bool:
    """Whether evaluating ``e`` may read memory, call a function or divide:
    then C's lazy ``?:``/``&&`` must stay lazy."""
    for n in walk(e):
        if isinstance(n, E.Load) or (isinstance(n, E.Call) and n.kind != "intrin"):
            return True
        if isinstance(n, E.Binary) and n.op in ("div", "mod", "floordiv", "floormod") \
                and not (isinstance(n.b, E.IntImm) and n.b.value not in (0, -1)):
            return True
    return False


def _constant_global(module: ir.Module, name: str, data: np.ndarray,
                     align: int) -> ir.GlobalVariable:
    if name in module.globals:
        return module.globals[name]
    raw = bytearray(np.ascontiguousarray(data).astype(data.dtype.newbyteorder("<")).tobytes())
    t = ir.ArrayType(I8, len(raw))
    g = ir.GlobalVariable(module, t, name)
    g.global_constant, g.linkage, g.align = True, "internal", align
    g.initializer = ir.Constant(t, raw)
    g.type = PTR  # an opaque pointer: loads of any element type
    return g


def emit_unit(unit: Unit, externals: dict[str, External], constants_align: int = ALIGN,
              machine=None) -> ir.Module:
    """A module holding ``unit``'s function (plus the helpers and constants it
    uses); ``externals`` collects the functions it calls but does not define.
    ``machine`` is the :class:`~aot.codegen.llvm_object.CrossMachine` of
    objects for a microcontroller (None: this machine)."""
    module = ir.Module(name=unit.name)
    try:
        _FuncEmitter(module, unit, externals, constants_align, machine).emit()
    except (TypeError, ValueError, KeyError, AssertionError) as err:
        # llvmlite refusing what the emitter built is a bug of the emitter:
        # say where, keep what was built, never show a traceback.
        try:
            where = f"; the partial IR is in {invalid_ir_file(unit.name, str(module))}"
        except Exception:  # noqa: BLE001 (an unfinished block may not print)
            where = ""
        raise BuildError(f"{unit.label}: the llvm codegen failed ({type(err).__name__}: "
                         f"{err}){where}; please report it") from None
    return module


# -- checks shared by aot.build and model compilation ----------------------------------
def check_names(funcs) -> None:
    for f in funcs:
        if c_identifier(f.name) != f.name:
            raise BuildError(f"kernel name {f.name!r} is not a usable symbol (letters, digits "
                             f"and _, not starting with a digit, not a C keyword): use "
                             f"{c_identifier(f.name)!r} for example")


def unit_of_func(func: S.PrimFunc) -> Unit:
    """An ``aot.build`` function as a unit: every parameter is a pointer, the
    ``import_c`` code is its C support."""
    imports = "\n".join(code.strip("\n") for code in func.attrs.get("imports", []))
    text = "#include <stdint.h>\n#include <math.h>\n" + imports if imports else ""
    return Unit(func, func.name, f"function {func.name}",
                may_alias=frozenset(func.attrs.get("may_alias", ())), support=CSupport(text))


def unit_of_kernel(kernel, headers: dict[str, str]) -> Unit:
    """A model kernel (:class:`aot.kernels.Kernel`) as a unit: its constants are
    globals named as in the C, the pairs it writes in place are not ``noalias``.
    A hand-written kernel (C only) is refused."""
    ops = ", ".join(dict.fromkeys(kernel.op_names))
    if kernel.func is None:
        raise BuildError(f"not supported yet by the llvm codegen: {ops} (kernel {kernel.name} "
                         "is hand-written C); compile this model for target 'c' (for a "
                         "board: --codegen c)")
    if kernel.scratch_bytes:
        raise BuildError(f"not supported yet by the llvm codegen: kernel {kernel.name} ({ops}) "
                         "takes a workspace scratch argument")
    func = kernel.func
    n_in = sum(p.role == "input" for p in kernel.params)
    consts = {id(func.params[n_in + i].data): (c.name, c.data)
              for i, c in enumerate(kernel.constants)}
    runtime = [b for b in func.params if id(b.data) not in consts]
    may_alias = frozenset(id(runtime[i].data) for pair in kernel.inplace for i in pair)
    text = "".join(kernel.prelude) + "#include <stdint.h>\n" + "".join(
        f'#include "{h}"\n' for h in kernel.includes)
    return Unit(func, kernel.name, f"kernel {kernel.name} ({ops})", consts, may_alias,
                CSupport(text, tuple(sorted(headers.items()))))


# -- the module ---------------------------------------------------------------------------
class LLVMModule(KernelModule):
    """LLVM IR for some kernels and, on this machine, the kernels themselves.

    ``source`` is the IR (``get_source()``, ``save(path)`` writes a ``.ll``);
    calling the module (or ``module[name]``) on numpy arrays runs a kernel
    with the convention and checks of every :class:`aot.codegen.c.KernelModule`,
    compiled on first use by LLVM's MCJIT (:mod:`aot.codegen.llvm_jit`).
    For a microcontroller target (``machine``), :meth:`objects` compiles each
    unit to an ELF object instead (:mod:`aot.codegen.llvm_object`).
    Each unit's IR is verified when the module is built; an invalid one is
    a :class:`BuildError` naming the kernel and a file holding its IR.
    """

    def __init__(self, units: list[Unit], target: Target):
        self.target = target
        self.options = check_target(target)
        self.machine = self.options["machine"]
        self.units = {u.name: u for u in units}
        self.params_of = {name: u.params for name, u in self.units.items()}
        if len(self.units) != len(units):
            raise BuildError("two functions of one module have the same name")
        self.entry_name = units[0].name
        self.externals: dict[str, External] = {}
        self.modules_text = [str(emit_unit(u, self.externals, self.options["constants_align"],
                                           self.machine)) for u in units]
        for text, u in zip(self.modules_text, units):
            verify(text, u.label, u.name)
        self.source = "\n".join(self.modules_text)
        #: The called functions that C code must define (not the headers' bitcode,
        #: not a unit of the module: the kernels an entry function calls).
        self.c_externals = {n: e for n, e in self.externals.items()
                            if not e.bitcode and n not in self.units}
        self._jit = None
        self._objects: dict[tuple, dict[str, bytes]] = {}

    def invoke(self, name: str, addresses: list[int]) -> int:
        return self.function(name)(*addresses)

    def function(self, name: str):
        """The compiled kernel ``name`` as a ctypes function of data addresses."""
        return self.compile().function(name, len(self.units[name].params))

    def compile(self):
        """Compile the module with the host JIT (once); returns the
        :class:`aot.codegen.llvm_jit.HostJit`."""
        if self.machine is not None:
            raise BuildError(f"the module was compiled for {self.machine.describe()} "
                             f"({str(self.target)!r}), not for this machine: link its objects "
                             "(.objects()) into firmware for that core instead of calling it")
        if self._jit is None:
            self._jit = HostJit(self)
        return self._jit

    def objects(self, rename=None) -> dict[str, bytes]:
        """Each unit compiled to an ELF object for the target's microcontroller,
        by unit name; ``rename`` maps called functions to the symbols that define
        them.  LLVM failing is a :class:`BuildError` naming the unit and the
        file its IR was written to."""
        if self.machine is None:
            raise BuildError(f"{str(self.target)!r} is this machine's target (the JIT): "
                             "objects are made for microcontroller targets "
                             "('llvm -mcpu=cortex-m4 ...' or a board with --codegen llvm)")
        key = tuple(sorted((rename or {}).items()))
        if key not in self._objects:
            out = {}
            for text, u in zip(self.modules_text, self.units.values()):
                try:
                    out[u.name] = emit_object(text, self.machine, self.options["opt"],
                                              rename=rename,
                                              helpers=u.helper_variant(self.machine))
                except RuntimeError as err:
                    path = invalid_ir_file(u.name, text)
                    first = str(err).strip().splitlines()[0] if str(err).strip() else "no message"
                    raise BuildError(f"{u.label}: compiling the object for "
                                     f"{self.machine.triple} failed in LLVM ({first}); the IR "
                                     f"is in {path}; please report it") from None
            self._objects[key] = out
        return self._objects[key]

    def object_text_bytes(self) -> int:
        """Bytes of machine code (``.text`` sections) of the module compiled for
        its machine (this one, or the microcontroller's objects) at the target's
        opt level."""
        if self.machine is not None:
            return sum(text_bytes(obj) for obj in self.objects().values())
        return object_text_bytes(self)


def build_llvm_module(funcs, target) -> LLVMModule:
    """``aot.build`` for the target kind ``llvm`` (see :func:`aot.codegen.build.build`)."""
    _, tobj = canonical_target(target)
    check_names(funcs)
    return LLVMModule([unit_of_func(f) for f in funcs], tobj)


def build_kernels(kernels, target, headers: dict[str, str], entry=None) -> LLVMModule:
    """One LLVM module holding a model's kernels, each exported under its name,
    and ``entry`` (a PrimFunc calling them, the executor's entry function) if given."""
    _, tobj = canonical_target(target)
    units = [unit_of_kernel(k, headers) for k in kernels]
    if entry is not None:
        units.append(Unit(entry, entry.name, f"the entry function {entry.name}",
                          may_alias=frozenset(entry.attrs.get("may_alias", ()))))
    return LLVMModule(units, tobj)


