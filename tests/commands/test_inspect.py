"""``aot inspect``: MACs, parameter bytes and activation memory, counted independently.

The independent count reads the model with the generated schema module in
the tflite-micro wheel (not with our reader) and applies the definitions of
BASELINE.md directly to the TFLite tensors.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from support.models import MODELS, TRANSFORMERS_DIR

from aot.cli import main
from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as fb

# BASELINE.md, column "MACs".
BASELINE_MACS = {
    "mlperf_kws_dscnn": 2_656_768,
    "mlperf_vww_mobilenetv1_025": 7_489_664,
    "mlperf_ic_resnet8": 12_501_632,
    "mlperf_ad_fc_autoencoder": 264_192,
    "tflm_micro_speech": 336_000,
}
ITEMSIZE = {fb.TensorType.INT8: 1, fb.TensorType.INT16: 2, fb.TensorType.INT32: 4,
            fb.TensorType.FLOAT32: 4, fb.TensorType.UINT8: 1, fb.TensorType.INT64: 8}


def _inspect_json(path, capsys) -> dict:
    assert main(["inspect", str(path), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _independent(path) -> dict:
    model = fb.ModelT.InitFromPackedBuf(path.read_bytes(), 0)
    sg = model.subgraphs[0]
    codes = [max(c.builtinCode, c.deprecatedBuiltinCode) for c in model.operatorCodes]
    tensors = sg.tensors

    def shape(i):
        return [int(d) for d in tensors[i].shape]

    def nbytes(i):
        return int(np.prod(shape(i))) * ITEMSIZE[tensors[i].type]

    def is_const(i):
        buf = model.buffers[tensors[i].buffer]
        return buf.data is not None and len(buf.data) > 0

    macs = []
    for op in sg.operators:
        code = codes[op.opcodeIndex]
        out = shape(op.outputs[0])
        w = shape(op.inputs[1]) if len(op.inputs) > 1 else None
        if code == fb.BuiltinOperator.CONV_2D:
            macs.append(int(np.prod(out)) * w[1] * w[2] * w[3])
        elif code == fb.BuiltinOperator.DEPTHWISE_CONV_2D:
            macs.append(int(np.prod(out)) * w[1] * w[2])
        elif code == fb.BuiltinOperator.FULLY_CONNECTED:
            macs.append(int(np.prod(out)) * w[1])
        else:
            macs.append(0)
    # Operands that only describe a shape (RESHAPE's input 1) are attributes, not parameters.
    shape_only = {int(op.inputs[1]) for op in sg.operators
                  if codes[op.opcodeIndex] == fb.BuiltinOperator.RESHAPE and len(op.inputs) > 1}
    params = sum(nbytes(i) for i in range(len(tensors)) if is_const(i) and i not in shape_only)
    # Liveness by brute force: at each operator, every non-constant tensor
    # written at or before it and read at or after it (inputs from the start,
    # outputs to the end).
    n = len(sg.operators)
    first = {int(i): -1 for i in sg.inputs}
    last = {int(i): n for i in sg.outputs}
    for k, op in enumerate(sg.operators):
        for i in op.outputs:
            first.setdefault(int(i), k)
        for i in op.inputs:
            if i >= 0 and not is_const(i) and not tensors[i].isVariable:
                last[int(i)] = max(last.get(int(i), k), k)
    peak = max(sum(nbytes(i) for i in first if first[i] <= k <= last.get(i, first[i]))
               for k in range(n))
    return {"macs": macs, "params": params, "peak": peak}


@pytest.mark.parametrize("name", sorted(BASELINE_MACS))
def test_total_macs_match_the_baseline(name, models_dir, capsys):
    info = _inspect_json(models_dir / f"{name}.tflite", capsys)
    assert info["total_macs"] == BASELINE_MACS[name]


@pytest.mark.parametrize("name", ["mlperf_kws_dscnn", "mlperf_ic_resnet8",
                                  "tflm_magic_wand_float"])
def test_numbers_agree_with_an_independent_count(name, models_dir, capsys):
    path = models_dir / f"{name}.tflite"
    info = _inspect_json(path, capsys)
    ref = _independent(path)
    assert [layer["macs"] for layer in info["layers"]] == ref["macs"]
    assert info["param_bytes"] == ref["params"]
    assert info["activation_peak_bytes"] == ref["peak"]
    assert info["workspace_lower_bound_bytes"] <= info["activation_peak_bytes"]


def test_kws_activation_peak_is_two_feature_maps(models_dir, capsys):
    # BASELINE.md: "the two largest live tensors are 2 x 8,000 bytes".
    info = _inspect_json(models_dir / "mlperf_kws_dscnn.tflite", capsys)
    assert info["activation_peak_bytes"] == 16_000
    assert info["operators"] == {"avg_pool2d": 1, "conv2d": 5, "dense": 1,
                                 "depthwise_conv2d": 4, "reshape": 1, "softmax": 1}
    assert info["inputs"][0]["quantization"]["zero_point"] == [83]


def test_state_bytes_of_a_stateful_model(models_dir, capsys):
    info = _inspect_json(models_dir / "tflm_keyword_scrambled_int16.tflite", capsys)
    assert info["state_bytes"] == 2 * (4 * 512 + 3 * 1024)


def test_text_output(models_dir, capsys):
    assert main(["inspect", str(models_dir / "mlperf_ad_fc_autoencoder.tflite")]) == 0
    out = capsys.readouterr().out
    assert "total MACs: 264,192" in out
    assert "dense                10" in out
    assert "scale=0.391015 zero_point=89" in out


def test_bad_model_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"\x10\x00\x00\x00TFL3" + b"\xff" * 40)
    assert main(["inspect", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("aot inspect: error: ")
    assert "Traceback" not in err


@pytest.mark.parametrize("name", [m["name"] for m in MODELS if m["file"].endswith(".tflite")])
def test_every_shared_model_reports_macs_and_memory(name, models_dir, capsys):
    info = _inspect_json(models_dir / f"{name}.tflite", capsys)
    assert info["total_macs"] == sum(layer["macs"] for layer in info["layers"]) > 0
    largest = max(t["bytes"] for t in info["tensors"] if t["kind"] == "activation")
    assert info["activation_peak_bytes"] >= largest
    assert 0 < info["workspace_lower_bound_bytes"] <= info["activation_peak_bytes"]


def test_batch_matmul_macs_are_counted(capsys):
    """The Keras attention block's two BATCH_MATMULs (scores and values, two
    heads of 8x8 by 8): 2 x 8 x 8 x 8 MACs each, beside its four Dense layers."""
    info = _inspect_json(TRANSFORMERS_DIR / "attention_int8.tflite", capsys)
    bmm = [layer["macs"] for layer in info["layers"] if layer["op"] == "batch_matmul"]
    assert bmm == [2 * 8 * 8 * 8, 2 * 8 * 8 * 8]
    assert info["total_macs"] == 4 * 8 * 16 * 16 + sum(bmm)
