/*
 * Startup for the sifive_e port (rv32imac, machine mode): stack and global
 * pointer, .data copy, .bss clear, trap vector, then main().  A trap ends the
 * program with exit status 121 through aot_port_exit().
 */
    .section .text.start, "ax"
    .globl _start
_start:
    .option push
    .option norelax
    la gp, __global_pointer$
    .option pop
    la sp, _estack
    la t0, aot_trap
    csrw mtvec, t0
    la a0, _sidata
    la a1, _sdata
    la a2, _edata
1:  bgeu a1, a2, 2f
    lw t0, 0(a0)
    sw t0, 0(a1)
    addi a0, a0, 4
    addi a1, a1, 4
    j 1b
2:  la a1, _sbss
    la a2, _ebss
3:  bgeu a1, a2, 4f
    sw zero, 0(a1)
    addi a1, a1, 4
    j 3b
4:  call main
    call aot_port_exit

    .balign 4
aot_trap:
    li a0, 121
    call aot_port_exit
