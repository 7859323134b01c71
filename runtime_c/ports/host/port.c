/*
 * Host port: the runtime as a POSIX process speaking the RPC on stdin/stdout.
 * Used by fast tests, fuzzing and the host runner; timings are nanoseconds of
 * CLOCK_MONOTONIC, so they are noisy and only good for smoke tests.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "aot/platform.h"

static uint8_t in_buf[4096];
static size_t in_len;
static size_t in_pos;
static uint64_t timer_origin;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void aot_port_init(void)
{
    in_len = 0;
    in_pos = 0;
}

int aot_port_read_byte(void)
{
    while (in_pos == in_len) {
        ssize_t n = read(0, in_buf, sizeof in_buf);
        if (n == 0 || (n < 0 && errno != EINTR)) {
            return -1;
        }
        in_len = n > 0 ? (size_t)n : 0;
        in_pos = 0;
    }
    return in_buf[in_pos++];
}

void aot_port_write(const uint8_t *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(1, data, len);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            aot_port_exit(3); /* the host went away: nothing left to serve */
        }
        data += n;
        len -= (size_t)n;
    }
}

void aot_port_timer_start(void)
{
    timer_origin = now_ns();
}

uint64_t aot_port_timer_stop(void)
{
    return now_ns() - timer_origin;
}

uint8_t aot_port_timer_unit(void)
{
    return AOT_TIMER_NANOSECONDS;
}

uint32_t aot_port_entropy(void)
{
    return (uint32_t)now_ns() ^ ((uint32_t)getpid() << 16);
}

void aot_port_exit(int code)
{
    exit(code);
}
