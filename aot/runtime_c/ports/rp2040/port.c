/*
 * Port for the RP2040 (Raspberry Pi Pico; one Cortex-M0+ core used).
 * NOT VERIFIED ON HARDWARE: it builds and links, with the second-stage boot
 * loader (boot2.S, written for this port) and its CRC at 0x10000000 and the
 * vector table at 0x10000100.  Register values follow the RP2040 datasheet
 * (chapters 2.14 Subsystem resets, 2.15 Clocks, 2.16 XOSC, 2.18 PLL,
 * 2.19 GPIO, 4.2 UART).
 *
 * - Clocks: XOSC 12 MHz -> clk_ref; PLL_SYS 12 MHz * 125 = VCO 1500 MHz,
 *   / 6 / 2 = 125 MHz -> clk_sys; clk_peri = clk_sys.  AOT_CPU_HZ (the
 *   board's clock_hz) must be 125 MHz, the one PLL setting this port knows.
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

#define REG(addr) (*(volatile uint32_t *)(addr))
/* Atomic register aliases (datasheet 2.1.2): +0x2000 sets bits, +0x3000 clears. */
#define SET(addr) REG((addr) + 0x2000u)
#define CLR(addr) REG((addr) + 0x3000u)

#define RESETS_RESET 0x4000C000u
#define RESETS_RESET_DONE REG(0x4000C008u)
#define RESET_IO_BANK0 (1u << 5)
#define RESET_PADS_BANK0 (1u << 8)
#define RESET_PLL_SYS (1u << 12)
#define RESET_UART0 (1u << 22)

#define CLK_REF_CTRL 0x40008030u
#define CLK_REF_SELECTED REG(0x40008038u)
#define CLK_SYS_CTRL 0x4000803Cu
#define CLK_SYS_SELECTED REG(0x40008044u)
#define CLK_PERI_CTRL REG(0x40008048u)
#define CLK_REF_SRC_XOSC 2u
#define CLK_SYS_SRC_AUX 1u     /* AUXSRC 0 = clksrc_pll_sys */
#define CLK_PERI_ENABLE (1u << 11) /* AUXSRC 0 = clk_sys */

#define XOSC_CTRL REG(0x40024000u)
#define XOSC_STATUS REG(0x40024004u)
#define XOSC_STARTUP REG(0x4002400Cu)
#define XOSC_FREQ_1_15MHZ 0xAA0u
#define XOSC_ENABLE (0xFABu << 12)
#define XOSC_STABLE (1u << 31)
#define XOSC_DELAY 47u /* (12 MHz / 1000 + 128) / 256: about 1 ms */

#define PLL_SYS_CS REG(0x40028000u)
#define PLL_SYS_PWR 0x40028004u
#define PLL_SYS_FBDIV_INT REG(0x40028008u)
#define PLL_SYS_PRIM REG(0x4002800Cu)
#define PLL_LOCK (1u << 31)
#define PLL_PWR_PD (1u << 0)
#define PLL_PWR_POSTDIVPD (1u << 3)
#define PLL_PWR_VCOPD (1u << 5)

#define IO_BANK0_GPIO_CTRL(n) REG(0x40014004u + 8u * (n))
#define GPIO_FUNC_UART 2u

#define UART_DR REG(AOT_CONSOLE_BASE + 0x00u)
#define UART_FR REG(AOT_CONSOLE_BASE + 0x18u)
#define UART_IBRD_REG REG(AOT_CONSOLE_BASE + 0x24u)
#define UART_FBRD_REG REG(AOT_CONSOLE_BASE + 0x28u)
#define UART_LCR_H REG(AOT_CONSOLE_BASE + 0x2Cu)
#define UART_CR REG(AOT_CONSOLE_BASE + 0x30u)
#define FR_RXFE (1u << 4)
#define FR_TXFF (1u << 5)
#define LCR_H_FEN (1u << 4)
#define LCR_H_WLEN_8 (3u << 5)
#define CR_UARTEN (1u << 0)
#define CR_TXE (1u << 8)
#define CR_RXE (1u << 9)

#define SYST_CSR REG(0xE000E010u)
#define SYST_RVR REG(0xE000E014u)
#define SYST_CVR REG(0xE000E018u)
#define SYST_RELOAD 0x00FFFFFFu

