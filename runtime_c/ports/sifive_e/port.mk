# sifive_e port (rv32imac on QEMU's sifive_e): 16 KiB of RAM, so keep the
# default stack small.  Built against picolibc.
AOT_PORT_DIR := $(AOT_RUNTIME_DIR)/ports/sifive_e
AOT_PORT_SRCS := $(AOT_PORT_DIR)/port.c $(AOT_RUNTIME_DIR)/ports/picolibc/stdio.c
AOT_PORT_ASM_SRCS := $(AOT_PORT_DIR)/crt0.S
AOT_PORT_LDSCRIPT_IN := $(AOT_PORT_DIR)/link.ld.in
AOT_PORT_CFLAGS := --specs=picolibc.specs -Wa,-march=rv32imac_zicsr -mcmodel=medany
AOT_PORT_LDFLAGS := -nostartfiles
AOT_FLASH_ORIGIN ?= 0x20400000
AOT_FLASH_LENGTH ?= 0x00400000
AOT_RAM_ORIGIN ?= 0x80000000
AOT_RAM_LENGTH ?= 0x00004000
AOT_STACK_SIZE ?= 0x1000
