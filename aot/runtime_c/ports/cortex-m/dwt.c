/* The DWT cycle-counter timer and the breakpoint exit shared by the hardware
 * Cortex-M ports (stm32, nrf52); see dwt.h. */
#include <stdint.h>

#include "aot/platform.h"
#include "dwt.h"

#define REG(addr) (*(volatile uint32_t *)(addr))
#define DEMCR REG(0xE000EDFCu)
#define DWT_CTRL REG(0xE0001000u)
#define DWT_CYCCNT REG(0xE0001004u)
#define DWT_LAR REG(0xE0001FB0u)

static uint32_t timer_origin;

void aot_dwt_start(void)
{
    DEMCR |= 1u << 24;     /* TRCENA: power the DWT */
    DWT_LAR = 0xC5ACCE55u; /* unlock on Cortex-M7; ignored where there is no lock */
    DWT_CYCCNT = 0;
    DWT_CTRL |= 1u; /* CYCCNTENA */
}

void aot_port_timer_start(void)
{
    timer_origin = DWT_CYCCNT;
}

uint64_t aot_port_timer_stop(void)
{
    return (uint32_t)(DWT_CYCCNT - timer_origin);
}

uint8_t aot_port_timer_unit(void)
{
    return AOT_TIMER_CYCLES;
}

uint32_t aot_port_entropy(void)
{
    return DWT_CYCCNT; /* depends on how long the host took to connect */
}

void aot_port_exit(int code)
{
    (void)code;
    /* No host to report to: stop where a debugger can see it. */
    for (;;) {
        __asm__ volatile("bkpt 0");
    }
}
