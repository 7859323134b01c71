/*
 * Second-stage boot loader (boot2) of the rp2040 port, written for this port
 * from the RP2040 datasheet (2.8 "Bootrom", its processor-controlled boot
 * sequence; 2.19.6 pad control registers of the QSPI bank; 4.10 "SSI") and
 * the Winbond W25Q080 datasheet (status register 2's QE bit; the Fast Read
 * Quad I/O (EBh) instruction with its continuous read mode bits).  NOT VERIFIED ON HARDWARE;
 * tests/runtime_c/test_rp2040_boot2.py runs these exact bytes in a small
 * Thumb interpreter against a model of the SSI and the flash.
 *
 * The boot ROM copies the first 256 bytes of flash to SRAM (0x20041F00),
 * checks that the CRC-32 of bytes 0..251 (polynomial 0x04C11DB7, initial
 * value 0xFFFFFFFF, no bit reflection, no final XOR) equals the little-endian
 * word in bytes 252..255, and jumps to the copy in Thumb state.  This code
 *   1. gives the QSPI clock pad 8 mA and fast slew and takes the Schmitt
 *      triggers off the data pads (less input delay at high SCK);
 *   2. sets SCK = clk_sys / 2 and samples read data one clk_sys later
 *      (RX_SAMPLE_DLY 1), which the round trip at /2 needs;
 *   3. sets the flash's QE bit (status register 2, bit 1) if it is clear:
 *      read SR2 (35h), write enable (06h), write SR1 = 0, SR2 = 02h (01h),
 *      then poll SR1 (05h) until BUSY clears; QE is non-volatile, so this
 *      writes the flash once in its life;
 *   4. issues one Fast Read Quad I/O (EBh: instruction on one line, address
 *      and mode bits on four, 4 dummy clocks) with mode bits A0h, which puts
 *      the W25Q080 in continuous read mode;
 *   5. leaves the SSI in execute-in-place mode without an instruction: each
 *      cache miss sends only the 24-bit address and the mode bits A0h (which
 *      keep the flash in continuous mode) on four lines, then reads a 32-bit
 *      word: 14 SCK cycles of overhead instead of the 8 + 24 of serial 03h.
 * and enters the image whose vector table follows at flash + 0x100: VTOR,
 * stack pointer, reset handler.
 *
 * It is position independent (PC-relative branches, the literal pool travels
 * with it).  The CRC word at the end is precomputed for exactly the bytes
 * these instructions assemble to (Thumb encodings are fixed, so every GNU
 * assembler produces the same 252 bytes); tests/runtime_c/test_runtime_build.py
 * recomputes it from the linked ELF.  After editing this file, recompute
 * AOT_BOOT2_CRC (the test prints the right value) so the build needs no tool
 * beyond gcc.
 */
    .syntax unified
    .cpu cortex-m0plus
    .thumb

    .equ PADS_QSPI_BASE, 0x40020000
    .equ PADS_SCLK, 0x04
    .equ PADS_SD0, 0x08
    .equ PADS_SD1, 0x0C
    .equ PADS_SD2, 0x10
    .equ PADS_SD3, 0x14
    .equ PAD_SCLK_FAST, (2 << 4) | 1     /* DRIVE = 8 mA, SLEWFAST */
    .equ PAD_SCHMITT, 2

    .equ SSI_BASE, 0x18000000
    .equ SSI_CTRLR0, 0x00
    .equ SSI_CTRLR1, 0x04
    .equ SSI_SSIENR, 0x08
    .equ SSI_BAUDR, 0x14
    .equ SSI_SR, 0x28
    .equ SSI_DR0, 0x60
    .equ SSI_RX_SAMPLE_DLY, 0xF0
    .equ SSI_SPI_CTRLR0, 0xF4
    .equ SR_BUSY, 1
    .equ SR_TFE, 4

    /* CTRLR0 fields: DFS_32 bits 20:16 (frame bits - 1), TMOD bits 9:8
     * (0: transmit and receive, 3: EEPROM read), SPI_FRF bits 22:21
     * (0: standard, 2: quad). */
    .equ CTRLR0_SPI_BYTES, (7 << 16)
    .equ CTRLR0_QUAD_READ, (2 << 21) | (31 << 16) | (3 << 8)
    /* SPI_CTRLR0 fields: TRANS_TYPE bits 1:0 (1: instruction serial, address
     * quad; 2: both quad), ADDR_L bits 5:2 in nibbles (8: 24-bit address +
     * 8 mode bits), INST_L bits 9:8 (0: none, 2: 8 bits), WAIT_CYCLES bits
     * 15:11, XIP_CMD bits 31:24 (with INST_L 0: the mode bits sent after the
     * address). */
    .equ SPI_CTRLR0_EBH, (4 << 11) | (2 << 8) | (8 << 2) | 1
    .equ SPI_CTRLR0_XIP, (0xA0 << 24) | (4 << 11) | (8 << 2) | 2

    .equ CMD_WRITE_STATUS, 0x01
    .equ CMD_READ_SR1, 0x05
    .equ CMD_WRITE_ENABLE, 0x06
    .equ CMD_READ_SR2, 0x35
    .equ CMD_QUAD_IO_READ, 0xEB
    .equ MODE_CONTINUOUS, 0xA0
    .equ SR2_QE, 0x02

    .equ IMAGE_VECTORS, 0x10000100
    .equ PPB_VTOR, 0xE000ED08
    .equ AOT_BOOT2_CRC, 0x9BEDD29B

    .section .boot2, "ax"
    .global aot_boot2
    .type aot_boot2, %function
