#include "libprof/backtrace/symbolizer.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace libprof {
namespace {

// A .symtab larger than this is not read (the biggest we know of, libtorch_cpu's when not
// stripped, is about 100 MB); its frames fall back to dladdr's exported names.
constexpr uint64_t kMaxSymtabBytes = uint64_t{512} << 20;

bool ReadAt(int fd, uint64_t offset, void* out, size_t size) {
  auto* bytes = static_cast<char*>(out);
  while (size > 0) {
    const ssize_t n = pread(fd, bytes, size, static_cast<off_t>(offset));
    if (n <= 0) return false;
    bytes += n;
    offset += n;
    size -= n;
  }
  return true;
}

std::string Hex(const unsigned char* bytes, size_t size) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < size; ++i) {
    out += kDigits[bytes[i] >> 4];
    out += kDigits[bytes[i] & 15];
  }
  return out;
}

// NT_GNU_BUILD_ID from the module's PT_NOTE segments, as mapped in memory.
std::string BuildIdInMemory(const dl_phdr_info* info) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& p = info->dlpi_phdr[i];
    if (p.p_type != PT_NOTE) continue;
    const auto* note = reinterpret_cast<const unsigned char*>(info->dlpi_addr + p.p_vaddr);
    const unsigned char* end = note + p.p_memsz;
    while (note + sizeof(ElfW(Nhdr)) <= end) {
      const auto* header = reinterpret_cast<const ElfW(Nhdr)*>(note);
      const unsigned char* name = note + sizeof(ElfW(Nhdr));
      const unsigned char* desc = name + ((header->n_namesz + 3) & ~3u);
      const unsigned char* next = desc + ((header->n_descsz + 3) & ~3u);
      if (desc + header->n_descsz > end) break;  // the last note's padding may be cut
      if (header->n_type == NT_GNU_BUILD_ID && header->n_namesz == 4 &&
          std::memcmp(name, "GNU", 4) == 0) {
        return Hex(desc, header->n_descsz);
      }
      note = next;
    }
  }
  return "";
}

std::string ExecutablePath() {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? std::string(path, n) : "";
}

}  // namespace

struct Symbolizer::Module {
  std::string path;
  std::string build_id;
  bool executable = false;
  uintptr_t bias = 0;
  std::vector<std::pair<uintptr_t, uintptr_t>> segments;  // [start, end) of each PT_LOAD
  bool symbols_read = false;
  std::vector<ElfSymbol> symbols;  // .symtab functions, by address

  bool Contains(uintptr_t address) const {
    for (const auto& [start, end] : segments) {
      if (address >= start && address < end) return true;
    }
    return false;
  }
};

namespace {

struct Listing {
  std::map<uintptr_t, std::unique_ptr<Symbolizer::Module>>* modules;
  bool first = true;
};

int ListModule(dl_phdr_info* info, size_t, void* arg) {
  auto* listing = static_cast<Listing*>(arg);
  auto* modules = listing->modules;
  auto module = std::make_unique<Symbolizer::Module>();
  // The first object the loader lists is the program; its name is "".
  const bool program = listing->first && (info->dlpi_name == nullptr || *info->dlpi_name == 0);
  listing->first = false;
  module->executable = program;
  module->path = program ? ExecutablePath() : (info->dlpi_name ? info->dlpi_name : "");
  module->bias = info->dlpi_addr;
  module->build_id = BuildIdInMemory(info);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& p = info->dlpi_phdr[i];
    if (p.p_type != PT_LOAD) continue;
    const uintptr_t start = info->dlpi_addr + p.p_vaddr;
    module->segments.emplace_back(start, start + p.p_memsz);
  }
  // Two objects never share a bias, except for objects without segments (skipped). A module
  // listed before keeps its entry (and the symbols read for it).
  if (!module->segments.empty()) modules->try_emplace(module->bias, std::move(module));
  return 0;
}

}  // namespace

Symbolizer::Symbolizer() = default;
Symbolizer::~Symbolizer() = default;

Symbolizer::Module* Symbolizer::FindModule(uintptr_t address) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    for (auto& [bias, module] : modules_) {
      if (module->Contains(address)) return module.get();
    }
    if (!relist_allowed_) break;
    relist_allowed_ = false;
    Listing listing{&modules_};
    dl_iterate_phdr(&ListModule, &listing);
  }
  return nullptr;
}

