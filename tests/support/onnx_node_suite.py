"""The ONNX project's backend node tests, run on aot's ONNX frontend.

The onnx wheel ships one folder per test under ``onnx/backend/test/data/node``:
``model.onnx`` and ``test_data_set_*/{input,output}_*.pb``.  A test is
*claimed* when every node of its model is an operator of the default domain
that :data:`aot.frontend.onnx.SUPPORTED_OPERATORS` lists.  Each claimed test
ends in one of two recorded outcomes (``tests/onnx_suite/expectations.json``):

* ``pass``: the model imports and every output agrees with the test's data
  (float within 1e-5 relative and 1e-6 absolute, integers and bools exactly,
  same shape and dtype); where the data disagrees with onnxruntime, the
  project's reference for ONNX, agreeing with onnxruntime is a pass recorded
  with ``"oracle": "onnxruntime"`` (onnx 1.18's QLinearMatMul data wraps
  int8 results around instead of saturating them as the operator's
  specification and onnxruntime do);
* ``refused``: the frontend (or the reference) raised an
  :class:`aot.errors.AotError`, whose first line is recorded.

Anything else, a wrong value or another exception, is never an expectation:
the suite test fails on it.

*Compile-time parameters.*  The node tests feed shapes, axes, pads, clip
bounds, scales and weights as graph inputs; a microcontroller model needs them
at compile time.  When the frontend refuses a model because such an input
"must be known at import", the driver makes that input an initializer holding
the test's data (the model is specialised to it, as a user would with a
constant) and tries again; the expectation records the inputs frozen so.
Empty inputs (size 0), which can only be such parameters, are frozen the same
way.  The other inputs stay run-time inputs.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: The onnx release whose node tests the expectations were recorded against.
ONNX_VERSION = "1.18.0"

EXPECTATIONS = Path(__file__).resolve().parents[1] / "onnx_suite" / "expectations.json"

#: Tolerance of float outputs.
RTOL, ATOL = 1e-5, 1e-6

_IMPORT_TIME = re.compile(r"its value '([^']+)' is a graph input, known only at run time")
_EMPTY_INPUT = re.compile(r"graph input '([^']+)': the input shape \([^)]*\) has the size 0")


def node_dir() -> Path:
    import onnx

    return Path(onnx.__file__).parent / "backend" / "test" / "data" / "node"


def version_problem() -> str | None:
    """Why the suite cannot run here, or None."""
    try:
        import onnx
    except ImportError:
        return "the onnx package is not installed"
    if onnx.__version__ != ONNX_VERSION:
        return (f"the expectations were recorded with onnx {ONNX_VERSION}, this is "
                f"{onnx.__version__} (pip install onnx=={ONNX_VERSION}, the pinned test extra)")
    return None


def claimed_tests() -> list[str]:
    """Names of the node tests whose operators the frontend lists, sorted."""
    import onnx

    from aot.frontend.onnx import SUPPORTED_OPERATORS

    supported = set(SUPPORTED_OPERATORS)
    names = []
    for d in sorted(node_dir().glob("test_*")):
        model = onnx.load(str(d / "model.onnx"), load_external_data=False)
        if all(n.domain in ("", "ai.onnx") and n.op_type in supported
               for n in model.graph.node):
            names.append(d.name)
    return names


@dataclass
class Case:
    """One node test's model and data sets (inputs and outputs as numpy)."""

    name: str
    model: object
    inputs: list[str]
    sets: list[tuple[list, list]]


def _load_value(path: str):
    """A data file's value: a tensor as numpy, or None for sequences and optionals
    (the IR has no such values; the frontend refuses their models)."""
    import onnx
    from onnx import numpy_helper

    data = Path(path).read_bytes()
    tensor = onnx.TensorProto()
    try:
        tensor.ParseFromString(data)
        if tensor.data_type:
            return numpy_helper.to_array(tensor)
    except Exception:  # noqa: BLE001 - not a tensor: a sequence or an optional
        pass
    return None


def load_case(name: str) -> Case:
    import onnx

    d = node_dir() / name
    model = onnx.load(str(d / "model.onnx"), load_external_data=False)
    init = {i.name for i in model.graph.initializer}
    inputs = [vi.name for vi in model.graph.input if vi.name not in init]
    sets = []
    for s in sorted(glob.glob(str(d / "test_data_set_*"))):
        xs = [_load_value(f) for f in sorted(glob.glob(os.path.join(s, "input_*.pb")))]
        ys = [_load_value(f) for f in sorted(glob.glob(os.path.join(s, "output_*.pb")))]
        sets.append((xs, ys))
    return Case(name, model, inputs, sets)


def freeze(model, values: dict[str, np.ndarray]):
    """A copy of ``model`` with the graph inputs ``values`` made initializers."""
    from onnx import numpy_helper

    out = type(model)()
    out.CopyFrom(model)
    keep = [vi for vi in out.graph.input if vi.name not in values]
    del out.graph.input[:]
    out.graph.input.extend(keep)
    for name, data in values.items():
        out.graph.initializer.append(numpy_helper.from_array(np.asarray(data), name))
    return out


