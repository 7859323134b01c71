# CMake counterpart of runtime.mk: build RPC firmware from the aot C runtime.
#
#   include(path/to/runtime_c/runtime.cmake)
#   aot_add_rpc_firmware(firmware PORT mps2 SOURCES model.c descriptor.c
#       [ARCH_FLAGS -mcpu=cortex-m4 ...] [BOARD_TAG qemu/mps2-an386] [BUILD_ID 1]
#       [FLASH_ORIGIN 0x0 FLASH_LENGTH 0x400000 RAM_ORIGIN 0x20000000 RAM_LENGTH 0x400000]
#       [STACK_SIZE 0x2000] [DEFINES AOT_MAX_FRAME=1024 ...])
#   target_compile_options(firmware PRIVATE -O2)   # the board's build.opt_flags
# or, for firmware with its own main() that wants a port's start-up code and
# console (aot_add_model's BOARD_SUPPORT uses this):
#   aot_add_port(app PORT mps2 [ARCH_FLAGS ...] [FLASH_ORIGIN ... STACK_SIZE ...])
# For bare-metal ports configure with a cross compiler, e.g.
#   cmake -DCMAKE_SYSTEM_NAME=Generic -DCMAKE_C_COMPILER=arm-none-eabi-gcc
#         -DCMAKE_TRY_COMPILE_TARGET_TYPE=STATIC_LIBRARY ...

set(AOT_RUNTIME_DIR "${CMAKE_CURRENT_LIST_DIR}")

# A port's settings are written once, in ports/<port>/port.mk, and read here.
# port.mk files keep to the part of Make this reader understands:
# `VAR := value`, `VAR ?= value`, `VAR += value`, `include <another port.mk>`,
# `$(VAR)` references, `#` comments and backslash continuations.
# tests/runtime_c/test_port_settings.py checks that CMake reads every port as
# Make does.
set(_AOT_PORT_VARS AOT_PORT_DIR AOT_PORT_SRCS AOT_PORT_ASM_SRCS AOT_PORT_LDSCRIPT_IN
    AOT_PORT_CFLAGS AOT_PORT_LDFLAGS AOT_FLASH_ORIGIN AOT_FLASH_LENGTH AOT_RAM_ORIGIN
    AOT_RAM_LENGTH AOT_STACK_SIZE)

# The variables are global properties _aot_mk_<NAME>; _aot_mk_defined lists
# the names assigned so far (`?=` assigns only to the others).
function(_aot_mk_get out name)
  get_property(defined GLOBAL PROPERTY _aot_mk_defined)
  list(FIND defined "${name}" at)
  set(value "")
  if(at GREATER -1)
    get_property(value GLOBAL PROPERTY "_aot_mk_${name}")
  endif()
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

function(_aot_mk_set name value)
  set_property(GLOBAL PROPERTY "_aot_mk_${name}" "${value}")
  get_property(defined GLOBAL PROPERTY _aot_mk_defined)
  list(FIND defined "${name}" at)
  if(at EQUAL -1)
    set_property(GLOBAL APPEND PROPERTY _aot_mk_defined "${name}")
  endif()
endfunction()

function(_aot_mk_expand out text)
  while(text MATCHES "\\$\\(([A-Za-z_][A-Za-z0-9_]*)\\)")
    set(name "${CMAKE_MATCH_1}")
    _aot_mk_get(value "${name}")
    string(REPLACE "$(${name})" "${value}" text "${text}")
  endwhile()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

