/*
 * The SysTick instruction counter of the Cortex-M ports that run under QEMU
 * (mps2, mps3-an547, nrf51), in icount.c: aot_port_timer_start/stop/unit
 * (exact instruction counts under -icount shift=0, by a vernier in Armv7-M
 * or Armv6-M assembly), aot_port_entropy, aot_port_exit (semihosting) and
 * aot_port_clock_hz (AOT_CPU_HZ).  A port using it lists icount.c among its
 * sources, calls aot_icount_timer_start() from aot_port_init(), and defines
 * only the UART hooks.
 */
#ifndef AOT_PORT_ICOUNT_H
#define AOT_PORT_ICOUNT_H

/* Start SysTick free-running on the processor clock with its wrap interrupt. */
void aot_icount_timer_start(void);

#endif /* AOT_PORT_ICOUNT_H */
