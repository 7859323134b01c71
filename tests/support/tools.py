"""Skip markers for tests that need tools outside Python."""

from __future__ import annotations

import shutil

import pytest

#: QEMU for Arm and the Arm cross compiler: firmware built and run on an emulated board.
needs_arm_qemu = pytest.mark.skipif(
    shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None,
    reason="needs qemu-system-arm and arm-none-eabi-gcc")