@dataclass
class Outcome:
    status: str  # "pass", "refused", "wrong" or "crash"
    detail: str = ""
    frozen: tuple[str, ...] = ()
    graph: object = None
    feeds: list | None = None  # per data set, the run-time inputs
    expected: list | None = None  # per data set, the outputs
    oracle: str = ""  # "onnxruntime" where the test's data disagrees with it

    def record(self) -> dict:
        out = {"outcome": self.status}
        if self.frozen:
            out["frozen"] = list(self.frozen)
        if self.oracle:
            out["oracle"] = self.oracle
        if self.status == "refused":
            out["reason"] = self.detail
        return out


def import_case(case: Case):
    """(graph, frozen input names) of a node test, freezing compile-time parameters."""
    from aot.frontend import ModelError
    from aot.frontend.onnx import parse_onnx

    xs0 = case.sets[0][0]
    given = dict(zip(case.inputs, xs0))
    if any(v is None for v in xs0):
        raise ModelError("a graph input is a sequence or an optional (not a tensor)")
    frozen: dict[str, np.ndarray] = {}
    while True:
        model = freeze(case.model, frozen) if frozen else case.model
        shapes = {n: given[n].shape for n in case.inputs if n not in frozen}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return parse_onnx(model.SerializeToString(), name="t",
                                  input_shapes=shapes), tuple(frozen)
        except ModelError as err:
            m = _IMPORT_TIME.search(str(err)) or _EMPTY_INPUT.search(str(err))
            if m is None or m.group(1) not in given or m.group(1) in frozen:
                raise
            frozen[m.group(1)] = given[m.group(1)]


def agree(got: np.ndarray, want: np.ndarray) -> str | None:
    """Why ``got`` is not ``want``, or None."""
    got = np.asarray(got)
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"got {got.dtype}{list(got.shape)}, expected {want.dtype}{list(want.shape)}"
    if want.dtype.kind == "f":
        if not np.allclose(got, want, rtol=RTOL, atol=ATOL, equal_nan=True):
            return f"largest difference {float(np.nanmax(np.abs(got - want)))}"
    elif not np.array_equal(got, want):
        return f"{int(np.sum(got != want))} of {want.size} values differ"
    return None


def _onnxruntime(case: Case, xs: list) -> list[np.ndarray]:
    from support.onnx_oracle import ort_session

    session = ort_session(case.model.SerializeToString(), quiet=True)
    return session.run(None, dict(zip(case.inputs, xs)))


def run_case(name: str) -> Outcome:
    """Import and run one node test on the reference interpreter."""
    from aot.errors import AotError
    from aot.reference.interpreter import run

    try:
        case = load_case(name)
        graph, frozen = import_case(case)
        feeds, expected, oracle = [], [], ""
        for xs, ys in case.sets:
            run_inputs = [x for n, x in zip(case.inputs, xs) if n not in frozen]
            got = run(graph, run_inputs)
            if len(got) != len(ys):
                return Outcome("wrong", f"{len(got)} outputs, expected {len(ys)}", frozen)
            whys = [agree(a, b) for a, b in zip(got, ys)]
            if any(whys):
                # The reference for ONNX models is onnxruntime: where the test's data
                # disagrees with it (e.g. onnx's own QLinearMatMul wraps instead of
                # saturating), aot must agree with onnxruntime.
                ys = _onnxruntime(case, xs)
                whys = [agree(a, b) for a, b in zip(got, ys)]
                oracle = "onnxruntime"
            k = next((k for k, why in enumerate(whys) if why), None)
            if k is not None:
                return Outcome("wrong", f"output {k}: {whys[k]}", frozen)
            feeds.append(run_inputs)
            expected.append(ys)
        return Outcome("pass", "", frozen, graph, feeds, expected, oracle)
    except AotError as err:
        return Outcome("refused", str(err).splitlines()[0])
    except Exception as err:  # noqa: BLE001 - a crash is what the suite looks for
        return Outcome("crash", f"{type(err).__name__}: {err}")


def load_expectations() -> dict[str, dict]:
    return json.loads(EXPECTATIONS.read_text())


def main(argv=None) -> int:
    """Print the counts; ``--update`` rewrites the expectations (never with a
    wrong value or a crash)."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--update", action="store_true")
    args = parser.parse_args(argv)
    problem = version_problem()
    if problem:
        raise SystemExit(problem)
    results = {name: run_case(name) for name in claimed_tests()}
    counts: dict[str, int] = {}
    for name, r in results.items():
        counts[r.status] = counts.get(r.status, 0) + 1
        if r.status in ("wrong", "crash"):
            print(f"{name}: {r.status}: {r.detail}")
    print(f"{len(results)} claimed tests: " + ", ".join(f"{v} {k}" for k, v in
                                                         sorted(counts.items())))
    if args.update:
        if counts.get("wrong") or counts.get("crash"):
            raise SystemExit("not updating: fix the wrong values and crashes first")
        EXPECTATIONS.write_text(json.dumps({n: r.record() for n, r in results.items()},
                                           indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
