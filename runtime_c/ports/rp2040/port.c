/*
 * Port for the RP2040 (Raspberry Pi Pico; one Cortex-M0+ core used).
 * NOT VERIFIED ON HARDWARE: it builds and links, with the second-stage boot
 * loader (boot2.S, written for this port: quad EBh continuous read at
 * clk_sys / 2) and its CRC at 0x10000000 and the vector table at
 * 0x10000100; its set-up runs on the host against recorded registers
 * (tests/runtime_c/test_port_registers.py).  Register values follow the
 * RP2040 datasheet (chapters 2.14 Subsystem resets, 2.15 Clocks, 2.16 XOSC,
 * 2.18 PLL, 2.19 GPIO, 4.2 UART).
 *
 * - Clocks: XOSC 12 MHz -> clk_ref; PLL_SYS 12 MHz * 125 = VCO 1500 MHz,
 *   / 6 / 2 = 125 MHz -> clk_sys; clk_peri = clk_sys.  AOT_CPU_HZ (the
 *   board's clock_hz) must be 125 MHz, the one PLL setting this port knows.
 *   Every wait (XOSC stable, PLL lock, clock switches, resets) gives up after
 *   AOT_CLOCK_WAIT polls: without a crystal the core stays on the ring
 *   oscillator (about 6.5 MHz, not known exactly), aot_port_clock_hz()
 *   reports 0 and the UART's baud is wrong, but the core runs for a debugger
 *   instead of hanging silently in the first wait.
 * - aot_port_report() measures clk_sys with the clocks block's frequency
 *   counter (datasheet 2.15, frequency counter) against clk_ref = XOSC, independent of the
 *   PLL; it reports the XIP cache (XIP_CTRL.EN, 2.6.3).
 * - Console: UART0 (PL011) on GP0 (TX) / GP1 (RX), 8N1 with FIFOs, baud
 *   divisors computed from clk_peri: at 125 MHz and 115200 baud IBRD 67,
 *   FBRD 52.  The Pico has no USB-UART bridge of its own: connect a probe's
 *   UART (e.g. the Raspberry Pi Debug Probe) to GP0/GP1.
 * - Timer: the M0+ has no DWT cycle counter.  SysTick runs from the core
 *   clock with a 24-bit reload of 2^24 - 1; its interrupt
 *   (aot_systick_handler, every 134 ms at 125 MHz) counts wrap-arounds, which
 *   extends it to 64 bits, so runs of any length are measured in
 *   AOT_TIMER_CYCLES (core clock cycles, including the interrupt's own).
 * - aot_port_exit() stops at a breakpoint (bkpt) for a debugger.
 *
 * Board parameters (the project passes them from the board record):
 *   AOT_CONSOLE_BASE  0x40034000 (UART0: the only UART wired to GP0/GP1)
 *   AOT_CONSOLE_BAUD  115200
 *   AOT_CPU_HZ        125000000
 */
#include <stdint.h>

#include "aot/mmio.h"
#include "aot/platform.h"

#ifndef AOT_CONSOLE_BASE
#define AOT_CONSOLE_BASE 0x40034000u /* UART0 */
#endif
#ifndef AOT_CONSOLE_BAUD
#define AOT_CONSOLE_BAUD 115200u
#endif
#ifndef AOT_CPU_HZ
#define AOT_CPU_HZ 125000000u
#endif

/* The timer is the board record's choice ([timer] kind, AOT_TIMER_KIND_<KIND>
 * from aot.firmware.project.board_defines): refuse one this code does not have. */
#if defined(AOT_BOARD_FACTS) && !defined(AOT_TIMER_KIND_SYSTICK)
#error "rp2040 port: it times with SysTick; the board record names another timer kind"
#endif

#if AOT_CONSOLE_BASE != 0x40034000u
#error "rp2040 port: only UART0 (0x40034000) on GP0/GP1 is set up"
#endif
#if AOT_CPU_HZ == 125000000
#define PLL_FBDIV 125u   /* 12 MHz * 125 = 1500 MHz VCO */
#define PLL_POSTDIV1 6u
#define PLL_POSTDIV2 2u  /* 1500 / 6 / 2 = 125 MHz */
#else
#error "rp2040 port: AOT_CPU_HZ must be 125000000 (the only PLL setting known here)"
#endif

