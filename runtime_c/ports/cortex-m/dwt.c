/* The DWT cycle-counter timer and the breakpoint exit shared by the hardware
 * Cortex-M ports (stm32, nrf52); see dwt.h.  A board whose record names
 * another timer (qemu/netduinoplus2: stm32_tim2) gets these hooks from its
 * port instead, and this file only keeps aot_dwt_start(). */
#include <stdint.h>

#include "aot/platform.h"
#include "dwt.h"

#define REG(addr) (*(volatile uint32_t *)(addr))
#define DEMCR REG(0xE000EDFCu)
#define DWT_CTRL REG(0xE0001000u)
#define DWT_CYCCNT REG(0xE0001004u)
#define DWT_LAR REG(0xE0001FB0u)
#define SYST_CSR REG(0xE000E010u)
#define SYST_RVR REG(0xE000E014u)
#define SYST_CVR REG(0xE000E018u)

/* The timer is the board record's choice ([timer] kind, AOT_TIMER_KIND_<KIND>
 * from aot.firmware.project.board_defines): refuse one this code does not have. */
#if defined(AOT_BOARD_FACTS) && !defined(AOT_TIMER_KIND_DWT_CYCCNT) && \
    !defined(AOT_TIMER_KIND_STM32_TIM2)
#error "dwt.c times with the DWT cycle counter (stm32: or TIM2); the record names another timer"
#endif

#if !defined(AOT_TIMER_KIND_STM32_TIM2)
/* CYCCNT extended to 64 bits: `high` counts its wraps, which extend() sees
 * because it runs at least once per 2^24 cycles (the SysTick interrupt)
 * while CYCCNT takes 2^32 to wrap. */
static volatile uint32_t high;
static volatile uint32_t last;
static uint64_t timer_origin;

static uint64_t extend(void)
{
    uint32_t now = DWT_CYCCNT;
    if (now < last) {
        high = high + 1u;
    }
    last = now;
    return ((uint64_t)high << 32) | now;
}

static uint64_t cycles_now(void)
{
    uint64_t t;
    __asm__ volatile("cpsid i" ::: "memory"); /* not torn by the interrupt */
    t = extend();
    __asm__ volatile("cpsie i" ::: "memory");
    return t;
}

void aot_systick_handler(void);

void aot_systick_handler(void)
{
    (void)extend();
}
#endif

void aot_dwt_start(void)
{
    DEMCR |= 1u << 24;     /* TRCENA: power the DWT */
    DWT_LAR = 0xC5ACCE55u; /* unlock on Cortex-M7; ignored where there is no lock */
    DWT_CYCCNT = 0;
    DWT_CTRL |= 1u; /* CYCCNTENA */
#if !defined(AOT_TIMER_KIND_STM32_TIM2)
    high = 0;
    last = 0;
    /* SysTick on the core clock, interrupt every 2^24 cycles: keeps `high`. */
    SYST_CSR = 0;
    SYST_RVR = 0x00FFFFFFu;
    SYST_CVR = 0;
    SYST_CSR = 0x7u;
#endif
}

#if !defined(AOT_TIMER_KIND_STM32_TIM2)
void aot_port_timer_start(void)
{
    timer_origin = cycles_now();
}

uint64_t aot_port_timer_stop(void)
{
    return cycles_now() - timer_origin;
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
#endif
