@ Hand-written Cortex-M4 timing loops whose cycle counts follow from the
@ Cortex-M4 TRM's tables (tests/cycles/test_model.py works them out).
@ Runs bare metal on qemu/mps2-an386 and ends through semihosting.
    .syntax unified
    .cpu cortex-m4
    .thumb

    .section .vectors, "a"
    .word 0x20010000            @ initial stack pointer
    .word reset                 @ reset handler (Thumb bit set by .thumb_func)

    .text
    .thumb_func
    .global reset
reset:
    ldr r0, =buffer
    movs r4, #100
    bl loads_loop
    nop                         @ 16-bit return targets: no unaligned-target penalty
    bl stack_and_divide
    nop
    bl done
    movs r0, #0x18              @ SYS_EXIT
    ldr r1, =0x20026            @ ADP_Stopped_ApplicationExit
    bkpt 0xab

    .thumb_func
    .global loads_loop
loads_loop:
1:  ldr r1, [r0]                @ 2
    ldr r2, [r0, #4]            @ 1: pipelined behind a load, address not loaded
    ldr r3, [r0, #8]            @ 1
    smlad r5, r1, r2, r5        @ 1
    str r5, [r0, #12]           @ 1: the store buffer takes the data phase
    adds r6, #1                 @ 1
    subs r4, #1                 @ 1
    bne 1b                      @ 1 + P (P = 2) taken, 1 not taken
    bx lr                       @ 1 + P

    .thumb_func
    .global stack_and_divide
stack_and_divide:
    push {r4, r5, r6, r7, lr}   @ 1 + N = 6
    movs r1, #7                 @ 1
    udiv r2, r4, r1             @ 12 (2-12: the model takes the worst case)
    pop {r4, r5, r6, r7, pc}    @ 1 + N + P = 1 + 5 + 3

    .thumb_func
    .global done
done:
    bx lr

    .ltorg
    .bss
    .align 2
buffer:
    .space 16
