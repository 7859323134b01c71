/*
 * The instruction counter of the Cortex-M ports under QEMU (mps2, mps3-an547,
 * nrf51): SysTick read with a vernier, the semihosting exit, the clock; see
 * icount.h.
 *
 * Under `qemu -icount shift=0` one instruction takes 1 ns of virtual time,
 * and SysTick (on the processor clock: 25 MHz on the mps2 images, 20 MHz on
 * the an505, 32 MHz on the an547, 16 MHz on the micro:bit) advances once
 * every 40 (50, 31.25, 62.5) instructions.  The timer turns ticks into exact
 * instruction counts with a vernier (below).  SysTick is 24 bits wide; its
 * interrupt counts wrap-arounds, so runs of any length are measured.
 *
 * Board parameters (an aot project passes them from the board record,
 * timer.icount_instructions_per_tick = NUM / DEN; a plain runtime.mk build
 * gets ports/<port>/port.mk's or the mps2 default):
 *   AOT_TICK_INSNS_NUM  instructions per AOT_TICK_INSNS_DEN SysTick ticks, both
 *   AOT_TICK_INSNS_DEN  integers with NUM >= 13 and DEN a power of two
 *   AOT_CPU_HZ          the record's clock_hz, reported by aot_port_clock_hz()
 */
#include <stdint.h>

#include "aot/platform.h"
#include "icount.h"
#include "semihost.h"

#ifndef AOT_TICK_INSNS_NUM /* plain integers: they also go into assembly */
#define AOT_TICK_INSNS_NUM 40
#define AOT_TICK_INSNS_DEN 1
#endif

/* The timer is the board record's choice ([timer] kind, AOT_TIMER_KIND_<KIND>
 * from aot.firmware.project.board_defines): refuse one this code does not have. */
#if defined(AOT_BOARD_FACTS) && !defined(AOT_TIMER_KIND_SYSTICK)
#error "icount.c times with SysTick; the board record names another timer kind"
#endif

#define REG(addr) (*(volatile uint32_t *)(addr))

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

void aot_icount_timer_start(void)
{
    SYST_CSR = 0;
    SYST_RVR = SYST_MAX;
    SYST_CVR = 0;
    wraps = 0;
    SYST_CSR = SYST_ENABLE_INT_CPUCLK;
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
#if defined(__ARM_ARCH_ISA_THUMB) && __ARM_ARCH_ISA_THUMB == 1
__attribute__((naked, noinline)) static uint32_t vernier(void)
{
    /* Armv6-M (Cortex-M0/M0+): Thumb-1 only, so no wide immediates; the tick
     * difference is compared with DEN + 1 held in r6, the phase mask DEN - 1
     * in r7.  The exit test sits after the NOPs, so that the only
     * conditional branch is short. */
    __asm__ volatile(
        ".syntax unified\n"
        "push {r4, r5, r6, r7, lr}\n"
        "ldr r1, 3f\n"       /* r1 = &SYST_CVR */
        "movs r6, #(" AOT_STR(AOT_TICK_INSNS_DEN) " + 1)\n"
        "movs r7, #(" AOT_STR(AOT_TICK_INSNS_DEN) " - 1)\n"
        "movs r0, #0\n"
        "ldr r2, [r1]\n"
        "1:\n"
        "ldr r3, [r1]\n"
        "subs r4, r2, r3\n"
        "lsls r4, r4, #8\n"
        "lsrs r4, r4, #8\n"  /* the 24-bit tick difference */
        "subs r4, r4, r6\n"  /* 0: DEN + 1 new ticks */
        "movs r5, r3\n"
        "ands r5, r5, r7\n"
        "eors r5, r5, r7\n"  /* 0: the right edge (CVR counts down) */
        "orrs r4, r4, r5\n"
        "mov r2, r3\n"
        "adds r0, r0, #1\n"
        ".rept " AOT_STR(AOT_TICK_INSNS_NUM) " - 13\n"
        "nop\n"
        ".endr\n"
        "cmp r4, #0\n"
        "beq 2f\n"
        "b 1b\n"             /* 11 + (NUM - 13) + 3 = NUM + 1 instructions */
        "2:\n"
        "pop {r4, r5, r6, r7, pc}\n"
        ".balign 4\n"
        "3: .word 0xE000E018\n");
}
#else
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
#endif

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

void aot_port_report(aot_device_report_t *report)
{
    /* Under QEMU nothing is measured (every timer runs on the emulator's
     * virtual clock, which -icount ties to the instruction count), no flash
     * interface is modelled and no cache is emulated. */
    report->measured_clock_hz = 0;
    report->flash_wait_states = AOT_NO_WAIT_STATES;
    report->caches = 0;
}

uint32_t aot_port_entropy(void)
{
    /* Nothing random survives a reset under QEMU; the host nonce suffices. */
    return 0x6D707332u;
}

void aot_port_exit(int code)
{
    aot_semihost_exit(code);
}
