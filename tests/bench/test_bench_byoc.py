"""bench/bench_byoc.py: the models it measures and its table (loaded by path)."""

from __future__ import annotations

import importlib.util
import sys

from support.models import ROOT

sys.path.insert(0, str(ROOT / "bench"))  # it imports bench_models_qemu beside it
_spec = importlib.util.spec_from_file_location("bench_byoc", ROOT / "bench" / "bench_byoc.py")
bench = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = bench
_spec.loader.exec_module(bench)


def test_it_measures_the_four_mlperf_tiny_models_against_the_m4_baseline():
    assert set(bench.MODELS) == {"mlperf_kws_dscnn", "mlperf_vww_mobilenetv1_025",
                                 "mlperf_ic_resnet8", "mlperf_ad_fc_autoencoder"}
    assert all(bench.BASELINES[bench.BOARD].cmsis_nn.get(m) for m in bench.MODELS)


def test_the_table_puts_the_three_builds_beside_tflm():
    row = {"model": "m", "macs": 1000, "aot": 900, "cmsis_nn": 1200, "choice": 880,
           "aot_exact": True, "cmsis_nn_exact": True, "choice_exact": True,
           "choice_layers": {"aot": 3, "cmsis-nn": 1}, "cmsis_nn_layers": 4, "layers": 4,
           "tflm_cmsis_nn": 1250}
    text = bench.table([row])
    assert "| m | 1,000 | 900 | 1,200 (4/4) | 880 (3 aot, 1 cmsis-nn) | 1,250 | 0.9600 | " \
           "0.9778 | yes |" in text
