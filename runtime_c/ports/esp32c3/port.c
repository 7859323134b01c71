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
 *   watchdog to feed itself, or the chip would reset during long runs.  A
 *   timer group watchdog takes a new configuration only when
 *   TIMG_WDT_CONF_UPDATE_EN is written after it (TRM chapter "Timer Group",
 *   TIMG_WDTCONFIG0_REG bit 22).
 * - CPU clock: the ESP-IDF second-stage boot loader leaves the CPU at
 *   CONFIG_BOOTLOADER_CPU_CLK_FREQ_MHZ, 80 MHz by default.  With the SoC clock
 *   on the PLL (SYSTEM_SYSCLK_CONF_REG SOC_CLK_SEL = 1), the port sets
 *   SYSTEM_CPU_PER_CONF_REG CPUPERIOD_SEL = 1: CPU_CLK = 160 MHz (TRM chapter
 *   "Reset and Clock", CPU clock table), APB stays 80 MHz so the UART's divider and
 *   115200 baud do not change.  aot_port_clock_hz() reports what the
 *   registers say afterwards.
 * - Timer: the ESP32-C3 has no mcycle CSR; its performance counter is set to
 *   count CPU cycles (mpcer 0x7E0 = 1: cycles, mpcmr 0x7E1 = 1: counting on)
 *   and read from mpccr (0x7E2).  It is 32 bits; timer_stop() returns the
 *   32-bit difference, exact for runs shorter than 2^32 cycles (26 s at
 *   160 MHz), in AOT_TIMER_CYCLES.
 * - aot_port_init() measures the CPU clock once (aot_port_report() sends
 *   it): mpccr cycles over 10 ms of the system timer, which counts at 16 MHz
 *   from the 40 MHz crystal whatever the CPU clock (TRM chapter "System
 *   Timer").
 * - aot_port_exit() loops on ebreak (a debugger sees the breakpoint; without
 *   one, crt0.S's trap handler parks the core).
 *
 * Board parameters (the project passes them from the board record):
 *   AOT_CONSOLE_BASE  0x60000000 (UART0)
 *   AOT_CONSOLE_BAUD  115200
 * Registers go through aot/mmio.h: tests/runtime_c/test_port_registers.py runs
 * the set-up on the host against recorded registers (there CSR n is recorded
 * as a read of address n).
 */
#include <stdint.h>

#include "aot/mmio.h"
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

#define UART_FIFO (AOT_CONSOLE_BASE + 0x00u)
#define UART_STATUS (AOT_CONSOLE_BASE + 0x1Cu)
#define UART_RXFIFO_CNT(status) ((status) & 0x3FFu)
#define UART_TXFIFO_CNT(status) (((status) >> 16) & 0x3FFu)
#define UART_FIFO_BYTES 128u

/* Watchdogs: RTC_CNTL at 0x60008000, timer groups 0 and 1. */
#define RTC_WDT_CONFIG0 0x60008090u
#define RTC_WDT_WPROTECT 0x600080A8u
#define RTC_SWD_CONF 0x600080ACu
#define RTC_SWD_WPROTECT 0x600080B0u
#define RTC_SWD_AUTO_FEED_EN (1u << 31)
#define TIMG_WDT_CONFIG0(base) ((base) + 0x48u)
#define TIMG_WDT_WPROTECT(base) ((base) + 0x64u)
#define TIMG_WDT_CONF_UPDATE_EN (1u << 22)
#define TIMG0_BASE 0x6001F000u
#define TIMG1_BASE 0x60020000u
#define WDT_WKEY 0x50D83AA1u
#define SWD_WKEY 0x8F1D312Au

/* Clocks (TRM "Reset and Clock"; SYSTEM registers at 0x600C0000). */
#define SYSTEM_CPU_PER_CONF 0x600C0008u
#define SYSTEM_SYSCLK_CONF 0x600C0058u
#define CPUPERIOD_SEL_MASK 3u
#define CPUPERIOD_SEL_160 1u
#define SOC_CLK_SEL(v) (((v) >> 10) & 3u)
#define SOC_CLK_PLL 1u
#define SOC_CLK_XTAL 0u
#define PRE_DIV_CNT(v) ((v) & 0x3FFu)
#define XTAL_HZ 40000000u

/* System timer (TRM "System Timer"): UNIT0 counts at 16 MHz. */
#define SYSTIMER_UNIT0_OP 0x60023004u
#define SYSTIMER_UNIT0_VALUE_LO 0x60023044u
#define SYSTIMER_UPDATE (1u << 30)
#define SYSTIMER_VALUE_VALID (1u << 29)
#define SYSTIMER_HZ 16000000u
#define MEASURE_TICKS 160000u /* 10 ms */
#define SYSTIMER_WAIT 100000u

/* Cache in front of the external flash (TRM "System and Memory", EXTMEM). */
#define EXTMEM_ICACHE_CTRL 0x600C4000u
#define ICACHE_ENABLE 1u

static uint32_t timer_origin;
static uint32_t cpu_hz;
static uint32_t measured_hz;

static uint32_t measure_clock(void);

static uint32_t cycle_count(void)
{
#if AOT_MMIO_HOST
    return aot_mmio_read(0x7E2u);
#else
    uint32_t v;
    /* The compiler's .attribute arch may omit Zicsr: enable it around the CSR access. */
    __asm__ volatile(".option push\n.option arch, +zicsr\n"
                     "csrr %0, 0x7E2\n" /* mpccr */
                     ".option pop"
                     : "=r"(v));
    return v;
#endif
}

static void timg_wdt_off(uint32_t base)
{
    aot_mmio_write(TIMG_WDT_WPROTECT(base), WDT_WKEY);
    aot_mmio_write(TIMG_WDT_CONFIG0(base), 0);                       /* EN = 0 */
    aot_mmio_write(TIMG_WDT_CONFIG0(base), TIMG_WDT_CONF_UPDATE_EN); /* take it */
    aot_mmio_write(TIMG_WDT_WPROTECT(base), 0);
}

static void watchdogs_off(void)
{
    aot_mmio_write(RTC_WDT_WPROTECT, WDT_WKEY);
    aot_mmio_write(RTC_WDT_CONFIG0, 0);
    aot_mmio_write(RTC_WDT_WPROTECT, 0);
    timg_wdt_off(TIMG0_BASE);
    timg_wdt_off(TIMG1_BASE);
    aot_mmio_write(RTC_SWD_WPROTECT, SWD_WKEY);
    aot_mmio_set(RTC_SWD_CONF, RTC_SWD_AUTO_FEED_EN);
    aot_mmio_write(RTC_SWD_WPROTECT, 0);
}

/* The CPU clock the registers select now (TRM "Reset and Clock"). */
static uint32_t selected_cpu_hz(void)
{
    uint32_t sysclk = aot_mmio_read(SYSTEM_SYSCLK_CONF);
    if (SOC_CLK_SEL(sysclk) == SOC_CLK_PLL) {
        uint32_t sel = aot_mmio_read(SYSTEM_CPU_PER_CONF) & CPUPERIOD_SEL_MASK;
        return sel == CPUPERIOD_SEL_160 ? 160000000u : sel == 0u ? 80000000u : 0u;
    }
    if (SOC_CLK_SEL(sysclk) == SOC_CLK_XTAL) {
        return XTAL_HZ / (PRE_DIV_CNT(sysclk) + 1u);
    }
    return 0; /* RC_FAST: about 17.5 MHz, not known exactly */
}

static void cpu_clock_160(void)
{
    if (SOC_CLK_SEL(aot_mmio_read(SYSTEM_SYSCLK_CONF)) == SOC_CLK_PLL) {
        aot_mmio_modify(SYSTEM_CPU_PER_CONF, CPUPERIOD_SEL_MASK, CPUPERIOD_SEL_160);
    }
    cpu_hz = selected_cpu_hz();
}

void aot_port_init(void)
{
    watchdogs_off();
    cpu_clock_160();
#if !AOT_MMIO_HOST
    __asm__ volatile(".option push\n.option arch, +zicsr\n"
                     "csrwi 0x7E0, 1\n" /* mpcer: count CPU cycles */
                     "csrwi 0x7E1, 1\n" /* mpcmr: counting enabled */
                     ".option pop"
                     ::: "memory");
#endif
    measured_hz = measure_clock(); /* once, at boot: INFO answers at once */
}

/* UNIT0's low word into *ticks; 0 when the latch never becomes valid. */
static int systimer_now(uint32_t *ticks)
{
    aot_mmio_write(SYSTIMER_UNIT0_OP, SYSTIMER_UPDATE);
    if (!aot_mmio_wait(SYSTIMER_UNIT0_OP, SYSTIMER_VALUE_VALID, SYSTIMER_VALUE_VALID,
                       SYSTIMER_WAIT)) {
        return 0;
    }
    *ticks = aot_mmio_read(SYSTIMER_UNIT0_VALUE_LO);
    return 1;
}

/* CPU cycles over MEASURE_TICKS of the system timer, in Hz; 0 when the
 * system timer does not answer or does not count. */
static uint32_t measure_clock(void)
{
    uint32_t s0, s1, c0, c1, n;
    if (!systimer_now(&s0)) {
        return 0;
    }
    c0 = cycle_count();
    s1 = s0;
    for (n = 0; n < SYSTIMER_WAIT && s1 - s0 < MEASURE_TICKS; ++n) {
        if (!systimer_now(&s1)) {
            return 0;
        }
    }
    c1 = cycle_count();
    if (s1 - s0 < MEASURE_TICKS) {
        return 0;
    }
    return (uint32_t)(((uint64_t)(c1 - c0) * SYSTIMER_HZ + (s1 - s0) / 2u) / (s1 - s0));
}

void aot_port_report(aot_device_report_t *report)
{
    report->flash_wait_states = AOT_NO_WAIT_STATES; /* the flash sits behind the cache */
    report->caches = (aot_mmio_read(EXTMEM_ICACHE_CTRL) & ICACHE_ENABLE) != 0 ? AOT_CACHE_XIP : 0u;
    report->measured_clock_hz = measured_hz;
}

int aot_port_read_byte(void)
{
    while (UART_RXFIFO_CNT(aot_mmio_read(UART_STATUS)) == 0) {
    }
    return (int)(aot_mmio_read(UART_FIFO) & 0xFFu);
}

void aot_port_write(const uint8_t *data, size_t len)
{
    size_t i;
    for (i = 0; i < len; ++i) {
        while (UART_TXFIFO_CNT(aot_mmio_read(UART_STATUS)) >= UART_FIFO_BYTES - 1u) {
        }
        aot_mmio_write(UART_FIFO, data[i]);
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
    return cpu_hz; /* 0 where the registers name no clock known here */
}

uint32_t aot_port_entropy(void)
{
    return cycle_count(); /* depends on how long the host took to connect */
}

void aot_port_exit(int code)
{
    (void)code;
    for (;;) {
#if !AOT_MMIO_HOST
        __asm__ volatile("ebreak");
#endif
    }
}
