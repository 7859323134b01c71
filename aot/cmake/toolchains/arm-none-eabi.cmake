# CMake toolchain file shipped with aot: bare-metal Arm (Cortex-M) with the GNU
# toolchain arm-none-eabi-gcc and its newlib, the compiler of every aot board
# whose record says toolchain.prefix = "arm-none-eabi-".
#
#   cmake -S . -B build -DCMAKE_TOOLCHAIN_FILE="$(aot config --toolchain-file BOARD)"
# or, in CMakeLists.txt before project(): aot_toolchain_file(BOARD CMAKE_TOOLCHAIN_FILE)
#
# It names the programs only.  The CPU, float ABI, optimisation and section
# flags are the board record's, which aot_add_model gives the model's sources
# (and, with BOARD_SUPPORT, the whole target): docs/integration.md.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
# CMake's compiler check must not link a program: there is no start-up code
# or linker script until the project adds them.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
