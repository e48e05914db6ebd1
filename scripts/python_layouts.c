/* Prints the CPython layout that libprof's frame reader needs (libprof/backtrace/python_layouts.h)
 * for the CPython whose headers it is compiled against, as one line of that header's table.
 * Built and run by scripts/python_layouts.sh; offsetof on the interpreter's own (internal)
 * headers, so the table is CPython's release-build ABI, not numbers copied by hand. */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#if PY_MINOR_VERSION >= 11
#include "internal/pycore_code.h"
#include "internal/pycore_frame.h"
#else
#include <frameobject.h>
#endif

/* The bits a bitfield of PyASCIIObject.state occupies: set it alone, read the word back. */
static unsigned state_word(const PyASCIIObject* o) {
  unsigned word;
  memcpy(&word, (const char*)o + offsetof(PyASCIIObject, state), sizeof word);
  return word;
}

int main(void) {
  PyASCIIObject o;
  memset(&o, 0, sizeof o);
  o.state.compact = 1;
  const unsigned compact = state_word(&o);
  memset(&o, 0, sizeof o);
  o.state.ascii = 1;
  const unsigned ascii = state_word(&o);
  memset(&o, 0, sizeof o);
  o.state.kind = 7;
  const unsigned kind = state_word(&o);
  unsigned ready = 0;
#if PY_MINOR_VERSION < 12
  memset(&o, 0, sizeof o);
  o.state.ready = 1;
  ready = state_word(&o);
#endif
#if PY_MINOR_VERSION <= 10
  /* PyFrameObject chain from PyThreadState.frame; f_lasti in bytes (3.9) or code units (3.10). */
  const long thread_frame = offsetof(PyThreadState, frame), cframe_current = -1;
  const long frame_code = offsetof(PyFrameObject, f_code);
  const long frame_previous = offsetof(PyFrameObject, f_back);
  const long frame_instr = -1, frame_lasti = offsetof(PyFrameObject, f_lasti);
  const long lasti_unit = PY_MINOR_VERSION == 9 ? 1 : 2;
  const long frame_owner = -1, owner_generator = -1, owner_cstack = -1;
  const long code_name = offsetof(PyCodeObject, co_name);
  const long code_adaptive = -1, code_firsttraceable = -1;
#else
  /* _PyInterpreterFrame chain: 3.11-3.12 through PyThreadState.cframe, 3.13 directly. */
#if PY_MINOR_VERSION <= 12
  const long thread_frame = offsetof(PyThreadState, cframe);
  const long cframe_current = offsetof(_PyCFrame, current_frame);
  const long frame_code = offsetof(_PyInterpreterFrame, f_code);
  const long frame_instr = offsetof(_PyInterpreterFrame, prev_instr);
#else
  const long thread_frame = offsetof(PyThreadState, current_frame), cframe_current = -1;
  const long frame_code = offsetof(_PyInterpreterFrame, f_executable);
  const long frame_instr = offsetof(_PyInterpreterFrame, instr_ptr);
#endif
  const long frame_previous = offsetof(_PyInterpreterFrame, previous);
  const long frame_lasti = -1, lasti_unit = 0;
  const long frame_owner = offsetof(_PyInterpreterFrame, owner);
  const long owner_generator = FRAME_OWNED_BY_GENERATOR;
#if PY_MINOR_VERSION >= 12
  const long owner_cstack = FRAME_OWNED_BY_CSTACK;
#else
  const long owner_cstack = -1;
#endif
  const long code_name = offsetof(PyCodeObject, co_qualname);
  const long code_adaptive = offsetof(PyCodeObject, co_code_adaptive);
  const long code_firsttraceable = offsetof(PyCodeObject, _co_firsttraceable);
#endif
  /* What PyCode_Type declares as its size: checked at run time against the loaded interpreter,
   * which tells a build with another object header (Py_TRACE_REFS) from a release build. */
#if PY_MINOR_VERSION <= 10
  const size_t code_basicsize = sizeof(PyCodeObject);
#else
  const size_t code_basicsize = offsetof(PyCodeObject, co_code_adaptive);
#endif
  const int kind_shift = __builtin_ctz(kind);
  printf("    {%d, %ld, %ld, %ld, %ld, %ld, %ld, %ld, %ld, %ld, %ld, %zu, %ld, %ld, %ld, "
         "%zu, %zu, %zu, %zu, 0x%x, 0x%x, 0x%x, %d, 0x%x, %zu, %zu, %zu},\n",
         PY_MINOR_VERSION, thread_frame, cframe_current, frame_code, frame_previous, frame_instr,
         frame_lasti, lasti_unit, frame_owner, owner_generator, owner_cstack,
         offsetof(PyCodeObject, co_filename), code_name, code_adaptive, code_firsttraceable,
         sizeof(PyASCIIObject), sizeof(PyCompactUnicodeObject), offsetof(PyASCIIObject, length),
         offsetof(PyASCIIObject, state), compact, ascii, ready, kind_shift, kind >> kind_shift,
         offsetof(PyTypeObject, tp_basicsize), code_basicsize,
         offsetof(PyCodeObject, co_firstlineno));
  return 0;
}
