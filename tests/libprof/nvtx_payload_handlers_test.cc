// libprof's payload-extension handlers installed into a fake extension module and called through
// its slots as NCCL calls them: NCCL's schemas and enum registered from nvtxPayloadSchemaAttr_t
// built in memory, a collective's range pushed with an NVTX_PAYLOAD_TYPE_EXT payload, a
// communicator's payload given at pop; the drained trace records decode back to NCCL's values.
#include "libprof/nvtx/nvtx_payload_handlers.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "libprof/nvtx/nvtx_api.h"
#include <nvtx3/nvToolsExtPayload.h>

#include "libprof/nvtx/nvtx_handlers.h"
#include "libprof/nvtx/nvtx_recorder.h"
#include "proto/nvtx_payload.h"
#include "tests/libprof/nvtx_test_util.h"

namespace libprof {
namespace {

using nvtx_test::DrainAll;

// NCCL's definitions (src/include/nvtx.h, nvtx_payload_schemas.h, init_nvtx.cc), restated.
constexpr uint64_t kAllReduceId = NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 5;
constexpr uint64_t kCommInitRankId = NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 0;
constexpr uint64_t kRedOpId = NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 24;
struct AllReduceParams {
  uint64_t comm;
  size_t bytes;
  int op;
};
struct CommInitRankParams {
  uint64_t newcomm;
  int nranks;
  int myrank;
  int cudaDev;
};
const nvtxPayloadSchemaEntry_t kAllReduceSchema[] = {
    {0, NVTX_PAYLOAD_ENTRY_TYPE_UINT64, "NCCL communicator ID", nullptr, 0,
     offsetof(AllReduceParams, comm), nullptr, nullptr},
    {0, NVTX_PAYLOAD_ENTRY_TYPE_SIZE, "Message size [bytes]", nullptr, 0,
     offsetof(AllReduceParams, bytes), nullptr, nullptr},
    {0, kRedOpId, "Reduction operation", nullptr, 0, offsetof(AllReduceParams, op), nullptr,
     nullptr},
};
const nvtxPayloadSchemaEntry_t kCommInitRankSchema[] = {
    {0, NVTX_PAYLOAD_ENTRY_TYPE_UINT64, "NCCL communicator ID", nullptr, 0,
     offsetof(CommInitRankParams, newcomm), nullptr, nullptr},
    {0, NVTX_PAYLOAD_ENTRY_TYPE_INT, "No. of ranks", nullptr, 0,
     offsetof(CommInitRankParams, nranks), nullptr, nullptr},
    {0, NVTX_PAYLOAD_ENTRY_TYPE_INT, "Rank", nullptr, 0, offsetof(CommInitRankParams, myrank),
     nullptr, nullptr},
    {0, NVTX_PAYLOAD_ENTRY_TYPE_INT, "CUDA device", nullptr, 0,
     offsetof(CommInitRankParams, cudaDev), nullptr, nullptr},
};
const nvtxPayloadEnum_t kRedOps[] = {
    {"Sum", 0, 0}, {"Product", 1, 0}, {"Max", 2, 0}, {"Min", 3, 0}, {"Avg", 4, 0}};

nvtxPayloadSchemaAttr_t StaticSchema(const nvtxPayloadSchemaEntry_t* entries, size_t count,
                                     uint64_t id, size_t size) {
  return {NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES |
              NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES |
              NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_SCHEMA_ID,
          nullptr, NVTX_PAYLOAD_SCHEMA_TYPE_STATIC, NVTX_PAYLOAD_SCHEMA_FLAG_NONE, entries, count,
          size, 0, id, nullptr};
}

// One NVTX instance's payload module, as nvtxExtImplPayload_v1.h lays it out.
struct FakeModule {
  intptr_t slots[64] = {};
  nvtxExtModuleSegment_t segment{0, 63, slots};
  nvtxExtModuleInfo_t info{NVTX_VERSION, sizeof(nvtxExtModuleInfo_t), NVTX_EXT_PAYLOAD_MODULEID,
                           NVTX_EXT_PAYLOAD_COMPATID, 1, &segment, nullptr, nullptr};
  template <typename F>
  F At(size_t cbid) const {
    return reinterpret_cast<F>(slots[cbid]);
  }
};

using SchemaRegisterFn = uint64_t (*)(nvtxDomainHandle_t, const nvtxPayloadSchemaAttr_t*);
using EnumRegisterFn = uint64_t (*)(nvtxDomainHandle_t, const nvtxPayloadEnumAttr_t*);
using PopPayloadFn = int (*)(nvtxDomainHandle_t, const nvtxPayloadData_t*, size_t);
using PushPayloadFn = int (*)(nvtxDomainHandle_t, const nvtxPayloadData_t*, size_t);
using DomainPushExFn = int (*)(nvtxDomainHandle_t, const nvtxEventAttributes_t*);
using DomainPopFn = int (*)(nvtxDomainHandle_t);

template <typename F>
F Core2(uint32_t cbid) {
  for (const NvtxHandlerSlot& slot : Core2HandlerSlots()) {
    if (slot.callback_id == cbid) return reinterpret_cast<F>(slot.function);
  }
  return nullptr;
}

class NvtxPayloadHandlersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    recorder().SetEnabled(true);
    DrainAll(recorder());
    ASSERT_EQ(InstallNvtxExtension(&module_.info), 1);
    domain_ = reinterpret_cast<nvtxDomainHandle_t>(
        static_cast<uintptr_t>(recorder().CreateDomain("NCCL")));
  }
  static NvtxRecorder& recorder() { return NvtxRecorder::Get(); }

