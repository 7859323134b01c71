"""The rp2040 port's second-stage boot loader (ports/rp2040/boot2.S), run.

There is no RP2040 in QEMU, so the assembled 256 bytes run here in a small
interpreter of the Thumb instructions boot2 uses, against a model of the SSI
(4.10 of the RP2040 datasheet) with a W25Q080 behind it: the flash answers
read-status commands, takes write enable and write status, and is busy for a
few polls after a write.  The test checks the register writes, the commands
on the wire and how boot2 enters the image.  Finding of issue 37 covered:
the Pico read its flash with serial 03h at clk_sys / 4 instead of quad EBh
continuous read at clk_sys / 2.
"""

from __future__ import annotations

import shutil
import struct
import subprocess

import pytest

from aot.resources import runtime_dir

BOOT2 = runtime_dir() / "ports" / "rp2040" / "boot2.S"
ARM = "arm-none-eabi-"
pytestmark = pytest.mark.skipif(shutil.which(ARM + "gcc") is None,
                                reason="needs arm-none-eabi-gcc")

SRAM_COPY = 0x20041F00       # where the boot ROM runs boot2 from
SSI, PADS, VTOR = 0x18000000, 0x40020000, 0xE000ED08
IMAGE_SP, IMAGE_RESET = 0x20042000, 0x100001C1


@pytest.fixture(scope="module")
def boot2(tmp_path_factory) -> bytes:
    out = tmp_path_factory.mktemp("boot2")
    subprocess.run([ARM + "gcc", "-mcpu=cortex-m0plus", "-mthumb", "-c", str(BOOT2),
                    "-o", str(out / "b.o")], check=True)
    subprocess.run([ARM + "objcopy", "-O", "binary", "-j", ".boot2", str(out / "b.o"),
                    str(out / "b.bin")], check=True)
    data = (out / "b.bin").read_bytes()
    assert len(data) == 256
    return data


class Flash:
    """A W25Q080 seen through the SSI in standard SPI mode (8-bit frames)."""

    def __init__(self, sr2: int):
        self.sr1, self.sr2, self.wel, self.busy_polls = 0, sr2, False, 0
        self.frame: list[int] = []       # bytes of the transaction in progress
        self.commands: list[list[int]] = []

    def exchange(self, byte: int) -> int:
        self.frame.append(byte)
        if len(self.frame) == 2 and self.frame[0] == 0x35:
            return self.sr2
        if len(self.frame) == 2 and self.frame[0] == 0x05:
            busy = self.busy_polls > 0
            self.busy_polls -= busy
            return self.sr1 | busy
        return 0

    def end(self) -> None:
        """Chip select rises: the transaction is over (the SSI went idle)."""
        if not self.frame:
            return
        f, self.frame = self.frame, []
        self.commands.append(f)
        if f == [0x06]:
            self.wel = True
        elif f[0] == 0x01 and self.wel and len(f) == 3:
            self.sr1, self.sr2, self.wel, self.busy_polls = f[1], f[2], False, 3


