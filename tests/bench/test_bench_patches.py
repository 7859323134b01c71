"""bench/bench_patches.py: the estimate table for VWW, every chosen stage checked exact."""

from __future__ import annotations

import pytest
import importlib.util
import json
import sys

from support.models import ROOT

_spec = importlib.util.spec_from_file_location("bench_patches", ROOT / "bench" / "bench_patches.py")
bench = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = bench
_spec.loader.exec_module(bench)


@pytest.mark.slow
def test_vww_row_and_json(tmp_path, capsys):
    out = tmp_path / "p.json"
    assert bench.main(["--model", "mlperf_vww_mobilenetv1_025", "--json", str(out)]) == 0
    row = json.loads(out.read_text())["mlperf_vww_mobilenetv1_025"]
    assert row["caller_io"] == {"before": 55296, "after": 36864, "stage_nodes": 4,
                                "grid": [2, 2], "extra_work": row["caller_io"]["extra_work"],
                                "exact": True}
    assert row["caller_io"]["extra_work"] <= 0.05
    assert row["caller_io_unlimited"]["after"] < row["caller_io"]["after"]
    assert row["caller_io_unlimited"]["exact"] is True
    assert "55,296 -> 36,864 (4 nodes, 2x2, +3.0%)" in capsys.readouterr().out
