# aot_add_model(): compile a model with aot and build its C as part of a target.
#
#   find_package(aot REQUIRED)        # or include(<aot package>/cmake/aot.cmake)
#   add_executable(app main.c)
#   aot_add_model(app MODEL kws.tflite BOARD qemu/mps2-an386
#                 [NAME kws] [OPTIONS --opt-level 3 ...] [BOARD_SUPPORT] [OUTPUT_DIR dir]
#                 [RPC] [NO_CPU_FLAGS] [NO_LIBM])
#   aot_add_model(app MODEL kws.tflite TARGET "c -mcpu=cortex-m4" ...)
#   aot_toolchain_file(qemu/mps2-an386 CMAKE_TOOLCHAIN_FILE)   # before project()
#
# MODEL    a .tflite or .onnx file (relative paths are from the calling CMakeLists.txt)
# BOARD    a board tag (`aot boards` lists them): the code is generated for its CPU
# TARGET   instead of BOARD, a target string, for boards aot has no record of
#          (a Zephyr board, say); BOARD_SUPPORT then has nothing to add
# NAME     the C prefix of the generated API (default: the model file's stem), so
#          main.c includes "<NAME>.h" and calls <NAME>_run()
# OPTIONS  more `aot compile` options, e.g. --opt-level 3 or --tuning-records log.json
# BOARD_SUPPORT  also give the target the board's start-up code, linker script
#          and console from aot's C runtime (aot_port_init, aot_port_write... of
#          aot/platform.h), for firmware that has no board support of its own;
#          its main() calls aot_port_init() first (docs/integration.md)
# OUTPUT_DIR  where the artifact goes (default: <binary dir>/aot/<NAME>)
# RPC      also add the model's RPC descriptor (aot_rpc_model), for firmware that
#          links aot's RPC server itself (the Zephyr module does)
# NO_CPU_FLAGS  compile the kernels with the target's flags only (when the build
#          already sets the CPU and its float ABI, as Zephyr does)
# NO_LIBM  do not link -lm (a C library without a separate libm)
#
# Flags: the model's sources are compiled with the board record's flags
# (metadata.json's build: opt_flags such as -O2, the CPU flags, cflags such as
# -ffunction-sections), BOARD_SUPPORT gives the whole target the CPU flags,
# cflags, optimisation and ldflags (-Wl,--gc-sections).  The optimisation is
# left out when the build chose its own: a CMAKE_BUILD_TYPE (Release, MinSizeRel,
# Debug...: its flags apply) or -O... in CMAKE_C_FLAGS (e.g. from CFLAGS).
#
# aot_toolchain_file(<board> <var>) sets <var> to the toolchain file aot ships
# for the board's cross compiler (toolchains/, one per compiler family); call
# it before project() with CMAKE_TOOLCHAIN_FILE as <var>.  AOT_TOOLCHAIN_DIR is
# that folder.
#
# The model is compiled when the project is configured, so that its list of
# C files (one per kernel) is known to the generator, and compiled again from
# the build whenever the model file or the aot installation changes (CMake
# re-runs the configure step).  A stamp of the model's SHA-256, the board, the
# name, the options and aot's version decides whether aot runs at all, and the
# artifact rewrites only files whose bytes change, so an unchanged model
# rebuilds nothing and a changed one rebuilds only its own objects.
# Everything the build needs is read from the artifact's metadata.json
# ("build": sources, include folders, the board's port, flags and memory map).
# docs/integration.md has a whole project.

include_guard(GLOBAL)

if(CMAKE_VERSION VERSION_LESS 3.19)
  message(FATAL_ERROR "aot: aot_add_model needs CMake 3.19 or newer (string(JSON)); "
    "this is CMake ${CMAKE_VERSION}")
endif()