static volatile uint32_t systick_wraps;
static uint64_t timer_origin;

void aot_systick_handler(void);

void aot_systick_handler(void)
{
    systick_wraps = systick_wraps + 1u;
}

static void unreset(uint32_t bits)
{
    CLR(RESETS_RESET) = bits;
    while ((RESETS_RESET_DONE & bits) != bits) {
    }
}

static void clocks_init(void)
{
    /* clk_sys back to clk_ref and clk_ref to the ring oscillator, so that the
     * PLL and XOSC can be (re)configured whatever ran before (a debugger may
     * load this image over an earlier one). */
    CLR(CLK_SYS_CTRL) = 1u;
    while ((CLK_SYS_SELECTED & 1u) == 0) {
    }
    CLR(CLK_REF_CTRL) = 3u;
    while ((CLK_REF_SELECTED & 1u) == 0) {
    }

    XOSC_STARTUP = XOSC_DELAY;
    XOSC_CTRL = XOSC_ENABLE | XOSC_FREQ_1_15MHZ;
    while ((XOSC_STATUS & XOSC_STABLE) == 0) {
    }
    REG(CLK_REF_CTRL) = CLK_REF_SRC_XOSC;
    while ((CLK_REF_SELECTED & (1u << CLK_REF_SRC_XOSC)) == 0) {
    }

    SET(RESETS_RESET) = RESET_PLL_SYS;
    unreset(RESET_PLL_SYS);
    PLL_SYS_CS = 1u; /* REFDIV 1 */
    PLL_SYS_FBDIV_INT = PLL_FBDIV;
    CLR(PLL_SYS_PWR) = PLL_PWR_PD | PLL_PWR_VCOPD;
    while ((PLL_SYS_CS & PLL_LOCK) == 0) {
    }
    PLL_SYS_PRIM = (PLL_POSTDIV1 << 16) | (PLL_POSTDIV2 << 12);
    CLR(PLL_SYS_PWR) = PLL_PWR_POSTDIVPD;

    REG(CLK_SYS_CTRL) = 0u; /* AUXSRC = pll_sys while SRC is still clk_ref */
    REG(CLK_SYS_CTRL) = CLK_SYS_SRC_AUX;
    while ((CLK_SYS_SELECTED & (1u << CLK_SYS_SRC_AUX)) == 0) {
    }
    CLK_PERI_CTRL = 0u;
    CLK_PERI_CTRL = CLK_PERI_ENABLE;
}

void aot_port_init(void)
{
    clocks_init();
    unreset(RESET_IO_BANK0 | RESET_PADS_BANK0 | RESET_UART0);
    IO_BANK0_GPIO_CTRL(0u) = GPIO_FUNC_UART; /* GP0: UART0 TX */
    IO_BANK0_GPIO_CTRL(1u) = GPIO_FUNC_UART; /* GP1: UART0 RX */
    UART_IBRD_REG = UART_IBRD;
    UART_FBRD_REG = UART_FBRD;
    UART_LCR_H = LCR_H_WLEN_8 | LCR_H_FEN; /* also latches the divisors */
    UART_CR = CR_UARTEN | CR_TXE | CR_RXE;

    SYST_RVR = SYST_RELOAD;
    SYST_CVR = 0;
    SYST_CSR = 7u; /* ENABLE | TICKINT | CLKSOURCE = processor clock */
}

int aot_port_read_byte(void)
{
    while ((UART_FR & FR_RXFE) != 0) {
    }
    return (int)(UART_DR & 0xFFu); /* error flags (bits 8..11) cost a frame */
}

void aot_port_write(const uint8_t *data, size_t len)
{
    size_t i;
    for (i = 0; i < len; ++i) {
        while ((UART_FR & FR_TXFF) != 0) {
        }
        UART_DR = data[i];
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
        value = SYST_CVR;
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
    return AOT_CPU_HZ; /* clocks_init() always reaches it or hangs waiting */
}

uint32_t aot_port_entropy(void)
{
    return (uint32_t)cycles(); /* depends on how long the host took to connect */
}

void aot_port_exit(int code)
{
    (void)code;
    for (;;) {
        __asm__ volatile("bkpt 0");
    }
}
