"""A tiny kernel library for float elementwise groups, to test the executor alone.

It follows the :mod:`aot.kernels` interface (``lower_group``,
``support_files``, ``Kernel``, ``KernelParam``) for groups of float32
``relu``/``add``/``mul``/``sub`` nodes whose operands have the output's
shape.  Options exercise the executor's corner cases:

* ``constants_as_params``: constants become kernel arguments (the entry
  file then holds them) instead of arrays inside the kernel;
* ``accumulate_state``: a kernel reading a variable ``v`` also adds its
  node's other operand into ``v`` after computing (declaring ``v`` as an output
  too), so a test can see state persist across invocations;
* ``scratch``: every kernel asks for that many bytes of scratch and
  stages its result there before copying it out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from aot.errors import AotError

_OPS = {"relu": "{0} > 0.0f ? {0} : 0.0f", "add": "{0} + {1}", "sub": "{0} - {1}",
        "mul": "{0} * {1}"}


class ToyKernelError(AotError):
    pass


@dataclass(frozen=True)
class KernelParam:
    tensor: str
    role: str
    dtype: str
    nbytes: int


@dataclass(frozen=True)
class Kernel:
    name: str
    params: tuple
    scratch_bytes: int
    source: str
    prototype: str
    constant_bytes: int
    macs: int
    op_names: tuple


class ToyLibrary:
    def __init__(self, constants_as_params=False, accumulate_state=False, scratch=0):
        self.constants_as_params = constants_as_params
        self.accumulate_state = accumulate_state
        self.scratch = scratch

    def support_files(self, target) -> dict[str, str]:
        return {"toy_util.h": "#ifndef TOY_UTIL_H\n#define TOY_UTIL_H\n"
                              "#define TOY_LOAD(p, i) ((p)[i])\n#endif\n"}

    def lower_group(self, group, ag, target, *, name: str) -> Kernel:
        out = group.outputs(ag)
        if len(out) != 1:
            raise ToyKernelError(f"{group.name}: one output only")
        y = out[0]
        params, decls, consts, expr = [], [], [], {}
        const_bytes = 0
        variables = []
        for t in group.inputs():
            if t.dtype != "float32" or t.type.size != y.type.size:
                raise ToyKernelError(f"not supported yet: {group.name} reads {t.name}")
            if t.kind == "constant" and not self.constants_as_params:
                cname = f"c{len(consts)}"
                vals = ", ".join(f"{float(v)!r}f" for v in np.asarray(t.data).reshape(-1))
                consts.append(f"static const float {cname}[{t.type.size}] = {{{vals}}};")
                const_bytes += t.type.nbytes
                expr[id(t)] = f"TOY_LOAD({cname}, i)"
                continue
            arg = f"a{len(params)}"
            params.append(KernelParam(t.name, "input", "float32", t.type.nbytes))
            # A variable may be written through another argument: no restrict.
            decls.append(f"const float *{arg}" if t.kind == "variable"
                         else f"const float *restrict {arg}")
            expr[id(t)] = f"TOY_LOAD({arg}, i)"
            if t.kind == "variable":
                variables.append((t, arg))
        for n in group.nodes:
            if n.op not in _OPS:
                raise ToyKernelError(f"not supported yet: {n.op} in {group.name}")
            args = [expr[id(t)] for t in n.inputs if t is not None]
            expr[id(n.outputs[0])] = "(" + _OPS[n.op].format(*args) + ")"
        params.append(KernelParam(y.name, "output", "float32", y.type.nbytes))
        decls.append("float *restrict y")
        body = [f"for (i = 0; i < {y.type.size}; ++i) {{"]
        if self.scratch:
            body += ["    float *s = (float *)scratch;",
                     f"    s[i % {self.scratch // 4}] = {expr[id(y)]};",
                     f"    y[i] = s[i % {self.scratch // 4}];", "}"]
        else:
            body += [f"    y[i] = {expr[id(y)]};", "}"]
        state_lines = []
        if self.accumulate_state and variables:
            # The state is declared again as an output: the kernel writes it.
            t, _ = variables[0]
            params.append(KernelParam(t.name, "output", "float32", t.type.nbytes))
            decls.append("float *v")
            reader = next(n for n in group.nodes if any(a is t for a in n.inputs))
            other = next(a for a in reader.inputs if a is not None and a is not t)
            src = expr[id(other)]
            state_lines = [f"for (i = 0; i < {t.type.size}; ++i) {{",
                           f"    v[i] += {src};", "}"]
        if self.scratch:
            decls.append("void *restrict scratch")  # always the last argument
        prototype = f"int32_t {name}({', '.join(decls)});"
        source = "\n".join([
            "#include <stdint.h>", '#include "toy_util.h"', "", *consts, "",
            prototype, "", f"int32_t {name}({', '.join(decls)})", "{", "    int i;",
            *("    " + line for line in body + state_lines), "    return 0;", "}", ""])
        return Kernel(name, tuple(params), self.scratch, source, prototype, const_bytes,
                      y.type.size, tuple(n.op for n in group.nodes))
