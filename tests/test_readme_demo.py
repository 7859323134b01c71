"""README.md's demo block is what `make demo` prints, each number within 1%.

The demo (scripts/demo.sh) compiles KWS, runs it under QEMU and verifies it:
about a minute, so the test is slow.  Each line of the README's block must
match one line the demo prints, word for word, with every number within 1%
of the printed one; ``(...)`` in the README stands for any text.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NUMBER = r"(\d[\d,]*(?:\.\d+)?)"


def readme_demo_block(text: str) -> list[str]:
    """The lines of the first fenced block after the README's "`make demo` compiles"."""
    after = text[text.index("`make demo` compiles"):]
    block = re.search(r"```\n(.*?)```", after, re.S)
    return [line for line in block.group(1).splitlines() if line.strip()]


def line_pattern(line: str) -> re.Pattern:
    """A README line as a pattern: its numbers captured, ``(...)`` any text."""
    parts = re.split(NUMBER, line.rstrip())
    out = "".join(NUMBER if i % 2 else re.escape(p) for i, p in enumerate(parts))
    return re.compile(out.replace(re.escape("(...)"), r"\(.*\)"))


def _n(x: float) -> str:
    return f"{int(x):,}" if x == int(x) else f"{x:,}"


def differences(readme: list[str], printed: list[str]) -> list[str]:
    """What differs: README lines no printed line matches, and numbers off by over 1%."""
    problems = []
    for line in readme:
        pattern = line_pattern(line)
        want = [float(n.replace(",", "")) for n in re.findall(NUMBER, line)]
        hits = [m for m in map(pattern.fullmatch, (p.rstrip() for p in printed)) if m]
        if not hits:
            problems.append(f"README line not printed by the demo: {line!r}")
            continue
        got = [float(n.replace(",", "")) for n in hits[0].groups()]
        for w, g in zip(want, got, strict=True):
            if abs(w - g) > 0.01 * max(abs(w), abs(g)):
                problems.append(f"{line!r}: README says {_n(w)}, the demo printed {_n(g)}")
    return problems


def test_the_comparison_catches_stale_numbers_and_changed_words():
    readme = ["instructions per inference: 4,528,587", "flash: 56,060 bytes (weights 32,588)",
              "PASS: kws on qemu/mps2-an386, 3 invocations (...)"]
    printed = ["instructions per inference: 4,164,629", "flash: 56,100 bytes (constants 1)",
               "PASS: kws on qemu/mps2-an386, 3 invocations (1 from x.npy)"]
    assert differences(readme, printed) == [
        "'instructions per inference: 4,528,587': README says 4,528,587, the demo printed "
        "4,164,629",
        "README line not printed by the demo: 'flash: 56,060 bytes (weights 32,588)'"]
    assert differences(["a 100 b"], ["a 100.9 b"]) == []


@pytest.mark.slow
@pytest.mark.qemu
@pytest.mark.skipif(not (shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-gcc")),
                    reason="the demo needs QEMU and the Arm cross compiler (scripts/setup.sh)")
def test_readme_demo_block_matches_what_the_demo_prints(tmp_path):
    env = {**os.environ, "DEMO_AOT": f"{sys.executable} -m aot", "DEMO_PYTHON": sys.executable,
           "DEMO_OUT": str(tmp_path), "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "demo.sh")], env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    readme = readme_demo_block((ROOT / "README.md").read_text())
    assert differences(readme, proc.stdout.splitlines()) == []
