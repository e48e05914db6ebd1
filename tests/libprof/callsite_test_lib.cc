// A shared library with known functions for the call-stack tests (backtrace_test.cc): an
// exported C++ function and a static one that only the ELF .symtab names. Linked with a fixed
// build id (tests/libprof/CMakeLists.txt).
using Probe = void (*)(void*);

// Internal linkage: not in .dynsym, so dladdr cannot name it. noinline and work after the call
// keep the frame (no inlining, no tail call).
static __attribute__((noinline)) int StaticHop(Probe probe, void* arg, int n) {
  probe(arg);
  asm volatile("" ::: "memory");
  return n + 1;
}

namespace callsite_test {

__attribute__((noinline, visibility("default"))) int Outer(Probe probe, void* arg) {
  const int r = StaticHop(probe, arg, 1);
  asm volatile("" ::: "memory");
  return r + 1;
}

}  // namespace callsite_test
