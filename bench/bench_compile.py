"""Whole-model compilation: time, memory, constants, and host speed against TFLM.

    .venv/bin/python bench/bench_compile.py [--json out/bench_compile.json] [--quick]
                                            [--model NAME]...

Per shared model (those whose kernels all exist):

* compile time of ``compile_model`` for host/native (passes, kernels,
  plan, codegen; code-size measurement excluded);
* peak workspace: ours with inputs/outputs in caller buffers, ours with
  them inside the workspace (what TFLM's arena holds too), the liveness
  lower bound of the plan, TFLM's planned activations ("head" of
  ``print_allocations``, measured in the same run on the host) and TFLM's
  Cortex-M arena from BASELINE.md;
* constant bytes (weights, biases, requantization tables) and code bytes
  for Cortex-M4 (qemu/mps2-an386), their sum against TFLM's whole release
  firmware with reference kernels (BASELINE.md; ours counts the model
  library only: a firmware adds its startup code and C library);
* host run time per inference of the compiled model (gcc -O2) and of the
  TFLM interpreter, in the same run on the same inputs, and their ratio.
  The compiled time is (time of 1 + K invocations - time of 1) / K, so
  process start-up cancels (reading and writing each invocation's bytes
  stays in); TFLM is timed around ``invoke()`` in a worker process.
  K is chosen so each timed loop takes about half a second.

Prints a table (markdown, as in docs/compile.md) and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from aot.compile import compile_model  # noqa: E402
from aot.errors import AotError  # noqa: E402
from aot.executor.codegen import host_main  # noqa: E402
from aot.export.host import build_program  # noqa: E402

MODELS_DIR = ROOT.parent / "shared" / "models"
# TFLM arena_used_bytes() on Cortex-M4 (../shared/docs/BASELINE.md).
TFLM_ARENA_M4 = {"mlperf_kws_dscnn": 22820, "mlperf_vww_mobilenetv1_025": 100708,
                 "mlperf_ic_resnet8": 54996, "mlperf_ad_fc_autoencoder": 2580,
                 "tflm_micro_speech": 6836}
# TFLM release firmware flash with its reference kernels (runtime + kernels + model), same source.
TFLM_FLASH_M4_REF = {"mlperf_kws_dscnn": 101052, "mlperf_vww_mobilenetv1_025": 380412,
                     "mlperf_ic_resnet8": 149992, "mlperf_ad_fc_autoencoder": 302976,
                     "tflm_micro_speech": 57844}

_TFLM_WORKER = r"""
import json, os, re, sys, tempfile, time
import numpy as np
from tflite_micro.python.tflite_micro import runtime
path, inputs_path, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
ip = runtime.Interpreter.from_bytes(open(path, "rb").read())
with np.load(inputs_path) as data:
    inputs = [data[k] for k in sorted(data.files)]
log = tempfile.TemporaryFile()
saved = os.dup(2)
os.dup2(log.fileno(), 2)
ip.print_allocations()
os.dup2(saved, 2)
log.seek(0)
text = log.read().decode(errors="replace")
head = re.search(r"head[^0-9]*(\d+)", text)
for i, x in enumerate(inputs):
    ip.set_input(x, i)
ip.invoke()
start = time.perf_counter()
for _ in range(repeat):
    ip.invoke()
