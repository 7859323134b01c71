"""The PyTorch route (docs/pytorch.md): torchvision models and a transformer
encoder, random weights, exported with torch.onnx.export by both exporters
(TorchScript and dynamo), in float and quantized to int8 QDQ by onnxruntime's
static quantization, then run on the reference, the host and QEMU.

Float: within 1e-5 of onnxruntime (relative to the largest output).  int8
QDQ: the reference follows TFLM's integer arithmetic, onnxruntime requantizes
in float, so through a deep network with random weights the two drift apart
by up to ~50 output steps (mobilenet_v2, whose int8 output is itself ~85
steps from the float model's); the test demands that aot's int8 model is as
close to the float model as onnxruntime's int8 model is (within 25% + 2
steps).  The host and QEMU must then equal the reference (integers bit for
bit, floats within the verify tolerance).

torch and torchvision are an optional test dependency (the ``torch`` extra);
without them these tests skip, saying so.  Importing torch alone takes seconds,
so every test here is slow-marked and torch is imported only when one runs.
"""

from __future__ import annotations

import shutil
import warnings

import numpy as np
import pytest
from support.onnx_oracle import ort_session

from aot.frontend import load_model
from aot.reference.interpreter import run

pytestmark = pytest.mark.slow


def _torch():
    """(torch, torchvision), or a skip saying how to install them."""
    torch = pytest.importorskip("torch", reason="PyTorch is an optional test dependency: "
                                "pip install -e '.[torch]' (the CPU wheel is enough)")
    tv = pytest.importorskip("torchvision", reason="torchvision is an optional test "
                             "dependency: pip install -e '.[torch]'")
    return torch, tv


def _encoder(torch, tv):
    layer = torch.nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32,
                                             dropout=0.0, batch_first=True)
    return torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)


#: name -> (constructor of (torch, torchvision), input shape).  Small inputs and
#: few classes keep the models quick; mobilenet_v2 is thinned so that its
#: weights fit a 4 MiB-flash board.
MODELS = {
    "mobilenet_v2": (lambda torch, tv: tv.models.mobilenet_v2(width_mult=0.35,
                                                              num_classes=10), (1, 3, 32, 32)),
    "mobilenet_v3_small": (lambda torch, tv: tv.models.mobilenet_v3_small(num_classes=10),
                           (1, 3, 32, 32)),
    "resnet18": (lambda torch, tv: tv.models.resnet18(num_classes=10), (1, 3, 32, 32)),
    "encoder": (_encoder, (1, 8, 16)),
}
EXPORTERS = ("torchscript", "dynamo")


def _cases(models=MODELS, exporters=EXPORTERS):
    return [pytest.param(m, e, id=f"{m}-{e}") for m in models for e in exporters]


def build(name: str):
    """The model with seeded random weights; batch-norm statistics are measured on
    random data so that activations keep a useful size (freshly built torchvision
    models would otherwise shrink them to ~1e-10)."""
    torch, tv = _torch()
    torch.manual_seed(0)
    make, shape = MODELS[name]
    model = make(torch, tv)
    if any(isinstance(m, torch.nn.BatchNorm2d) for m in model.modules()):
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.momentum = None  # a plain average over the batches below
        model.train()
        with torch.no_grad():
            for _ in range(4):
                model(torch.randn((8,) + shape[1:]))
    return model.eval()


def export(name: str, exporter: str, folder) -> str:
    path = folder / f"{name}_{exporter}.onnx"
    if not path.is_file():
        torch, _ = _torch()
        model = build(name)
        x = torch.randn(MODELS[name][1])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, (x,), str(path), dynamo=exporter == "dynamo",
                              opset_version=18 if exporter == "dynamo" else 17,
                              input_names=["x"], output_names=["y"], verbose=False)
    return path


def quantize(path, name: str):
    """int8 QDQ with onnxruntime's static quantization, calibrated on random inputs."""
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)

    shape = MODELS[name][1]
    out = path.with_suffix(".qdq.onnx")
    if out.is_file():
        return out

    class Reader(CalibrationDataReader):
        def __init__(self):
            rng = np.random.default_rng(1)
            self.feeds = iter([{"x": rng.standard_normal(shape).astype(np.float32)}
                               for _ in range(8)])

        def get_next(self):
            return next(self.feeds, None)

    quantize_static(str(path), str(out), Reader(), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8)
    return out


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("pytorch")


