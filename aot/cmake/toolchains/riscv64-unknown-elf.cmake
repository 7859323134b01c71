# CMake toolchain file shipped with aot: bare-metal RISC-V with the GNU
# toolchain riscv64-unknown-elf-gcc (multilib: rv32 with the board's -march
# and -mabi) and picolibc, the compiler of every aot board whose record says
# toolchain.prefix = "riscv64-unknown-elf-".
#
#   cmake -S . -B build -DCMAKE_TOOLCHAIN_FILE="$(aot config --toolchain-file BOARD)"
# or, in CMakeLists.txt before project(): aot_toolchain_file(BOARD CMAKE_TOOLCHAIN_FILE)
#
# It names the programs only.  The -march/-mabi, optimisation and section
# flags are the board record's and picolibc's specs the runtime port's, which
# aot_add_model gives the model's sources (and, with BOARD_SUPPORT, the whole
# target): docs/integration.md.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR riscv)
set(CMAKE_C_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_CXX_COMPILER riscv64-unknown-elf-g++)
set(CMAKE_ASM_COMPILER riscv64-unknown-elf-gcc)
# CMake's compiler check must not link a program: there is no start-up code
# or linker script until the project adds them.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
