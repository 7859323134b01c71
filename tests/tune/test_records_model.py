"""Records that name their model: one --log shared by models resumes each from its own.

Every record carries the identity of the model it was measured on (the
file's name and a hash of its bytes).  A session resumes only its own
model's records; another model's records in the same log are skipped (and
said so) unless imported with --tuning-records; records written before the
field existed count as the model's own, as every record did then.  When
compiling, a workload's own records win over another model's.
"""

import json

import pytest

from support.fake_flows import CrcFlows

from aot.cli import main
from aot.frontend import load_model
from aot.target import load_board
from aot.tune import records as rec
from aot.tune import session
from aot.tune.errors import TuneError
from aot.tune.library import TunedKernels
from aot.tune.session import CONFIRM, tune_model

BOARD = "qemu/mps2-an386"
OTHER = {"name": "other.tflite", "sha256": "0123456789abcdef"}


@pytest.fixture
def fake(monkeypatch):
    flows = CrcFlows()
    monkeypatch.setattr(session, "open_farm", lambda *args, **kwargs: flows)
    return flows


def _records(dense, configs, model, first_cost=10):
    return [rec.Record(dense.key, dense.description, str(dense.target), BOARD, c.to_json(), "ok",
                       first_cost + k, "instructions", model=model)
            for k, c in enumerate(configs)]


def test_the_identity_is_the_files_bytes_and_its_name(kws, tmp_path):
    copy = tmp_path / "renamed.tflite"
    copy.write_bytes(kws.read_bytes())
    changed = tmp_path / "changed.tflite"
    changed.write_bytes(kws.read_bytes()[:-1] + bytes([kws.read_bytes()[-1] ^ 1]))
    ident = rec.model_identity(kws)
    assert ident["name"] == "mlperf_kws_dscnn.tflite" and len(ident["sha256"]) == 16
    assert rec.model_identity(str(copy)) == {"name": "renamed.tflite", "sha256": ident["sha256"]}
    assert rec.model_identity(changed)["sha256"] != ident["sha256"]
    # a Graph given without its file: its structure and constants
    graph = rec.model_identity(load_model(kws))
    assert graph["name"] == "mlperf_kws_dscnn" and graph["sha256"] != ident["sha256"]
    assert rec.model_identity(load_model(copy))["sha256"] == graph["sha256"]
    other_weights = load_model(kws)
    weight = other_weights.constants()[0]
    weight.data = weight.data.copy()
    weight.data.flat[0] ^= 1
    assert rec.model_identity(other_weights)["sha256"] != graph["sha256"]
    with pytest.raises(TuneError, match="neither a model file nor a Graph"):
        rec.model_identity(42)


def test_records_round_trip_with_their_model_and_old_ones_load_without(tmp_path):
    log = tmp_path / "log.jsonl"
    named = rec.Record("w", "d", "t", "b", {"a": 1}, "ok", 3, "instructions", model=OTHER)
    rec.append(log, [named])
    old = {"version": 1, "workload": "w", "description": "d", "target": "t", "board": "b",
           "config": {"a": 2}, "status": "ok", "cost": 4, "unit": "instructions"}
    with open(log, "a") as f:
        f.write(json.dumps(old) + "\n")
    assert rec.load(log) == [named, rec.Record("w", "d", "t", "b", {"a": 2}, "ok", 4,
                                               "instructions")]
    assert rec.load(log)[1].model is None


@pytest.mark.slow
def test_a_session_records_its_model(kws, dense, fake, tmp_path):
    log = tmp_path / "kws.jsonl"
    tune_model(kws, BOARD, trials=3, log=log, only=["dense"])
    assert {r.model["sha256"] for r in rec.load(log)} == {rec.model_identity(kws)["sha256"]}
    assert {r.model["name"] for r in rec.load(log)} == {"mlperf_kws_dscnn.tflite"}


