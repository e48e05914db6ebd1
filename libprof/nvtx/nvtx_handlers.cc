#include "libprof/nvtx/nvtx_handlers.h"

#include <cstddef>
#include <string>

#include "libprof/nvtx/nvtx_api.h"
#include <nvtx3/nvToolsExtPayload.h>

#include "libprof/nvtx/nvtx_guard.h"
#include "libprof/nvtx/nvtx_payload_handlers.h"
#include "libprof/nvtx/nvtx_recorder.h"
#include "libprof/nvtx/utf8.h"

namespace libprof {
namespace {

using libprof::Guarded;  // the barrier (nvtx_guard.h), beside its void overload below

template <typename Body>
void Guarded(Body&& body) noexcept {
  Guarded(0, [&] {
    body();
    return 0;
  });
}

// ---- Handles and messages

nvtxDomainHandle_t EncodeDomain(uint32_t id) {
  return reinterpret_cast<nvtxDomainHandle_t>(static_cast<uintptr_t>(id));
}
uint32_t DecodeDomain(NvtxRecorder& recorder, nvtxDomainHandle_t handle) {
  return recorder.CheckedDomain(reinterpret_cast<uintptr_t>(handle));
}

nvtxStringHandle_t EncodeString(uint32_t id) {
  return reinterpret_cast<nvtxStringHandle_t>(static_cast<uintptr_t>(id) + 1);
}
uint32_t DecodeString(NvtxRecorder& recorder, nvtxStringHandle_t handle) {
  const auto value = reinterpret_cast<uintptr_t>(handle);
  return value == 0 ? 0 : recorder.CheckedStringId(value - 1);
}

uint32_t AsciiId(NvtxRecorder& recorder, const char* text) {
  return text == nullptr ? 0 : recorder.InternMessage(text);
}

uint32_t WideId(NvtxRecorder& recorder, const wchar_t* text) {
  std::string utf8;
  AppendWideAsUtf8(text, &utf8);
  return recorder.InternMessage(utf8);
}

NvtxAttributes Ascii(NvtxRecorder& recorder, const char* text) {
  return NvtxAttributes{.message_id = AsciiId(recorder, text)};
}
NvtxAttributes Wide(NvtxRecorder& recorder, const wchar_t* text) {
  return NvtxAttributes{.message_id = WideId(recorder, text)};
}

// Reads only the fields that lie within `attributes->size`, as NVTX's versioning asks. A payload
// of the payload extension (payloadType NVTX_PAYLOAD_TYPE_EXT: payload.ullValue points to
// reserved0 nvtxPayloadData_t) is copied, the other payload types are not recorded.
NvtxAttributes Decode(NvtxRecorder& recorder, const nvtxEventAttributes_t* attributes,
                      uint32_t domain = 0) {
  NvtxAttributes out;
  if (attributes == nullptr) return out;
  // A size of 0 is a common omission in hand-filled structs; read it as the current layout.
  const size_t size = attributes->size == 0 ? sizeof(nvtxEventAttributes_t) : attributes->size;
  auto has = [size](size_t offset, size_t bytes) { return offset + bytes <= size; };
  using A = nvtxEventAttributes_t;
  if (has(offsetof(A, category), sizeof(A::category))) out.category = attributes->category;
  if (has(offsetof(A, color), sizeof(A::color)) && attributes->colorType == NVTX_COLOR_ARGB) {
    out.color_argb = attributes->color;
    out.has_color = true;
  }
  if (has(offsetof(A, payload), sizeof(A::payload)) &&
      attributes->payloadType == NVTX_PAYLOAD_TYPE_EXT && attributes->reserved0 > 0) {
    out.payloads = CopyPayloads(
        recorder, domain,
        reinterpret_cast<const nvtxPayloadData_t*>(
            static_cast<uintptr_t>(attributes->payload.ullValue)),
        static_cast<size_t>(attributes->reserved0));
  }
  if (!has(offsetof(A, message), sizeof(A::message))) return out;
  switch (attributes->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
      out.message_id = AsciiId(recorder, attributes->message.ascii);
      break;
    case NVTX_MESSAGE_TYPE_UNICODE:
      out.message_id = WideId(recorder, attributes->message.unicode);
      break;
    case NVTX_MESSAGE_TYPE_REGISTERED:
      out.message_id = DecodeString(recorder, attributes->message.registered);
      break;
    default:  // no message, or a payload-extension type we do not decode
      break;
  }
  return out;
}

// Push keeps its frame even while recording is off (levels must stay right), but then skips
// the message work.
template <typename Decoder, typename Arg>
NvtxAttributes IfEnabled(NvtxRecorder& recorder, Decoder decode, Arg arg) {
  return recorder.enabled() ? decode(recorder, arg) : NvtxAttributes{};
}

// ---- CORE2: domains

void DomainMarkEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes) noexcept {
  Guarded([&] {
    NvtxRecorder& r = NvtxRecorder::Get();
    const uint32_t id = DecodeDomain(r, domain);
    if (r.enabled()) r.Mark(id, Decode(r, attributes, id));
  });
}

nvtxRangeId_t DomainRangeStartEx(nvtxDomainHandle_t domain,
                                 const nvtxEventAttributes_t* attributes) noexcept {
  return Guarded(nvtxRangeId_t{0}, [&] {
    NvtxRecorder& r = NvtxRecorder::Get();
    const uint32_t id = DecodeDomain(r, domain);
    return r.StartRange(id, r.enabled() ? Decode(r, attributes, id) : NvtxAttributes{});
  });
}

void DomainRangeEnd(nvtxDomainHandle_t /*domain: the start's domain is kept*/,
                    nvtxRangeId_t id) noexcept {
  Guarded([&] { NvtxRecorder::Get().EndRange(id); });
}

int DomainRangePushEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes) noexcept {
  return Guarded(-1, [&] {
    NvtxRecorder& r = NvtxRecorder::Get();
    const uint32_t id = DecodeDomain(r, domain);
    return r.Push(id, r.enabled() ? Decode(r, attributes, id) : NvtxAttributes{});
  });
}

