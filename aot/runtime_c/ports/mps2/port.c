/*
 * Port for the Arm MPS2/MPS3 FPGA images as QEMU emulates them (mps2-an385,
 * -an386, -an500, -an505, mps3-an547): CMSDK APB UART0, polled; the timer,
 * the exit and the clock are the SysTick instruction counter of
 * ../cortex-m/icount.c (exact instruction counts under -icount).
 *
 * Board parameters (an aot project passes them from the board record:
 * AOT_CONSOLE_BASE; a plain runtime.mk build gets ports/<port>/port.mk's):
 *   AOT_UART_BASE       UART0 base address (0x40004000 on mps2)
 */
#include <stdint.h>

#include "aot/platform.h"
#include "../cortex-m/icount.h"

#if !defined(AOT_UART_BASE) && defined(AOT_CONSOLE_BASE)
#define AOT_UART_BASE AOT_CONSOLE_BASE /* from the board record (an aot project) */
#endif
#ifndef AOT_UART_BASE
#define AOT_UART_BASE 0x40004000u
#endif
#define REG(addr) (*(volatile uint32_t *)(addr))

#define UART_DATA REG(AOT_UART_BASE + 0x00u)
#define UART_STATE REG(AOT_UART_BASE + 0x04u)
#define UART_CTRL REG(AOT_UART_BASE + 0x08u)
#define UART_BAUDDIV REG(AOT_UART_BASE + 0x10u)
#define UART_TX_FULL 0x1u
#define UART_RX_FULL 0x2u

void aot_port_init(void)
{
    UART_BAUDDIV = 16u; /* any value >= 16 works under QEMU */
    UART_CTRL = 0x3u;   /* TX and RX enabled, no interrupts */
    aot_icount_timer_start();
}

int aot_port_read_byte(void)
{
    while ((UART_STATE & UART_RX_FULL) == 0) {
    }
    return (int)(UART_DATA & 0xFFu);
}

void aot_port_write(const uint8_t *data, size_t len)
{
    size_t i;
    for (i = 0; i < len; ++i) {
        while ((UART_STATE & UART_TX_FULL) != 0) {
        }
        UART_DATA = data[i];
    }
}