# Cache variables, not plain ones: a Zephyr module includes this file from its
# own directory, and the application calls aot_add_model from another one.
get_filename_component(_aot_dir "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
set(_AOT_PACKAGE_DIR "${_aot_dir}" CACHE INTERNAL "the aot Python package")
set(_AOT_VERSION_FILE "${_aot_dir}/version.py" CACHE INTERNAL "where aot's version is")
file(STRINGS "${_AOT_VERSION_FILE}" _aot_line REGEX "^__version__ = \"[^\"]+\"")
string(REGEX REPLACE "^__version__ = \"([^\"]+)\"$" "\\1" _aot_version "${_aot_line}")
set(AOT_VERSION "${_aot_version}" CACHE INTERNAL "the version of aot")
set(AOT_TOOLCHAIN_DIR "${CMAKE_CURRENT_LIST_DIR}/toolchains" CACHE INTERNAL
  "the CMake toolchain files aot ships, one per cross compiler family")
unset(_aot_line)
unset(_aot_version)
unset(_aot_dir)

# The aot program of the installation this file belongs to: the venv's or the
# prefix's bin/ (the package sits in <prefix>/lib/pythonX.Y/site-packages/aot),
# a development checkout's .venv/bin, then PATH.
# Zephyr's build also knows the Python that runs west (PYTHON_EXECUTABLE).
set(_aot_python_bin)
if(PYTHON_EXECUTABLE)
  get_filename_component(_aot_python_bin "${PYTHON_EXECUTABLE}" DIRECTORY)
endif()
find_program(AOT_EXECUTABLE aot
  HINTS "${_AOT_PACKAGE_DIR}/../../../../bin" "${_AOT_PACKAGE_DIR}/../.venv/bin"
        "$ENV{VIRTUAL_ENV}/bin" ${_aot_python_bin}
  DOC "the aot compiler that aot_add_model runs")

# Check once per executable that it is the aot this CMake package belongs to:
# a different aot on PATH would compile with another compiler than asked for.
function(_aot_check_executable where)
  if(NOT AOT_EXECUTABLE)
    message(FATAL_ERROR "${where}: cannot find the aot program of aot ${AOT_VERSION} (looked "
      "next to ${_AOT_PACKAGE_DIR} and on PATH): configure with -DAOT_EXECUTABLE=/path/to/aot")
  endif()
  if(_AOT_CHECKED_EXECUTABLE STREQUAL AOT_EXECUTABLE)
    return()
  endif()
  execute_process(COMMAND "${AOT_EXECUTABLE}" --version RESULT_VARIABLE rc
    OUTPUT_VARIABLE out ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${where}: ${AOT_EXECUTABLE} --version failed (${rc}): ${err}")
  endif()
  if(NOT out STREQUAL "aot ${AOT_VERSION}")
    message(FATAL_ERROR "${where}: ${AOT_EXECUTABLE} is '${out}', but this CMake package "
      "(${CMAKE_CURRENT_FUNCTION_LIST_DIR}) belongs to aot ${AOT_VERSION}: set AOT_EXECUTABLE "
      "to the aot installed with it")
  endif()
  set(_AOT_CHECKED_EXECUTABLE "${AOT_EXECUTABLE}" CACHE INTERNAL "")
endfunction()

# The JSON array at <path...> of metadata.json as a CMake list, each item
# prefixed with <prefix>.
function(_aot_json_list var json prefix)
  set(items)
  string(JSON n LENGTH "${json}" ${ARGN})
  if(n GREATER 0)
    math(EXPR last "${n} - 1")
    foreach(i RANGE ${last})
      string(JSON item GET "${json}" ${ARGN} ${i})
      list(APPEND items "${prefix}${item}")
    endforeach()
  endif()
  set(${var} "${items}" PARENT_SCOPE)
endfunction()

# The toolchain file of <board>'s cross compiler, as `aot config --toolchain-file`
# prints it (the board record's toolchain.prefix decides).
function(aot_toolchain_file board)
  set(where "aot_toolchain_file(${board})")
  set(var "${ARGV1}")
  if(NOT ARGC EQUAL 2)
    message(FATAL_ERROR "${where}: usage: aot_toolchain_file(<board tag> <variable>), e.g. "
      "aot_toolchain_file(qemu/mps2-an386 CMAKE_TOOLCHAIN_FILE) before project()")
  endif()
  _aot_check_executable("${where}")
  execute_process(COMMAND "${AOT_EXECUTABLE}" config --toolchain-file "${board}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE path ERROR_VARIABLE err
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    string(STRIP "${err}" err)
    message(FATAL_ERROR "${where}: ${err}")
  endif()
  if(var STREQUAL "CMAKE_TOOLCHAIN_FILE" AND CMAKE_C_COMPILER)
    message(FATAL_ERROR "${where}: called after project() or enable_language(): a toolchain "
      "file takes effect only when set before the first project(); move the call up")
  endif()
  set(${var} "${path}" PARENT_SCOPE)
endfunction()

# The board record's optimisation flags of metadata.json (build.opt_flags), as
# generator expressions that apply only to a build without a build type, and
# none when CMAKE_C_FLAGS already has an -O (the build chose its own).
function(_aot_opt_flags var meta)
  set(flags)
  string(JSON type ERROR_VARIABLE none TYPE "${meta}" build opt_flags)
  if(NOT none AND NOT CMAKE_C_FLAGS MATCHES "(^| )-O")
    _aot_json_list(opt "${meta}" "" build opt_flags)
    foreach(flag IN LISTS opt)
      list(APPEND flags "$<$<STREQUAL:$<CONFIG>,>:${flag}>")
    endforeach()
  endif()
  set(${var} "${flags}" PARENT_SCOPE)
endfunction()

function(aot_add_model target)
  cmake_parse_arguments(PARSE_ARGV 1 A "BOARD_SUPPORT;RPC;NO_CPU_FLAGS;NO_LIBM"
    "MODEL;BOARD;TARGET;NAME;OUTPUT_DIR" "OPTIONS")
  set(where "aot_add_model(${target})")
  set(usage "aot_add_model(<target> MODEL <file> BOARD <tag> | TARGET <target string> "
    "[NAME <c prefix>] [OPTIONS <aot compile options>...] [BOARD_SUPPORT] [OUTPUT_DIR <dir>] "
    "[RPC] [NO_CPU_FLAGS] [NO_LIBM])")
  string(JOIN "" usage ${usage})
  if(A_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${where}: unexpected arguments '${A_UNPARSED_ARGUMENTS}'; usage: ${usage}")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "${where}: '${target}' is not a target: create it with add_executable "
      "or add_library before aot_add_model")
  endif()
  if(NOT A_MODEL)
    message(FATAL_ERROR "${where}: MODEL <file> is missing; usage: ${usage}")
  endif()
  if(A_BOARD AND A_TARGET)
    message(FATAL_ERROR "${where}: give BOARD or TARGET, not both; usage: ${usage}")
  endif()
  if(NOT A_BOARD AND NOT A_TARGET)
    message(FATAL_ERROR "${where}: BOARD <tag> is missing (e.g. qemu/mps2-an386; `aot boards` "
      "lists them), or give TARGET <target string>; usage: ${usage}")
  endif()
  if(A_BOARD)
    set(where_to --board "${A_BOARD}")
  else()
    set(where_to --target "${A_TARGET}")
  endif()
  get_filename_component(model "${A_MODEL}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT EXISTS "${model}" OR IS_DIRECTORY "${model}")
    message(FATAL_ERROR "${where}: the model file ${model} does not exist")
  endif()
  set(name "${A_NAME}")
  if(NOT name)
    get_filename_component(name "${model}" NAME_WE)
    string(MAKE_C_IDENTIFIER "${name}" name)
  endif()
  set(out "${A_OUTPUT_DIR}")
  if(NOT out)
    set(out "${CMAKE_CURRENT_BINARY_DIR}/aot/${name}")
  endif()
  get_filename_component(out "${out}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  _aot_check_executable("${where}")

  # Compile when the stamp of everything that decides the output changed.
  file(SHA256 "${model}" digest)
  string(JOIN "\n" stamp "aot ${AOT_VERSION}" "model ${digest}" "where ${where_to}"
    "name ${name}" "options ${A_OPTIONS}" "")
  set(stamp_file "${out}/.aot-stamp")
  set(old "")
  if(EXISTS "${stamp_file}" AND EXISTS "${out}/metadata.json")
    file(READ "${stamp_file}" old)
  endif()
  if(NOT old STREQUAL stamp)
    file(REMOVE "${stamp_file}")
    execute_process(
      COMMAND "${AOT_EXECUTABLE}" compile "${model}" ${where_to} --name "${name}"
              -o "${out}" ${A_OPTIONS}
      RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      string(STRIP "${err}${text}" err)
      message(FATAL_ERROR "${where}: ${err}")
    endif()
    file(WRITE "${stamp_file}" "${stamp}")
    string(REGEX REPLACE "\n.*" "" first "${text}")
    message(STATUS "aot: ${first}")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${model}" "${_AOT_VERSION_FILE}")

  file(READ "${out}/metadata.json" meta)
  _aot_json_list(sources "${meta}" "${out}/" build sources)
  _aot_json_list(includes "${meta}" "${out}/" build include_dirs)
  # Kernels compiled ahead by the llvm codegen (`OPTIONS --codegen llvm`) come as objects.
  string(JSON objects_type ERROR_VARIABLE no_objects TYPE "${meta}" build objects)
  set(objects)
  if(NOT no_objects)
    _aot_json_list(objects "${meta}" "${out}/" build objects)
  endif()
  target_sources(${target} PRIVATE ${sources} ${objects})
  target_include_directories(${target} PRIVATE ${includes})
  # Layers handed to external codegens (`--target "c -libs=cmsis-nn"`): their
  # libraries are compiled in place from the folder the artifact names, or from
  # the CMake variable it names (e.g. CMSIS_NN_PATH) when that is set.
  string(JSON n_external ERROR_VARIABLE no_external LENGTH "${meta}" build external)
  if(NOT no_external AND n_external GREATER 0)
    math(EXPR last_external "${n_external} - 1")
    foreach(i RANGE ${last_external})
      string(JSON lib_root GET "${meta}" build external ${i} root)
      string(JSON lib_var GET "${meta}" build external ${i} variable)
      if(DEFINED ${lib_var})
        set(lib_root "${${lib_var}}")
      endif()
      _aot_json_list(lib_sources "${meta}" "${lib_root}/" build external ${i} sources)
      _aot_json_list(lib_includes "${meta}" "${lib_root}/" build external ${i} include_dirs)
      _aot_json_list(lib_defines "${meta}" "" build external ${i} defines)
      target_sources(${target} PRIVATE ${lib_sources})
      list(APPEND sources ${lib_sources})
      target_include_directories(${target} PRIVATE ${lib_includes})
      target_compile_definitions(${target} PRIVATE ${lib_defines})
    endforeach()
  endif()
  if(A_RPC)
    _aot_json_list(rpc "${meta}" "${out}/" build rpc_sources)
    if(NOT rpc)
      message(FATAL_ERROR "${where}: RPC: the artifact has no RPC descriptor")
    endif()
    target_sources(${target} PRIVATE ${rpc})
    target_include_directories(${target} PRIVATE "${out}/runtime/include")
  endif()
  if(NOT MSVC AND NOT A_NO_LIBM)
    target_link_libraries(${target} PRIVATE m)
  endif()

  _aot_opt_flags(opt_flags "${meta}")
  string(JSON board_type TYPE "${meta}" build board)
  if(board_type STREQUAL "NULL")
    if(A_BOARD_SUPPORT)
      message(FATAL_ERROR "${where}: BOARD_SUPPORT: aot's C runtime has no port for "
        "${A_BOARD}${A_TARGET}; bring the board's start-up code yourself")
    endif()
    set_source_files_properties(${sources} PROPERTIES COMPILE_OPTIONS "${opt_flags}")
    return()
  endif()
  string(JSON port GET "${meta}" build board port)
  string(JSON cc GET "${meta}" build board cc)
  _aot_json_list(cpu_flags "${meta}" "" build board cpu_flags)
  _aot_json_list(cflags "${meta}" "" build board cflags)
  # The kernels were generated for the board's CPU (DSP or vector
  # instructions): their objects are compiled for it whatever the target's
  # flags, with the record's optimisation and cflags.
  set(model_flags ${opt_flags} ${cflags})
  if(NOT A_NO_CPU_FLAGS)
    list(PREPEND model_flags ${cpu_flags})
  endif()
  set_source_files_properties(${sources} PROPERTIES COMPILE_OPTIONS "${model_flags}")
  if(NOT port STREQUAL "host" AND NOT CMAKE_CROSSCOMPILING)
    message(FATAL_ERROR "${where}: ${A_BOARD} needs its cross compiler (${cc}), but this "
      "project builds for the host with ${CMAKE_C_COMPILER}: configure it with the "
      "toolchain file aot ships, -DCMAKE_TOOLCHAIN_FILE=\"$(aot config --toolchain-file "
      "${A_BOARD})\", or call aot_toolchain_file(${A_BOARD} CMAKE_TOOLCHAIN_FILE) before "
      "project()")
  endif()
  if(NOT A_BOARD_SUPPORT)
    return()
  endif()

  _aot_json_list(defines "${meta}" "" build board defines)
  _aot_json_list(ldflags "${meta}" "" build board ldflags)
  set(memory)
  string(JSON memory_type TYPE "${meta}" build board memory)
  if(NOT memory_type STREQUAL "NULL")
    foreach(key flash_origin flash_length ram_origin ram_length stack_size)
      string(JSON value GET "${meta}" build board memory ${key})
      string(TOUPPER ${key} upper)
      list(APPEND memory ${upper} ${value})
    endforeach()
  endif()
  include("${out}/runtime/runtime.cmake")
  aot_add_port(${target} PORT ${port} ARCH_FLAGS ${cpu_flags} ${cflags} ${defines} ${memory})
  target_compile_options(${target} PRIVATE ${opt_flags})
  target_link_options(${target} PRIVATE ${ldflags})
endfunction()
