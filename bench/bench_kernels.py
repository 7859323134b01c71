"""Operator kernels on the host: per shared model, lowering time, constants, MACs and
the run time of all its kernels against the reference interpreter in the same run.

    .venv/bin/python bench/bench_kernels.py [--models kws,vww] [--repeat 5] [--out FILE]

Every kernel group is lowered with the generic strategy, compiled with the host
gcc (-O2) and called through ctypes on the reference's own intermediate
tensors (and checked bit for bit).  ``speedup`` is the reference interpreter's
best-of-three time for one inference divided by the summed median kernel times: a ratio
measured in one run, so machine speed cancels out.  Prints a table and writes
JSON.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from aot.codegen.c import compile_host  # noqa: E402
from aot.frontend import load_model  # noqa: E402
from aot.ir import Graph  # noqa: E402
from aot.kernels import lower_group, support_files  # noqa: E402
from aot.passes import annotations, optimize  # noqa: E402
from aot.reference.interpreter import Session  # noqa: E402

MODELS = ROOT.parent / "shared" / "models"


def _support_dir() -> Path:
    d = Path(tempfile.gettempdir()) / "aot-bench-kernels-support"
    d.mkdir(exist_ok=True)
    for name, text in support_files(None).items():
        (d / name).write_text(text)
    return d


def _inputs(graph, rng):
    out = []
    for t in graph.inputs:
        if t.dtype == "float32":
            out.append(rng.standard_normal(t.shape).astype(np.float32))
        else:
            info = np.iinfo(t.type.np_dtype)
            out.append(rng.integers(info.min, info.max + 1, t.shape).astype(t.type.np_dtype))
    return out


def bench_model(path: Path, repeat: int) -> dict:
    ag = optimize(load_model(path))
    inputs = _inputs(ag, np.random.default_rng(0))
    produced = [t for n in ag.nodes for t in n.outputs]
    session = Session(Graph(ag.inputs, produced, ag.nodes, ag.name))
    before = {k: v.copy() for k, v in session.state.items()}
    ref_times = []
    for _ in range(3):
        session.reset()
        start = time.perf_counter()
        outs = session.invoke(inputs)
        ref_times.append(time.perf_counter() - start)
    ref_time = min(ref_times)
    values = dict(zip((id(t) for t in produced), outs))
    values.update({id(t): x for t, x in zip(ag.inputs, inputs)})
    tensors = {t.name: t for t in ag.tensors()}
    support = _support_dir()
    lower_s = 0.0
    total = {"kernels": 0, "macs": 0, "constant_bytes": 0, "run_s": 0.0}
    for i, group in enumerate(annotations(ag).groups):
        if group.kind == "view":
            continue
        start = time.perf_counter()
        k = lower_group(group, ag, "c", name=f"bench_k{i}")
        lower_s += time.perf_counter() - start
        fn = getattr(ctypes.CDLL(str(compile_host(k.source, ["-I", str(support)]))), k.name)
        fn.restype = ctypes.c_int32
        arrays = []
        for p in k.params:
            t = tensors[p.tensor]
            if p.role == "state":
                arrays.append(before[id(t)].copy())
            elif p.role == "input":
                arrays.append(np.ascontiguousarray(values[id(t)]))
            else:
                arrays.append(np.zeros(t.shape, t.type.np_dtype))
        ptrs = [ctypes.c_void_p(a.ctypes.data) for a in arrays]
        times = []
        for n in range(repeat):
            for a, p in zip(arrays, k.params):
                if p.role == "state":
                    a[...] = before[id(tensors[p.tensor])]
            start = time.perf_counter()
            fn(*ptrs)
            times.append(time.perf_counter() - start)
            if n == 0:
                for a, p in zip(arrays, k.params):
                    if p.role == "output" and a.dtype != np.float32:
                        assert np.array_equal(a, values[id(tensors[p.tensor])]), group.name
        total["kernels"] += 1
        total["macs"] += k.macs
        total["constant_bytes"] += k.constant_bytes
        total["run_s"] += statistics.median(times)
    total["lower_s"] = lower_s
    total["reference_s"] = ref_time
    total["speedup"] = ref_time / total["run_s"]
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="", help="comma-separated substrings of model names")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "bench_kernels.json")
    args = parser.parse_args()
    wanted = [w for w in args.models.split(",") if w]
    report = {}
    for path in sorted(MODELS.glob("*.tflite")):
        if wanted and not any(w in path.stem for w in wanted):
            continue
        report[path.stem] = bench_model(path, args.repeat)
    print(f"{'model':34} {'kernels':>7} {'MACs':>10} {'const B':>9} {'lower s':>8} "
          f"{'run ms':>8} {'MAC/ns':>7} {'speedup':>8}")
    for name, r in report.items():
        print(f"{name:34} {r['kernels']:7} {r['macs']:10} {r['constant_bytes']:9} "
              f"{r['lower_s']:8.2f} {r['run_s'] * 1e3:8.2f} "
              f"{r['macs'] / r['run_s'] / 1e9:7.2f} {r['speedup']:8.1f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