int DomainRangePop(nvtxDomainHandle_t domain) noexcept {
  return Guarded(-1, [&] {
    NvtxRecorder& r = NvtxRecorder::Get();
    return r.Pop(DecodeDomain(r, domain));
  });
}

// Resources (names of OS objects) are not recorded; the handle only has to be non-null.
char g_resource_placeholder;
nvtxResourceHandle_t DomainResourceCreate(nvtxDomainHandle_t, nvtxResourceAttributes_t*) noexcept {
  return reinterpret_cast<nvtxResourceHandle_t>(&g_resource_placeholder);
}
void DomainResourceDestroy(nvtxResourceHandle_t) noexcept {}

nvtxStringHandle_t DomainRegisterStringA(nvtxDomainHandle_t, const char* text) noexcept {
  return Guarded(nvtxStringHandle_t{nullptr}, [&] {
    return EncodeString(NvtxRecorder::Get().RegisterString(text == nullptr ? "" : text));
  });
}

nvtxStringHandle_t DomainRegisterStringW(nvtxDomainHandle_t, const wchar_t* text) noexcept {
  return Guarded(nvtxStringHandle_t{nullptr}, [&] {
    std::string utf8;
    AppendWideAsUtf8(text, &utf8);
    return EncodeString(NvtxRecorder::Get().RegisterString(utf8));
  });
}

nvtxDomainHandle_t DomainCreateA(const char* name) noexcept {
  return Guarded(nvtxDomainHandle_t{nullptr}, [&] {
    return EncodeDomain(NvtxRecorder::Get().CreateDomain(name == nullptr ? "" : name));
  });
}

nvtxDomainHandle_t DomainCreateW(const wchar_t* name) noexcept {
  return Guarded(nvtxDomainHandle_t{nullptr}, [&] {
    std::string utf8;
    AppendWideAsUtf8(name, &utf8);
    return EncodeDomain(NvtxRecorder::Get().CreateDomain(utf8));
  });
}

// Kept: buffered events still refer to the domain, and another instance may use the same name.
void DomainDestroy(nvtxDomainHandle_t) noexcept {}
void Initialize(const void*) noexcept {}

// ---- CORE: the default domain

void MarkEx(const nvtxEventAttributes_t* attributes) noexcept { DomainMarkEx(nullptr, attributes); }

void MarkA(const char* message) noexcept {
  Guarded([&] {
    NvtxRecorder& r = NvtxRecorder::Get();
    if (r.enabled()) r.Mark(0, Ascii(r, message));
  });
}

void MarkW(const wchar_t* message) noexcept {
  Guarded([&] {
    NvtxRecorder& r = NvtxRecorder::Get();
    if (r.enabled()) r.Mark(0, Wide(r, message));
  });
}

nvtxRangeId_t RangeStartEx(const nvtxEventAttributes_t* attributes) noexcept {
  return DomainRangeStartEx(nullptr, attributes);
}

nvtxRangeId_t RangeStartA(const char* message) noexcept {
  return Guarded(nvtxRangeId_t{0}, [&] {
    NvtxRecorder& r = NvtxRecorder::Get();
    return r.StartRange(0, IfEnabled(r, Ascii, message));
  });
}

nvtxRangeId_t RangeStartW(const wchar_t* message) noexcept {
  return Guarded(nvtxRangeId_t{0}, [&] {
    NvtxRecorder& r = NvtxRecorder::Get();
    return r.StartRange(0, IfEnabled(r, Wide, message));
  });
}

void RangeEnd(nvtxRangeId_t id) noexcept { DomainRangeEnd(nullptr, id); }

