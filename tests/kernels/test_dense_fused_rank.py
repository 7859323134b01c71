"""dense with keep_num_dims over rank-3/4 inputs and an elementwise epilogue fused after it.

Issue 34: the dense compute rule works on rows ``[rows, units]`` while its
node's output is ``[d0, ..., units]``; the fused add read that value with
NumPy broadcasting, so for input ``[4, 1, 8]`` every row was row 0.  The
group context now hands later rules a row-major view of the output shape
(``aot.kernels.group.row_major_view``).  Each case lowers the fused group,
runs it (host gcc, ASan + UBSan) and compares it bit for bit with the
reference interpreter; the TFLite model of the report (FULLY_CONNECTED with
keep_num_dims, then ADD) runs bit-exact with TFLM on the host build and the
LLVM JIT (on QEMU: tests/firmware/test_dense_keep_dims_qemu.py).
"""

from __future__ import annotations

import numpy as np
import pytest
from graphs import Q, weights_int8
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kernel_checks import check_graph, seeded_inputs
from support.dense_models import dense_keep_dims_add, int8_inputs
from support.parity import assert_matches_tflm

from aot.commands.run import run_on_host
from aot.compile import compile_model

from aot import te
from aot.ir import GraphBuilder, TensorType
from aot.kernels.group import row_major_view
from aot.kernels.kernel import KernelError

M4 = "c -keys=arm_cpu,cpu -mcpu=cortex-m4"


def dense_then(op, lead, *, depth=8, units=5, other="full", activation="none", seed=0):
    """x[*lead, depth] -> dense(keep_num_dims) -> op(., other) (int8 throughout);
    ``other`` is the second operand's shape: the output's (``full``), one
    value per unit (``units``) or one per leading row (``rows``)."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder("dense_epilogue")
    x = b.input("x", (*lead, depth), "int8", Q(0.05, 4))
    w = b.constant("w", weights_int8(rng, (units, depth)), quant=Q(0.02, 0))
    bt = b.constant("b", rng.integers(-3000, 3000, units).astype(np.int32),
                    quant=Q(float(np.float32(0.05) * np.float32(0.02)), 0))
    shape = (*lead, units)
    y = b.op("dense", [x, w, bt], activation=activation, keep_num_dims=True,
             out_type=TensorType(shape, "int8", Q(0.07, -6)))
    rshape = {"full": shape, "units": (units,), "rows": (*lead, 1)}[other]
    r = b.input("r", rshape, "int8", Q(0.06, -7))
    y = b.op(op, [y, r], out_type=TensorType(shape, "int8", Q(0.1, 2)))
    return b.build([y])


def _fused(kernels):
    fused = [k for k in kernels if len(k.op_names) > 1]
    assert fused and fused[0].op_names[0] == "dense", [k.op_names for k in kernels]


def test_reported_case_4x1x8_add():
    """The reported shape: every row but the first was wrong before the fix."""
    g = dense_then("add", (4, 1))
    _fused(check_graph(g, seeded_inputs(g, 1), cross=False))


@pytest.mark.parametrize("target", ["c", M4])
@pytest.mark.parametrize("lead, op, other", [((2, 3), "add", "full"), ((2, 1, 3), "mul", "rows"),
                                             ((3, 2), "sub", "units")])
def test_dense_epilogue_fixed_shapes(target, lead, op, other):
    """A few rank-3/4 shapes of the property below, in the fast run."""
    g = dense_then(op, lead, other=other, seed=2)
    _fused(check_graph(g, seeded_inputs(g, 2), cross=False, target=target))


@pytest.mark.slow
@pytest.mark.parametrize("target", ["c", M4])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lead=st.lists(st.integers(1, 3), min_size=2, max_size=3),
       depth=st.integers(1, 20), units=st.integers(1, 9),
       op=st.sampled_from(["add", "sub", "mul"]),
       other=st.sampled_from(["full", "units", "rows"]),
       activation=st.sampled_from(["none", "relu"]), seed=st.integers(0, 1000))
def test_dense_epilogue_any_rank(target, lead, depth, units, op, other, activation, seed):
    """Rank-3/4 dense (keep_num_dims) with a fused int8 add/sub/mul, on the
    generic and the Cortex-M4 schedules, equals the reference."""
    g = dense_then(op, tuple(lead), depth=depth, units=units, other=other,
                   activation=activation, seed=seed)
    _fused(check_graph(g, seeded_inputs(g, seed), cross=False, target=target))


def test_row_major_view_is_identity_on_same_shape():
    t = te.placeholder((4, 5), "int8", name="t")
    assert row_major_view(t, (4, 5)) is t


def test_row_major_view_refuses_other_size():
    t = te.placeholder((4, 5), "int8", name="t")
    with pytest.raises(KernelError, match=r"\[4, 5\] cannot be viewed as \[3, 5\]"):
        row_major_view(t, (3, 5))


@pytest.mark.parametrize("lead, residual", [((4, 1), None), ((2, 3), None),
                                            ((2, 3), (1, 1, 5))])
@pytest.mark.one_fast
def test_keras_dense_then_add_matches_tflm_on_host_and_llvm(lead, residual, tflm, tmp_path):  # noqa: F811
    """FULLY_CONNECTED(keep_num_dims) + ADD as TFLite gives it: the reference and
    the host build equal TFLM, and the LLVM JIT equals them too."""
    rng = np.random.default_rng(5)
    model = dense_keep_dims_add(rng, lead, residual=residual)
    xs = int8_inputs(rng, [(*lead, 8), residual or (*lead, 5)])
    want = assert_matches_tflm(tflm, model, xs, tmp_path)
    compiled = compile_model(tmp_path / "m.tflite", "llvm", name="m", measure_code=False)
    assert compiled.is_jit
    got = run_on_host(compiled, [x[None] for x in xs], workdir=tmp_path)[0][0]
    np.testing.assert_array_equal(got, want)
