/*
 * Port for the ESP32-C3 (RV32IMC; ESP32-C3-DevKitM-1).  NOT VERIFIED ON
 * HARDWARE: the ELF links, and aot build turns it into an ESP app image
 * with esptool's elf2image (aot/firmware/images.py), written at 0x10000
 * behind an ESP-IDF second-stage boot loader and partition table, which
 * aot does not provide (the board ships with them; docs/hardware.md).
 * Register facts from the ESP32-C3 Technical Reference Manual.
 *
 * - App descriptor: ESP-IDF boot loaders since v5.2.3/v5.3.2 read a 256-byte
 *   esp_app_desc_t at the start of the app's first DROM segment (magic word,
 *   eFuse block revision range, MMU page size) and refuse an image without
 *   it; aot_esp_app_desc below is that record, put first in .rodata by the
 *   linker script.
 *
 * - Console: UART0 (0x60000000), polled through its FIFO register (0x00)
 *   and the FIFO counts in UART_STATUS (0x1C: RXFIFO_CNT bits 9:0,
 *   TXFIFO_CNT bits 25:16; the FIFOs hold 128 bytes).  The pins (U0TXD
 *   GPIO21, U0RXD GPIO20), clock and 115200 baud are left as the ROM and the
 *   boot loader configured them for their own log; the port does not
 *   reprogram the divider, so AOT_CONSOLE_BAUD must be 115200.
 * - Watchdogs: the boot loader leaves the RTC watchdog and the timer group
 *   watchdogs armed; aot_port_init() disables them and sets the super
 *   watchdog to feed itself, or the chip would reset during long runs.
 * - Timer: the ESP32-C3 has no mcycle CSR; its performance counter is set to
 *   count CPU cycles (mpcer 0x7E0 = 1: cycles, mpcmr 0x7E1 = 1: counting on)
 *   and read from mpccr (0x7E2).  It is 32 bits; timer_stop() returns the
 *   32-bit difference, exact for runs shorter than 2^32 cycles (26 s at
 *   160 MHz), in AOT_TIMER_CYCLES.  The port does not change the CPU clock:
 *   cycles are cycles at whatever clock the boot loader chose.
 * - aot_port_exit() loops on ebreak (a debugger sees the breakpoint; without
 *   one, crt0.S's trap handler parks the core).
 *
 * Board parameters (the project passes them from the board record):
 *   AOT_CONSOLE_BASE  0x60000000 (UART0)
 *   AOT_CONSOLE_BAUD  115200
 */
#include <stdint.h>

#include "aot/platform.h"

#ifndef AOT_CONSOLE_BASE
#define AOT_CONSOLE_BASE 0x60000000u /* UART0 */
#endif
#ifndef AOT_CONSOLE_BAUD
#define AOT_CONSOLE_BAUD 115200u
#endif
#if AOT_CONSOLE_BAUD != 115200
#error "esp32c3 port: the UART keeps the boot loader's 115200 baud"
#endif

/* The timer is the board record's choice ([timer] kind, AOT_TIMER_KIND_<KIND>
 * from aot.firmware.project.board_defines): refuse one this code does not have. */
#if defined(AOT_BOARD_FACTS) && !defined(AOT_TIMER_KIND_ESP32_MPCCR)
#error "esp32c3 port: it times with the mpccr cycle counter; the board record names another timer kind"
#endif

#define REG(addr) (*(volatile uint32_t *)(addr))

/* The app descriptor (layout of ESP-IDF's esp_app_desc_t, 256 bytes). */
struct aot_esp_app_desc {
    uint32_t magic_word;               /* 0xABCD5432 */
    uint32_t secure_version;
    uint32_t reserved1[2];
    char version[32];
    char project_name[32];
    char time[16];
    char date[16];
    char idf_ver[32];
    uint8_t app_elf_sha256[32];
    uint16_t min_efuse_blk_rev_full;   /* 0: any */
    uint16_t max_efuse_blk_rev_full;   /* 0xFFFF: no upper bound */
    uint8_t mmu_page_size;             /* log2 of the flash MMU page: 16 = 64 KiB */
    uint8_t reserved3[3];
    uint32_t reserved2[18];
};
typedef char aot_esp_app_desc_is_256_bytes[sizeof(struct aot_esp_app_desc) == 256 ? 1 : -1];

