"""Compile a kernel into a small executable and run it on numpy arrays.

The executable reads every input parameter's bytes from stdin, in order,
calls the kernel and writes the outputs to stdout.  A standalone program
(rather than a shared object loaded by ctypes) lets the kernel run under
AddressSanitizer and UndefinedBehaviorSanitizer without preloading their
runtimes into Python.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from aot.codegen.c import C_TYPES, NP_TYPES
from aot.kernels import Kernel, support_files

SANITIZE = ("-O1", "-g", "-std=c99", "-Wall", "-Wextra", "-Werror",
            "-fsanitize=address,undefined", "-fno-sanitize-recover=all")
ARM = ("-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16", "-O2",
       "-std=c99", "-Wall", "-Wextra", "-Werror", "-c")

_MAIN = """
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
{prototype}

int main(void) {{
{decls}
{reads}
  int32_t status = {name}({args});
{writes}
  return status == 0 ? 0 : 3;
}}
"""


def _cache() -> Path:
    d = Path(tempfile.gettempdir()) / f"aot-kernel-tests-{os.getuid()}"
    d.mkdir(exist_ok=True)
    return d


def _write_support(directory: Path) -> None:
    for fname, text in support_files(None).items():
        (directory / fname).write_text(text)


def build_executable(kernel: Kernel) -> Path:
    """The kernel plus a stdin/stdout driver, built with the host gcc under ASan/UBSan."""
    decls, reads, writes, args = [], [], [], []
    for i, p in enumerate(kernel.params):
        ctype = C_TYPES[p.dtype]
        decls.append(f"  {ctype}* p{i} = ({ctype}*)malloc({max(p.nbytes, 1)});")
        if p.role in ("input", "state"):
            reads.append(f"  if (fread(p{i}, 1, {p.nbytes}, stdin) != {p.nbytes}) return 2;")
        if p.role in ("output", "state"):
            writes.append(f"  fwrite(p{i}, 1, {p.nbytes}, stdout);")
        args.append(f"p{i}")
    main = _MAIN.format(prototype=kernel.prototype, name=kernel.name, decls="\n".join(decls),
                        reads="\n".join(reads), writes="\n".join(writes), args=", ".join(args))
    key = hashlib.sha256((kernel.source + main).encode()).hexdigest()[:20]
    out = _cache() / f"k{key}"
    if out.exists():
        return out
    with tempfile.TemporaryDirectory(dir=_cache()) as tmp:
        d = Path(tmp)
        _write_support(d)
        (d / "kernel.c").write_text(kernel.source)
        (d / "main.c").write_text(main)
        proc = subprocess.run(["gcc", *SANITIZE, "-I", str(d), "-o", str(d / "exe"),
                               str(d / "kernel.c"), str(d / "main.c"), "-lm"],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise AssertionError(f"gcc failed:\n{proc.stderr}\n--- source ---\n{kernel.source}")
        shutil.move(str(d / "exe"), out)
    return out


def run_kernel(kernel: Kernel, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Run ``kernel`` on ``inputs`` (input and state params in order); returns the output
    and updated state buffers (param order) as flat arrays of their dtypes."""
    exe = build_executable(kernel)
    ins = [p for p in kernel.params if p.role in ("input", "state")]
    assert len(ins) == len(inputs), (len(ins), len(inputs))
    data = b"".join(np.ascontiguousarray(a).tobytes() for a in inputs)
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
    proc = subprocess.run([str(exe)], input=data, capture_output=True, env=env)
    if proc.returncode != 0:
        raise AssertionError(f"kernel {kernel.name} failed ({proc.returncode}):\n"
                             f"{proc.stderr.decode(errors='replace')}")
    outs, pos = [], 0
    from aot.codegen.c import NP_TYPES
    for p in kernel.params:
        if p.role in ("output", "state"):
            outs.append(np.frombuffer(proc.stdout[pos:pos + p.nbytes], dtype=NP_TYPES[p.dtype]))
            pos += p.nbytes
    return outs


