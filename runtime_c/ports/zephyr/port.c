/*
 * Zephyr port of the aot runtime: the hooks of aot/platform.h on Zephyr's
 * device and kernel APIs, for applications that enable CONFIG_AOT_RPC_SERVER
 * (zephyr/Kconfig; zephyr/CMakeLists.txt compiles this file).
 *
 * NEVER BUILT AGAINST ZEPHYR: no Zephyr tree was available where it was
 * written.  It follows Zephyr's documented API (3.x/4.x: <zephyr/...>
 * headers); tests/zephyr/test_zephyr_port.py compiles and runs it on the host only
 * against stand-in headers that declare those functions, which checks the C
 * and the port's logic, not Zephyr.
 *
 * - UART: polled (uart_poll_in / uart_poll_out) on the devicetree's chosen
 *   zephyr,console, or aot,rpc-uart with CONFIG_AOT_RPC_UART_CHOSEN.  While
 *   no byte is there the thread calls k_yield(): threads of lower priority
 *   than the server's do not run while it waits.
 * - Timer: k_cycle_get_32() (k_cycle_get_64() when the system timer has a
 *   64-bit counter), reported as CPU cycles with CONFIG_AOT_TIMER_HW_CYCLES
 *   (right when the system timer runs at the CPU clock, as the Cortex-M
 *   SysTick does) and otherwise as nanoseconds through
 *   sys_clock_hw_cycles_per_sec().  The 32-bit counter is exact across one
 *   wrap-around: runs shorter than 2^32 timer cycles.
 * - Exit: the calling thread records the code in aot_zephyr_exit_code (for a
 *   debugger) and sleeps for ever; the rest of the application goes on.
 */
#include <zephyr/device.h>
#include <zephyr/devicetree.h>
#include <zephyr/drivers/uart.h>
#include <zephyr/kernel.h>

#include "aot/platform.h"

#if defined(CONFIG_AOT_RPC_UART_CHOSEN)
#if !DT_HAS_CHOSEN(aot_rpc_uart)
#error "CONFIG_AOT_RPC_UART_CHOSEN: the devicetree has no chosen node aot,rpc-uart; add one in an overlay: / { chosen { aot,rpc-uart = &uart1; }; };"
#endif
#define AOT_RPC_UART_NODE DT_CHOSEN(aot_rpc_uart)
#else
#if !DT_HAS_CHOSEN(zephyr_console)
#error "aot: the devicetree has no chosen zephyr,console for the RPC; choose CONFIG_AOT_RPC_UART_CHOSEN and an aot,rpc-uart chosen node"
#endif
#define AOT_RPC_UART_NODE DT_CHOSEN(zephyr_console)
#endif

/* Exit codes of this port (the runtime's own are 0 and 100 + status). */
#define AOT_ZEPHYR_EXIT_UART_NOT_READY 122
#define AOT_ZEPHYR_EXIT_UART_NO_POLLING 123

static const struct device *const rpc_uart = DEVICE_DT_GET(AOT_RPC_UART_NODE);

/* The code passed to aot_port_exit(), -1 while the server runs. */
volatile int aot_zephyr_exit_code = -1;

void aot_port_init(void)
{
    if (!device_is_ready(rpc_uart)) {
        aot_port_exit(AOT_ZEPHYR_EXIT_UART_NOT_READY);
    }
}

int aot_port_read_byte(void)
{
    unsigned char byte;
    int rc;

    for (;;) {
        rc = uart_poll_in(rpc_uart, &byte);
        if (rc == 0) {
            return (int)byte;
        }
        if (rc != -1) {
            /* -ENOSYS (no polling in this driver) or -EBUSY (asynchronous
             * reception is on): this UART cannot serve the RPC. */
            aot_port_exit(AOT_ZEPHYR_EXIT_UART_NO_POLLING);
        }
        k_yield();
    }
}

void aot_port_write(const uint8_t *data, size_t len)
{
    size_t i;
    for (i = 0; i < len; ++i) {
        uart_poll_out(rpc_uart, data[i]);
    }
}

static uint64_t timer_origin;

void aot_port_timer_start(void)
{
#if defined(CONFIG_TIMER_HAS_64BIT_CYCLE_COUNTER)
    timer_origin = k_cycle_get_64();
#else
    timer_origin = k_cycle_get_32();
#endif
}

uint64_t aot_port_timer_stop(void)
{
#if defined(CONFIG_TIMER_HAS_64BIT_CYCLE_COUNTER)
    uint64_t cycles = k_cycle_get_64() - timer_origin;
#else
    /* Unsigned 32-bit subtraction: right across one wrap-around. */
    uint64_t cycles = (uint32_t)(k_cycle_get_32() - (uint32_t)timer_origin);
#endif
#if defined(CONFIG_AOT_TIMER_HW_CYCLES)
    return cycles;
#else
    /* Split so that neither product overflows 64 bits (hz < 2^32). */
    uint64_t hz = (uint64_t)sys_clock_hw_cycles_per_sec();
    return cycles / hz * 1000000000u + cycles % hz * 1000000000u / hz;
#endif
}

uint8_t aot_port_timer_unit(void)
{
#if defined(CONFIG_AOT_TIMER_HW_CYCLES)
    return AOT_TIMER_CYCLES;
#else
    return AOT_TIMER_NANOSECONDS;
#endif
}

uint32_t aot_port_clock_hz(void)
{
#if defined(CONFIG_AOT_TIMER_HW_CYCLES)
    /* The system timer counts CPU cycles (the Cortex-M SysTick): its rate is
     * the core clock. */
    return (uint32_t)sys_clock_hw_cycles_per_sec();
#else
    return 0; /* the system timer's rate says nothing of the core clock */
#endif
}

void aot_port_report(aot_device_report_t *report)
{
    /* The clock tree and caches are Zephyr's (devicetree, SoC init): not
     * read back here. */
    report->measured_clock_hz = 0;
    report->flash_wait_states = AOT_NO_WAIT_STATES;
    report->caches = 0;
}

uint32_t aot_port_entropy(void)
{
    /* Boot time in timer cycles: differs between boots only as much as the
     * boot does; the host's nonce separates sessions anyway. */
    return k_cycle_get_32();
}

void aot_port_exit(int code)
{
    aot_zephyr_exit_code = code;
    for (;;) {
        k_sleep(K_FOREVER);
    }
}
