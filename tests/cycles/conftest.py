"""Hand-written timing programs of the cycle-model tests, built once per session."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).parent
LINK = """SECTIONS {
  .text 0x0 : { KEEP(*(.vectors)) *(.text*) }
  .bss 0x20000000 : { *(.bss*) }
}
"""


def assemble(source: str, cpu: str, out: Path) -> Path:
    """An ELF of the assembly file ``source`` (beside this file) for ``cpu``."""
    if shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("needs arm-none-eabi-gcc (scripts/setup.sh installs it)")
    out.mkdir(parents=True, exist_ok=True)
    (out / "link.ld").write_text(LINK)
    elf = out / (Path(source).stem + ".elf")
    subprocess.run(["arm-none-eabi-gcc", f"-mcpu={cpu}", "-mthumb", "-nostdlib",
                    "-nostartfiles", "-T", str(out / "link.ld"), str(HERE / source),
                    "-o", str(elf)], check=True)
    return elf


@pytest.fixture(scope="session")
def loops_m4(tmp_path_factory):
    return assemble("loops_m4.s", "cortex-m4", tmp_path_factory.mktemp("m4"))


@pytest.fixture(scope="session")
def loop_m0plus(tmp_path_factory):
    return assemble("loops_m0plus.s", "cortex-m0plus", tmp_path_factory.mktemp("m0plus"))


@pytest.fixture(scope="session")
def helium_m55(tmp_path_factory):
    return assemble("helium_m55.s", "cortex-m55", tmp_path_factory.mktemp("m55"))