def sample(name: str, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(MODELS[name][1]).astype(np.float32)


def onnxruntime(path, x):
    return ort_session(str(path), quiet=True).run(None, {"x": x})[0]


def onnxruntime_default(path, x):
    """onnxruntime's default kernels (its precise-integer option fails to load some
    of the QDQ graphs its own quantizer writes)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    return ort.InferenceSession(str(path), options).run(None, {"x": x})[0]


@pytest.mark.parametrize("name,exporter", _cases())
def test_float_export_matches_onnxruntime(name, exporter, folder):
    path = export(name, exporter, folder)
    x = sample(name)
    ours = run(load_model(path), [x])[0]
    theirs = onnxruntime(path, x)
    assert ours.shape == theirs.shape
    assert float(np.abs(theirs).max()) > 0.01  # not the ~1e-10 of untrained batch norms
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5 * np.abs(theirs).max())


def _output_step(path) -> float:
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(path), load_external_data=False)
    inits = {i.name: i for i in model.graph.initializer}
    out = model.graph.output[0].name
    node = next(n for n in model.graph.node if n.output[0] == out)
    assert node.op_type == "DequantizeLinear"
    return float(numpy_helper.to_array(inits[node.input[1]]))


@pytest.mark.parametrize("name,exporter", _cases())
def test_int8_qdq_export_is_near_onnxruntime(name, exporter, folder):
    path = quantize(export(name, exporter, folder), name)
    graph = load_model(path)
    assert {"conv2d", "dense", "batch_matmul"} & {n.op for n in graph.nodes}
    assert any(n.outputs[0].dtype == "int8" for n in graph.nodes)
    step = _output_step(path)
    float_path = path.with_name(path.name.replace(".qdq", ""))
    ours_err = ort_err = 0.0  # the largest distance from the float model, in steps
    for seed in range(3):
        x = sample(name, seed)
        want = onnxruntime_default(float_path, x)
        ours_err = max(ours_err, float(np.abs(run(graph, [x])[0] - want).max()) / step)
        ort_err = max(ort_err, float(np.abs(onnxruntime_default(path, x) - want).max()) / step)
    assert ours_err <= 1.25 * ort_err + 2, (
        f"aot's int8 output is {ours_err:.1f} steps from the float model's, "
        f"onnxruntime's {ort_err:.1f}")


def _host(path, x, tmp_path):
    from aot.commands.run import run_on_host
    from aot.compile import compile_model

    compiled = compile_model(path, "host/native", measure_code=False)
    return run_on_host(compiled, [x[None]], workdir=tmp_path)[0][0]


@pytest.mark.parametrize("name,exporter", _cases())
@pytest.mark.parametrize("kind", ["float", "int8"])
def test_export_runs_on_the_host(name, exporter, kind, folder, tmp_path):
    path = export(name, exporter, folder)
    if kind == "int8":
        path = quantize(path, name)
    x = sample(name)
    ours = _host(path, x, tmp_path)
    want = run(load_model(path), [x])[0]
    if kind == "int8":
        np.testing.assert_array_equal(ours, want)  # the reference, bit for bit
    else:
        np.testing.assert_allclose(ours, onnxruntime(path, x), rtol=1e-5,
                                   atol=1e-5 * np.abs(want).max())


#: What fits a 4 MiB-flash QEMU board: resnet18's 11 M parameters do not (11 MB
#: even as int8), nor mobilenet_v3_small's 1.5 M as float.
QEMU_CASES = [("mobilenet_v2", "float"), ("mobilenet_v2", "int8"),
              ("mobilenet_v3_small", "int8"), ("encoder", "float"), ("encoder", "int8")]


@pytest.mark.qemu
@pytest.mark.skipif(shutil.which("qemu-system-arm") is None or
                    shutil.which("arm-none-eabi-gcc") is None,
                    reason="needs qemu-system-arm and arm-none-eabi-gcc")
@pytest.mark.parametrize("name,kind", QEMU_CASES, ids=[f"{n}-{k}" for n, k in QEMU_CASES])
@pytest.mark.parametrize("exporter", EXPORTERS)
def test_export_runs_on_qemu(name, kind, exporter, folder, tmp_path):
    from aot.firmware.verify import verify_model

    path = export(name, exporter, folder)
    if kind == "int8":
        path = quantize(path, name)
    report = verify_model(path, "qemu/mps2-an386", inputs=[sample(name)[None]],
                          random_count=1, workdir=tmp_path)
    assert report.passed, report.summary()


@pytest.mark.parametrize("exporter", EXPORTERS)
@pytest.mark.parametrize("approximate, opset", [("none", 17), ("none", 20), ("tanh", 20)])
def test_gelu_exports_become_one_gelu(exporter, approximate, opset, tmp_path):
    """nn.GELU() at opset 17 is an Erf chain (TorchScript: Mul x then 0.5; dynamo:
    0.5 then x); at opset 20 a Gelu node.  Each becomes the IR's gelu, within 1e-5
    of onnxruntime.  (The tanh form below opset 20 is a chain with Pow, which is
    not imported.)"""
    torch, _ = _torch()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8),
                                torch.nn.GELU(approximate=approximate)).eval()
    x = torch.randn(2, 8) * 3
    path = tmp_path / "gelu.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (x,), str(path), dynamo=exporter == "dynamo",
                          opset_version=opset, input_names=["x"], output_names=["y"])
    graph = load_model(path)
    assert [n.op for n in graph.nodes] == ["dense", "gelu"]
    assert graph.nodes[1].attrs["approximate"] is (approximate == "tanh")
    ours = run(graph, [x.numpy()])[0]
    theirs = onnxruntime(path, x.numpy())
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5 * np.abs(theirs).max())
