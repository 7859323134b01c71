# Makefile fragment: a board's port of the aot C runtime without the RPC server,
# for firmware with its own main(): the start-up code, console and timer
# (the aot_port_* functions of include/aot/platform.h) and the linker script.
#
# Set before including it:
#   AOT_RUNTIME_DIR   path to runtime_c/ (required)
#   AOT_PORT          a folder under runtime_c/ports/ (required): host, mps2, ...
#   AOT_BUILD_DIR     where the linker script goes (default: build)
#   AOT_FLASH_ORIGIN/LENGTH, AOT_RAM_ORIGIN/LENGTH, AOT_STACK_SIZE
#                     memory map of bare-metal ports (defaults in port.mk)
# It defines, from ports/$(AOT_PORT)/port.mk: AOT_PORT_SRCS, AOT_PORT_ASM_SRCS,
# AOT_PORT_CFLAGS, AOT_PORT_LDFLAGS; AOT_PORT_INCLUDES (-I of the runtime's
# headers); and on bare metal AOT_LDSCRIPT, the linker script, with its rule,
# and AOT_LDSCRIPT_FLAGS (-T of it).  runtime.mk includes it for RPC firmware.

AOT_BUILD_DIR ?= build
include $(AOT_RUNTIME_DIR)/ports/$(AOT_PORT)/port.mk
AOT_STACK_SIZE ?= 0x2000
AOT_PORT_INCLUDES := -I$(AOT_RUNTIME_DIR)/include

ifneq ($(AOT_PORT_LDSCRIPT_IN),)
AOT_LDSCRIPT := $(AOT_BUILD_DIR)/link.ld
AOT_LDSCRIPT_FLAGS := -T$(AOT_LDSCRIPT)
$(AOT_LDSCRIPT): $(AOT_PORT_LDSCRIPT_IN)
	@mkdir -p $(dir $@)
	$(CC) -E -P -x c -DAOT_FLASH_ORIGIN=$(AOT_FLASH_ORIGIN) -DAOT_FLASH_LENGTH=$(AOT_FLASH_LENGTH) \
	  -DAOT_RAM_ORIGIN=$(AOT_RAM_ORIGIN) -DAOT_RAM_LENGTH=$(AOT_RAM_LENGTH) \
	  -DAOT_STACK_SIZE=$(AOT_STACK_SIZE) $< -o $@
endif