SymbolizedFrame Symbolizer::Symbolize(uintptr_t return_address) {
  SymbolizedFrame frame;
  const uintptr_t call = return_address - 1;
  Module* module = FindModule(call);
  if (module != nullptr) {
    frame.has_module = true;
    frame.module_path = module->path;
    frame.build_id = module->build_id;
    frame.executable = module->executable;
    frame.module_offset = return_address - module->bias;
    if (!module->symbols_read) {
      module->symbols_read = true;
      if (!module->path.empty()) module->symbols = ReadElfFunctionSymbols(module->path);
    }
    const uint64_t vaddr = call - module->bias;
    const auto& symbols = module->symbols;
    auto it = std::upper_bound(symbols.begin(), symbols.end(), vaddr,
                               [](uint64_t a, const ElfSymbol& s) { return a < s.address; });
    if (it != symbols.begin() && vaddr < std::prev(it)->address + std::prev(it)->size) {
      --it;
      frame.function = Demangle(it->name);
      frame.function_offset = return_address - (module->bias + it->address);
      return frame;
    }
  }
  if (module == nullptr) {
    if (const PerfMapSymbol* jit = perf_map_.Find(call)) {
      frame.has_module = true;
      frame.module_path = perf_map_.path();
      frame.module_offset = return_address;
      frame.function = Demangle(jit->name);
      frame.function_offset = return_address - jit->start;
      return frame;
    }
  }
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(call), &info) != 0 && info.dli_sname != nullptr &&
      info.dli_saddr != nullptr) {
    frame.function = Demangle(info.dli_sname);
    frame.function_offset = return_address - reinterpret_cast<uintptr_t>(info.dli_saddr);
  }
  return frame;
}

std::vector<ElfSymbol> ReadElfFunctionSymbols(const std::string& path) {
  std::vector<ElfSymbol> out;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  try {
    Elf64_Ehdr eh{};
    if (!ReadAt(fd, 0, &eh, sizeof eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
        eh.e_shnum == 0 || eh.e_shnum > 65000) {
      close(fd);
      return out;
    }
    std::vector<Elf64_Shdr> sections(eh.e_shnum);
    if (!ReadAt(fd, eh.e_shoff, sections.data(), sections.size() * sizeof(Elf64_Shdr))) {
      close(fd);
      return out;
    }
    for (const Elf64_Shdr& symtab : sections) {
      if (symtab.sh_type != SHT_SYMTAB || symtab.sh_link >= sections.size() ||
          symtab.sh_entsize != sizeof(Elf64_Sym) || symtab.sh_size > kMaxSymtabBytes) {
        continue;
      }
      const Elf64_Shdr& strtab = sections[symtab.sh_link];
      if (strtab.sh_size > kMaxSymtabBytes) continue;
      std::vector<Elf64_Sym> symbols(symtab.sh_size / sizeof(Elf64_Sym));
      std::string names(strtab.sh_size, '\0');
      if (!ReadAt(fd, symtab.sh_offset, symbols.data(), symbols.size() * sizeof(Elf64_Sym)) ||
          !ReadAt(fd, strtab.sh_offset, names.data(), names.size())) {
        continue;
      }
      for (const Elf64_Sym& sym : symbols) {
        const int type = ELF64_ST_TYPE(sym.st_info);
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_size == 0 ||
            sym.st_value == 0 || sym.st_shndx == SHN_UNDEF || sym.st_name >= names.size()) {
          continue;
        }
        out.push_back({sym.st_value, sym.st_size, std::string(names.c_str() + sym.st_name)});
      }
    }
  } catch (...) {
    out.clear();
  }
  close(fd);
  // By address; of aliases at one address, the shortest name (usually the plain one).
  std::sort(out.begin(), out.end(), [](const ElfSymbol& a, const ElfSymbol& b) {
    if (a.address != b.address) return a.address < b.address;
    return a.name.size() < b.name.size();
  });
  out.erase(std::unique(out.begin(), out.end(),
                        [](const ElfSymbol& a, const ElfSymbol& b) { return a.address == b.address; }),
            out.end());
  return out;
}

std::string Demangle(const std::string& name) {
  if (name.rfind("_Z", 0) != 0) return name;
  int status = 0;
  char* demangled = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || demangled == nullptr) return name;
  std::string out(demangled);
  std::free(demangled);
  return out;
}

}  // namespace libprof
