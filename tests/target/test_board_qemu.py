"""The emulated boards' records boot: flags, memory map, pools, UART, QEMU arguments, timer.

A minimal firmware is built from nothing but a board record (toolchain flags,
``linker_memory()``, ``console.base``) and run with the record's QEMU machine
and arguments.  It writes and reads back both ends of every extra memory pool,
times a loop of a known number of instructions with the record's timer,
prints through the console and exits with status 0 through semihosting.
The UART and the timer are the record's kinds (CMSDK, STM32F4 USART, nRF51
UART; SysTick, STM32 TIM2; SiFive and rdinstret on RISC-V).
This checks the data, not the runtime ports.
"""

import re
import shutil
import subprocess

import pytest

from aot.target import list_boards, load_board

EMULATED = [b for b in list_boards() if b.emulated]
LOOP_ITERATIONS = 100_000  # the timed loop is two instructions per iteration

SCRIPT = """{memory}
__stack_top = ORIGIN(RAM) + LENGTH(RAM);
SECTIONS
{{
  .text : {{ KEEP(*(.vectors)) KEEP(*(.text.start)) *(.text*) *(.rodata*) }} > FLASH
  .bss (NOLOAD) : {{ *(.bss*) *(COMMON) }} > RAM
}}
"""

# Per architecture: start-up, put(), semihost_exit(), timed_loop() returning timer ticks.
ARM = r"""
extern uint32_t __stack_top;
void reset(void);
__attribute__((section(".vectors"), used))
const void *vectors[2] = {&__stack_top, (const void *)reset};
#define UART ((volatile uint32_t *)UART_BASE)
#if defined(CONSOLE_CMSDK_UART)                        /* CMSDK APB UART */
static void put(char c) { while (UART[1] & 1u) {} UART[0] = (uint32_t)c; }
static void init_uart(void) { UART[4] = 16u; UART[2] = 1u; }  /* BAUDDIV, TX enable */
#elif defined(CONSOLE_STM32F4_USART)                   /* SR DR BRR CR1 */
static void put(char c) { while (!(UART[0] & 0x80u)) {} UART[1] = (uint32_t)c; }
static void init_uart(void) { UART[3] = (1u << 13) | (1u << 3); }  /* UE, TE */
#elif defined(CONSOLE_NRF_UART)                        /* nRF51 UART: tasks, events */
static void put(char c) { UART[0x11C / 4] = 0; UART[0x51C / 4] = (uint8_t)c;
                          while (!UART[0x11C / 4]) {} }  /* TXD, EVENTS_TXDRDY */
static void init_uart(void) { UART[0x500 / 4] = 4u; UART[0x008 / 4] = 1u; }  /* ENABLE, STARTTX */
#endif
static void semihost_exit(uint32_t code) {
  static uint32_t block[2];
  block[0] = 0x20026u; block[1] = code;                /* ADP_Stopped_ApplicationExit */
  register uint32_t r0 __asm__("r0") = 0x20u;         /* SYS_EXIT_EXTENDED */
  register uint32_t *r1 __asm__("r1") = block;
  __asm__ volatile("bkpt 0xab" : : "r"(r0), "r"(r1) : "memory");
}
#define LOOP(n) __asm__ volatile(".syntax unified\n1: subs %0, %0, #1\n bne 1b" : "+l"(n) : : "cc")
#if defined(TIMER_SYSTICK)
static uint32_t timed_loop(uint32_t n) {
  volatile uint32_t *syst = (volatile uint32_t *)0xE000E010u;  /* CSR RVR CVR */
  syst[1] = 0x00FFFFFFu; syst[2] = 0; syst[0] = 5u;    /* processor clock, enabled */
  uint32_t start = syst[2];
  LOOP(n);
  uint32_t end = syst[2];
  return (start - end) & 0x00FFFFFFu;                  /* SysTick counts down */
}
#elif defined(TIMER_STM32_TIM2)
static uint32_t timed_loop(uint32_t n) {
  volatile uint32_t *tim2 = (volatile uint32_t *)0x40000000u;
  *(volatile uint32_t *)0x40023840u |= 1u;             /* RCC_APB1ENR.TIM2EN */
  tim2[10] = 0; tim2[11] = 0xFFFFFFFFu; tim2[0] = 1u;  /* PSC, ARR, CR1.CEN */
  uint32_t start = tim2[9];                            /* CNT counts up */
  LOOP(n);
  return tim2[9] - start;
}
#endif
void reset(void) { run(); }
"""

