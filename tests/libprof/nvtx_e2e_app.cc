// An unmodified-style NVTX program (a real NVTX instance, no libprof code) for the end-to-end
// test. It checks NVTX's return values itself, prints a bit mask of the wrong ones and then exits
// non-zero.
// With "--time N" it only times N nvtxRangePushA/nvtxRangePop pairs and prints the figure.
#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

extern "C" int NvtxE2eSecondLibraryWork();

namespace {

int TimePushPop(long pairs) {
  nvtxRangePushA("warm-up");
  nvtxRangePop();
  const auto begin = std::chrono::steady_clock::now();
  for (long i = 0; i < pairs; ++i) {
    nvtxRangePushA("timed-range");
    nvtxRangePop();
  }
  const std::chrono::duration<double, std::nano> elapsed = std::chrono::steady_clock::now() - begin;
  std::printf("push+pop pair through NVTX: %.1f ns (%ld pairs)\n", elapsed.count() / pairs, pairs);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--time") == 0) return TimePushPop(std::atol(argv[2]));
  int bad = 0;
  if (nvtxRangePushA("outer") != 0) bad |= 1;
  if (nvtxRangePushA("inner") != 1) bad |= 2;
  nvtxMarkA("mark-in-inner");
  if (nvtxRangePop() != 1) bad |= 4;

  nvtxDomainHandle_t domain = nvtxDomainCreateA("e2e-domain");
  nvtxStringHandle_t name = nvtxDomainRegisterStringA(domain, "registered-range");
  nvtxEventAttributes_t attributes{};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.colorType = NVTX_COLOR_ARGB;
  attributes.color = 0xFF00FF00;
  attributes.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  attributes.message.registered = name;
  if (domain == nullptr || name == nullptr) bad |= 8;
  if (nvtxDomainRangePushEx(domain, &attributes) != 0) bad |= 16;

  nvtxRangeId_t id = nvtxRangeStartA("cross-thread");
  if (id == 0) bad |= 32;
  std::thread([id] { nvtxRangeEnd(id); }).join();
  std::thread([&bad] {
    if (nvtxRangePushA("worker") != 0) bad |= 64;
    nvtxRangePop();
  }).join();

  if (NvtxE2eSecondLibraryWork() != 0) bad |= 128;
  if (nvtxDomainRangePop(domain) != 0) bad |= 256;
  if (nvtxRangePop() != 0) bad |= 512;
  if (nvtxRangePop() != -1) bad |= 1024;  // unmatched
  nvtxRangePushA("left-open");            // still open at exit: dumped with open=1
  std::printf("bad=%d\n", bad);
  return bad == 0 ? 0 : 1;
}