  nvtx_payload::SchemaLookup Lookup(const std::vector<NvtxPayloadSchema>& schemas) {
    return [&schemas, this](uint64_t id) -> const NvtxPayloadSchema* {
      for (const NvtxPayloadSchema& s : schemas) {
        if (s.schema_id == id && s.domain_id == reinterpret_cast<uintptr_t>(domain_)) return &s;
      }
      return nullptr;
    };
  }
  std::vector<std::string> Strings() {
    std::vector<std::pair<uint32_t, std::string>> pairs;
    nvtx_test::TraceStrings(recorder()).CollectFrom(0, &pairs);
    std::vector<std::string> strings(pairs.size() + 1);
    for (auto& [id, text] : pairs) {
      if (id >= strings.size()) strings.resize(id + 1);
      strings[id] = text;
    }
    return strings;
  }

  FakeModule module_;
  nvtxDomainHandle_t domain_ = nullptr;
};

TEST_F(NvtxPayloadHandlersTest, DeclinesOtherExtensionModules) {
  FakeModule counters;
  counters.info.moduleId = 3;
  EXPECT_EQ(InstallNvtxExtension(&counters.info), 0);
  EXPECT_EQ(counters.slots[0], 0);
  EXPECT_EQ(InstallNvtxExtension(nullptr), 0);
}

