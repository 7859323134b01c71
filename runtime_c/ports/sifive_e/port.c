/*
 * Port for QEMU's sifive_e (SiFive HiFive1-like, rv32imac): SiFive UART0,
 * polled, and timing with the instret counter.  Under `qemu -icount shift=0`
 * rdcycle and rdinstret both count executed instructions exactly; on a real
 * FE310 the unit would be retired instructions as well.
 *
 * Board parameter: AOT_UART_BASE (0x10013000 on sifive_e).
 */
#include <stdint.h>

#include "aot/platform.h"

#ifndef AOT_UART_BASE
#define AOT_UART_BASE 0x10013000u
#endif

/* The timer is the board record's choice ([timer] kind, AOT_TIMER_KIND_<KIND>
 * from aot.firmware.project.board_defines): refuse one this code does not have. */
#if defined(AOT_BOARD_FACTS) && !defined(AOT_TIMER_KIND_RDINSTRET)
#error "sifive_e port: it times with rdinstret; the board record names another timer kind"
#endif

#define REG(addr) (*(volatile uint32_t *)(addr))
#define UART_TXDATA REG(AOT_UART_BASE + 0x00u)
#define UART_RXDATA REG(AOT_UART_BASE + 0x04u)
#define UART_TXCTRL REG(AOT_UART_BASE + 0x08u)
#define UART_RXCTRL REG(AOT_UART_BASE + 0x0Cu)
#define UART_FULL_OR_EMPTY 0x80000000u

static uint64_t timer_origin;

static uint64_t instret(void)
{
    uint32_t hi;
    uint32_t lo;
    uint32_t hi2;
    do { /* the two halves must come from the same 64-bit value */
        __asm__ volatile("rdinstreth %0" : "=r"(hi));
        __asm__ volatile("rdinstret %0" : "=r"(lo));
        __asm__ volatile("rdinstreth %0" : "=r"(hi2));
    } while (hi != hi2);
    return ((uint64_t)hi << 32) | lo;
}

void aot_port_init(void)
{
    UART_TXCTRL = 1u; /* txen */
    UART_RXCTRL = 1u; /* rxen */
}

int aot_port_read_byte(void)
{
    for (;;) {
        uint32_t v = UART_RXDATA;
        if ((v & UART_FULL_OR_EMPTY) == 0) {
            return (int)(v & 0xFFu);
        }
    }
}

void aot_port_write(const uint8_t *data, size_t len)
{
    size_t i;
    for (i = 0; i < len; ++i) {
        while ((UART_TXDATA & UART_FULL_OR_EMPTY) != 0) {
        }
        UART_TXDATA = data[i];
    }
}

void aot_port_timer_start(void)
{
    timer_origin = instret();
}

uint64_t aot_port_timer_stop(void)
{
    return instret() - timer_origin;
}

uint8_t aot_port_timer_unit(void)
{
    return AOT_TIMER_INSTRUCTIONS;
}

uint32_t aot_port_clock_hz(void)
{
    return 0; /* QEMU's sifive_e: no clock_hz in the record; rdinstret counts instructions */
}

void aot_port_report(aot_device_report_t *report)
{
    /* QEMU: nothing to measure against, no flash interface, no cache. */
    report->measured_clock_hz = 0;
    report->flash_wait_states = AOT_NO_WAIT_STATES;
    report->caches = 0;
}

uint32_t aot_port_entropy(void)
{
    return 0x73696665u;
}

void aot_port_exit(int code)
{
    /* RISC-V semihosting SYS_EXIT_EXTENDED: the ebreak must sit between these
     * two uncompressed marker instructions for QEMU to treat it as a call. */
    static volatile uint32_t block[2];
    register uint32_t a0 __asm__("a0") = 0x20u;
    register volatile uint32_t *a1 __asm__("a1") = block;
    block[0] = 0x20026u;
    block[1] = (uint32_t)code;
    __asm__ volatile(".option push\n"
                     ".option norvc\n"
                     ".balign 16\n"
                     "slli x0, x0, 0x1f\n"
                     "ebreak\n"
                     "srai x0, x0, 7\n"
                     ".option pop\n"
                     :
                     : "r"(a0), "r"(a1)
                     : "memory");
    for (;;) {
    }
}
