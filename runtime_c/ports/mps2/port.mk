# mps2 port (Cortex-M3/M4/M7/M33 on QEMU's mps2-an385/an386/an500/an505).
# Board parameters: AOT_UART_BASE or AOT_CONSOLE_BASE, AOT_TICK_INSNS_NUM/DEN
# (defaults: mps2; aot projects pass the record's).
AOT_PORT_DIR := $(AOT_RUNTIME_DIR)/ports/mps2
AOT_PORT_SRCS := $(AOT_RUNTIME_DIR)/ports/cortex-m/startup.c \
                 $(AOT_RUNTIME_DIR)/ports/cortex-m/syscalls.c \
                 $(AOT_RUNTIME_DIR)/ports/cortex-m/icount.c $(AOT_PORT_DIR)/port.c
AOT_PORT_LDSCRIPT_IN := $(AOT_RUNTIME_DIR)/ports/cortex-m/link.ld.in
AOT_PORT_CFLAGS := -mthumb
AOT_PORT_LDFLAGS := -nostartfiles --specs=nano.specs --specs=nosys.specs
AOT_FLASH_ORIGIN ?= 0x00000000
AOT_FLASH_LENGTH ?= 0x00400000
AOT_RAM_ORIGIN ?= 0x20000000
AOT_RAM_LENGTH ?= 0x00400000
