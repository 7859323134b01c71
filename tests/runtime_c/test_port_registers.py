"""The real-board ports' clock, cache and UART set-up, run on the host.

No board runs in CI and QEMU models little of these chips' clock trees, so
each port's ``aot_port_init`` is compiled for this machine with
``-DAOT_MMIO_RECORD``: every register access of ``aot/mmio.h`` goes to the
recorder in ``regsim/regsim.c``, which answers from a small model of the chip
(reset values, ready flags; for the clock measurements simulated time, the
32 kHz crystal and a timer capture) and logs every access in order.  The tests assert
the values written and their order against the reference manuals: the
finding of issue 37 each one covers is named in its docstring.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from aot.export import board_defines
from aot.resources import runtime_dir
from aot.target import load_board

HERE = Path(__file__).resolve().parent
RUNTIME = runtime_dir()
pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")


@dataclass(frozen=True)
class Access:
    op: str       # "R", "W", "S" (barrier) or "C" (call of a hook outside the port)
    addr: int
    value: int
    count: int = 1


@dataclass(frozen=True)
class Trace:
    accesses: tuple[Access, ...]
    clock_hz: int
    measured_clock_hz: int
    flash_wait_states: int
    caches: int
    cycles: int | None = None  # simulated core cycles aot_port_init took (time models only)

    def writes(self, addr: int) -> list[int]:
        return [a.value for a in self.accesses if a.op == "W" and a.addr == addr]

    def index(self, addr: int, predicate=lambda v: True, op: str = "W") -> int:
        """Position of the first ``op`` access of ``addr`` whose value passes."""
        for i, a in enumerate(self.accesses):
            if a.op == op and a.addr == addr and predicate(a.value):
                return i
        raise AssertionError(f"no {op} of {addr:#010x} matching in the trace")

    def reads(self, addr: int) -> int:
        return sum(a.count for a in self.accesses if a.op == "R" and a.addr == addr)


_BUILT: dict[tuple, Path] = {}


def simulate(tmp_path_factory, port: str, tag: str, model: dict | list,
             extra: tuple[str, ...] = ()) -> Trace:
    """Build ``ports/<port>/port.c`` with the record's defines against the
    recorder (once per configuration) and run its init against ``model``."""
    key = (port, tag, extra)
    if key not in _BUILT:
        out = tmp_path_factory.mktemp("regsim") / "sim"
        subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O1",
                        "-DAOT_MMIO_RECORD", "-DAOT_CLOCK_WAIT=5000", "-DAOT_LFXO_WAIT=5000",
                        f"-I{RUNTIME / 'include'}",
                        *board_defines(load_board(tag)), *extra,
                        str(RUNTIME / "ports" / port / "port.c"), str(HERE / "regsim" / "regsim.c"),
                        "-o", str(out)], check=True)
        _BUILT[key] = out
    args = [f"{k:x}={v:x}" for k, v in model.items()] if isinstance(model, dict) else model
    done = subprocess.run([str(_BUILT[key]), *args], capture_output=True, text=True, check=True,
                          timeout=60)
    accesses, clock, report, cycles = [], None, None, None
    for line in done.stdout.splitlines():
        f = line.split()
        if f[0] in ("R", "W"):
            n = int(f[3][1:]) if len(f) > 3 else 1
            accesses.append(Access(f[0], int(f[1], 16), int(f[2], 16), n))
        elif f[0] == "S":
            accesses.append(Access("S", 0, 0))
        elif f[0] == "C":
            accesses.append(Access("C", 0, 0))
        elif f[0] == "cycles":
            cycles = int(f[1])
        elif f[0] == "clock_hz":
            clock = int(f[1])
        elif f[0] == "report":
            report = [int(x) for x in f[1:]]
    return Trace(tuple(accesses), clock, *report, cycles=cycles)


def rules(*items: str, **values: int) -> list[str]:
    return [*items, *(f"{k[1:]}={v:x}" for k, v in values.items())]


# --- STM32F746 (st/nucleo-f746zg), RM0385 -------------------------------------------

RCC_CR, RCC_PLLCFGR, RCC_CFGR, FLASH_ACR = 0x40023800, 0x40023804, 0x40023808, 0x40023C00
SCB_CCR, SCB_CCSIDR, SCB_ICIALLU, SCB_DCISW = 0xE000ED14, 0xE000ED80, 0xE000EF50, 0xE000EF60
F7_CCSIDR = (31 << 13) | (3 << 3) | 1  # 4 KiB D-cache: 32 sets, 4 ways, 32-byte lines


# The clock measurement's chip model (regsim.c): the core's cycles on DWT
# CYCCNT, RCC_BDCR behind PWR DBP, and a timer channel that captures the LSE
# only through the remap value the reference manual gives (TIM5 CH4: TIM5EN
# = RCC_APB1ENR bit 3, TIM5_OR TI4_RMP bits 7:6 = 10; TIM16 CH1: TIM16EN =
# RCC_APB2ENR bit 17, TIM16_OR1 TI1_RMP bits 2:0 = 010).
DWT_CYCCNT, PWR_CR1 = 0xE0001004, 0x40007000
F7_BDCR, TIM5 = 0x40023870, 0x40000C00
L4_BDCR, TIM16 = 0x40021090, 0x40014400
F7_MEASURE = [f"cycles:{DWT_CYCCNT:x}", f"protect:{F7_BDCR:x}:{PWR_CR1:x}:8",
              f"capture:{TIM5:x}:4:40023840:3:c0:80"]
L4_MEASURE = [f"cycles:{DWT_CYCCNT:x}", f"protect:{L4_BDCR:x}:{PWR_CR1:x}:8",
              f"capture:{TIM16:x}:1:40021060:11:7:2"]
LSE_START = 0x100000  # cycles from LSEON to LSERDY in the model


def lse(bdcr: int, hz: int = 32768, start: int = LSE_START) -> str:
    return f"lse:{bdcr:x}:{hz:x}:{start:x}"


def f746(tmp_path_factory, *extra_rules: str, core_hz: int = 216_000_000,
         crystal: tuple[str, ...] = (lse(F7_BDCR),)) -> Trace:
    return simulate(tmp_path_factory, "stm32", "st/nucleo-f746zg", [
        "ready:40023800:2020000",          # HSERDY, PLLRDY
        "ready:40007004:30000",            # ODRDY, ODSWRDY
        "echo:40023808:3:2",               # SWS follows SW
        f"e000ed80={F7_CCSIDR:x}",
        "40023804=24003010",               # PLLCFGR reset value (RM0385 5.3.2)
        f"clock:{core_hz:x}", *F7_MEASURE, *crystal,
        *extra_rules])


def test_f746_invalidates_both_l1_caches_before_enabling_them(tmp_path_factory):
    """Finding: st/nucleo-f746zg ran uncached (AN4667: AXIM flash needs the L1 caches)."""
    t = f746(tmp_path_factory)
    ic_on = t.index(SCB_CCR, lambda v: v & (1 << 17))
    dc_on = t.index(SCB_CCR, lambda v: v & (1 << 16))
    assert t.index(SCB_ICIALLU) < ic_on
    # Every set and way of the D-cache invalidated, all before DC is set.
    dcisw = [i for i, a in enumerate(t.accesses) if a.op == "W" and a.addr == SCB_DCISW]
    assert sorted(t.writes(SCB_DCISW)) == sorted(
        (way << 30) | (s << 5) for s in range(32) for way in range(4))
    assert max(dcisw) < dc_on
    # A barrier between the last invalidation and the enable, and after it.
    assert any(a.op == "S" for a in t.accesses[max(dcisw):dc_on])
    assert t.accesses[dc_on + 1].op == "S"
    assert t.caches == 0x03  # l1_icache | l1_dcache, read back from CCR


def test_f746_raises_flash_latency_before_switching_to_the_pll(tmp_path_factory):
    t = f746(tmp_path_factory)
    latency = t.index(FLASH_ACR, lambda v: v & 0xF == 7)
    sw_pll = t.index(RCC_CFGR, lambda v: v & 3 == 2)
    assert latency < sw_pll
    assert t.clock_hz == 216_000_000 and t.flash_wait_states == 7


def test_f746_pllcfgr_keeps_its_reserved_bits(tmp_path_factory):
    """Finding: PLLCFGR was written whole, clearing reserved bit 29 (reset 0x24003010)."""
    t = f746(tmp_path_factory)
    (value,) = t.writes(RCC_PLLCFGR)
    assert value & (1 << 29)
    assert value & 0x3F == 4 and (value >> 6) & 0x1FF == 216  # M 4, N 216
    assert (value >> 16) & 3 == 0 and value & (1 << 22) and (value >> 24) & 0xF == 9


def test_f746_without_hse_stays_on_hsi_and_says_so(tmp_path_factory):
    t = simulate(tmp_path_factory, "stm32", "st/nucleo-f746zg",
                 ["echo:40023808:3:2", f"e000ed80={F7_CCSIDR:x}",
                  f"clock:{16_000_000:x}", *F7_MEASURE, lse(F7_BDCR)])
    assert t.writes(RCC_CFGR) == []  # never switched
    assert t.clock_hz == 16_000_000
    assert t.writes(0x4000480C) == [round(16_000_000 / 115_200)]  # APB1 = HSI, no prescaler
    # The LSE measures the clock the core really runs at: HSI, not the PLL's 216 MHz.
    assert abs(t.measured_clock_hz - 16_000_000) < 16_000_000 * 50e-6


def test_f746_measures_its_clock_against_the_lse(tmp_path_factory):
    """Issue 37 item 2: the STM32 ports count core cycles against the 32.768 kHz LSE."""
    t = f746(tmp_path_factory)
    # Within 50 ppm: the flag is polled at both ends of 328 LSE periods (10 ms).
    assert abs(t.measured_clock_hz - 216_000_000) < 216_000_000 * 50e-6
    # Backup-domain write access first, then LSEON, LSERDY awaited, then the
    # capture: remapped to the LSE and configured before the counter starts.
    dbp = t.index(PWR_CR1, lambda v: v & (1 << 8))
    lseon = t.index(F7_BDCR, lambda v: v & 1)
    lserdy = t.index(F7_BDCR, lambda v: v & 2, op="R")
    tim5en = t.index(0x40023840, lambda v: v & (1 << 3))
    remap = t.index(TIM5 + 0x50, lambda v: (v >> 6) & 3 == 2)
    ccmr2 = t.index(TIM5 + 0x1C, lambda v: (v >> 8) & 0xF == 0b1101)  # CC4S 01, IC4PSC /8
    cc4e = t.index(TIM5 + 0x20, lambda v: v & (1 << 12))
    cen = t.index(TIM5, lambda v: v & 1)
    assert dbp < lseon < lserdy < tim5en < min(remap, ccmr2, cc4e) and max(remap, ccmr2, cc4e) < cen
    assert t.writes(TIM5 + 0x20)[0] & (0b1010 << 12) == 0  # rising edges only
    # Afterwards the LSE keeps running, the backup domain is protected again
    # and TIM5 is back at reset and unclocked.
    assert t.writes(F7_BDCR) == [1]
    assert t.writes(PWR_CR1)[-1] & (1 << 8) == 0
    assert t.writes(0x40023840)[-1] & (1 << 3) == 0
    assert t.writes(TIM5)[-1] == 0 and t.writes(TIM5 + 0x50)[-1] == 0


def test_f746_measurement_counts_the_real_clock_against_the_real_crystal(tmp_path_factory):
    # The core runs at 200 MHz though the port set up 216: the measurement says so.
    t = f746(tmp_path_factory, core_hz=200_000_000)
    assert t.clock_hz == 216_000_000
    assert abs(t.measured_clock_hz - 200_000_000) < 200_000_000 * 50e-6
    # A crystal 1 % fast makes the core look 1 % slow: the LSE is the reference.
    t = f746(tmp_path_factory, crystal=(lse(F7_BDCR, hz=33_096),))
    assert abs(t.measured_clock_hz - 216_000_000 * 32768 / 33_096) < 216_000_000 * 50e-6


def test_f746_without_a_crystal_reports_not_measured_within_the_lse_wait(tmp_path_factory):
    # tick 0x400: 1024 cycles per register access, to cover 2.5 s quickly.
    t = f746(tmp_path_factory, "tick:400", crystal=())
    assert t.measured_clock_hz == 0 and t.clock_hz == 216_000_000
    # Gave up after AOT_LSE_WAIT_MS = 2.5 s of core cycles, not much later.
    assert 2.5 <= t.cycles / 216_000_000 < 2.52
    # The LSEON the port set is cleared again, DBP too; TIM5 never touched.
    assert t.writes(F7_BDCR) == [1, 0]
    assert t.writes(PWR_CR1)[-1] & (1 << 8) == 0
    assert [a for a in t.accesses if TIM5 <= a.addr < TIM5 + 0x400] == []
    # And the console was set up before: the RPC answers regardless.
    assert t.index(0x40004800, lambda v: v & 1) < t.index(F7_BDCR)


def test_f746_lserdy_without_oscillation_neither_hangs_nor_invents_a_clock(tmp_path_factory):
    # LSERDY reads 1 (floating OSC32 pins can do that) but no edge ever comes.
    t = f746(tmp_path_factory, f"ready:{F7_BDCR:x}:2", crystal=())
    assert t.measured_clock_hz == 0
    assert t.writes(0x40023840)[-1] & (1 << 3) == 0 and t.writes(TIM5)[-1] == 0
    assert t.cycles < 216_000_000 * 0.01  # AOT_CAPTURE_WAIT_MS, not seconds


def test_f746_missed_capture_gives_no_measurement(tmp_path_factory):
    # Each register access takes 16 LSE periods: every poll misses a capture
    # (CC4OF), and a count with a capture missed would be short.
    period16 = 216_000_000 * 16 // 32768
    t = f746(tmp_path_factory, f"tick:{period16:x}")
    assert t.measured_clock_hz == 0


def test_f746_uses_an_lse_that_is_already_running(tmp_path_factory):
    # The backup domain kept LSEON (and LSEBYP) over the reset: used as it is.
    t = f746(tmp_path_factory, f"{F7_BDCR:x}=5", crystal=(lse(F7_BDCR, start=0),))
    assert t.writes(F7_BDCR) == []
    assert abs(t.measured_clock_hz - 216_000_000) < 216_000_000 * 50e-6


# --- STM32L4R5 (st/nucleo-l4r5zi), RM0432 -------------------------------------------

L4_CR, L4_CFGR, L4_PLLCFGR, L4_ACR = 0x40021000, 0x40021008, 0x4002100C, 0x40022000


def l4r5(tmp_path_factory, *extra_rules: str,
         crystal: tuple[str, ...] = (lse(L4_BDCR),)) -> Trace:
    return simulate(tmp_path_factory, "stm32", "st/nucleo-l4r5zi", [
        "ready:40021000:2000400",          # HSIRDY, PLLRDY
        "echo:40021008:3:2",
        "4002100c=1000",                   # PLLCFGR reset value (RM0432 6.4.4)
        "40022000=600",                    # FLASH_ACR reset: ICEN, DCEN
        f"clock:{120_000_000:x}", *L4_MEASURE, *crystal, *extra_rules])


def test_l4r5_pll_runs_from_hsi16_started_first(tmp_path_factory):
    """Finding: the L4R5's PLL ran from MSI without LSE calibration (MSIPLLEN)."""
    t = l4r5(tmp_path_factory)
    (pll,) = t.writes(L4_PLLCFGR)
    assert pll & 3 == 2                       # PLLSRC = HSI16
    assert (pll >> 4) & 0xF == 3 and (pll >> 8) & 0x7F == 60  # M 4, N 60: 16 / 4 * 60 / 2
    assert pll & (1 << 24) and (pll >> 25) & 3 == 0           # PLLREN, R = 2
    hsi_on = t.index(L4_CR, lambda v: v & (1 << 8))
    assert hsi_on < t.index(L4_PLLCFGR) < t.index(L4_CR, lambda v: v & (1 << 24))
    assert t.index(L4_ACR, lambda v: v & 0xF == 5) < t.index(L4_CFGR, lambda v: v & 3 == 3)
    assert t.clock_hz == 120_000_000 and t.flash_wait_states == 5
    assert t.caches == 0x04 | 0x08 | 0x10  # prefetch, flash I- and D-cache
    # LPUART1 BRR = 256 * 120 MHz / 115200.
    assert t.writes(0x4000800C) == [round(256 * 120_000_000 / 115_200)]


