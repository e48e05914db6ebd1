#include "tests/proto/trace_test_util.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

namespace libprof::testing {

bool MemorySink::Write(const void* data, size_t size) {
  if (bytes_.size() + size > fail_after_) return false;
  bytes_.append(static_cast<const char*>(data), size);
  return true;
}

ScratchDir::ScratchDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base != nullptr ? base : "/tmp") + "/libprof-proto-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) std::abort();
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

void WriteFile(const std::string& path, const std::string& bytes) {
  // Rewritten in place and then cut to size, never truncated to 0 or unlinked: on ext4 those
  // force a flush (auto_da_alloc) or a discard, and the tests that rewrite one file thousands of
  // times took seconds instead of milliseconds.
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) std::abort();
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = pwrite(fd, bytes.data() + done, bytes.size() - done, done);
    if (n <= 0) std::abort();
    done += n;
  }
  if (ftruncate(fd, bytes.size()) != 0) std::abort();
  close(fd);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

TraceHeader SampleHeader() {
  TraceHeader h;
  h.libprof_version = "0.1.0";
  h.pid = 4242;
  h.parent_pid = 4241;
  h.hostname = "gpu-node-07";
  h.command_line = {"python", "", "train.py", "--epochs=3"};  // "" must survive too
  h.start_wall_time_ns = 1'700'000'000'123'456'789;
  h.timebase = Timebase::kClockMonotonic;
  h.wall_clock_offset_ns = -5'000'000'000;
  h.start_time_ns = 987'654'321'000;
  h.cuda_driver_version = 13000;
  h.cuda_runtime_version = 12080;
  h.cupti_version = 130001;
  h.cupti_path = "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13";
  DeviceInfo d;
  d.id = 0;
  d.name = "NVIDIA H100 80GB HBM3";
  d.uuid = std::string("\x01\x00\x02\xff\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e", 16);
  d.sm_count = 132;
  d.global_memory_bytes = 85'000'000'000;
  d.compute_capability_major = 9;
  d.compute_capability_minor = 0;
  d.pci_bus_id = "0000:18:00.0";
  d.core_clock_khz = 1'980'000;
  d.memory_clock_khz = 2'619'000;
  d.memory_bus_width_bits = 5120;
  d.max_threads_per_block = 1024;
  d.l2_cache_bytes = 52'428'800;
  h.devices = {d};
  h.settings = {{"LIBPROF_BUFFER_SIZE_KB", "8192"}, {"LIBPROF_OUTPUT", "trace-%p.pb"}};
  h.capture_status = "";
  h.rank = 0;  // rank 0 must survive: proto3 would drop a plain zero
  h.rank_source = "RANK";
  return h;
}

