"""compute_at chains where a stage has several readers (softmax-like).

Rule under test: a stage computed at loop ``iv`` of stage P lives in a
scratch buffer inside that loop, so every reader of the stage must run
inside ``iv``: P itself, or a stage whose chain of attach points reaches P
at ``iv`` or deeper.  Valid schedules must compute what the unscheduled
kernel and numpy compute; invalid ones raise ScheduleError naming the
stage, the axis and the rule (before, the reader outside the loop indexed
the scratch buffer with an undeclared loop variable).

Golden loop nests live in tests/te/golden/; after an intended change
of the printer or the passes, regenerate them with
``python tests/te/test_compute_at_nested.py`` and review the diff.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

import aot
from aot import te
from aot.te import ScheduleError

GOLDEN = Path(__file__).parent / "golden"
ROWS, DEPTH = 6, 8


def softmax3(out_reads_max=True):
    """Row max A, exp-sum B (reads A), output C (reads B, and A if asked)."""
    X = te.placeholder((ROWS, DEPTH), "float32", "X")
    k = te.reduce_axis((0, DEPTH), "k")
    A = te.compute((ROWS,), lambda r: te.max(X[r, k], axis=k), name="row_max")
    k2 = te.reduce_axis((0, DEPTH), "k2")
    B = te.compute((ROWS,), lambda r: te.sum(te.exp(X[r, k2] - A[r]), axis=k2),
                   name="exp_sum")
    if out_reads_max:
        C = te.compute((ROWS, DEPTH), lambda r, i: te.exp(X[r, i] - A[r]) / B[r], name="out")
    else:
        C = te.compute((ROWS, DEPTH), lambda r, i: te.exp(X[r, i]) / B[r], name="out")
    return X, A, B, C


def softmax4(out="max"):
    """Row max, exponentials (read the max), their sum, output: ``out`` says
    what the output reads besides the sum ("max": the max and the
    exponentials, "exps": the exponentials, "sum": nothing else)."""
    X = te.placeholder((ROWS, DEPTH), "float32", "X")
    k = te.reduce_axis((0, DEPTH), "k")
    mx = te.compute((ROWS,), lambda r: te.max(X[r, k], axis=k), name="row_max")
    e = te.compute((ROWS, DEPTH), lambda r, i: te.exp(X[r, i] - mx[r]), name="exps")
    k2 = te.reduce_axis((0, DEPTH), "k2")
    total = te.compute((ROWS,), lambda r: te.sum(e[r, k2], axis=k2), name="exp_sum")
    if out == "max":
        # exp(0) is exactly 1: the same value, read from the max.
        y = te.compute((ROWS, DEPTH), lambda r, i: te.if_then_else(
            X[r, i].equal(mx[r]), 1.0 / total[r], e[r, i] / total[r]), name="y")
    elif out == "exps":
        y = te.compute((ROWS, DEPTH), lambda r, i: e[r, i] / total[r], name="y")
    else:
        y = te.compute((ROWS, DEPTH), lambda r, i: te.exp(X[r, i]) / total[r], name="y")
    return X, mx, e, total, y


def ref_softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def ref_exp_over_shifted_sum(x):
    return np.exp(x) / np.exp(x - x.max(axis=1, keepdims=True)).sum(axis=1, keepdims=True)


def run(s, x, out_tensor, in_tensor):
    out = np.zeros((ROWS, DEPTH), np.float32)
    aot.build(s, [in_tensor, out_tensor], target="c", name="k")(x, out)
    return out


def check(make, schedule, ref):
    """The scheduled kernel matches the unscheduled one and numpy."""
    x = np.random.default_rng(7).standard_normal((ROWS, DEPTH)).astype(np.float32) * 3
    ts = make()
    base = run(te.create_schedule(ts[-1].op), x, ts[-1], ts[0])
    ts = make()
    s = te.create_schedule(ts[-1].op)
    schedule(s, *ts)
    got = run(s, x, ts[-1], ts[0])
    np.testing.assert_allclose(got, base, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got, ref(x), rtol=1e-5, atol=1e-6)


# -- valid schedules: name -> (make, schedule, reference) ----------------------

def max_and_sum_at_output_row(s, X, A, B, C):
    """Both producers at the common consumer's row loop (the valid form of
    the reported schedule): C's own reads of A are inside that loop."""
    s[A].compute_at(s[C], C.op.axis[0])
    s[B].compute_at(s[C], C.op.axis[0])


