# rp2040 port (Raspberry Pi Pico: Cortex-M0+, 2 MiB QSPI flash executed in place
# @0x10000000 behind a 256-byte boot2, 256 KiB striped SRAM @0x20000000).
# NOT VERIFIED ON HARDWARE: builds and links only.
AOT_PORT_DIR := $(AOT_RUNTIME_DIR)/ports/rp2040
AOT_PORT_SRCS := $(AOT_RUNTIME_DIR)/ports/cortex-m/startup.c \
                 $(AOT_RUNTIME_DIR)/ports/cortex-m/syscalls.c $(AOT_PORT_DIR)/port.c \
                 $(AOT_PORT_DIR)/cores.c
AOT_PORT_ASM_SRCS := $(AOT_PORT_DIR)/boot2.S
AOT_PORT_LDSCRIPT_IN := $(AOT_PORT_DIR)/link.ld.in
AOT_PORT_CFLAGS := -mthumb
AOT_PORT_LDFLAGS := -nostartfiles --specs=nano.specs --specs=nosys.specs
AOT_FLASH_ORIGIN ?= 0x10000000
AOT_FLASH_LENGTH ?= 0x00200000
AOT_RAM_ORIGIN ?= 0x20000000
AOT_RAM_LENGTH ?= 0x00040000
