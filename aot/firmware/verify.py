"""Verify a model on a board: its outputs there against the reference interpreter.

:func:`verify_model` compiles the model for the board, runs a sequence of
inputs there (:func:`aot.firmware.device.run_on_board`) and through
:mod:`aot.reference` (bit-exact with TFLM), and compares every output
value.  The sequence is the model's sample inputs, ``samples/<model>.npy``
beside the model file when it exists (or the inputs given), followed by
seeded random ones; all run in order from a fresh state on both sides.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from aot.compile import compile_model
from aot.firmware.device import BoardRun, run_on_board
from aot.frontend import load_model
from aot.inputs import check_inputs
from aot.ir import Graph
from aot.reference.interpreter import Session


#: How far float outputs may be from the reference: this times max(1, |value|)
#: (a few float32 rounding steps of an accumulation done in another order).
FLOAT_TOLERANCE = 1e-5


def sample_path(model) -> Path:
    """Where a model's sample inputs live: ``samples/<stem>.npy`` beside it."""
    model = Path(model)
    return model.parent / "samples" / f"{model.stem}.npy"


def random_inputs(graph: Graph, count: int, seed: int) -> list[np.ndarray]:
    """``count`` seeded random invocations, one ``[count, *shape]`` array per input.

    Integer inputs alternate between values near the zero point (like real
    data, so later layers stay unsaturated) and the full range (saturation);
    float inputs are standard normal.
    """
    rng = np.random.default_rng(seed)
    arrays = [np.empty((count, *t.shape), t.type.np_dtype) for t in graph.inputs]
    for step in range(count):
        for k, t in enumerate(graph.inputs):
            if t.type.np_dtype.kind == "f":
                arrays[k][step] = rng.standard_normal(t.shape)
                continue
            info = np.iinfo(t.type.np_dtype)
            zero = t.quant.zero_point[0] if t.quant is not None else 0
            x = (rng.integers(info.min, info.max, t.shape, endpoint=True) if step % 2
                 else rng.normal(zero, 20, t.shape).round())
            arrays[k][step] = np.clip(x, info.min, info.max)
    return arrays


