#include "proto/trace_wire.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "proto/record_encoders.h"
#include "proto/trace.pb.h"
#include "proto/trace_writer.h"
#include "tests/proto/trace_test_util.h"

namespace libprof {
namespace {

using Fields = std::vector<std::pair<std::string, uint32_t>>;

// Expects `message` to have exactly `fields`, with those numbers.
void ExpectFields(const google::protobuf::Descriptor* message, const Fields& fields) {
  EXPECT_EQ(message->field_count(), static_cast<int>(fields.size()))
      << message->name() << ": proto/trace_wire.h does not list every field";
  for (const auto& [name, number] : fields) {
    const google::protobuf::FieldDescriptor* field = message->FindFieldByName(name);
    ASSERT_NE(field, nullptr) << message->name() << "." << name;
    EXPECT_EQ(static_cast<uint32_t>(field->number()), number) << message->name() << "." << name;
  }
}

// Proves the hand-written field numbers of the protozero writer match trace.proto, field by
// field and message by message, so a schema edit cannot silently desynchronise the writer.
TEST(TraceWireTest, FieldNumbersMatchSchema) {
  using namespace wire;
  ExpectFields(trace::TraceFile::descriptor(),
               {{"header", trace_file::kHeader}, {"chunk", trace_file::kChunk}});
  ExpectFields(trace::Header::descriptor(), {{"format", header::kFormat},
                                             {"schema_version", header::kSchemaVersion},
                                             {"libprof_version", header::kLibprofVersion},
                                             {"pid", header::kPid},
                                             {"parent_pid", header::kParentPid},
                                             {"hostname", header::kHostname},
                                             {"command_line", header::kCommandLine},
                                             {"start_wall_time_ns", header::kStartWallTimeNs},
                                             {"timebase", header::kTimebase},
                                             {"wall_clock_offset_ns", header::kWallClockOffsetNs},
                                             {"start_time_ns", header::kStartTimeNs},
                                             {"cuda_driver_version", header::kCudaDriverVersion},
                                             {"cuda_runtime_version", header::kCudaRuntimeVersion},
                                             {"cupti_version", header::kCuptiVersion},
                                             {"cupti_path", header::kCuptiPath},
                                             {"devices", header::kDevices},
                                             {"settings", header::kSettings},
                                             {"capture_status", header::kCaptureStatus},
                                             {"rank", header::kRank},
                                             {"rank_source", header::kRankSource}});
  ExpectFields(trace::Header::descriptor()->FindFieldByName("settings")->message_type(),
               {{"key", header::kMapKey}, {"value", header::kMapValue}});
  ExpectFields(trace::Device::descriptor(),
               {{"id", device::kId},
                {"name", device::kName},
                {"uuid", device::kUuid},
                {"sm_count", device::kSmCount},
                {"global_memory_bytes", device::kGlobalMemoryBytes},
                {"compute_capability_major", device::kComputeCapabilityMajor},
                {"compute_capability_minor", device::kComputeCapabilityMinor},
                {"pci_bus_id", device::kPciBusId},
                {"core_clock_khz", device::kCoreClockKhz},
                {"memory_clock_khz", device::kMemoryClockKhz},
                {"memory_bus_width_bits", device::kMemoryBusWidthBits},
                {"max_threads_per_block", device::kMaxThreadsPerBlock},
                {"l2_cache_bytes", device::kL2CacheBytes}});
  // The chunk's own fields, then one list per record kind of proto/record_kinds.h, whose name
  // there must be the field's name here (the decoder relies on it).
  Fields chunk_fields = {{"process_index", chunk::kProcessIndex},
                         {"sequence", chunk::kSequence},
                         {"base_time_ns", chunk::kBaseTimeNs},
                         {"strings", chunk::kStrings},
                         {"threads", chunk::kThreads},
                         {"api_names", chunk::kApiNames},
                         {"kernel_shapes", chunk::kKernelShapes},
                         {"run_end", chunk::kRunEnd},
                         {"runtime_infos", chunk::kRuntimeInfos}};
#define LIBPROF_KIND_FIELD(Type, list, field, role) chunk_fields.emplace_back(#list, field);
  LIBPROF_RECORD_KINDS(LIBPROF_KIND_FIELD)
#undef LIBPROF_KIND_FIELD
  ExpectFields(trace::Chunk::descriptor(), chunk_fields);
  ExpectFields(trace::InternedString::descriptor(),
               {{"id", interned_string::kId}, {"value", interned_string::kValue}});
  ExpectFields(trace::ApiName::descriptor(), {{"domain", api_name::kDomain},
                                              {"callback_id", api_name::kCallbackId},
                                              {"name_id", api_name::kNameId}});
  ExpectFields(trace::ApiCall::descriptor(), {{"domain", api_call::kDomain},
                                              {"callback_id", api_call::kCallbackId},
                                              {"start_delta_ns", api_call::kStartDeltaNs},
                                              {"duration_ns", api_call::kDurationNs},
                                              {"correlation_delta", api_call::kCorrelationDelta},
                                              {"thread_index", api_call::kThreadIndex},
                                              {"return_value", api_call::kReturnValue},
                                              {"nested", api_call::kNested},
                                              {"stack_id", api_call::kStackId},
                                              {"stream_id_plus_one", api_call::kStreamIdPlusOne}});
  ExpectFields(trace::StackModule::descriptor(), {{"id", stack_module::kId},
                                                  {"path_id", stack_module::kPathId},
                                                  {"build_id", stack_module::kBuildId},
                                                  {"executable", stack_module::kExecutable}});
  ExpectFields(trace::StackFrame::descriptor(),
               {{"id", stack_frame::kId},
                {"address", stack_frame::kAddress},
                {"module_id", stack_frame::kModuleId},
                {"module_offset", stack_frame::kModuleOffset},
                {"function_id", stack_frame::kFunctionId},
                {"function_offset", stack_frame::kFunctionOffset}});
  ExpectFields(trace::CallStack::descriptor(),
               {{"id", call_stack::kId},
                {"frame_ids", call_stack::kFrameIds},
                {"python_frames", call_stack::kPythonFrames}});
  ExpectFields(trace::PythonFrame::descriptor(), {{"file_id", python_frame::kFileId},
                                                  {"line", python_frame::kLine},
                                                  {"function_id", python_frame::kFunctionId}});
  ExpectFields(trace::KernelShape::descriptor(),
               {{"id", kernel_shape::kId},
                {"name_id", kernel_shape::kNameId},
                {"demangled_name_id", kernel_shape::kDemangledNameId},
                {"grid", kernel_shape::kGrid},
                {"block", kernel_shape::kBlock},
                {"registers_per_thread", kernel_shape::kRegistersPerThread},
                {"static_shared_memory_bytes", kernel_shape::kStaticSharedMemoryBytes},
                {"dynamic_shared_memory_bytes", kernel_shape::kDynamicSharedMemoryBytes},
                {"local_memory_per_thread_bytes", kernel_shape::kLocalMemoryPerThreadBytes},
                {"device_id", kernel_shape::kDeviceId},
                {"context_id", kernel_shape::kContextId},
                {"cluster", kernel_shape::kCluster},
                {"shared_memory_config_bytes", kernel_shape::kSharedMemoryConfigBytes}});
  ExpectFields(trace::Kernel::descriptor(), {{"shape_id", kernel::kShapeId},
                                             {"start_delta_ns", kernel::kStartDeltaNs},
                                             {"duration_ns", kernel::kDurationNs},
                                             {"correlation_delta", kernel::kCorrelationDelta},
                                             {"stream_id", kernel::kStreamId},
                                             {"graph_id", kernel::kGraphId},
                                             {"graph_node_id", kernel::kGraphNodeId},
                                             {"device_launched", kernel::kDeviceLaunched}});
  ExpectFields(trace::Memcpy::descriptor(),
               {{"copy_kind", memcpy_record::kCopyKind},
                {"src_kind", memcpy_record::kSrcKind},
                {"dst_kind", memcpy_record::kDstKind},
                {"bytes", memcpy_record::kBytes},
                {"async", memcpy_record::kAsync},
                {"start_delta_ns", memcpy_record::kStartDeltaNs},
                {"duration_ns", memcpy_record::kDurationNs},
                {"correlation_delta", memcpy_record::kCorrelationDelta},
                {"device_id", memcpy_record::kDeviceId},
                {"context_id", memcpy_record::kContextId},
                {"stream_id", memcpy_record::kStreamId},
                {"graph_id", memcpy_record::kGraphId},
                {"graph_node_id", memcpy_record::kGraphNodeId},
                {"src_device_id", memcpy_record::kSrcDeviceId},
                {"dst_device_id", memcpy_record::kDstDeviceId}});
  ExpectFields(trace::Memset::descriptor(),
               {{"memory_kind", memset_record::kMemoryKind},
                {"bytes", memset_record::kBytes},
                {"value", memset_record::kValue},
                {"async", memset_record::kAsync},
                {"start_delta_ns", memset_record::kStartDeltaNs},
                {"duration_ns", memset_record::kDurationNs},
                {"correlation_delta", memset_record::kCorrelationDelta},
                {"device_id", memset_record::kDeviceId},
                {"context_id", memset_record::kContextId},
                {"stream_id", memset_record::kStreamId},
                {"graph_id", memset_record::kGraphId}});
  ExpectFields(trace::Synchronization::descriptor(),
               {{"type", synchronization::kType},
                {"start_delta_ns", synchronization::kStartDeltaNs},
                {"duration_ns", synchronization::kDurationNs},
                {"correlation_delta", synchronization::kCorrelationDelta},
                {"context_id", synchronization::kContextId},
                {"stream_id", synchronization::kStreamId},
                {"event_id", synchronization::kEventId},
                {"event_sync_id", synchronization::kEventSyncId},
                {"return_value", synchronization::kReturnValue}});
  ExpectFields(trace::NvtxEvent::descriptor(), {{"kind", nvtx_event::kKind},
                                                {"start_delta_ns", nvtx_event::kStartDeltaNs},
                                                {"duration_ns", nvtx_event::kDurationNs},
                                                {"thread_index", nvtx_event::kThreadIndex},
                                                {"end_thread_index", nvtx_event::kEndThreadIndex},
                                                {"domain_id", nvtx_event::kDomainId},
                                                {"message_id", nvtx_event::kMessageId},
                                                {"category", nvtx_event::kCategory},
                                                {"color_argb", nvtx_event::kColorArgb},
                                                {"has_color", nvtx_event::kHasColor},
                                                {"depth", nvtx_event::kDepth},
                                                {"open", nvtx_event::kOpen},
                                                {"range_id", nvtx_event::kRangeId},
                                                {"payloads", nvtx_event::kPayloads}});
  ExpectFields(trace::NvtxPayload::descriptor(),
               {{"schema_id", nvtx_payload::kSchemaId}, {"data", nvtx_payload::kData}});
  ExpectFields(trace::NvtxPayloadSchema::descriptor(),
               {{"domain_id", nvtx_payload_schema::kDomainId},
                {"schema_id", nvtx_payload_schema::kSchemaId},
                {"name_id", nvtx_payload_schema::kNameId},
                {"schema_type", nvtx_payload_schema::kSchemaType},
                {"flags", nvtx_payload_schema::kFlags},
                {"static_size_bytes", nvtx_payload_schema::kStaticSizeBytes},
                {"is_enum", nvtx_payload_schema::kIsEnum},
                {"entries", nvtx_payload_schema::kEntries},
                {"enum_values", nvtx_payload_schema::kEnumValues}});
  ExpectFields(trace::NvtxPayloadEntry::descriptor(),
               {{"flags", nvtx_payload_entry::kFlags},
                {"type", nvtx_payload_entry::kType},
                {"name_id", nvtx_payload_entry::kNameId},
                {"array_length", nvtx_payload_entry::kArrayLength},
                {"offset_bytes", nvtx_payload_entry::kOffsetBytes},
                {"size_bytes", nvtx_payload_entry::kSizeBytes}});
  ExpectFields(trace::NvtxPayloadEnumValue::descriptor(),
               {{"name_id", nvtx_payload_enum_value::kNameId},
                {"value", nvtx_payload_enum_value::kValue},
                {"is_flag", nvtx_payload_enum_value::kIsFlag}});
  ExpectFields(trace::NvtxDomain::descriptor(),
               {{"id", nvtx_domain::kId}, {"name_id", nvtx_domain::kNameId}});
  ExpectFields(trace::MemoryOp::descriptor(), {{"operation", memory_op::kOperation},
                                               {"memory_kind", memory_op::kMemoryKind},
                                               {"address", memory_op::kAddress},
                                               {"bytes", memory_op::kBytes},
                                               {"start_delta_ns", memory_op::kStartDeltaNs},
                                               {"correlation_delta", memory_op::kCorrelationDelta},
                                               {"device_id", memory_op::kDeviceId},
                                               {"context_id", memory_op::kContextId},
                                               {"stream_id", memory_op::kStreamId},
                                               {"async", memory_op::kAsync},
                                               {"pool_address", memory_op::kPoolAddress},
                                               {"pool_type", memory_op::kPoolType},
                                               {"pool_release_threshold",
                                                memory_op::kPoolReleaseThreshold},
                                               {"pool_bytes", memory_op::kPoolBytes},
                                               {"pool_used_bytes", memory_op::kPoolUsedBytes}});
  ExpectFields(trace::Stream::descriptor(), {{"stream_id", stream::kStreamId},
                                             {"context_id", stream::kContextId},
                                             {"device_id", stream::kDeviceId},
                                             {"type", stream::kType},
                                             {"priority", stream::kPriority},
                                             {"correlation_delta", stream::kCorrelationDelta}});
  ExpectFields(trace::Context::descriptor(), {{"context_id", context::kContextId},
                                              {"device_id", context::kDeviceId},
                                              {"null_stream_id", context::kNullStreamId},
                                              {"compute_api", context::kComputeApi},
                                              {"created_ns", context::kCreatedNs},
                                              {"created_thread_id", context::kCreatedThreadId}});
  ExpectFields(trace::CudaEvent::descriptor(),
               {{"event_id", cuda_event::kEventId},
                {"sync_id", cuda_event::kSyncId},
                {"correlation_delta", cuda_event::kCorrelationDelta},
                {"context_id", cuda_event::kContextId},
                {"stream_id", cuda_event::kStreamId},
                {"device_id", cuda_event::kDeviceId},
                {"device_timestamp_delta_ns", cuda_event::kDeviceTimestampDeltaNs}});
  ExpectFields(trace::Overhead::descriptor(), {{"overhead_kind", overhead::kOverheadKind},
                                               {"name_id", overhead::kNameId},
                                               {"start_delta_ns", overhead::kStartDeltaNs},
                                               {"duration_ns", overhead::kDurationNs},
                                               {"thread_index", overhead::kThreadIndex}});
  ExpectFields(trace::GraphTrace::descriptor(),
               {{"graph_id", graph_trace::kGraphId},
                {"start_delta_ns", graph_trace::kStartDeltaNs},
                {"duration_ns", graph_trace::kDurationNs},
                {"correlation_delta", graph_trace::kCorrelationDelta},
                {"device_id", graph_trace::kDeviceId},
                {"stream_id", graph_trace::kStreamId}});
  ExpectFields(trace::UnifiedMemoryCounter::descriptor(),
               {{"counter_kind", unified_memory_counter::kCounterKind},
                {"value", unified_memory_counter::kValue},
                {"start_delta_ns", unified_memory_counter::kStartDeltaNs},
                {"duration_ns", unified_memory_counter::kDurationNs},
                {"address", unified_memory_counter::kAddress},
                {"src_device_id", unified_memory_counter::kSrcDeviceId},
                {"dst_device_id", unified_memory_counter::kDstDeviceId},
                {"flags", unified_memory_counter::kFlags}});
  ExpectFields(trace::RuntimeInfo::descriptor(),
               {{"cuda_runtime_version", runtime_info::kCudaRuntimeVersion}});
  ExpectFields(trace::DropReport::descriptor(), {{"source", drop_report::kSource},
                                                 {"count", drop_report::kCount},
                                                 {"at_ns", drop_report::kAtNs}});
  ExpectFields(trace::RunEnd::descriptor(), {{"end_time_ns", run_end::kEndTimeNs},
                                             {"reason", run_end::kReason},
                                             {"records_written", run_end::kRecordsWritten},
                                             {"records_dropped", run_end::kRecordsDropped},
                                             {"chunks_written", run_end::kChunksWritten}});
}

// Proves the layout claim of trace.proto: a whole file written by TraceWriter parses with stock
// libprotobuf as one TraceFile message, with the header and every chunk in place.
TEST(TraceWireTest, FileParsesAsOneTraceFileMessage) {
  testing::MemorySink sink;
  TraceWriter writer(&sink, {.chunk_bytes = 200});
  ASSERT_TRUE(writer.WriteHeader(testing::SampleHeader()));
  size_t kernels = 0;
  for (uint32_t salt = 0; salt < 4; ++salt) {
    const TraceRecords records = testing::SampleRecords(writer.strings(), salt);
    kernels += records.kernels.size();
    writer.AddAll(records);
  }
  ASSERT_TRUE(writer.Finish({.reason = "exit"}));

  trace::TraceFile file;
  ASSERT_TRUE(file.ParseFromString(sink.bytes()));
  EXPECT_EQ(file.header().format(), "libprof-trace");
  EXPECT_EQ(file.header().schema_version(), kSchemaVersion);
  EXPECT_EQ(file.header().hostname(), "gpu-node-07");
  ASSERT_EQ(file.chunk_size(), static_cast<int>(writer.chunks_written()));
  size_t parsed_kernels = 0;
  for (int i = 0; i < file.chunk_size(); ++i) {
    EXPECT_EQ(file.chunk(i).sequence(), static_cast<uint64_t>(i));
    parsed_kernels += file.chunk(i).kernels_size();
  }
  EXPECT_EQ(parsed_kernels, kernels);
  EXPECT_TRUE(file.chunk(file.chunk_size() - 1).has_run_end());
  EXPECT_EQ(file.chunk(0).threads(0), 1000u);  // the first thread seen has index 0
  // Serializing the parsed message again gives a file of the same size: nothing was lost or
  // misread as unknown fields, and proto3 defaults were left out as protobuf itself does.
  EXPECT_EQ(file.ByteSizeLong(), sink.bytes().size());
}

}  // namespace
}  // namespace libprof