def test_l4r5_gives_up_when_hsi16_never_starts(tmp_path_factory):
    t = simulate(tmp_path_factory, "stm32", "st/nucleo-l4r5zi",
                 ["echo:40021008:3:2", f"clock:{4_000_000:x}", *L4_MEASURE, "tick:40"])
    assert t.writes(L4_PLLCFGR) == [] and t.clock_hz == 4_000_000
    assert t.measured_clock_hz == 0  # no crystal in this model either


def test_l4r5_measures_its_clock_against_the_lse_through_tim16(tmp_path_factory):
    t = l4r5(tmp_path_factory)
    assert abs(t.measured_clock_hz - 120_000_000) < 120_000_000 * 50e-6
    dbp = t.index(PWR_CR1, lambda v: v & (1 << 8))
    lseon = t.index(L4_BDCR, lambda v: v & 1)
    remap = t.index(TIM16 + 0x50, lambda v: v & 7 == 2)       # TI1_RMP = LSE
    ccmr1 = t.index(TIM16 + 0x18, lambda v: v & 0xF == 0b1101)  # CC1S 01, IC1PSC /8
    cen = t.index(TIM16, lambda v: v & 1)
    assert dbp < lseon < t.index(0x40021060, lambda v: v & (1 << 17)) < remap < ccmr1 < cen
    assert t.writes(L4_BDCR) == [1]