/* PL011 divisors: 64 * clk / (16 * baud) = IBRD * 64 + FBRD, rounded. */
#define UART_DIV ((8ull * AOT_CPU_HZ) / AOT_CONSOLE_BAUD)
#define UART_IBRD ((uint32_t)(UART_DIV >> 7))
#define UART_FBRD ((uint32_t)(((UART_DIV & 0x7Fu) + 1u) / 2u))

/* Polls of a ready flag before the set-up gives up: the XOSC needs about
 * 1 ms (XOSC_DELAY), the PLL lock well under 1 ms; a poll is several cycles
 * of the 6.5 MHz ring oscillator. */
#ifndef AOT_CLOCK_WAIT
#define AOT_CLOCK_WAIT 100000u
#endif

/* Atomic register aliases (datasheet 2.1.2): +0x2000 sets bits, +0x3000 clears. */
#define SET(addr) ((addr) + 0x2000u)
#define CLR(addr) ((addr) + 0x3000u)

#define RESETS_RESET 0x4000C000u
#define RESETS_RESET_DONE (0x4000C008u)
#define RESET_IO_BANK0 (1u << 5)
#define RESET_PADS_BANK0 (1u << 8)
#define RESET_PLL_SYS (1u << 12)
#define RESET_UART0 (1u << 22)

#define CLK_REF_CTRL 0x40008030u
#define CLK_REF_SELECTED (0x40008038u)
#define CLK_SYS_CTRL 0x4000803Cu
#define CLK_SYS_SELECTED (0x40008044u)
#define CLK_PERI_CTRL (0x40008048u)
#define CLK_REF_SRC_XOSC 2u
#define CLK_SYS_SRC_AUX 1u     /* AUXSRC 0 = clksrc_pll_sys */
#define CLK_PERI_ENABLE (1u << 11) /* AUXSRC 0 = clk_sys */

#define XOSC_CTRL (0x40024000u)
#define XOSC_STATUS (0x40024004u)
#define XOSC_STARTUP (0x4002400Cu)
#define XOSC_FREQ_1_15MHZ 0xAA0u
#define XOSC_ENABLE (0xFABu << 12)
#define XOSC_STABLE (1u << 31)
#define XOSC_DELAY 47u /* (12 MHz / 1000 + 128) / 256: about 1 ms */

#define PLL_SYS_CS (0x40028000u)
#define PLL_SYS_PWR 0x40028004u
#define PLL_SYS_FBDIV_INT (0x40028008u)
#define PLL_SYS_PRIM (0x4002800Cu)
#define PLL_LOCK (1u << 31)
#define PLL_PWR_PD (1u << 0)
#define PLL_PWR_POSTDIVPD (1u << 3)
#define PLL_PWR_VCOPD (1u << 5)

/* Frequency counter (datasheet 2.15 Clocks, registers FC0_*). */
#define FC0_REF_KHZ 0x40008080u
#define FC0_MIN_KHZ 0x40008084u
#define FC0_MAX_KHZ 0x40008088u
#define FC0_INTERVAL 0x40008090u
#define FC0_SRC 0x40008094u
#define FC0_STATUS 0x40008098u
#define FC0_RESULT 0x4000809Cu
#define FC0_SRC_CLK_SYS 0x09u
#define FC0_STATUS_DONE (1u << 4)
#define FC0_STATUS_RUNNING (1u << 8)
#define XOSC_KHZ 12000u

/* XIP cache control (datasheet 2.6.3 Flash, XIP_CTRL). */
#define XIP_CTRL 0x14000000u
#define XIP_CTRL_EN 1u

#define IO_BANK0_GPIO_CTRL(n) (0x40014004u + 8u * (n))
#define GPIO_FUNC_UART 2u

#define UART_DR (AOT_CONSOLE_BASE + 0x00u)
#define UART_FR (AOT_CONSOLE_BASE + 0x18u)
#define UART_IBRD_REG (AOT_CONSOLE_BASE + 0x24u)
#define UART_FBRD_REG (AOT_CONSOLE_BASE + 0x28u)
#define UART_LCR_H (AOT_CONSOLE_BASE + 0x2Cu)
#define UART_CR (AOT_CONSOLE_BASE + 0x30u)
#define FR_RXFE (1u << 4)
#define FR_TXFF (1u << 5)
#define LCR_H_FEN (1u << 4)
#define LCR_H_WLEN_8 (3u << 5)
#define CR_UARTEN (1u << 0)
#define CR_TXE (1u << 8)
#define CR_RXE (1u << 9)

