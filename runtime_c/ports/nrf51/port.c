/*
 * Port for the nRF51 (Cortex-M0, Armv6-M) as QEMU's microbit machine
 * emulates it: the nRF51 UART (the one before EasyDMA: one byte in RXD/TXD
 * per event), polled; the timer, the exit and the clock are the SysTick
 * instruction counter of ../cortex-m/icount.c (Armv6-M vernier).
 * Register values from the nRF51 Series Reference Manual v3.0 (UART, CLOCK).
 *
 * - The HF crystal is started first (the UART's baud rate comes from HFCLK).
 *   QEMU does not model the CLOCK block, so the wait for HFCLKSTARTED gives
 *   up after AOT_CLOCK_WAIT polls; the core runs at 16 MHz either way.
 * - Reception: EVENTS_RXDRDY is cleared before RXD is read (reading RXD takes
 *   the next byte of the UART's FIFO, which raises the event again).
 * - Transmission: one byte at a time, waiting for EVENTS_TXDRDY.
 *
 * Board parameters (the project passes them from the board record):
 *   AOT_CONSOLE_BASE   UART0 (0x40002000, the only UART of the nRF51)
 *   AOT_CONSOLE_BAUD   115200 (the only rate with a BAUDRATE value here)
 *   AOT_UART_TX_PIN, AOT_UART_RX_PIN  P0 pins (micro:bit: 24 and 25, wired
 *                      to the interface chip's USB serial port)
 */
#include <stdint.h>

#include "aot/platform.h"
#include "../cortex-m/icount.h"

#ifndef AOT_CONSOLE_BASE
#define AOT_CONSOLE_BASE 0x40002000u
#endif
#ifndef AOT_CONSOLE_BAUD
#define AOT_CONSOLE_BAUD 115200u
#endif
#ifndef AOT_UART_TX_PIN
#define AOT_UART_TX_PIN 24u
#define AOT_UART_RX_PIN 25u
#endif
#ifndef AOT_CLOCK_WAIT
#define AOT_CLOCK_WAIT 100000u /* polls: far above the crystal's start-up time */
#endif

#if AOT_CONSOLE_BASE != 0x40002000u
#error "nrf51 port: the nRF51 has one UART, at 0x40002000"
#endif
#if AOT_CONSOLE_BAUD == 115200
#define UART_BAUD_VALUE 0x01D7E000u
#else
#error "nrf51 port: only AOT_CONSOLE_BAUD 115200 is supported (add the BAUDRATE value)"
#endif

#define REG(addr) (*(volatile uint32_t *)(addr))

#define CLOCK_TASKS_HFCLKSTART REG(0x40000000u)
#define CLOCK_EVENTS_HFCLKSTARTED REG(0x40000100u)

#define UART_TASKS_STARTRX REG(AOT_CONSOLE_BASE + 0x000u)
#define UART_TASKS_STARTTX REG(AOT_CONSOLE_BASE + 0x008u)
#define UART_EVENTS_RXDRDY REG(AOT_CONSOLE_BASE + 0x108u)
#define UART_EVENTS_TXDRDY REG(AOT_CONSOLE_BASE + 0x11Cu)
#define UART_EVENTS_ERROR REG(AOT_CONSOLE_BASE + 0x124u)
#define UART_ERRORSRC REG(AOT_CONSOLE_BASE + 0x480u)
#define UART_ENABLE REG(AOT_CONSOLE_BASE + 0x500u)
#define UART_PSELRTS REG(AOT_CONSOLE_BASE + 0x508u)
#define UART_PSELTXD REG(AOT_CONSOLE_BASE + 0x50Cu)
#define UART_PSELCTS REG(AOT_CONSOLE_BASE + 0x510u)
#define UART_PSELRXD REG(AOT_CONSOLE_BASE + 0x514u)
#define UART_RXD REG(AOT_CONSOLE_BASE + 0x518u)
#define UART_TXD REG(AOT_CONSOLE_BASE + 0x51Cu)
#define UART_BAUDRATE REG(AOT_CONSOLE_BASE + 0x524u)
#define UART_CONFIG REG(AOT_CONSOLE_BASE + 0x56Cu)
#define UART_ENABLE_ON 4u
#define PSEL_DISCONNECTED 0xFFFFFFFFu

#define GPIO_OUTSET REG(0x50000508u)
#define GPIO_PIN_CNF(n) REG(0x50000700u + 4u * (n))
#define PIN_CNF_OUTPUT 1u /* DIR=output, input buffer connected */
#define PIN_CNF_INPUT 0u

void aot_port_init(void)
{
    uint32_t n;
    CLOCK_EVENTS_HFCLKSTARTED = 0;
    CLOCK_TASKS_HFCLKSTART = 1;
    for (n = 0; n < AOT_CLOCK_WAIT && CLOCK_EVENTS_HFCLKSTARTED == 0; ++n) {
    }

    GPIO_OUTSET = 1u << AOT_UART_TX_PIN; /* TX idles high */
    GPIO_PIN_CNF(AOT_UART_TX_PIN) = PIN_CNF_OUTPUT;
    GPIO_PIN_CNF(AOT_UART_RX_PIN) = PIN_CNF_INPUT;
    UART_ENABLE = 0;
    UART_PSELTXD = AOT_UART_TX_PIN;
    UART_PSELRXD = AOT_UART_RX_PIN;
    UART_PSELRTS = PSEL_DISCONNECTED;
    UART_PSELCTS = PSEL_DISCONNECTED;
    UART_BAUDRATE = UART_BAUD_VALUE;
    UART_CONFIG = 0; /* 8N1, no flow control */
    UART_ENABLE = UART_ENABLE_ON;
    UART_EVENTS_RXDRDY = 0;
    UART_EVENTS_TXDRDY = 0;
    UART_TASKS_STARTRX = 1;
    UART_TASKS_STARTTX = 1;

    aot_icount_timer_start();
}

int aot_port_read_byte(void)
{
    while (UART_EVENTS_RXDRDY == 0) {
        if (UART_EVENTS_ERROR != 0) {
            UART_EVENTS_ERROR = 0;
            UART_ERRORSRC = UART_ERRORSRC; /* write 1 to clear: a bad byte costs a frame */
        }
    }
    UART_EVENTS_RXDRDY = 0;
    return (int)(UART_RXD & 0xFFu);
}

void aot_port_write(const uint8_t *data, size_t len)
{
    size_t i;
    for (i = 0; i < len; ++i) {
        UART_EVENTS_TXDRDY = 0;
        UART_TXD = data[i];
        while (UART_EVENTS_TXDRDY == 0) {
        }
    }
}
