# mps3-an547 port (Cortex-M55 on QEMU's mps3-an547): the mps2 code with this
# image's UART and its 32 MHz SysTick (31.25 instructions per tick), running
# from ITCM with data in DTCM.
include $(AOT_RUNTIME_DIR)/ports/mps2/port.mk
AOT_PORT_CFLAGS += -DAOT_UART_BASE=0x59303000u -DAOT_TICK_INSNS_NUM=125 -DAOT_TICK_INSNS_DEN=4
AOT_FLASH_ORIGIN := 0x10000000
AOT_FLASH_LENGTH := 0x00080000
AOT_RAM_ORIGIN := 0x30000000
AOT_RAM_LENGTH := 0x00080000
