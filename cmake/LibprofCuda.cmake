# libprof_enable_cuda(): enables the CUDA language for the CUDA programs (samples/,
# bench/device/) when a CUDA compiler is found, and sets LIBPROF_HAVE_CUDA. A macro, not a
# function: enable_language must run in file scope. nvcc is not always on PATH, so the toolkit's
# is used unless the user chose a compiler. Hopper (H100/H200) unless the user says otherwise;
# cudart static, so the programs need only libcuda where they run.
include(CheckLanguage)
macro(libprof_enable_cuda)
  if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
    if(DEFINED CUDAToolkit_ROOT AND EXISTS "${CUDAToolkit_ROOT}/bin/nvcc")
      set(CMAKE_CUDA_COMPILER "${CUDAToolkit_ROOT}/bin/nvcc" CACHE FILEPATH "CUDA compiler")
    elseif(EXISTS /usr/local/cuda/bin/nvcc)
      set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc CACHE FILEPATH "CUDA compiler")
    endif()
  endif()
  check_language(CUDA)
  set(LIBPROF_HAVE_CUDA OFF)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90)  # must be set before enable_language
    endif()
    set(CMAKE_CUDA_RUNTIME_LIBRARY Static)
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    enable_language(CUDA)
    set(LIBPROF_HAVE_CUDA ON)
    # The project's host-compiler warning and sanitizer flags are not nvcc options: replace them
    # for the CUDA targets of the calling directory.
    set_property(DIRECTORY PROPERTY COMPILE_OPTIONS
      $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-Wno-unused-parameter>)
  endif()
endmacro()