def test_l4r5_on_its_reset_clock_measures_msi(tmp_path_factory):
    # HSI16 never starts: the core stays on MSI 4 MHz, and that is what is measured.
    t = simulate(tmp_path_factory, "stm32", "st/nucleo-l4r5zi",
                 ["echo:40021008:3:2", f"clock:{4_000_000:x}", *L4_MEASURE, lse(L4_BDCR)])
    assert t.clock_hz == 4_000_000
    assert abs(t.measured_clock_hz - 4_000_000) < 4_000_000 * 50e-6


# --- nRF52840 (nordic/nrf52840dk), Product Specification v1.7 -----------------------

UICR_APPROTECT, APPROTECT_DISABLE, NVMC_CONFIG = 0x10001208, 0x40000558, 0x4001E504
UARTE0 = 0x40002000
NRF_READY = ["ready:4001e400:1", "ready:40000100:1", "ready:40000104:1"]


def nrf52(tmp_path_factory, variant: int, uicr: int, *extra: str) -> Trace:
    return simulate(tmp_path_factory, "nrf52", "nordic/nrf52840dk", [
        "10000130=8", f"10000134={variant:x}", f"10001208={uicr:x}", *NRF_READY,
        "count:4000b504:1", "count:e0001004:9c400", *extra])


def test_nrf52_keeps_the_debug_port_open_first_thing(tmp_path_factory):
    """Finding: the nRF52840 relocked its debug port at every reset (hardened APPROTECT)."""
    t = nrf52(tmp_path_factory, 5, 0xFFFFFFFF)
    # An erased UICR.APPROTECT gets HwDisabled through the NVMC, write-enabled around it.
    wen = t.index(NVMC_CONFIG, lambda v: v == 1)
    assert wen < t.index(UICR_APPROTECT, lambda v: v == 0x5A) < t.index(
        NVMC_CONFIG, lambda v: v == 0)
    # Then SwDisable, before any other peripheral is touched.
    first = t.index(APPROTECT_DISABLE, lambda v: v == 0x5A)
    assert all(a.addr in (0x10000130, 0x10000134, UICR_APPROTECT, NVMC_CONFIG, 0x4001E400)
               for a in t.accesses[:first])


