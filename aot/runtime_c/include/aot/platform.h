/*
 * The hooks a port implements: all the runtime needs from a board.
 *
 * A port is one C file (plus startup code and a linker script on bare metal)
 * under aot/runtime_c/ports/<port>/.  The runtime calls nothing else of the
 * platform; the generated model code calls nothing of it at all.
 */
#ifndef AOT_PLATFORM_H
#define AOT_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

/* Units of aot_port_timer_stop(), sent to the host in INFO and RUN replies. */
#define AOT_TIMER_INSTRUCTIONS 0u /* instructions executed (QEMU -icount) */
#define AOT_TIMER_CYCLES 1u       /* CPU clock cycles (hardware counter) */
#define AOT_TIMER_NANOSECONDS 2u  /* wall-clock time (host port) */

/* Bring up the UART and the timer.  Called once, before anything else. */
void aot_port_init(void);

/* Block until one byte arrives; return it (0..255), or -1 when the link is
 * closed for good (end of input on the host port).  Bare-metal ports never
 * return -1. */
int aot_port_read_byte(void);

/* Send len bytes, blocking until the UART has taken them all. */
void aot_port_write(const uint8_t *data, size_t len);

/* Start the timer from zero. */
void aot_port_timer_start(void);

/* Stop the timer and return the time since aot_port_timer_start() in the
 * port's unit.  Must handle counter wrap-around for at least 2^32 units. */
uint64_t aot_port_timer_stop(void);

/* One of AOT_TIMER_*: the unit of aot_port_timer_stop(). */
uint8_t aot_port_timer_unit(void);

/* The core clock in Hz the firmware really runs at (after the port's clock
 * setup, or the reset clock where that setup gave up), or 0 where the port
 * does not know it (the host).  Sent to the host in INFO, so that cycle
 * counts can be turned into time. */
uint32_t aot_port_clock_hz(void);

/* A value that differs between boots when the hardware allows it (used to mix
 * session ids, not for security).  Returning a constant is allowed: the host
 * nonce alone already separates sessions of one boot. */
uint32_t aot_port_entropy(void);

/* Stop the program with an exit code (semihosting exit under QEMU, process exit
 * on the host, a breakpoint/halt loop on hardware). */
void aot_port_exit(int code)
#if defined(__GNUC__)
    __attribute__((noreturn))
#endif
    ;

#endif /* AOT_PLATFORM_H */