def cross_compile(kernel: Kernel) -> None:
    """Compile the kernel's source for Cortex-M4 (hard float) with arm-none-eabi-gcc."""
    cc = shutil.which("arm-none-eabi-gcc")
    if cc is None:
        raise AssertionError("arm-none-eabi-gcc is not installed")
    with tempfile.TemporaryDirectory(dir=_cache()) as tmp:
        d = Path(tmp)
        _write_support(d)
        (d / "kernel.c").write_text(kernel.source)
        proc = subprocess.run([cc, *ARM, "-I", str(d), "-o", str(d / "kernel.o"),
                               str(d / "kernel.c")], capture_output=True, text=True)
        if proc.returncode != 0:
            raise AssertionError(f"arm-none-eabi-gcc failed:\n{proc.stderr}")


def all_values(graph, inputs, steps: int = 2) -> dict:
    """Every tensor the reference computes in the last of ``steps`` invocations on
    ``inputs``: tensor id -> array, plus ``("before", id)`` and ``("after", id)``
    for each state tensor around that invocation (several steps make the state
    non-trivial).  Every node output is made a graph output.
    """
    from aot.ir import Graph
    from aot.reference.interpreter import Session
    produced = [t for n in graph.nodes for t in n.outputs]
    session = Session(Graph(graph.inputs, produced, graph.nodes, graph.name))
    for _ in range(steps):
        before = {k: v.copy() for k, v in session.state.items()}
        outs = session.invoke(inputs)
    values: dict = dict(zip((id(t) for t in produced), outs))
    values.update({id(t): np.asarray(x) for t, x in zip(graph.inputs, inputs)})
    for key, v in before.items():
        values[("before", key)] = v
        values[("after", key)] = session.state[key].copy()
    return values


def check_group(kernel: Kernel, group, graph, values: dict):
    """Run one group's kernel on the reference's values of its inputs and compare:
    bit for bit for integer outputs, within 1e-5 relative for float32."""
    by_name = {t.name: t for n in graph.nodes for t in [*n.inputs, *n.outputs] if t is not None}
    by_name.update({t.name: t for t in graph.inputs})
    def value(p, when):
        t = by_name[p.tensor]
        return values[(when, id(t))] if p.role == "state" else values[id(t)]
    ins = [value(p, "before") for p in kernel.params if p.role in ("input", "state")]
    outs = run_kernel(kernel, ins)
    want = [value(p, "after") for p in kernel.params if p.role in ("output", "state")]
    for got, ref in zip(outs, want, strict=True):
        ref = np.asarray(ref).reshape(-1)
        if ref.dtype != np.float32:
            np.testing.assert_array_equal(got, ref, err_msg=f"group {group.name}")
        else:
            np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6,
                                       err_msg=f"group {group.name}")


def check_graph(graph, inputs, *, cross=True, target="c"):
    """Optimize ``graph``, lower every kernel group and compare each kernel alone with
    the reference on the group's real inputs; cross-compile each for Cortex-M4.
    Returns the kernels."""
    from aot.kernels import lower_group
    from aot.passes import annotations, optimize
    ag = optimize(graph)
    values = all_values(ag, inputs)
    kernels = []
    for i, group in enumerate(annotations(ag).groups):
        if group.kind == "view":
            continue
        kernel = lower_group(group, ag, target, name=f"test_k{i}")
        check_group(kernel, group, ag, values)
        if cross:
            cross_compile(kernel)
        kernels.append(kernel)
    return kernels


def seeded_inputs(graph, seed: int) -> list[np.ndarray]:
    """Random inputs over each dtype's whole range (floats: standard normal)."""
    rng = np.random.default_rng(seed)
    out = []
    for t in graph.inputs:
        if t.dtype == "float32":
            out.append(rng.standard_normal(t.shape).astype(np.float32))
        else:
            info = np.iinfo(t.type.np_dtype)
            out.append(rng.integers(info.min, info.max + 1, t.shape).astype(t.type.np_dtype))
    return out


