@ A Helium loop for the block rule of aot.cycles.program (tests/cycles/test_model.py).
    .syntax unified
    .arch armv8.1-m.main
    .arch_extension mve
    .fpu fpv5-sp-d16
    .thumb
    .text
    .thumb_func
    .global helium
helium:
    dls lr, r0                  @ sets the loop count up: QEMU runs on past it
1:  vldrw.u32 q0, [r1], #16
    vcmp.i32 eq, q0, q1         @ writes VPR: QEMU may end its block here
    vpst
    vaddt.i32 q2, q2, q0
    le lr, 1b
    bx lr
