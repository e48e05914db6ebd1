// Proves that payload schemas get the layout a C compiler gives their struct, and that payloads
// decode by their schema (NCCL's layouts among them) or stay raw with a reason when the schema is
// unknown, the size disagrees or an entry lies outside the bytes.
#include "proto/nvtx_payload.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace libprof::nvtx_payload {
namespace {

// A string table and a schema registry, as a trace gives them to the analysis.
struct Registry {
  std::vector<std::string> strings{""};
  std::map<uint64_t, NvtxPayloadSchema> schemas;

  uint32_t Name(const std::string& text) {
    strings.push_back(text);
    return static_cast<uint32_t>(strings.size() - 1);
  }
  SchemaLookup Lookup() const {
    return [this](uint64_t id) -> const NvtxPayloadSchema* {
      auto it = schemas.find(id);
      return it == schemas.end() ? nullptr : &it->second;
    };
  }
  void Add(NvtxPayloadSchema schema) {
    ResolveLayout(Lp64TypeInfo(), Lookup(), &schema);
    schemas[schema.schema_id] = schema;
  }
  DecodedPayload Decode(uint64_t id, const void* data, size_t size) const {
    return nvtx_payload::Decode(
        NvtxPayload{.schema_id = id, .data = std::string(static_cast<const char*>(data), size)},
        Lookup(), strings);
  }
};

template <typename T>
std::string Bytes(const T& value) {
  return std::string(reinterpret_cast<const char*>(&value), sizeof(value));
}

// NCCL's layouts (src/include/nvtx_payload_schemas.h) and ids (src/include/nvtx.h).
constexpr uint64_t kNcclAllReduce = kSchemaIdStaticStart + 5;
constexpr uint64_t kNcclCommInitRank = kSchemaIdStaticStart + 0;
constexpr uint64_t kNcclRedOp = kSchemaIdStaticStart + 24;
struct NcclAllReduce {
  uint64_t comm;
  size_t bytes;
  int op;  // ncclRedOp_t
};
struct NcclCommInitRank {
  uint64_t newcomm;
  int nranks;
  int myrank;
  int cudaDev;
};

void AddNccl(Registry& r) {
  NvtxPayloadSchema redop{.domain_id = 1, .schema_id = kNcclRedOp, .static_size_bytes = 4,
                          .is_enum = true};
  for (auto [name, value] : {std::pair{"Sum", 0}, {"Product", 1}, {"Max", 2}, {"Min", 3},
                             {"Avg", 4}}) {
    redop.enum_values.push_back({.name_id = r.Name(name), .value = uint64_t(value)});
  }
  r.Add(redop);
  // NCCL gives offsets (offsetof) and the static size.
  r.Add({.domain_id = 1,
         .schema_id = kNcclAllReduce,
         .schema_type = kSchemaTypeStatic,
         .static_size_bytes = sizeof(NcclAllReduce),
         .entries = {{.type = kTypeUint64, .name_id = r.Name("NCCL communicator ID"),
                      .offset_bytes = offsetof(NcclAllReduce, comm)},
                     {.type = kTypeSize, .name_id = r.Name("Message size [bytes]"),
                      .offset_bytes = offsetof(NcclAllReduce, bytes)},
                     {.type = kNcclRedOp, .name_id = r.Name("Reduction operation"),
                      .offset_bytes = offsetof(NcclAllReduce, op)}}});
  // Here without offsets and size: the layout must come out as the compiler's.
  r.Add({.domain_id = 1,
         .schema_id = kNcclCommInitRank,
         .schema_type = kSchemaTypeStatic,
         .entries = {{.type = kTypeUint64, .name_id = r.Name("NCCL communicator ID")},
                     {.type = kTypeInt, .name_id = r.Name("No. of ranks")},
                     {.type = kTypeInt, .name_id = r.Name("Rank")},
                     {.type = kTypeInt, .name_id = r.Name("CUDA device")}}});
}

TEST(NvtxPayloadTest, NcclAllReduceDecodes) {
  Registry r;
  AddNccl(r);
  const NcclAllReduce payload{.comm = 0xABCDEF0123456789ull, .bytes = 4 << 20, .op = 4};
  const DecodedPayload decoded = r.Decode(kNcclAllReduce, &payload, sizeof(payload));
  ASSERT_TRUE(decoded.decoded) << decoded.problem;
  ASSERT_EQ(decoded.fields.size(), 3u);
  ASSERT_NE(decoded.Find("NCCL communicator ID"), nullptr);
  EXPECT_EQ(decoded.Find("NCCL communicator ID")->as_unsigned, 0xABCDEF0123456789ull);
  EXPECT_EQ(decoded.Find("Message size [bytes]")->as_unsigned, 4u << 20);
  EXPECT_EQ(decoded.Find("Message size [bytes]")->text, "4194304");
  EXPECT_EQ(decoded.Find("Reduction operation")->text, "Avg");  // enum by name
  EXPECT_EQ(decoded.Find("Reduction operation")->as_signed, 4);
}

TEST(NvtxPayloadTest, LayoutWithoutOffsetsFollowsNaturalAlignment) {
  Registry r;
  AddNccl(r);
  const NvtxPayloadSchema& s = r.schemas.at(kNcclCommInitRank);
  EXPECT_EQ(s.entries[1].offset_bytes, offsetof(NcclCommInitRank, nranks));
  EXPECT_EQ(s.entries[3].offset_bytes, offsetof(NcclCommInitRank, cudaDev));
  EXPECT_EQ(s.static_size_bytes, sizeof(NcclCommInitRank));  // 20 rounded up to 24
  const NcclCommInitRank payload{.newcomm = 77, .nranks = 8, .myrank = 3, .cudaDev = 3};
  const DecodedPayload decoded = r.Decode(kNcclCommInitRank, &payload, sizeof(payload));
  ASSERT_TRUE(decoded.decoded) << decoded.problem;
  EXPECT_EQ(decoded.Find("No. of ranks")->as_signed, 8);
  EXPECT_EQ(decoded.Find("Rank")->as_signed, 3);
}

TEST(NvtxPayloadTest, MixedAlignmentArraysStringsAndNesting) {
  struct Inner {
    int16_t a;
    double b;
  };
  struct Outer {
    char tag;
    Inner inner;
    uint8_t small[3];
    char name[8];
    int32_t negative;
  };
  Registry r;
  r.Add({.schema_id = kSchemaIdStaticStart + 100,
         .schema_type = kSchemaTypeStatic,
         .entries = {{.type = kTypeInt16, .name_id = r.Name("a")},
                     {.type = kTypeDouble, .name_id = r.Name("b")}}});
  r.Add({.schema_id = kSchemaIdStaticStart + 101,
         .schema_type = kSchemaTypeStatic,
         .entries = {{.type = kTypeChar, .name_id = r.Name("tag")},
                     {.type = kSchemaIdStaticStart + 100, .name_id = r.Name("inner")},
                     {.flags = kFlagArrayFixedSize, .type = kTypeUint8, .name_id = r.Name("small"),
                      .array_length = 3},
                     {.type = kTypeCstring, .name_id = r.Name("name"), .array_length = 8},
                     {.type = kTypeInt32, .name_id = r.Name("negative")}}});
  const NvtxPayloadSchema& s = r.schemas.at(kSchemaIdStaticStart + 101);
  EXPECT_EQ(s.entries[1].offset_bytes, offsetof(Outer, inner));
  EXPECT_EQ(s.entries[2].offset_bytes, offsetof(Outer, small));
  EXPECT_EQ(s.entries[3].offset_bytes, offsetof(Outer, name));
  EXPECT_EQ(s.entries[4].offset_bytes, offsetof(Outer, negative));
  EXPECT_EQ(s.static_size_bytes, sizeof(Outer));

  Outer value{};
  value.tag = 'x';
  value.inner = {.a = -2, .b = 1.5};
  value.small[0] = 1, value.small[1] = 2, value.small[2] = 255;
  std::strcpy(value.name, "ring");
  value.negative = -7;
  const DecodedPayload decoded = r.Decode(kSchemaIdStaticStart + 101, &value, sizeof(value));
  ASSERT_TRUE(decoded.decoded) << decoded.problem;
  EXPECT_EQ(decoded.Find("inner.a")->as_signed, -2);
  EXPECT_EQ(decoded.Find("inner.b")->text, "1.500000");
  EXPECT_EQ(decoded.Find("small")->text, "[1, 2, 255]");
  EXPECT_EQ(decoded.Find("name")->text, "ring");
  EXPECT_EQ(decoded.Find("negative")->as_signed, -7);
}

TEST(NvtxPayloadTest, UnknownSchemaIsKeptRawWithItsId) {
  Registry r;
  const uint64_t value = 5;
  const DecodedPayload decoded = r.Decode(kSchemaIdStaticStart + 9, &value, sizeof(value));
  EXPECT_FALSE(decoded.decoded);
  EXPECT_EQ(decoded.schema_id, kSchemaIdStaticStart + 9);
  EXPECT_EQ(decoded.problem, "unknown schema 16777225");
  EXPECT_TRUE(decoded.fields.empty());
}

TEST(NvtxPayloadTest, SizeDisagreeingWithSchemaIsKeptRaw) {
  Registry r;
  AddNccl(r);
  const NcclAllReduce payload{};
  DecodedPayload decoded = r.Decode(kNcclAllReduce, &payload, 12);  // cut short
  EXPECT_FALSE(decoded.decoded);
  EXPECT_EQ(decoded.problem, "size 12, schema 16777221 says 24");
  const std::string longer = Bytes(payload) + "xx";
  decoded = r.Decode(kNcclAllReduce, longer.data(), longer.size());
  EXPECT_FALSE(decoded.decoded);
}

TEST(NvtxPayloadTest, EntryPastTheEndOfADynamicPayloadIsAProblemNotACrash) {
  Registry r;
  r.Add({.schema_id = kSchemaIdStaticStart + 7,
         .schema_type = kSchemaTypeDynamic,
         .entries = {{.type = kTypeUint64, .name_id = r.Name("a")},
                     {.type = kTypeUint64, .name_id = r.Name("b"), .offset_bytes = 1ull << 40}}});
  const uint64_t value[2] = {1, 2};
  const DecodedPayload decoded = r.Decode(kSchemaIdStaticStart + 7, value, sizeof(value));
  EXPECT_FALSE(decoded.decoded);
  EXPECT_NE(decoded.problem.find("entry 'b' ends at byte"), std::string::npos) << decoded.problem;
}

TEST(NvtxPayloadTest, VariableLayoutEntriesAreNamedNotRead) {
  Registry r;
  r.Add({.schema_id = kSchemaIdStaticStart + 8,
         .schema_type = kSchemaTypeDynamic,
         .entries = {{.type = kTypeUint32, .name_id = r.Name("n")},
                     {.flags = kFlagArrayLengthIndex, .type = kTypeUint32, .name_id = r.Name("v"),
                      .array_length = 0},
                     {.type = kTypeUint32, .name_id = r.Name("after")}}});
  const NvtxPayloadSchema& s = r.schemas.at(kSchemaIdStaticStart + 8);
  EXPECT_EQ(s.entries[1].size_bytes, 0u);
  EXPECT_EQ(s.entries[2].size_bytes, 0u);  // its place depends on the array before it
  const uint32_t data[4] = {2, 10, 11, 99};
  const DecodedPayload decoded = r.Decode(kSchemaIdStaticStart + 8, data, sizeof(data));
  ASSERT_TRUE(decoded.decoded) << decoded.problem;
  EXPECT_EQ(decoded.Find("n")->as_unsigned, 2u);
  EXPECT_EQ(decoded.Find("v")->text, "(not decoded: variable layout)");
  EXPECT_FALSE(decoded.Find("v")->is_integer);
}

TEST(NvtxPayloadTest, PredefinedTypeAsSchemaIdIsOneValue) {
  Registry r;
  const int32_t value = -42;
  DecodedPayload decoded = r.Decode(kTypeInt32, &value, sizeof(value));
  ASSERT_TRUE(decoded.decoded);
  EXPECT_EQ(decoded.fields.at(0).as_signed, -42);
  decoded = r.Decode(kTypeInt32, &value, 2);
  EXPECT_FALSE(decoded.decoded);
  decoded = r.Decode(kSchemaRaw, &value, sizeof(value));
  EXPECT_FALSE(decoded.decoded);
  EXPECT_EQ(decoded.problem, "raw payload");
}

TEST(NvtxPayloadTest, SchemaThatContainsItselfDoesNotRecurseForever) {
  Registry r;
  r.schemas[kSchemaIdStaticStart + 3] = {
      .schema_id = kSchemaIdStaticStart + 3,
      .schema_type = kSchemaTypeStatic,
      .static_size_bytes = 8,
      .entries = {{.type = kSchemaIdStaticStart + 3, .name_id = r.Name("self"), .size_bytes = 8}}};
  const uint64_t value = 1;
  const DecodedPayload decoded = r.Decode(kSchemaIdStaticStart + 3, &value, sizeof(value));
  EXPECT_TRUE(decoded.decoded);  // stops at the nesting limit, with some rendering
}

}  // namespace
}  // namespace libprof::nvtx_payload
