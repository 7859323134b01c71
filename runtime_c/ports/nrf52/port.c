/*
 * Port for the nRF52840 (Cortex-M4F at 64 MHz): UARTE0 through EasyDMA,
 * timing with the DWT cycle counter.  Defaults: nRF52840 DK, UARTE0 on
 * P0.06 (TX) / P0.08 (RX), which the on-board J-Link OB exposes as a USB
 * serial port.  NOT VERIFIED ON HARDWARE: it builds and links, and its
 * set-up runs on the host against recorded registers
 * (tests/runtime_c/test_port_registers.py); the register values follow the
 * nRF52840 Product Specification v1.7 (CLOCK, NVMC, UICR, APPROTECT, RTC,
 * GPIO, UARTE), sections cited where they are used.
 *
 * - APPROTECT first: on parts with the hardened access port protection the
 *   debug port would lock at every reset, and every flash after the first
 *   would need a recover (keep_debug_port_open).
 * - The HF crystal oscillator (HFXO) is started next (bounded wait): the
 *   UART baud rate is derived from HFCLK, and the internal oscillator is
 *   less accurate.  The flash instruction cache is switched on.
 * - EasyDMA reads and writes Data RAM only, so aot_port_write() copies each
 *   chunk into a RAM buffer before TASKS_STARTTX (the data may sit in flash).
 * - Reception is one byte per DMA transfer into a 1-byte RAM buffer.  The next
 *   transfer is armed as soon as a byte is taken, so one byte waits in RAM
 *   (plus what the UARTE keeps in its own RX FIFO) while the firmware
 *   computes; a lost byte costs a frame, which the host resends.
 * - The timer (DWT CYCCNT, exact for runs shorter than 2^32 cycles: 67 s at
 *   64 MHz) and aot_port_exit() (a breakpoint) are ../cortex-m/dwt.c.
 * - aot_port_init() measures the core clock once (aot_port_report() sends
 *   it): DWT cycles over 10 ms of RTC0 on the 32.768 kHz crystal, a clock
 *   independent of HFCLK.
 *
 * Board parameters (the project passes them from the board record):
 *   AOT_CONSOLE_BASE   UARTE instance (0x40002000: UARTE0)
 *   AOT_CONSOLE_BAUD   115200 (the only rate with a BAUDRATE value here)
 *   AOT_UART_TX_PIN, AOT_UART_RX_PIN  GPIO P0 pin numbers (6 and 8)
 */
#include <stdint.h>

#include "aot/mmio.h"
#include "aot/platform.h"
#include "../cortex-m/dwt.h"

#ifndef AOT_CONSOLE_BASE
#define AOT_CONSOLE_BASE 0x40002000u /* UARTE0 */
#endif
#ifndef AOT_CONSOLE_BAUD
#define AOT_CONSOLE_BAUD 115200u
#endif
#ifndef AOT_UART_TX_PIN
#define AOT_UART_TX_PIN 6u
#define AOT_UART_RX_PIN 8u
#endif

/* BAUDRATE of the UARTE (nRF52840 PS v1.7, UARTE chapter, register BAUDRATE): the UARTE's
 * table differs from the legacy UART's (115200: 0x01D7E000 there); the UARTE
 * value gives 115108 baud, -0.08 %. */
#if AOT_CONSOLE_BAUD == 115200
#define UARTE_BAUD_VALUE 0x01D60000u
#else
#error "nrf52 port: only AOT_CONSOLE_BAUD 115200 is supported (add the BAUDRATE value)"
#endif

/* Polls of a ready event before the set-up gives up: HFXO starts in
 * 0.26 ms typical, the LFXO in 0.25 s (PS v1.7, CLOCK electrical
 * specification); a poll takes several cycles at 64 MHz. */
#ifndef AOT_CLOCK_WAIT
#define AOT_CLOCK_WAIT 2000000u
#endif
#ifndef AOT_LFXO_WAIT
#define AOT_LFXO_WAIT 16000000u
#endif

/* CLOCK (PS v1.7, CLOCK chapter) */
#define CLOCK_TASKS_HFCLKSTART 0x40000000u
#define CLOCK_TASKS_LFCLKSTART 0x40000008u
#define CLOCK_EVENTS_HFCLKSTARTED 0x40000100u
#define CLOCK_EVENTS_LFCLKSTARTED 0x40000104u
#define CLOCK_LFCLKSRC 0x40000518u
#define LFCLKSRC_XTAL 1u

