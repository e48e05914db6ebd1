# Tests of libprof/cupti/ (included from tests/libprof/CMakeLists.txt). They need the CUPTI
# headers and, for the buffer-iteration and loader tests, the toolkit's libcupti, which works
# without a GPU (cupti-facts.md 8); no GPU, so label `unit`.
include(${PROJECT_SOURCE_DIR}/libprof/cupti/sources.cmake)

# The same sources libprof.so compiles, as a static library for the tests only.
add_library(libprof_cupti_for_tests STATIC ${LIBPROF_CUPTI_SOURCES})
target_include_directories(libprof_cupti_for_tests PUBLIC
  ${PROJECT_SOURCE_DIR} ${CUDAToolkit_INCLUDE_DIRS})
target_compile_definitions(libprof_cupti_for_tests PUBLIC
  LIBPROF_DEFAULT_CUPTI_PATH="${CUDAToolkit_LIBRARY_DIR}/libcupti.so.${CUDAToolkit_VERSION_MAJOR}")
target_link_libraries(libprof_cupti_for_tests PUBLIC libprof_trace_writer ${CMAKE_DL_LIBS})

libprof_add_test(libprof_cupti_test unit
  SOURCES cupti_decoder_test.cc cupti_names_test.cc
          cupti_api_filter_test.cc cupti_api_test.cc cupti_record_layout_test.cc
          cupti_unified_memory_test.cc cupti_stream_blocking_calls_test.cc
  LIBS libprof_cupti_for_tests)
