"""Peak stack use of firmware, from GCC's call graph (``-fcallgraph-info=su``).

:func:`stack_usage` compiles the project's sources once more with the
project's flags plus ``-fcallgraph-info=su``, merges the per-file call
graphs and takes the deepest path: from ``main`` for the runtime, from the
descriptor's run function (``<name>_rpc_run``) for the model.  The RPC
server calls the model through a function pointer, which the graph cannot
follow, so the firmware's peak is bounded by their sum.  Library functions
(memcpy, ...) have no entry and count 0 bytes; recursion or dynamic frames
make the result unbounded (``bounded`` False).
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from aot.errors import BuildError
from aot.firmware.project import Project

_NODE = re.compile(r'node: \{ title: "([^"]+)" label: "[^"]*?\\n(\d+) bytes \(([^)]*)\)')
_EDGE = re.compile(r'edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"')


@dataclass(frozen=True)
class StackUsage:
    """Worst-case stack bytes of the runtime (from ``main``) and of one inference."""

    runtime: int
    model: int
    bounded: bool

    @property
    def peak(self) -> int:
        return self.runtime + self.model


def _graph(texts: list[str]) -> tuple[dict[str, tuple[int, bool]], dict[str, set[str]]]:
    frames: dict[str, tuple[int, bool]] = {}
    calls: dict[str, set[str]] = {}
    for text in texts:
        for name, size, kind in _NODE.findall(text):
            frames[name] = (int(size), kind == "static" or "bounded" in kind)
        for src, dst in _EDGE.findall(text):
            calls.setdefault(src, set()).add(dst)
    return frames, calls


def deepest(root: str, frames: dict[str, tuple[int, bool]],
            calls: dict[str, set[str]]) -> tuple[int, bool]:
    """Bytes of the deepest call chain from ``root``, and whether it is bounded."""
    memo: dict[str, tuple[int, bool]] = {}
    active: set[str] = set()

    def visit(fn: str) -> tuple[int, bool]:
        if fn in memo:
            return memo[fn]
        if fn in active:  # recursion: no static bound
            return 0, False
        active.add(fn)
        own, bounded = frames.get(fn, (0, True))
        below, ok = 0, True
        for callee in calls.get(fn, ()):
            depth, callee_ok = visit(callee)
            below, ok = max(below, depth), ok and callee_ok
        active.discard(fn)
        memo[fn] = (own + below, bounded and ok)
        return memo[fn]

    return visit(root)


def _title(name: str, frames) -> str:
    """The graph's title of function ``name`` (static functions are ``file:name``)."""
    return next((t for t in frames if t == name or t.endswith(":" + name)), name)


def _port_cflags(project: Project) -> list[str]:
    """The port's own compile flags (e.g. picolibc's specs on RISC-V), from its port.mk."""
    proc = subprocess.run(["make", "-s", "-C", str(project.path), "--eval",
                           "aot-print-port-cflags: ; @echo $(AOT_PORT_CFLAGS)",
                           "aot-print-port-cflags"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise BuildError(f"cannot read the port flags of {project.path}:\n"
                         f"{proc.stderr.strip()}")
    return proc.stdout.split()


def stack_usage(project: Project) -> StackUsage:
    """:class:`StackUsage` of a project (compiles its sources again, into a temp folder)."""
    d = project.data
    runtime = [str(p.relative_to(project.path)) for p in
               sorted((project.path / "runtime" / "src").glob("*.c"))]
    port_dir = project.path / "runtime" / "ports" / d["port"]
    runtime += [str(p.relative_to(project.path)) for p in sorted(port_dir.glob("*.c"))]
    flags = [*d["arch_flags"], *d["opt_flags"], *d["cflags"], *_port_cflags(project),
             "-std=c99", "-Imodel/include",
             "-Iruntime/include", "-fcallgraph-info=su"]
    texts = []
    with tempfile.TemporaryDirectory(prefix="aot-stack-") as tmp:
        for i, src in enumerate([*runtime, *d["model_sources"]]):
            obj = Path(tmp) / f"o{i}.o"
            proc = subprocess.run([d["cc"], *flags, "-c", src, "-o", str(obj)],
                                  cwd=project.path, capture_output=True, text=True)
            if proc.returncode != 0:
                raise BuildError(f"cannot analyse the stack of {src}:\n{proc.stderr.strip()}")
            texts.append(obj.with_suffix(".ci").read_text())
    frames, calls = _graph(texts)
    rt, rt_ok = deepest(_title("main", frames), frames, calls)
    model, model_ok = deepest(_title(f"{project.name}_rpc_run", frames), frames, calls)
    return StackUsage(rt, model, rt_ok and model_ok)