TEST_F(NvtxPayloadHandlersTest, NcclCollectiveAndCommunicatorRoundTrip) {
  const auto register_schema =
      module_.At<SchemaRegisterFn>(NVTX3EXT_CBID_nvtxPayloadSchemaRegister);
  const auto register_enum = module_.At<EnumRegisterFn>(NVTX3EXT_CBID_nvtxPayloadEnumRegister);
  ASSERT_NE(register_schema, nullptr);
  ASSERT_NE(register_enum, nullptr);
  const nvtxPayloadEnumAttr_t redops{
      NVTX_PAYLOAD_ENUM_ATTR_FIELD_ENTRIES | NVTX_PAYLOAD_ENUM_ATTR_FIELD_NUM_ENTRIES |
          NVTX_PAYLOAD_ENUM_ATTR_FIELD_SIZE | NVTX_PAYLOAD_ENUM_ATTR_FIELD_SCHEMA_ID,
      nullptr, kRedOps, 5, sizeof(int), kRedOpId, nullptr};
  EXPECT_EQ(register_enum(domain_, &redops), kRedOpId);
  auto all_reduce = StaticSchema(kAllReduceSchema, 3, kAllReduceId, sizeof(AllReduceParams));
  EXPECT_EQ(register_schema(domain_, &all_reduce), kAllReduceId);
  auto init = StaticSchema(kCommInitRankSchema, 4, kCommInitRankId, sizeof(CommInitRankParams));
  EXPECT_EQ(register_schema(domain_, &init), kCommInitRankId);

  // ncclCommInitRankConfig: a plain push, the payload given at pop (NVTX3_RANGE_ADD_PAYLOAD).
  nvtxEventAttributes_t plain{};
  plain.version = NVTX_VERSION;
  plain.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  Core2<DomainPushExFn>(NVTX_CBID_CORE2_DomainRangePushEx)(domain_, &plain);
  const CommInitRankParams comm{.newcomm = 0x1234, .nranks = 8, .myrank = 5, .cudaDev = 1};
  const nvtxPayloadData_t at_pop{kCommInitRankId, sizeof(comm), &comm};
  EXPECT_EQ(module_.At<PopPayloadFn>(NVTX3EXT_CBID_nvtxRangePopPayload)(domain_, &at_pop, 1), 0);

  // ncclAllReduce: NVTX3_FUNC_WITH_PARAMS pushes event attributes that point at the payload.
  const AllReduceParams params{.comm = 0x1234, .bytes = 1 << 20, .op = 0};
  const nvtxPayloadData_t data[] = {{kAllReduceId, sizeof(params), &params}};
  nvtxEventAttributes_t attributes = plain;
  attributes.payloadType = NVTX_PAYLOAD_TYPE_EXT;
  attributes.reserved0 = 1;
  attributes.payload.ullValue = reinterpret_cast<uintptr_t>(data);
  Core2<DomainPushExFn>(NVTX_CBID_CORE2_DomainRangePushEx)(domain_, &attributes);
  Core2<DomainPopFn>(NVTX_CBID_CORE2_DomainRangePop)(domain_);

  const auto drained = DrainAll(recorder());
  ASSERT_EQ(drained.events.size(), 2u);
  ASSERT_EQ(drained.schemas.size(), 3u);
  const auto strings = Strings();
  const auto lookup = Lookup(drained.schemas);

  ASSERT_EQ(drained.events[0].payloads.size(), 1u);
  const auto init_fields = nvtx_payload::Decode(drained.events[0].payloads[0], lookup, strings);
  ASSERT_TRUE(init_fields.decoded) << init_fields.problem;
  EXPECT_EQ(init_fields.Find("No. of ranks")->as_signed, 8);
  EXPECT_EQ(init_fields.Find("Rank")->as_signed, 5);

  ASSERT_EQ(drained.events[1].payloads.size(), 1u);
  const auto fields = nvtx_payload::Decode(drained.events[1].payloads[0], lookup, strings);
  ASSERT_TRUE(fields.decoded) << fields.problem;
  EXPECT_EQ(fields.Find("NCCL communicator ID")->as_unsigned, 0x1234u);
  EXPECT_EQ(fields.Find("Message size [bytes]")->as_unsigned, 1u << 20);
  EXPECT_EQ(fields.Find("Reduction operation")->text, "Sum");
}

TEST_F(NvtxPayloadHandlersTest, UnsizedPayloadTakesItsSchemaSizeAndUnknownOnesKeepTheirId) {
  auto all_reduce = StaticSchema(kAllReduceSchema, 2, kAllReduceId, sizeof(AllReduceParams));
  ASSERT_EQ(RegisterSchema(recorder(), reinterpret_cast<uintptr_t>(domain_), &all_reduce),
            kAllReduceId);
  const AllReduceParams params{.comm = 9, .bytes = 64, .op = 2};
  const nvtxPayloadData_t data[] = {{kAllReduceId, SIZE_MAX, &params},
                                    {NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 999, SIZE_MAX, &params},
                                    {kAllReduceId, sizeof(params), nullptr}};
  const auto copied =
      CopyPayloads(recorder(), static_cast<uint32_t>(reinterpret_cast<uintptr_t>(domain_)), data, 3);
  ASSERT_EQ(copied.size(), 3u);
  EXPECT_EQ(copied[0].data.size(), sizeof(params));
  EXPECT_EQ(copied[1].schema_id, NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 999);
  EXPECT_TRUE(copied[1].data.empty());
  EXPECT_TRUE(copied[2].data.empty());  // a null pointer is not read
  DrainAll(recorder());
}

TEST_F(NvtxPayloadHandlersTest, SchemaWithoutIdGetsADynamicOne) {
  auto attr = StaticSchema(kCommInitRankSchema, 4, 0, 0);
  attr.fieldMask &= ~uint64_t{NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_SCHEMA_ID};
  const uint64_t first = RegisterSchema(recorder(), 0, &attr);
  const uint64_t second = RegisterSchema(recorder(), 0, &attr);
  EXPECT_GE(first, NVTX_PAYLOAD_SCHEMA_ID_DYNAMIC_START);
  EXPECT_NE(first, second);
  EXPECT_EQ(recorder().SchemaStaticSize(0, first), sizeof(CommInitRankParams));
  EXPECT_EQ(RegisterSchema(recorder(), 0, nullptr), 0u);
  DrainAll(recorder());
}

}  // namespace
}  // namespace libprof
