"""RPC throughput and latency, and the fixture model's instruction count per board.

    .venv/bin/python bench/bench_rpc.py [--json out/bench_rpc.json] [--quick]

Links measured: the host port over a loopback socket (the host runner) and the
QEMU serial link of qemu/mps2-an386 (qemu runner, -icount).  For each: mean
call latency of an empty ECHO, and bulk write/read rates of a 4 KiB tensor in
frames of the device's maximum size.  Then the fixture model (1024 int8 MACs)
runs on every emulated board and reports instructions per inference, exact
under -icount.  Prints a table and writes JSON.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from aot.rpc import connect  # noqa: E402
from flash.host import HostConfig, HostRunner  # noqa: E402
from flash.qemu import QemuConfig, QemuRunner  # noqa: E402

SCRATCH = 4096


def _fixture():
    path = ROOT / "tests" / "runtime_c" / "fixture" / "firmware.py"
    spec = importlib.util.spec_from_file_location("fixture_firmware", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def measure_link(url: str, calls: int, rounds: int) -> dict:
    with connect(url, timeout=5) as client:
        client.info()
        start = time.perf_counter()
        for _ in range(calls):
            client.echo(b"")
        latency = (time.perf_counter() - start) / calls
        data = np.arange(SCRATCH, dtype=np.uint8).reshape(SCRATCH) * 7
        start = time.perf_counter()
        for _ in range(rounds):
            client.write_tensor("scratch", data)
        write = SCRATCH * rounds / (time.perf_counter() - start)
        start = time.perf_counter()
        for _ in range(rounds):
            back = client.read_tensor("scratch")
        read = SCRATCH * rounds / (time.perf_counter() - start)
        assert np.array_equal(back, data)
        return {"latency_us": latency * 1e6, "write_Bps": write, "read_Bps": read,
                "max_frame": client.info().max_frame, "retries": client.session.stats.retries}


def instructions_per_run(fw, tag: str, build_dir: Path) -> dict:
    board = fw.BOARDS[tag]
    if not fw.have(board.cc, board.qemu):
        return {"skipped": f"needs {board.cc} and {board.qemu}"}
    elf = fw.build_board(build_dir, tag)
    x = np.random.default_rng(0).integers(-128, 128, (1, 64), dtype=np.int8)
    with QemuRunner(QemuConfig(elf=elf, machine=board.machine, qemu=board.qemu)) as url:
        with connect(url, timeout=5) as client:
            client.write_tensor("input", x)
            runs = client.run(5).timings
            exact = bool(np.array_equal(client.read_tensor("output"), fw.reference(x)[1]))
            kernels = {k: client.run(1, k).timings[0] for k in ("dense", "requant")}
    return {"instructions": runs[0], "all_runs_equal": len(set(runs)) == 1,
            "bit_exact": exact, "kernels": kernels}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=ROOT / "out" / "bench_rpc.json")
    parser.add_argument("--quick", action="store_true", help="fewer calls (smoke run)")
    args = parser.parse_args()
    calls, rounds = (20, 2) if args.quick else (300, 10)
    fw = _fixture()
    report: dict = {"links": {}, "boards": {}}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        host_fw = fw.build(tmp / "host", extra_cflags=f"-DAOT_FIXTURE_SCRATCH={SCRATCH}")
        with HostRunner(HostConfig(executable=host_fw)) as url:
            report["links"]["host (loopback TCP)"] = measure_link(url, calls, rounds)
        tag = "qemu/mps2-an386"
        elf = fw.build_board(tmp / "an386", tag, extra_cflags=f"-DAOT_FIXTURE_SCRATCH={SCRATCH}")
        with QemuRunner(QemuConfig(elf=elf, machine="mps2-an386")) as url:
            report["links"][f"{tag} (QEMU serial)"] = measure_link(url, calls, rounds)
        for tag in fw.BOARDS:
            report["boards"][tag] = instructions_per_run(fw, tag, tmp / tag.replace("/", "_"))

    print(f"{'link':32} {'latency us':>11} {'write B/s':>11} {'read B/s':>11} {'retries':>8}")
    for name, r in report["links"].items():
        print(f"{name:32} {r['latency_us']:11.0f} {r['write_Bps']:11.0f} {r['read_Bps']:11.0f} "
              f"{r['retries']:8}")
    print()
    print(f"{'board':18} {'instr/inference':>16} {'dense':>8} {'requant':>8} {'bit-exact':>10}")
    for tag, r in report["boards"].items():
        if "skipped" in r:
            print(f"{tag:18} skipped: {r['skipped']}")
            continue
        print(f"{tag:18} {r['instructions']:16} {r['kernels']['dense']:8} "
              f"{r['kernels']['requant']:8} {str(r['bit_exact']):>10}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
