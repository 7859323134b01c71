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

    .venv/bin/python bench/bench_compile.py --timing [--board TAG] [--model NAME]...
                                            [--layers 25,50,100] [--repeat 3] [--json FILE]

``--timing``: where ``aot compile`` spends its time.  Per shared model (or
``--model``) and per synthetic model of N layers (``--layers``: depthwise 3x3
and pointwise 1x1 convolutions alternating on a 12x12x8 int8 image, each layer
its own weights), fresh processes run ``aot compile MODEL --board TAG -o DIR``
(``aot.cli.main``) three times: *cold* with an empty object cache, *warm* with
the cache the first filled and another output folder, *unchanged*: the warm
command again, which replays its record (aot.commands.replay).  A synthetic
model is a Graph, not a file: ``compile_model`` and ``write`` stand for the
command, with no unchanged run.  The three runs are made ``--repeat`` times (each
time from an empty cache) and each run's median by wall time is kept: the wall
times of this machine vary by a third from one run to the next.  Each run reports
wall and CPU seconds of its
stages: ``import`` (the command line and the compiler), ``frontend`` (the
synthetic models: building the Graph), ``passes``, ``lowering``, ``planning``,
``codegen``, ``code size`` (``CompiledModel.timings``, every plan made
included), ``write`` (the rest: the artifact written, the report printed; a
replay's whole work); CPU counts the C compilers the process ran.  *total* is
the whole process seen from outside (interpreter start-up included).  ``aot
--help`` is timed the same way (start-up, best of 5).  The workers keep
compiled bytecode (in a temporary folder, made before timing) as an installed
package does, even where ``PYTHONDONTWRITEBYTECODE`` is set.  The table is
stamped with the commit, the date and the load average before and after (2
cores shared with other work: read CPU time where wall time is noisy).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from aot.compile import compile_model  # noqa: E402
from aot.errors import AotError  # noqa: E402
from aot.executor.codegen import host_main  # noqa: E402
from aot.export.host import build_program  # noqa: E402
from stamp import describe, stamp  # noqa: E402

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
    parser.add_argument("--json", type=Path, default=None,
                        help="default out/bench_compile.json (--timing: "
                        "out/bench_compile_timing.json)")
    parser.add_argument("--quick", action="store_true", help="fewer timed invocations")
    parser.add_argument("--model", action="append", default=[], help="only these models")
    parser.add_argument("--timing", action="store_true",
                        help="time aot compile's stages, cold and warm (see the docstring)")
    parser.add_argument("--board", default="qemu/mps2-an386", help="--timing: the board")
    parser.add_argument("--repeat", type=int, default=3,
                        help="--timing: make each model's runs this many times and keep each "
                        "run's median (by wall time)")
    parser.add_argument("--layers", default="25,50,100",
                        type=lambda t: [int(n) for n in t.split(",") if n],
                        help="--timing: synthetic models of these many layers")
    args = parser.parse_args(argv)
    if args.timing:
        args.json = args.json or ROOT / "out" / "bench_compile_timing.json"
        return timing_main(args)
    if args.board != "qemu/mps2-an386" or args.layers != [25, 50, 100] or args.repeat != 3:
        parser.error("--board, --layers and --repeat are --timing's options")
    args.json = args.json or ROOT / "out" / "bench_compile.json"
    started = stamp()
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
    args.json.write_text(json.dumps({"stamp": started, "models": rows}, indent=2) + "\n")
    print(f"wrote {args.json}", file=sys.stderr)
    return 0


# -- --timing: where `aot compile` spends its time ---------------------------------------

STAGES = ("import", "frontend", "passes", "lowering", "planning", "codegen", "code size",
          "write")
#: The four MLPerf Tiny models first (the headline), then the other shared models.
HEADLINE = ("mlperf_kws_dscnn", "mlperf_vww_mobilenetv1_025", "mlperf_ic_resnet8",
            "mlperf_ad_fc_autoencoder")


def timed_models() -> dict[str, Path]:
    """Every shared model (../shared/models/MANIFEST.json) by name, the headline first."""
    manifest = json.loads((MODELS_DIR / "MANIFEST.json").read_text())
    files = {e["name"]: MODELS_DIR / e["file"] for e in manifest}
    return {n: files[n] for n in sorted(files, key=lambda n: (n not in HEADLINE,
                                                               HEADLINE.index(n)
                                                               if n in HEADLINE else 0))}

# One `aot compile` in a fresh process.  A model file runs the command line itself
# (aot.cli.main: with the compile record of aot.commands.replay), the compilation's
# stages read from the CompiledModel it makes; a synthetic model (a Graph, no file) is
# compiled and written as the command does.
_COMPILE_WORKER = r"""
import json, os, sys, time
def now():
    t = os.times()
    return time.perf_counter(), t.user + t.system + t.children_user + t.children_system
t0 = now()
import aot.cli
model, board, out, layers, replay = sys.argv[1:6]
if replay != "1":
    import aot.commands.compile, aot.compile  # what the command imports to compile
t1 = now()
made = []
if replay != "1":  # the compiled models, for their timings
    emit = aot.compile.PlannedModel.emit
    aot.compile.PlannedModel.emit = lambda self, **kw: made.append(emit(self, **kw)) or made[-1]
built = (0.0, 0.0)
if int(layers):
    import aot.compile
    sys.path.insert(0, os.path.dirname(os.path.abspath(model)))
    from bench_compile import synthetic_model
    ta = now()
    graph = synthetic_model(int(layers))
    built = (now()[0] - ta[0], now()[1] - ta[1])
    aot.compile.compile_model(graph, board, cache_dir=os.environ["AOT_CACHE_DIR"] + "/objects"
                              ).write(out)
else:
    assert aot.cli.main(["compile", model, "--board", board, "-o", out]) == 0
t2 = now()
stages = {"import": [t1[0] - t0[0], t1[1] - t0[1]], "frontend": list(built)}
for m in made:
    for stage, wall, cpu in m.timings:
        stages.setdefault(stage, [0.0, 0.0])
        stages[stage][0] += wall
        stages[stage][1] += cpu
rest = [t2[0] - t1[0] - sum(v[0] for k, v in stages.items() if k != "import"),
        t2[1] - t1[1] - sum(v[1] for k, v in stages.items() if k != "import")]
stages["write" if made else "replay"] = rest
print(json.dumps({"stages": stages, "code": made[-1].sizes.code if made else None}))
"""


def synthetic_model(layers: int):
    """A graph of ``layers`` layers for the growth measurement: depthwise 3x3 and
    pointwise 1x1 int8 convolutions (ReLU) alternating on 12x12x8, each with its own
    weights, so each layer is its own kernel and C file."""
    from aot.ir import GraphBuilder
    from aot.ir.types import Quantization, TensorType

    rng = np.random.default_rng(layers)
    b = GraphBuilder(f"synthetic_{layers}")
    y = b.input("x", (1, 12, 12, 8), "int8", Quantization.per_tensor(0.05, 3))
    for i in range(layers):
        w = rng.integers(-127, 128, (1, 3, 3, 8) if i % 2 == 0 else (8, 1, 1, 8))
        weights = b.constant("", w.astype(np.int8), quant=Quantization.per_tensor(0.02, 0))
        bias = b.constant("", rng.integers(-300, 300, 8).astype(np.int32),
                          quant=Quantization.per_tensor(0.001, 0))
        out = TensorType((1, 12, 12, 8), "int8", Quantization.per_tensor(0.05, 3))
        if i % 2 == 0:
            y = b.op("depthwise_conv2d", [y, weights, bias], out, padding=(1, 1, 1, 1),
                     depth_multiplier=1, activation="relu")
        else:
            y = b.op("conv2d", [y, weights, bias], out, activation="relu")
    return b.build([y])


def _children_cpu() -> float:
    t = os.times()
    return t.children_user + t.children_system


def _run_timed(argv: list[str], env: dict) -> tuple[float, float, str]:
    """Wall and CPU seconds (with its children) of a fresh process, and its output."""
    cpu, start = _children_cpu(), time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, env=env)
    wall, cpu = time.perf_counter() - start, _children_cpu() - cpu
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:4])}... failed:\n{proc.stderr[-2000:]}")
    return wall, cpu, proc.stdout