TraceRecords SampleRecords(StringInterner& strings, uint32_t salt) {
  const uint64_t t = 1'000'000'000 + salt * 100'000ull;
  const uint32_t main_tid = 1000, worker_tid = 1001 + salt;
  TraceRecords r;
  r.api_calls.push_back({.domain = ApiDomain::kRuntime,
                         .callback_id = 211,
                         .name_id = strings.Intern("cudaLaunchKernel"),
                         .start_ns = t + 10,
                         .end_ns = t + 2010,
                         .correlation_id = 100 + salt,
                         .thread_id = main_tid,
                         .return_value = 0});
  // Same callback id in another domain: a different name.
  r.api_calls.push_back({.domain = ApiDomain::kDriver,
                         .callback_id = 211,
                         .name_id = strings.Intern("cuMemcpyDtoH"),
                         .start_ns = t + 5,  // earlier than the previous record: negative delta
                         .end_ns = t + 900,
                         .correlation_id = 99 + salt,
                         .thread_id = worker_tid,
                         .return_value = -3,
                         .nested = true,
                         .stack_id = 1 + salt});
  // A host function enqueued on a stream: its stream id round-trips (0 too: the wire adds one).
  r.api_calls.push_back({.domain = ApiDomain::kRuntime,
                         .callback_id = 284,
                         .name_id = strings.Intern("cudaLaunchHostFunc"),
                         .stream_id = salt,
                         .start_ns = t + 2100,
                         .end_ns = t + 2150,
                         .correlation_id = 150 + salt,
                         .thread_id = main_tid});
  r.api_calls.push_back({.domain = ApiDomain::kInternalLaunch,
                         .callback_id = 307,
                         .name_id = strings.Intern("cuLaunchKernel"),
                         .start_ns = t + 3000,
                         .end_ns = t + 3000,  // zero duration
                         .correlation_id = 101 + salt,
                         .thread_id = main_tid,
                         .return_value = 700});
  KernelShape shape{.name_id = strings.Intern("_Z6kernelPfi"),
                    .demangled_name_id = strings.Intern("kernel(float*, int)"),
                    .grid = {1024, 2, 3},
                    .block = {256, 1, 1},
                    .cluster = {2, 1, 1},
                    .registers_per_thread = 32,
                    .static_shared_memory_bytes = 1024,
                    .dynamic_shared_memory_bytes = 2048,
                    .local_memory_per_thread_bytes = 16,
                    .shared_memory_config_bytes = 65536,
                    .device_id = 1,
                    .context_id = 2};
  r.kernels.push_back({.shape = shape,
                       .start_ns = t + 4000,
                       .end_ns = t + 6000,
                       .correlation_id = 100 + salt,
                       .stream_id = 7,
                       .graph_id = 3,
                       .graph_node_id = 1ull << 40,
                       .device_launched = true});
  shape.grid = {salt + 1, 1, 1};
  shape.cluster = {0, 0, 0};
  r.kernels.push_back({.shape = shape,
                       .start_ns = t + 6100,
                       .end_ns = t + 6200,
                       .correlation_id = 101 + salt,
                       .stream_id = 13});
  r.memcpys.push_back({.copy_kind = CopyKind::kPtoP,
                       .src_kind = MemoryKind::kDevice,
                       .dst_kind = MemoryKind::kManagedStatic,
                       .bytes = 1ull << 33,
                       .async = true,
                       .start_ns = t + 7000,
                       .end_ns = t + 9000,
                       .correlation_id = 102 + salt,
                       .device_id = 1,
                       .context_id = 2,
                       .stream_id = 14,
                       .graph_id = 5,
                       .graph_node_id = 6,
                       .src_device_id = 1,
                       .dst_device_id = 2});
  r.memsets.push_back({.memory_kind = MemoryKind::kPinned,
                       .bytes = 4096,
                       .value = 0xAB,
                       .async = true,
                       .start_ns = t + 9500,
                       .end_ns = t + 9600,
                       .correlation_id = 103 + salt,
                       .device_id = 1,
                       .context_id = 2,
                       .stream_id = 15,
                       .graph_id = 4});
  r.synchronizations.push_back({.type = SyncType::kEventSynchronize,
                                .start_ns = t + 9700,
                                .end_ns = t + 12000,
                                .correlation_id = 104 + salt,
                                .context_id = 2,
                                .stream_id = kNoStream,
                                .event_id = 9,
                                .event_sync_id = 77 + salt,
                                .return_value = 600});
  r.nvtx_events.push_back({.kind = NvtxKind::kStartEnd,
                           .start_ns = t + 1,
                           .end_ns = t + 50'000,
                           .thread_id = worker_tid,
                           .end_thread_id = main_tid,
                           .domain_id = 1,
                           .message_id = strings.Intern("epoch " + std::to_string(salt)),
                           .category = 4,
                           .color_argb = 0xFF00FF00,
                           .has_color = true,
                           .depth = 0,
                           .open = true,
                           .range_id = 55 + salt,
                           .payloads = {{.schema_id = (1u << 24) + 5,
                                         .data = std::string("\x01\0\xff", 3)},
                                        {.schema_id = 1023}}});
  r.nvtx_events.push_back({.kind = NvtxKind::kMark,
                           .start_ns = t + 20,
                           .end_ns = t + 20,
                           .thread_id = main_tid,
                           .end_thread_id = 0,  // unset: must come back as 0
                           .message_id = strings.Intern("checkpoint"),
                           .depth = 2});
  r.nvtx_domains.push_back({.id = 1, .name_id = strings.Intern("my.domain")});
  r.nvtx_payload_schemas.push_back(
      {.domain_id = 1,
       .schema_id = (1u << 24) + 5,
       .name_id = strings.Intern("params"),
       .schema_type = 1,
       .flags = 16,
       .static_size_bytes = 24,
       .entries = {{.type = 18, .name_id = strings.Intern("comm"), .size_bytes = 8},
                   {.flags = 16, .type = 5, .array_length = 2, .offset_bytes = 8,
                    .size_bytes = 4}}});
  r.nvtx_payload_schemas.push_back({.domain_id = 1,
                                    .schema_id = (1u << 24) + 24,
                                    .static_size_bytes = 4,
                                    .is_enum = true,
                                    .enum_values = {{.name_id = strings.Intern("Sum")},
                                                    {.value = 3, .is_flag = true}}});
  r.memory_ops.push_back({.operation = MemoryOperation::kAllocation,
                          .memory_kind = MemoryKind::kDevice,
                          .address = 0x7f0000000000ull + salt,
                          .bytes = 1 << 20,
                          .time_ns = t + 3,
                          .correlation_id = 105 + salt,
                          .device_id = 1,
                          .context_id = 2,
                          .stream_id = 7,
                          .async = true,
                          .pool_address = 0x7e0000000000,
                          .pool_type = 1,
                          .pool_release_threshold = 64 << 20,
                          .pool_bytes = 32 << 20,
                          .pool_used_bytes = 1 << 20});
  r.streams.push_back({.stream_id = 7,
                       .context_id = 2,
                       .device_id = 1,
                       .type = StreamType::kNonBlocking,
                       .priority = -5,
                       .correlation_id = 90 + salt});
  r.contexts.push_back({.context_id = 2,
                        .device_id = 1,
                        .null_stream_id = 8,
                        .compute_api = 1,
                        .created_ns = 1'000'250 + salt,
                        .created_thread_id = 11});
  r.cuda_events.push_back({.event_id = 9,
                           .sync_id = 77 + salt,
                           .correlation_id = 106 + salt,
                           .context_id = 2,
                           .stream_id = 7,
                           .device_id = 1,
                           .device_timestamp_ns = t + 8000});
  r.cuda_events.push_back({.event_id = 10, .sync_id = 78 + salt});  // timestamp not recorded
  r.overheads.push_back({.overhead_kind = 3,
                         .name_id = strings.Intern("activity buffer request"),
                         .start_ns = t + 100,
                         .end_ns = t + 400,
                         .thread_id = worker_tid});
  r.devices.push_back(SampleHeader().devices[0]);
  r.graph_traces.push_back({.graph_id = 3,
                            .start_ns = t + 13000,
                            .end_ns = t + 19000,
                            .correlation_id = 107 + salt,
                            .device_id = 1,
                            .stream_id = 7});
  r.drops.push_back({.source = "cupti", .count = 12 + salt, .at_ns = t + 20000});
  r.stack_modules.push_back({.id = 1 + salt,
                             .path_id = strings.Intern("/usr/lib/libcublas.so.13"),
                             .build_id = "0123456789abcdef" + std::to_string(salt),
                             .executable = salt % 2 == 1});
  r.stack_frames.push_back({.id = 1 + 2 * salt,
                            .address = 0x7f0000001234ull + salt,
                            .module_id = 1 + salt,
                            .module_offset = 0x1234 + salt,
                            .function_id = strings.Intern("cublasSnrm2_v2"),
                            .function_offset = 0x34});
  r.stack_frames.push_back({.id = 2 + 2 * salt, .address = 0x401000});  // unknown module
  r.call_stacks.push_back({.id = 1 + salt, .frame_ids = {1 + 2 * salt, 2 + 2 * salt, 1}});
  // A migration to the CPU (processor id 0xFFFFFFFF: the widest varint) and a fault group
  // without an end; then a counter kind from a newer writer, which must survive as read.
  r.unified_memory_counters.push_back({.counter_kind = UvmCounterKind::kBytesDtoH,
                                       .value = (64u << 10) + salt,
                                       .start_ns = t + 2100,
                                       .end_ns = t + 2900,
                                       .address = 0x7f1000000000ull + salt,
                                       .src_device_id = 1,
                                       .dst_device_id = kUvmCpu,
                                       .flags = 2});
  r.unified_memory_counters.push_back({.counter_kind = UvmCounterKind::kGpuPageFault,
                                       .value = 3,
                                       .start_ns = t + 2050,
                                       .end_ns = t + 2050,
                                       .address = 0x7f1000200000ull,
                                       .src_device_id = 1,
                                       .flags = 2});
  r.unified_memory_counters.push_back(
      {.counter_kind = static_cast<UvmCounterKind>(42), .value = 1, .start_ns = t + 2200});
  r.call_stacks.push_back(
      {.id = 100 + salt,
       .frame_ids = {1},
       .python_frames = {{.file_id = strings.Intern("/home/u/train.py"),
                          .line = 7 + salt,
                          .function_id = strings.Intern("step")},
                         {.file_id = strings.Intern("<frozen runpy>"), .line = 0, .function_id = 0}}});
  return r;
}

