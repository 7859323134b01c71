# Makefile fragment that builds RPC firmware from the aot C runtime.
#
# Include it from a firmware Makefile after setting:
#   AOT_RUNTIME_DIR   path to runtime_c/ (required)
#   AOT_PORT          a folder under runtime_c/ports/ (required): host, mps2, ...
#   AOT_APP_SRCS      the model sources, one of which defines `aot_rpc_model`
#   AOT_APP_OBJS      prebuilt model objects linked as they are (kernels compiled by LLVM)
#   AOT_FIRMWARE      output file (default: build/firmware.elf)
#   AOT_BUILD_DIR     object directory (default: build)
#   CC                the (cross) compiler, e.g. arm-none-eabi-gcc
#   AOT_ARCH_FLAGS    e.g. -mcpu=cortex-m4 -mfloat-abi=hard -mfpu=fpv4-sp-d16
#   AOT_OPT_FLAGS     the board record's optimisation (the artifact's P.mk and aot's
#                     projects set it); default -O2, aot.target.DEFAULT_OPT_FLAGS
#   AOT_BOARD_TAG, AOT_BUILD_ID   strings reported by the INFO command
#   AOT_FLASH_ORIGIN/LENGTH, AOT_RAM_ORIGIN/LENGTH, AOT_STACK_SIZE
#                     memory map of bare-metal ports (defaults in port.mk)
#   AOT_EXTRA_CFLAGS  anything else, e.g. -DAOT_MAX_FRAME=1024
#   AOT_EXTRA_LDFLAGS link flags, e.g. the board record's -Wl,--gc-sections
# It defines the rule for $(AOT_FIRMWARE) and the variables AOT_RUNTIME_SRCS,
# AOT_APP_CFLAGS (the model sources' flags) and AOT_RUNTIME_CFLAGS (the same plus
# the board tag and build id, which only the runtime reads) for Makefiles that
# want their own rules.  The model's objects thus do not depend on the build id,
# and `aot build` can take them from what `aot compile` compiled for the code size.

AOT_FIRMWARE ?= build/firmware.elf
AOT_BUILD_DIR ?= build
AOT_OPT_FLAGS ?= -O2
AOT_BOARD_TAG ?= unknown
AOT_BUILD_ID ?= unknown
include $(AOT_RUNTIME_DIR)/board.mk

AOT_RUNTIME_SRCS := $(addprefix $(AOT_RUNTIME_DIR)/src/,frame.c model.c rpc_server.c \
  rpc_loader.c rpc_main.c)
AOT_APP_CFLAGS := -std=c99 -Wall -Wextra -Werror $(AOT_PORT_INCLUDES) \
  $(AOT_ARCH_FLAGS) $(AOT_OPT_FLAGS) $(AOT_PORT_CFLAGS) $(AOT_EXTRA_CFLAGS)
AOT_RUNTIME_CFLAGS := $(AOT_APP_CFLAGS) \
  -DAOT_BOARD_TAG='"$(AOT_BOARD_TAG)"' -DAOT_BUILD_ID='"$(AOT_BUILD_ID)"'

aot_srcs := $(AOT_RUNTIME_SRCS) $(AOT_PORT_SRCS) $(AOT_APP_SRCS) $(AOT_PORT_ASM_SRCS)
# Objects are named after their path so that equal file names cannot collide.
aot_obj = $(AOT_BUILD_DIR)/obj/$(subst /,_,$(subst ..,up,$(basename $(1)).o))
aot_objs := $(foreach s,$(aot_srcs),$(call aot_obj,$(s)))

# $(1): the source, $(2): the name of its flags' variable.
define aot_compile_rule
$(call aot_obj,$(1)): $(1) | $(AOT_BUILD_DIR)/obj
	$$(CC) $$($(2)) -MMD -MP -c $$< -o $$@
endef
$(foreach s,$(AOT_RUNTIME_SRCS) $(AOT_PORT_SRCS) $(AOT_PORT_ASM_SRCS),\
  $(eval $(call aot_compile_rule,$(s),AOT_RUNTIME_CFLAGS)))
$(foreach s,$(AOT_APP_SRCS),$(eval $(call aot_compile_rule,$(s),AOT_APP_CFLAGS)))

$(AOT_BUILD_DIR)/obj:
	mkdir -p $@

$(AOT_FIRMWARE): $(aot_objs) $(AOT_APP_OBJS) $(AOT_LDSCRIPT)
	$(CC) $(AOT_ARCH_FLAGS) $(AOT_PORT_CFLAGS) $(aot_objs) $(AOT_APP_OBJS) $(AOT_LDSCRIPT_FLAGS) $(AOT_PORT_LDFLAGS) $(AOT_EXTRA_LDFLAGS) -o $@

-include $(aot_objs:.o=.d)
