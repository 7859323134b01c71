# nrf52 port (nRF52840, Cortex-M4F; defaults: nRF52840 DK, 1 MiB flash @0,
# 256 KiB RAM @0x20000000).  NOT VERIFIED ON HARDWARE: builds and links only.
AOT_PORT_DIR := $(AOT_RUNTIME_DIR)/ports/nrf52
AOT_PORT_SRCS := $(AOT_RUNTIME_DIR)/ports/cortex-m/startup.c \
                 $(AOT_RUNTIME_DIR)/ports/cortex-m/syscalls.c \
                 $(AOT_RUNTIME_DIR)/ports/cortex-m/dwt.c $(AOT_PORT_DIR)/port.c
AOT_PORT_LDSCRIPT_IN := $(AOT_RUNTIME_DIR)/ports/cortex-m/link.ld.in
AOT_PORT_CFLAGS := -mthumb
AOT_PORT_LDFLAGS := -nostartfiles --specs=nano.specs --specs=nosys.specs
AOT_FLASH_ORIGIN ?= 0x00000000
AOT_FLASH_LENGTH ?= 0x00100000
AOT_RAM_ORIGIN ?= 0x20000000
AOT_RAM_LENGTH ?= 0x00040000
