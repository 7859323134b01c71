"""bench/bench_compile.py --timing: cold and warm compiles, every stage timed."""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest
from support.models import ROOT

_spec = importlib.util.spec_from_file_location("bench_compile", ROOT / "bench" / "bench_compile.py")
bench = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = bench
_spec.loader.exec_module(bench)


def test_the_synthetic_model_has_one_kernel_per_layer():
    from aot.compile import plan_one
    planned = plan_one(bench.synthetic_model(6), "host/native", patches="off")
    assert len(planned.kernels) == 6


@pytest.mark.slow
def test_timing_rows_cold_then_warm(tmp_path, capsys):
    out = tmp_path / "t.json"
    assert bench.main(["--timing", "--model", "mlperf_ad_fc_autoencoder", "--layers", "3",
                       "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert [r["model"] for r in data["models"]] == ["mlperf_ad_fc_autoencoder",
                                                    "synthetic, 3 layers"]
    for row in data["models"]:
        cold, warm = row["cold"], row["warm"]
        assert set(bench.STAGES) <= set(cold["stages"]) and cold["code"] == warm["code"] > 0
        # The warm run compiled nothing: its code size came from the cold run's objects.
        assert warm["stages"]["code size"][1] < cold["stages"]["code size"][1]
    # The model file's command again: replayed, nothing compiled; a Graph has no command.
    model, synthetic = data["models"]
    assert set(model["unchanged"]["stages"]) == {"import", "frontend", "replay"}
    assert "unchanged" not in synthetic
    text = capsys.readouterr().out
    assert "| mlperf_ad_fc_autoencoder | warm |" in text and "`aot --help`" in text
    assert "| mlperf_ad_fc_autoencoder | unchanged (replayed) |" in text
