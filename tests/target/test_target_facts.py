"""Derived facts per CPU: instruction set, DSP, FPU, MVE, pointer and vector width."""

import pytest

from aot.target import Target, TargetError, load_board

ARM, RISCV = ("arm_cpu", "cpu"), ("riscv", "cpu")

# target, isa, has_dsp, fpu, has_mve, pointer_bits, vector_bytes, keys
# fmt: off
CASES = [
    ("c -mcpu=cortex-m0plus", "thumbv6m", False, None, False, 32, 4, ARM),
    ("c -mcpu=cortex-m3 -mfloat-abi=soft", "thumbv7m", False, None, False, 32, 4, ARM),
    ("c -mcpu=cortex-m4 -mfloat-abi=hard", "thumbv7em", True, "fpv4-sp-d16", False, 32, 4, ARM),
    # soft float ABI: the FPU exists but generated code may not use it
    ("c -mcpu=cortex-m4", "thumbv7em", True, None, False, 32, 4, ARM),
    ("c -mcpu=cortex-m4+nofp -mfloat-abi=hard", "thumbv7em", True, None, False, 32, 4, ARM),
    ("c -mcpu=cortex-m7 -mfloat-abi=hard -mfpu=fpv5-sp-d16",
     "thumbv7em", True, "fpv5-sp-d16", False, 32, 4, ARM),
    ("c -mcpu=cortex-m7 -mfloat-abi=softfp", "thumbv7em", True, "fpv5-d16", False, 32, 4, ARM),
    ("c -mcpu=cortex-m33+nodsp -mfloat-abi=hard",
     "thumbv8m.main", False, "fpv5-sp-d16", False, 32, 4, ARM),
    ("c -mcpu=cortex-m55 -mfloat-abi=hard",
     "thumbv8.1m.main", True, "fp-armv8-fullfp16-d16", True, 32, 16, ARM),
    ("c -mcpu=cortex-m55+nomve -mfloat-abi=hard",
     "thumbv8.1m.main", True, "fp-armv8-fullfp16-d16", False, 32, 4, ARM),
    ("llvm -mcpu=cortex-m55 -mattr=-mve", "thumbv8.1m.main", True, None, False, 32, 4, ARM),
    ("llvm -mtriple=thumbv7em-none-eabihf", "thumbv7em", True, None, False, 32, 4, ARM),
    ("c -march=armv7e-m", "thumbv7em", True, None, False, 32, 4, ARM),
    ("c -march=armv8.1-m.main+mve", "thumbv8.1m.main", True, None, True, 32, 16, ARM),
    ("c -march=rv32imac -mabi=ilp32", "rv32imac", False, None, False, 32, 4, RISCV),
    ("c -march=rv32imac_zicsr", "rv32imac", False, None, False, 32, 4, RISCV),
    ("c -march=rv32imafc", "rv32imafc", False, "f", False, 32, 4, RISCV),
    ("c -march=rv64gc", "rv64gc", False, "d", False, 64, 8, RISCV),
    ("c -march=rv32imcv", "rv32imcv", False, None, False, 32, 16, RISCV),
    ("llvm -mtriple=riscv32-unknown-elf", "rv32i", False, None, False, 32, 4, RISCV),
    ("c -mtriple=x86_64-linux-gnu", "x86_64", False, "sse2", False, 64, 16, ("cpu",)),
    ("llvm -mtriple=x86_64-linux-gnu -mattr=+avx2",
     "x86_64", False, "sse2", False, 64, 32, ("cpu",)),
    ("llvm -mtriple=x86_64-linux-gnu -mattr=+avx2,+avx512f",
     "x86_64", False, "sse2", False, 64, 64, ("cpu",)),
    ("c -mtriple=aarch64-linux-gnu", "aarch64", False, "neon", False, 64, 16, ("cpu",)),
    ("c", None, False, None, False, None, None, ("cpu",)),
]
# fmt: on


@pytest.mark.parametrize("text, isa, dsp, fpu, mve, ptr, vec, keys", CASES)
def test_derived_facts(text, isa, dsp, fpu, mve, ptr, vec, keys):
    t = Target(text)
    assert t.isa == isa
    assert t.has_dsp is dsp
    assert t.fpu == fpu
    assert t.has_fpu is (fpu is not None)
    assert t.has_mve is mve
    assert t.pointer_bits == ptr
    assert t.vector_bytes == vec
    assert t.keys == keys