TraceRecords LaunchLoop(StringInterner& strings, int iterations) {
  std::mt19937_64 random(42);
  auto jitter = [&random](uint64_t max) { return random() % (max + 1); };
  const uint32_t launch_name = strings.Intern("cudaLaunchKernel");
  const uint32_t driver_name = strings.Intern("cuLaunchKernel");
  const KernelShape shape{.name_id = strings.Intern("_Z10vector_addPKfS0_Pfi"),
                          .demangled_name_id = strings.Intern("vector_add(float const*, ...)"),
                          .grid = {4096, 1, 1},
                          .block = {256, 1, 1},
                          .registers_per_thread = 16,
                          .device_id = 0,
                          .context_id = 1};
  TraceRecords r;
  uint64_t host = 5'123'456'789'012;  // CLOCK_MONOTONIC of a host up ~1.4 h
  uint64_t gpu = host + 20'000;
  uint64_t correlation = 1000;
  for (int i = 0; i < iterations; ++i) {
    host += 2800 + jitter(400);
    const uint64_t launch_end = host + 2000 + jitter(600);
    const uint64_t launch_correlation = ++correlation;
    r.api_calls.push_back({.domain = ApiDomain::kRuntime,
                           .callback_id = 211,  // cudaLaunchKernel_v7000
                           .name_id = launch_name,
                           .start_ns = host,
                           .end_ns = launch_end,
                           .correlation_id = launch_correlation,
                           .thread_id = 31337});
    const uint64_t driver_start = host + 200 + jitter(100);
    r.api_calls.push_back({.domain = ApiDomain::kDriver,
                           .callback_id = 307,  // cuLaunchKernel
                           .name_id = driver_name,
                           .start_ns = driver_start,
                           .end_ns = launch_end - 150 - jitter(100),
                           .correlation_id = ++correlation,
                           .thread_id = 31337,
                           .nested = true});
    gpu = std::max(gpu + 2000 + jitter(100), host + 5000);
    r.kernels.push_back({.shape = shape,
                         .start_ns = gpu,
                         .end_ns = gpu + 2000 + jitter(50),
                         .correlation_id = launch_correlation,
                         .stream_id = 7});
  }
  return r;
}

}  // namespace libprof::testing