def reference_outputs(graph: Graph, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """The reference interpreter on the ``[N, ...]`` inputs, in order on one state."""
    session = Session(graph)
    n = inputs[0].shape[0]
    results = [session.invoke([x[i] for x in inputs]) for i in range(n)]
    return [np.stack([np.asarray(r[k]) for r in results]) for k in range(len(graph.outputs))]


@dataclass
class OutputCheck:
    """How one model output compares over all invocations.

    ``differing`` counts values that are not identical, ``mismatches`` those
    further apart than ``tolerance`` (0 for integer outputs).
    """

    name: str
    values: int
    differing: int
    mismatches: int
    max_abs_diff: float
    first_mismatch: int | None   # invocation index
    tolerance: float = 0.0

    @property
    def exact(self) -> bool:
        return self.differing == 0

    @property
    def passed(self) -> bool:
        return self.mismatches == 0

    def to_json(self) -> dict:
        return {"name": self.name, "values": self.values, "differing": self.differing,
                "mismatches": self.mismatches,
                # JSON has no Infinity: null stands for a NaN or Inf difference.
                "max_abs_diff": self.max_abs_diff if np.isfinite(self.max_abs_diff) else None,
                "first_mismatch": self.first_mismatch, "tolerance": self.tolerance,
                "bit_exact": self.exact, "passed": self.passed}


@dataclass
class VerifyReport:
    """The result of :func:`verify_model`; :meth:`to_json` is the written report."""

    model: str
    model_file: str
    board: str
    sources: list[str]
    invocations: int
    outputs: list[OutputCheck]
    run: BoardRun
    extra: dict = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return all(o.passed for o in self.outputs)

    def to_json(self) -> dict:
        return {"model": self.model, "model_file": self.model_file, "board": self.board,
                "passed": self.passed, "reference": "aot.reference (bit-exact with TFLM)",
                "rule": "integer outputs bit-exact, float outputs within their tolerance",
                "inputs": self.sources, "invocations": self.invocations,
                "outputs": [o.to_json() for o in self.outputs], **self.run.report()}

    def summary(self) -> str:
        verdict = "PASS" if self.passed else "FAIL"
        head = (f"{verdict}: {self.model} on {self.board}, {self.invocations} invocations "
                f"({'; '.join(self.sources)})")
        lines = [head]
        for k, o in enumerate(self.outputs):
            if o.exact:
                lines.append(f"  output {k} {o.name}: bit-exact ({o.values} values)")
            elif o.passed:
                lines.append(f"  output {k} {o.name}: {o.differing} of {o.values} float values "
                             f"differ, all within {o.tolerance:g} x max(1, |value|) (max |diff| "
                             f"{o.max_abs_diff:g})")
            else:
                lines.append(f"  output {k} {o.name}: {o.mismatches} of {o.values} values "
                             f"differ (first in invocation {o.first_mismatch}, max |diff| "
                             f"{o.max_abs_diff:g})")
        report = self.run.report()
        per = next((f"{v} {k.replace('_per_inference', '')} per inference"
                    for k, v in report.items() if k.endswith("_per_inference")), None)
        if per:
            clock = report.get("clock_hz")
            lines.append(f"  {per}" + (f" (core clock {clock / 1e6:g} MHz)" if clock else ""))
        if self.run.build.sizes is not None:
            lines.append(f"  {self.run.build.sizes}")
        lines += [f"  warning: {w}" for w in self.run.device_warnings]
        return "\n".join(lines)


def compare(graph: Graph, got: list[np.ndarray], want: list[np.ndarray], *,
            float_tolerance: float = 0.0) -> list[OutputCheck]:
    """Compare each output over all invocations: integers bit for bit, floats
    within ``float_tolerance`` times ``max(1, |reference|)`` (absolute near
    zero, relative for large values).  NaN matches only NaN and an infinity
    only the same infinity; any other non-finite difference is a mismatch
    (a NaN reference makes no tolerance)."""
    checks = []
    for t, a, b in zip(graph.outputs, got, want):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            checks.append(OutputCheck(t.name, b.size, b.size, b.size, float("inf"), 0))
            continue
        is_float = a.dtype.kind == "f"
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        same = (a64 == b64) | (np.isnan(a64) & np.isnan(b64))
        with np.errstate(invalid="ignore"):
            diff = np.where(same, 0.0, np.abs(a64 - b64))
        diff = np.where(np.isnan(diff), np.inf, diff)  # NaN against a number, inf - inf
        tol = float_tolerance if is_float else 0.0
        with np.errstate(invalid="ignore"):
            bad = ~same & (np.isinf(diff) | (diff > tol * np.maximum(1.0, np.abs(b64))))
        per_run = bad.reshape(a.shape[0], -1).any(axis=1)
        checks.append(OutputCheck(t.name, int(b.size), int((diff != 0).sum()),
                                  int(bad.sum()), float(diff.max()) if diff.size else 0.0,
                                  int(np.argmax(per_run)) if per_run.any() else None, tol))
    return checks


def verify_model(model, board, *, codegen: str | None = None,
                 inputs: list[np.ndarray] | None = None,
                 random_count: int = 2, seed: int = 0, name: str = "model",
                 input_shapes=None,
                 float_tolerance: float = FLOAT_TOLERANCE,
                 workdir=None, runner: str | None = None, serial_port: str | None = None,
                 cache_dir: Path | None = None, kernel_library=None,
                 cores: int = 1) -> VerifyReport:
    """Run ``model`` on ``board`` and on the reference; compare bit for bit.

    ``codegen`` (``c``, ``llvm``) overrides the board's code generator
    (:func:`aot.compile.resolve_target`).  ``inputs`` (one ``[N, *shape]``
    array per model input) replaces the
    sample file; ``random_count`` seeded random invocations follow.  Integer
    outputs must be bit-exact; float outputs may differ by
    ``float_tolerance`` (the board's libm and FPU round differently from
    numpy; 0 demands identical floats too).  ``input_shapes`` fixes the sizes
    an ONNX model leaves open (:func:`aot.frontend.load_model`).  ``kernel_library``
    is :func:`aot.compile.compile_model`'s (tuning records; ``aot verify`` passes the
    records ``aot compile`` would use, so it checks the same kernels).  ``cores`` 2 splits
    the model across the board's two cores (docs/targets.md).
    """
    model = Path(model)
    graph = load_model(model, input_shapes)
    sources, parts = [], []
    if inputs is None and sample_path(model).is_file():
        inputs = check_inputs(graph, [np.load(sample_path(model))], source=sample_path(model))
        sources.append(f"{inputs[0].shape[0]} from {sample_path(model).name}")
    elif inputs is not None:
        inputs = check_inputs(graph, inputs)  # before compiling, building and flashing
        sources.append(f"{inputs[0].shape[0]} given")
    if inputs is not None:
        parts.append(inputs)
    if random_count > 0 or not parts:
        count = max(random_count, 1)
        parts.append(random_inputs(graph, count, seed))
        sources.append(f"{count} seeded random (seed {seed})")
    sequence = [np.concatenate(arrays) for arrays in zip(*parts)]
    compiled = compile_model(model, board, codegen=codegen, name=name, input_shapes=input_shapes,
                             measure_code=False, kernel_library=kernel_library, cores=cores)
    run = run_on_board(compiled, sequence, workdir=workdir, runner=runner,
                       serial_port=serial_port, cache_dir=cache_dir)
    want = reference_outputs(graph, sequence)
    return VerifyReport(graph.name, str(model), compiled.board.tag, sources,
                        sequence[0].shape[0],
                        compare(graph, run.outputs, want, float_tolerance=float_tolerance), run)