#define SYST_CSR (0xE000E010u)
#define SYST_RVR (0xE000E014u)
#define SYST_CVR (0xE000E018u)
#define SYST_RELOAD 0x00FFFFFFu

static volatile uint32_t systick_wraps;
static uint64_t timer_origin;

void aot_systick_handler(void);

void aot_systick_handler(void)
{
    systick_wraps = systick_wraps + 1u;
}

static uint32_t core_hz; /* 0 until clocks_init() reaches the PLL */

static int unreset(uint32_t bits)
{
    aot_mmio_write(CLR(RESETS_RESET), bits);
    return aot_mmio_wait(RESETS_RESET_DONE, bits, bits, AOT_CLOCK_WAIT);
}

/* XOSC -> clk_ref, PLL_SYS -> clk_sys; 1 when it got there, 0 where a step
 * did not answer (datasheet 2.15 Clocks, 2.16 XOSC, 2.18 PLL). */
static int clocks_init(void)
{
    /* clk_sys back to clk_ref and clk_ref to the ring oscillator, so that the
     * PLL and XOSC can be (re)configured whatever ran before (a debugger may
     * load this image over an earlier one). */
    aot_mmio_write(CLR(CLK_SYS_CTRL), 1u);
    if (!aot_mmio_wait(CLK_SYS_SELECTED, 1u, 1u, AOT_CLOCK_WAIT)) {
        return 0;
    }
    aot_mmio_write(CLR(CLK_REF_CTRL), 3u);
    if (!aot_mmio_wait(CLK_REF_SELECTED, 1u, 1u, AOT_CLOCK_WAIT)) {
        return 0;
    }

    aot_mmio_write(XOSC_STARTUP, XOSC_DELAY);
    aot_mmio_write(XOSC_CTRL, XOSC_ENABLE | XOSC_FREQ_1_15MHZ);
    if (!aot_mmio_wait(XOSC_STATUS, XOSC_STABLE, XOSC_STABLE, AOT_CLOCK_WAIT)) {
        return 0; /* no crystal: stay on the ring oscillator */
    }
    aot_mmio_write(CLK_REF_CTRL, CLK_REF_SRC_XOSC);
    if (!aot_mmio_wait(CLK_REF_SELECTED, 1u << CLK_REF_SRC_XOSC, 1u << CLK_REF_SRC_XOSC,
                       AOT_CLOCK_WAIT)) {
        return 0;
    }

    aot_mmio_write(SET(RESETS_RESET), RESET_PLL_SYS);
    if (!unreset(RESET_PLL_SYS)) {
        return 0;
    }
    aot_mmio_write(PLL_SYS_CS, 1u); /* REFDIV 1 */
    aot_mmio_write(PLL_SYS_FBDIV_INT, PLL_FBDIV);
    aot_mmio_write(CLR(PLL_SYS_PWR), PLL_PWR_PD | PLL_PWR_VCOPD);
    if (!aot_mmio_wait(PLL_SYS_CS, PLL_LOCK, PLL_LOCK, AOT_CLOCK_WAIT)) {
        aot_mmio_write(SET(PLL_SYS_PWR), PLL_PWR_PD | PLL_PWR_VCOPD); /* off again */
        return 0;
    }
    aot_mmio_write(PLL_SYS_PRIM, (PLL_POSTDIV1 << 16) | (PLL_POSTDIV2 << 12));
    aot_mmio_write(CLR(PLL_SYS_PWR), PLL_PWR_POSTDIVPD);

    aot_mmio_write(CLK_SYS_CTRL, 0u); /* AUXSRC = pll_sys while SRC is still clk_ref */
    aot_mmio_write(CLK_SYS_CTRL, CLK_SYS_SRC_AUX);
    if (!aot_mmio_wait(CLK_SYS_SELECTED, 1u << CLK_SYS_SRC_AUX, 1u << CLK_SYS_SRC_AUX,
                       AOT_CLOCK_WAIT)) {
        aot_mmio_write(CLK_SYS_CTRL, 0u);
        return 0;
    }
    return 1;
}