int RangePushEx(const nvtxEventAttributes_t* attributes) noexcept {
  return DomainRangePushEx(nullptr, attributes);
}

int RangePushA(const char* message) noexcept {
  return Guarded(-1, [&] {
    NvtxRecorder& r = NvtxRecorder::Get();
    return r.Push(0, IfEnabled(r, Ascii, message));
  });
}

int RangePushW(const wchar_t* message) noexcept {
  return Guarded(-1, [&] {
    NvtxRecorder& r = NvtxRecorder::Get();
    return r.Push(0, IfEnabled(r, Wide, message));
  });
}

int RangePop() noexcept {
  return Guarded(-1, [] { return NvtxRecorder::Get().Pop(0); });
}

// ---- Tables. The explicit function type makes a handler whose signature differs from NVTX's
// prototype a compile error instead of a crash.

template <typename FunctionType>
NvtxHandlerSlot Slot(uint32_t id, FunctionType function) {
  return NvtxHandlerSlot{id, reinterpret_cast<NvtxFunctionPointer>(function)};
}

}  // namespace

// Function-local tables: built at the first install, with no global constructor.
std::span<const NvtxHandlerSlot> CoreHandlerSlots() {
  static const NvtxHandlerSlot kSlots[] = {
      Slot<nvtxMarkEx_impl_fntype>(NVTX_CBID_CORE_MarkEx, &MarkEx),
      Slot<nvtxMarkA_impl_fntype>(NVTX_CBID_CORE_MarkA, &MarkA),
      Slot<nvtxMarkW_impl_fntype>(NVTX_CBID_CORE_MarkW, &MarkW),
      Slot<nvtxRangeStartEx_impl_fntype>(NVTX_CBID_CORE_RangeStartEx, &RangeStartEx),
      Slot<nvtxRangeStartA_impl_fntype>(NVTX_CBID_CORE_RangeStartA, &RangeStartA),
      Slot<nvtxRangeStartW_impl_fntype>(NVTX_CBID_CORE_RangeStartW, &RangeStartW),
      Slot<nvtxRangeEnd_impl_fntype>(NVTX_CBID_CORE_RangeEnd, &RangeEnd),
      Slot<nvtxRangePushEx_impl_fntype>(NVTX_CBID_CORE_RangePushEx, &RangePushEx),
      Slot<nvtxRangePushA_impl_fntype>(NVTX_CBID_CORE_RangePushA, &RangePushA),
      Slot<nvtxRangePushW_impl_fntype>(NVTX_CBID_CORE_RangePushW, &RangePushW),
      Slot<nvtxRangePop_impl_fntype>(NVTX_CBID_CORE_RangePop, &RangePop),
  };
  return kSlots;
}

std::span<const NvtxHandlerSlot> Core2HandlerSlots() {
  static const NvtxHandlerSlot kSlots[] = {
      Slot<nvtxDomainMarkEx_impl_fntype>(NVTX_CBID_CORE2_DomainMarkEx, &DomainMarkEx),
      Slot<nvtxDomainRangeStartEx_impl_fntype>(NVTX_CBID_CORE2_DomainRangeStartEx,
                                               &DomainRangeStartEx),
      Slot<nvtxDomainRangeEnd_impl_fntype>(NVTX_CBID_CORE2_DomainRangeEnd, &DomainRangeEnd),
      Slot<nvtxDomainRangePushEx_impl_fntype>(NVTX_CBID_CORE2_DomainRangePushEx,
                                              &DomainRangePushEx),
      Slot<nvtxDomainRangePop_impl_fntype>(NVTX_CBID_CORE2_DomainRangePop, &DomainRangePop),
      Slot<nvtxDomainResourceCreate_impl_fntype>(NVTX_CBID_CORE2_DomainResourceCreate,
                                                 &DomainResourceCreate),
      Slot<nvtxDomainResourceDestroy_impl_fntype>(NVTX_CBID_CORE2_DomainResourceDestroy,
                                                  &DomainResourceDestroy),
      Slot<nvtxDomainRegisterStringA_impl_fntype>(NVTX_CBID_CORE2_DomainRegisterStringA,
                                                  &DomainRegisterStringA),
      Slot<nvtxDomainRegisterStringW_impl_fntype>(NVTX_CBID_CORE2_DomainRegisterStringW,
                                                  &DomainRegisterStringW),
      Slot<nvtxDomainCreateA_impl_fntype>(NVTX_CBID_CORE2_DomainCreateA, &DomainCreateA),
      Slot<nvtxDomainCreateW_impl_fntype>(NVTX_CBID_CORE2_DomainCreateW, &DomainCreateW),
      Slot<nvtxDomainDestroy_impl_fntype>(NVTX_CBID_CORE2_DomainDestroy, &DomainDestroy),
      Slot<nvtxInitialize_impl_fntype>(NVTX_CBID_CORE2_Initialize, &Initialize),
  };
  return kSlots;
}

}  // namespace libprof
