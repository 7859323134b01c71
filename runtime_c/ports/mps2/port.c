/*
 * Port for the Arm MPS2/MPS3 FPGA images as QEMU emulates them (mps2-an385,
 * -an386, -an500, mps3-an547): CMSDK APB UART0, polled, and SysTick timing.
 *
 * Timing: under `qemu -icount shift=0` one instruction takes 1 ns of virtual
 * time, and SysTick (on the 25 MHz processor clock of the mps2 images, 32 MHz
 * on an547) advances once every 40 (resp. 31.25) instructions.  The timer
 * returns ticks * AOT_TICK_INSNS_NUM / AOT_TICK_INSNS_DEN instructions: exact
 * and deterministic, to within one tick.  SysTick is 24 bits wide; its
 * interrupt counts wrap-arounds (one every 671 M instructions), so runs of any
 * length are measured.
 *
 * Board parameters (set by ports/<port>/port.mk from the board record):
 *   AOT_UART_BASE       UART0 base address (0x40004000 on mps2)
 *   AOT_TICK_INSNS_NUM  instructions per SysTick tick, as a fraction
 *   AOT_TICK_INSNS_DEN
 */
#include <stdint.h>

#include "aot/platform.h"

#ifndef AOT_UART_BASE
#define AOT_UART_BASE 0x40004000u
#endif
#ifndef AOT_TICK_INSNS_NUM
#define AOT_TICK_INSNS_NUM 40u
#define AOT_TICK_INSNS_DEN 1u
#endif

#define REG(addr) (*(volatile uint32_t *)(addr))

#define UART_DATA REG(AOT_UART_BASE + 0x00u)
#define UART_STATE REG(AOT_UART_BASE + 0x04u)
#define UART_CTRL REG(AOT_UART_BASE + 0x08u)
#define UART_BAUDDIV REG(AOT_UART_BASE + 0x10u)
#define UART_TX_FULL 0x1u
#define UART_RX_FULL 0x2u

#define SYST_CSR REG(0xE000E010u)
#define SYST_RVR REG(0xE000E014u)
#define SYST_CVR REG(0xE000E018u)
#define SCB_ICSR REG(0xE000ED04u)
#define ICSR_PENDSTSET (1u << 26)
#define SYST_ENABLE_INT_CPUCLK 0x7u
#define SYST_MAX 0xFFFFFFu

static volatile uint32_t wraps;

void aot_systick_handler(void);

void aot_systick_handler(void)
{
    wraps++;
}

void aot_port_init(void)
{
    UART_BAUDDIV = 16u; /* any value >= 16 works under QEMU */
    UART_CTRL = 0x3u;   /* TX and RX enabled, no interrupts */
    SYST_CSR = 0;
    SYST_RVR = SYST_MAX;
    SYST_CVR = 0;
    wraps = 0;
    SYST_CSR = SYST_ENABLE_INT_CPUCLK;
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

/* Ticks since aot_port_init(), 64 bits wide.  SysTick runs freely from init:
 * QEMU 7.2 returns stale values from SYST_CVR while the counter is disabled and
 * raises a spurious wrap when it is re-enabled from 0, so it is never stopped. */
static uint64_t ticks_now(void)
{
    uint32_t before;
    uint32_t count;
    uint32_t w;
    do {
        before = wraps;
        count = SYST_CVR & SYST_MAX;
        w = wraps;
    } while (before != w);
    /* Wrapped but not yet counted by the interrupt: the count just reloaded. */
    if ((SCB_ICSR & ICSR_PENDSTSET) != 0 && count > SYST_MAX / 2) {
        w++;
    }
    return (uint64_t)w * (SYST_MAX + 1u) + (SYST_MAX - count);
}

static uint64_t timer_origin;

#if AOT_TICK_INSNS_NUM == 40u && AOT_TICK_INSNS_DEN == 1u
/*
 * Exact instruction counts from a 40-instruction tick, vernier style: a loop
 * of exactly 41 instructions reads SYST_CVR once per turn, so each read lands
 * one instruction later within a tick than the one before.  The turn in which
 * the count drops by 2 instead of 1 reads exactly at a tick edge.  Calling this
 * at both ends of a measurement puts both tick reads at the same phase, and the
 * turns spent (41 instructions each) are subtracted, which leaves the exact
 * number of instructions executed plus a constant that the RPC server measures
 * once and subtracts (timer_overhead).  This relies on QEMU -icount counting
 * every instruction, NOPs and branches included, as one.
 * Returns the number of turns (at most 41).
 */
__attribute__((naked, noinline)) static uint32_t vernier(void)
{
    __asm__ volatile(
        "push {r4, lr}\n"
        "movw r1, #0xE018\n"
        "movt r1, #0xE000\n" /* r1 = &SYST_CVR */
        "movs r0, #0\n"
        "ldr r2, [r1]\n"     /* 3 instructions before the first turn's read:
                                the first difference is 0 or 1, never 2 */
        "1:\n"
        "ldr r3, [r1]\n"
        "sub r4, r2, r3\n"
        "lsl r4, r4, #8\n"   /* compare the 24-bit difference only */
        "mov r2, r3\n"
        "add r0, r0, #1\n"
        "cmp r4, #512\n"     /* dropped by 2 ticks? */
        "beq 2f\n"
        ".rept 33\n"
        "nop\n"
        ".endr\n"
        "b 1b\n"             /* 8 + 33 = 41 instructions per turn */
        "2:\n"
        "pop {r4, pc}\n");
}

void aot_port_timer_start(void)
{
    (void)vernier();
    timer_origin = ticks_now();
}

uint64_t aot_port_timer_stop(void)
{
    uint32_t turns = vernier();
    uint64_t ticks = ticks_now() - timer_origin;
    /* The constant of this code path can be slightly negative (the two
     * vernier exits differ by a few instructions); the bias keeps the result
     * positive and is calibrated away with it. */
    return ticks * 40u + 1024u - 41u * (uint64_t)turns;
}
#else
void aot_port_timer_start(void)
{
    /* Start right after a tick edge, so every measurement begins at about the
     * same phase of the tick (to within one turn of this loop). */
    uint32_t first = SYST_CVR;
    while (SYST_CVR == first) {
    }
    timer_origin = ticks_now();
}

uint64_t aot_port_timer_stop(void)
{
    uint64_t ticks = ticks_now() - timer_origin;
    return ticks * AOT_TICK_INSNS_NUM / AOT_TICK_INSNS_DEN;
}
#endif

uint8_t aot_port_timer_unit(void)
{
    return AOT_TIMER_INSTRUCTIONS;
}

uint32_t aot_port_entropy(void)
{
    /* Nothing random survives a reset under QEMU; the host nonce suffices. */
    return 0x6D707332u;
}

void aot_port_exit(int code)
{
    /* Semihosting SYS_EXIT_EXTENDED: {ADP_Stopped_ApplicationExit, code}. */
    static volatile uint32_t block[2];
    register uint32_t r0 __asm__("r0") = 0x20u;
    register volatile uint32_t *r1 __asm__("r1") = block;
    block[0] = 0x20026u;
    block[1] = (uint32_t)code;
    __asm__ volatile("bkpt 0xab" : : "r"(r0), "r"(r1) : "memory");
    for (;;) {
    }
}