/* APPROTECT (PS v1.7, APPROTECT and UICR chapters, "Access port
 * protection"; the nRF52840 errata configuration 249 that nrfx's
 * system_nrf52_approtect.h checks before the same writes): on parts
 * with the hardened APPROTECT the debug port locks at every reset unless
 * UICR.APPROTECT holds HwDisabled (0x5A) AND the firmware writes SwDisable
 * (0x5A) to APPROTECT.DISABLE early after each reset. */
#define FICR_PART_CODE 0x10000130u    /* undocumented FICR words the errata use */
#define FICR_VARIANT_CODE 0x10000134u
#define UICR_APPROTECT 0x10001208u
#define APPROTECT_DISABLE 0x40000558u
#define APPROTECT_HW_DISABLED 0x5Au
#define APPROTECT_SW_DISABLE 0x5Au
#define UICR_ERASED 0xFFFFFFFFu

/* NVMC (PS v1.7, NVMC chapter) */
#define NVMC_READY 0x4001E400u
#define NVMC_CONFIG 0x4001E504u
#define NVMC_ICACHECNF 0x4001E540u
#define NVMC_CONFIG_REN 0u
#define NVMC_CONFIG_WEN 1u
#define ICACHECNF_CACHEEN 1u

/* RTC0 (PS v1.7, RTC chapter): 24-bit counter on LFCLK, the independent clock the core
 * clock is measured against. */
#define RTC0_TASKS_START 0x4000B000u
#define RTC0_TASKS_STOP 0x4000B004u
#define RTC0_TASKS_CLEAR 0x4000B008u
#define RTC0_COUNTER 0x4000B504u
#define RTC0_PRESCALER 0x4000B508u
#define LFCLK_HZ 32768u
#define MEASURE_TICKS 328u /* about 10 ms of LFCLK */

/* DWT cycle counter (Armv7-M ARM C1.8), started by aot_dwt_start(). */
#define DWT_CYCCNT 0xE0001004u

/* GPIO P0 (PS v1.7, GPIO chapter, PIN_CNF) */
#define P0_OUTSET 0x50000508u
#define P0_PIN_CNF(n) (0x50000700u + 4u * (n))
#define PIN_CNF_OUTPUT 1u          /* DIR=output, INPUT=connected, no pull */
#define PIN_CNF_INPUT_PULLUP 0x0Cu /* DIR=input, INPUT=connected, PULL=pullup */

/* UARTE (PS v1.7, UARTE chapter) */
#define UARTE_TASKS_STARTRX (AOT_CONSOLE_BASE + 0x000u)
#define UARTE_TASKS_STARTTX (AOT_CONSOLE_BASE + 0x008u)
#define UARTE_EVENTS_ENDRX (AOT_CONSOLE_BASE + 0x110u)
#define UARTE_EVENTS_ENDTX (AOT_CONSOLE_BASE + 0x120u)
#define UARTE_ERRORSRC (AOT_CONSOLE_BASE + 0x480u)
#define UARTE_ENABLE (AOT_CONSOLE_BASE + 0x500u)
#define UARTE_PSEL_RTS (AOT_CONSOLE_BASE + 0x508u)
#define UARTE_PSEL_TXD (AOT_CONSOLE_BASE + 0x50Cu)
#define UARTE_PSEL_CTS (AOT_CONSOLE_BASE + 0x510u)
#define UARTE_PSEL_RXD (AOT_CONSOLE_BASE + 0x514u)
#define UARTE_BAUDRATE (AOT_CONSOLE_BASE + 0x524u)
#define UARTE_RXD_PTR (AOT_CONSOLE_BASE + 0x534u)
#define UARTE_RXD_MAXCNT (AOT_CONSOLE_BASE + 0x538u)
#define UARTE_TXD_PTR (AOT_CONSOLE_BASE + 0x544u)
#define UARTE_TXD_MAXCNT (AOT_CONSOLE_BASE + 0x548u)
#define UARTE_CONFIG (AOT_CONSOLE_BASE + 0x56Cu)
#define UARTE_ENABLE_ON 8u
#define PSEL_DISCONNECTED 0x80000000u /* CONNECT bit set */