def bench_env(tmp: Path) -> dict:
    """The workers' environment: aot from this tree, compiled bytecode kept (in
    ``tmp``, not beside the sources) as an installed package keeps it, and the
    bytecode made once before any timing."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(ROOT), PYTHONPYCACHEPREFIX=str(tmp / "pyc"))
    subprocess.run([sys.executable, "-c", "import aot.cli, aot.compile, aot.commands.replay, "
                    "aot.export.sdk, jinja2, onnx"], env=env, check=True, cwd=ROOT)
    return env


RUNS = ("cold", "warm", "unchanged")


def time_compile(model: str, board: str, env: dict, layers: int = 0, repeat: int = 1) -> dict:
    """``cold``: an empty object cache; ``warm``: the cache ``cold`` filled, another
    output folder; ``unchanged``: ``warm``'s command again (a model file: replayed).
    With ``repeat``, the three runs are made that many times, each time with an empty
    cache, and each run's median by wall time is kept (``repeats`` says how many)."""
    made: dict[str, list] = {}
    source = str(Path(__file__).resolve()) if layers else model
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="aot-bench-compile-") as tmp:
            run_env = {**env, "AOT_CACHE_DIR": str(Path(tmp) / "cache")}
            for run, folder in (("cold", "a"), ("warm", "b"), ("unchanged", "b")):
                if run == "unchanged" and layers:
                    continue  # a Graph has no command line to replay
                wall, cpu, text = _run_timed([sys.executable, "-c", _COMPILE_WORKER, source,
                                              board, str(Path(tmp) / folder), str(layers),
                                              "1" if run == "unchanged" else "0"], run_env)
                result = json.loads(text.strip().splitlines()[-1])
                made.setdefault(run, []).append({"total": [wall, cpu], **result})
    return {run: {**sorted(runs, key=lambda r: r["total"][0])[len(runs) // 2],
                  "repeats": len(runs)} for run, runs in made.items()}


def time_startup(env: dict, repeat: int = 5) -> list[float]:
    """Best wall and CPU seconds of ``aot --help`` in a fresh process."""
    runs = [_run_timed([sys.executable, "-m", "aot", "--help"], env)[:2]
            for _ in range(repeat)]
    return [min(r[0] for r in runs), min(r[1] for r in runs)]


def _cell(pair) -> str:
    return "-" if pair is None else f"{pair[0]:.2f} ({pair[1]:.2f})"


def timing_table(rows: list[dict], startup: list[float]) -> str:
    """Markdown: one row per model and run, ``wall (CPU)`` seconds per stage."""
    head = ["model", "run", "total", *STAGES, "code (bytes)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        for run in RUNS:
            if run not in row:
                continue
            r = row[run]
            stages = dict(r["stages"])
            if "replay" in stages:  # printed the recorded report: no stage ran
                stages["write"] = stages.pop("replay")
            lines.append("| " + " | ".join(
                [row["model"], run if "replay" not in r["stages"] else "unchanged (replayed)",
                 _cell(r["total"]), *(_cell(stages.get(s)) for s in STAGES),
                 f"{r['code']:,}" if r["code"] is not None else "-"]) + " |")
    lines.append(f"| `aot --help` (best of 5) | | {_cell(startup)} |" + " |" * (len(head) - 3))
    return "\n".join(lines)


def _load(s: dict) -> str:
    return " ".join(f"{v:.1f}" for v in s["load_average"])


def timing_main(args) -> int:
    before = stamp()
    models = timed_models()
    unknown = [m for m in args.model if m not in models]
    if unknown:
        raise SystemExit(f"unknown model {unknown[0]!r}; the shared models: {', '.join(models)}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="aot-bench-pyc-") as tmp:
        env = bench_env(Path(tmp))
        for name, path in models.items():
            if args.model and name not in args.model:
                continue
            rows.append({"model": name, **time_compile(str(path), args.board, env,
                                                       repeat=args.repeat)})
            print(f"{name}: done", file=sys.stderr)
        for n in args.layers:
            rows.append({"model": f"synthetic, {n} layers", "layers": n,
                         **time_compile("", args.board, env, layers=n, repeat=args.repeat)})
            print(f"{n} layers: done", file=sys.stderr)
        startup = time_startup(env)
    after = _load(stamp())
    print(f"`aot compile MODEL --board {args.board} -o DIR`, seconds, wall (CPU); "
          f"{describe(before)}, {before['cores']} cores, load average {_load(before)} "
          f"before, {after} after:\n")
    print(timing_table(rows, startup))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"board": args.board, "stamp": before, "load_after": after,
                                     "startup": startup, "models": rows}, indent=2) + "\n")
    print(f"wrote {args.json}", file=sys.stderr)
    return 0

if __name__ == "__main__":
    sys.exit(main())
