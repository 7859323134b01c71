"""Throughput of the board farms: candidates measured per minute with 1, 2, 4 (and 8) boards.

    .venv/bin/python bench/bench_farm.py [--json out/bench_farm.json] [--candidates 32]
                                         [--boards 1,2,4] [--no-ray]
    .venv/bin/python bench/bench_farm.py --sim 2.0 [--sim-candidate 0.05] [--per-board 16]
                                         [--batches 3] [--boards 1,2,4,8] [--no-ray]

With ``--sim SECONDS``, simulated boards (:mod:`aot.tune.farm_sim`): each
image takes SECONDS of wall time and each candidate ``--sim-candidate`` more
while the host sleeps, as flashing and running a real board does, so the
table shows how the farm's scheduling scales rather than this machine's
cores.  Each farm (``local``: :class:`~aot.tune.farm.LocalFarm`, a worker
process per board, also for 1; ``ray``: a local Ray cluster, nodes of two
simulated boards each) measures ``--warm`` batches (workers start, import
aot and extract the model's workloads; the first batch's seconds are
reported), then ``--batches`` timed batches of ``--per-board`` configs per
board (as ``aot tune --batch``: a session's batch grows with the boards).
Reported: candidates per minute,
the speed-up over the same farm with one board, and the head's time per
candidate outside waiting for the boards (``head_seconds``).  It also times
what the head did per candidate before the boards lowered their own chunks
(lowering the batch on the head: ``distinct_candidates``).

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
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from aot.target import load_board  # noqa: E402
from aot.tune.farm import BoardSpec, Flows, LocalFarm, RayFarm, board_resource  # noqa: E402
from aot.tune.farm_sim import SimBoard, sim_cost  # noqa: E402
from aot.tune.measure import Builder, Runner, distinct_candidates, measure  # noqa: E402
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
    from ray.cluster_utils import Cluster

    os.environ.update(RAY_TMPDIR=str(root), TMPDIR=str(root / "work"))
    (root / "ray").mkdir(parents=True)
    (root / "work").mkdir()
    c = Cluster(initialize_head=True, head_node_args=dict(
        num_cpus=1, include_dashboard=False, temp_dir=str(root / "ray")))
    for _ in range(boards // 2):
        # A CPU per board: Ray keeps that many idle workers on a node, so each
        # board's next task finds a worker that already imported aot.
        c.add_node(num_cpus=2, resources={board_resource(BOARD, sim=sim): 2},
                   object_store_memory=80 * 2**20)
    c.wait_for_nodes()
    os.environ["RAY_ADDRESS"] = c.address
    return c


def sim_rows(farm, wl, batches: list[list], warm: int) -> tuple[float, float, float, int]:
    """Seconds of the first batch, seconds of the timed batches (after ``warm``
    warm-up batches), the head's seconds outside waiting during them, and how
    many configs were wrong or failed (a cost that is not the simulated
    board's)."""
    start = time.perf_counter()
    farm.measure(wl, batches[0])
    first = time.perf_counter() - start
    for configs in batches[1:warm]:
        farm.measure(wl, configs)
    head, start = farm.head_seconds, time.perf_counter()
    bad = 0
    for configs in batches[warm:]:
        bad += sum(not r.ok or r.cost != sim_cost(wl.key, r.config)
                   for r in farm.measure(wl, configs))
    return first, time.perf_counter() - start, farm.head_seconds - head, bad


def main_sim(args, counts: list[int]) -> int:
    board = load_board(BOARD)
    _, workloads = extract_workloads(MODELS_DIR / "mlperf_kws_dscnn.tflite", board.target)
    wl = workloads[0]
    sim = SimBoard(args.sim, args.sim_candidate)
    spec = BoardSpec(board, sim=sim)
    space = list(wl.space)
    sample = space[1::len(space) // 16][:16]   # spread over the space
    distinct_candidates(wl, space[:1])         # warm: the lowering's caches
    start = time.perf_counter()
    distinct_candidates(wl, sample)
    lowering = (time.perf_counter() - start) / len(sample)
    rows = []

    def run(farm_name, k, farm):
        n = args.per_board * k
        batches = [space[b * n:(b + 1) * n] for b in range(args.warm + args.batches)]
        first, secs, head, bad = sim_rows(farm, wl, batches, args.warm)
        rows.append((farm_name, k, n * args.batches, first, secs, head, bad))
        print(f"{farm_name} {k}: {secs:.1f} s", flush=True)

    with tempfile.TemporaryDirectory(prefix="bench-farm-", dir="/tmp") as tmp:
        tmp = Path(tmp)
        for k in counts if not args.no_local else ():
            with LocalFarm(spec, k, tmp, tmp, []) as farm:
                run("local", k, farm)
        if not args.no_ray:
            c = ray_cluster(tmp / "r", max(counts) + max(counts) % 2, sim=True)
            try:
                for k in counts:
                    with RayFarm("auto", spec, k, []) as farm:
                        run("ray", k, farm)
            finally:
                c.shutdown()
    print(f"\nsimulated boards: {sim.image_seconds:g} s per image, {sim.candidate_seconds:g} s "
          f"per candidate, {args.per_board} candidates per board and batch, {args.batches} "
          f"batches timed after {args.warm}; {wl.description}; load average "
          f"{os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores")
    print(f"lowering on the head (before): {1000 * lowering:.1f} ms per candidate\n")
    print("| farm | boards | first batch s | candidates | seconds | candidates/min | speed-up | "
          "head ms/candidate | wrong or failed |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    out, one = [], {}
    for farm, k, n, first, secs, head, bad in rows:
        rate = 60 * n / secs
        one.setdefault(farm, rate)
        print(f"| {farm} | {k} | {first:.1f} | {n} | {secs:.1f} | {rate:.0f} | "
              f"{rate / one[farm]:.2f}x | {1000 * head / n:.2f} | {bad} |")
        out.append({"farm": farm, "boards": k, "first_batch_seconds": first,
                    "candidates": n, "seconds": secs,
                    "per_minute": rate, "speedup": rate / one[farm],
                    "head_seconds_per_candidate": head / n, "bad": bad})
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({
            "workload": wl.description, "image_seconds": sim.image_seconds,
            "candidate_seconds": sim.candidate_seconds, "per_board": args.per_board,
            "batches": args.batches, "head_lowering_seconds_per_candidate": lowering,
            "rows": out}, indent=2))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write the results here")
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
    parser.add_argument("--batches", type=int, default=3, help="with --sim: timed batches")
    parser.add_argument("--warm", type=int, default=2,
                        help="with --sim: batches before the timed ones (workers start)")
    args = parser.parse_args()
    counts = [int(n) for n in args.boards.split(",")]
    if args.sim is not None:
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
