"""The builder and runner: one image per batch, outputs checked, failures survived.

The fast tests measure on the host port (the kernels' portable paths run
there); the slow one tunes on QEMU.
"""

import shutil

import numpy as np
import pytest

from support.tools import needs_arm_qemu

from aot.export import runtime_config
from aot.target import Target, load_board
from aot.firmware.stack import stack_usage
from aot.tune.measure import (
    KERNEL_STACK_RESERVE,
    Builder,
    Candidate,
    Runner,
    descriptor,
    max_batch,
    measure,
    stack_guard,
)
from aot.tune.errors import TuneError
from aot.tune.workload import extract_workloads

M4 = Target("c -keys=arm_cpu,cpu -mcpu=cortex-m4")

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("make") is None,
                               reason="needs the host gcc and make")


@pytest.fixture(scope="module")
def dense(models_dir):
    _, workloads = extract_workloads(models_dir / "mlperf_kws_dscnn.tflite", M4)
    return workloads[-1]


def test_descriptor_lists_the_params_and_every_candidate(dense):
    kernel = dense.lower(dense.default, "tune_c0")
    text = " ".join(descriptor("tune", "abc", kernel, ["tune_c0", "tune_c1"]).split())
    assert '{"in0", AOT_DTYPE_INT8, AOT_ROLE_INPUT, AOT_TENSOR_WRITABLE, 1, {64}' in text
    assert '{"out", AOT_DTYPE_INT8, AOT_ROLE_OUTPUT' in text
    assert '{"expected", AOT_DTYPE_INT8, AOT_ROLE_INPUT, AOT_TENSOR_WRITABLE, 1, {12}' in text
    for name in ('"clear"', '"check"', '"c0"', '"c1"'):
        assert name in text
    assert "return tune_c1(tune_in0, tune_out);" in text


@pytest.mark.slow
def test_identical_kernels_are_one_candidate(dense, tmp_path):
    builder = Builder(load_board("host/native"), tmp_path)
    configs = list(dense.space)
    candidates, failed = builder.candidates(dense, configs)
    assert not failed
    assert sum(len(c.configs) for c in candidates) == len(configs)
    assert len(candidates) < len(configs)


def _broken(template: Candidate, name: str, body: str) -> Candidate:
    proto = template.kernel.prototype.replace(template.kernel.name, name).rstrip(";")
    return Candidate(name, template.configs[:1], f"#include <stdint.h>\n{proto} {{\n{body}\n}}\n",
                     template.kernel)




@pytest.mark.parametrize("tag", [
    pytest.param("host/native", marks=needs_gcc),
    pytest.param("qemu/mps2-an386", marks=[needs_arm_qemu, pytest.mark.slow]),
])
@pytest.mark.slow
def test_batch_checks_outputs_and_survives_crashes_and_hangs(dense, tmp_path, tag):
    board = load_board(tag)
    builder = Builder(board, tmp_path / "work", cache_dir=tmp_path / "cache")
    good, _ = builder.candidates(dense, list(dense.space)[:3])
    silent = _broken(good[0], "tune_silent", "  (void)x0; (void)y1;\n  return 0;")
    crash = _broken(good[0], "tune_crash", "  (void)x0; (void)y1;\n"
                    "  *(volatile int32_t *)0 = 1;\n  return 0;")
    wrong = _broken(good[0], "tune_wrong", "  (void)x0;\n  for (int i = 0; i < 12; ++i) "
                    "y1[i] = 7;\n  return 0;")
    hang = _broken(good[0], "tune_hang", "  (void)x0; (void)y1;\n  for (;;) {\n  }")
    candidates = [good[0], silent, crash, good[1], wrong, hang, good[2]]
    batch = builder.build(dense, candidates)
    assert not batch.build_error
    results = Runner(repeats=2, timeout=2.0).run(batch)
    status = [r.status for r in results[:len(candidates)]]
    assert status == ["ok", "wrong", "error", "ok", "wrong", "timeout", "ok"]
    assert all(r.cost is not None and r.cost > 0 and len(r.timings) == 2
               for r in results if r.ok)
    assert "differ from the reference" in results[1].error


@needs_gcc
@pytest.mark.slow
def test_a_candidate_that_does_not_compile_fails_alone(dense, tmp_path, monkeypatch):
    board = load_board("host/native")
    builder = Builder(board, tmp_path / "work", cache_dir=tmp_path / "cache")
    configs = list(dense.space)[:2] + [list(dense.space)[-1]]
    real = dense.lower

    def lower(config, name):
        kernel = real(config, name)
        if config == configs[-1]:
            object.__setattr__(kernel, "source", kernel.source + "\n#error broken\n")
        return kernel
    monkeypatch.setattr(dense, "lower", lower)
    results = measure(builder, Runner(repeats=1), dense, configs)
    by_config = {r.config: r.status for r in results}
    assert by_config[configs[-1]] == "build"
    assert [by_config[c] for c in configs[:2]] == ["ok", "ok"]


needs_arm_gcc = pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None,
                                   reason="needs arm-none-eabi-gcc")


def test_a_candidate_may_take_the_boards_stack_less_the_firmwares_share():
    assert '"-Wstack-usage=7680"' in stack_guard(load_board("qemu/mps2-an386"))
    assert '"-Wstack-usage=3584"' in stack_guard(load_board("qemu/microbit"))
    assert stack_guard(load_board("host/native")) == ""


