"""Tuning on QEMU: instructions per inference before and after, and the cost per candidate.

    .venv/bin/python bench/bench_tune.py [--json out/bench_tune.json] [--trials 24]
                                         [--model NAME]... [--flow-candidates 16]
    .venv/bin/python bench/bench_tune.py --budget 300 --tuner evolution --tuner auto
                                         --model mlperf_kws_dscnn --no-flows [--logs DIR]

Per MLPerf Tiny model on qemu/mps2-an386, or ``--board`` (instructions are
exact under QEMU's icount):

* instructions per inference of the untuned model (``compile_model`` with
  the kernel library's own strategies) and of the tuned one (the best
  record per workload, :class:`aot.tune.library.TunedKernels`), both run
  on the model's first sample input and checked bit for bit against the
  reference interpreter (bit-exact with TFLM);
* the tuning session (:func:`aot.tune.session.tune_model`, evolutionary
  tuner, ``--trials`` configs per workload, 16 candidates per firmware
  image): workloads, candidates measured, failures, wall time and
  candidates per minute.

With ``--budget SECONDS``, each model is tuned once per ``--tuner`` with
that time budget for the whole model (the task scheduler shares it among
the workloads, aot.tune.scheduler) instead of ``--trials`` per workload:
the template tuner (``evolution``) against the template-free one
(``auto``) on the same budget.  Every failed trial is printed with its
reason and kept in the JSON (``failures``); ``--logs`` keeps the logs.

Then, in the same run, the cost per candidate of three flows on the same
``--flow-candidates`` configs of the first model's first workload, in
batches of ``--flow-batch``: loaded into RAM over the RPC (one base image
built and booted for the workload, aot.tune.loader), packed (one image and
one boot per batch) and a build-and-reflash flow (what microTVM did: one
image and one boot per candidate; its runtime objects still come from the
cache, which favours it).  The three must give the same instruction counts.
``--flows-only`` skips the models and measures only this.

Prints a markdown table (as in docs/tuning.md) and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from aot.compile import compile_model  # noqa: E402
from aot.firmware import run_on_board  # noqa: E402
from aot.firmware.verify import reference_outputs, sample_path  # noqa: E402
from aot.frontend import load_model  # noqa: E402
from aot.target import load_board  # noqa: E402
from aot.tune import records  # noqa: E402
from aot.tune.loader import RamBuilder, RamRunner, measure_ram  # noqa: E402
from aot.tune.measure import Builder, Runner, measure  # noqa: E402
from aot.tune.library import TunedKernels  # noqa: E402
from aot.tune.session import TUNER_NAMES, tune_model  # noqa: E402
from aot.tune.workload import extract_workloads  # noqa: E402
from stamp import stamp  # noqa: E402

MODELS_DIR = ROOT.parent / "shared" / "models"
BOARD = "qemu/mps2-an386"
MODELS = ["mlperf_kws_dscnn", "mlperf_ic_resnet8", "mlperf_vww_mobilenetv1_025",
          "mlperf_ad_fc_autoencoder"]


def instructions(model: Path, library, work: Path, cache: Path,
                 board: str = BOARD) -> tuple[int, bool]:
    """Instructions per inference on the first sample, and whether it is bit-exact."""
    inputs = [np.load(sample_path(model))[:1]]
    want = reference_outputs(load_model(model), inputs)
    compiled = compile_model(model, board, measure_code=False, kernel_library=library)
    run = run_on_board(compiled, inputs, workdir=work, cache_dir=cache)
    exact = all(np.array_equal(g, w) for g, w in zip(run.outputs, want))
    return run.per_inference, exact


def flows(model: Path, count: int, batch: int, work: Path, cache: Path) -> dict:
    """Seconds per candidate for the same ``count`` configs of the model's first
    workload, measured ``batch`` at a time: loaded into RAM, one image per
    batch, one image and one boot per candidate."""
    board = load_board(BOARD)
    _, workloads = extract_workloads(model, board.target)
    wl = workloads[0]
    configs = list(wl.space)[:count]
    batches = [configs[i:i + batch] for i in range(0, len(configs), batch)]
    results, seconds = {}, {}

    start = time.perf_counter()
    ram = RamBuilder(board, work / "flows-ram", cache_dir=cache)
    with RamRunner() as runner:  # the base image is built and booted once for the workload
        results["ram"] = [r for b in batches for r in measure_ram(ram, runner, wl, b)]
        sent = runner.bytes_sent
    seconds["ram"] = time.perf_counter() - start

    start = time.perf_counter()
    builder = Builder(board, work / "flows", cache_dir=cache)
    results["packed"] = [r for b in batches for r in measure(builder, Runner(), wl, b)]
    seconds["packed"] = time.perf_counter() - start

    start = time.perf_counter()
    results["reflash"] = [r for c in configs for r in measure(builder, Runner(), wl, [c])]
    seconds["reflash"] = time.perf_counter() - start

    costs = {k: [r.cost for r in sorted(v, key=lambda r: r.config.index)]
             for k, v in results.items()}
    best = {k: min((r for r in v if r.ok), key=lambda r: (r.cost, r.config.index)).config.index
            for k, v in results.items()}
    return {"workload": wl.description, "candidates": len(configs), "batch": batch,
            "seconds_per_candidate": {k: v / len(configs) for k, v in seconds.items()},
            "ram_bytes_sent_per_candidate": sent / len(configs),
            "same_costs": costs["ram"] == costs["packed"] == costs["reflash"],
            "same_best": len(set(best.values())) == 1,
            "failed": {k: sum(not r.ok for r in v) for k, v in results.items()}}


def failures(log: Path) -> list[dict]:
    """Every failed trial of ``log``: its workload, status and error."""
    return [{"workload": r.description, "status": r.status, "error": r.error,
             "config": r.config} for r in records.load(log) if r.status != "ok"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--board", default=BOARD,
                        help=f"QEMU board the models are tuned on (default: {BOARD}; the "
                             "flow comparison always uses it)")
    parser.add_argument("--trials", type=int, default=24, help="configs per workload")
    parser.add_argument("--model", action="append", help="only these models")
    parser.add_argument("--flow-candidates", type=int, default=16,
                        help="configs measured in every flow to compare them")
    parser.add_argument("--flow-batch", type=int, default=16,
                        help="candidates per batch in the flow comparison")
    parser.add_argument("--budget", type=float, metavar="SECONDS",
                        help="tune each model with this time budget instead of --trials")
    parser.add_argument("--tuner", action="append", choices=TUNER_NAMES,
                        help="tuners to compare (repeatable; default: evolution)")
    parser.add_argument("--logs", type=Path, metavar="DIR",
                        help="keep the tuning logs here (MODEL-TUNER.jsonl) instead of a "
                             "temporary folder")
    parser.add_argument("--no-flows", action="store_true",
                        help="skip the comparison of the measuring flows")
    parser.add_argument("--flows-only", action="store_true",
                        help="only compare the flows (no model is tuned)")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-tune-") as tmp:
        tmp = Path(tmp)
        cache = tmp / "cache"
        for name in [] if args.flows_only else args.model or MODELS:
            model = MODELS_DIR / f"{name}.tflite"
            before, exact_before = instructions(model, None, tmp, cache, args.board)
            for tuner in args.tuner or ["evolution"]:
                log = (args.logs or tmp) / f"{name}-{tuner}.jsonl"
                log.parent.mkdir(parents=True, exist_ok=True)
                log.unlink(missing_ok=True)
                report = tune_model(model, args.board,
                                    trials=None if args.budget else args.trials,
                                    budget=args.budget, tuner=tuner, log=log,
                                    workdir=tmp / f"work-{name}-{tuner}", cache_dir=cache,
                                    progress=lambda p: print("  " + p.line(), file=sys.stderr))
                tuned, _ = TunedKernels.from_log(log, load_board(args.board).target)
                after, exact_after = instructions(model, tuned, tmp, cache, args.board)
                rows.append({
                    "model": name, "board": args.board, "tuner": tuner,
                    "budget_seconds": args.budget,
                    "instructions_before": before, "instructions_after": after,
                    "ratio": after / before, "bit_exact_before": exact_before,
                    "bit_exact_after": exact_after, "workloads": len(report.workloads),
                    "trials_per_workload": None if args.budget else args.trials,
                    "candidates": report.measured,
                    "failed": sum(w.failed for w in report.workloads),
                    "tuning_seconds": report.seconds,
                    "candidates_per_minute": report.per_minute,
                    "seconds_per_candidate": report.seconds / max(report.measured, 1),
                    "groups_tuned": len(tuned.applied),
                    "failures": failures(log),
                    "best_sketches": sorted({str((w.best_config or {}).get("sketch", "template"))
                                             for w in report.workloads}),
                    "best_per_workload": [
                        {"workload": w.description, "default": w.default_cost,
                         "best": w.best_cost, "config": w.best_config}
                        for w in report.workloads],
                })
                print(f"{name} ({tuner}): {before} -> {after} instructions "
                      f"({after / before:.3f}x), {report.measured} candidates, "
                      f"{report.per_minute:.0f}/min", file=sys.stderr)
                for f in rows[-1]["failures"]:
                    print(f"  failed ({f['status']}): {f['workload']}: {f['error']}",
                          file=sys.stderr)
        flow = None
        if not args.no_flows:
            first = MODELS_DIR / f"{(args.model or MODELS)[0]}.tflite"
            flow = flows(first, args.flow_candidates, args.flow_batch, tmp, cache)
    print("| model | tuner | instructions untuned | tuned | ratio | bit-exact | workloads "
          "| candidates | failed | candidates/min |")
    print("|---|---|---:|---:|---:|---|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['model']} | {r['tuner']} | {r['instructions_before']} | "
              f"{r['instructions_after']} | "
              f"{r['ratio']:.3f} | {r['bit_exact_before'] and r['bit_exact_after']} | "
              f"{r['workloads']} | {r['candidates']} | {r['failed']} | "
              f"{r['candidates_per_minute']:.0f} |")
    if flow is None:
        _write(args.json, args.board, rows, flow)
        return 0
    per = flow["seconds_per_candidate"]
    print(f"\nseconds per candidate, {flow['candidates']} configs of {flow['workload']} in "
          f"batches of {flow['batch']}: loaded into RAM {per['ram']:.3f}, one image per batch "
          f"{per['packed']:.3f}, one image and boot per candidate {per['reflash']:.3f}; "
          f"{flow['ram_bytes_sent_per_candidate']:.0f} bytes loaded per candidate; "
          f"same instruction counts in all three: {flow['same_costs']}, same best config: "
          f"{flow['same_best']}, failed: {flow['failed']}")
    _write(args.json, args.board, rows, flow)
    return 0


def _write(path: Path | None, board: str, rows, flow) -> None:
    if path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"stamp": stamp(), "board": board, "models": rows,
                                    "flows": flow}, indent=2) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