class Machine:
    """Just the Thumb-1 (+ BL, MSR) the boot loader assembles to."""

    def __init__(self, code: bytes, flash: Flash):
        self.r = [0] * 16
        self.mem: dict[int, int] = {}
        for i in range(0, len(code), 4):
            self.mem[SRAM_COPY + i] = struct.unpack_from("<I", code, i)[0]
        self.mem[0x10000100], self.mem[0x10000104] = IMAGE_SP, IMAGE_RESET
        self.mem[PADS + 0x08] = 0x62  # SD0 as found: input enabled, Schmitt trigger on
        self.flash, self.rx, self.quad = flash, [], []
        self.writes: list[tuple[int, int]] = []
        self.z = self.n = False
        self.r[13], self.r[15] = 0x20042000, SRAM_COPY
        self.msp = None

    def read(self, addr: int) -> int:
        if addr == SSI + 0x28:             # SR: transmit FIFO empty, not busy
            self.flash.end()
            return 0x06
        if addr == SSI + 0x60:
            return self.rx.pop(0) if self.rx else 0
        return self.mem.get(addr, 0)

    def write(self, addr: int, value: int) -> None:
        self.writes.append((addr, value))
        if addr == SSI + 0x60:
            quad = (self.mem.get(SSI, 0) >> 21) & 3 == 2
            if quad:
                self.quad.append(value)
                self.rx.append(0)
            else:
                self.rx.append(self.flash.exchange(value))
            return
        if addr == SSI + 0x08 and value == 0:
            self.rx.clear()
        self.mem[addr] = value

    def half(self, addr: int) -> int:
        return (self.mem.get(addr & ~3, 0) >> (8 * (addr & 2))) & 0xFFFF

    def flags(self, v: int) -> None:
        self.z, self.n = v == 0, bool(v & 0x80000000)

    def run(self, limit: int = 100_000) -> int:
        r = self.r
        for _ in range(limit):
            pc = r[15]
            if not SRAM_COPY <= pc < SRAM_COPY + 252:
                return pc
            h = self.half(pc)
            nxt = pc + 2
            if h >> 11 == 0b00100:                        # movs rd, #imm8
                r[(h >> 8) & 7] = h & 0xFF
                self.flags(h & 0xFF)
            elif h >> 11 == 0b01001:                      # ldr rt, [pc, #imm]
                r[(h >> 8) & 7] = self.read(((pc + 4) & ~3) + 4 * (h & 0xFF))
            elif h >> 11 in (0b01100, 0b01101):           # str/ldr rt, [rn, #imm5*4]
                addr = r[(h >> 3) & 7] + 4 * ((h >> 6) & 0x1F)
                if h >> 11 == 0b01100:
                    self.write(addr, r[h & 7])
                else:
                    r[h & 7] = self.read(addr)
            elif h >> 9 in (0b0101000, 0b0101100):        # str/ldr rt, [rn, rm]
                addr = r[(h >> 3) & 7] + r[(h >> 6) & 7]
                if h >> 9 == 0b0101000:
                    self.write(addr, r[h & 7])
                else:
                    r[h & 7] = self.read(addr)
            elif h >> 6 == 0b0100001110:                  # bics rdn, rm
                r[h & 7] &= ~r[(h >> 3) & 7] & 0xFFFFFFFF
                self.flags(r[h & 7])
            elif h >> 6 == 0b0100001000:                  # tst rn, rm
                self.flags(r[h & 7] & r[(h >> 3) & 7])
            elif h >> 12 == 0b1101 and (h >> 8) & 0xF in (0, 1):  # beq / bne
                taken = self.z if (h >> 8) & 0xF == 0 else not self.z
                if taken:
                    nxt = pc + 4 + (((h & 0xFF) ^ 0x80) - 0x80) * 2
            elif h >> 7 == 0b010001110:                   # bx rm
                nxt = r[(h >> 3) & 0xF] & ~1
            elif h >> 9 == 0b1011010:                     # push {.., lr}
                regs = [i for i in range(8) if h & (1 << i)] + ([14] if h & 0x100 else [])
                for reg in reversed(regs):
                    r[13] -= 4
                    self.mem[r[13]] = r[reg]
            elif h >> 9 == 0b1011110:                     # pop {.., pc}
                regs = [i for i in range(8) if h & (1 << i)] + ([15] if h & 0x100 else [])
                for reg in regs:
                    value = self.mem[r[13]]
                    r[13] += 4
                    if reg == 15:
                        nxt = value & ~1
                    else:
                        r[reg] = value
            elif h >> 11 == 0b11001:                      # ldmia rn!, {...}
                rn = (h >> 8) & 7
                for i in range(8):
                    if h & (1 << i):
                        r[i] = self.read(r[rn])
                        r[rn] += 4
            elif h >> 11 == 0b11110:                      # 32-bit: bl, msr
                h2 = self.half(pc + 2)
                nxt = pc + 4
                if h & 0xFFF0 == 0xF380 and h2 == 0x8808:  # msr msp, rn
                    self.msp = r[h & 0xF]
                elif h2 >> 14 == 0b11 and h2 & 0x1000:     # bl
                    s = (h >> 10) & 1
                    i1, i2 = 1 ^ ((h2 >> 13) & 1) ^ s, 1 ^ ((h2 >> 11) & 1) ^ s
                    off = (s << 24) | (i1 << 23) | (i2 << 22) | ((h & 0x3FF) << 12) | (
                        (h2 & 0x7FF) << 1)
                    r[14] = (pc + 4) | 1
                    nxt = pc + 4 + off - (1 << 25 if s else 0)
                else:
                    raise AssertionError(f"unexpected 32-bit instruction {h:04x} {h2:04x}")
            else:
                raise AssertionError(f"instruction {h:04x} at {pc:#x} is not modelled")
            r[15] = nxt
        raise AssertionError("boot2 did not finish")


