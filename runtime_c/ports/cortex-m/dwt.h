/*
 * The DWT cycle counter as the port timer of a real Cortex-M3/M4/M7/M33/M55
 * board, and a halt for aot_port_exit(): the part of a hardware port that
 * does not depend on the chip.  A port that uses it lists dwt.c among its
 * sources, calls aot_dwt_start() from aot_port_init(), and then defines only
 * the UART hooks and aot_port_clock_hz().
 *
 * CYCCNT is 32 bits; SysTick interrupts every 2^24 cycles (the port's
 * aot_systick_handler is here) count its wraps, so aot_port_timer_stop()
 * returns 64-bit cycle counts, AOT_TIMER_CYCLES, for runs of any length.
 * Under QEMU CYCCNT reads 0: emulated boards name another timer in their
 * record (qemu/netduinoplus2: stm32_tim2, -DAOT_TIMER_KIND_STM32_TIM2).
 */
#ifndef AOT_PORT_DWT_H
#define AOT_PORT_DWT_H

/* Power the DWT (DEMCR.TRCENA), unlock it where a lock exists (Cortex-M7),
 * start CYCCNT from 0 and SysTick for its wraps. */
void aot_dwt_start(void);

#endif /* AOT_PORT_DWT_H */
