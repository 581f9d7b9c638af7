# ember_find_cuda_toolkit([args of find_package]): find_package(CUDAToolkit), for ember's build and
# for projects that use the installed package. Debian 12's CMake 3.25 marks CUDA::nvToolsExt
# deprecated without checking that the target exists, when the project's minimum is 3.25 or more,
# and CUDA 13 no longer ships nvToolsExt: the call fails unless the minimum reads lower meanwhile.
# The variable only selects that warning; policies are set by cmake_minimum_required alone.
macro(ember_find_cuda_toolkit)
  set(_ember_minimum ${CMAKE_MINIMUM_REQUIRED_VERSION})
  set(CMAKE_MINIMUM_REQUIRED_VERSION 3.24)
  find_package(CUDAToolkit ${ARGN})
  set(CMAKE_MINIMUM_REQUIRED_VERSION ${_ember_minimum})
endmacro()
