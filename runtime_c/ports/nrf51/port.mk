# nrf51 port (nRF51822, Cortex-M0, on QEMU's microbit): 256 KiB flash @0,
# 16 KiB RAM @0x20000000, so the default stack is small.  SysTick at 16 MHz:
# 62.5 instructions per tick under -icount (aot projects pass the record's).
AOT_PORT_DIR := $(AOT_RUNTIME_DIR)/ports/nrf51
AOT_PORT_SRCS := $(AOT_RUNTIME_DIR)/ports/cortex-m/startup.c \
                 $(AOT_RUNTIME_DIR)/ports/cortex-m/syscalls.c \
                 $(AOT_RUNTIME_DIR)/ports/cortex-m/icount.c $(AOT_PORT_DIR)/port.c
AOT_PORT_LDSCRIPT_IN := $(AOT_RUNTIME_DIR)/ports/cortex-m/link.ld.in
AOT_PORT_CFLAGS := -mthumb \
                   -DAOT_TICK_INSNS_NUM=125 -DAOT_TICK_INSNS_DEN=2
AOT_PORT_LDFLAGS := -nostartfiles --specs=nano.specs --specs=nosys.specs
AOT_FLASH_ORIGIN ?= 0x00000000
AOT_FLASH_LENGTH ?= 0x00040000
AOT_RAM_ORIGIN ?= 0x20000000
AOT_RAM_LENGTH ?= 0x00004000
AOT_STACK_SIZE ?= 0x1000
