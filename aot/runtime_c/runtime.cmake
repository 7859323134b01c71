# CMake counterpart of runtime.mk: build RPC firmware from the aot C runtime.
#
#   include(path/to/runtime_c/runtime.cmake)
#   aot_add_rpc_firmware(firmware PORT mps2 SOURCES model.c descriptor.c
#       [ARCH_FLAGS -mcpu=cortex-m4 ...] [BOARD_TAG qemu/mps2-an386] [BUILD_ID 1]
#       [FLASH_ORIGIN 0x0 FLASH_LENGTH 0x400000 RAM_ORIGIN 0x20000000 RAM_LENGTH 0x400000]
#       [STACK_SIZE 0x2000] [DEFINES AOT_MAX_FRAME=1024 ...])
# or, for firmware with its own main() that wants a port's start-up code and
# console (aot_add_model's BOARD_SUPPORT uses this):
#   aot_add_port(app PORT mps2 [ARCH_FLAGS ...] [FLASH_ORIGIN ... STACK_SIZE ...])
# For bare-metal ports configure with a cross compiler, e.g.
#   cmake -DCMAKE_SYSTEM_NAME=Generic -DCMAKE_C_COMPILER=arm-none-eabi-gcc
#         -DCMAKE_TRY_COMPILE_TARGET_TYPE=STATIC_LIBRARY ...
# The per-port settings below mirror ports/<port>/port.mk; keep both in step.

set(AOT_RUNTIME_DIR "${CMAKE_CURRENT_LIST_DIR}")

function(_aot_port_settings port)
  set(cm "${AOT_RUNTIME_DIR}/ports/cortex-m")
  set(arm_ld "-nostartfiles;--specs=nano.specs;--specs=nosys.specs;-Wl,--gc-sections")
  set(arm_cf "-mthumb;-ffunction-sections;-fdata-sections")
  if(port STREQUAL "host")
    set(srcs "${AOT_RUNTIME_DIR}/ports/host/port.c")
    set(ld "")
    set(cflags "")
    set(ldflags "")
    set(mem "")
  elseif(port STREQUAL "mps2" OR port STREQUAL "mps3-an547")
    set(srcs "${cm}/startup.c;${AOT_RUNTIME_DIR}/ports/mps2/port.c")
    set(ld "${cm}/link.ld.in")
    set(cflags "${arm_cf}")
    set(ldflags "${arm_ld}")
    if(port STREQUAL "mps2")
      set(mem "0x00000000;0x00400000;0x20000000;0x00400000;0x2000")
    else()
      list(APPEND cflags "-DAOT_UART_BASE=0x59303000u" "-DAOT_TICK_INSNS_NUM=125"
           "-DAOT_TICK_INSNS_DEN=4")
      set(mem "0x10000000;0x00080000;0x30000000;0x00080000;0x2000")
    endif()
  elseif(port STREQUAL "stm32")
    set(srcs "${cm}/startup.c;${cm}/dwt.c;${AOT_RUNTIME_DIR}/ports/stm32/port.c")
    set(ld "${cm}/link.ld.in")
    set(cflags "${arm_cf}")
    set(ldflags "${arm_ld}")
    set(mem "0x08000000;0x00100000;0x20000000;0x00050000;0x2000")
  elseif(port STREQUAL "nrf52")
    set(srcs "${cm}/startup.c;${cm}/dwt.c;${AOT_RUNTIME_DIR}/ports/nrf52/port.c")
    set(ld "${cm}/link.ld.in")
    set(cflags "${arm_cf}")
    set(ldflags "${arm_ld}")
    set(mem "0x00000000;0x00100000;0x20000000;0x00040000;0x2000")
  elseif(port STREQUAL "rp2040")
    set(p "${AOT_RUNTIME_DIR}/ports/rp2040")
    set(srcs "${cm}/startup.c;${p}/port.c;${p}/boot2.S")
    set(ld "${p}/link.ld.in")
    set(cflags "${arm_cf}")
    set(ldflags "${arm_ld}")
    set(mem "0x10000000;0x00200000;0x20000000;0x00040000;0x2000")
  elseif(port STREQUAL "esp32c3")
    set(p "${AOT_RUNTIME_DIR}/ports/esp32c3")
    set(srcs "${p}/port.c;${p}/crt0.S")
    set(ld "${p}/link.ld.in")
    set(cflags "--specs=picolibc.specs;-Wa,-march=rv32imc_zicsr;-ffunction-sections;-fdata-sections;-mcmodel=medany")
    set(ldflags "-nostartfiles;-Wl,--gc-sections")
    set(mem "0x42000000;0x00400000;0x3FC80000;0x00060000;0x2000")
  elseif(port STREQUAL "sifive_e")
    set(p "${AOT_RUNTIME_DIR}/ports/sifive_e")
    set(srcs "${p}/port.c;${p}/crt0.S")
    set(ld "${p}/link.ld.in")
    set(cflags "--specs=picolibc.specs;-Wa,-march=rv32imac_zicsr;-ffunction-sections;-fdata-sections;-mcmodel=medany")
    set(ldflags "-nostartfiles;-Wl,--gc-sections")
    set(mem "0x20400000;0x00400000;0x80000000;0x00004000;0x1000")
  else()
    message(FATAL_ERROR "aot: unknown runtime port '${port}' (see ${AOT_RUNTIME_DIR}/ports)")
  endif()
  set(_aot_srcs "${srcs}" PARENT_SCOPE)
  set(_aot_ld "${ld}" PARENT_SCOPE)
  set(_aot_cflags "${cflags}" PARENT_SCOPE)
  set(_aot_ldflags "${ldflags}" PARENT_SCOPE)
  set(_aot_mem "${mem}" PARENT_SCOPE)
