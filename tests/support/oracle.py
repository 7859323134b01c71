"""Run the TFLM reference interpreter (the oracle) on a model and inputs.

TFLM can crash the whole process on a bad model, so it runs in a worker
subprocess.  One worker serves many requests (python + TFLM start-up costs
about half a second); if it dies, the request raises :class:`OracleCrash` and
the next request starts a fresh worker.

    with TflmOracle() as oracle:
        outs = oracle.run(model_bytes, [[x0], [x1]])   # two invocations

``run`` takes a sequence of invocations, each a list of input arrays, and
returns for each invocation the list of output arrays.  All invocations of
one call share one interpreter, so stateful models see them in order.
"""

from __future__ import annotations

import pickle
import struct
import subprocess
import sys

_WORKER = r"""
import pickle, struct, sys
import numpy as np
from tflite_micro.python.tflite_micro import runtime
from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as schema

inp, out = sys.stdin.buffer, sys.stdout.buffer
def read():
    head = inp.read(8)
    if len(head) < 8:
        return None
    (n,) = struct.unpack("<Q", head)
    return pickle.loads(inp.read(n))
while True:
    req = read()
    if req is None:
        break
    model, sequence, arena = req
    try:
        ip = runtime.Interpreter.from_bytes(model, arena_size=arena)
        n_out = schema.Model.GetRootAs(model, 0).Subgraphs(0).OutputsLength()
        results = []
        for inputs in sequence:
            for i, x in enumerate(inputs):
                ip.set_input(np.asarray(x), i)
            ip.invoke()
            results.append([np.array(ip.get_output(k)) for k in range(n_out)])
        reply = ("ok", results)
    except Exception as e:
        reply = ("error", f"{type(e).__name__}: {e}")
    data = pickle.dumps(reply)
    out.write(struct.pack("<Q", len(data)) + data)
    out.flush()
"""


class OracleCrash(RuntimeError):
    """The TFLM worker process died (segfault or abort) on a request."""


class OracleError(RuntimeError):
    """TFLM refused the model or the inputs (its message is attached)."""


class TflmOracle:
    """A persistent TFLM worker process; see the module docstring."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen | None = None

    def _start(self) -> subprocess.Popen:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                [sys.executable, "-c", _WORKER],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        return self._proc

    def run(self, model: bytes, sequence, arena_size: int | None = None):
        """Invoke ``model`` once per entry of ``sequence`` (a list of input lists).

        The arena defaults to 10x the model size but at least 1 MiB: the
        small test models need more than TFLM's 10x default.
        """
        arena_size = arena_size or max(10 * len(model), 1 << 20)
        proc = self._start()
        data = pickle.dumps((bytes(model), [list(s) for s in sequence], arena_size))
        try:
            proc.stdin.write(struct.pack("<Q", len(data)) + data)
            proc.stdin.flush()
            head = proc.stdout.read(8)
            if len(head) < 8:
                raise OracleCrash(f"TFLM worker died (exit code {proc.wait()})")
            (n,) = struct.unpack("<Q", head)
            status, payload = pickle.loads(proc.stdout.read(n))
        except BrokenPipeError as e:
            raise OracleCrash(f"TFLM worker died (exit code {proc.wait()})") from e
        if status != "ok":
            raise OracleError(payload)
        return payload

    def run1(self, model: bytes, *inputs):
        """One invocation with the given inputs; returns the first output."""
        return self.run(model, [list(inputs)])[0][0]

    def close(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.stdin.close()
            self._proc.wait(timeout=10)
        self._proc = None

    def __enter__(self) -> "TflmOracle":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
