# libprof/cupti/: the CUPTI boundary (the only code that includes CUPTI headers). Sources as
# absolute paths, so that libprof/CMakeLists.txt and tests/libprof/cupti.cmake can both use them.
# cupti_session.cc is listed by libprof/CMakeLists.txt itself.
set(LIBPROF_CUPTI_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/activity_decoder.cc
  ${CMAKE_CURRENT_LIST_DIR}/activity_kinds.cc
  ${CMAKE_CURRENT_LIST_DIR}/api_filter.cc
  ${CMAKE_CURRENT_LIST_DIR}/api_names.cc
  ${CMAKE_CURRENT_LIST_DIR}/cupti_api.cc
  ${CMAKE_CURRENT_LIST_DIR}/stream_blocking_calls.cc
  ${CMAKE_CURRENT_LIST_DIR}/kernel_names.cc
  ${CMAKE_CURRENT_LIST_DIR}/managed_memory_gate.cc
  ${CMAKE_CURRENT_LIST_DIR}/record_layout.cc
  ${CMAKE_CURRENT_LIST_DIR}/unified_memory_counters.cc)
