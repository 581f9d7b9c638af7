# Optional dependencies that can never stop ember's configure.
#
# A package's own CMake config may call find_package(... REQUIRED) for its dependencies (Debian's
# oneDNN asks for OpenCL, which it only recommends), and a FATAL_ERROR raised there cannot be
# caught: it would end ember's configure. So each optional CONFIG package is first tried in a
# child CMake run; only when that succeeds is it loaded here.

set(EMBER_OPTIONAL_SUMMARY "" CACHE INTERNAL "")

# ember_optional_summary(<name> <ON|OFF> <detail>): one line of the configure summary.
function(ember_optional_summary name state detail)
  set(line "${name}: ${state}")
  if(NOT detail STREQUAL "")
    string(APPEND line " (${detail})")
  endif()
  set(EMBER_OPTIONAL_SUMMARY "${EMBER_OPTIONAL_SUMMARY};${line}" CACHE INTERNAL "")
endfunction()

# ember_find_optional_config(<package> [PATHS dir...]): sets <package>_FOUND in the caller when the
# package's config loads cleanly; otherwise leaves it false and keeps the reason in
# EMBER_OPTIONAL_<package>_REASON.
macro(ember_find_optional_config pkg)
  cmake_parse_arguments(_eo "" "" "PATHS" ${ARGN})
  set(_eo_dir ${CMAKE_BINARY_DIR}/optional-probes/${pkg})
  set(_eo_paths "")
  if(_eo_PATHS)
    list(JOIN _eo_PATHS " " _eo_paths)
    set(_eo_paths "PATHS ${_eo_paths}")
  endif()
  file(WRITE ${_eo_dir}/CMakeLists.txt
    "cmake_minimum_required(VERSION 3.25)\n"
    "project(probe_${pkg} LANGUAGES C CXX)\n"
    "find_package(${pkg} CONFIG REQUIRED ${_eo_paths})\n")
  execute_process(
    COMMAND ${CMAKE_COMMAND} -S ${_eo_dir} -B ${_eo_dir}/build -G ${CMAKE_GENERATOR}
      -DCMAKE_MAKE_PROGRAM=${CMAKE_MAKE_PROGRAM}
      -DCMAKE_C_COMPILER=${CMAKE_C_COMPILER} -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}
      "-DCMAKE_PREFIX_PATH=${CMAKE_PREFIX_PATH}"
    RESULT_VARIABLE _eo_rc OUTPUT_QUIET ERROR_VARIABLE _eo_err)
  if(_eo_rc EQUAL 0)
    if(_eo_PATHS)
      find_package(${pkg} CONFIG QUIET PATHS ${_eo_PATHS})
    else()
      find_package(${pkg} CONFIG QUIET)
    endif()
    unset(EMBER_OPTIONAL_${pkg}_REASON)
  else()
    set(${pkg}_FOUND FALSE)
    # The first line that says what is missing, for the summary.
    string(REGEX REPLACE "[ \n]+" " " _eo_err "${_eo_err}")
    string(REGEX MATCH "(Could NOT find|Could not find|By not providing)[^)]*\\)?" _eo_reason "${_eo_err}")
    if(_eo_reason STREQUAL "")
      string(REGEX MATCH "CMake Error.*" _eo_reason "${_eo_err}")
      string(SUBSTRING "${_eo_reason}" 0 300 _eo_reason)
      set(_eo_reason "its CMake config failed: ${_eo_reason}")
    endif()
    set(EMBER_OPTIONAL_${pkg}_REASON "${_eo_reason}")
  endif()
endmacro()

# Prints every line collected by ember_optional_summary.
function(ember_print_optional_summary)
  message(STATUS "ember: optional components")
  foreach(line IN LISTS EMBER_OPTIONAL_SUMMARY)
    if(NOT line STREQUAL "")
      message(STATUS "  ${line}")
    endif()
  endforeach()
endfunction()
