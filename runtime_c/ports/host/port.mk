# host port: a POSIX process speaking the RPC on stdin/stdout (or on one TCP
# connection, see port.c).  Built with the host's cc; no linker script.
AOT_PORT_DIR := $(AOT_RUNTIME_DIR)/ports/host
AOT_PORT_SRCS := $(AOT_PORT_DIR)/port.c
AOT_PORT_LDSCRIPT_IN :=
AOT_PORT_CFLAGS :=
AOT_PORT_LDFLAGS :=