def max_at_sum_at_output_only_sum_reads_max(s, X, A, B, C):
    """A at B at C is fine when B is A's only reader."""
    s[B].compute_at(s[C], C.op.axis[0])
    s[A].compute_at(s[B], B.op.axis[0])


def max_at_output_row_sum_at_inner_axis(s, X, A, B, C):
    """B (a reader of A) attached at a loop inside A's: still enclosed."""
    s[A].compute_at(s[C], C.op.axis[0])
    s[B].compute_at(s[C], C.op.axis[1])


def split_rows_nested(s, X, A, B, C):
    """A at B at C on a split row axis (6 rows, factor 4: a peeled tail)."""
    ro, ri = s[C].split(C.op.axis[0], factor=4)
    s[B].compute_at(s[C], ri)
    s[A].compute_at(s[B], B.op.axis[0])


def exps_inlined(s, X, mx, e, total, y):
    """The middle stage inlined: the sum and the output both read the max
    directly, and both run inside the output's row loop."""
    s[e].compute_inline()
    s[mx].compute_at(s[y], y.op.axis[0])
    s[total].compute_at(s[y], y.op.axis[0])


def softmax_row_buffers(s, X, mx, e, total, y):
    """Each of the three producers at the output's row loop."""
    row = y.op.axis[0]
    s[mx].compute_at(s[y], row)
    s[e].compute_at(s[y], row)
    s[total].compute_at(s[y], row)


def kernel_library_schedule(s, X, mx, e, total, y):
    """aot/kernels/softmax's schedule: the max at the exponentials' row,
    which is at the output's row; only the exponentials read the max."""
    row = y.op.axis[0]
    s[e].compute_at(s[y], row)
    s[total].compute_at(s[y], row)
    s[mx].compute_at(s[e], e.op.axis[0])


def three_level_chain(s, X, mx, e, total, y):
    """max at exps, exps at exp_sum, exp_sum at y: each read by the next only."""
    s[total].compute_at(s[y], y.op.axis[0])
    s[e].compute_at(s[total], total.op.axis[0])
    s[mx].compute_at(s[e], e.op.axis[0])


VALID = {
    "max_and_sum_at_output_row": (softmax3, max_and_sum_at_output_row, ref_softmax),
    "max_at_sum_at_output": (lambda: softmax3(out_reads_max=False),
                             max_at_sum_at_output_only_sum_reads_max,
                             ref_exp_over_shifted_sum),
    "max_at_output_row_sum_at_inner_axis": (softmax3, max_at_output_row_sum_at_inner_axis,
                                            ref_softmax),
    "split_rows_nested": (lambda: softmax3(out_reads_max=False), split_rows_nested,
                          ref_exp_over_shifted_sum),
    "exps_inlined": (softmax4, exps_inlined, ref_softmax),
    "softmax_row_buffers": (softmax4, softmax_row_buffers, ref_softmax),
    "kernel_library_schedule": (lambda: softmax4("exps"), kernel_library_schedule,
                                ref_softmax),
    "three_level_chain": (lambda: softmax4("sum"), three_level_chain,
                          ref_exp_over_shifted_sum),
}


def printout(name: str) -> str:
    make, schedule, _ = VALID[name]
    ts = make()
    s = te.create_schedule(ts[-1].op)
    schedule(s, *ts)
    return str(aot.lower(s, [ts[0], ts[-1]], name=name)) + "\n"


@pytest.mark.parametrize("name", sorted(VALID))
def test_valid_schedule_matches_unscheduled_and_numpy(name):
    make, schedule, ref = VALID[name]
    check(make, schedule, ref)


@pytest.mark.parametrize("name", sorted(VALID))
def test_golden_loop_nest(name):
    path = GOLDEN / f"{name}.txt"
    assert path.exists(), f"missing {path}: run python {__file__}"
    assert printout(name) == path.read_text()


# -- invalid schedules -------------------------------------------------------------

def test_reader_of_the_attach_stage_consumer_is_rejected():
    """The reported schedule: A at B.r, B at C.r, and C also reads A."""
    X, A, B, C = softmax3()
    s = te.create_schedule(C.op)
    s[B].compute_at(s[C], C.op.axis[0])
    s[A].compute_at(s[B], B.op.axis[0])
    with pytest.raises(ScheduleError, match=(
            r"stage row_max: computed at exp_sum\.r, but its reader out runs outside "
            r"that loop \(a compute_at point must enclose every reader of the stage\); "
            r"attach row_max at a loop that encloses both exp_sum and out")):
        aot.lower(s, [X, C])


