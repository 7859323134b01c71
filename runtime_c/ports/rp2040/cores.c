/*
 * The RP2040's second Cortex-M0+ (raspberrypi/pico; the record's [cores]
 * gives -DAOT_CORES_START_RP2040_FIFO, the SIO base and core 1's stack size).
 * NOT VERIFIED ON HARDWARE: it builds and links, its image is checked
 * (tests/cores/test_rp2040_cores.py) and the launch sequence runs on the host
 * against a model of the boot ROM's side.
 *
 * After reset core 1 sleeps in the boot ROM, waiting for a launch command on
 * the inter-core FIFO of the SIO (RP2040 datasheet 2.8.2, "Launching Code On
 * Processor Core 1"; the FIFO registers in 2.3.1.7: FIFO_ST at +0x50 with VLD
 * bit 0 = a word to read and RDY bit 1 = room to write, FIFO_WR at +0x54,
 * FIFO_RD at +0x58).  The command is six words, each echoed back by core 1:
 * 0, 0, 1, the vector table address, the initial stack pointer, the entry
 * point.  A wrong echo makes core 0 start over from the first word; before
 * each 0 core 0 empties its receive FIFO (stale words) and signals an event,
 * as core 1 may be waiting in WFE.  Once it has the whole command the boot
 * ROM sets VTOR and the stack pointer and jumps to the entry point.
 *
 * Every wait gives up after AOT_CORES_WAIT polls and the launch after
 * AOT_CORES_LAUNCH_TRIES words: a core 1 that does not answer leaves the
 * board running on core 0 alone (aot_port_start_cores returns 1) instead of
 * hanging.
 */
#include <stdint.h>

#include "aot/cores.h" /* outside the #if: a one-core build is not an empty file */
#include "aot/mmio.h"
#include "aot/platform.h"

#if defined(AOT_CORES_START_RP2040_FIFO)
#if AOT_BOARD_CORES != 2
#error "the RP2040 has exactly one more core (core 1)"
#endif
#if !defined(AOT_CORES_SYSCTL_BASE) || !defined(AOT_CORES_STACK_BYTES)
#error "rp2040_fifo needs AOT_CORES_SYSCTL_BASE (SIO) and AOT_CORES_STACK_BYTES (board record [cores])"
#endif

#define SIO_FIFO_ST (AOT_CORES_SYSCTL_BASE + 0x050u)
#define SIO_FIFO_WR (AOT_CORES_SYSCTL_BASE + 0x054u)
#define SIO_FIFO_RD (AOT_CORES_SYSCTL_BASE + 0x058u)
#define FIFO_VLD 0x1u
#define FIFO_RDY 0x2u
#define LAUNCH_WORDS 6u
#ifndef AOT_CORES_WAIT
#define AOT_CORES_WAIT 100000u
#endif
#ifndef AOT_CORES_LAUNCH_TRIES
#define AOT_CORES_LAUNCH_TRIES 64u
#endif
#define AOT_EXIT_CORE1_FAULT 121

static uint64_t core1_stack[AOT_CORES_STACK_BYTES / 8];
/* What core 1 runs: set by core 0 before it sends the launch command. */
static void (*volatile core1_entry)(uint32_t core);

static void core1_main(void)
{
    core1_entry(1u);
}

static void core1_fault(void)
{
    aot_port_exit(AOT_EXIT_CORE1_FAULT);
}

typedef void (*core1_vector_t)(void);

/* The M0+'s VTOR keeps bits [31:8]: the table is 256-byte aligned. */
__attribute__((aligned(256), used)) static const core1_vector_t core1_vectors[16] = {
    (core1_vector_t)(uintptr_t)(core1_stack + AOT_CORES_STACK_BYTES / 8),
    core1_main,
    core1_fault, /* NMI */
    core1_fault, /* HardFault */
};

/* Make the FIFO write visible, then wake a core waiting in WFE. */
static void signal_event(void)
{
    aot_mmio_sync();
#if !AOT_MMIO_HOST
    __asm__ volatile("sev" ::: "memory");
#endif
}

static int fifo_wait(uint32_t flag)
{
    uint32_t n;
    for (n = 0; n < AOT_CORES_WAIT; ++n) {
        if (aot_mmio_read(SIO_FIFO_ST) & flag) {
            return 1;
        }
    }
    return 0;
}

static void fifo_drain(void)
{
    uint32_t n;
    for (n = 0; n < AOT_CORES_WAIT && (aot_mmio_read(SIO_FIFO_ST) & FIFO_VLD); ++n) {
        (void)aot_mmio_read(SIO_FIFO_RD);
    }
}

uint32_t aot_port_start_cores(void (*entry)(uint32_t core))
{
    const uint32_t launch[LAUNCH_WORDS] = {
        0u, 0u, 1u,
        (uint32_t)(uintptr_t)core1_vectors,
        (uint32_t)(uintptr_t)(core1_stack + AOT_CORES_STACK_BYTES / 8),
        (uint32_t)(uintptr_t)core1_main,
    };
    uint32_t i = 0, tries;
    core1_entry = entry;
    for (tries = 0; i < LAUNCH_WORDS; ++tries) {
        uint32_t echo;
        if (tries == AOT_CORES_LAUNCH_TRIES) {
            return 1u;
        }
        if (launch[i] == 0u) {
            fifo_drain();
            signal_event();
        }
        if (!fifo_wait(FIFO_RDY)) {
            return 1u;
        }
        aot_mmio_write(SIO_FIFO_WR, launch[i]);
        signal_event();
        if (!fifo_wait(FIFO_VLD)) {
            return 1u;
        }
        echo = aot_mmio_read(SIO_FIFO_RD);
        i = echo == launch[i] ? i + 1u : 0u;
    }
    return 2u;
}
#endif /* AOT_CORES_START_RP2040_FIFO */
