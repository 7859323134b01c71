"""C99 code generation from PrimFuncs, and the host-compiled module.

Each PrimFunc becomes ``int32_t name(const T* restrict in, ..., T* restrict
out)`` returning 0: parameters that are never written are ``const``, scratch
buffers are arrays on the stack, vectors use GCC vector extensions (typedefs
with element alignment, ``__builtin_convertvector`` for casts).  Narrow
integer results are cast back to their type after every operation so C's
promotion to ``int`` does not change the IR's wrap-around semantics.  The
whole file comes from the ``kernels.c.j2`` template; expressions are
printed here, never in the template.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from aot.version import __version__
from aot.codegen.cc import CCompiler
from aot.codegen.jinja import templates
from aot.errors import BuildError, did_you_mean
from aot.target import Target, runs_on_host
from aot.te.schedule import ScheduleError
from aot.tir import expr as E
from aot.tir import stmt as S
from aot.tir.functor import all_nodes
from aot.tir.expr import Namer, float_literal


C_TYPES = {"bool": "_Bool", "int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t",
           "int32": "int32_t", "int64": "int64_t", "float32": "float", "handle": "void*"}
NP_TYPES = {"bool": np.bool_, "int8": np.int8, "uint8": np.uint8, "int16": np.int16,
            "int32": np.int32, "int64": np.int64, "float32": np.float32}
_C_OPS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "mod": "%", "eq": "==",
          "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "and": "&&",
          "or": "||", "shl": "<<", "shr": ">>", "bitand": "&", "bitor": "|", "bitxor": "^"}
_WRAPPING = ("add", "sub", "mul", "shl", "bitxor", "bitor", "bitand")
_C_KEYWORDS = {"auto", "break", "case", "char", "const", "continue", "default", "do",
               "double", "else", "enum", "extern", "float", "for", "goto", "if", "inline",
               "int", "long", "register", "restrict", "return", "short", "signed",
               "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned",
               "void", "volatile", "while"}
_FLOAT_FUNCS = {"exp": "expf", "sqrt": "sqrtf", "tanh": "tanhf", "floor": "floorf",
                "round": "roundf", "ceil": "ceilf", "log": "logf",
                "sin": "sinf", "cos": "cosf", "fmod": "fmodf", "expm1": "expm1f",
                "erf": "erff"}



def c_identifier(name: str) -> str:
    out = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name)
    if not out or out[0].isdigit():
        out = "v_" + out
    if out in _C_KEYWORDS:
        out += "_"
    return out


def _vector_type(dtype: str) -> str:
    return "aot_" + dtype


class _FileState:
    """What the functions of one file need in the preamble."""

    def __init__(self):
        self.typedefs: dict[str, str] = {}
        self.helpers: dict[str, str] = {}
        self.need_math = False
        self.need_string = False  # memcpy, memmove, memset
        self.parallel = False
        self.scratch = False

    def vector(self, dtype: str) -> str:
        name = _vector_type(dtype)
        if name not in self.typedefs:
            elem, lanes = E.split_dtype(dtype)
            size = lanes * E.bits(elem) // 8
            ctype = C_TYPES[elem]
            self.typedefs[name] = (f"typedef {ctype} {name} __attribute__((vector_size({size}), "
                                   f"aligned({E.bits(elem) // 8}), may_alias));")
        return name

    def unsigned_vector(self, dtype: str) -> str:
        """The unsigned twin of a signed narrow vector type: arithmetic on it
        wraps by definition, where signed vector overflow would be undefined
        (and GCC folds ``x < x + x`` to ``0 < x``)."""
        name = _vector_type(dtype) + "_u"
        if name not in self.typedefs:
            elem, lanes = E.split_dtype(dtype)
            size = lanes * E.bits(elem) // 8
            self.typedefs[name] = (f"typedef u{C_TYPES[elem]} {name} __attribute__(("
                                   f"vector_size({size}), aligned({E.bits(elem) // 8}), "
                                   "may_alias));")
        return name

    def vector_blend(self, op: str, dtype: str, a: str, b: str, cond: str = "") -> str:
        """Choose lanes by a comparison mask (GCC vector comparisons give
        -1/0 lanes as wide as the compared elements).  A GNU statement
        expression evaluates each operand once; a helper function would pass
        vectors by value, which GCC warns about (-Wpsabi)."""
        elem, lanes = E.split_dtype(dtype)
        vt = self.vector(dtype)
        mask = self.vector(E.with_lanes({8: "int8", 16: "int16", 32: "int32",
                                         64: "int64"}[E.bits(elem)], lanes))
        if op == "select":
            m = f"{mask} m_ = ({mask})({cond}); "
        else:
            m = f"{mask} m_ = ({mask})(t_ {'<' if op == 'min' else '>'} f_); "
        return (f"({{ {vt} t_ = {a}; {vt} f_ = {b}; {m}"
                f"({vt})((({mask})t_ & m_) | (({mask})f_ & ~m_)); }})")

    def helper(self, op: str, dtype: str) -> str:
        name = f"aot_{op}_{dtype}"
        if name in self.helpers:
            return name
        t = C_TYPES[dtype]
        if op == "floordiv":
            body = (f"{t} q = a / b; return (q * b != a && ((a < 0) != (b < 0))) ? "
                    f"({t})(q - 1) : q;")
        elif op == "floormod":
            body = f"{t} r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? ({t})(r + b) : r;"
        elif op == "min":
            body = "return a < b ? a : b;"
        elif op == "max":
            body = "return a > b ? a : b;"
        else:  # abs
            self.helpers[name] = (f"static inline {t} {name}({t} a) "
                                  f"{{ return a < 0 ? ({t})-a : a; }}")
            return name
        self.helpers[name] = f"static inline {t} {name}({t} a, {t} b) {{ {body} }}"
        return name


class _FuncGen:
    def __init__(self, func: S.PrimFunc, state: _FileState):
        self.func, self.state = func, state
        self.name = Namer(c_identifier)
        self._self_key = object()  # kept alive: Namer keys on id()
        self.name(self._self_key, func.name)  # no variable may take the function's name
        self.name.used.update(("t_", "f_", "m_"))  # temporaries of vector blends
        self.lines: list[str] = []
        written = _written_buffers(func.body)
        self.const_params = {id(b.data) for b in func.params if id(b.data) not in written}
        self.used = _used_buffers(func.body)

    def buf(self, b) -> str:
        return self.name(b.data, b.name)

    # -- expressions -----------------------------------------------------------
    def expr(self, e) -> str:
        p = self.expr
        if isinstance(e, E.IntImm):
            return self.int_literal(e)
        if isinstance(e, E.FloatImm):
            if E.lanes_of(e.dtype) != 1:
                raise BuildError("vector float constant")
            if not np.isfinite(e.value):
                self.state.need_math = True
                return "INFINITY" if e.value > 0 else "(-INFINITY)"
            text = float_literal(e.value) + "f"
            return f"({text})" if text.startswith("-") else text
        if isinstance(e, E.StringImm):
            return '"' + e.value.replace("\\", "\\\\").replace('"', '\\"') + '"'
        if isinstance(e, E.FuncRef):
            return c_identifier(e.name)
        if isinstance(e, E.Var):
            return self.name(e, e.name)
        if isinstance(e, E.Binary):
            return self.binary(e)
        if isinstance(e, E.Not):
            return f"(!{p(e.a)})"
        if isinstance(e, E.Select):
            if E.lanes_of(e.dtype) > 1:
                return self.state.vector_blend("select", e.dtype, p(e.t), p(e.f), p(e.cond))
            return f"({p(e.cond)} ? {p(e.t)} : {p(e.f)})"
        if isinstance(e, E.Cast):
            if E.lanes_of(e.dtype) > 1:
                return f"__builtin_convertvector({p(e.value)}, {self.state.vector(e.dtype)})"
            return f"(({C_TYPES[e.dtype]}){p(e.value)})"
        if isinstance(e, E.Call):
            return self.call(e)
        if isinstance(e, E.Load):
            b = self.buf(e.buffer)
            if isinstance(e.index, E.Ramp):
                vt = self.state.vector(e.dtype)
                qual = "const " if id(e.buffer.data) in self.const_params else ""
                return f"(*({qual}{vt}*)({b} + {p(e.index.base)}))"
            return f"{b}[{p(e.index)}]"
        if isinstance(e, E.Ramp):
            vt = self.state.vector(e.dtype)
            lanes = ", ".join(str(i) for i in range(e.lanes))
            return f"(({vt}){{{lanes}}} * {p(e.stride)} + {p(e.base)})"
        if isinstance(e, E.Broadcast):
            vt = self.state.vector(e.dtype)
            elem = E.element(e.dtype)
            # x + 0 turns -0.0 into +0.0; -0.0 + x is x for every float x.
            base = "{" + ", ".join(["-0.0f"] * e.lanes) + "}" if E.is_float(elem) else "{0}"
            return f"(({vt}){base} + ({C_TYPES[elem]}){p(e.value)})"
        if isinstance(e, E.AccessPtr):
            return f"({self.buf(e.buffer)} + {p(e.offset)})"
        if isinstance(e, E.Address):
            return self.address(e)
        raise BuildError(f"cannot generate C for {type(e).__name__} (lower the schedule first)")

    def int_literal(self, e) -> str:
        v, dt = e.value, E.element(e.dtype)
        if dt == "bool":
            return "1" if v else "0"
        if dt == "int64":
            return f"INT64_C({v})"
        if dt == "int32":
            return "(-2147483647 - 1)" if v == -(2 ** 31) else (f"({v})" if v < 0 else str(v))
        return f"(({C_TYPES[dt]}){v})"

    def binary(self, e) -> str:
        a, b = self.expr(e.a), self.expr(e.b)
        elem, lanes = E.split_dtype(e.a.dtype)
        if e.op in ("min", "max") and lanes > 1:
            return self.state.vector_blend(e.op, e.a.dtype, a, b)
        if e.op in ("floordiv", "floormod", "min", "max"):
            if lanes > 1:
                raise BuildError(f"{e.op} has no vector form")
            if e.op in ("floordiv", "floormod") and isinstance(e.b, E.IntImm) and e.b.value > 0 \
                    and (e.op == "floordiv" and (e.b.value & (e.b.value - 1)) == 0
                         and E.is_signed(elem)):
                shift = e.b.value.bit_length() - 1
                return f"({a} >> {shift})"  # arithmetic shift is floor division by 2^k
            if e.op == "floormod" and isinstance(e.b, E.IntImm) and e.b.value > 0 \
                    and (e.b.value & (e.b.value - 1)) == 0:
                # two's complement: the low bits are the floor remainder
                return f"(({C_TYPES[elem]})({a} & {e.b.value - 1}))"
            return f"{self.state.helper(e.op, elem)}({a}, {b})"
        if lanes > 1 and e.op in _WRAPPING and elem in ("int8", "int16"):
            # The IR's narrow results wrap; signed vector overflow is undefined in C.
            ut, vt = self.state.unsigned_vector(e.a.dtype), self.state.vector(e.a.dtype)
            return f"(({vt})(({ut}){a} {_C_OPS[e.op]} ({ut}){b}))"
        text = f"({a} {_C_OPS[e.op]} {b})"
        if lanes == 1 and e.op in _WRAPPING and elem in ("int8", "uint8", "int16"):
            return f"(({C_TYPES[elem]}){text})"
        if lanes == 1 and e.op in ("shr", "div") and elem in ("int8", "uint8", "int16"):
            # the IR's narrow result wraps: INT8_MIN / -1 is INT8_MIN, as in the
            # LLVM path, not the int 128 that C's promotion gives
            return f"(({C_TYPES[elem]}){text})"
        return text

    def address(self, e) -> str:
        """``(T *)(base + offset)``, the offset in bytes: a byte array's own
        pointer moves by bytes, any other is viewed as bytes first."""
        qual = "" if "w" in e.mode else "const "
        base, offset = self.buf(e.buffer), self.expr(e.offset)
        if e.pointee == e.buffer.dtype and E.is_const_int(e.offset, 0):
            return base
        moved = f"({base} + {offset})" if e.buffer.dtype == "uint8" \
            else f"(({qual}uint8_t *){base} + {offset})"
        return moved if e.pointee == "uint8" else f"({qual}{C_TYPES[e.pointee]} *){moved}"

    def call(self, e) -> str:
        args = ", ".join(self.expr(a) for a in e.args)
        if e.kind != "intrin":
            return f"{e.name}({args})"
        if e.name in E.MEMORY_BUILTINS:
            self.state.need_string = True
            return f"{e.name}({args})"
        if e.name == "likely":
            return f"__builtin_expect(!!({args}), 1)"
        if e.name in _FLOAT_FUNCS:
            self.state.need_math = True
            return f"{_FLOAT_FUNCS[e.name]}({args})"
        if e.name == "abs":
            if E.is_float(e.dtype):
                self.state.need_math = True
                return f"fabsf({args})"
            return f"{self.state.helper('abs', E.element(e.dtype))}({args})"
        raise BuildError(f"no C form for the builtin {e.name}")

    # -- statements ------------------------------------------------------------
    def emit(self, indent: int, text: str) -> None:
        self.lines.append("  " * indent + text)

    def stmt(self, s, indent: int) -> None:
        if isinstance(s, S.SeqStmt):
            for part in s.seq:
                self.stmt(part, indent)
        elif isinstance(s, S.For):
            self.for_(s, indent)
        elif isinstance(s, S.Store):
            b = self.buf(s.buffer)
            value = self.expr(s.value)
            if isinstance(s.index, E.Ramp):
                vt = self.state.vector(s.value.dtype)
                self.emit(indent, f"*({vt}*)({b} + {self.expr(s.index.base)}) = {value};")
            else:
                self.emit(indent, f"{b}[{self.expr(s.index)}] = {value};")
        elif isinstance(s, S.IfThenElse):
            self.emit(indent, f"if ({self.expr(s.cond)}) {{")
            self.stmt(s.then_case, indent + 1)
            if s.else_case is not None:
                self.emit(indent, "} else {")
                self.stmt(s.else_case, indent + 1)
            self.emit(indent, "}")
        elif isinstance(s, S.Allocate):
            # A block scopes the array to its statement, as in the IR (an
            # unrolled loop may hold several copies of one allocation).
            self.emit(indent, "{")
            self.declare(s.buffer, indent + 1)
            self.stmt(s.body, indent + 1)
            self.emit(indent, "}")
        elif isinstance(s, S.Evaluate):
            if isinstance(s.value, E.Call):
                self.emit(indent, f"(void){self.expr(s.value)};")
        elif isinstance(s, S.LetStmt):
            # Names are unique in the function, so the declaration needs no block.
            v = self.name(s.var, s.var.name)
            if s.var.dtype == "handle":
                qual = "" if "w" in s.value.mode else "const "
                self.emit(indent, f"{qual}{C_TYPES[s.value.pointee]} *{v} = "
                                  f"{self.expr(s.value)};")
            else:
                self.emit(indent, f"const {C_TYPES[s.var.dtype]} {v} = {self.expr(s.value)};")
            self.stmt(s.body, indent)
        elif isinstance(s, S.Return):
            self.emit(indent, f"return {self.expr(s.value)};")
        elif isinstance(s, S.Comment):
            self.emit(indent, f"/* {s.text.replace('*/', '* /')} */")
        else:
            raise BuildError(f"cannot generate C for {type(s).__name__}")

    def declare(self, b, indent):
        self.state.scratch = True
        size = b.size()
        if size is None:
            raise BuildError(f"scratch buffer {b.name} has a symbolic size")
        self.emit(indent, f"{C_TYPES[b.dtype]} {self.buf(b)}[{size}];")

    def for_(self, s, indent):
        v = self.name(s.var, s.var.name)
        for key, value in s.pragmas:
            if key == "unroll_hint":
                self.emit(indent, f"#pragma GCC unroll {int(value)}")
            else:
                self.emit(indent, f"/* pragma {key}" + ("" if value is None else f" = {value}")
                          + " */")
        if s.kind == "parallel":
            self.state.parallel = True
            self.emit(0, "#ifdef _OPENMP")
            self.emit(0, "#pragma omp parallel for")
            self.emit(0, "#endif")
        mn = self.expr(s.min)
        end = self.expr(E.Binary("add", s.min, s.extent)) if not E.is_const_int(s.min, 0) \
            else self.expr(s.extent)
        if isinstance(s.min, E.IntImm) and isinstance(s.extent, E.IntImm):
            end = str(s.min.value + s.extent.value)
        self.emit(indent, f"for ({C_TYPES[s.var.dtype]} {v} = {mn}; {v} < {end}; ++{v}) {{")
        self.stmt(s.body, indent + 1)
        self.emit(indent, "}")

    def signature(self) -> str:
        if self.func.attrs.get("task"):
            return f"static void {c_identifier(self.func.name)}(const void *arg)"
        # attrs["may_alias"]: ids of parameters the caller may bind to one address
        # (an output written in place over an input), declared without restrict.
        may_alias = self.func.attrs.get("may_alias", ())
        params = []
        for b in self.func.params:
            qual = "const " if id(b.data) in self.const_params else ""
            restrict = "" if id(b.data) in may_alias else " restrict"
            params.append(f"{qual}{C_TYPES[b.dtype]}*{restrict} {self.buf(b)}")
        linkage = "static " if self.func.attrs.get("static") else ""
        # attrs["code_section"]: the linker section the function runs from
        # (AOT_RAM_CODE of aot_kernel_target.h: code copied to RAM at start-up).
        section = self.func.attrs.get("code_section")
        if section:
            linkage = f'AOT_RAM_CODE("{section}") {linkage}'
        return f"{linkage}int32_t {c_identifier(self.func.name)}({', '.join(params) or 'void'})"

    def generate(self) -> str:
        for b in self.func.params:
            self.buf(b)
        if self.func.attrs.get("task"):
            return self.generate_task()
        body = self.func.body
        while isinstance(body, S.Allocate):  # function-level scratch: no block needed
            self.declare(body.buffer, 1)
            body = body.body
        self.stmt(body, 1)
        unused = [f"  (void){self.buf(b)};" for b in self.func.params
                  if id(b.data) not in self.used]
        last = body.seq[-1] if isinstance(body, S.SeqStmt) else body
        while isinstance(last, S.LetStmt):
            last = last.body.seq[-1] if isinstance(last.body, S.SeqStmt) else last.body
        end = [] if isinstance(last, S.Return) else ["  return 0;"]  # a function ends in a status
        return "\n".join([self.signature() + " {", *unused, *self.lines, *end, "}"])

    def generate_task(self) -> str:
        """A task another core runs (``attrs["task"]``): ``void name(const void *arg)``,
        ``arg`` the address of its one byte buffer; it returns nothing."""
        if len(self.func.params) != 1 or self.func.params[0].dtype != "uint8":
            raise BuildError(f"task {self.func.name}: takes one byte buffer (its argument)")
        b = self.buf(self.func.params[0])
        self.stmt(self.func.body, 1)
        return "\n".join([self.signature() + " {", f"  uint8_t *{b} = (uint8_t *)arg;",
                          *self.lines, "}"])


def _written_buffers(body) -> set:
    out = set()
    for n in all_nodes(body):
        if isinstance(n, S.Store) or (isinstance(n, (E.AccessPtr, E.Address))
                                      and "w" in n.mode):
            out.add(id(n.buffer.data))
    return out


def _used_buffers(body) -> set:
    return {id(n.buffer.data) for n in all_nodes(body)
            if isinstance(n, (S.Store, E.Load, E.AccessPtr, E.Address))}


def prototype(func: S.PrimFunc) -> str:
    """The C declaration of a kernel: ``int32_t name(const T* restrict A, ...);``."""
    return _FuncGen(func, _FileState()).signature() + ";"


@dataclass(frozen=True)
class Functions:
    """The C of some functions for a file whose template writes the rest
    (:func:`print_functions`): ``text`` (the vector types and helpers they use,
    then the functions) and the headers it needs besides ``<stdint.h>``."""

    text: str
    need_math: bool
    need_string: bool


def print_functions(funcs) -> Functions:
    """``funcs`` (PrimFuncs) as C for a file of another template (the executor's
    entry file): the one printer of :func:`generate_c`, without the file around."""
    state = _FileState()
    bodies = [_FuncGen(f, state).generate() for f in funcs]
    text = "\n\n".join([*state.typedefs.values(), *state.helpers.values(), *bodies])
    return Functions(text, state.need_math, state.need_string)


def generate_c(funcs, target: str = "c", includes=(), declarations=(), trailer=()) -> str:
    """The text of one C file holding ``funcs`` (PrimFuncs); ``includes``
    are extra headers (``"<arm_acle.h>"`` or ``'"my.h"'``), ``declarations``
    C blocks placed ahead of the functions (constant arrays) and ``trailer``
    blocks after them.  A function with ``attrs["static"]`` has internal
    linkage; one with ``attrs["code_section"]`` is placed in that linker
    section (``AOT_RAM_CODE`` of the kernels' target header)."""
    state = _FileState()
    bodies = [_FuncGen(f, state).generate() for f in funcs]
    imports = []
    for f in funcs:
        for code in f.attrs.get("imports", []):
            if code not in imports:
                imports.append(code.strip("\n"))
    return templates("aot.codegen").get_template("kernels.c.j2").render(
        version=__version__, target=target, need_math=state.need_math,
        need_string=state.need_string, scratch=state.scratch,
        includes=list(includes), typedefs=list(state.typedefs.values()),
        helpers=list(state.helpers.values()), imports=imports, declarations=list(declarations),
        functions=bodies, trailer=list(trailer))


# -- targets -------------------------------------------------------------------------
def canonical_target(target) -> tuple[str, object]:
    """``(canonical string, Target or None)`` for a string or Target; the
    only place that knows how targets are represented."""
    t = target if isinstance(target, Target) else Target(str(target))
    return str(t), t


def _is_host(target_obj, text: str) -> bool:
    if target_obj is None:
        return text.strip() == "c"
    return target_obj.kind == "c" and runs_on_host(target_obj)


# -- modules ---------------------------------------------------------------------------------
class KernelModule:
    """What every backend's module of kernels offers: ``source`` (its text),
    ``get_source()``, ``save(path)``, and calls on numpy arrays, ``module(...)``
    for the first kernel and ``module[name](...)`` for any, with one argument
    check (:func:`array_addresses`; outputs are written in place).  A backend
    says how a kernel runs on data addresses (:meth:`invoke`) and which
    kernels it holds (``params_of``: name -> parameter buffers)."""

    source: str
    entry_name: str
    params_of: dict

    def get_source(self) -> str:
        return self.source

    def save(self, path) -> Path:
        path = Path(path)
        path.write_text(self.source)
        return path

    def __getitem__(self, name: str):
        if name not in self.params_of:
            raise BuildError(f"no kernel named {name!r} in this module"
                             f"{did_you_mean(name, self.params_of)}")
        return lambda *arrays: self._call(name, arrays)

    def __call__(self, *arrays) -> None:
        self._call(self.entry_name, arrays)

    def _call(self, name, arrays):
        status = self.invoke(name, array_addresses(name, self.params_of[name], arrays))
        if status != 0:
            raise BuildError(f"{name} returned status {status}")

    def invoke(self, name: str, addresses: list[int]) -> int:
        """Run kernel ``name`` on the data at ``addresses``; its status."""
        raise NotImplementedError


class CModule(KernelModule):
    """Generated C for some kernels (see :class:`KernelModule`).

    ``source`` is the C99 text; for the host target calling the module
    compiles it with the host compiler into a cached shared object.
    """

    def __init__(self, funcs, target: str, host: bool):
        self.funcs = {f.name: f for f in funcs}
        self.params_of = {name: f.params for name, f in self.funcs.items()}
        self.entry_name = funcs[0].name
        self.target = target
        self.is_host = host
        self.source = generate_c(funcs, target)
        self._lib = None

    @property
    def prototypes(self) -> dict[str, str]:
        """Kernel name -> C declaration, for headers of generated projects."""
        return {name: prototype(f) for name, f in self.funcs.items()}

    def invoke(self, name: str, addresses: list[int]) -> int:
        fn = getattr(self._library(), c_identifier(name))
        fn.restype = ctypes.c_int32
        return fn(*(ctypes.c_void_p(a) for a in addresses))

    def _library(self):
        if self._lib is None:
            if not self.is_host:
                raise BuildError(
                    f"this module targets {self.target!r}, which is not the host: save the "
                    "source and build it with the target's toolchain (or build for 'c')")
            self._lib = ctypes.CDLL(str(compile_host(self.source)))
        return self._lib


def array_addresses(name: str, params, arrays) -> list[int]:
    """The data addresses of ``arrays`` for a call of kernel ``name`` whose
    parameters are the buffers ``params``: each must be a C-contiguous numpy
    array of the buffer's dtype and shape (outputs are written in place).
    The one argument check of every host-callable module."""
    if len(arrays) != len(params):
        raise BuildError(f"{name} takes {len(params)} arrays "
                         f"({', '.join(b.name for b in params)}), got {len(arrays)}")
    out = []
    for n, (a, b) in enumerate(zip(arrays, params)):
        shape = tuple(int(d.value) for d in b.shape)
        want = np.dtype(NP_TYPES[b.dtype])
        if not isinstance(a, np.ndarray) or a.dtype != want or a.shape != shape \
                or not a.flags.c_contiguous:
            got = f"{a.dtype}{list(a.shape)}" if isinstance(a, np.ndarray) else type(a).__name__
            raise BuildError(f"{name}: argument {n} ({b.name}) must be a C-contiguous "
                             f"numpy array {want}{list(shape)}, got {got}")
        out.append(a.ctypes.data)
    return out


def compile_host(source: str, extra_flags=()) -> Path:
    """Compile ``source`` with the host compiler into a cached shared object
    (:meth:`aot.codegen.cc.CCompiler.shared_object`) and return its path."""
    return CCompiler.host().shared_object(source, extra_flags)


def build_module(funcs, target) -> CModule:
    text, tobj = canonical_target(target)
    kind = tobj.kind if tobj is not None else text.split()[0]
    if kind != "c":
        raise BuildError(f"target kind {kind!r} has no C code generator: use 'c', or "
                         "aot.build, which takes 'llvm' to aot.codegen.llvm")
    host = _is_host(tobj, text)
    for f in funcs:
        if c_identifier(f.name) != f.name:
            raise BuildError(f"kernel name {f.name!r} is not a usable C identifier (letters, "
                             "digits and _, not starting with a digit, not a C keyword): "
                             f"use {c_identifier(f.name)!r} for example")
        if not host and _has_parallel(f.body):
            raise ScheduleError(f"kernel {f.name}: parallel loops are accepted for host targets "
                                f"only, not {text!r}")
    return CModule(funcs, text, host)


def _has_parallel(body) -> bool:
    return any(isinstance(n, S.For) and n.kind == "parallel" for n in all_nodes(body))
