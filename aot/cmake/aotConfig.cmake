# The CMake package of aot: `find_package(aot)` makes aot_add_model() available.
#
#   cmake -S . -B build -Daot_DIR="$(aot config --cmake-dir)"
#
# (or put the folder printed by `aot config --cmake-prefix` on CMAKE_PREFIX_PATH).
# The package lives inside the installed Python package; it compiles models
# with the `aot` program of that same installation, found next to the Python
# that installed it, on PATH, or given as -DAOT_EXECUTABLE=/path/to/aot.
# docs/integration.md shows a whole firmware project.

include("${CMAKE_CURRENT_LIST_DIR}/aot.cmake")