function(_aot_mk_read file)
  if(NOT EXISTS "${file}")
    message(FATAL_ERROR "aot: ${file} does not exist")
  endif()
  file(READ "${file}" text)
  string(REGEX REPLACE "\\\\\n" " " text "${text}")
  string(REPLACE ";" "\\;" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "#.*$" "" line "${line}")
    string(STRIP "${line}" line)
    if(line STREQUAL "")
      continue()
    endif()
    if(line MATCHES "^include[ \t]+(.+)$")
      _aot_mk_expand(included "${CMAKE_MATCH_1}")
      _aot_mk_read("${included}")
    elseif(line MATCHES "^([A-Za-z_][A-Za-z0-9_]*)[ \t]*(:=|\\?=|\\+=)[ \t]*(.*)$")
      set(name "${CMAKE_MATCH_1}")
      set(op "${CMAKE_MATCH_2}")
      _aot_mk_expand(value "${CMAKE_MATCH_3}")
      get_property(defined GLOBAL PROPERTY _aot_mk_defined)
      list(FIND defined "${name}" at)
      _aot_mk_get(old "${name}")
      if(op STREQUAL "?=" AND at GREATER -1)
        continue()
      elseif(op STREQUAL "+=" AND NOT old STREQUAL "")
        set(value "${old} ${value}")
      endif()
      _aot_mk_set("${name}" "${value}")
    else()
      message(FATAL_ERROR "aot: ${file}: '${line}' is outside the part of Make that "
        "runtime.cmake reads (assignments, include, $(VAR)); see runtime.cmake")
    endif()
  endforeach()
endfunction()

# _aot_port_settings(<port>): _aot_srcs, _aot_ld, _aot_cflags, _aot_ldflags and
# _aot_mem (flash origin, flash length, RAM origin, RAM length, stack size) of
# the port, from its port.mk.
function(_aot_port_settings port)
  if(NOT port OR NOT EXISTS "${AOT_RUNTIME_DIR}/ports/${port}/port.mk")
    file(GLOB known RELATIVE "${AOT_RUNTIME_DIR}/ports" "${AOT_RUNTIME_DIR}/ports/*/port.mk")
    string(REPLACE "/port.mk" "" known "${known}")
    string(REPLACE ";" ", " known "${known}")
    message(FATAL_ERROR "aot: unknown runtime port '${port}'; ports: ${known}")
  endif()
  set_property(GLOBAL PROPERTY _aot_mk_defined "")
  _aot_mk_set(AOT_RUNTIME_DIR "${AOT_RUNTIME_DIR}")
  _aot_mk_read("${AOT_RUNTIME_DIR}/ports/${port}/port.mk")
  foreach(var IN LISTS _AOT_PORT_VARS)
    _aot_mk_get(${var} ${var})
  endforeach()
  separate_arguments(srcs UNIX_COMMAND "${AOT_PORT_SRCS} ${AOT_PORT_ASM_SRCS}")
  separate_arguments(cflags UNIX_COMMAND "${AOT_PORT_CFLAGS}")
  separate_arguments(ldflags UNIX_COMMAND "${AOT_PORT_LDFLAGS}")
  if(NOT AOT_STACK_SIZE)
    set(AOT_STACK_SIZE 0x2000)  # runtime.mk's default
  endif()
  set(_aot_srcs "${srcs}" PARENT_SCOPE)
  set(_aot_ld "${AOT_PORT_LDSCRIPT_IN}" PARENT_SCOPE)
  set(_aot_cflags "${cflags}" PARENT_SCOPE)
  set(_aot_ldflags "${ldflags}" PARENT_SCOPE)
  set(_aot_mem "${AOT_FLASH_ORIGIN};${AOT_FLASH_LENGTH};${AOT_RAM_ORIGIN};${AOT_RAM_LENGTH};${AOT_STACK_SIZE}"
    PARENT_SCOPE)
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
  # No -O here: the caller gives the board's optimisation (metadata.json's
  # build.opt_flags; aot project's CMakeLists.txt does).
  target_compile_options(${target} PRIVATE -std=c99 -Wall -Wextra -Werror)
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
  # enable_language() works only at file scope, so the project must have
  # enabled ASM itself when the port's start-up code is assembly.
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(_aot_srcs MATCHES "\\.S(;|$)" AND NOT "ASM" IN_LIST languages)
    message(FATAL_ERROR "aot_add_port(${target}): the start-up code of runtime port ${A_PORT} "
      "is assembly: enable ASM in the project with project(app C ASM)")
  endif()
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
