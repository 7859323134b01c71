"""Tuning records carried from one model to another with layers of the same shapes.

Two small int8 models share their first convolution's shapes (other
weights, other quantization) and differ in their second layer.  `aot tune B
--tuning-records A.log` starts from A's records of the shared workload
(measures only the default and A's fastest configs again), and `aot compile
B --tuning-records A.log` compiles the shared layer with A's best config.
"""


import numpy as np
import pytest
from support.fake_flows import CrcFlows
from support.tflite_builder import ModelBuilder
from support.tools import needs_arm_qemu

from aot.cli import main
from aot.compile import compile_model
from aot.firmware import run_on_board
from aot.frontend import load_model
from aot.reference.interpreter import Session
from aot.target import load_board
from aot.tune import records as rec
from aot.tune import session
from aot.tune.library import TunedKernels
from aot.tune.session import CONFIRM, tune_model
from aot.tune.workload import extract_workloads

# The templates are the arm_cpu and riscv keys' (host/native has none): the
# models are tuned on QEMU, whose instruction counts are exact.
BOARD = "qemu/mps2-an386"


def _model(seed: int, second: str, scales: tuple[float, float, float]) -> bytes:
    """``x -> conv 3x3 (4 -> 8 channels) -> second``, ``second`` a pointwise
    convolution or a depthwise one; ``scales`` of the input, the weights, the
    convolution's output."""
    rng = np.random.default_rng(seed)
    s_in, s_w, s_mid = scales
    mb = ModelBuilder()
    x = mb.input("x", [1, 8, 8, 4], "int8", scale=s_in, zero_point=seed - 3)
    w = mb.const("w", rng.integers(-127, 128, (8, 3, 3, 4)).astype(np.int8),
                 scale=[s_w] * 8, zero_point=0, axis=0)
    b = mb.const("b", rng.integers(-900, 900, 8).astype(np.int32), "int32",
                 scale=[s_in * s_w] * 8, zero_point=0, axis=0)
    mid = mb.tensor("mid", [1, 8, 8, 8], "int8", scale=s_mid, zero_point=-2)
    mb.op("CONV_2D", [x, w, b], [mid], padding="SAME", stride_w=1, stride_h=1,
          fused_activation_function="RELU")
    y = mb.output("y", [1, 8, 8, 8], "int8", scale=0.2, zero_point=1)
    if second == "pointwise":
        w2 = mb.const("w2", rng.integers(-127, 128, (8, 1, 1, 8)).astype(np.int8),
                      scale=[0.02] * 8, zero_point=0, axis=0)
        b2 = mb.const("b2", np.zeros(8, np.int32), "int32", scale=[s_mid * 0.02] * 8,
                      zero_point=0, axis=0)
        mb.op("CONV_2D", [mid, w2, b2], [y], padding="VALID", stride_w=1, stride_h=1)
    else:
        w2 = mb.const("w2", rng.integers(-127, 128, (1, 3, 3, 8)).astype(np.int8),
                      scale=[0.03] * 8, zero_point=0, axis=3)
        b2 = mb.const("b2", np.zeros(8, np.int32), "int32", scale=[s_mid * 0.03] * 8,
                      zero_point=0, axis=0)
        mb.op("DEPTHWISE_CONV_2D", [mid, w2, b2], [y], padding="SAME", stride_w=1,
              stride_h=1, depth_multiplier=1)
    return mb.finish()


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    a, b = root / "a.tflite", root / "b.tflite"
    a.write_bytes(_model(0, "pointwise", (0.05, 0.01, 0.1)))
    b.write_bytes(_model(5, "depthwise", (0.08, 0.004, 0.3)))
    return a, b


def _keys(path):
    _, workloads = extract_workloads(path, load_board(BOARD).target)
    return {w.description: w for w in workloads}


