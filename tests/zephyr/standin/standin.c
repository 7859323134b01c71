/*
 * Host implementation of the stand-in Zephyr API (see README.md): the UART is
 * stdin/stdout, every other poll finds no byte (so the port's retry runs), and
 * the cycle counter is microseconds since start.  Environment switches:
 * AOT_STANDIN_UART_BROKEN (device not ready), AOT_STANDIN_NO_POLLING (the
 * driver has no polling).  k_sleep(K_FOREVER) ends the process with the
 * port's aot_zephyr_exit_code, so the test sees it.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <zephyr/device.h>
#include <zephyr/drivers/uart.h>
#include <zephyr/kernel.h>

const struct device aot_standin_chosen_zephyr_console = {"console"};
const struct device aot_standin_chosen_aot_rpc_uart = {"rpc-uart"};
extern volatile int aot_zephyr_exit_code;

static const struct device *used_uart;
static unsigned long yields;

bool device_is_ready(const struct device *dev)
{
    used_uart = dev;
    return getenv("AOT_STANDIN_UART_BROKEN") == NULL;
}

int uart_poll_in(const struct device *dev, unsigned char *p_char)
{
    static int turn;
    int c;
    if (dev != used_uart) {
        fprintf(stderr, "standin: polled %s, checked %s\n", dev->name, used_uart->name);
        exit(90);
    }
    if (getenv("AOT_STANDIN_NO_POLLING") != NULL) {
        return -ENOSYS;
    }
    fflush(stdout);
    if ((turn++ & 1) == 0) {
        return -1;
    }
    c = getchar();
    if (c == EOF) {
        fprintf(stderr, "standin: %s, %lu yields\n", dev->name, yields);
        exit(0);
    }
    *p_char = (unsigned char)c;
    return 0;
}

void uart_poll_out(const struct device *dev, unsigned char out_char)
{
    (void)dev;
    putchar(out_char);
}

static uint64_t micros(void)
{
    static uint64_t origin;
    struct timespec ts;
    uint64_t now;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    now = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
    if (origin == 0) {
        origin = now;
    }
    return now - origin;
}

uint32_t k_cycle_get_32(void)
{
    return (uint32_t)micros();
}

uint64_t k_cycle_get_64(void)
{
    return micros();
}

int sys_clock_hw_cycles_per_sec(void)
{
    return 1000000;
}

void k_yield(void)
{
    yields++;
}

int32_t k_sleep(k_timeout_t timeout)
{
    (void)timeout;
    fflush(stdout);
    exit(aot_zephyr_exit_code);
}

#ifdef AOT_STANDIN_THREAD
extern const k_thread_entry_t aot_standin_thread_entry;
int main(void)
{
    aot_standin_thread_entry(NULL, NULL, NULL);
    return 99; /* the thread never returns */
}
#endif
