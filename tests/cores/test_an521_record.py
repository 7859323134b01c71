"""The dual-core board record qemu/mps2-an521: its [cores] section and its checks.

Every shared model runs bit-exact on the board's core 0 alone (slow, QEMU)
through ``aot verify``'s path; the second core stays held by CPUWAIT.
"""

from __future__ import annotations

import pytest
from support.models import MODELS, MODELS_DIR

from aot.firmware.verify import verify_model
from aot.target import BoardError, Cores, load_board, load_board_file

AN521 = "qemu/mps2-an521"
RECORD = load_board(AN521).path.read_text()


def test_the_record_declares_two_cores_and_their_shared_memories():
    cores = load_board(AN521).cores
    assert (cores.count, cores.start) == (2, "sse200_cpuwait")
    assert (cores.sysctl_base, cores.identity_base) == (0x5002_1000, 0x4001_F000)
    assert cores.shared == ("ram", "sse_sram", "ssram3")


def test_a_record_without_cores_has_one():
    assert load_board("qemu/mps2-an505").cores == Cores()
    assert load_board("qemu/mps2-an505").cores.count == 1


def test_core_0_has_no_dsp_and_no_fpu_so_the_target_says_so():
    target = load_board(AN521).target
    assert not target.has_dsp and not target.has_fpu


def _broken(tmp_path, old, new):
    assert old in RECORD
    path = tmp_path / "qemu" / "mps2-an521.toml"
    path.parent.mkdir()
    path.write_text(RECORD.replace(old, new))
    return path


def test_a_shared_memory_the_record_lacks_is_refused_by_name(tmp_path):
    path = _broken(tmp_path, 'shared = ["ram", "sse_sram", "ssram3"]',
                   'shared = ["ram", "sram9"]')
    with pytest.raises(BoardError, match=r"'cores.shared': 'sram9' is not a data memory of "
                                         r"the record; memories: \['ram', 'sse_sram', 'ssram3'\]"):
        load_board_file(path)


def test_the_start_method_needs_its_registers(tmp_path):
    path = _broken(tmp_path, "sysctl_base = 0x5002_1000", "")
    with pytest.raises(BoardError, match=r"start = 'sse200_cpuwait' needs cores.sysctl_base"):
        load_board_file(path)


def test_an_unknown_start_method_is_refused(tmp_path):
    path = _broken(tmp_path, 'start = "sse200_cpuwait"', 'start = "magic"')
    with pytest.raises(BoardError, match=r"cores.start"):
        load_board_file(path)


@pytest.mark.slow
@pytest.mark.qemu
@pytest.mark.parametrize("model", [m["file"] for m in MODELS], ids=[m["name"] for m in MODELS])
def test_shared_model_is_bit_exact_on_core_0(model, object_cache, tmp_path):
    path = MODELS_DIR / model
    report = verify_model(path, AN521, workdir=tmp_path, cache_dir=object_cache)
    assert report.passed, report.summary()
    if path.suffix != ".onnx" and "float" not in path.stem:
        assert all(o.exact for o in report.outputs), report.summary()
    assert report.to_json()["instructions_per_inference"] > 0


def test_each_core_has_the_cortex_m33_cycle_model():
    """The record's cpu names the core table (aot profile estimates cycles with it);
    the two-core fact lives in [cores], not in the cpu string."""
    from aot.cycles.cores import core_for_board

    assert core_for_board(load_board(AN521)) == core_for_board(load_board("qemu/mps2-an505"))
