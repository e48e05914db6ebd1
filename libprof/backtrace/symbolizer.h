// Turns return addresses of this process into module, build id, offset and function name, once
// per address, on the writer thread as stacks are first written. An address in no loaded module
// (JIT-compiled code) is named from the runtime's perf map (perf_map.h); its module is then the
// map's path and its offset the address itself.
//
// Layer: libprof/backtrace/ (CUDA-free). Runs on libprof's writer thread, never on the
// application's threads: it takes the loader's lock (dladdr, dl_iterate_phdr), reads ELF files
// and allocates freely. Function names come from the module's .symtab when the file has one (so
// static and hidden functions of the application are named; dladdr sees only exported
// symbols), else from dladdr; C++ names are demangled.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "libprof/backtrace/perf_map.h"

namespace libprof {

struct SymbolizedFrame {
  bool has_module = false;
  std::string module_path;
  std::string build_id;     // lowercase hex of NT_GNU_BUILD_ID; "" when absent
  bool executable = false;  // the program itself
  uint64_t module_offset = 0;  // return address minus the module's load bias: the ELF virtual
                               // address, what `addr2line -e MODULE` takes (after subtracting 1)
  std::string function;        // demangled; "" when unknown
  uint64_t function_offset = 0;
};

class Symbolizer {
 public:
  Symbolizer();
  ~Symbolizer();
  // `return_address` as WalkStack gives it. The function is looked up at return_address - 1, the
  // call instruction, so that a call that ends a function is not named after the next one.
  SymbolizedFrame Symbolize(uintptr_t return_address);
  // Lets the next address found in no known module list the loaded modules again (once), for
  // libraries loaded since: call before each batch of new addresses.
  void AllowRelist() { relist_allowed_ = true; }

  struct Module;  // a loaded module, as the loader lists it (symbolizer.cc)

 private:
  Module* FindModule(uintptr_t address);

  // Loaded modules by load bias; filled on first use from dl_iterate_phdr.
  std::map<uintptr_t, std::unique_ptr<Module>> modules_;
  bool relist_allowed_ = true;
  PerfMap perf_map_;
};

// Reads the function symbols (STT_FUNC, non-zero size) of the ELF file's .symtab: (address,
// size, mangled name) sorted by address. Empty when the file is not a 64-bit ELF or has no
// .symtab (stripped). Exposed for tests.
struct ElfSymbol {
  uint64_t address = 0;
  uint64_t size = 0;
  std::string name;
};
std::vector<ElfSymbol> ReadElfFunctionSymbols(const std::string& path);

// Demangles an Itanium C++ name; returns `name` itself when it is not one.
std::string Demangle(const std::string& name);

}  // namespace libprof
