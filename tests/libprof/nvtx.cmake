# NVTX handler tests (label unit, no GPU): the recorder and handlers driven directly and through
# fake NVTX export tables, and an end-to-end run through the real NVTX loader with a small
# injection library. Included from tests/libprof/CMakeLists.txt.

# LIBPROF_NVTX_SOURCES is set in libprof/'s scope; read it here too.
include(${PROJECT_SOURCE_DIR}/libprof/nvtx/sources.cmake)

# The handlers without the rest of libprof, for the tests below. NVTX headers come from the
# toolkit's include directory (header-only; nothing CUDA is linked).
add_library(libprof_nvtx_for_tests STATIC ${LIBPROF_NVTX_SOURCES})
target_include_directories(libprof_nvtx_for_tests PUBLIC ${PROJECT_SOURCE_DIR}
                           ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(libprof_nvtx_for_tests PUBLIC libprof_trace_writer Threads::Threads)
set_target_properties(libprof_nvtx_for_tests PROPERTIES
  CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)

# End-to-end pieces: the injection library (exports only InitializeInjectionNvtx2), a program
# with its own NVTX instance, and a second DSO with another instance.
add_library(libprof_nvtx_e2e_injection SHARED nvtx_e2e_injection.cc)
target_link_libraries(libprof_nvtx_e2e_injection PRIVATE libprof_nvtx_for_tests)
set_target_properties(libprof_nvtx_e2e_injection PROPERTIES
  CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)

add_library(libprof_nvtx_e2e_second SHARED nvtx_e2e_second.cc)
target_include_directories(libprof_nvtx_e2e_second PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(libprof_nvtx_e2e_second PRIVATE ${CMAKE_DL_LIBS})

add_executable(libprof_nvtx_e2e_app nvtx_e2e_app.cc)
target_include_directories(libprof_nvtx_e2e_app PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(libprof_nvtx_e2e_app PRIVATE libprof_nvtx_e2e_second Threads::Threads
                      ${CMAKE_DL_LIBS})

libprof_add_test(libprof_nvtx_test unit
  SOURCES nvtx_recorder_test.cc nvtx_handlers_test.cc nvtx_utf8_test.cc nvtx_e2e_test.cc
    nvtx_payload_handlers_test.cc
  LIBS libprof_nvtx_for_tests)
target_compile_definitions(libprof_nvtx_test PRIVATE
  NVTX_E2E_APP="$<TARGET_FILE:libprof_nvtx_e2e_app>"
  NVTX_E2E_INJECTION="$<TARGET_FILE:libprof_nvtx_e2e_injection>")
add_dependencies(libprof_nvtx_test libprof_nvtx_e2e_app libprof_nvtx_e2e_injection)
