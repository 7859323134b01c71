"""The host side of the LLVM backend: target options, verification, MCJIT.

:func:`check_target` is the one place that decides which ``llvm`` targets
this version serves: code for the machine running aot, compiled for its
own CPU (LLVM's host CPU name and features) at the target's
``-opt-level``, or objects for an Arm Cortex-M or 32-bit RISC-V core
(:mod:`aot.codegen.llvm_object`).  Every other option is refused by name
rather than ignored.

:class:`HostJit` links a module's per-function IR with the support headers'
helpers it calls, as the shipped bitcode of this machine's architecture
(:mod:`aot.codegen.llvm_helpers`: no C compiler runs), runs LLVM's
optimisation pipeline and compiles it with MCJIT.  Calls of other C
functions (``import_c`` code) are resolved through a *helper library*: a
small C file that includes the unit's C support and exports one wrapper per
called function, compiled once with the host compiler
(:class:`aot.codegen.cc.CCompiler`, cached) and loaded with ctypes; each
wrapper's address is registered with LLVM under a name unique to that
library, so two modules may define a function of the same name differently.
A call nothing defines is a :class:`BuildError` before MCJIT sees it (MCJIT
would abort the process).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import tempfile
from pathlib import Path

import llvmlite.binding as llvm

from aot.codegen import llvm_helpers
from aot.codegen.c import C_TYPES
from aot.codegen.cc import CCompiler
from aot.codegen.llvm_object import cross_machine
from aot.errors import BuildError
from aot.target import Target, runs_on_host

#: Attributes of the ``llvm`` kind that do not change the host JIT's code
#: (informative, or used by the memory planner and the kernel library).
_NEUTRAL = {"device", "model", "mtriple", "workspace-byte-alignment",
            "constants-byte-alignment", "opt-level"}
#: Attributes that say which microcontroller objects are for (llvm_object.cross_machine).
_CROSS = {"mcpu", "march", "mfloat-abi", "mfpu", "mattr", "mabi"}


@functools.cache
def _initialize() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    libm = ctypes.util.find_library("m")
    if libm:  # expf/tanhf for the kernels, whatever the interpreter linked
        llvm.load_library_permanently(libm)


def check_target(target: Target) -> dict:
    """The options of an ``llvm`` target this version serves, or a
    :class:`BuildError` naming the option that is not supported yet:
    ``opt`` (the opt level), ``constants_align``, and ``machine``: None for
    this machine (the JIT), else the :class:`~aot.codegen.llvm_object.CrossMachine`
    of an Arm Cortex-M or RISC-V target (objects, :mod:`aot.codegen.llvm_object`)."""
    if target.kind != "llvm":
        raise BuildError(f"target {str(target)!r} is not an llvm target")
    machine = None if runs_on_host(target) else cross_machine(target)
    neutral = _NEUTRAL | (_CROSS if machine is not None else set())
    for name, value in target.attrs.items():
        default = target.kind_spec.attr(name).default
        if name in neutral or value == default:
            continue
        written = f"-{name}" if value is True else f"-{name}=" + (
            ",".join(value) if isinstance(value, (list, tuple)) else str(value))
        what = ("compiles for this machine's own CPU, without fast-math or a system library"
                if machine is None else "makes objects without fast-math or a system library")
        raise BuildError(
            f"not supported yet by the llvm codegen: {written} (it {what}); remove the "
            "option, or use the 'c' target")
    opt = target.attrs["opt-level"]
    if opt not in (0, 1, 2, 3):
        raise BuildError(f"-opt-level={opt}: the llvm codegen takes 0, 1, 2 or 3")
    return {"opt": opt, "machine": machine,
            "constants_align": max(16, target.attrs["constants-byte-alignment"] or 16)}


def host_machine(opt: int, *, jit: bool = True):
    """An LLVM target machine for this machine's CPU."""
    _initialize()
    t = llvm.Target.from_default_triple()
    return t.create_target_machine(cpu=llvm.get_host_cpu_name(),
                                   features=llvm.get_host_cpu_features().flatten(),
                                   opt=opt, jit=jit, codemodel="jitdefault" if jit else "default")


def invalid_ir_file(name: str, text: str) -> Path:
    """Write IR that failed to verify where the user can read it."""
    folder = Path(tempfile.mkdtemp(prefix="aot-llvm-"))
    path = folder / f"{name}.ll"
    path.write_text(text)
    return path


def verify(text: str, label: str, name: str):
    """Parse and verify the IR ``text`` of one function; an invalid one is a
    :class:`BuildError` naming ``label`` and a file holding the IR."""
    _initialize()
    try:
        mod = llvm.parse_assembly(text)
        mod.verify()
    except RuntimeError as err:
        path = invalid_ir_file(name, text)
        first = str(err).strip().splitlines()[0] if str(err).strip() else "invalid IR"
        raise BuildError(f"{label}: the llvm codegen produced invalid LLVM IR ({first}); "
                         f"the IR is in {path}; please report it") from None
    return mod


def _linked(module, tm):
    """The module's functions in one LLVM module with the support headers'
    helpers they call (:mod:`aot.codegen.llvm_helpers`), optimised for ``tm``."""
    main = llvm.parse_assembly(module.modules_text[0])
    for text in module.modules_text[1:]:
        main.link_in(llvm.parse_assembly(text))
    if any(e.bitcode for e in module.externals.values()):
        main.link_in(llvm.parse_assembly(llvm_helpers.helper_ir(llvm_helpers.host_variant())))
    main.triple = tm.triple
    main.data_layout = str(tm.target_data)
    pto = llvm.create_pipeline_tuning_options(speed_level=module.options["opt"])
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(main, pb)
    return main


