# Version check of the aot CMake package: `find_package(aot 0.1)`.
#
# The version is read from the Python package's version.py, its one home.
# Before 1.0 a minor release may change the generated API, so a request for
# 0.x is met only by 0.x releases at or above it; from 1.0 on, by the same
# major version at or above the request.

file(STRINGS "${CMAKE_CURRENT_LIST_DIR}/../version.py" _aot_version_line
  REGEX "^__version__ = \"[^\"]+\"")
string(REGEX REPLACE "^__version__ = \"([0-9]+(\\.[0-9]+)*)[^\"]*\"$" "\\1"
  PACKAGE_VERSION "${_aot_version_line}")
unset(_aot_version_line)

if(NOT PACKAGE_VERSION MATCHES "^[0-9]+(\\.[0-9]+)*$")
  set(PACKAGE_VERSION_UNSUITABLE TRUE)
elseif(PACKAGE_FIND_VERSION)
  if(PACKAGE_VERSION VERSION_LESS PACKAGE_FIND_VERSION)
    set(PACKAGE_VERSION_COMPATIBLE FALSE)
  else()
    string(REGEX MATCH "^[0-9]+" _major "${PACKAGE_VERSION}")
    string(REGEX MATCH "^[0-9]+\\.[0-9]+" _minor "${PACKAGE_VERSION}.0")
    if(_major STREQUAL "0")
      string(REGEX MATCH "^[0-9]+\\.[0-9]+" _want "${PACKAGE_FIND_VERSION}.0")
      if(_minor STREQUAL _want)
        set(PACKAGE_VERSION_COMPATIBLE TRUE)
      else()
        set(PACKAGE_VERSION_COMPATIBLE FALSE)
      endif()
    elseif(_major STREQUAL PACKAGE_FIND_VERSION_MAJOR)
      set(PACKAGE_VERSION_COMPATIBLE TRUE)
    else()
      set(PACKAGE_VERSION_COMPATIBLE FALSE)
    endif()
    if(PACKAGE_VERSION_COMPATIBLE AND PACKAGE_VERSION VERSION_EQUAL PACKAGE_FIND_VERSION)
      set(PACKAGE_VERSION_EXACT TRUE)
    endif()
    unset(_major)
    unset(_minor)
    unset(_want)
  endif()
else()
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
endif()
