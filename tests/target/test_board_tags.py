"""Board records: lookup, aliases, versions, schema rejection, consistency of the data."""

import re
import tomllib
from pathlib import Path

import pytest

from aot.target import (
    BOARDS_DIR,
    DEFAULT_BOARD,
    BoardError,
    TargetError,
    list_boards,
    load_board,
    load_board_file,
)

EMULATED = [
    "qemu/microbit",
    "qemu/mps2-an385",
    "qemu/mps2-an386",
    "qemu/mps2-an500",
    "qemu/mps2-an505",
    "qemu/mps2-an521",
    "qemu/mps3-an547",
    "qemu/netduinoplus2",
    "qemu/sifive-e",
]
REAL = [
    "st/nucleo-f746zg",
    "st/nucleo-l4r5zi",
    "nordic/nrf52840dk",
    "raspberrypi/pico",
    "espressif/esp32c3-devkitm",
]
ALL = sorted(EMULATED + REAL + ["host/native"])
BOARDS = list_boards()


def test_the_board_list_is_exactly_the_shipped_boards():
    assert [b.tag for b in BOARDS] == ALL
    assert DEFAULT_BOARD == "qemu/mps2-an386"


def test_one_lookup_gives_everything():
    b = load_board("qemu/mps2-an386")
    assert b.tag == "qemu/mps2-an386" and b.versioned_tag == "qemu/mps2-an386:v1"
    assert b.emulated and b.platform == "qemu" and b.verified == "qemu"
    assert b.target.attrs["mcpu"] == "cortex-m4" and b.target.tag == b.tag
    assert b.toolchain.prefix == "arm-none-eabi-" and b.toolchain.tool("gcc") == "arm-none-eabi-gcc"
    assert "-mfpu=fpv4-sp-d16" in b.toolchain.cpu_flags
    assert (b.memory.flash.origin, b.memory.flash.length) == (0, 4 << 20)
    assert (b.memory.ram.origin, b.memory.ram.end) == (0x20000000, 0x20400000)
    assert b.memory.pool("psram").length == 16 << 20
    assert b.port == "mps2"
    assert b.runner.name == "qemu"
    assert (b.qemu.system, b.qemu.machine) == ("qemu-system-arm", "mps2-an386")
    assert (b.console.kind, b.console.base) == ("cmsdk_uart", 0x40004000)
    assert (b.timer.kind, b.timer.icount_instructions_per_tick) == ("systick", 40)
    assert b.note


def test_linker_memory_block():
    assert load_board("st/nucleo-f746zg").memory.linker_memory() == (
        "MEMORY\n"
        "{\n"
        "  FLASH (rx) : ORIGIN = 0x08000000, LENGTH = 0x00100000\n"
        "  RAM (rwx) : ORIGIN = 0x20010000, LENGTH = 0x00040000\n"
        "  DTCM (rwx) : ORIGIN = 0x20000000, LENGTH = 0x00010000\n"
        "  ITCM (rwx) : ORIGIN = 0x00000000, LENGTH = 0x00004000\n"
        "}\n"
    )


def test_timer_facts():
    assert load_board("qemu/mps3-an547").timer.icount_instructions_per_tick == 31.25
    assert load_board("qemu/sifive-e").timer.kind == "rdinstret"


def test_unknown_pool():
    with pytest.raises(BoardError, match=r"no memory pool 'dtcn' \(did you mean 'dtcm'\?\)"):
        load_board("st/nucleo-f746zg").memory.pool("dtcn")


def test_aliases_and_versions():
    assert load_board("qemu/an386") is load_board("qemu/mps2-an386")
    assert load_board("qemu/mps2-an386:v1") is load_board("qemu/mps2-an386")
    assert load_board("qemu/an386:v1").tag == "qemu/mps2-an386"
    with pytest.raises(BoardError, match=r"at version v1, not v2; use qemu/mps2-an386:v1"):
        load_board("qemu/mps2-an386:v2")
    with pytest.raises(BoardError, match="a version is written :v1"):
        load_board("qemu/mps2-an386:latest")


def test_unknown_tag():
    with pytest.raises(TargetError, match=r"unknown board tag 'st/nucleo-f746' \(did you mean"):
        load_board("st/nucleo-f746")


@pytest.mark.parametrize("board", BOARDS, ids=lambda b: b.tag)
def test_record_is_consistent(board):
    """The data agrees with itself: flags match the target, memory is sane, facts are marked."""
    t = board.target
    flags = board.toolchain.cpu_flags
    for name in ("mcpu", "march", "mabi", "mfloat-abi", "mfpu"):
        if t.attrs[name] is not None:
            assert f"-{name}={t.attrs[name]}" in flags, name
    if t.family == "arm":
        assert board.toolchain.prefix == "arm-none-eabi-" and "-mthumb" in flags
    if t.family == "riscv":
        assert board.toolchain.prefix == "riscv64-unknown-elf-"
    assert board.emulated == (board.qemu is not None)
    if board.platform == "hardware":
        assert board.verified == "build" and "not verified on hardware" in board.note.lower()
        assert board.console.usb
        for usb in board.console.usb:
            assert re.fullmatch(r"[0-9a-f]{4}:[0-9a-f]{4}", usb)
        assert board.timer.icount_instructions_per_tick is None
    if board.memory is not None:
        regions = sorted(board.memory.regions(), key=lambda r: r.origin)
        for a, b in zip(regions, regions[1:], strict=False):
            assert a.end <= b.origin, f"{a.name} overlaps {b.name}"
    assert board.path.relative_to(BOARDS_DIR).with_suffix("").as_posix() == board.tag