RISCV = r"""
__asm__(".section .text.start\n.global _start\n_start:\n"
        "  la sp, __stack_top\n  j reset\n");
#define UART ((volatile uint32_t *)UART_BASE)          /* SiFive UART */
static void put(char c) { while ((int32_t)UART[0] < 0) {} UART[0] = (uint32_t)c; }
static uint32_t block[2];
static void semihost_exit(uint32_t code) {
  block[0] = 0x20026u; block[1] = code;
  register uint32_t a0 __asm__("a0") = 0x20u;
  register uint32_t *a1 __asm__("a1") = block;
  __asm__ volatile(".option push\n.option norvc\n.balign 16\n"
                   "slli x0, x0, 0x1f\nebreak\nsrai x0, x0, 7\n.option pop"
                   : "+r"(a0) : "r"(a1) : "memory");
}
static uint32_t timed_loop(uint32_t n) {
  uint32_t start, end;
  __asm__ volatile("rdinstret %0" : "=r"(start));
  __asm__ volatile("1: addi %0, %0, -1\n bnez %0, 1b" : "+r"(n));
  __asm__ volatile("rdinstret %0" : "=r"(end));
  return end - start;
}
static void init_uart(void) { UART[2] = 1u; }          /* txctrl: TX enable */
void reset(void) { run(); }
"""

COMMON = r"""
#include <stdint.h>
static void run(void);
ARCH
static const uintptr_t words[] = {POOL_WORDS 0};
static int pools_ok(void) {  /* write and read back the first and last word of each pool */
  for (const uintptr_t *w = words; *w; w++) *(volatile uint32_t *)*w = (uint32_t)*w ^ 0xa5a5a5a5u;
  for (const uintptr_t *w = words; *w; w++)
    if (*(volatile uint32_t *)*w != ((uint32_t)*w ^ 0xa5a5a5a5u)) return 0;
  return 1;
}
static void puts_(const char *s) { while (*s) put(*s++); }
static void put_uint(uint32_t v) {
  char buf[11]; int i = 10; buf[i] = 0;
  do { buf[--i] = (char)('0' + v % 10u); v /= 10u; } while (v);
  puts_(buf + i);
}
static void run(void) {
  init_uart();
  uint32_t ticks = timed_loop(LOOP_ITERATIONS);
  puts_("ticks="); put_uint(ticks); puts_("\n");
  puts_(pools_ok() ? "board ok\n" : "pool bad\n");
  semihost_exit(0);
  for (;;) {}
}
"""


def _boot(board, tmp_path, words):
    """Build the minimal firmware for ``board`` writing ``words`` and run it under
    QEMU; returns the finished process."""
    gcc = board.toolchain.tool("gcc")
    missing = [t for t in (gcc, board.qemu.system) if shutil.which(t) is None]
    if missing:
        pytest.skip(f"missing {', '.join(missing)} (scripts/setup.sh installs them)")
    arch = ARM if board.target.family == "arm" else RISCV
    (tmp_path / "main.c").write_text(COMMON.replace("ARCH", arch))
    (tmp_path / "link.ld").write_text(SCRIPT.format(memory=board.memory.linker_memory()))
    cmd = [
        gcc, *board.toolchain.cpu_flags, "-O2", "-ffreestanding", "-nostdlib", "-nostartfiles",
        f"-DUART_BASE=0x{board.console.base:x}u", f"-DCONSOLE_{board.console.kind.upper()}",
        f"-DTIMER_{board.timer.kind.upper()}",
        "-DPOOL_WORDS=" + "".join(f"0x{w:x}u," for w in words),
        f"-DLOOP_ITERATIONS={LOOP_ITERATIONS}u",
        "-T", "link.ld", "main.c", "-o", "fw.elf",
        "-lgcc",  # division on cores without a divide instruction (Cortex-M0)
    ]  # fmt: skip
    built = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    run = [board.qemu.system, "-M", board.qemu.machine, *board.qemu.args,
           "-kernel", "fw.elf", "-serial", "stdio", "-monitor", "none"]  # fmt: skip
    return subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, timeout=30)


@pytest.mark.qemu
@pytest.mark.parametrize("board", EMULATED, ids=lambda b: b.tag)
@pytest.mark.one_fast
def test_emulated_board_boots_from_its_record(board, tmp_path):
    words = [w for p in board.memory.pools for w in (p.origin, p.end - 4)]
    proc = _boot(board, tmp_path, words)
    assert proc.returncode == 0, proc.stderr
    m = re.fullmatch(r"ticks=(\d+)\nboard ok\n", proc.stdout)
    assert m, proc.stdout + proc.stderr
    # The timer fact: ticks * instructions-per-tick is the loop's instruction
    # count, up to the few instructions around it and a tick of rounding.
    per_tick = board.timer.icount_instructions_per_tick
    instructions = int(m.group(1)) * per_tick
    assert abs(instructions - 2 * LOOP_ITERATIONS) <= 8 + 2 * per_tick


@pytest.mark.qemu
def test_netduinoplus2_ccm_is_not_mapped_by_this_qemu(tmp_path):
    """The STM32F405's 64 KiB CCM data RAM (0x10000000) is not a pool of the record
    because QEMU 7.2 maps nothing there: a write faults before "board ok".  A QEMU
    that maps it fails this test: then declare the pool (speed 1) in the record."""
    board = load_board("qemu/netduinoplus2")
    assert not board.memory.pools
    proc = _boot(board, tmp_path, [0x1000_0000, 0x1000_FFFC])
    assert "board ok" not in proc.stdout and proc.returncode != 0, (
        "QEMU now maps the netduinoplus2 CCM: declare it as a pool in "
        "boards/qemu/netduinoplus2.toml")