def test_nrf52_leaves_a_protected_or_older_part_alone(tmp_path_factory):
    # UICR.APPROTECT = 0x00: someone wants the protection; no write, no disable.
    t = nrf52(tmp_path_factory, 5, 0)
    assert t.writes(UICR_APPROTECT) == [] and t.writes(APPROTECT_DISABLE) == []
    # Variant 4 and older: no hardened APPROTECT, nothing written to its address.
    t = nrf52(tmp_path_factory, 4, 0xFFFFFFFF)
    assert t.writes(UICR_APPROTECT) == [] and t.writes(APPROTECT_DISABLE) == []


def test_nrf52_uarte_baud_and_rx_pull_up(tmp_path_factory):
    """Findings: BAUDRATE came from the legacy UART's table; RX had no pull-up."""
    t = nrf52(tmp_path_factory, 5, 0x5A)
    assert t.writes(UARTE0 + 0x524) == [0x01D60000]          # UARTE BAUDRATE 115200
    assert t.writes(0x50000700 + 4 * 8) == [0x0C]            # P0.08: input, pull-up
    assert t.writes(0x50000700 + 4 * 6) == [0x01]            # P0.06: output


def test_nrf52_measures_its_clock_against_the_32k_crystal(tmp_path_factory):
    t = nrf52(tmp_path_factory, 5, 0x5A)
    # One DWT read at each end of 328 RTC ticks (10 ms); the model's counter
    # advances 640000 cycles between them.
    assert t.measured_clock_hz == round(640_000 * 32768 / 328)
    assert t.writes(0x40000518) == [1]                       # LFCLKSRC = Xtal
    assert t.caches == 0x08 and t.flash_wait_states == 0xFF  # NVMC I-cache