@needs_arm_gcc
@pytest.mark.slow
def test_a_candidate_whose_frame_passes_the_stack_does_not_build(dense, tmp_path):
    board = load_board("qemu/mps2-an386")
    builder = Builder(board, tmp_path / "work", cache_dir=tmp_path / "cache")
    good, _ = builder.candidates(dense, list(dense.space)[:1])

    def with_buffer(name: str, size: int) -> Candidate:
        return _broken(good[0], name, f"  volatile int8_t buf[{size}];\n  buf[0] = x0[0];\n"
                       f"  y1[0] = buf[{size} - 1];\n  return 0;")
    fits = builder.build(dense, [good[0], with_buffer("tune_fits", 6000)])
    assert not fits.build_error
    deep = builder.build(dense, [with_buffer("tune_deep", 7800)])
    assert "stack usage is 78" in deep.build_error
    # The reserve covers what the firmware itself puts on the stack under a kernel.
    peak = stack_usage(fits.project)
    assert peak.bounded and peak.runtime + peak.exception <= KERNEL_STACK_RESERVE


def test_expected_output_is_what_the_reference_computes(dense):
    assert dense.expected.shape == (1, 12)
    assert np.asarray(dense.expected).dtype == np.int8


def test_descriptor_declares_at_most_the_runtimes_kernel_limit(dense):
    limit = runtime_config()["AOT_MAX_KERNELS"]
    kernel = dense.lower(dense.default, "tune_c0")
    names = [f"tune_c{i}" for i in range(max_batch())]
    text = descriptor("tune", "abc", kernel, names)
    table = text.split("tune_rpc_kernels[] = {")[1].split("};")[0]
    assert table.count("{\"") == limit
    assert f"    {limit},\n    tune_rpc_kernels," in text
    with pytest.raises(TuneError, match=f"at most {max_batch()} candidates .*AOT_MAX_KERNELS"):
        descriptor("tune", "abc", kernel, [*names, "tune_one_more"])


class _Copies(Builder):
    """A builder whose candidates are ``count`` copies of the workload's default
    kernel under other names (the builder itself would merge them)."""

    def __init__(self, *args, count: int, **kwargs):
        super().__init__(*args, **kwargs)
        self.count = count
        self.batches: list[int] = []

    def candidates(self, workload, configs):
        (good,), _ = super().candidates(workload, configs[:1])
        return [Candidate(f"tune_w{k}", [configs[0]], good.source.replace(good.name, f"tune_w{k}"),
                          good.kernel) for k in range(self.count)], []

    def build(self, workload, candidates):
        self.batches.append(len(candidates))
        return super().build(workload, candidates)


@needs_gcc
@pytest.mark.slow
def test_candidates_up_to_the_kernel_limit_share_an_image_and_one_more_is_split(dense, tmp_path):
    # One kernel more than AOT_MAX_KERNELS and the firmware refuses its descriptor at
    # boot: every candidate of the image would come back as a device error.
    builder = _Copies(load_board("host/native"), tmp_path / "work",
                      cache_dir=tmp_path / "cache", count=max_batch() + 1)
    results = measure(builder, Runner(repeats=1), dense, [dense.default])
    assert builder.batches == [max_batch(), 1]   # a full image boots, the one left over too
    assert [r.status for r in results] == ["ok"] * (max_batch() + 1)


@needs_gcc
@pytest.mark.slow
def test_a_candidate_wrong_only_on_the_extreme_input_is_rejected(dense, tmp_path):
    # A classic saturation bug: -128 read as -127 (a symmetric int8 range).  The
    # sample input never reaches -128, so only the extreme inputs can show it.
    (sample,) = dense.inputs.values()
    assert np.asarray(sample).min() > -128
    builder = Builder(load_board("host/native"), tmp_path / "work", cache_dir=tmp_path / "cache")
    (good,), _ = builder.candidates(dense, [dense.default])
    proto = good.kernel.prototype.replace(good.kernel.name, "tune_sat").rstrip(";")
    symmetric = Candidate(
        "tune_sat", [list(dense.space)[1]],
        good.source.replace(good.name, "tune_inner") + f"\n{proto}\n{{\n    int8_t x[64];\n"
        "    for (int i = 0; i < 64; ++i) {\n        x[i] = x0[i] == -128 ? -127 : x0[i];\n"
        "    }\n    return tune_inner(x, y1);\n}\n", good.kernel)
    batch = builder.build(dense, [good, symmetric])
    assert not batch.build_error
    results = Runner(repeats=1).run(batch)
    assert [r.status for r in results] == ["ok", "wrong"]
    assert "every input value -128" in results[1].error
    assert results[1].cost is None


@needs_gcc
@pytest.mark.parametrize("model", ["mlperf_kws_dscnn", "tflm_magic_wand_float"])
@pytest.mark.one_fast
def test_the_device_fills_the_check_cases_as_the_host_computes_them(models_dir, tmp_path, model):
    from aot.firmware import build_project, open_device
    from aot.tune.measure import CHECK_CASES, case_inputs, workload_params, write_project

    _, workloads = extract_workloads(models_dir / f"{model}.tflite", M4)
    wl = workloads[-1]
    params = workload_params(wl)
    shapes = {name: np.shape(x) for name, x in wl.inputs.items()}
    project = write_project(wl, [], load_board("host/native"), tmp_path / "batch")
    build_project(project, cache_dir=tmp_path / "cache")
    with open_device(project) as dev:
        for k, case in enumerate(CHECK_CASES):
            dev.run(1, kernel=f"case{k}")
            want = case_inputs(params, shapes, case)
            for i, p in enumerate(params):
                if p.role == "input":
                    got = dev.read_tensor(f"in{i}")
                    np.testing.assert_array_equal(got, want[p.tensor].reshape(-1))
                    assert got.dtype == np.dtype(p.dtype)