def test_verified_says_how_far_each_record_was_checked():
    from aot.target.records import _schema

    assert _schema()["properties"]["verified"]["enum"] == ["hardware", "qemu", "build"]
    for board in BOARDS:
        expected = {"qemu": "qemu", "host": "hardware", "hardware": "build"}[board.platform]
        assert board.verified == expected, board.tag


def test_board_to_dict_is_json_ready():
    import json

    d = load_board("qemu/mps3-an547").to_dict()
    assert json.loads(json.dumps(d))["target_json"]["mcpu"] == "cortex-m55"
    assert d["memory"]["pools"][0]["name"] == "sram"


# -- schema rejection ---------------------------------------------------------------
GOOD = (BOARDS_DIR / "qemu" / "mps2-an386.toml").read_text()


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "broken.toml"
    path.write_text(text)
    return path


def test_a_copy_of_a_good_record_loads(tmp_path):
    assert load_board_file(write(tmp_path, GOOD)).target == load_board(DEFAULT_BOARD).target


@pytest.mark.parametrize(
    "old, new, message",
    [
        ('port = "mps2"\n', "", r"missing required field 'port'"),
        (
            "flash = { origin = 0x0000_0000, length = 0x0040_0000 }",
            "flash = { length = 4 }",
            r"missing required field 'memory.flash.origin'",
        ),
        ("version = 1", 'version = "1"', r"field 'version': '1' is not of type 'integer'"),
        ("baud = 115200", "baud = 1.5", r"field 'console.baud': 1.5 is not of type 'integer'"),
        (
            'port = "mps2"',
            'port = "mps2"\nrunner = "qemu"',
            r"unknown field 'runner' \(did you mean 'runners'\?\); allowed here: aliases, clock_hz",
        ),
        (
            "[console]\n",
            "[console]\nbsae = 1\n",
            r"unknown field 'console.bsae' \(did you mean 'base'\?\)",
        ),
        ('port = "mps2"', 'port = "mps9"', r"field 'port': 'mps9' is not one of"),
        ("[qemu]\n", "[qemux]\n", r"unknown field 'qemux'"),
        ('name = "qemu"', 'name = "jtag"', r"field 'runners.0.name': 'jtag' is not one of"),
        (
            "-mcpu=cortex-m4 ",
            "-mcpuu=cortex-m4 ",
            r"field 'target': .*no attribute -mcpuu \(did you mean -mcpu\?\)",
        ),
        ('target = "c', 'target = "c -tag=qemu/x', r"field 'target': leave -tag out"),
        (
            'tag = "qemu/mps2-an386"',
            'tag = "mps2-an386"',
            r"field 'tag': 'mps2-an386' does not match",
        ),
        (
            'platform = "qemu"',
            'platform = "hardware"',
            r"field 'qemu' does not apply to platform 'hardware'; remove it",
        ),
        (
            'platform = "qemu"',
            'platform = "host"',
            r"fields 'qemu', 'memory' do not apply to platform 'host'; remove them",
        ),
        ("[qemu]\n", "[qemu]\nmachine = 'x'\n[fake]\n", r"unknown field"),
        ('verified = "qemu"', 'verified = "emulator"',
         r"field 'verified': 'emulator' is not one of \['hardware', 'qemu', 'build'\]"),
        ("[console]\n", '[image]\nformat = "uf2"\n[console]\n',
         r"missing required field 'image.uf2_family'"),
        ("[console]\n", '[image]\nformat = "esp"\nesp_chip = "esp32c3"\n[console]\n',
         r"missing required field 'image.offset'"),
        ("[console]\n", '[image]\nformat = "hex"\n[console]\n',
         r"field 'image.format': 'hex' is not one of"),
        ("[memory]", "[memory\n", r"not valid TOML"),
        ("[memory]\n", "[memory]\nstack_bytes = 100\n",
         r"field 'memory.stack_bytes': 100 is less than the minimum of 256"),
        ("[memory]\n", "[memory]\nstack_bytes = 0x0040_0000\n",
         r"field 'memory.stack_bytes': 4194304 bytes of stack leave nothing of the 4194304 "
         r"bytes of RAM"),
    ],
)
def test_schema_rejects_broken_files(tmp_path, old, new, message):
    assert old in GOOD
    path = write(tmp_path, GOOD.replace(old, new, 1))
    with pytest.raises(BoardError, match=message) as err:
        load_board_file(path)
    assert str(path) in str(err.value)