def test_nrf52_without_crystals_neither_hangs_nor_invents_a_measurement(tmp_path_factory):
    t = simulate(tmp_path_factory, "nrf52", "nordic/nrf52840dk",
                 ["10000130=8", "10000134=5", "10001208=5a", "ready:4001e400:1"])
    assert t.clock_hz == 64_000_000 and t.measured_clock_hz == 0


# --- ESP32-C3 (espressif/esp32c3-devkitm), Technical Reference Manual ---------------

SYSTEM_CPU_PER_CONF, SYSTEM_SYSCLK_CONF = 0x600C0008, 0x600C0058
ESP_MODEL = ["ready:60023004:20000000",     # SYSTIMER VALUE_VALID
             "count:60023044:3e80",         # 16000 system timer ticks (1 ms) per read
             "count:7e2:186a00"]            # mpccr: 1.6 M cycles between its two reads


def test_esp32c3_raises_the_cpu_to_160_mhz(tmp_path_factory):
    """Finding: the boot loader's 80 MHz stayed while the record said 160 MHz."""
    # As the ESP-IDF boot loader leaves it: SoC clock on the PLL, CPUPERIOD_SEL 0
    # (80 MHz), PLL_FREQ_SEL and the wait-mode bit set.
    t = simulate(tmp_path_factory, "esp32c3", "espressif/esp32c3-devkitm",
                 ["600c0058=400", "600c0008=c", *ESP_MODEL])
    assert t.writes(SYSTEM_CPU_PER_CONF) == [0x0D]   # CPUPERIOD_SEL = 1, other bits kept
    assert t.clock_hz == 160_000_000
    assert t.measured_clock_hz == 160_000_000        # 1.6 M cycles in 10 ms of SYSTIMER
    assert t.caches == 0 and t.flash_wait_states == 0xFF


