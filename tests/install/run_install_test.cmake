# Installs ember from BINARY_DIR into a staging prefix (or, with BUILD_TREE, takes BINARY_DIR as
# it is), then configures, builds and runs the consumer project in this folder against it with
# find_package(ember CONFIG). LINKER_FLAGS are the
# build's own (a sanitized libember.a needs the sanitizer runtimes in the consumer's link);
# PREFIX_PATH ('|'-separated) and ZLIB_ROOT say where the build found ember's dependencies.
file(REMOVE_RECURSE ${WORK_DIR})
if(BUILD_TREE)
  # No install: the consumer finds the build tree itself.
  set(prefix ${BINARY_DIR})
else()
  set(prefix ${WORK_DIR}/prefix)
  # The C++ library only: the Python package (component python) goes to the interpreter's own
  # site-packages, which no staging prefix moves.
  execute_process(COMMAND ${CMAKE_COMMAND} --install ${BINARY_DIR} --prefix ${prefix}
    --component Unspecified RESULT_VARIABLE rc OUTPUT_QUIET)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cmake --install failed: ${rc}")
  endif()
endif()
string(REPLACE "|" ";" prefix_path "${prefix};${PREFIX_PATH}")
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install/consumer -B ${WORK_DIR}/build
  -G ${GENERATOR} "-DCMAKE_PREFIX_PATH=${prefix_path}" "-DZLIB_ROOT=${ZLIB_ROOT}"
  "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}"
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the consumer failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the consumer failed: ${rc}")
endif()
execute_process(COMMAND ${WORK_DIR}/build/consumer OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out MATCHES "sum=10\ngrad_sum=20")
  message(FATAL_ERROR "the consumer failed (${rc}): ${out}")
endif()
message(STATUS "consumer says: ${out}")
