# esp32c3 port (ESP32-C3, RV32IMC: code in IROM @0x42000000, constants in DROM
# @0x3C000000, 384 KiB SRAM1 @0x3FC80000).  Built against picolibc.  NOT
# VERIFIED ON HARDWARE: builds and links; aot build turns the ELF into an ESP app
# image (esptool elf2image) for an ESP-IDF second-stage boot loader.
AOT_PORT_DIR := $(AOT_RUNTIME_DIR)/ports/esp32c3
AOT_PORT_SRCS := $(AOT_PORT_DIR)/port.c $(AOT_RUNTIME_DIR)/ports/picolibc/stdio.c
AOT_PORT_ASM_SRCS := $(AOT_PORT_DIR)/crt0.S
AOT_PORT_LDSCRIPT_IN := $(AOT_PORT_DIR)/link.ld.in
AOT_PORT_CFLAGS := --specs=picolibc.specs -Wa,-march=rv32imc_zicsr -mcmodel=medany
AOT_PORT_LDFLAGS := -nostartfiles
AOT_FLASH_ORIGIN ?= 0x42000000
AOT_FLASH_LENGTH ?= 0x00100000
AOT_RAM_ORIGIN ?= 0x3FC80000
AOT_RAM_LENGTH ?= 0x00060000