def test_device_attribute_adds_a_key():
    assert Target("c -device=arm_cpu").keys == ("arm_cpu", "cpu")
    assert Target("c -device=arm_cpu -mcpu=cortex-m4").keys == ("arm_cpu", "cpu")
    assert Target("c -device=npu").keys == ("npu", "cpu")


def test_triples():
    assert Target("c -mcpu=cortex-m4 -mfloat-abi=hard").triple == "thumbv7em-none-eabihf"
    assert Target("c -mcpu=cortex-m3").triple == "thumbv7m-none-eabi"
    assert Target("c -march=rv32imac").triple == "riscv32-unknown-elf"
    assert Target("c -mtriple=x86_64-linux-gnu").triple == "x86_64-linux-gnu"
    assert Target("c").triple is None


def test_float_abi():
    assert Target("c -mcpu=cortex-m4").float_abi == "soft"
    assert Target("llvm -mtriple=thumbv7em-none-eabihf").float_abi == "hard"
    assert Target("c -march=rv32imac").float_abi is None


def test_composite_has_no_processor_facts():
    t = Target("composite -targets={c -mcpu=cortex-m55 -mfloat-abi=hard}")
    assert t.isa is None and not t.has_mve and t.vector_bytes is None
    assert t.targets[0].has_mve


# The boards' facts, as their datasheets state them.
BOARD_FACTS = {
    "qemu/microbit": ("thumbv6m", False, False, False, 4),
    "qemu/mps2-an385": ("thumbv7m", False, False, False, 4),
    "qemu/mps2-an386": ("thumbv7em", True, True, False, 4),
    "qemu/mps2-an500": ("thumbv7em", True, True, False, 4),
    "qemu/mps2-an505": ("thumbv8m.main", True, True, False, 4),
    "qemu/mps2-an521": ("thumbv8m.main", False, False, False, 4),
    "qemu/mps3-an547": ("thumbv8.1m.main", True, True, True, 16),
    "qemu/netduinoplus2": ("thumbv7em", True, True, False, 4),
    "qemu/sifive-e": ("rv32imac", False, False, False, 4),
    "st/nucleo-f746zg": ("thumbv7em", True, True, False, 4),
    "st/nucleo-l4r5zi": ("thumbv7em", True, True, False, 4),
    "nordic/nrf52840dk": ("thumbv7em", True, True, False, 4),
    "raspberrypi/pico": ("thumbv6m", False, False, False, 4),
    "espressif/esp32c3-devkitm": ("rv32imc", False, False, False, 4),
}


@pytest.mark.parametrize("tag", sorted(BOARD_FACTS))
def test_board_facts(tag):
    isa, dsp, fpu, mve, vec = BOARD_FACTS[tag]
    t = Target(tag)
    assert (t.isa, t.has_dsp, t.has_fpu, t.has_mve, t.vector_bytes) == (isa, dsp, fpu, mve, vec)
    assert t.pointer_bits == 32


def test_host_board_is_this_machine():
    import platform

    t = load_board("host/native").target
    machine = platform.machine().lower()
    assert t.isa == {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
    if machine in ("x86_64", "aarch64", "amd64", "arm64"):
        assert t.pointer_bits == 64


def test_runs_on_host():
    from aot.target import runs_on_host

    assert runs_on_host(Target("host/native"))
    assert runs_on_host(Target("c"))
    assert not runs_on_host(Target("qemu/mps2-an386"))
    assert not runs_on_host(Target("composite -targets={c},{c -mcpu=cortex-m4}"))


@pytest.mark.parametrize("text, message", [
    ("c -mcpu=cortex-m44", r"unknown Arm core -mcpu=cortex-m44 \(did you mean 'cortex-m4'\?\)"),
    ("c -mcpu=cortex-m5+nodsp", r"unknown Arm core -mcpu=cortex-m5 \(did you mean"),
    ("c -march=armv7e-mm", r"unknown Arm architecture -march=armv7e-mm \(did you mean 'armv7e-m'"),
])
def test_misspelt_arm_processor_is_refused(text, message):
    with pytest.raises(TargetError, match=message):
        Target(text)
