@ A Cortex-M0+ (Armv6-M) loop priced with the M0+ table (tests/cycles/test_model.py).
    .syntax unified
    .cpu cortex-m0plus
    .thumb
    .text
    .thumb_func
    .global loop
loop:
1:  ldr r1, [r0]                @ 2: no load pipelining on the M0+
    ldr r2, [r0, #4]            @ 2
    muls r1, r2, r1             @ 1 (fast multiplier)
    subs r4, #1                 @ 1
    bne 1b                      @ 2 taken, 1 not taken
    bx lr                       @ 2