@pytest.mark.slow
def test_a_shared_log_resumes_only_the_models_own_records(kws, dense, fake, tmp_path):
    log = tmp_path / "shared.jsonl"
    configs = [c for c in dense.space if c != dense.default][:4]
    rec.append(log, _records(dense, configs, OTHER))
    report = tune_model(kws, BOARD, trials=4, log=log, only=["dense"])
    (summary,) = report.workloads
    # nothing of the other model counts: 4 trials measured here, none imported
    assert len(fake.measured) == 4 and summary.trials == 4 and summary.imported == 0
    assert summary.best_cost >= 2000
    assert report.notes == [f"ignoring 4 records of another model (other.tflite) in {log}: a "
                            "session resumes its own model's records; import them with "
                            f"--tuning-records {log}"]
    # the other model's records are kept; kws's are appended
    loaded = rec.load(log)
    assert [r.model for r in loaded[:4]] == [OTHER] * 4
    assert all(r.model == rec.model_identity(kws) for r in loaded[4:])
    # a second session of kws resumes its own 4 and measures 2 more for --trials 6
    fake.measured.clear()
    report = tune_model(kws, BOARD, trials=6, log=log, only=["dense"])
    assert len(fake.measured) == 2 and report.workloads[0].trials == 6


@pytest.mark.slow
def test_records_without_a_model_count_as_the_models_own(kws, dense, fake, tmp_path):
    log = tmp_path / "old.jsonl"
    configs = [dense.default, *[c for c in dense.space if c != dense.default][:2]]
    rec.append(log, _records(dense, configs, None, first_cost=3000))
    report = tune_model(kws, BOARD, trials=4, log=log, only=["dense"])
    assert len(fake.measured) == 1 and report.workloads[0].trials == 4
    assert report.notes == [f"3 records in {log} name no model (written before records named "
                            "their model): taken as this model's own"]


@pytest.mark.slow
def test_the_log_given_as_tuning_records_imports_the_other_models(kws, dense, fake, tmp_path):
    log = tmp_path / "shared.jsonl"
    configs = [c for c in dense.space if c != dense.default][:5]
    rec.append(log, _records(dense, configs, OTHER))
    report = tune_model(kws, BOARD, trials=5, log=log, only=["dense"], tuning_records=[log])
    (summary,) = report.workloads
    assert fake.measured == [c.to_json() for c in [dense.default, *configs[:CONFIRM]]]
    assert summary.imported == 5 and summary.trials == 6
    assert report.notes == ["1 of 1 workloads started from --tuning-records (5 imported "
                            "configs; the default and the 3 fastest of each workload measured "
                            "again)"]


def test_compiling_prefers_the_models_own_records(kws, dense, tmp_path):
    target = load_board(BOARD).target
    me = rec.model_identity(kws)
    slow, fast = [c for c in dense.space if c != dense.default][:2]
    log = tmp_path / "shared.jsonl"
    rec.append(log, _records(dense, [fast], OTHER, first_cost=100)
               + _records(dense, [slow], me, first_cost=900))
    tuned, notes = TunedKernels.from_log(log, target, model=kws)
    assert tuned.best[dense.key].config == slow.to_json() and notes == []
    # without a model (or with another one) the fastest of any model wins
    assert TunedKernels.from_log(log, target)[0].best[dense.key].config == fast.to_json()
    # a workload only another model tuned takes its record: the transfer, said so
    other_log = tmp_path / "other.jsonl"
    rec.append(other_log, _records(dense, [fast], OTHER))
    tuned, notes = TunedKernels.from_log(other_log, target, model=kws)
    assert tuned.best[dense.key].config == fast.to_json()
    assert notes == ["1 workload takes a record of another model (other.tflite): none of "
                     "mlperf_kws_dscnn.tflite's own"]


@pytest.mark.slow
def test_the_compile_command_names_the_transfer(kws, dense, tmp_path, capsys):
    fast = [c for c in dense.space if c != dense.default][0]
    other_log = tmp_path / "other.jsonl"
    rec.append(other_log, _records(dense, [fast], OTHER))
    code = main(["compile", str(kws), "--board", BOARD, "--tuning-records", str(other_log),
                 "-o", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    assert code == 0
    assert "note: 1 workload takes a record of another model (other.tflite)" in err
    assert "tuning records applied to 1 of" in out
