"""The emulated boards' records boot: flags, memory map, pools, UART and QEMU arguments agree.

A minimal firmware is built from nothing but a board record (toolchain flags,
``linker_memory()``, ``console.base``), run with the record's QEMU machine and
arguments; it writes and reads back the first and last word of every extra
memory pool, prints through the console and exits with status 0 through
semihosting.  This checks the data, not the runtime ports.
"""

import shutil
import subprocess

import pytest

from aot.target import list_boards

EMULATED = [b for b in list_boards() if b.emulated]

SCRIPT = """{memory}
__stack_top = ORIGIN(RAM) + LENGTH(RAM);
SECTIONS
{{
  .text : {{ KEEP(*(.vectors)) KEEP(*(.text.start)) *(.text*) *(.rodata*) }} > FLASH
  .bss (NOLOAD) : {{ *(.bss*) *(COMMON) }} > RAM
}}
"""

ARM = r"""
#include <stdint.h>
extern uint32_t __stack_top;
void reset(void);
__attribute__((section(".vectors"), used))
const void *vectors[2] = {&__stack_top, (const void *)reset};
#define UART ((volatile uint32_t *)UART_BASE)   /* CMSDK APB UART */
static void put(char c) { while (UART[1] & 1u) {} UART[0] = (uint32_t)c; }
static void semihost_exit(uint32_t code) {
  static uint32_t block[2];
  block[0] = 0x20026u; block[1] = code;   /* ADP_Stopped_ApplicationExit */
  register uint32_t r0 __asm__("r0") = 0x20u;  /* SYS_EXIT_EXTENDED */
  register uint32_t *r1 __asm__("r1") = block;
  __asm__ volatile("bkpt 0xab" : : "r"(r0), "r"(r1) : "memory");
}
static const uintptr_t words[] = {POOL_WORDS 0};
static int pools_ok(void) {  /* write and read back the first and last word of each pool */
  for (const uintptr_t *w = words; *w; w++) *(volatile uint32_t *)*w = (uint32_t)*w ^ 0xa5a5a5a5u;
  for (const uintptr_t *w = words; *w; w++)
    if (*(volatile uint32_t *)*w != ((uint32_t)*w ^ 0xa5a5a5a5u)) return 0;
  return 1;
}
void reset(void) {
  UART[4] = 16u;  /* BAUDDIV */
  UART[2] = 1u;   /* CTRL: TX enable */
  for (const char *s = pools_ok() ? "board ok\n" : "pool bad\n"; *s; s++) put(*s);
  semihost_exit(0);
  for (;;) {}
}
"""

RISCV = r"""
#include <stdint.h>
__asm__(".section .text.start\n.global _start\n_start:\n"
        "  la sp, __stack_top\n  j main\n");
#define UART ((volatile uint32_t *)UART_BASE)   /* SiFive UART */
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
static const uintptr_t words[] = {POOL_WORDS 0};
static int pools_ok(void) {
  for (const uintptr_t *w = words; *w; w++) *(volatile uint32_t *)*w = (uint32_t)*w ^ 0xa5a5a5a5u;
  for (const uintptr_t *w = words; *w; w++)
    if (*(volatile uint32_t *)*w != ((uint32_t)*w ^ 0xa5a5a5a5u)) return 0;
  return 1;
}
int main(void) {
  UART[2] = 1u;   /* txctrl: TX enable */
  for (const char *s = pools_ok() ? "board ok\n" : "pool bad\n"; *s; s++) put(*s);
  semihost_exit(0);
  for (;;) {}
}
"""


@pytest.mark.qemu
@pytest.mark.parametrize("board", EMULATED, ids=lambda b: b.tag)
def test_emulated_board_boots_from_its_record(board, tmp_path):
    gcc = board.toolchain.tool("gcc")
    missing = [t for t in (gcc, board.qemu.system) if shutil.which(t) is None]
    if missing:
        pytest.skip(f"missing {', '.join(missing)} (scripts/setup.sh installs them)")
    source = ARM if board.target.family == "arm" else RISCV
    words = [w for p in board.memory.pools for w in (p.origin, p.end - 4)]
    pool_words = "".join(f"0x{w:x}u," for w in words)
    (tmp_path / "main.c").write_text(source)
    (tmp_path / "link.ld").write_text(SCRIPT.format(memory=board.memory.linker_memory()))
    cmd = [
        gcc,
        *board.toolchain.cpu_flags,
        "-O2",
        "-ffreestanding",
        "-nostdlib",
        "-nostartfiles",
        f"-DUART_BASE=0x{board.console.base:x}u",
        f"-DPOOL_WORDS={pool_words}",
        "-T",
        "link.ld",
        "main.c",
        "-o",
        "fw.elf",
    ]
    subprocess.run(cmd, cwd=tmp_path, check=True, capture_output=True, text=True)
    run = [
        board.qemu.system,
        "-M",
        board.qemu.machine,
        *board.qemu.args,
        "-kernel",
        "fw.elf",
        "-serial",
        "stdio",
        "-monitor",
        "none",
    ]
    proc = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert proc.stdout == "board ok\n", proc.stderr
    assert proc.returncode == 0
