"""Throughput of the board farms: candidates measured per minute with 1, 2 and 4 QEMU boards.

    .venv/bin/python bench/bench_farm.py [--json out/bench_farm.json] [--candidates 32]
                                         [--boards 1,2,4] [--no-ray]

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


def ray_cluster(root: Path, boards: int):
    from ray.cluster_utils import Cluster

    os.environ.update(RAY_TMPDIR=str(root), TMPDIR=str(root / "work"))
    (root / "ray").mkdir(parents=True)
    (root / "work").mkdir()
    c = Cluster(initialize_head=True, head_node_args=dict(
        num_cpus=1, include_dashboard=False, temp_dir=str(root / "ray")))
    for _ in range(boards // 2):
        c.add_node(num_cpus=1, resources={board_resource(BOARD): 2})
    c.wait_for_nodes()
    os.environ["RAY_ADDRESS"] = c.address
    return c


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--candidates", type=int, default=32, help="configs in the timed batch")
    parser.add_argument("--boards", default="1,2,4", help="board counts (comma-separated)")
    parser.add_argument("--no-ray", action="store_true", help="skip the Ray farm")
    args = parser.parse_args()
    counts = [int(n) for n in args.boards.split(",")]
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
