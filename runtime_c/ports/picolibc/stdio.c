/*
 * picolibc's standard streams on the port's console, for firmware with its
 * own main() on the RISC-V ports (sifive_e, esp32c3), which link picolibc:
 * printf and putchar write through aot_port_write, getchar reads
 * aot_port_read_byte.  picolibc leaves stdin/stdout/stderr for the
 * application to define (its stdio.h: "undefined global FILE pointers").
 *
 * Its sbrk takes the heap from the linker script's __heap_start and
 * __heap_end (the port's link.ld.in: the end of .bss up to the stack's
 * reserve) and checks every request against them.  The generated model code
 * and the RPC server use neither; --gc-sections drops them when unused.
 */
#include <stdint.h>
#include <stdio.h>

#include "aot/platform.h"

static int aot_stdio_put(char c, FILE *stream)
{
    (void)stream;
    uint8_t byte = (uint8_t)c;
    aot_port_write(&byte, 1);
    return (unsigned char)c;
}

static int aot_stdio_get(FILE *stream)
{
    (void)stream;
    int c = aot_port_read_byte();
    return c < 0 ? EOF : c;
}

static FILE aot_stdio = FDEV_SETUP_STREAM(aot_stdio_put, aot_stdio_get, NULL, _FDEV_SETUP_RW);

FILE *const stdin = &aot_stdio;
FILE *const stdout = &aot_stdio;
FILE *const stderr = &aot_stdio;
