"""``--json`` on every command: stdout holds exactly one strict JSON document
(no NaN or Infinity), with the keys docs/cli.md documents for the command."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from support.models import MODELS_DIR

from aot.cli import main
from aot.commands import COMMANDS

ROOT = Path(__file__).resolve().parents[2]
HELLO = str(MODELS_DIR / "tflm_hello_world_int8.tflite")
BOARD = "qemu/mps2-an386"


def _strict(text: str):
    return json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} is not JSON"))


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """A compiled artifact and a project of hello for the emulated board (unbuilt)."""
    root = tmp_path_factory.mktemp("json")
    assert main(["compile", HELLO, "--board", BOARD, "-o", str(root / "art")]) == 0
    assert main(["project", "create", "--board", BOARD, "--artifact", str(root / "art"),
                 "-o", str(root / "proj")]) == 0
    np.save(root / "x.npy", np.array([[[3]], [[-7]]], np.int8))
    return root


def _argv(name: str, work: Path, tmp: Path) -> list[str]:
    """A successful invocation of every command (the slow ones run only with -m slow)."""
    x = str(work / "x.npy")
    return {
        "inspect": ["inspect", HELLO],
        "operators": ["operators"],
        "interpret": ["interpret", HELLO, "--input", x],
        "compile": ["compile", HELLO, "--board", BOARD, "-o", str(tmp / "c"),
                    "--memory-report"],
        "run": ["run", HELLO, "--input", x, "--output", str(tmp / "y.npy")],
        "boards": ["boards"],
        "target": ["target", "show", "c -mcpu=cortex-m4"],
        "project": ["project", "create", "--board", BOARD, "--artifact", str(work / "art"),
                    "-o", str(tmp / "p")],
        "build": ["build", str(work / "proj")],
        "flash": ["flash", str(work / "proj"), "--dry-run"],
        "verify": ["verify", HELLO, "--board", BOARD, "--random", "1",
                   "--report", str(tmp / "r.json")],
        "profile": ["profile", HELLO, "--board", BOARD],
        "tune": ["tune", HELLO, "--board", BOARD, "--trials", "1", "--batch", "1",
                 "--repeats", "1", "--log", str(tmp / "tune.log")],
        "config": ["config"],
    }[name]


#: The keys each command's document has at least (docs/cli.md lists them all).
KEYS = {
    "inspect": {"name", "inputs", "outputs"},
    "operators": {"tflite_builtin", "imported_as", "reference"},
    "interpret": {"model", "invocations", "inputs", "output", "outputs"},
    "compile": {"model", "target", "board", "output", "sizes", "memory_chart"},
    "run": {"model", "board", "invocations", "inputs", "output", "sizes", "outputs"},
    "boards": {"tag"},
    "target": {"kind", "keys"},
    "project": {"project", "model", "board"},
    "build": {"elf", "compiled", "sizes"},
    "flash": {"board", "runner", "argv", "port"},
    "verify": {"model", "board", "passed", "outputs", "invocations", "device"},
    "profile": {"model", "board"},
    "tune": {"model", "board", "measured", "workloads", "log"},
    "config": {"cmake-dir", "cmake-prefix", "runtime-dir"},
}
SLOW = {"build", "verify", "profile", "tune"}


def test_every_command_has_a_case_and_a_section_in_docs_cli_md():
    names = {m.NAME for m in COMMANDS}
    assert set(KEYS) == names
    doc = (ROOT / "docs" / "cli.md").read_text()
    documented = set(re.findall(r"^### `aot (\w+)", doc, re.M))
    assert documented == names


@pytest.mark.parametrize("name", [
    pytest.param(m.NAME, marks=pytest.mark.slow) if m.NAME in SLOW else m.NAME
    for m in COMMANDS])
def test_json_output_parses(name, work, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("AOT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    assert main([*_argv(name, work, tmp_path), "--json"]) == 0
    out = capsys.readouterr().out
    data = _strict(out)
    first = data[0] if isinstance(data, list) else data
    assert KEYS[name] <= set(first), sorted(first)


def test_the_documented_keys_are_in_docs_cli_md():
    doc = (ROOT / "docs" / "cli.md").read_text()
    for name, keys in KEYS.items():
        section = doc.split(f"### `aot {name}", 1)[1].split("\n### ", 1)[0]
        missing = [k for k in keys if f"`{k}`" not in section]
        assert missing == [], f"aot {name}: {missing}"
