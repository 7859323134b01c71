"""The RAM loader flow: one base image per workload, candidates loaded over the RPC.

Fast tests build and link on the host (cross compiler only) and check the
fallbacks; the slow ones run on QEMU and compare with the batch-image flow.
"""

import shutil
import struct
import subprocess

import pytest

from aot.target import Target, load_board
from aot.tune import farm as tune_farm
from aot.tune.loader import (
    REGION_SYMBOL,
    Base,
    LoaderUnavailable,
    RamBuilder,
    RamRunner,
    linker_script,
    measure_ram,
    ram_code_bytes,
    wrapper,
)
from aot.tune.measure import Builder, Candidate, Result, Runner, measure
from aot.tune.session import choose_loader, tune_model
from aot.tune.errors import TuneError
from aot.tune.workload import extract_workloads

BOARD = "qemu/mps2-an386"
M4 = Target("c -keys=arm_cpu,cpu -mcpu=cortex-m4")

needs_arm = pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None
                               or shutil.which("make") is None,
                               reason="needs arm-none-eabi-gcc and make")
needs_qemu = pytest.mark.skipif(shutil.which("qemu-system-arm") is None,
                                reason="needs qemu-system-arm")
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs the host gcc")


@pytest.fixture(scope="module")
def workloads(models_dir):
    _, found = extract_workloads(models_dir / "mlperf_kws_dscnn.tflite",
                                 load_board(BOARD).target)
    return found


@pytest.fixture(scope="module")
def dense(workloads):
    return workloads[-1]


def test_boards_declare_executable_ram_as_data():
    assert ram_code_bytes(load_board("qemu/mps2-an386")) == 256 * 1024
    assert ram_code_bytes(load_board("qemu/mps2-an385")) > 0
    # DTCM on the M55 is not for instruction fetches; 16 KiB on sifive_e; no memory map
    for tag in ("qemu/mps3-an547", "qemu/sifive-e", "host/native"):
        assert ram_code_bytes(load_board(tag)) == 0


def test_wrapper_makes_the_batch_descriptors_call(dense):
    kernel = dense.lower(dense.default, "tune_c7")
    cand = Candidate("tune_c7", [dense.default], kernel.source, kernel)
    base = Base(dense, None, list(kernel.params), 0x20000000, 4096, {}, [], [], 0.0)
    text = wrapper(base, cand)
    assert "extern int8_t tune_in0[];" in text and "extern int8_t tune_out[];" in text
    assert "return tune_c7(tune_in0, tune_out);" in text
    assert "ORIGIN = 0x20000000, LENGTH = 0x00001000" in linker_script(0x20000000, 4096)


def test_auto_loads_into_ram_on_real_boards_that_allow_it():
    assert choose_loader(load_board("st/nucleo-f746zg")) == "ram"
    assert choose_loader(load_board("qemu/mps2-an386")) == "image"  # a restart is cheaper
    assert choose_loader(load_board("qemu/mps2-an386"), "ram") == "ram"
    assert choose_loader(load_board("raspberrypi/pico")) == "image"  # no executable RAM declared


def test_ram_loader_needs_a_board_that_allows_it(models_dir, tmp_path):
    with pytest.raises(TuneError, match="does not declare executable RAM"):
        tune_model(models_dir / "mlperf_kws_dscnn.tflite", "host/native", trials=1,
                   log=tmp_path / "log", loader="ram")
    with pytest.raises(TuneError, match="unknown loader 'flash'"):
        tune_model(models_dir / "mlperf_kws_dscnn.tflite", BOARD, trials=1,
                   log=tmp_path / "log", loader="flash")


def test_auto_falls_back_to_batch_images_when_the_loader_is_unavailable(dense, tmp_path,
                                                                      monkeypatch):
    def unavailable(*args):
        raise LoaderUnavailable("the device does not advertise the RAM loader")
    images = []

    def batch_images(builder, runner, wl, configs):
        images.append(configs)
        return [Result(c, "ok", 5, (5,), "instructions") for c in configs]
    monkeypatch.setattr(tune_farm, "measure_ram", unavailable)
    monkeypatch.setattr(tune_farm, "measure", batch_images)
    notes = []
    with tune_farm.Flows(load_board(BOARD), tmp_path, tmp_path / "cache", runner=None,
                            serial_port=None, repeats=1, ram=True, forced=False,
                            notes=notes) as flows:
        assert [r.status for r in flows.measure(dense, [dense.default])] == ["ok"]
        assert not flows.ram and len(images) == 1
        assert "does not advertise the RAM loader" in notes[0]
    with tune_farm.Flows(load_board(BOARD), tmp_path, tmp_path / "cache", runner=None,
                            serial_port=None, repeats=1, ram=True, forced=True,
                            notes=[]) as flows, pytest.raises(LoaderUnavailable):
        flows.measure(dense, [dense.default])


@needs_gcc
@pytest.mark.slow
def test_a_device_without_the_loader_is_refused(tmp_path, models_dir):
    """The host trusts the device's INFO, not the board record: an image
    without the loader (here a batch image on the host port) is refused."""
    _, found = extract_workloads(models_dir / "mlperf_kws_dscnn.tflite", M4)
    wl = found[-1]
    builder = Builder(load_board("host/native"), tmp_path / "work", cache_dir=tmp_path / "c")
    cands, _ = builder.candidates(wl, [wl.default])
    batch = builder.build(wl, cands)
    base = Base(wl, batch.project, batch.params, 0, 4096, {}, [], [], 0.0)
    with RamRunner(repeats=1) as runner, pytest.raises(LoaderUnavailable,
                                                       match="does not advertise"):
        runner.run(base, [])