endfunction()

function(aot_add_rpc_firmware target)
  cmake_parse_arguments(A ""
    "PORT;BOARD_TAG;BUILD_ID;FLASH_ORIGIN;FLASH_LENGTH;RAM_ORIGIN;RAM_LENGTH;STACK_SIZE"
    "SOURCES;ARCH_FLAGS;DEFINES" ${ARGN})
  if(NOT A_BOARD_TAG)
    set(A_BOARD_TAG unknown)
  endif()
  if(NOT A_BUILD_ID)
    set(A_BUILD_ID unknown)
  endif()
  add_executable(${target}
    ${AOT_RUNTIME_DIR}/src/frame.c ${AOT_RUNTIME_DIR}/src/model.c
    ${AOT_RUNTIME_DIR}/src/rpc_server.c ${AOT_RUNTIME_DIR}/src/rpc_loader.c
    ${AOT_RUNTIME_DIR}/src/rpc_main.c ${A_SOURCES})
  target_compile_options(${target} PRIVATE -std=c99 -Wall -Wextra -Werror -O2)
  target_compile_definitions(${target} PRIVATE
    "AOT_BOARD_TAG=\"${A_BOARD_TAG}\"" "AOT_BUILD_ID=\"${A_BUILD_ID}\"" ${A_DEFINES})
  set(memory)
  foreach(v FLASH_ORIGIN FLASH_LENGTH RAM_ORIGIN RAM_LENGTH STACK_SIZE)
    if(A_${v})
      list(APPEND memory ${v} ${A_${v}})
    endif()
  endforeach()
  aot_add_port(${target} PORT ${A_PORT} ARCH_FLAGS ${A_ARCH_FLAGS} ${memory})
endfunction()

# aot_add_port(<target> PORT <port> [ARCH_FLAGS ...] [FLASH_ORIGIN ... STACK_SIZE ...]):
# give an executable the port's start-up code, console and timer (the
# aot_port_* functions of aot/platform.h), its flags and, on bare metal, the
# port's linker script filled in with the memory map (<target>.ld).
function(aot_add_port target)
  cmake_parse_arguments(A ""
    "PORT;FLASH_ORIGIN;FLASH_LENGTH;RAM_ORIGIN;RAM_LENGTH;STACK_SIZE" "ARCH_FLAGS" ${ARGN})
  if(A_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "aot_add_port(${target}): unexpected arguments: ${A_UNPARSED_ARGUMENTS}")
  endif()
  _aot_port_settings("${A_PORT}")
  enable_language(ASM)
  target_sources(${target} PRIVATE ${_aot_srcs})
  target_include_directories(${target} PRIVATE ${AOT_RUNTIME_DIR}/include)
  target_compile_options(${target} PRIVATE ${A_ARCH_FLAGS} ${_aot_cflags})
  target_link_options(${target} PRIVATE ${A_ARCH_FLAGS} ${_aot_cflags} ${_aot_ldflags})
  if(_aot_ld)
    list(GET _aot_mem 0 flash_origin)
    list(GET _aot_mem 1 flash_length)
    list(GET _aot_mem 2 ram_origin)
    list(GET _aot_mem 3 ram_length)
    list(GET _aot_mem 4 stack_size)
    foreach(v FLASH_ORIGIN FLASH_LENGTH RAM_ORIGIN RAM_LENGTH STACK_SIZE)
      string(TOLOWER ${v} lower)
      if(A_${v})
        set(${lower} ${A_${v}})
      endif()
    endforeach()
    set(script "${CMAKE_CURRENT_BINARY_DIR}/${target}.ld")
    add_custom_command(OUTPUT ${script}
      COMMAND ${CMAKE_C_COMPILER} -E -P -x c -DAOT_FLASH_ORIGIN=${flash_origin}
        -DAOT_FLASH_LENGTH=${flash_length} -DAOT_RAM_ORIGIN=${ram_origin}
        -DAOT_RAM_LENGTH=${ram_length} -DAOT_STACK_SIZE=${stack_size} ${_aot_ld} -o ${script}
      DEPENDS ${_aot_ld} VERBATIM)
    add_custom_target(${target}_ldscript DEPENDS ${script})
    add_dependencies(${target} ${target}_ldscript)
    target_link_options(${target} PRIVATE -T${script})
    set_target_properties(${target} PROPERTIES SUFFIX ".elf" LINK_DEPENDS ${script})
  endif()
endfunction()
