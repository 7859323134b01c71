"""Printing one model kernel as its own C translation unit.

A model kernel (:class:`aot.kernels.Kernel`) is a loop nest (its ``func``,
the loop IR of :mod:`aot.tir`) over the group's run-time tensors *and* its
constants, plus the constants themselves.  This module is where it becomes
C: the constants are ``static const`` arrays, the loop nest a ``static``
implementation function, and the exported function binds the constants, so
the caller passes only the activations::

    static const int8_t k0_c0[...] AOT_ALIGNED(8) = {...};  /* -constants-byte-alignment */
    static int32_t k0_impl(const int8_t* restrict x, const int8_t* restrict w, ...) {...}
    int32_t k0(const int8_t* restrict x0, int8_t* restrict y1) {
      return k0_impl(x0, k0_c0, ..., y1);
    }

The compiler inlines the call, so the constants become plain loads from
flash (and reads of a small array at known indices fold into the code).  An
array the kernel shares with another (the parts of a split group,
:mod:`aot.kernels.parts`) is defined without ``static`` in one file and
declared ``extern`` in the others, which therefore cannot fold it.  The
parameter pairs in ``kernel.inplace`` (an output the memory plan binds to
the address of an input) are declared without ``restrict`` in both
functions; every other parameter keeps it.  A kernel whose code runs from
RAM (``kernel.code_section``) has both functions in that section.
"""

from __future__ import annotations

import functools

import numpy as np

from aot.codegen.c import C_TYPES, generate_c
from aot.errors import BuildError
from aot.tir.stmt import PrimFunc

_NP_TO_C = {np.dtype(np.bool_): "bool", np.dtype(np.int8): "int8", np.dtype(np.uint8): "uint8",
            np.dtype(np.int16): "int16", np.dtype(np.int32): "int32",
            np.dtype(np.int64): "int64", np.dtype(np.float32): "float32"}


def ir_dtype(data: np.ndarray) -> str:
    """The IR element type of a constant array (the ones a kernel may hold)."""
    try:
        return _NP_TO_C[data.dtype]
    except KeyError:
        raise BuildError(f"constant of element type {data.dtype} cannot be emitted: "
                         f"use one of {', '.join(sorted(_NP_TO_C.values()))}") from None


@functools.cache
def _byte_texts(dtype: str) -> np.ndarray:
    """The decimal text of every value of an 8-bit type, from its least value up (a
    large weight array is printed six times faster by looking its values up)."""
    info = np.iinfo(dtype)
    return np.array([str(v) for v in range(info.min, info.max + 1)], dtype=object)


def c_array(name: str, data: np.ndarray, alignment: int = 8, section: str = "",
            linkage: str = "static") -> str:
    """``static const T name[n] AOT_ALIGNED(alignment) = {...};`` holding ``data`` exactly;
    with a ``section``, the array is placed in that linker section (GCC's attribute).
    ``linkage`` (:data:`aot.kernels.kernel.LINKAGES`) ``shared`` defines it without
    ``static``, for other files to declare; ``extern`` declares another file's array
    (``extern const T name[n] AOT_ALIGNED(alignment);``, no values: the compiler of
    this file cannot fold them)."""
    dtype = ir_dtype(data)
    flat = data.reshape(-1)
    if linkage == "extern":
        return f"extern const {C_TYPES[dtype]} {name}[{flat.size}] AOT_ALIGNED({alignment});"
    if dtype == "float32":
        if not np.isfinite(flat).all():
            raise BuildError(f"constant {name} holds a NaN or infinity: not supported yet")
        # repr of the float32 value widened to double reads back as the same float
        values = [repr(float(v)) + "f" for v in flat]
    elif dtype == "int32":
        values = [str(v) if v != -(1 << 31) else "(-2147483647 - 1)" for v in flat.tolist()]
    elif dtype == "int64":
        values = [f"INT64_C({v})" for v in flat.tolist()]
    elif dtype == "bool":
        values = [str(int(v)) for v in flat.tolist()]  # _Bool holds 0 or 1
    elif dtype in ("int8", "uint8"):  # most of a model's bytes: each value's text looked up
        values = _byte_texts(dtype)[flat.astype(np.int16) - np.iinfo(dtype).min].tolist()
    else:
        values = [str(v) for v in flat.tolist()]
    rows = [", ".join(values[i:i + 16]) for i in range(0, len(values), 16)]
    body = ",\n  ".join(rows)
    where = f'\n    __attribute__((section("{section}")))' if section else ""
    storage = "" if linkage == "shared" else "static "
    return (f"{storage}const {C_TYPES[dtype]} {name}[{flat.size}] AOT_ALIGNED({alignment})"
            f"{where} = {{\n"
            f"  {body}\n}};")


def kernel_signature(kernel, arg_names) -> str:
    """``int32_t name(const T* restrict x0, ..., T* restrict yN)``: the exported
    function of ``kernel`` with parameters named ``arg_names``."""
    shared = {k for pair in kernel.inplace for k in pair}
    decl = []
    for i, (p, arg) in enumerate(zip(kernel.params, arg_names)):
        const = "const " if p.role == "input" else ""
        restrict = "" if i in shared else " restrict"
        decl.append(f"{const}{C_TYPES[p.dtype]}*{restrict} {arg}")
    return f"int32_t {kernel.name}({', '.join(decl) or 'void'})"


def kernel_source(kernel) -> str:
    """The whole C file of a loop-IR kernel (see the module docstring)."""
    func: PrimFunc = kernel.func
    n_in = sum(p.role == "input" for p in kernel.params)
    # The implementation's parameters: run-time inputs, constants, outputs.
    runtime = list(range(n_in)) + [n_in + len(kernel.constants) + j
                                   for j in range(len(kernel.params) - n_in)]
    attrs = dict(func.attrs, static=True)
    if kernel.code_section:
        attrs["code_section"] = kernel.code_section
    if kernel.inplace:
        attrs["may_alias"] = frozenset(id(func.params[runtime[i]].data)
                                       for pair in kernel.inplace for i in pair)
    impl = PrimFunc(func.name, func.params, func.body, attrs)
    call_args = ([kernel.arg_names[i] for i in range(n_in)]
                 + [c.name for c in kernel.constants]
                 + [kernel.arg_names[i] for i in range(n_in, len(kernel.params))])
    ram = f'AOT_RAM_CODE("{kernel.code_section}") ' if kernel.code_section else ""
    entry = (ram + kernel_signature(kernel, kernel.arg_names) + " {\n"
             + f"  return {func.name}({', '.join(call_args)});\n}}")
    text = generate_c([impl], kernel.target, includes=[f'"{h}"' for h in kernel.includes],
                      declarations=["\n".join(c_array(c.name, c.data, kernel.constant_alignment,
                                                       kernel.constant_section, c.linkage)
                                              for c in kernel.constants)]
                      if kernel.constants else (),
                      trailer=[entry])
    return "".join(kernel.prelude) + text