#define TX_CHUNK 64u

static volatile uint8_t rx_byte;
static volatile uint8_t tx_buf[TX_CHUNK];
static uint32_t measured_hz;

static uint32_t measure_clock(void);

uint32_t aot_port_clock_hz(void)
{
    return 64000000u; /* the nRF52840 core always runs at 64 MHz */
}

/* The part has the hardened APPROTECT: nRF52840 (part code 8) from variant
 * code 5 on (build codes Fxx and later). */
static int hardened_approtect(void)
{
    return aot_mmio_read(FICR_PART_CODE) == 0x08u && aot_mmio_read(FICR_VARIANT_CODE) >= 5u;
}

/* Keep the debug port open across resets (see APPROTECT above).  An erased
 * UICR.APPROTECT (after a flash tool's chip erase or a recover) is written
 * once with HwDisabled; any other value (0x00: protection wanted) is left
 * alone.  The UICR value takes effect from the next reset; DISABLE opens
 * the port for this one. */
static void keep_debug_port_open(void)
{
    if (!hardened_approtect()) {
        return;
    }
    if (aot_mmio_read(UICR_APPROTECT) == UICR_ERASED) {
        aot_mmio_write(NVMC_CONFIG, NVMC_CONFIG_WEN);
        (void)aot_mmio_wait(NVMC_READY, 1u, 1u, AOT_CLOCK_WAIT);
        aot_mmio_write(UICR_APPROTECT, APPROTECT_HW_DISABLED);
        (void)aot_mmio_wait(NVMC_READY, 1u, 1u, AOT_CLOCK_WAIT);
        aot_mmio_write(NVMC_CONFIG, NVMC_CONFIG_REN);
        (void)aot_mmio_wait(NVMC_READY, 1u, 1u, AOT_CLOCK_WAIT);
    }
    if ((aot_mmio_read(UICR_APPROTECT) & 0xFFu) == APPROTECT_HW_DISABLED) {
        aot_mmio_write(APPROTECT_DISABLE, APPROTECT_SW_DISABLE);
    }
}

static void start_rx(void)
{
    aot_mmio_write(UARTE_EVENTS_ENDRX, 0);
    aot_mmio_write(UARTE_RXD_PTR, (uint32_t)(uintptr_t)&rx_byte);
    aot_mmio_write(UARTE_RXD_MAXCNT, 1);
    aot_mmio_write(UARTE_TASKS_STARTRX, 1);
}

void aot_port_init(void)
{
    keep_debug_port_open(); /* first: nothing before it can lock the port again */

    /* HFXO: the UART baud rate comes from HFCLK, and the RC oscillator is
     * less accurate.  Without a crystal the core keeps HFINT (64 MHz +-1.5 %). */
    aot_mmio_write(CLOCK_EVENTS_HFCLKSTARTED, 0);
    aot_mmio_write(CLOCK_TASKS_HFCLKSTART, 1);
    (void)aot_mmio_wait(CLOCK_EVENTS_HFCLKSTARTED, 1u, 1u, AOT_CLOCK_WAIT);

    /* Flash instruction cache (NVMC ICACHECNF): off at reset. */
    aot_mmio_write(NVMC_ICACHECNF, ICACHECNF_CACHEEN);

    /* TX idles high as an output; RX is an input with the pull-up (UARTE
     * chapter, "Pin configuration"), so an unconnected line reads idle, not
     * noise. */
    aot_mmio_write(P0_OUTSET, 1u << AOT_UART_TX_PIN);
    aot_mmio_write(P0_PIN_CNF(AOT_UART_TX_PIN), PIN_CNF_OUTPUT);
    aot_mmio_write(P0_PIN_CNF(AOT_UART_RX_PIN), PIN_CNF_INPUT_PULLUP);

    aot_mmio_write(UARTE_ENABLE, 0);
    aot_mmio_write(UARTE_PSEL_TXD, AOT_UART_TX_PIN); /* PIN in bits 4:0, PORT 0, CONNECT 0 */
    aot_mmio_write(UARTE_PSEL_RXD, AOT_UART_RX_PIN);
    aot_mmio_write(UARTE_PSEL_RTS, PSEL_DISCONNECTED);
    aot_mmio_write(UARTE_PSEL_CTS, PSEL_DISCONNECTED);
    aot_mmio_write(UARTE_BAUDRATE, UARTE_BAUD_VALUE);
    aot_mmio_write(UARTE_CONFIG, 0); /* 8N1, no flow control */
    aot_mmio_write(UARTE_ENABLE, UARTE_ENABLE_ON);
    start_rx();

    aot_dwt_start();
    measured_hz = measure_clock(); /* once, at boot: INFO answers at once */
}