def test_the_key_ignores_weights_and_quantization_but_not_shapes(models):
    a, b = (_keys(m) for m in models)
    shared = "conv2d 1x8x8x4 * 8x3x3x4 -> 1x8x8x8"
    assert a[shared].key == b[shared].key
    assert set(a) == {shared, "conv2d 1x8x8x8 * 8x1x1x8 -> 1x8x8x8"}
    assert set(b) == {shared, "depthwise_conv2d 1x8x8x8 * 1x3x3x8 -> 1x8x8x8"}
    assert len({w.key for w in (*a.values(), *b.values())}) == 3


@needs_arm_qemu
@pytest.mark.slow
def test_a_second_model_starts_from_the_first_ones_records(models, tmp_path, capsys):
    a, b = models
    shared = _keys(b)["conv2d 1x8x8x4 * 8x3x3x4 -> 1x8x8x8"]
    a_log, b_log = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    tune_model(a, BOARD, trials=8, batch_size=8, repeats=1, log=a_log, only=["1x8x8x4"],
               cache_dir=tmp_path / "cache")
    from_a = rec.load(a_log)
    assert len(from_a) == 8 and {r.workload for r in from_a} == {shared.key}
    assert all(r.status == "ok" for r in from_a)
    fastest = sorted((r.cost, i) for i, r in enumerate(from_a)
                     if r.config != dict(shared.default))[:CONFIRM]

    report = tune_model(b, BOARD, trials=10, batch_size=8, repeats=1, log=b_log,
                        tuning_records=[a_log], cache_dir=tmp_path / "cache")
    conv, depthwise = report.workloads
    assert conv.key == shared.key and conv.imported == 8 and conv.trials == 10
    assert depthwise.imported == 0 and depthwise.trials == 10
    measured = [r.config for r in rec.load(b_log) if r.workload == shared.key]
    # the default and A's fastest again (on B's weights and reference), then two new ones
    assert measured[:1 + CONFIRM] == [dict(shared.default)] + [from_a[i].config
                                                               for _, i in fastest]
    assert len(measured) == 1 + CONFIRM + 2
    assert not [c for c in measured[1 + CONFIRM:] if c in [r.config for r in from_a]]
    mine = [r.cost for r in rec.load(b_log) if r.status == "ok" and r.config == conv.best_config]
    assert mine == [conv.best_cost]                        # the best was measured on B
    assert len(rec.load(a_log)) == 8                       # A's log is only read

    # compiling B with A's log: the shared layer gets A's best config
    code = main(["compile", str(b), "--board", BOARD, "-o", str(tmp_path / "out"),
                 "--tuning-records", str(a_log)])
    assert code == 0
    assert "tuning records applied to 1 of 2 tunable kernels" in capsys.readouterr().out
    tuned, _ = TunedKernels.from_log(a_log, load_board(BOARD).target)
    compiled = compile_model(b, BOARD, kernel_library=tuned)
    best_a = min((r for r in from_a), key=lambda r: r.cost)
    kernel = next(k for k in compiled.kernels if "conv2d" in k.op_names)
    want = shared.lower(shared.space.config(best_a.config), kernel.name)
    assert kernel.with_inplace(()).source == want.source
    x = np.random.default_rng(1).integers(-128, 128, (3, 1, 8, 8, 4)).astype(np.int8)
    got = run_on_board(compiled, [x], workdir=tmp_path, cache_dir=tmp_path / "cache")
    graph = load_model(b)
    want_y = np.stack([Session(graph).invoke([x[i]])[0] for i in range(3)])
    np.testing.assert_array_equal(got.outputs[0], want_y)


