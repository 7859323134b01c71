"""Whole shared models: the reference interpreter equals TFLM bit for bit.

Each model runs its sample inputs (when the shared folder has them) and
seeded random inputs, as one sequence from a fresh state on both sides, so
stateful models (SVDF, LSTM) are compared over several invocations.  Float
models agree within 1e-5 relative.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.models import MODELS, MODELS_DIR, model_sequence

from aot.frontend import load_model
from aot.reference import Session, supported_ops

TFLITE = [m for m in MODELS if m["file"].endswith(".tflite")]


def _params():
    supported = supported_ops()
    params = []
    for entry in TFLITE:
        graph = load_model(MODELS_DIR / entry["file"])
        missing = sorted({n.op for n in graph.nodes} - supported)
        marks = [pytest.mark.xfail(strict=True, reason=f"no reference kernel yet for "
                                   f"{', '.join(missing)}")] if missing else []
        params.append(pytest.param(entry, marks=marks, id=entry["name"]))
    return params


@pytest.mark.parametrize("entry", _params())
@pytest.mark.one_fast
def test_model_matches_tflm(entry, models_dir, tflm):  # noqa: F811
    path = models_dir / entry["file"]
    graph = load_model(path)
    sequence = model_sequence(entry, graph)
    expected = tflm.run(path.read_bytes(), sequence)
    session = Session(graph)
    for step, (inputs, want) in enumerate(zip(sequence, expected)):
        got = session.invoke(inputs)
        assert len(got) == len(want)
        for k, (g, w) in enumerate(zip(got, want)):
            assert g.dtype == w.dtype and g.shape == w.shape
            if g.dtype == np.float32:
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6,
                                           err_msg=f"invocation {step}, output {k}")
            else:
                mismatch = np.flatnonzero(g != w)
                assert mismatch.size == 0, (
                    f"invocation {step}, output {k}: {mismatch.size} values differ, first at "
                    f"{mismatch[0]}: ours {g.flat[mismatch[0]]}, TFLM {w.flat[mismatch[0]]}"
                )


def test_stateful_session_reset_repeats_the_sequence(models_dir):
    graph = load_model(models_dir / "mlperf_kws_dscnn.tflite")
    session = Session(graph)
    x = np.load(models_dir / "samples" / "mlperf_kws_dscnn.npy")[0]
    first = session.invoke([x])[0]
    session.reset()
    assert np.array_equal(session.invoke([x])[0], first)
    assert int(np.argmax(first)) == 5  # the sample's class (samples README)
