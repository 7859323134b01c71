"""Run a model compiled for the ``llvm`` target on this machine.

The kernels and the entry function (:func:`aot.executor.codegen.lower_entry`, the
loop IR the C entry function is printed from) are one
:class:`aot.codegen.llvm.LLVMModule` compiled by MCJIT (with the support headers'
helpers as bitcode: no C compiler runs).  :class:`JitModel` owns the memory the C
entry file declares statically, as numpy arrays: the workspace and the board
regions' arrays (aligned as the plan says), the state (which lives as long as the
model and starts at its start values, as the C's ``P_reset`` sets it) and the
constant arguments; one invocation is one call of the entry function with their
addresses and the caller's input and output arrays.
"""

from __future__ import annotations

import numpy as np

from aot.codegen.c import NP_TYPES
from aot.errors import BuildError
from aot.executor.codegen import Entry

__all__ = ["JitModel"]


def _aligned(nbytes: int, alignment: int) -> np.ndarray:
    """Zeroed bytes starting at a multiple of ``alignment``."""
    raw = np.zeros(nbytes + alignment, np.uint8)
    skip = -raw.ctypes.data % alignment
    return raw[skip:skip + nbytes]  # a view: keeps ``raw`` alive


class JitModel:
    """A compiled model's entry function and kernels, JIT-compiled, with their memory."""

    def __init__(self, entry: Entry, module) -> None:
        self.entry = entry
        # The function points into code that the engine owns and frees when
        # collected: hold it as long as this model may call it.
        self._owners = (module,)
        self.function = module.function(entry.run.name)
        alignment = entry.layout.alignment
        self.states = [np.empty(max(s.tensor.type.size, 1), NP_TYPES[s.tensor.dtype])
                       for s in entry.states]
        fixed = iter(self.states)
        constants = iter(np.ascontiguousarray(np.asarray(c.tensor.data).reshape(-1),
                                              NP_TYPES[c.tensor.dtype])
                         for c in entry.constants)
        #: Per parameter of the entry function: the array it is given, None for a port.
        self.arrays: list[np.ndarray | None] = []
        for p in entry.params:
            if p.kind in ("workspace", "region"):
                self.arrays.append(_aligned(int(p.buffer.shape[0].value), alignment))
            elif p.kind == "state":
                self.arrays.append(next(fixed))
            elif p.kind == "constant":
                self.arrays.append(next(constants))
            else:
                self.arrays.append(None)
        self.reset()

    def reset(self) -> None:
        """State back to its start values (the model's, else the zero points),
        as the C's ``P_reset``."""
        for arr, s in zip(self.states, self.entry.states):
            start = s.start_values
            arr[...] = s.zero if start is None else start.reshape(-1)

    def run(self, inputs) -> list[np.ndarray]:
        """One invocation: ``inputs`` in graph order; the outputs (new arrays)."""
        ins = [np.ascontiguousarray(x, dtype=NP_TYPES[p.tensor.dtype]).reshape(p.dims)
               for x, p in zip(inputs, self.entry.inputs)]
        outs = [np.empty(p.dims, NP_TYPES[p.tensor.dtype]) for p in self.entry.outputs]
        ports = {"input": {p.ident: a for p, a in zip(self.entry.inputs, ins)},
                 "output": {p.ident: a for p, a in zip(self.entry.outputs, outs)}}
        addresses = [a.ctypes.data if a is not None else ports[p.kind][p.name].ctypes.data
                     for p, a in zip(self.entry.params, self.arrays)]
        status = self.function(*addresses)
        if status != 0:
            raise BuildError(f"{self.entry.run.name} returned status {status} (a kernel "
                             "failed)")
        return [o.reshape(p.tensor.shape) for o, p in zip(outs, self.entry.outputs)]

    def run_sequence(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        """``inputs`` as one ``[N, *shape]`` array per graph input, run in order
        on the current state; one ``[N, *shape]`` array per output (as
        :func:`aot.export.host.run_program`)."""
        n = inputs[0].shape[0] if inputs else 0
        results = [self.run([x[i] for x in inputs]) for i in range(n)]
        return [np.stack([r[k] for r in results]) if results
                else np.empty((0, *p.tensor.shape), NP_TYPES[p.tensor.dtype])
                for k, p in enumerate(self.entry.outputs)]
