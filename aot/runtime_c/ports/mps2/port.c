/*
 * Port for the Arm MPS2/MPS3 FPGA images as QEMU emulates them (mps2-an385,
 * -an386, -an500, mps3-an547): CMSDK APB UART0, polled, and SysTick timing.
 *
 * Timing: under `qemu -icount shift=0` one instruction takes 1 ns of virtual
 * time, and SysTick (on the 25 MHz processor clock of the mps2 images, 32 MHz
 * on an547) advances once every 40 (resp. 31.25) instructions.  The timer
 * turns ticks into exact instruction counts with a vernier (below).  SysTick is 24 bits wide; its
 * interrupt counts wrap-arounds (one every 671 M instructions), so runs of any
 * length are measured.
 *
 * Board parameters (an aot project passes them from the board record:
 * AOT_CONSOLE_BASE, AOT_TICK_INSNS_NUM/DEN; a plain runtime.mk build gets
 * ports/<port>/port.mk's):
 *   AOT_UART_BASE       UART0 base address (0x40004000 on mps2)
 *   AOT_TICK_INSNS_NUM  instructions per AOT_TICK_INSNS_DEN SysTick ticks, both
 *   AOT_TICK_INSNS_DEN  integers with NUM >= 12 and DEN a power of two
 */
#include <stdint.h>

#include "aot/platform.h"

#if !defined(AOT_UART_BASE) && defined(AOT_CONSOLE_BASE)
#define AOT_UART_BASE AOT_CONSOLE_BASE /* from the board record (an aot project) */
#endif
#ifndef AOT_UART_BASE
#define AOT_UART_BASE 0x40004000u
#endif
#ifndef AOT_TICK_INSNS_NUM /* plain integers: they also go into assembly */
#define AOT_TICK_INSNS_NUM 40
#define AOT_TICK_INSNS_DEN 1
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

#define AOT_STR2(x) #x
#define AOT_STR(x) AOT_STR2(x)

/*
 * Exact instruction counts from SysTick, vernier style.  DEN ticks last
 * exactly NUM instructions (40/1 on mps2, 125/4 on an547).  A loop of exactly
 * NUM + 1 instructions reads SYST_CVR once per turn, so each read lands one
 * instruction later relative to the ticks than the one before; the turn that
 * sees DEN + 1 new ticks instead of DEN reads right at a tick edge.  Requiring
 * that tick's index to be a multiple of DEN picks the same edge of the
 * NUM-instruction pattern every time.  Calling this at both ends of a
 * measurement puts both tick reads at the same phase, the turns spent
 * ((NUM + 1) instructions each) are subtracted, and what remains is the exact
 * number of instructions executed plus a constant that the RPC server measures
 * once and subtracts (timer_overhead).  Relies on QEMU -icount counting every
 * instruction (NOPs and branches included) as one, and costs up to
 * (NUM + 1) * NUM instructions per call, outside the measurement.
 * Returns the number of turns.
 */
__attribute__((naked, noinline)) static uint32_t vernier(void)
{
    __asm__ volatile(
        "push {r4, r5, lr}\n"
        "movw r1, #0xE018\n"
        "movt r1, #0xE000\n" /* r1 = &SYST_CVR */
        "movs r0, #0\n"
        "ldr r2, [r1]\n"     /* 3 instructions before the first turn's read:
                                that turn sees at most 1 new tick */
        "1:\n"
        "ldr r3, [r1]\n"
        "sub r4, r2, r3\n"
        "lsl r4, r4, #8\n"   /* the 24-bit tick difference, in the top bits */
        "eor r4, r4, #((" AOT_STR(AOT_TICK_INSNS_DEN) " + 1) << 8)\n"
        "and r5, r3, #(" AOT_STR(AOT_TICK_INSNS_DEN) " - 1)\n"
        "eor r5, r5, #(" AOT_STR(AOT_TICK_INSNS_DEN) " - 1)\n" /* CVR counts down */
        "orr r4, r4, r5\n"   /* 0: DEN + 1 new ticks, and the right edge */
        "mov r2, r3\n"
        "add r0, r0, #1\n"
        "cmp r4, #0\n"
        "beq 2f\n"
        ".rept " AOT_STR(AOT_TICK_INSNS_NUM) " - 11\n"
        "nop\n"
        ".endr\n"
        "b 1b\n"             /* 12 + (NUM - 11) = NUM + 1 instructions */
        "2:\n"
        "pop {r4, r5, pc}\n");
}

void aot_port_timer_start(void)
{
    (void)vernier();
    timer_origin = ticks_now();
}

uint64_t aot_port_timer_stop(void)
{
    uint32_t turns = vernier();
    uint64_t ticks = ticks_now() - timer_origin; /* a multiple of DEN */
    /* The constant of this code path can be slightly negative (the two
     * vernier exits differ by a few instructions); the bias keeps the result
     * positive and is calibrated away with it. */
    return ticks / AOT_TICK_INSNS_DEN * AOT_TICK_INSNS_NUM + 1024u -
           (uint64_t)(AOT_TICK_INSNS_NUM + 1) * turns;
}

uint8_t aot_port_timer_unit(void)
{
    return AOT_TIMER_INSTRUCTIONS;
}

uint32_t aot_port_clock_hz(void)
{
#ifdef AOT_CPU_HZ
    return AOT_CPU_HZ; /* the record's clock_hz: the FPGA image's fixed clock */
#else
    return 0;
#endif
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