/* Core cycles (DWT) over MEASURE_TICKS of RTC0 on the 32.768 kHz crystal
 * (LFXO, fitted on the DK): 0 when the LFXO does not start. */
static uint32_t measure_clock(void)
{
    uint32_t t0, t1, c0, c1;
    aot_mmio_write(CLOCK_LFCLKSRC, LFCLKSRC_XTAL);
    aot_mmio_write(CLOCK_EVENTS_LFCLKSTARTED, 0);
    aot_mmio_write(CLOCK_TASKS_LFCLKSTART, 1);
    if (!aot_mmio_wait(CLOCK_EVENTS_LFCLKSTARTED, 1u, 1u, AOT_LFXO_WAIT)) {
        return 0;
    }
    aot_mmio_write(RTC0_PRESCALER, 0);
    aot_mmio_write(RTC0_TASKS_CLEAR, 1);
    aot_mmio_write(RTC0_TASKS_START, 1);
    /* Start on a tick edge, then count cycles to the edge MEASURE_TICKS on. */
    t0 = aot_mmio_read(RTC0_COUNTER);
    if (!aot_mmio_wait(RTC0_COUNTER, 0xFFFFFFu, (t0 + 1u) & 0xFFFFFFu, AOT_CLOCK_WAIT)) {
        return 0;
    }
    c0 = aot_mmio_read(DWT_CYCCNT);
    t1 = (t0 + 1u + MEASURE_TICKS) & 0xFFFFFFu;
    if (!aot_mmio_wait(RTC0_COUNTER, 0xFFFFFFu, t1, AOT_CLOCK_WAIT)) {
        return 0;
    }
    c1 = aot_mmio_read(DWT_CYCCNT);
    aot_mmio_write(RTC0_TASKS_STOP, 1);
    return (uint32_t)(((uint64_t)(c1 - c0) * LFCLK_HZ + MEASURE_TICKS / 2u) / MEASURE_TICKS);
}

void aot_port_report(aot_device_report_t *report)
{
    /* Flash has no wait states to set on the nRF52840 (no latency setting
     * in the NVMC; the instruction cache hides its access time). */
    report->flash_wait_states = AOT_NO_WAIT_STATES;
    report->caches = (aot_mmio_read(NVMC_ICACHECNF) & ICACHECNF_CACHEEN) != 0
                         ? AOT_CACHE_FLASH_ICACHE
                         : 0u;
    report->measured_clock_hz = measured_hz;
}

int aot_port_read_byte(void)
{
    uint8_t byte;
    while (aot_mmio_read(UARTE_EVENTS_ENDRX) == 0) {
    }
    byte = rx_byte;
    /* write 1 to clear: a bad byte costs a frame */
    aot_mmio_write(UARTE_ERRORSRC, aot_mmio_read(UARTE_ERRORSRC));
    start_rx();
    return (int)byte;
}

void aot_port_write(const uint8_t *data, size_t len)
{
    while (len > 0) {
        size_t n = len < TX_CHUNK ? len : TX_CHUNK;
        size_t i;
        for (i = 0; i < n; ++i) {
            tx_buf[i] = data[i];
        }
        aot_mmio_write(UARTE_EVENTS_ENDTX, 0);
        aot_mmio_write(UARTE_TXD_PTR, (uint32_t)(uintptr_t)tx_buf);
        aot_mmio_write(UARTE_TXD_MAXCNT, (uint32_t)n);
        aot_mmio_write(UARTE_TASKS_STARTTX, 1);
        while (aot_mmio_read(UARTE_EVENTS_ENDTX) == 0) {
        }
        data += n;
        len -= n;
    }
}
