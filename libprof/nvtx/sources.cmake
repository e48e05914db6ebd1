# libprof's NVTX handlers and recorder (CUDA-free; NVTX headers from the CUDA toolkit's include
# directory). Included by libprof/CMakeLists.txt for libprof.so and by tests/libprof/nvtx.cmake.
set(LIBPROF_NVTX_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/nvtx_handlers.cc
  ${CMAKE_CURRENT_LIST_DIR}/nvtx_install.cc
  ${CMAKE_CURRENT_LIST_DIR}/nvtx_payload_handlers.cc
  ${CMAKE_CURRENT_LIST_DIR}/nvtx_recorder.cc
  ${CMAKE_CURRENT_LIST_DIR}/nvtx_string_table.cc
  ${CMAKE_CURRENT_LIST_DIR}/nvtx_thread_state.cc
  ${CMAKE_CURRENT_LIST_DIR}/utf8.cc)
