"""The Kernel record and the builder that turns one fused group into it.

A kernel is one C function per fused group.  Its tensor expression takes
the group's run-time tensors *and* its constants (packed weights, bias,
requantization multipliers and shifts) as placeholders; the loop nest is
lowered and printed by :mod:`aot.codegen` as a ``static`` implementation
function, and the exported function binds the constants, which are
``static const`` arrays in the same file, so the caller only passes the
activations:

    static const int8_t k0_weight[...] AOT_ALIGNED(4) = {...};
    static int32_t k0_impl(const int8_t* restrict x, const int8_t* restrict weight, ...);
    int32_t k0(const int8_t* restrict x, int8_t* restrict y) {
      return k0_impl(x, k0_weight, ..., y);
    }

The compiler inlines the call, so the constants become plain loads from
flash.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from aot import te
from aot.codegen.c import C_TYPES, c_identifier, generate_c
from aot.errors import AotError
from aot.ir import Tensor
from aot.kernels.support import HEADER_NAME


class KernelError(AotError):
    """A fused group that no kernel supports (yet)."""


@dataclass(frozen=True)
class KernelParam:
    """One argument of a kernel: the IR tensor it binds to and its direction."""

    tensor: str
    role: str  # "input" | "output"
    dtype: str
    nbytes: int


@dataclass(frozen=True)
class Kernel:
    """One generated C function for one fused group (see docs/kernels.md).

    ``source`` is a complete C99 translation unit that includes
    ``aot_kernel_util.h`` (see :func:`aot.kernels.support_files`);
    ``params`` are in C argument order, inputs then outputs; the function
    returns 0.  ``scratch_bytes`` > 0 would add a last ``void* scratch``
    argument; the kernels here keep their scratch on the stack, so it is 0.

    ``inplace`` lists ``(input index, output index)`` pairs of ``params``
    that the caller may bind to the same address (the output written over
    the input): those two are declared without ``restrict`` and the loop
    nest was checked to read each input element before the output element
    at the same index overwrites it (:mod:`aot.kernels.inplace`).  Every
    other pair of arguments must not overlap.
    """

    name: str
    params: tuple[KernelParam, ...]
    scratch_bytes: int
    source: str
    prototype: str
    constant_bytes: int
    macs: int
    op_names: tuple[str, ...]
    inplace: tuple[tuple[int, int], ...] = ()


_NP_TO_IR = {np.dtype(np.int8): "int8", np.dtype(np.uint8): "uint8",
             np.dtype(np.int16): "int16", np.dtype(np.int32): "int32",
             np.dtype(np.int64): "int64", np.dtype(np.float32): "float32"}


def _c_array(name: str, data: np.ndarray) -> str:
    dtype = _NP_TO_IR[data.dtype]
    flat = data.reshape(-1)
    if dtype == "float32":
        if not np.isfinite(flat).all():
            raise KernelError(f"constant {name} holds a NaN or infinity: not supported yet")
        # repr of the float32 value widened to double reads back as the same float
        values = [repr(float(v)) + "f" for v in flat]
    elif dtype == "int32":
        values = [str(v) if v != -(1 << 31) else "(-2147483647 - 1)" for v in flat.tolist()]
    elif dtype == "int64":
        values = [f"INT64_C({v})" for v in flat.tolist()]
    else:
        values = [str(v) for v in flat.tolist()]
    rows = [", ".join(values[i:i + 16]) for i in range(0, len(values), 16)]
    body = ",\n  ".join(rows)
    return (f"static const {C_TYPES[dtype]} {name}[{flat.size}] AOT_ALIGNED(8) = {{\n"
            f"  {body}\n}};")


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

    def input(self, t: Tensor, shape=None) -> te.Tensor:
        """The placeholder of run-time tensor ``t`` (one per tensor), viewed as ``shape``."""
        for known, ph in self._inputs:
            if known is t:
                return ph
        if t.kind == "constant":
            return self.const(t.name, np.asarray(t.data), shape)
        ph = te.placeholder(tuple(shape or t.shape), t.dtype,
                            name=c_identifier(f"in{len(self._inputs)}"))
        self._inputs.append((t, ph))
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
        ph = te.placeholder(data.shape, _NP_TO_IR[data.dtype],
                            name=f"c{len(self._consts)}_{ident}"[:40])
        self._consts.append((f"{self.name}_c{len(self._consts)}", np.ascontiguousarray(data), ph))
        return ph

    def finish(self, sched, outputs: list[tuple[Tensor, te.Tensor]], *, macs: int,
               op_names: tuple[str, ...], inplace=()) -> Kernel:
        """Lower ``sched`` and wrap it with the constants (see the module docstring).

        ``inplace``: ``(input tensor name, output tensor name)`` pairs the
        caller wants at one address; each pair the lowered loop nest allows
        (:func:`aot.kernels.inplace.in_place_problem`) loses ``restrict`` and
        is listed in :attr:`Kernel.inplace`, the others are ignored.
        """
        from aot.codegen.build import lower
        from aot.kernels.inplace import in_place_problem

        impl = f"{self.name}_impl"
        args = ([ph for _, ph in self._inputs] + [ph for _, _, ph in self._consts]
                + [ph for _, ph in outputs])
        func = lower(sched, args, name=impl)
        n_in, first_out = len(self._inputs), len(args) - len(outputs)
        in_index = {t.name: i for i, (t, _) in enumerate(self._inputs)}
        out_index = {t.name: j for j, (t, _) in enumerate(outputs)}
        accepted, shared = [], set()
        for x, y in inplace:
            if x not in in_index or y not in out_index:
                continue
            xb = func.params[in_index[x]]
            yb = func.params[first_out + out_index[y]]
            if in_place_problem(func, xb, yb) is None:
                accepted.append((in_index[x], n_in + out_index[y]))
                shared |= {id(xb.data), id(yb.data)}
        if shared:
            func.attrs["may_alias"] = frozenset(shared)
        text = generate_c([func], str(self.target), includes=[f'"{HEADER_NAME}"'])
        return self.wrap(text, impl, outputs, macs=macs, op_names=op_names,
                         inplace=tuple(accepted))

    def wrap(self, text: str, impl: str, outputs, *, macs: int,
             op_names: tuple[str, ...], inplace=()) -> Kernel:
        """Make ``impl`` (defined in ``text``) static and add the exported entry."""
        marker = f"int32_t {impl}("
        if marker not in text:
            raise AssertionError(f"generated C has no function {impl}")
        consts = "\n".join(_c_array(cname, data) for cname, data, _ in self._consts)
        head, tail = text.split(marker, 1)
        text = head + (consts + "\n\n" if consts else "") + "static " + marker + tail
        params = []
        decl = []
        shared = {k for pair in inplace for k in pair}
        for t, _ in self._inputs:
            params.append(KernelParam(t.name, "input", t.dtype, t.type.nbytes))
            restrict = "" if len(decl) in shared else " restrict"
            decl.append(f"const {C_TYPES[t.dtype]}*{restrict} x{len(decl)}")
        for t, _ in outputs:
            params.append(KernelParam(t.name, "output", t.dtype, t.type.nbytes))
            restrict = "" if len(decl) in shared else " restrict"
            decl.append(f"{C_TYPES[t.dtype]}*{restrict} y{len(decl)}")
        signature = f"int32_t {self.name}({', '.join(decl) or 'void'})"
        n_in = len(self._inputs)
        call_args = ([f"x{i}" for i in range(n_in)]
                     + [cname for cname, _, _ in self._consts]
                     + [f"y{n_in + i}" for i in range(len(outputs))])
        text = (text.rstrip("\n") + "\n\n" + signature + " {\n"
                + f"  return {impl}({', '.join(call_args)});\n}}\n")
        constant_bytes = sum(d.nbytes for _, d, _ in self._consts)
        return Kernel(self.name, tuple(params), 0, text, signature + ";", constant_bytes,
                      int(macs), tuple(op_names), tuple(inplace))


def render_template_kernel(template: str, name: str, target, params, consts: dict, context: dict,
                           *, macs: int, op_names: tuple[str, ...]) -> Kernel:
    """A hand-written kernel from ``templates/<template>``.

    ``params`` are ``(tensor, role, c_name)`` in C argument order; ``consts``
    maps a template name to an array emitted as ``static const``; the
    template sees ``signature``, ``constants``, each constant's C name under
    its key, and ``context``.
    """
    import jinja2

    from aot import __version__
    env = jinja2.Environment(loader=jinja2.PackageLoader("aot.kernels", "templates"),
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                             undefined=jinja2.StrictUndefined, autoescape=False)
    ident = c_identifier(name)
    arrays, names = [], {}
    for key, data in consts.items():
        cname = f"{ident}_{key}"
        arrays.append(_c_array(cname, np.ascontiguousarray(data)))
        names[key] = cname
    decl, kparams = [], []
    for t, role, cname in params:
        const = "const " if role == "input" else ""
        decl.append(f"{const}{C_TYPES[t.dtype]}* restrict {cname}")
        kparams.append(KernelParam(t.name, role, t.dtype, t.type.nbytes))
    signature = f"int32_t {ident}({', '.join(decl)})"
    source = env.get_template(template).render(
        version=__version__, target=str(target), signature=signature,
        constants="\n".join(arrays), **names, **context)
    return Kernel(ident, tuple(kparams), 0, source, signature + ";",
                  sum(np.asarray(d).nbytes for d in consts.values()), int(macs), op_names)
