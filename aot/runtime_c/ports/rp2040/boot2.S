/*
 * Second-stage boot loader (boot2) of the rp2040 port, written for this port
 * from the RP2040 datasheet (sections 2.8 "Bootrom" and 4.10 "SSI").
 * NOT VERIFIED ON HARDWARE.
 *
 * The boot ROM copies the first 256 bytes of flash to SRAM (0x20041F00),
 * checks that the CRC-32 of bytes 0..251 (polynomial 0x04C11DB7, initial
 * value 0xFFFFFFFF, no bit reflection, no final XOR) equals the little-endian
 * word in bytes 252..255, and jumps to the copy in Thumb state.  This code
 * then puts the SSI into execute-in-place mode with the serial read command
 * 03h (24-bit address, 32-bit frames, SCK = clk_sys / 4), the one read
 * command every QSPI flash supports, and enters the image whose vector table
 * follows at flash + 0x100: VTOR, stack pointer, reset handler.
 *
 * It is position independent (the literal pool travels with it).  The CRC
 * word at the end is precomputed for exactly the bytes these instructions
 * assemble to (Thumb encodings are fixed, so every GNU assembler produces
 * the same 252 bytes); tests/runtime_c/test_runtime_build.py recomputes it
 * from the linked ELF.  After editing this file, recompute AOT_BOOT2_CRC
 * (the test prints the right value) so the build needs no tool beyond gcc.
 */
    .syntax unified
    .cpu cortex-m0plus
    .thumb

    .equ SSI_BASE, 0x18000000
    .equ SSI_CTRLR0, 0x00
    .equ SSI_CTRLR1, 0x04
    .equ SSI_SSIENR, 0x08
    .equ SSI_BAUDR, 0x14
    .equ SSI_SPI_CTRLR0, 0xF4
    /* CTRLR0: DFS_32 = 31 (32-bit frames, bits 20:16), TMOD = 3 (EEPROM read, bits 9:8),
     * SPI_FRF = 0 (standard SPI, bits 22:21). */
    .equ CTRLR0_XIP, (31 << 16) | (3 << 8)
    /* SPI_CTRLR0: XIP_CMD = 0x03 (bits 31:24), INST_L = 2 (8-bit instruction, bits 9:8),
     * ADDR_L = 6 (24-bit address in nibbles, bits 5:2), TRANS_TYPE = 0 (all serial). */
    .equ SPI_CTRLR0_XIP, (0x03 << 24) | (2 << 8) | (6 << 2)
    .equ IMAGE_VECTORS, 0x10000100
    .equ PPB_VTOR, 0xE000ED08
    .equ AOT_BOOT2_CRC, 0xBD1542C8

    .section .boot2, "ax"
    .global aot_boot2
    .type aot_boot2, %function
aot_boot2:
    ldr r3, =SSI_BASE
    movs r1, #0
    str r1, [r3, #SSI_SSIENR]   /* the SSI must be off while it is configured */
    movs r1, #4
    str r1, [r3, #SSI_BAUDR]    /* SCK = clk_sys / 4 (even divisor) */
    ldr r1, =CTRLR0_XIP
    str r1, [r3, #SSI_CTRLR0]
    movs r1, #0
    str r1, [r3, #SSI_CTRLR1]   /* NDF = 0: one data frame per transfer */
    ldr r2, =SSI_BASE + SSI_SPI_CTRLR0
    ldr r1, =SPI_CTRLR0_XIP
    str r1, [r2]
    movs r1, #1
    str r1, [r3, #SSI_SSIENR]   /* on: flash reads at 0x10000000 now go through XIP */

    ldr r0, =IMAGE_VECTORS
    ldr r1, =PPB_VTOR
    str r0, [r1]
    ldmia r0!, {r1, r2}         /* initial stack pointer, reset handler */
    msr msp, r1
    bx r2
    .ltorg

    .fill 252 - (. - aot_boot2), 1, 0
    .word AOT_BOOT2_CRC
    .size aot_boot2, . - aot_boot2