def test_missing_file(tmp_path):
    with pytest.raises(BoardError, match="cannot read the board file"):
        load_board_file(tmp_path / "nope.toml")


def test_a_boards_directory_is_checked_for_clashes(tmp_path):
    (tmp_path / "qemu").mkdir()
    (tmp_path / "qemu" / "mps2-an386.toml").write_text(GOOD)
    (tmp_path / "qemu" / "other.toml").write_text(GOOD)
    with pytest.raises(
        BoardError,
        match=r"other.toml: field 'tag': is 'qemu/mps2-an386', the path says 'qemu/other'",
    ):
        list_boards(tmp_path)
    (tmp_path / "qemu" / "other.toml").write_text(
        GOOD.replace('tag = "qemu/mps2-an386"', 'tag = "qemu/other"')
    )
    with pytest.raises(BoardError, match=r"alias 'qemu/an386' is also used by qemu/mps2-an386"):
        list_boards(tmp_path)


def test_a_separate_boards_directory(tmp_path):
    (tmp_path / "acme").mkdir()
    text = GOOD.replace('tag = "qemu/mps2-an386"', 'tag = "acme/dev"').replace(
        'aliases = ["qemu/an386"]', 'aliases = ["acme/devkit"]'
    )
    (tmp_path / "acme" / "dev.toml").write_text(text)
    assert [b.tag for b in list_boards(tmp_path)] == ["acme/dev"]
    assert load_board("acme/devkit", tmp_path).target.tag == "acme/dev"


def test_every_file_is_valid_toml_with_its_path_as_tag():
    files = sorted(BOARDS_DIR.glob("*/*.toml"))
    assert len(files) == len(ALL)
    for f in files:
        assert tomllib.loads(f.read_text())["tag"] == f"{f.parent.name}/{f.stem}"


def test_a_bad_target_in_a_board_file_is_named_by_target_too(tmp_path, monkeypatch):
    """Target("vendor/board") reads only that record: a bad target string there is
    the file's fault and the error names the file, as load_board's does."""
    import aot.target.records as records
    import aot.target.target as target_module
    from aot.target import Target

    (tmp_path / "acme").mkdir()
    text = re.sub(r'(?m)^target = .*$', 'target = "c -mcpu=cortex-m4 -nonsense=1"',
                  GOOD.replace('tag = "qemu/mps2-an386"', 'tag = "acme/dev"').replace(
                      'aliases = ["qemu/an386"]', 'aliases = ["acme/devkit"]'))
    (tmp_path / "acme" / "dev.toml").write_text(text)
    monkeypatch.setattr(records, "BOARDS_DIR", tmp_path)
    target_module._board_target.cache_clear()
    try:
        with pytest.raises(BoardError, match=r"dev\.toml: field 'target': .*nonsense"):
            Target("acme/dev")
    finally:
        target_module._board_target.cache_clear()


def test_checked_json_lists_the_shipped_records_as_they_are():
    from aot.target.check_records import checked_stale

    assert checked_stale() is None


def _validations(monkeypatch) -> list:
    import jsonschema

    calls = []
    real = jsonschema.Draft202012Validator
    monkeypatch.setattr(jsonschema, "Draft202012Validator",
                        lambda schema: calls.append(schema) or real(schema))
    return calls


def test_a_shipped_record_as_checked_is_not_validated_again(monkeypatch):
    from aot.target.records import read_record

    calls = _validations(monkeypatch)
    assert read_record(BOARDS_DIR / "qemu" / "mps2-an386.toml")["tag"] == "qemu/mps2-an386"
    assert calls == []
    read_record(BOARDS_DIR / "qemu" / "mps2-an386.toml", check=True)
    assert len(calls) == 1


def test_a_shipped_record_edited_since_it_was_checked_is_validated(monkeypatch, tmp_path):
    import aot.target.records as records

    calls = _validations(monkeypatch)
    monkeypatch.setattr(records, "_checked", lambda: {"qemu/mps2-an386.toml": "0" * 64})
    records.read_record(BOARDS_DIR / "qemu" / "mps2-an386.toml")
    assert len(calls) == 1
    # a copy elsewhere is never taken for the shipped file
    monkeypatch.undo()
    calls = _validations(monkeypatch)
    copy = tmp_path / "qemu" / "mps2-an386.toml"
    copy.parent.mkdir()
    copy.write_text((BOARDS_DIR / "qemu" / "mps2-an386.toml").read_text())
    records.read_record(copy)
    assert len(calls) == 1


def test_a_checked_list_for_another_schema_trusts_nothing(monkeypatch, tmp_path):
    import json

    import aot.target.records as records

    stale = tmp_path / "checked.json"
    data = json.loads(records.CHECKED.read_text())
    stale.write_text(json.dumps({**data, "schema": "0" * 64}))
    monkeypatch.setattr(records, "CHECKED", stale)
    records._checked.cache_clear()
    try:
        assert records._checked() == {}
        stale.write_text("{not json")
        records._checked.cache_clear()
        assert records._checked() == {}
    finally:
        monkeypatch.undo()
        records._checked.cache_clear()