def _llvm_failure(module, what: str, err: RuntimeError) -> BuildError:
    """LLVM failing on verified IR: name the functions and keep the IR."""
    path = invalid_ir_file("module", module.source)
    first = str(err).strip().splitlines()[0] if str(err).strip() else "no message"
    labels = ", ".join(u.label for u in module.units.values())
    return BuildError(f"{what} of {labels} failed in LLVM ({first}); the IR is in {path}; "
                      "please report it")


def object_text_bytes(module) -> int:
    """Bytes of machine code of ``module`` compiled to an object for this machine."""
    tm = host_machine(module.options["opt"], jit=False)
    try:
        obj = llvm.ObjectFileRef.from_data(tm.emit_object(_linked(module, tm)))
    except RuntimeError as err:
        raise _llvm_failure(module, "compiling to an object", err) from None
    return sum(s.size() for s in obj.sections() if s.is_text())


class HostJit:
    """A module compiled for this machine with MCJIT."""

    def __init__(self, module):
        self.module = module
        tm = host_machine(module.options["opt"])
        self._libraries = []  # keep the helper libraries loaded while the code lives
        try:
            linked = _linked(module, tm)
        except RuntimeError as err:
            raise _llvm_failure(module, "linking and optimising", err) from None
        self._resolve(linked)
        try:
            self.engine = llvm.create_mcjit_compiler(linked, tm)
            self.engine.finalize_object()
        except RuntimeError as err:
            raise _llvm_failure(module, "JIT-compiling", err) from None
        self._functions: dict[str, object] = {}

    def function(self, name: str, nargs: int):
        if name not in self._functions:
            addr = self.engine.get_function_address(name)
            proto = ctypes.CFUNCTYPE(ctypes.c_int32, *[ctypes.c_void_p] * nargs)
            self._functions[name] = proto(addr)
        return self._functions[name]

    def _resolve(self, linked) -> None:
        """Give every external function of ``linked`` an address."""
        externals = self.module.c_externals
        if not externals:
            return
        supported = [u for u in self.module.units.values() if u.support.text]
        if not supported:
            for name, ext in externals.items():
                if llvm.address_of_symbol(name) is None:
                    raise BuildError(f"{ext.unit} calls {name}, which neither the llvm codegen "
                                     "nor any C code of the kernel defines (declare it with "
                                     "the import_c pragma)")
            return
        source, headers = helper_source(self.module, "aotjit_", externals)
        labels = sorted({ext.unit for ext in externals.values()})
        path = CCompiler.host().shared_object(
            source, headers=headers,
            what=f"building the C helpers ({', '.join(sorted(externals))}) that "
                 f"{', '.join(labels)} call{'s' if len(labels) == 1 else ''} for the llvm JIT")
        lib = ctypes.CDLL(str(path))
        self._libraries.append(lib)
        for name in externals:
            fn = linked.get_function(name)
            unique = f"aotjit.{path.stem}.{name}"
            fn.name = unique
            llvm.add_symbol(unique, ctypes.cast(getattr(lib, f"aotjit_{name}"),
                                                ctypes.c_void_p).value)


def helper_source(module, prefix: str,
                  externals=None) -> tuple[str, list[tuple[str, str]]]:
    """The C defining what ``module``'s units call and the backend does not
    implement: the units' C support (support headers, ``import_c`` code)
    followed by one exported wrapper ``<prefix><name>`` per called function;
    and the support headers it includes, as ``(file name, text)`` pairs.
    The host JIT compiles it with the host compiler; objects for a
    microcontroller take it into their artifact (the board's compiler)."""
    supported = [u for u in module.units.values() if u.support.text]
    texts = list(dict.fromkeys(u.support.text for u in supported))
    headers = dict(h for u in supported for h in u.support.headers)
    wrappers = [_wrapper(ext, prefix + ext.name)
                for ext in (module.externals if externals is None else externals).values()]
    return "\n".join(texts + wrappers) + "\n", sorted(headers.items())


def _wrapper(ext, symbol: str) -> str:
    """An exported C function ``symbol`` calling the (usually static inline)
    ``ext.c_name``, with the constants of a specialised call (``ext.fixed``)
    written in, so the compiler inlines the helper for them."""
    params = ", ".join(f"{C_TYPES[t]} a{i}" for i, t in enumerate(ext.args)) or "void"
    fixed = {i: f"({C_TYPES[t]})" + (str(v) if v != -(1 << 31) else "(-2147483647 - 1)")
             for i, t, v in ext.fixed}
    passed = iter(f"a{i}" for i in range(len(ext.args)))
    args = ", ".join(fixed[i] if i in fixed else next(passed)
                     for i in range(len(ext.args) + len(fixed)))
    ret = C_TYPES[ext.ret]
    body = (f"return {ext.c_name}({args});" if ext.value_used
            else f"(void){ext.c_name}({args});\n  return ({ret})0;")
    return f"{ret} {symbol}({params});\n{ret} {symbol}({params}) {{\n  {body}\n}}"
