/*
 * The few system calls newlib (nano.specs) needs so that firmware with its
 * own main() can use the C library's printf family and malloc: a heap bounded
 * by the stack, and stdout/stderr/stdin on the port's console.
 *
 * Without them nosys.specs links stubs that fail at run time, and its _sbrk
 * needs a symbol `end` and never checks the heap against the stack.  The
 * linker script (link.ld.in) defines the heap: from the end of .bss
 * (`end`) up to __aot_heap_limit, AOT_STACK_SIZE below the top of RAM.
 * The generated model code and the RPC server call none of these; unused
 * ones are dropped by --gc-sections.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "aot/platform.h"

extern char end[];             /* the heap's start (link.ld.in) */
extern char __aot_heap_limit[]; /* the lowest address the stack may reach */

void *_sbrk(ptrdiff_t incr);
int _write(int fd, const char *buf, int len);
int _read(int fd, char *buf, int len);
int _close(int fd);
int _fstat(int fd, struct stat *st);
int _isatty(int fd);
int _lseek(int fd, int offset, int whence);
void _exit(int code);

void *_sbrk(ptrdiff_t incr)
{
    static uintptr_t brk = 0;
    if (brk == 0) {
        brk = (uintptr_t)end;
    }
    uintptr_t old = brk;
    if (incr >= 0 ? (uintptr_t)incr > (uintptr_t)__aot_heap_limit - brk
                  : (uintptr_t)-incr > brk - (uintptr_t)end) {
        errno = ENOMEM;
        return (void *)-1;
    }
    brk += (uintptr_t)incr;
    return (void *)old;
}

/* stdout and stderr go to the console. */
int _write(int fd, const char *buf, int len)
{
    if (fd != 1 && fd != 2) {
        errno = EBADF;
        return -1;
    }
    aot_port_write((const uint8_t *)buf, (size_t)len);
    return len;
}

/* stdin reads the console up to the end of a line. */
int _read(int fd, char *buf, int len)
{
    if (fd != 0) {
        errno = EBADF;
        return -1;
    }
    int n = 0;
    while (n < len) {
        int c = aot_port_read_byte();
        if (c < 0) {
            break;
        }
        buf[n++] = (char)c;
        if (c == '\n') {
            break;
        }
    }
    return n;
}

int _close(int fd)
{
    (void)fd;
    errno = EBADF;
    return -1;
}

int _fstat(int fd, struct stat *st)
{
    (void)fd;
    st->st_mode = S_IFCHR; /* a character device: line-buffered stdio */
    return 0;
}

int _isatty(int fd)
{
    return fd >= 0 && fd <= 2;
}

int _lseek(int fd, int offset, int whence)
{
    (void)fd;
    (void)offset;
    (void)whence;
    errno = ESPIPE;
    return -1;
}

void _exit(int code)
{
    aot_port_exit(code);
}
