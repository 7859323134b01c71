/*
 * The DWT cycle counter as the port timer of a real Cortex-M3/M4/M7/M33/M55
 * board, and a halt for aot_port_exit(): the part of a hardware port that
 * does not depend on the chip.  A port that uses it lists dwt.c among its
 * sources, calls aot_dwt_start() from aot_port_init(), and then defines only
 * the UART hooks (and aot_systick_handler).
 *
 * CYCCNT is 32 bits: aot_port_timer_stop() returns the 32-bit difference, exact
 * for runs shorter than 2^32 cycles (20 s at 216 MHz), in AOT_TIMER_CYCLES.
 * Under QEMU CYCCNT reads 0: the emulated boards use their own ports.
 */
#ifndef AOT_PORT_DWT_H
#define AOT_PORT_DWT_H

/* Power the DWT (DEMCR.TRCENA), unlock it where a lock exists (Cortex-M7),
 * and start CYCCNT from 0. */
void aot_dwt_start(void);

#endif /* AOT_PORT_DWT_H */