def test_esp32c3_leaves_a_cpu_not_on_the_pll_alone(tmp_path_factory):
    t = simulate(tmp_path_factory, "esp32c3", "espressif/esp32c3-devkitm",
                 ["600c0058=1", "600c4000=1", *ESP_MODEL])   # XTAL / 2
    assert t.writes(SYSTEM_CPU_PER_CONF) == [] and t.clock_hz == 20_000_000
    assert t.caches == 0x40                                   # the flash cache is on


def test_esp32c3_watchdog_changes_are_latched(tmp_path_factory):
    """Finding: timer group watchdog writes without WDT_CONF_UPDATE_EN did not apply."""
    t = simulate(tmp_path_factory, "esp32c3", "espressif/esp32c3-devkitm", ESP_MODEL)
    for base in (0x6001F000, 0x60020000):
        assert t.writes(base + 0x48) == [0, 1 << 22]         # EN off, then update
        unlock = t.index(base + 0x64, lambda v: v == 0x50D83AA1)
        assert unlock < t.index(base + 0x48, lambda v: v == 1 << 22) < t.index(
            base + 0x64, lambda v: v == 0)


def test_esp32c3_record_fits_the_factory_partition():
    """Finding: the record allowed 4 MiB of flash; the single-app partition table's
    factory partition holds 1 MiB from 0x10000, and a bigger image is refused at boot."""
    board = load_board("espressif/esp32c3-devkitm")
    assert board.memory.flash.length == 0x10_0000
    assert board.image.offset == 0x1_0000


