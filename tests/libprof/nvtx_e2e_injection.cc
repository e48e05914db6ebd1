// A minimal NVTX injection library for the end-to-end test: libprof's handlers without the rest
// of libprof.so. NVTX_INJECTION64_PATH points here. At exit it drains the recorder (final) and
// writes what it got to $LIBPROF_NVTX_DUMP, one line each:
//   instances <calls of InitializeInjectionNvtx2>
//   pid <pid>
//   domain <id> <name>
//   event <kind> depth= domain= tid= end_tid= open= range= color= category= start= end= msg=<text>
// (msg last: it may contain spaces).
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "libprof/clock.h"
#include "libprof/nvtx/nvtx_install.h"
#include "libprof/nvtx/nvtx_recorder.h"

namespace {

std::atomic<int> g_instances{0};

void Dump() {
  try {
    const char* path = std::getenv("LIBPROF_NVTX_DUMP");
    if (path == nullptr) return;
    libprof::NvtxRecorder& recorder = libprof::NvtxRecorder::Get();
    std::vector<libprof::NvtxEvent> events;
    std::vector<libprof::NvtxDomain> domains;
    std::vector<libprof::NvtxPayloadSchema> schemas;
    libprof::StringInterner strings;
    recorder.Drain(strings, &events, &domains, &schemas, /*final=*/true, libprof::TraceClock().NowNs());
    std::vector<std::pair<uint32_t, std::string>> pairs;
    strings.CollectFrom(0, &pairs);
    std::unordered_map<uint32_t, std::string> text(pairs.begin(), pairs.end());

    FILE* out = std::fopen(path, "w");
    if (out == nullptr) return;
    std::fprintf(out, "instances %d\npid %d\n", g_instances.load(), static_cast<int>(getpid()));
    for (const auto& domain : domains) {
      std::fprintf(out, "domain %u %s\n", domain.id, text[domain.name_id].c_str());
    }
    for (const auto& e : events) {
      std::fprintf(out,
                   "event %s depth=%u domain=%u tid=%u end_tid=%u open=%d range=%llu color=%s "
                   "category=%u start=%llu end=%llu msg=%s\n",
                   libprof::ToString(e.kind), e.depth, e.domain_id, e.thread_id, e.end_thread_id,
                   e.open ? 1 : 0, static_cast<unsigned long long>(e.range_id),
                   e.has_color ? std::to_string(e.color_argb).c_str() : "-", e.category,
                   static_cast<unsigned long long>(e.start_ns),
                   static_cast<unsigned long long>(e.end_ns), text[e.message_id].c_str());
    }
    std::fclose(out);
  } catch (...) {
  }
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    NvtxGetExportTableFunc_t get_export_table) {
  g_instances.fetch_add(1);
  static std::once_flag at_exit;
  std::call_once(at_exit, [] { std::atexit(&Dump); });
  return libprof::InstallNvtxHandlers(get_export_table) ? 1 : 0;
}
