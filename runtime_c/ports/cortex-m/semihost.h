/*
 * Arm semihosting on M-profile cores, for the ports that run under QEMU
 * (-semihosting-config enable=on): SYS_EXIT_EXTENDED ends the QEMU process
 * with the firmware's exit code.  On a core without a debugger attached the
 * BKPT would fault, so only ports for emulated boards call it.
 */
#ifndef AOT_CORTEX_M_SEMIHOST_H
#define AOT_CORTEX_M_SEMIHOST_H

#include <stdint.h>

static inline void aot_semihost_exit(int code) __attribute__((noreturn));

static inline void aot_semihost_exit(int code)
{
    /* SYS_EXIT_EXTENDED (0x20) with {ADP_Stopped_ApplicationExit, code}. */
    static volatile uint32_t block[2];
    register uint32_t r0 __asm__("r0") = 0x20u;
    register volatile uint32_t *r1 __asm__("r1") = block;
    block[0] = 0x20026u;
    block[1] = (uint32_t)code;
    __asm__ volatile("bkpt 0xab" : : "r"(r0), "r"(r1) : "memory");
    for (;;) {
    }
}

#endif
