"""Pre-tuned records shipped with aot (aot.tune.pretuned): applied by default to the
workloads and core they were made for, never elsewhere; off with --no-tuned-defaults."""

import json
from argparse import Namespace

import pytest
from aot.cli import main
from aot.commands.compile import kernel_library
from aot.target import Target, load_board
from aot.tune import pretuned
from aot.tune import records as rec
from aot.tune.errors import TuneError
from aot.tune.library import TunedKernels
from aot.tune.workload import extract_workloads
from aot.version import __version__

BOARD = "qemu/mps2-an386"


def _ship(directory, records, *, target=None, version=__version__, file="cortex-m4.jsonl"):
    """A shipped folder holding ``records`` as the log of ``target`` (default: the
    Cortex-M4's, without its tag)."""
    directory.mkdir(exist_ok=True)
    rec.append(directory / file, records)
    bundle = pretuned.Bundle(file, target or pretuned.code_target(load_board(BOARD).target),
                             BOARD, "instructions", ("mlperf_kws_dscnn",), 240.0, version,
                             "0123456789abcdef")
    (directory / pretuned.MANIFEST).write_text(json.dumps({"bundles": [bundle.to_json()]}))
    return bundle


@pytest.fixture
def kws_dense(models_dir):
    """KWS's dense workload on the Cortex-M4 and a record of a config other than the
    library's (so applying it changes the kernel)."""
    target = load_board(BOARD).target
    _, workloads = extract_workloads(models_dir / "mlperf_kws_dscnn.tflite", target)
    dense = workloads[-1]
    config = dense.space.config({**dense.default, "unroll_u": 4}).to_json()
    return dense, rec.Record(dense.key, dense.description, str(target), BOARD, config, "ok",
                             150, "instructions")


@pytest.fixture
def shipped(tmp_path, monkeypatch, kws_dense):
    monkeypatch.setattr(pretuned, "DIRECTORY", tmp_path / "pretuned")
    return _ship(tmp_path / "pretuned", [kws_dense[1]])


def test_the_log_of_a_core_applies_to_every_board_of_that_core(shipped, kws_dense):
    dense, record = kws_dense
    for tag in (BOARD, "st/nucleo-l4r5zi", "nordic/nrf52840dk"):
        target = load_board(tag).target
        bundle, records, notes = pretuned.for_target(target)
        assert bundle == shipped and notes == []
        # re-keyed to the target compiled for, so records.best takes them
        assert [(r.workload, r.config, r.target) for r in records] == \
            [(dense.key, record.config, str(target))]
    for tag in ("qemu/mps2-an500", "qemu/mps3-an547", "qemu/mps2-an385"):
        assert pretuned.for_target(load_board(tag).target) == (None, [], [])


def test_another_aot_version_is_not_applied(tmp_path, kws_dense):
    _ship(tmp_path, [kws_dense[1]], version="0.0.1")
    bundle, records, notes = pretuned.for_target(load_board(BOARD).target, tmp_path)
    assert bundle is not None and records == []
    assert notes == [f"the pre-tuned records cortex-m4.jsonl (tuned on {BOARD} at 01234567) "
                     f"were made by aot 0.0.1, this is aot {__version__}: not applied"]


def test_a_broken_manifest_or_log_is_an_error_naming_the_file(tmp_path, kws_dense):
    (tmp_path / pretuned.MANIFEST).write_text('{"bundles": [{"file": "x"}]}')
    with pytest.raises(TuneError, match=r"manifest.json: not a manifest of pre-tuned records"):
        pretuned.bundles(tmp_path)
    other = tmp_path / "other"
    _ship(other, [kws_dense[1]], target="c -keys=arm_cpu,cpu -mcpu=cortex-m7")
    with pytest.raises(TuneError, match=r"cortex-m4.jsonl: a record for .* in the log of "
                                        r"c -keys=arm_cpu,cpu -mcpu=cortex-m7"):
        pretuned.for_target(Target("c -keys=arm_cpu,cpu -mcpu=cortex-m7"), other)


def test_shipped_records_keep_the_default_stream_stage(shipped):
    tuned, notes = TunedKernels.shipped_for(load_board(BOARD).target)
    assert notes == [] and tuned.shipped == shipped and not tuned.whole_layers_only
    mine, _ = TunedKernels.from_log([], load_board(BOARD).target)
    assert mine.shipped is None and mine.whole_layers_only


@pytest.mark.slow
def test_aot_compile_applies_them_and_says_so(shipped, tmp_path, models_dir, capsys):
    model = str(models_dir / "mlperf_kws_dscnn.tflite")
    assert main(["compile", model, "--board", BOARD, "-o", str(tmp_path / "a"),
                 "--no-code-size"]) == 0
    out = capsys.readouterr().out
    assert ("pre-tuned records applied to 1 of 10 tunable kernels (cortex-m4.jsonl (tuned on "
            "qemu/mps2-an386 at 01234567); --no-tuned-defaults: the library's schedules)") in out
    assert main(["compile", model, "--board", BOARD, "-o", str(tmp_path / "b"),
                 "--no-code-size", "--no-tuned-defaults"]) == 0
    assert "pre-tuned" not in capsys.readouterr().out
    changed = [p.name for p in sorted((tmp_path / "a" / "codegen").iterdir())
               if p.read_bytes() != (tmp_path / "b" / "codegen" / p.name).read_bytes()]
    assert len(changed) == 1   # the dense layer's kernel only
    assert "aot_dense" in (tmp_path / "a" / "codegen" / changed[0]).read_text()
    # an llvm compile takes none of gcc's records
    assert main(["compile", model, "--board", BOARD, "--codegen", "llvm", "-o",
                 str(tmp_path / "c"), "--no-code-size"]) == 0
    assert "pre-tuned" not in capsys.readouterr().out


def test_the_users_records_replace_them(shipped, tmp_path, kws_dense):
    log = tmp_path / "mine.jsonl"
    rec.append(log, [kws_dense[1]])
    board = load_board(BOARD)
    args = Namespace(tuning_records=[str(log)], tuned_defaults=True, codegen=None)
    assert kernel_library(args, board.target, board).shipped is None
    args = Namespace(tuning_records=None, tuned_defaults=True, codegen=None)
    assert kernel_library(args, board.target, board).shipped == shipped
    args = Namespace(tuning_records=None, tuned_defaults=True, codegen="llvm")
    assert kernel_library(args, board.target, board) is None
    args = Namespace(tuning_records=None, tuned_defaults=False, codegen=None)
    assert kernel_library(args, board.target, board) is None