SHARED_FLAGS = ("-std=c99", "-Wall", "-Wextra", "-Werror", "-O3",
                "-fsanitize=address,undefined", "-fno-sanitize-recover=all")


def run_with_shared_bytes(kernel: Kernel, x_index: int, y_index: int, shift: int,
                          inputs: dict[str, np.ndarray], directory: Path) -> np.ndarray:
    """Run ``kernel`` with output ``y_index`` at input ``x_index``'s address +
    ``shift`` bytes, both in one allocation (0: in place); built -O3, where GCC
    would exploit a wrong ``restrict``, under ASan/UBSan.  ``inputs`` by tensor
    name; returns the output."""
    px, py = kernel.params[x_index], kernel.params[y_index]
    base_x = max(0, -shift)
    total = max(base_x + px.nbytes, base_x + shift + py.nbytes)
    cx, cy = C_TYPES[px.dtype], C_TYPES[py.dtype]
    decls = [f"  unsigned char* arena = (unsigned char*)malloc({total});",
             f"  {cx}* p{x_index} = ({cx}*)(arena + {base_x});",
             f"  {cy}* p{y_index} = ({cy}*)(arena + {base_x + shift});"]
    decls += [f"  {C_TYPES[p.dtype]}* p{i} = ({C_TYPES[p.dtype]}*)malloc({p.nbytes});"
              for i, p in enumerate(kernel.params) if i not in (x_index, y_index)]
    reads = [f"  if (fread(p{i}, 1, {p.nbytes}, stdin) != {p.nbytes}) return 2;"
             for i, p in enumerate(kernel.params) if p.role == "input"]
    main = _MAIN.format(prototype=kernel.prototype, decls="\n".join(decls),
                        reads="\n".join(reads), name=kernel.name,
                        args=", ".join(f"p{i}" for i in range(len(kernel.params))),
                        writes=f"  fwrite(p{y_index}, 1, {py.nbytes}, stdout);")
    _write_support(directory)
    (directory / "k.c").write_text(kernel.source)
    (directory / "main.c").write_text(main)
    subprocess.run(["gcc", *SHARED_FLAGS, "-I", str(directory), "-o", str(directory / "exe"),
                    str(directory / "k.c"), str(directory / "main.c"), "-lm"], check=True)
    data = b"".join(np.ascontiguousarray(inputs[p.tensor]).tobytes()
                    for p in kernel.params if p.role == "input")
    proc = subprocess.run([str(directory / "exe")], input=data, capture_output=True,
                          check=False, env=dict(os.environ, ASAN_OPTIONS="detect_leaks=0"))
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return np.frombuffer(proc.stdout, dtype=NP_TYPES[py.dtype])


class DepthwiseFusion:
    """aot.kernels (the interface compile_model's ``kernel_library`` takes) with
    the depthwise layers' ``fuse_epilogue`` knob forced to ``fuse`` on the
    template of target key ``key`` (the row tile whenever it fits), every
    other knob and group the library's."""

    def __init__(self, key: str, fuse: bool):
        self.key, self.fuse = key, fuse

    def lower_group(self, group, ag, target, *, name):
        from aot.kernels import lower_group
        from aot.kernels.registry import TEMPLATES
        if group.anchor is None or group.anchor.op != "depthwise_conv2d":
            return lower_group(group, ag, target, name=name)
        tpl = TEMPLATES[("depthwise_conv2d", self.key)]

        def schedule(s, final, stages):
            values = tpl.default_values(stages, final)
            if "fuse_epilogue" in values:
                tiles = tpl.knobs(stages, final)[0].values  # row first when it fits
                values = {**values, "fuse_epilogue": self.fuse,
                          "tile": tiles[0] if self.fuse else values["tile"]}
            tpl.apply(s, final, stages, values)
        return lower_group(group, ag, target, name=name, schedule=schedule)

    def support_files(self, target):
        return support_files(target)