aot_boot2:
    ldr r3, =PADS_QSPI_BASE
    movs r0, #PAD_SCLK_FAST
    str r0, [r3, #PADS_SCLK]
    ldr r0, [r3, #PADS_SD0]
    movs r1, #PAD_SCHMITT
    bics r0, r1
    str r0, [r3, #PADS_SD0]
    str r0, [r3, #PADS_SD1]
    str r0, [r3, #PADS_SD2]
    str r0, [r3, #PADS_SD3]

    ldr r3, =SSI_BASE
    movs r1, #0
    str r1, [r3, #SSI_SSIENR]   /* the SSI must be off while it is configured */
    movs r1, #2
    str r1, [r3, #SSI_BAUDR]    /* SCK = clk_sys / 2 */
    movs r1, #1
    movs r2, #SSI_RX_SAMPLE_DLY
    str r1, [r3, r2]            /* sample read data one clk_sys late */
    ldr r1, =CTRLR0_SPI_BYTES
    str r1, [r3, #SSI_CTRLR0]   /* standard SPI, 8-bit frames, transmit and receive */
    movs r1, #1
    str r1, [r3, #SSI_SSIENR]

    movs r0, #CMD_READ_SR2
    bl read_status
    movs r1, #SR2_QE
    tst r0, r1
    bne quad_ready
    movs r0, #CMD_WRITE_ENABLE
    str r0, [r3, #SSI_DR0]
    bl wait_idle
    ldr r0, [r3, #SSI_DR0]      /* drop the byte clocked in meanwhile */
    movs r0, #CMD_WRITE_STATUS
    str r0, [r3, #SSI_DR0]
    movs r0, #0
    str r0, [r3, #SSI_DR0]      /* SR1 = 0: no block protection */
    movs r0, #SR2_QE
    str r0, [r3, #SSI_DR0]      /* SR2 = QE */
    bl wait_idle
    ldr r0, [r3, #SSI_DR0]
    ldr r0, [r3, #SSI_DR0]
    ldr r0, [r3, #SSI_DR0]
wait_written:
    movs r0, #CMD_READ_SR1
    bl read_status
    movs r1, #1                 /* SR1 bit 0: BUSY while the write lasts */
    tst r0, r1
    bne wait_written

quad_ready:
    movs r1, #0
    str r1, [r3, #SSI_SSIENR]
    ldr r1, =CTRLR0_QUAD_READ
    str r1, [r3, #SSI_CTRLR0]
    movs r1, #0
    str r1, [r3, #SSI_CTRLR1]   /* NDF = 0: one 32-bit data frame per transfer */
    ldr r1, =SPI_CTRLR0_EBH
    movs r2, #SSI_SPI_CTRLR0
    str r1, [r3, r2]
    movs r1, #1
    str r1, [r3, #SSI_SSIENR]
    movs r1, #CMD_QUAD_IO_READ
    str r1, [r3, #SSI_DR0]
    movs r1, #MODE_CONTINUOUS   /* address 0, then the mode bits A0h */
    str r1, [r3, #SSI_DR0]
    bl wait_idle

    movs r1, #0
    str r1, [r3, #SSI_SSIENR]   /* also empties the receive FIFO */
    ldr r1, =SPI_CTRLR0_XIP
    movs r2, #SSI_SPI_CTRLR0
    str r1, [r3, r2]
    movs r1, #1
    str r1, [r3, #SSI_SSIENR]   /* flash reads at 0x10000000 now go through XIP */

    ldr r0, =IMAGE_VECTORS
    ldr r1, =PPB_VTOR
    str r0, [r1]
    ldmia r0!, {r1, r2}         /* initial stack pointer, reset handler */
    msr msp, r1
    bx r2

/* Until the transmit FIFO is empty and the SSI idle: every frame sent has
 * its received frame in the receive FIFO.  Uses r1 and r2. */
wait_idle:
    ldr r1, [r3, #SSI_SR]
    movs r2, #SR_TFE
    tst r1, r2
    beq wait_idle
    movs r2, #SR_BUSY
    tst r1, r2
    bne wait_idle
    bx lr

/* Send the read-status command in r0 and one more frame; return the status
 * byte (the second frame received) in r0. */
read_status:
    push {lr}
    str r0, [r3, #SSI_DR0]
    str r0, [r3, #SSI_DR0]
    bl wait_idle
    ldr r0, [r3, #SSI_DR0]
    ldr r0, [r3, #SSI_DR0]
    pop {pc}
    .ltorg

    .fill 252 - (. - aot_boot2), 1, 0
    .word AOT_BOOT2_CRC
    .size aot_boot2, . - aot_boot2