def run(boot2: bytes, sr2: int) -> Machine:
    m = Machine(boot2, Flash(sr2))
    assert m.run() == IMAGE_RESET & ~1          # entered the image's reset handler
    assert m.msp == IMAGE_SP and (VTOR, 0x10000100) in m.writes
    return m


def last(m: Machine, addr: int) -> int:
    return [v for a, v in m.writes if a == addr][-1]


def test_boot2_leaves_the_ssi_in_quad_continuous_read_at_half_clk_sys(boot2):
    m = run(boot2, sr2=0x02)
    assert last(m, SSI + 0x14) == 2                       # BAUDR: SCK = clk_sys / 2
    assert last(m, SSI + 0xF0) == 1                       # RX_SAMPLE_DLY
    ctrlr0 = last(m, SSI + 0x00)
    assert (ctrlr0 >> 21) & 3 == 2 and (ctrlr0 >> 16) & 0x1F == 31 and (ctrlr0 >> 8) & 3 == 3
    # The one EBh transfer: instruction serial, address + mode bits A0h on four lines.
    spi = [v for a, v in m.writes if a == SSI + 0xF4]
    assert spi[0] == (4 << 11) | (2 << 8) | (8 << 2) | 1
    assert m.quad == [0xEB, 0xA0]
    # XIP from then on: no instruction, 24-bit address + mode A0h, 4 dummy clocks.
    assert spi[-1] == (0xA0 << 24) | (4 << 11) | (0 << 8) | (8 << 2) | 2
    assert last(m, SSI + 0x08) == 1
    # The SSI was off whenever it was configured.
    enabled = False
    for addr, value in m.writes:
        if addr == SSI + 0x08:
            enabled = bool(value)
        elif addr in (SSI, SSI + 0x04, SSI + 0x14, SSI + 0xF0, SSI + 0xF4):
            assert not enabled, f"SSI register {addr:#x} written while enabled"
    assert last(m, PADS + 0x04) == 0x21                  # SCLK: 8 mA, fast slew
    assert all(last(m, PADS + o) == 0x60 for o in (0x08, 0x0C, 0x10, 0x14))  # no Schmitt


def test_boot2_sets_the_quad_enable_bit_once_and_waits_for_the_write(boot2):
    m = run(boot2, sr2=0x00)
    assert m.flash.commands[:3] == [[0x35, 0x35], [0x06], [0x01, 0x00, 0x02]]
    polls = m.flash.commands[3:]
    assert polls == [[0x05, 0x05]] * 4                   # busy 3 polls, then ready
    assert m.flash.sr2 == 0x02
    # With QE already set the flash is only read, never written.
    m = run(boot2, sr2=0x02)
    assert m.flash.commands == [[0x35, 0x35]]
