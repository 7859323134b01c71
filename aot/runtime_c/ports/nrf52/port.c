/*
 * Port for the nRF52840 (Cortex-M4F at 64 MHz): UARTE0 through EasyDMA,
 * timing with the DWT cycle counter.  Defaults: nRF52840 DK, UARTE0 on
 * P0.06 (TX) / P0.08 (RX), which the on-board J-Link OB exposes as a USB
 * serial port.  NOT VERIFIED ON HARDWARE: it builds and links; the register
 * values follow the nRF52840 Product Specification v1.7 (UARTE, GPIO, CLOCK).
 *
 * - The HF crystal oscillator (HFXO) is started first: the UART baud rate is
 *   derived from HFCLK, and the internal oscillator is less accurate.
 * - EasyDMA reads and writes Data RAM only, so aot_port_write() copies each
 *   chunk into a RAM buffer before TASKS_STARTTX (the data may sit in flash).
 * - Reception is one byte per DMA transfer into a 1-byte RAM buffer.  The next
 *   transfer is armed as soon as a byte is taken, so one byte waits in RAM
 *   (plus what the UARTE keeps in its own RX FIFO) while the firmware
 *   computes; a lost byte costs a frame, which the host resends.
 * - The timer (DWT CYCCNT, exact for runs shorter than 2^32 cycles: 67 s at
 *   64 MHz) and aot_port_exit() (a breakpoint) are ../cortex-m/dwt.c.
 *
 * Board parameters (the project passes them from the board record):
 *   AOT_CONSOLE_BASE   UARTE instance (0x40002000: UARTE0)
 *   AOT_CONSOLE_BAUD   115200 (the only rate with a BAUDRATE value here)
 *   AOT_UART_TX_PIN, AOT_UART_RX_PIN  GPIO P0 pin numbers (6 and 8)
 */
#include <stdint.h>

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

/* BAUDRATE register values (product specification, UARTE BAUDRATE). */
#if AOT_CONSOLE_BAUD == 115200
#define UARTE_BAUD_VALUE 0x01D7E000u
#else
#error "nrf52 port: only AOT_CONSOLE_BAUD 115200 is supported (add the BAUDRATE value)"
#endif

#define REG(addr) (*(volatile uint32_t *)(addr))

/* CLOCK */
#define CLOCK_TASKS_HFCLKSTART REG(0x40000000u)
#define CLOCK_EVENTS_HFCLKSTARTED REG(0x40000100u)

/* GPIO P0 */
#define P0_OUTSET REG(0x50000508u)
#define P0_PIN_CNF(n) REG(0x50000700u + 4u * (n))
#define PIN_CNF_OUTPUT 1u /* DIR=output, INPUT=connected, no pull */
#define PIN_CNF_INPUT 0u  /* DIR=input, INPUT=connected, no pull */

/* UARTE */
#define UARTE_TASKS_STARTRX REG(AOT_CONSOLE_BASE + 0x000u)
#define UARTE_TASKS_STARTTX REG(AOT_CONSOLE_BASE + 0x008u)
#define UARTE_EVENTS_ENDRX REG(AOT_CONSOLE_BASE + 0x110u)
#define UARTE_EVENTS_ENDTX REG(AOT_CONSOLE_BASE + 0x120u)
#define UARTE_ERRORSRC REG(AOT_CONSOLE_BASE + 0x480u)
#define UARTE_ENABLE REG(AOT_CONSOLE_BASE + 0x500u)
#define UARTE_PSEL_RTS REG(AOT_CONSOLE_BASE + 0x508u)
#define UARTE_PSEL_TXD REG(AOT_CONSOLE_BASE + 0x50Cu)
#define UARTE_PSEL_CTS REG(AOT_CONSOLE_BASE + 0x510u)
#define UARTE_PSEL_RXD REG(AOT_CONSOLE_BASE + 0x514u)
#define UARTE_BAUDRATE REG(AOT_CONSOLE_BASE + 0x524u)
#define UARTE_RXD_PTR REG(AOT_CONSOLE_BASE + 0x534u)
#define UARTE_RXD_MAXCNT REG(AOT_CONSOLE_BASE + 0x538u)
#define UARTE_TXD_PTR REG(AOT_CONSOLE_BASE + 0x544u)
#define UARTE_TXD_MAXCNT REG(AOT_CONSOLE_BASE + 0x548u)
#define UARTE_CONFIG REG(AOT_CONSOLE_BASE + 0x56Cu)
#define UARTE_ENABLE_ON 8u
#define PSEL_DISCONNECTED 0x80000000u /* CONNECT bit set */


#define TX_CHUNK 64u

static volatile uint8_t rx_byte;
static volatile uint8_t tx_buf[TX_CHUNK];
uint32_t aot_port_clock_hz(void)
{
    return 64000000u; /* the nRF52840 core always runs at 64 MHz */
}

static void start_rx(void)
{
    UARTE_EVENTS_ENDRX = 0;
    UARTE_RXD_PTR = (uint32_t)(uintptr_t)&rx_byte;
    UARTE_RXD_MAXCNT = 1;
    UARTE_TASKS_STARTRX = 1;
}

void aot_port_init(void)
{
    CLOCK_EVENTS_HFCLKSTARTED = 0;
    CLOCK_TASKS_HFCLKSTART = 1;
    while (CLOCK_EVENTS_HFCLKSTARTED == 0) {
    }

    /* TX idles high as an output, RX is an input (UARTE pin configuration). */
    P0_OUTSET = 1u << AOT_UART_TX_PIN;
    P0_PIN_CNF(AOT_UART_TX_PIN) = PIN_CNF_OUTPUT;
    P0_PIN_CNF(AOT_UART_RX_PIN) = PIN_CNF_INPUT;

    UARTE_ENABLE = 0;
    UARTE_PSEL_TXD = AOT_UART_TX_PIN; /* PIN in bits 4:0, PORT 0, CONNECT 0 */
    UARTE_PSEL_RXD = AOT_UART_RX_PIN;
    UARTE_PSEL_RTS = PSEL_DISCONNECTED;
    UARTE_PSEL_CTS = PSEL_DISCONNECTED;
    UARTE_BAUDRATE = UARTE_BAUD_VALUE;
    UARTE_CONFIG = 0; /* 8N1, no flow control */
    UARTE_ENABLE = UARTE_ENABLE_ON;
    start_rx();

    aot_dwt_start();
}

int aot_port_read_byte(void)
{
    uint8_t byte;
    while (UARTE_EVENTS_ENDRX == 0) {
    }
    byte = rx_byte;
    UARTE_ERRORSRC = UARTE_ERRORSRC; /* write 1 to clear: a bad byte costs a frame */
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
        UARTE_EVENTS_ENDTX = 0;
        UARTE_TXD_PTR = (uint32_t)(uintptr_t)tx_buf;
        UARTE_TXD_MAXCNT = (uint32_t)n;
        UARTE_TASKS_STARTTX = 1;
        while (UARTE_EVENTS_ENDTX == 0) {
        }
        data += n;
        len -= n;
    }
}
