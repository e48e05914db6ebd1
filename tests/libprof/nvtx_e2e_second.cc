// A second DSO with its own NVTX instance (NVTX v3 globals are hidden per DSO), called while the
// application has "outer" (default domain) and "registered-range" (e2e-domain) open. Returns a
// bit mask of the return values that were not as expected.
#include <nvtx3/nvToolsExt.h>

extern "C" __attribute__((visibility("default"))) int NvtxE2eSecondLibraryWork() {
  int bad = 0;
  if (nvtxRangePushA("second-lib") != 1) bad |= 1;
  nvtxDomainHandle_t domain = nvtxDomainCreateA("e2e-domain");  // same name as the app's
  nvtxEventAttributes_t attributes{};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attributes.message.ascii = "second-lib-domain-range";
  if (nvtxDomainRangePushEx(domain, &attributes) != 1) bad |= 2;
  if (nvtxDomainRangePop(domain) != 1) bad |= 4;
  if (nvtxRangePop() != 1) bad |= 8;
  return bad;
}
