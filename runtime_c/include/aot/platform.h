/*
 * The hooks a port implements: all the runtime needs from a board.
 *
 * A port is one C file (plus startup code and a linker script on bare metal)
 * under runtime_c/ports/<port>/.  The runtime calls nothing else of the
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

/* Bits of aot_device_report_t.caches: the caches and accelerators in front
 * of the core's code and constants that the port found switched on. */
#define AOT_CACHE_L1_ICACHE 0x01u      /* Cortex-M7 L1 instruction cache */
#define AOT_CACHE_L1_DCACHE 0x02u      /* Cortex-M7 L1 data cache */
#define AOT_CACHE_FLASH_PREFETCH 0x04u /* flash interface prefetch (STM32 PRFTEN) */
#define AOT_CACHE_FLASH_ICACHE 0x08u   /* flash instruction cache (STM32F4/L4 ICEN, nRF52 NVMC) */
#define AOT_CACHE_FLASH_DCACHE 0x10u   /* flash data cache (STM32F4/L4 DCEN) */
#define AOT_CACHE_ART 0x20u            /* STM32F7 ART accelerator (ITCM flash interface) */
#define AOT_CACHE_XIP 0x40u            /* cache in front of external flash (RP2040, ESP32-C3) */
#define AOT_CACHE_ALL 0x7Fu
/* aot_device_report_t.flash_wait_states where flash has none to set. */
#define AOT_NO_WAIT_STATES 0xFFu

/* What the board says about itself in INFO (docs/runtime.md): the host
 * compares it with the board record, so that a port that set the chip up
 * differently from what the record says shows on the first connection. */
typedef struct {
    uint32_t measured_clock_hz; /* the core clock counted against a timer that does
                                   not run from it; 0: not measured */
    uint8_t flash_wait_states;  /* read back from the flash interface, or AOT_NO_WAIT_STATES */
    uint16_t caches;            /* AOT_CACHE_* bits read back from the hardware */
} aot_device_report_t;

/* Fill `report` from the hardware (not from what the port meant to set).
 * May take some milliseconds: a measured clock counts for a while. */
void aot_port_report(aot_device_report_t *report);

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
