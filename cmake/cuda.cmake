# The one place that decides the optional CUDA and CUPTI features.
# VRAMDOC_CUDA=AUTO builds the kernels when nvcc is found, ON requires it, OFF skips it.
set(VRAMDOC_HAVE_CUDA 0)
set(VRAMDOC_HAVE_CUPTI 0)
if(NOT VRAMDOC_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 17)
    find_package(CUDAToolkit REQUIRED)
    set(VRAMDOC_HAVE_CUDA 1)
    # Every architecture from Volta to Hopper, plus PTX for newer ones. CUDA 13 dropped Volta
    # (sm_70/72): with it the list starts at Turing (docs/architecture.md, "CUDA architectures").
    if(CMAKE_CUDA_COMPILER_VERSION VERSION_LESS 13.0)
      set(_archs "70-real;75-real;80-real;86-real;89-real;90-real;90-virtual")
    else()
      set(_archs "75-real;80-real;86-real;89-real;90-real;90-virtual")
    endif()
    set(VRAMDOC_CUDA_ARCHITECTURES "${_archs}" CACHE STRING "CUDA architectures for the benchmark kernels")
    find_path(CUPTI_INCLUDE_DIR cupti.h
              HINTS ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_TARGET_DIR}/include
                    ${CUDAToolkit_LIBRARY_ROOT}/extras/CUPTI/include)
    find_library(CUPTI_LIBRARY cupti
                 HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/extras/CUPTI/lib64)
    if(CUPTI_INCLUDE_DIR AND CUPTI_LIBRARY)
      set(VRAMDOC_HAVE_CUPTI 1)
    endif()
  elseif(VRAMDOC_CUDA STREQUAL "ON")
    message(FATAL_ERROR "VRAMDOC_CUDA=ON but no CUDA compiler (nvcc) was found")
  endif()
endif()
message(STATUS "vramdoc: CUDA kernels ${VRAMDOC_HAVE_CUDA}, CUPTI tracer ${VRAMDOC_HAVE_CUPTI}")