void aot_port_init(void)
{
    if (clocks_init()) {
        core_hz = AOT_CPU_HZ;
    }
    aot_mmio_write(CLK_PERI_CTRL, 0u);
    aot_mmio_write(CLK_PERI_CTRL, CLK_PERI_ENABLE); /* clk_peri = clk_sys */
    (void)unreset(RESET_IO_BANK0 | RESET_PADS_BANK0 | RESET_UART0);
    aot_mmio_write(IO_BANK0_GPIO_CTRL(0u), GPIO_FUNC_UART); /* GP0: UART0 TX */
    aot_mmio_write(IO_BANK0_GPIO_CTRL(1u), GPIO_FUNC_UART); /* GP1: UART0 RX */
    aot_mmio_write(UART_IBRD_REG, UART_IBRD);
    aot_mmio_write(UART_FBRD_REG, UART_FBRD);
    aot_mmio_write(UART_LCR_H, LCR_H_WLEN_8 | LCR_H_FEN); /* also latches the divisors */
    aot_mmio_write(UART_CR, CR_UARTEN | CR_TXE | CR_RXE);

    aot_mmio_write(SYST_RVR, SYST_RELOAD);
    aot_mmio_write(SYST_CVR, 0);
    aot_mmio_write(SYST_CSR, 7u); /* ENABLE | TICKINT | CLKSOURCE = processor clock */
}

/* clk_sys counted by FC0 against clk_ref; 0 unless clk_ref is the crystal. */
static uint32_t measure_clock(void)
{
    uint32_t result;
    if ((aot_mmio_read(CLK_REF_SELECTED) & (1u << CLK_REF_SRC_XOSC)) == 0) {
        return 0;
    }
    if (!aot_mmio_wait(FC0_STATUS, FC0_STATUS_RUNNING, 0u, AOT_CLOCK_WAIT)) {
        return 0;
    }
    aot_mmio_write(FC0_REF_KHZ, XOSC_KHZ);
    aot_mmio_write(FC0_INTERVAL, 10u); /* about 1 ms */
    aot_mmio_write(FC0_MIN_KHZ, 0u);
    aot_mmio_write(FC0_MAX_KHZ, 0x1FFFFFFu);
    aot_mmio_write(FC0_SRC, FC0_SRC_CLK_SYS); /* starts the count */
    if (!aot_mmio_wait(FC0_STATUS, FC0_STATUS_DONE, FC0_STATUS_DONE, AOT_CLOCK_WAIT)) {
        return 0;
    }
    result = aot_mmio_read(FC0_RESULT); /* kHz in bits 29:5, 1/32 kHz in 4:0 */
    aot_mmio_write(FC0_SRC, 0u);
    return (uint32_t)(((uint64_t)result * 1000u + 16u) / 32u);
}

void aot_port_report(aot_device_report_t *report)
{
    report->flash_wait_states = AOT_NO_WAIT_STATES; /* XIP: boot2 sets the SSI's divisor */
    report->caches = (aot_mmio_read(XIP_CTRL) & XIP_CTRL_EN) != 0 ? AOT_CACHE_XIP : 0u;
    report->measured_clock_hz = measure_clock();
}

int aot_port_read_byte(void)
{
    while ((aot_mmio_read(UART_FR) & FR_RXFE) != 0) {
    }
    return (int)(aot_mmio_read(UART_DR) & 0xFFu); /* error flags (bits 8..11) cost a frame */
}

void aot_port_write(const uint8_t *data, size_t len)
{
    size_t i;
    for (i = 0; i < len; ++i) {
        while ((aot_mmio_read(UART_FR) & FR_TXFF) != 0) {
        }
        aot_mmio_write(UART_DR, data[i]);
    }
}

/* Core cycles since SysTick started: wraps * 2^24 + elapsed in this period.
 * A wrap between the two reads of the count shows as a changed count, and
 * the pair is read again. */
static uint64_t cycles(void)
{
    uint32_t wraps;
    uint32_t value;
    do {
        wraps = systick_wraps;
        value = aot_mmio_read(SYST_CVR);
    } while (wraps != systick_wraps);
    return ((uint64_t)wraps << 24) + (SYST_RELOAD - value);
}

void aot_port_timer_start(void)
{
    timer_origin = cycles();
}

uint64_t aot_port_timer_stop(void)
{
    return cycles() - timer_origin;
}

uint8_t aot_port_timer_unit(void)
{
    return AOT_TIMER_CYCLES;
}

uint32_t aot_port_clock_hz(void)
{
    return core_hz; /* 0: clocks_init() gave up, the ring oscillator's rate is not known */
}

uint32_t aot_port_entropy(void)
{
    return (uint32_t)cycles(); /* depends on how long the host took to connect */
}

void aot_port_exit(int code)
{
    (void)code;
    for (;;) {
#if !AOT_MMIO_HOST
        __asm__ volatile("bkpt 0");
#endif
    }
}