seconds = (time.perf_counter() - start) / repeat
print(json.dumps({"head": int(head.group(1)) if head else None, "seconds": seconds}))
"""


def _inputs(graph, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    xs = []
    for t in graph.inputs:
        if t.dtype == "float32":
            xs.append(rng.standard_normal(t.shape).astype(np.float32))
        else:
            info = np.iinfo(t.type.np_dtype)
            xs.append(rng.integers(info.min, info.max, t.shape, endpoint=True)
                      .astype(t.type.np_dtype))
    return xs


def _build(compiled, tmp: Path) -> Path:
    artifact = compiled.write(tmp / "artifact")
    main = host_main(compiled.name, compiled.graph, compiled.plan, version="bench")
    return build_program(artifact, compiled.name, main, tmp / "model")


def _time_compiled(program: Path, xs, repeat: int, tmp: Path) -> float:
    one = b"".join(np.ascontiguousarray(x).tobytes() for x in xs)

    def run(n: int) -> float:
        (tmp / "in.bin").write_bytes(one * n)
        start = time.perf_counter()
        subprocess.run([str(program), str(tmp / "in.bin"), str(tmp / "out.bin"), str(n)],
                       check=True)
        return time.perf_counter() - start

    base = min(run(1) for _ in range(3))
    full = min(run(1 + repeat) for _ in range(3))
    return max(full - base, 0.0) / repeat


def _time_tflm(path: Path, xs, repeat: int, tmp: Path) -> dict:
    inputs = tmp / "inputs.npz"
    np.savez(inputs, **{f"x{i:03d}": x for i, x in enumerate(xs)})
    proc = subprocess.run([sys.executable, "-c", _TFLM_WORKER, str(path), str(inputs),
                           str(repeat)], capture_output=True, text=True)
    if proc.returncode != 0:
        return {"head": None, "seconds": None, "error": proc.stderr.strip()[-300:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def bench_model(path: Path, seconds: float) -> dict:
    """One row; timed loops run about ``seconds`` each (at least 20 invocations)."""
    start = time.perf_counter()
    compiled = compile_model(path, "host/native", name="model", measure_code=False)
    compile_seconds = time.perf_counter() - start
    inside = compile_model(path, "host/native", name="model", io_in_workspace=True,
                           measure_code=False)
    m4 = compile_model(path, "qemu/mps2-an386", name="model")
    xs = _inputs(compiled.graph)
    with tempfile.TemporaryDirectory(prefix="aot-bench-") as tmp:
        program = _build(compiled, Path(tmp))
        estimate = _time_compiled(program, xs, 20, Path(tmp))
        repeat = int(min(max(seconds / max(estimate, 1e-7), 20), 1_000_000))
        ours = _time_compiled(program, xs, repeat, Path(tmp))
        tflm = _time_tflm(path, xs, repeat, Path(tmp)) if path.suffix == ".tflite" else {}
    name = path.stem
    return {
        "model": name,
        "compile_seconds": round(compile_seconds, 3),
        "workspace_bytes": compiled.sizes.workspace,
        "workspace_with_io_bytes": inside.sizes.workspace,
        "caller_io_bytes": compiled.sizes.io,
        "lower_bound_bytes": compiled.plan.lower_bound,
        "lower_bound_with_io_bytes": inside.plan.lower_bound,
        "tflm_head_host_bytes": tflm.get("head"),
        "tflm_arena_m4_bytes": TFLM_ARENA_M4.get(name),
        "constant_bytes": compiled.sizes.constants,
        "code_bytes_m4": m4.sizes.code,
        "flash_bytes_m4": m4.sizes.constants + (m4.sizes.code or 0),
        "tflm_flash_m4_ref_bytes": TFLM_FLASH_M4_REF.get(name),
        "state_bytes": compiled.sizes.state,
        "host_seconds": ours,
        "tflm_host_seconds": tflm.get("seconds"),
        "speedup_vs_tflm": (tflm["seconds"] / ours) if tflm.get("seconds") and ours else None,
    }


def _fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v * 1e6:,.1f} us" if v < 1 else f"{v:.2f}"
    return f"{v:,}"


def table(rows: list[dict]) -> str:
    head = ("| model | compile (s) | workspace (caller i/o) | workspace (i/o inside) | lower bound "
            "(i/o inside) | TFLM head (host) | TFLM arena (M4) | constants | code (M4) | "
            "flash (M4) | TFLM firmware flash (M4, ref) | host time | TFLM host time | "
            "TFLM / ours |")
    lines = [head, "|" + "---|" * 14]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['model']} | not compiled: {r['error']} |" + " - |" * 12)
            continue
        ratio = f"{r['speedup_vs_tflm']:.2f}x" if r["speedup_vs_tflm"] else "-"
        lines.append(
            f"| {r['model']} | {r['compile_seconds']:.2f} | {_fmt(r['workspace_bytes'])} | "
            f"{_fmt(r['workspace_with_io_bytes'])} | {_fmt(r['lower_bound_with_io_bytes'])} | "
            f"{_fmt(r['tflm_head_host_bytes'])} | {_fmt(r['tflm_arena_m4_bytes'])} | "
            f"{_fmt(r['constant_bytes'])} | {_fmt(r['code_bytes_m4'])} | "
            f"{_fmt(r['flash_bytes_m4'])} | {_fmt(r['tflm_flash_m4_ref_bytes'])} | "
            f"{_fmt(r['host_seconds'])} | {_fmt(r['tflm_host_seconds'])} | {ratio} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=ROOT / "out" / "bench_compile.json")
    parser.add_argument("--quick", action="store_true", help="fewer timed invocations")
    parser.add_argument("--model", action="append", default=[], help="only these models")
    args = parser.parse_args(argv)
    manifest = json.loads((MODELS_DIR / "MANIFEST.json").read_text())
    rows = []
    for entry in manifest:
        if args.model and entry["name"] not in args.model:
            continue
        path = MODELS_DIR / entry["file"]
        try:
            rows.append(bench_model(path, seconds=0.05 if args.quick else 0.5))
        except AotError as err:
            rows.append({"model": entry["name"],
                         "error": str(err).split(": not supported yet")[0][:120]})
        print(f"{entry['name']}: done", file=sys.stderr)
    print(table(rows))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"models": rows}, indent=2) + "\n")
    print(f"wrote {args.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