# --- RP2040 (raspberrypi/pico), RP2040 datasheet ------------------------------------

PICO_READY = ["ready:40008044:3", "ready:40008038:5",      # clk_sys / clk_ref selected
              "ready:40024004:80000000",                   # XOSC stable
              "ready:4000c008:ffffffff",                   # resets done
              "ready:40028000:80000000",                   # PLL locked
              "ready:40008098:10",                         # FC0 done, not running
              f"4000809c={125_000 << 5:x}",                # FC0: 125000 kHz
              "14000000=1"]                                # XIP cache on


def test_rp2040_reaches_125_mhz_and_measures_it_against_the_crystal(tmp_path_factory):
    t = simulate(tmp_path_factory, "rp2040", "raspberrypi/pico", PICO_READY)
    assert t.clock_hz == 125_000_000 and t.measured_clock_hz == 125_000_000
    assert t.caches == 0x40 and t.flash_wait_states == 0xFF
    assert t.writes(0x40008094) == [0x09, 0]            # FC0 counts clk_sys, then stops
    assert t.writes(0x40008080) == [12_000]             # against clk_ref = XOSC, in kHz
    # The PLL locks before clk_sys switches to it.
    assert t.index(0x40028000, op="R") < t.index(0x4000803C, lambda v: v == 1)


def test_rp2040_without_a_crystal_gives_up_instead_of_hanging(tmp_path_factory):
    """Finding: the oscillator and PLL waits had no timeout (a missing crystal hung)."""
    t = simulate(tmp_path_factory, "rp2040", "raspberrypi/pico",
                 ["ready:40008044:1", "ready:40008038:1", "ready:4000c008:ffffffff"])
    assert t.reads(0x40024004) == 5000                  # XOSC_STATUS polled AOT_CLOCK_WAIT times
    assert t.writes(0x40008030) == [] and t.writes(0x4000803C) == []  # nothing switched
    assert t.clock_hz == 0 and t.measured_clock_hz == 0
    assert t.writes(0xE000E010) == [7]                  # and the rest of the init still ran


def test_rp2040_pll_that_never_locks_is_powered_down_again(tmp_path_factory):
    t = simulate(tmp_path_factory, "rp2040", "raspberrypi/pico",
                 ["ready:40008044:1", "ready:40008038:5", "ready:40024004:80000000",
                  "ready:4000c008:ffffffff"])
    assert t.reads(0x40028000) == 5000 and t.writes(0x4002A004) == [0x21]
    assert t.writes(0x4000803C) == [] and t.clock_hz == 0


def test_esp32c3_without_a_system_timer_reports_no_measurement(tmp_path_factory):
    # The latch never becomes valid: no measurement, no endless wait.
    t = simulate(tmp_path_factory, "esp32c3", "espressif/esp32c3-devkitm",
                 ["600c0058=400", "count:7e2:186a00"])
    assert t.clock_hz == 160_000_000 and t.measured_clock_hz == 0
