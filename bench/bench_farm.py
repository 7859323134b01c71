"""Throughput of the board farms: candidates measured per minute with 1, 2, 4 (and 8) boards.

    .venv/bin/python bench/bench_farm.py [--json out/bench_farm_qemu.json] [--candidates 32]
                                         [--boards 1,2,4] [--no-ray]
    .venv/bin/python bench/bench_farm.py --sim 2.0 [--sim-candidate 0.05] [--per-board 16]
                                         [--budget 60] [--boards 1,2,4,8] [--no-ray]
                                         [--json out/bench_farm.json]

With ``--sim SECONDS``: whole ``aot tune`` sessions (:func:`aot.tune.session.tune_model`
with its evolution tuner, task scheduler, farm and log) of kws's four workloads on
simulated boards (:mod:`aot.tune.farm_sim`).  A simulated board takes SECONDS of
wall time per image and ``--sim-candidate`` more per candidate while the host
sleeps, as flashing and running a real board does, and builds nothing: it
measures a fixed, pre-built candidate set, so the table shows how the farm and
the session scale, not this machine's two cores.  Each session has the same
``--budget`` and ``--per-board`` configs per board in a batch (``aot tune
--batch``); ``local`` is ``--farm local`` (one board: in the head's process; more:
a worker process per board), ``ray`` a local Ray cluster of that many boards
(Ray's multi-node test cluster: a head without boards, nodes of two simulated
boards and two CPUs), started for each session.
Reported per session: candidates measured per minute over the whole session
and in the steady state (after the scheduler's warm-up, which measures each
workload's default config alone and then one batch of each), the speed-up over
the same farm with one board, and the head's CPU time per candidate in the
steady state (the head process: tuner, scheduler, farm, records; Ray's driver
threads).

What a real farm's boards also need is built somewhere: the bench times it on
this machine (``build``: lowering and compiling one board's batch image of
``--per-board`` candidates with a warm object cache, wall and CPU), which
bounds how many candidates a local farm whose host builds for every board can
measure per minute.

Last (``fault``), a Ray cluster of two nodes of two simulated boards runs a
session and one node is killed one second into the second batch after the
warm-up: its chunks are measured again on the other node; the line says how
many candidates were measured, how many records failed or repeated a config,
and the rate of the batch before the kill and from the kill to the end.

Writes JSON (stamped: bench/stamp.py) that bench/report.py renders into
docs/numbers.md ("Tuning farm").

Without ``--sim``, QEMU boards:

On qemu/mps2-an386, the same ``--candidates`` configs of kws's first
convolution (``conv2d 1x49x10x1 * 64x10x4x1``), one batch, 1 repeat:

* ``local``: :class:`aot.tune.farm.LocalFarm` with N boards (a process per
  board, each building its chunk's image and booting its own QEMU);
* ``ray``: :class:`aot.tune.farm.RayFarm` with N boards on a local Ray
  cluster (Ray's multi-node test cluster: nodes of two boards each);
* ``reflash``: one board, one image built and booted per candidate (the
  flow without batching, what microTVM did).

Each farm first measures another batch of the same size (workers start,
extract the model's workloads, fill the object cache), then the timed one.
Every farm must give the instruction counts of the one-board batch
(``same_costs``).  Prints a markdown table and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from stamp import describe, stamp  # noqa: E402

from aot.target import load_board  # noqa: E402
from aot.tune import records as rec  # noqa: E402
from aot.tune.farm import BoardSpec, Flows, LocalFarm, RayFarm, board_resource  # noqa: E402
from aot.tune.farm_sim import SimBoard  # noqa: E402
from aot.tune.measure import Builder, Runner, distinct_candidates, measure  # noqa: E402
from aot.tune.records import SIMULATED  # noqa: E402
from aot.tune.session import tune_model  # noqa: E402
from aot.tune.workload import extract_workloads  # noqa: E402

MODELS_DIR = ROOT.parent / "shared" / "models"
BOARD = "qemu/mps2-an386"


def timed(farm, wl, warm, configs) -> tuple[float, dict]:
    farm.measure(wl, warm)
    start = time.perf_counter()
    results = farm.measure(wl, configs)
    secs = time.perf_counter() - start
    return secs, {r.config.index: (r.status, r.cost) for r in results}


def ray_cluster(root: Path, boards: int, sim: bool = False):
    """A local Ray cluster (Ray's multi-node test cluster) in ``root``: a head
    without boards and nodes of two boards (one of one when ``boards`` is odd)."""
    from ray.cluster_utils import Cluster

    os.environ.update(RAY_TMPDIR=str(root), TMPDIR=str(root / "work"))
    (root / "ray").mkdir(parents=True)
    (root / "work").mkdir()
    c = Cluster(initialize_head=True, head_node_args=dict(
        num_cpus=1, include_dashboard=False, temp_dir=str(root / "ray")))
    for n in [2] * (boards // 2) + [1] * (boards % 2):
        # A CPU per board: Ray keeps that many idle workers on a node, so each
        # board's next task finds a worker that already imported aot.
        c.add_node(num_cpus=n, resources={board_resource(BOARD, sim=sim): n},
                   object_store_memory=80 * 2**20)
    c.wait_for_nodes()
    os.environ["RAY_ADDRESS"] = c.address
    return c


def build_cost(wl, per_board: int, tmp: Path) -> dict:
    """Lowering and compiling one board's batch image of ``per_board`` candidates
    on this machine (a warm object cache: a first image fills it): what a local
    farm's host does per image for each of its boards."""
    board = load_board(BOARD)
    builder = Builder(board, tmp / "build", cache_dir=tmp / "cache")
    space = list(wl.space)
    builder.build(wl, builder.candidates(wl, space[:per_board])[0])
    configs = space[1::len(space) // per_board][:per_board]
    cpu, wall = os.times(), time.perf_counter()
    candidates, failed = builder.candidates(wl, configs)
    lowered, lower_wall = os.times(), time.perf_counter()
    batch = builder.build(wl, candidates)
    built, end = os.times(), time.perf_counter()

    def used(a, b):
        return sum(getattr(b, f) - getattr(a, f) for f in
                   ("user", "system", "children_user", "children_system"))
    return {"candidates": len(configs), "distinct": len(candidates), "failed": len(failed),
            "built": not batch.build_error,
            "lower_seconds": lower_wall - wall, "lower_cpu_seconds": used(cpu, lowered),
            "compile_seconds": end - lower_wall, "compile_cpu_seconds": used(lowered, built)}


def session(farm: str, boards: int, sim: SimBoard, args, log: Path) -> dict:
    """One budgeted tune_model session of kws on ``boards`` simulated boards;
    its figures (see the module docstring)."""
    model = MODELS_DIR / "mlperf_kws_dscnn.tflite"
    trials: dict[str, int] = {}
    marks: list[tuple[float, float, int]] = []   # after each batch: wall, head CPU, measured

    def progress(p):
        trials[p.workload] = p.trial
        marks.append((time.perf_counter(), time.process_time(), sum(trials.values())))
    start = time.perf_counter()
    report = tune_model(model, BOARD, budget=args.budget, log=log, batch_size=args.per_board,
                        farm=farm, boards=boards, sim=sim, progress=progress)
    end, cpu_end = time.perf_counter(), time.process_time()
    warm = 2 * len(report.workloads) - 1   # each task's first configs, then a batch each
    t_warm, cpu_warm, n_warm = marks[warm]
    records = rec.load(log)
    steady = report.measured - n_warm
    return {"farm": farm, "boards": report.boards, "candidates": report.measured,
            "seconds": report.seconds, "per_minute": report.per_minute,
            "session_seconds": end - start,
            "warmup_seconds": t_warm - start, "steady_candidates": steady,
            "steady_seconds": end - t_warm, "steady_per_minute": 60 * steady / (end - t_warm),
            "head_cpu_seconds_per_candidate": (cpu_end - cpu_warm) / steady,
            "batches": len(marks),
            "bad": sum(r.status != "ok" or r.unit != SIMULATED for r in records)}


def fault(sim: SimBoard, args, root: Path) -> dict:
    """A session on a Ray cluster of two nodes of two simulated boards; one node
    is killed one second into the second batch after the warm-up."""
    c = ray_cluster(root, 4, sim=True)
    doomed = c.list_all_nodes()[-1]
    log = root / "fault.jsonl"
    marks: list[tuple[float, int]] = []
    trials: dict[str, int] = {}
    killed: dict[str, float] = {}
    warm = 2 * 4 - 1

    def kill():
        time.sleep(1.0)
        killed["at"] = time.perf_counter()
        killed["measured"] = sum(trials.values())
        c.remove_node(doomed, allow_graceful=False)

    def progress(p):
        trials[p.workload] = p.trial
        marks.append((time.perf_counter(), sum(trials.values())))
        if len(marks) == warm + 2:
            threading.Thread(target=kill, daemon=True).start()
    try:
        start = time.perf_counter()
        report = tune_model(MODELS_DIR / "mlperf_kws_dscnn.tflite", BOARD, budget=args.budget,
                            log=log, batch_size=args.per_board, farm="ray", sim=sim,
                            progress=progress)
        end = time.perf_counter()
    finally:
        c.shutdown()
    if "at" not in killed:
        raise SystemExit(f"bench_farm: the fault session ended before its node was killed: "
                         f"give a --budget longer than {args.budget:g} s")
    records = rec.load(log)
    keys = [(r.workload, json.dumps(r.config, sort_keys=True)) for r in records]
    (t0, n0), (t1, n1) = marks[warm], marks[warm + 1]
    return {"boards": report.boards, "boards_after": report.boards - 2,
            "killed_after_seconds": killed["at"] - start, "candidates": report.measured,
            "seconds": end - start, "failed": sum(r.status != "ok" for r in records),
            "repeated": len(keys) - len(set(keys)), "records": len(records),
            "per_minute_before": 60 * (n1 - n0) / (t1 - t0),
            "per_minute_after": 60 * (report.measured - killed["measured"])
                                / (end - killed["at"])}


def main_sim(args, counts: list[int]) -> int:
    started = stamp()
    board = load_board(BOARD)
    _, workloads = extract_workloads(MODELS_DIR / "mlperf_kws_dscnn.tflite", board.target)
    sim = SimBoard(args.sim, args.sim_candidate)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-farm-", dir="/tmp") as tmp:
        tmp = Path(tmp)
        build = build_cost(workloads[0], args.per_board, tmp)
        print(f"build: {build}", flush=True)
        farms = ([] if args.no_local else ["local"]) + ([] if args.no_ray else ["ray"])
        for farm in farms:
            for k in counts:
                # Ray: a cluster of exactly k boards.  In a larger one Ray spreads the
                # chunks over every node, and each board it has not used yet starts a
                # worker (import aot, extract the model) in the middle of the session.
                c = ray_cluster(tmp / f"r{k}", k, sim=True) if farm == "ray" else None
                try:
                    rows.append(session(farm, k, sim, args, tmp / f"{farm}{k}.jsonl"))
                finally:
                    if c is not None:
                        c.shutdown()
                print(f"{farm} {k}: {rows[-1]}", flush=True)
        failure = None if args.no_ray else fault(sim, args, tmp / "fault")
        print(f"fault: {failure}", flush=True)
    one = {}
    for r in rows:
        base = one.setdefault(r["farm"], r)
        r["speedup"] = r["per_minute"] / base["per_minute"]
        r["steady_speedup"] = r["steady_per_minute"] / base["steady_per_minute"]
    doc = {"stamp": started, "load_after": [round(v, 2) for v in os.getloadavg()],
           "board": BOARD, "model": "mlperf_kws_dscnn", "tuner": "evolution",
           "workloads": len(workloads), "image_seconds": sim.image_seconds,
           "candidate_seconds": sim.candidate_seconds, "per_board": args.per_board,
           "budget": args.budget, "build": build, "rows": rows, "fault": failure}
    print(f"\n{describe(started)}")
    print("| farm | boards | candidates | candidates/min | speed-up | steady candidates/min | "
          "steady speed-up | head CPU ms/candidate | wrong or failed |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['farm']} | {r['boards']} | {r['candidates']} | {r['per_minute']:.0f} | "
              f"{r['speedup']:.2f}x | {r['steady_per_minute']:.0f} | {r['steady_speedup']:.2f}x "
              f"| {1000 * r['head_cpu_seconds_per_candidate']:.2f} | {r['bad']} |")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(doc, indent=2) + "\n")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path,
                        help="write the results here (with --sim: out/bench_farm.json)")
    parser.add_argument("--candidates", type=int, default=32, help="configs in the timed batch")
    parser.add_argument("--boards", default="1,2,4", help="board counts (comma-separated)")
    parser.add_argument("--no-ray", action="store_true", help="skip the Ray farm")
    parser.add_argument("--no-local", action="store_true",
                        help="with --sim: skip the local farm")
    parser.add_argument("--sim", type=float, metavar="SECONDS",
                        help="simulated boards taking SECONDS per image (aot.tune.farm_sim)")
    parser.add_argument("--sim-candidate", type=float, default=0.0, metavar="SECONDS",
                        help="with --sim: seconds per candidate on top of the image's")
    parser.add_argument("--per-board", type=int, default=16,
                        help="with --sim: configs per board in each batch")
    parser.add_argument("--budget", type=float, default=60.0,
                        help="with --sim: seconds of each session (aot tune --budget)")
    args = parser.parse_args()
    counts = [int(n) for n in args.boards.split(",")]
    if args.sim is not None:
        args.json = args.json or ROOT / "out" / "bench_farm.json"
        return main_sim(args, counts)
    board = load_board(BOARD)
    _, workloads = extract_workloads(MODELS_DIR / "mlperf_kws_dscnn.tflite", board.target)
    wl = workloads[0]
    n = args.candidates
    space = list(wl.space)
    warm, configs = space[:n], space[n:2 * n]
    spec = BoardSpec(board, repeats=1)
    rows = {}
    with tempfile.TemporaryDirectory(prefix="bench-farm-", dir="/tmp") as tmp:
        tmp = Path(tmp)
        cache = tmp / "cache"
        with Flows.from_spec(spec, tmp / "one", cache, []) as one:
            secs, want = timed(one, wl, warm, configs)
        rows[("local", 1)] = (secs, want)
        print(f"local 1: {secs:.1f} s", flush=True)
        start = time.perf_counter()
        builder = Builder(board, tmp / "reflash", cache_dir=cache)
        reflash = {r.config.index: (r.status, r.cost) for c in configs
                   for r in measure(builder, Runner(repeats=1), wl, [c])}
        rows[("reflash", 1)] = (time.perf_counter() - start, reflash)
        print(f"reflash 1: {rows[('reflash', 1)][0]:.1f} s", flush=True)
        for k in counts:
            if k > 1:
                with LocalFarm(spec, k, tmp / f"pool{k}", cache, []) as farm:
                    rows[("local", k)] = timed(farm, wl, warm, configs)
                print(f"local {k}: {rows[('local', k)][0]:.1f} s", flush=True)
        if not args.no_ray:
            c = ray_cluster(tmp / "r", max(counts) + max(counts) % 2)
            try:
                for k in counts:
                    with RayFarm("auto", spec, k, []) as farm:
                        rows[("ray", k)] = timed(farm, wl, warm, configs)
                    print(f"ray {k}: {rows[('ray', k)][0]:.1f} s", flush=True)
            finally:
                c.shutdown()
    out = []
    distinct = len(distinct_candidates(wl, configs)[0])
    print(f"{wl.description}: {n} candidates ({distinct} distinct kernels), 1 repeat; load "
          f"average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n")
    print("| farm | boards | seconds | candidates/min | same costs | failed |")
    print("|---|---:|---:|---:|---|---:|")
    for (farm, k), (secs, got) in rows.items():
        same = got == want
        failed = sum(s != "ok" for s, _ in got.values())
        print(f"| {farm} | {k} | {secs:.1f} | {60 * n / secs:.0f} | {same} | {failed} |")
        out.append({"farm": farm, "boards": k, "seconds": secs,
                    "per_minute": 60 * n / secs, "same_costs": same, "failed": failed})
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"workload": wl.description, "candidates": n,
                                         "distinct_kernels": distinct, "rows": out}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
