/*
 * Startup of the esp32c3 port (RV32IMC, machine mode), entered from the ESP
 * second-stage boot loader, which has already loaded the RAM segments
 * (.data) and mapped flash (IROM/DROM) through the MMU: interrupts off, global
 * and stack pointers, trap vector, .bss clear, then main().  NOT VERIFIED ON
 * HARDWARE.  A trap ends the program with exit status 121 through
 * aot_port_exit(); a breakpoint trap (the ebreak of aot_port_exit itself,
 * without a debugger attached) parks the core.
 */
    .section .text.start, "ax"
    .globl _start
_start:
    csrci mstatus, 8            /* MIE = 0: the port polls, nothing interrupts */
    .option push
    .option norelax
    la gp, __global_pointer$
    .option pop
    la sp, _estack
    la t0, aot_trap
    ori t0, t0, 1               /* vectored mode, the only one the ESP32-C3 has */
    csrw mtvec, t0
    la a1, _sbss
    la a2, _ebss
1:  bgeu a1, a2, 2f
    sw zero, 0(a1)
    addi a1, a1, 4
    j 1b
2:  call main
    call aot_port_exit

    /* Exceptions enter at the vector base, which must be 256-byte aligned. */
    .balign 256
aot_trap:
    csrr t0, mcause
    li t1, 3                    /* breakpoint */
    beq t0, t1, 3f
    li a0, 121
    call aot_port_exit
3:  j 3b