def test_reader_attached_at_an_outer_loop_is_rejected():
    """B runs once per row, before A (attached per element) is computed."""
    X, A, B, C = softmax3()
    s = te.create_schedule(C.op)
    s[A].compute_at(s[C], C.op.axis[1])
    s[B].compute_at(s[C], C.op.axis[0])
    with pytest.raises(ScheduleError,
                       match=r"stage row_max: computed at out\.i, but its reader exp_sum runs "
                             r"outside that loop"):
        aot.lower(s, [X, C])


def test_kernel_library_schedule_with_output_reading_max_is_rejected():
    """The schedule of aot/kernels/softmax on an output that reads the max."""
    ts = softmax4("max")
    s = te.create_schedule(ts[-1].op)
    kernel_library_schedule(s, *ts)
    with pytest.raises(ScheduleError,
                       match=r"stage row_max: computed at exps\.r, but its reader y runs"):
        aot.lower(s, [ts[0], ts[-1]])


def test_three_level_chain_with_output_reading_exps_is_rejected():
    ts = softmax4("exps")
    s = te.create_schedule(ts[-1].op)
    three_level_chain(s, *ts)
    with pytest.raises(ScheduleError,
                       match=r"stage exps: computed at exp_sum\.r, but its reader y runs"):
        aot.lower(s, [ts[0], ts[-1]])


def random_placement(rng: random.Random, s, X, mx, e, total, y):
    """Split some loops, then place each producer at the root, inline (the
    exponentials only) or at a random loop of one of its readers."""
    for st in (s[y], s[e], s[total]):
        if rng.random() < 0.5:
            st.split(rng.choice(st.leaf_iter_vars), factor=rng.randint(1, 4))
    if rng.random() < 0.2:
        s[e].compute_inline()
    readers = {total: [y], e: [total, y], mx: [e, total, y]}
    for t in (total, e, mx):
        if s[t].attach_type == "inline" or rng.random() < 0.2:
            continue
        options = [r for r in readers[t] if s[r].attach_type != "inline" and s._reads(s[r], s[t])]
        # Mostly the common consumer, so that valid placements are frequent.
        parent = s[y] if y in options and rng.random() < 0.6 else s[rng.choice(options)]
        s[t].compute_at(parent, rng.choice(parent.leaf_iter_vars))


def test_random_placements_compute_softmax_or_are_rejected_by_the_rule():
    """Every placement lowering accepts computes softmax; every rejection is
    this rule's, and both outcomes occur."""
    x = np.random.default_rng(3).standard_normal((ROWS, DEPTH)).astype(np.float32)
    outcomes = {"ok": 0, "rejected": 0}
    for seed in range(60):
        rng = random.Random(seed)
        ts = softmax4("max")
        s = te.create_schedule(ts[-1].op)
        random_placement(rng, s, *ts)
        try:
            out = run(s, x, ts[-1], ts[0])
        except ScheduleError as err:
            assert "a compute_at point must enclose every reader of the stage" in str(err)
            outcomes["rejected"] += 1
            continue
        np.testing.assert_allclose(out, ref_softmax(x), rtol=1e-5, atol=1e-6,
                                   err_msg=str(aot.lower(s, [ts[0], ts[-1]])))
        outcomes["ok"] += 1
    assert outcomes["ok"] and outcomes["rejected"], outcomes


def test_attach_axis_split_afterwards_is_rejected():
    X, A, B, C = softmax3()
    s = te.create_schedule(C.op)
    s[A].compute_at(s[C], C.op.axis[0])
    s[B].compute_at(s[C], C.op.axis[0])
    s[C].split(C.op.axis[0], factor=2)
    with pytest.raises(ScheduleError, match=r"stage exp_sum: compute_at axis r of out no longer "
                                            r"exists \(it was split or fused afterwards\)"):
        aot.lower(s, [X, C])


if __name__ == "__main__":
    GOLDEN.mkdir(exist_ok=True)
    for example in VALID:
        (GOLDEN / f"{example}.txt").write_text(printout(example))
        print("wrote", GOLDEN / f"{example}.txt")
