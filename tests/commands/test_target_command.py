"""`aot target show` and `aot target kinds` as a user runs them."""

import json
import subprocess
import sys

import pytest

from aot.cli import main
from aot.target import Target


def test_show_json_prints_the_canonical_target(capsys):
    assert main(["target", "show", "qemu/mps2-an386", "--json"]) == 0
    out = capsys.readouterr().out.strip()
    assert out == Target("qemu/mps2-an386").to_json()
    assert json.loads(out) == {
        "kind": "c",
        "keys": ["arm_cpu", "cpu"],
        "mcpu": "cortex-m4",
        "mfloat-abi": "hard",
        "mfpu": "fpv4-sp-d16",
        "tag": "qemu/mps2-an386",
    }


def test_show_text(capsys):
    assert main(["target", "show", "c -mfloat-abi=hard -mcpu=cortex-m55"]) == 0
    out = capsys.readouterr().out
    assert "string   c -keys=arm_cpu,cpu -mcpu=cortex-m55 -mfloat-abi=hard\n" in out
    assert f"digest   {Target('c -mcpu=cortex-m55 -mfloat-abi=hard').digest()}" in out
    assert "has_mve      true" in out and "vector_bytes 16" in out


def test_kinds(capsys):
    assert main(["target", "kinds", "--json"]) == 0
    kinds = json.loads(capsys.readouterr().out)
    assert [k["kind"] for k in kinds] == ["c", "llvm", "composite"]
    assert {"name": "opt-level", "type": "int", "default": 3}.items() <= kinds[1]["attrs"][
        -3
    ].items()
    assert main(["target", "kinds"]) == 0
    assert "-mcpu" in capsys.readouterr().out


@pytest.mark.parametrize(
    "arg, message",
    [
        ("qemu/mps2-an368", "did you mean 'qemu/mps2-an386'?"),
        ("c -mcpuu=cortex-m4", "did you mean -mcpu?"),
        ("cc", "did you mean 'c'?"),
    ],
)
@pytest.mark.one_fast
def test_bad_targets_exit_2(arg, message):
    proc = subprocess.run(
        [sys.executable, "-m", "aot", "target", "show", arg], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert message in proc.stderr
    assert proc.stderr.startswith("aot target: error: ")
    assert "Traceback" not in proc.stderr
