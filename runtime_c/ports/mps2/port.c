/*
 * Port for the Arm MPS2/MPS3 FPGA images as QEMU emulates them (mps2-an385,
 * -an386, -an500, -an505, -an521, mps3-an547): CMSDK APB UART0, polled; the timer,
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

#if defined(AOT_CORES_START_SSE200_CPUWAIT)
/*
 * The second Cortex-M33 of an SSE-200 (qemu/mps2-an521; the record's [cores]
 * gives -DAOT_CORES_START_SSE200_CPUWAIT and the addresses).  Other mps2
 * machines are built without this block.
 *
 * The SSE-200's system control registers (Arm CoreLink SSE-200 TRM, "System
 * control register block"; QEMU 7.2 hw/misc/iotkit-sysctl.c, which maps it
 * at 0x50021000 Secure through hw/arm/armsse.c) hold INITSVTOR1 at +0x114,
 * the address core 1 loads its stack pointer and reset vector from, and
 * CPUWAIT at +0x118, whose bit n holds core n at reset.  The AN521 resets
 * with CPUWAIT = 2 (core 1 waits; checked under QEMU 7.2): core 0 points
 * INITSVTOR1 at core 1's own vector table and clears bit 1.
 */
#include "aot/cores.h"

#if AOT_BOARD_CORES != 2
#error "the SSE-200 start releases exactly one more core (core 1)"
#endif
#if !defined(AOT_CORES_SYSCTL_BASE) || !defined(AOT_CORES_STACK_BYTES)
#error "sse200_cpuwait needs AOT_CORES_SYSCTL_BASE and AOT_CORES_STACK_BYTES (board record [cores])"
#endif

#define SYSCTL_INITSVTOR1 REG(AOT_CORES_SYSCTL_BASE + 0x114u)
#define SYSCTL_CPUWAIT REG(AOT_CORES_SYSCTL_BASE + 0x118u)
#define CPUWAIT_CORE1 0x2u
#define AOT_EXIT_CORE1_FAULT 121 /* core 0's faults exit with 120 (startup.c) */

static uint64_t core1_stack[AOT_CORES_STACK_BYTES / 8];
/* What core 1 runs: set by core 0 before it releases core 1. */
static void (*volatile core1_entry)(uint32_t core);

static void core1_reset(void)
{
    core1_entry(1u);
}

static void core1_fault(void)
{
    aot_port_exit(AOT_EXIT_CORE1_FAULT);
}

typedef void (*core1_vector_t)(void);

/* INITSVTOR1 keeps bits [31:7]: the table is 128-byte aligned. */
__attribute__((aligned(128), used)) static const core1_vector_t core1_vectors[16] = {
    (core1_vector_t)(uintptr_t)(core1_stack + AOT_CORES_STACK_BYTES / 8),
    core1_reset,
    core1_fault, /* NMI */
    core1_fault, /* HardFault */
    core1_fault, /* MemManage */
    core1_fault, /* BusFault */
    core1_fault, /* UsageFault */
    core1_fault, /* SecureFault */
};

uint32_t aot_port_start_cores(void (*entry)(uint32_t core))
{
    core1_entry = entry;
    SYSCTL_INITSVTOR1 = (uint32_t)(uintptr_t)core1_vectors;
    __asm__ volatile("dsb" ::: "memory");
    SYSCTL_CPUWAIT &= ~CPUWAIT_CORE1;
    __asm__ volatile("dsb\n sev" ::: "memory");
    return 2u;
}
#endif /* AOT_CORES_START_SSE200_CPUWAIT */