@needs_arm
@pytest.mark.slow
def test_candidates_are_linked_at_the_region_against_the_base_tensors(dense, tmp_path):
    board = load_board(BOARD)
    builder = RamBuilder(board, tmp_path / "work", cache_dir=tmp_path / "cache")
    base = builder.base(dense)
    assert builder.base(dense) is base  # once per workload
    nm = subprocess.run(["arm-none-eabi-nm", "-S", str(base.project.elf)], capture_output=True,
                        text=True, check=True).stdout
    region = [line.split() for line in nm.splitlines() if line.endswith(REGION_SYMBOL)]
    assert (int(region[0][0], 16), int(region[0][1], 16)) == (base.origin, 256 * 1024)
    assert set(base.symbols) == {"tune_in0", "tune_out", "tune_expected"}

    cands, _ = builder.candidates(dense, list(dense.space)[:2])
    broken = Candidate("tune_broken", cands[0].configs, cands[0].source + "\n#error no\n",
                       cands[0].kernel)
    images = list(builder.images(base, [*cands, broken]))
    for img in images[:2]:
        assert not img.error and 0 < len(img.code) <= base.size
        assert img.entry % 2 == 1 and img.entry < len(img.code)  # Thumb, inside the image
    assert images[2].error.startswith("compile failed") and "#error no" in images[2].error
    # the loaded code addresses the base image's output tensor, nothing else of it
    elf = base.project.path.parent / "loaded" / cands[0].name / "candidate.elf"
    syms = subprocess.run(["arm-none-eabi-nm", str(elf)], capture_output=True, text=True,
                          check=True).stdout
    assert f"{base.symbols['tune_out']:08x} A tune_out" in syms
    assert struct.unpack_from("<I", elf.read_bytes(), 24)[0] == base.origin + images[0].entry


def _by_config(results):
    return {r.config.index: (r.status, r.cost) for r in results}


@pytest.mark.slow
@needs_arm
@needs_qemu
def test_ram_loaded_and_batch_images_measure_the_same(workloads, tmp_path):
    board = load_board(BOARD)
    cache = tmp_path / "cache"
    ram = RamBuilder(board, tmp_path / "ram", cache_dir=cache)
    images = Builder(board, tmp_path / "img", cache_dir=cache)
    with RamRunner(repeats=2) as runner:
        for wl in (workloads[-1], workloads[1]):  # dense, depthwise
            configs = list(wl.space)[:: max(1, len(wl.space) // 6)][:6]
            loaded = _by_config(measure_ram(ram, runner, wl, configs))
            packed = _by_config(measure(images, Runner(repeats=2), wl, configs))
            assert loaded == packed
            assert all(status == "ok" for status, _ in loaded.values())


@pytest.mark.slow
@needs_arm
@needs_qemu
def test_tuning_with_either_loader_gives_the_same_records(models_dir, tmp_path):
    model = models_dir / "mlperf_kws_dscnn.tflite"
    reports = {}
    for loader in ("ram", "image"):
        reports[loader] = tune_model(model, BOARD, trials=6, batch_size=3, repeats=1,
                                     log=tmp_path / f"{loader}.jsonl", loader=loader,
                                     only=["dense"], workdir=tmp_path / loader,
                                     cache_dir=tmp_path / "cache")
        assert reports[loader].loader == loader
    ram, image = reports["ram"].workloads[0], reports["image"].workloads[0]
    assert (ram.best_cost, ram.best_config, ram.default_cost) == \
        (image.best_cost, image.best_config, image.default_cost)
    from aot.tune import records as rec
    costs = {loader: {str(r.config): r.cost for r in rec.load(tmp_path / f"{loader}.jsonl")}
             for loader in reports}
    assert costs["ram"] == costs["image"]


def _broken(template: Candidate, name: str, body: str) -> Candidate:
    proto = template.kernel.prototype.replace(template.kernel.name, name).rstrip(";")
    return Candidate(name, template.configs[:1], f"#include <stdint.h>\n{proto} {{\n{body}\n}}\n",
                     template.kernel)


@pytest.mark.slow
@needs_arm
@needs_qemu
def test_loaded_candidates_that_crash_or_hang_are_recorded_and_the_session_goes_on(
        dense, tmp_path):
    board = load_board(BOARD)
    builder = RamBuilder(board, tmp_path / "work", cache_dir=tmp_path / "cache")
    good, _ = builder.candidates(dense, list(dense.space)[:3])
    silent = _broken(good[0], "tune_silent", "  (void)x0; (void)y1;\n  return 0;")
    crash = _broken(good[0], "tune_crash", "  (void)x0; (void)y1;\n"
                    "  __builtin_trap();\n  return 0;")
    wrong = _broken(good[0], "tune_wrong", "  (void)x0;\n  for (int i = 0; i < 12; ++i) "
                    "y1[i] = 7;\n  return 0;")
    hang = _broken(good[0], "tune_hang", "  (void)x0; (void)y1;\n  for (;;) {\n  }")
    nocompile = _broken(good[0], "tune_nocompile", "  return undeclared;")
    candidates = [good[0], silent, crash, good[1], wrong, hang, nocompile, good[2]]
    base = builder.base(dense)
    with RamRunner(repeats=2, timeout=2.0) as runner:
        results = runner.run(base, builder.images(base, candidates))
    status = [r.status for r in results[:len(candidates)]]
    assert status == ["ok", "wrong", "error", "ok", "wrong", "timeout", "build", "ok"]
    assert all(r.cost > 0 and len(r.timings) == 2 for r in results if r.ok)
    # the same kernels in a batch image cost the same
    packed = Runner(repeats=2).run(Builder(board, tmp_path / "img", cache_dir=tmp_path / "cache")
                                   .build(dense, [good[0], good[1], good[2]]))
    assert [r.cost for r in packed] == [r.cost for r in results if r.ok]