@pytest.mark.slow
def test_an_imported_config_wrong_on_this_model_is_never_the_best(models_dir, tmp_path,
                                                                   monkeypatch):
    kws = models_dir / "mlperf_kws_dscnn.tflite"
    target = load_board(BOARD).target
    dense = [w for w in extract_workloads(kws, target)[1] if w.description.startswith("dense")][0]
    configs = [c for c in dense.space if c != dense.default][:6]
    other = tmp_path / "other.jsonl"
    rec.append(other, [rec.Record(dense.key, dense.description, str(target), "x", c.to_json(),
                                  "ok", 10 + k, "instructions") for k, c in enumerate(configs)]
               + [rec.Record(dense.key, dense.description, "c -keys=riscv,cpu", None,
                             configs[0].to_json(), "ok", 1, "instructions")])
    flows = CrcFlows(configs[0].to_json())
    monkeypatch.setattr(session, "open_farm", lambda *args, **kwargs: flows)
    report = tune_model(kws, BOARD, trials=6, log=tmp_path / "b.jsonl",
                        only=["dense"], tuning_records=[other])
    (summary,) = report.workloads
    # no search beyond the imported trials: the default and the 3 fastest confirmed
    assert flows.measured == [c.to_json() for c in [dense.default, *configs[:CONFIRM]]]
    assert summary.trials == 7 and summary.imported == 6
    assert summary.best_config != configs[0].to_json() and summary.best_cost > 1000
    assert summary.best_config in flows.measured and summary.failed == 1
    assert report.notes == [f"--tuning-records {other}: ignoring 1 tuning records made for "
                            "another target (c -keys=riscv,cpu)",
                            "1 of 1 workloads started from --tuning-records (6 imported "
                            "configs; the default and the 3 fastest of each workload measured "
                            "again)"]


def test_a_missing_import_is_an_error(models_dir, tmp_path):
    # the session's own --log given as --tuning-records imports its other models'
    # records: tests/tune/test_records_model.py
    log = tmp_path / "log.jsonl"
    code = main(["tune", str(models_dir / "mlperf_kws_dscnn.tflite"), "--board",
                 BOARD, "--trials", "2", "--log", str(log), "--tuning-records",
                 str(tmp_path / "missing.jsonl")])
    assert code == 2


@pytest.mark.slow
def test_records_of_no_workload_of_the_model_are_said_to_be_unused(models_dir, tmp_path,
                                                                   monkeypatch):
    kws = models_dir / "mlperf_kws_dscnn.tflite"
    target = load_board(BOARD).target
    other = tmp_path / "other.jsonl"
    rec.append(other, [rec.Record("dense:0000000000000000", "dense", str(target), BOARD,
                                  {"unroll_u": 1}, "ok", 10, "instructions")])
    monkeypatch.setattr(session, "open_farm", lambda *args, **kwargs: CrcFlows({}))
    report = tune_model(kws, BOARD, trials=1, log=tmp_path / "b.jsonl", only=["dense"],
                        tuning_records=[other])
    assert report.workloads[0].imported == 0 and report.workloads[0].trials == 1
    assert report.notes[0].startswith("none of the 1 records of --tuning-records for this "
                                      "target is of a workload of this model")


@pytest.mark.slow
def test_the_tune_command_imports_and_says_so(models_dir, tmp_path, monkeypatch, capsys):
    kws = models_dir / "mlperf_kws_dscnn.tflite"
    target = load_board(BOARD).target
    dense = [w for w in extract_workloads(kws, target)[1] if w.description.startswith("dense")][0]
    configs = [c for c in dense.space if c != dense.default][:4]
    other = tmp_path / "other.jsonl"
    rec.append(other, [rec.Record(dense.key, dense.description, str(target), BOARD, c.to_json(),
                                  "ok", 10 + k, "instructions") for k, c in enumerate(configs)])
    monkeypatch.setattr(session, "open_farm", lambda *args, **kwargs: CrcFlows({}))
    code = main(["tune", str(kws), "--board", BOARD, "--trials", "5", "--log",
                 str(tmp_path / "b.jsonl"), "--workload", "dense", "--tuning-records", str(other)])
    out, err = capsys.readouterr()
    assert code == 0
    assert "after 5 trials (4 imported), 0 failed" in out
    assert "note: 1 of 1 workloads started from --tuning-records (4 imported configs" in err
    assert len(rec.load(tmp_path / "b.jsonl")) == 1 + CONFIRM