__attribute__((used, section(".rodata_desc"))) const struct aot_esp_app_desc aot_esp_app_desc = {
    .magic_word = 0xABCD5432u,
    .version = "aot",
    .project_name = "aot",
    .idf_ver = "none (aot)",
    .min_efuse_blk_rev_full = 0u,
    .max_efuse_blk_rev_full = 0xFFFFu,
    .mmu_page_size = 16u,
};

#define UART_FIFO REG(AOT_CONSOLE_BASE + 0x00u)
#define UART_STATUS REG(AOT_CONSOLE_BASE + 0x1Cu)
#define UART_RXFIFO_CNT(status) ((status) & 0x3FFu)
#define UART_TXFIFO_CNT(status) (((status) >> 16) & 0x3FFu)
#define UART_FIFO_BYTES 128u

/* Watchdogs: RTC_CNTL at 0x60008000, timer groups 0 and 1. */
#define RTC_WDT_CONFIG0 REG(0x60008090u)
#define RTC_WDT_WPROTECT REG(0x600080A8u)
#define RTC_SWD_CONF REG(0x600080ACu)
#define RTC_SWD_WPROTECT REG(0x600080B0u)
#define RTC_SWD_AUTO_FEED_EN (1u << 31)
#define TIMG_WDT_CONFIG0(base) REG((base) + 0x48u)
#define TIMG_WDT_WPROTECT(base) REG((base) + 0x64u)
#define TIMG0_BASE 0x6001F000u
#define TIMG1_BASE 0x60020000u
#define WDT_WKEY 0x50D83AA1u
#define SWD_WKEY 0x8F1D312Au

static uint32_t timer_origin;

static uint32_t cycle_count(void)
{
    uint32_t v;
    /* The compiler's .attribute arch may omit Zicsr: enable it around the CSR access. */
    __asm__ volatile(".option push\n.option arch, +zicsr\n"
                     "csrr %0, 0x7E2\n" /* mpccr */
                     ".option pop"
                     : "=r"(v));
    return v;
}

static void watchdogs_off(void)
{
    RTC_WDT_WPROTECT = WDT_WKEY;
    RTC_WDT_CONFIG0 = 0;
    RTC_WDT_WPROTECT = 0;
    TIMG_WDT_WPROTECT(TIMG0_BASE) = WDT_WKEY;
    TIMG_WDT_CONFIG0(TIMG0_BASE) = 0;
    TIMG_WDT_WPROTECT(TIMG0_BASE) = 0;
    TIMG_WDT_WPROTECT(TIMG1_BASE) = WDT_WKEY;
    TIMG_WDT_CONFIG0(TIMG1_BASE) = 0;
    TIMG_WDT_WPROTECT(TIMG1_BASE) = 0;
    RTC_SWD_WPROTECT = SWD_WKEY;
    RTC_SWD_CONF |= RTC_SWD_AUTO_FEED_EN;
    RTC_SWD_WPROTECT = 0;
}

void aot_port_init(void)
{
    watchdogs_off();
    __asm__ volatile(".option push\n.option arch, +zicsr\n"
                     "csrwi 0x7E0, 1\n" /* mpcer: count CPU cycles */
                     "csrwi 0x7E1, 1\n" /* mpcmr: counting enabled */
                     ".option pop"
                     ::: "memory");
}

int aot_port_read_byte(void)
{
    while (UART_RXFIFO_CNT(UART_STATUS) == 0) {
    }
    return (int)(UART_FIFO & 0xFFu);
}

void aot_port_write(const uint8_t *data, size_t len)
{
    size_t i;
    for (i = 0; i < len; ++i) {
        while (UART_TXFIFO_CNT(UART_STATUS) >= UART_FIFO_BYTES - 1u) {
        }
        UART_FIFO = data[i];
    }
}

void aot_port_timer_start(void)
{
    timer_origin = cycle_count();
}

uint64_t aot_port_timer_stop(void)
{
    return (uint32_t)(cycle_count() - timer_origin);
}

uint8_t aot_port_timer_unit(void)
{
    return AOT_TIMER_CYCLES;
}

uint32_t aot_port_clock_hz(void)
{
    return 0; /* whatever the ESP boot loader set up: not known here */
}

uint32_t aot_port_entropy(void)
{
    return cycle_count(); /* depends on how long the host took to connect */
}

void aot_port_exit(int code)
{
    (void)code;
    for (;;) {
        __asm__ volatile("ebreak");
    }
}
