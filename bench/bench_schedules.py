"""Schedules on the host: naive vs tiled+vectorized kernels, and compile time.

Prints a table and writes JSON (``--out``).  Each speedup is a ratio of two
kernels timed in the same run (median of ``--repeat`` calls through the
host-compiled module), so machine speed cancels out.  The compile time is
the time to lower and generate C for a realistic int8 conv2d (a keyword
spotting layer: 49x10x64 input, 3x3 kernel, 64 output channels).

    .venv/bin/python bench/bench_schedules.py [--repeat 20] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

import aot
from aot import te


def matmul(n, schedule):
    A = te.placeholder((n, n), "float32", "A")
    B = te.placeholder((n, n), "float32", "B")
    k = te.reduce_axis((0, n), "k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    s = te.create_schedule(C.op)
    if schedule:
        # Blocked: an 8x64 block of C accumulates in scratch, k outside the
        # vectorized j so B's rows stream contiguously.
        CL = s.cache_write(C, "local")
        io, jo, ii, ji = s[C].tile(C.op.axis[0], C.op.axis[1], 8, 64)
        s[CL].compute_at(s[C], jo)
        ci, cj = s[CL].op.axis
        (ck,) = s[CL].op.reduce_axis
        s[CL].reorder(ck, ci, cj)
        s[CL].vectorize(cj)
        s[C].vectorize(ji)
    return s, [A, B, C]


def conv2d(H, W, CI, CO, schedule, KH=3, KW=3, pad=1, in_zp=-3, w_zp=2):
    data = te.placeholder((1, H, W, CI), "int8", "data")
    kernel = te.placeholder((KH, KW, CI, CO), "int8", "kernel")
    padded = te.compute(
        (1, H + 2 * pad, W + 2 * pad, CI),
        lambda n, h, w, c: te.if_then_else(
            te.all(h >= pad, h < H + pad, w >= pad, w < W + pad),
            data[n, h - pad, w - pad, c], te.const(in_zp, "int8")),
        name="pad")
    kh = te.reduce_axis((0, KH), "kh")
    kw = te.reduce_axis((0, KW), "kw")
    rc = te.reduce_axis((0, CI), "rc")
    conv = te.compute(
        (1, H, W, CO),
        lambda n, h, w, co: te.sum(
            (padded[n, h + kh, w + kw, rc].astype("int32") - in_zp)
            * (kernel[kh, kw, rc, co].astype("int32") - w_zp), axis=[kh, kw, rc]),
        name="conv")
    s = te.create_schedule(conv.op)
    if schedule:
        # A 2 (w) x 16 (co) output tile accumulates in scratch with the
        # reduction outside it; padding is inlined as a select on the input.
        local = s.cache_write(conv, "local")
        n, h, w, co = conv.op.axis
        wo, wi = s[conv].split(w, factor=2)
        coo, coi = s[conv].split(co, factor=16)
        s[conv].reorder(n, h, wo, coo, wi, coi)
        s[conv].vectorize(coi)
        s[local].compute_at(s[conv], coo)
        ln, lh, lw, lc = s[local].op.axis
        lkh, lkw, lrc = s[local].op.reduce_axis
        s[local].reorder(ln, lh, lkh, lkw, lrc, lw, lc)
        s[local].vectorize(lc)
        s[local].unroll(lw)
        s[padded].compute_inline()
    return s, [data, kernel, conv]


def random_inputs(args, rng):
    out = []
    for t in args:
        shape = [int(d.value) for d in t.shape]
        if t.dtype == "float32":
            out.append(rng.standard_normal(shape).astype(np.float32))
        else:
            out.append(rng.integers(-128, 128, shape).astype(t.dtype))
    return out


def time_kernel(mod, arrays, repeat):
    mod(*arrays)  # warm up (and load the shared object)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        mod(*arrays)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def compare(name, make, repeat, rng):
    results = {}
    outputs = {}
    s0, args0 = make(False)
    arrays = random_inputs(args0[:-1], rng)
    for label, scheduled in (("naive", False), ("scheduled", True)):
        s, args = make(scheduled)
        mod = aot.build(s, args, name=name)
        out = np.zeros([int(d.value) for d in args[-1].shape], args[-1].dtype)
        results[label] = time_kernel(mod, arrays + [out], repeat)
        outputs[label] = out.copy()
    np.testing.assert_allclose(outputs["naive"], outputs["scheduled"], rtol=1e-4, atol=1e-3)
    return {"naive_s": results["naive"], "scheduled_s": results["scheduled"],
            "speedup": results["naive"] / results["scheduled"]}


def compile_time(repeat=5):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        s, args = conv2d(49, 10, 64, 64, True)
        func = aot.lower(s, args, name="conv2d")
        t1 = time.perf_counter()
        aot.build(func)
        t2 = time.perf_counter()
        times.append((t1 - t0, t2 - t1))
    lower = statistics.median(t[0] for t in times)
    codegen = statistics.median(t[1] for t in times)
    return {"lower_s": lower, "codegen_s": codegen, "total_s": lower + codegen}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--out", default=None, help="write the results as JSON here")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    report = {
        "matmul_f32_512": compare("matmul", lambda sch: matmul(512, sch), args.repeat, rng),
        "conv2d_int8_nhwc_49x10x64_3x3x64": compare(
            "conv2d", lambda sch: conv2d(49, 10, 64, 64, sch), args.repeat, rng),
        "compile_conv2d_int8_49x10x64_3x3x64": compile_time(),
    }
    print(f"{'kernel':40s} {'naive ms':>10s} {'sched ms':>10s} {'speedup':>8s}")
    for key, r in report.items():
        if "speedup" in r:
            print(f"{key:40s} {r['naive_s'] * 1e3:10.3f} {r['scheduled_s'] * 1e3:10.3f} "
                  f"{r['speedup']:8.2f}")
    c = report["compile_conv2d_int8_49x10x64_3x3x64"]
    print(f"lower + C codegen of the int8 conv2d: {c['total_s'] * 1e3:.1f} ms "
          f"(lower {c['lower_s'] * 1e3:.1f} ms, codegen {c['codegen_s'] * 1e3:.1f} ms)")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
