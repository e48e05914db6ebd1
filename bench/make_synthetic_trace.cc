// make_synthetic_trace: writes a libprof trace shaped like a GPU training loop, without a GPU, for
// the trace-size and analysis-speed benchmarks (bench/README.md).
//
// Each host thread runs iterations of: an H2D batch copy (pinned; every 10th iteration also a
// pageable one) and a sync on its copy stream; forward, backward and optimizer launches over two
// compute streams, each cudaLaunchKernel with a nested cuLaunchKernel and its kernel; a memset of
// the gradients; a blocking 4-byte copy of the loss to pageable memory; NVTX ranges iteration >
// phase > layer around them; every 50th iteration a cudaMalloc/cudaFree of a workspace. A queue
// per stream gives the device times, so the host waits where a real program would and
// `profview findings` has real work to do. The same seed and flags give the same bytes.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proto/trace_writer.h"

namespace libprof::bench {
namespace {

// Callback ids of CUDA 13.0's cupti_runtime_cbid.h and cupti_driver_cbid.h, so that the file's
// API name table and varint sizes are those of a real trace.
constexpr uint32_t kCudaMalloc = 20, kCudaFree = 22, kCudaMemcpyAsync = 41, kCudaMemsetAsync = 51,
                   kCudaStreamSynchronize = 131, kCudaLaunchKernel = 211;
constexpr uint32_t kCuLaunchKernel = 307;

constexpr uint64_t kUs = 1000;
constexpr uint64_t kT0 = 5'000'000'000'000;  // recording start: 83 minutes of CLOCK_MONOTONIC
constexpr uint32_t kContext = 1;
constexpr uint32_t kNullStream = 7;  // CUPTI numbers the null stream 7 and new streams from 13 up

// Record kinds under their LIBPROF_TRACE names: --kinds writes a subset, so that one kind's bytes
// per record can be read off a file holding only that kind (the same simulation runs either way).
enum Kind { kRuntime, kDriver, kKernel, kMemcpy, kMemset, kSync, kNvtx, kMemory, kKinds };
constexpr std::string_view kKindNames[kKinds] = {"runtime", "driver", "kernel", "memcpy",
                                                 "memset",  "sync",   "nvtx",   "memory"};

struct Options {
  uint64_t records = 1'000'000;  // stop after the iteration that reaches this many timed records
  uint32_t threads = 1;
  uint64_t seed = 1;
  uint32_t pid = 10000;
  std::optional<uint32_t> rank;  // a rank of a parallel job, as libprof records LIBPROF_RANK
  std::string out;
  bool kinds[kKinds] = {true, true, true, true, true, true, true, true};
};

// SplitMix64: the same numbers on every compiler and standard library, unlike std distributions.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  uint64_t Between(uint64_t lo, uint64_t hi) { return lo + Next() % (hi - lo + 1); }  // [lo, hi]
  double Unit() { return static_cast<double>(Next() >> 11) / 9007199254740992.0; }    // [0, 1)

 private:
  uint64_t state_;
};

// One launch site: its shape and typical duration (each launch jitters by up to ±10%).
struct KernelType {
  KernelShape shape;
  uint64_t mean_ns = 0;
};

enum Op {
  kGemmTn,
  kGemmNt,
  kGemmNn,
  kBias,
  kGeluFwd,
  kGeluBwd,
  kNormFwd,
  kNormBwd,
  kSoftmax,
  kDropout,
  kAdam,
  kReduce,
  kOps
};
constexpr const char* kOpNames[kOps] = {
    "gemm_tn",        "gemm_nt",        "gemm_nn",     "bias_add", "gelu_fwd",    "gelu_bwd",
    "layer_norm_fwd", "layer_norm_bwd", "softmax_fwd", "dropout",  "adam_update", "reduce_sum"};
constexpr uint32_t kTiles[] = {32, 64, 128};  // three template variants of each op: 36 kernels
constexpr int kLayers = 6;

class Simulator {
 public:
  Simulator(TraceWriter* writer, const Options& options)
      : writer_(writer), options_(options), rng_(options.seed) {}

  void Run();
  uint64_t written(Kind kind) const { return written_[kind]; }

 private:
  struct Thread {
    uint32_t tid = 0;
    uint64_t now = 0;
    uint32_t compute[2] = {};
    uint32_t copy_stream = 0;
    std::vector<std::pair<uint32_t, uint64_t>> nvtx;  // open ranges: message id, start
    uint64_t workspace = 0;                           // address of the live cudaMalloc, 0 if none
    uint64_t workspace_bytes = 0;
  };

  void WriteDefinitions();
  void MakeCatalog();
  void Iteration(Thread& t, uint64_t i);

  template <typename Record>
  void Emit(Kind kind, const Record& record) {
    ++simulated_;
    if (!options_.kinds[kind]) return;
    ++written_[kind];
    writer_->Add(record);
  }
  uint64_t Api(Thread& t, uint32_t cbid, std::string_view name, uint64_t start, uint64_t end,
               ApiDomain domain = ApiDomain::kRuntime, bool nested = false);
  void Push(Thread& t, std::string_view name);
  void Pop(Thread& t);
  void Launch(Thread& t, Op op, int variant, uint32_t stream);
  void Copy(Thread& t, CopyKind kind, MemoryKind host, uint64_t bytes, uint32_t stream);
  void Memset(Thread& t, uint64_t bytes, uint32_t stream);
  void StreamSync(Thread& t, uint32_t stream);
  void Malloc(Thread& t);
  void Free(Thread& t);
  // Device work issued at `issue` on `stream`: starts after the launch latency and the work ahead
  // of it (1 µs apart, as back-to-back kernels are); returns its start.
  uint64_t Enqueue(uint32_t stream, uint64_t issue, uint64_t duration);
  uint64_t AllStreamsIdle() const;

  TraceWriter* writer_;
  Options options_;
  Rng rng_;
  std::vector<Thread> threads_;
  std::vector<KernelType> catalog_;           // kOps x 3 variants
  std::map<uint32_t, uint64_t> stream_free_;  // stream -> end of the last work queued on it
  std::map<std::string, uint32_t, std::less<>> names_;
  uint64_t next_corr_ = 200;  // real traces start past the ids of initialisation calls
  uint64_t next_address_ = 0x7f0000000000;
  uint64_t simulated_ = 0;
  uint64_t written_[kKinds] = {};
};

uint64_t Simulator::Api(Thread& t, uint32_t cbid, std::string_view name, uint64_t start,
                        uint64_t end, ApiDomain domain, bool nested) {
  auto it = names_.find(name);
  if (it == names_.end()) it = names_.emplace(std::string(name), writer_->Intern(name)).first;
  const uint64_t corr = next_corr_++;
  Emit(domain == ApiDomain::kDriver ? kDriver : kRuntime, ApiCall{.domain = domain,
                                                                  .callback_id = cbid,
                                                                  .name_id = it->second,
                                                                  .start_ns = start,
                                                                  .end_ns = end,
                                                                  .correlation_id = corr,
                                                                  .thread_id = t.tid,
                                                                  .nested = nested});
  return corr;
}

uint64_t Simulator::Enqueue(uint32_t stream, uint64_t issue, uint64_t duration) {
  uint64_t& free = stream_free_[stream];
  const uint64_t start = std::max(issue + rng_.Between(3 * kUs, 5 * kUs), free + kUs);
  free = start + duration;
  return start;
}

uint64_t Simulator::AllStreamsIdle() const {
  uint64_t idle = 0;
  for (const auto& [stream, free] : stream_free_) idle = std::max(idle, free);
  return idle;
}

// An NVTX call costs 100-300 ns with a tool attached; its timestamp is taken halfway through, so
// a range ends strictly before the next call starts.
void Simulator::Push(Thread& t, std::string_view name) {
  t.nvtx.emplace_back(writer_->Intern(name), t.now + rng_.Between(50, 150));
  t.now = t.nvtx.back().second + rng_.Between(50, 150);
}

void Simulator::Pop(Thread& t) {
  const auto [message, start] = t.nvtx.back();
  t.nvtx.pop_back();
  const uint64_t end = t.now + rng_.Between(50, 150);
  t.now = end + rng_.Between(50, 150);
  // Written at the pop, as libprof does: an outer range follows the ranges nested in it.
  Emit(kNvtx, NvtxEvent{.kind = NvtxKind::kPushPop,
                        .start_ns = start,
                        .end_ns = end,
                        .thread_id = t.tid,
                        .message_id = message,
                        .depth = static_cast<uint32_t>(t.nvtx.size())});
}

// cudaLaunchKernel (2-4 µs of host time, with the driver's cuLaunchKernel inside it, which has its
// own correlation id as in CUPTI) and its kernel; the next call follows 0.3-1.5 µs later.
void Simulator::Launch(Thread& t, Op op, int variant, uint32_t stream) {
  const KernelType& type = catalog_[op * 3 + variant];
  const uint64_t start = t.now, end = start + rng_.Between(2 * kUs, 4 * kUs);
  const uint64_t corr = Api(t, kCudaLaunchKernel, "cudaLaunchKernel", start, end);
  Api(t, kCuLaunchKernel, "cuLaunchKernel", start + 400, end - 300, ApiDomain::kDriver, true);
  const uint64_t duration = type.mean_ns * rng_.Between(90, 110) / 100;
  const uint64_t k_start = Enqueue(stream, start, duration);
  Emit(kKernel, Kernel{.shape = type.shape,
                       .start_ns = k_start,
                       .end_ns = k_start + duration,
                       .correlation_id = corr,
                       .stream_id = stream});
  t.now = end + rng_.Between(300, 1500);
}

// cudaMemcpyAsync between `host` memory and the device. Pinned memory returns at once; pageable
// memory blocks the host until the copy (and so the work queued before it) is done.
void Simulator::Copy(Thread& t, CopyKind kind, MemoryKind host, uint64_t bytes, uint32_t stream) {
  const bool pinned = host == MemoryKind::kPinned;
  const uint64_t start = t.now;
  const uint64_t duration = 1500 + bytes / (pinned ? 25 : 6);  // 25 and 6 GB/s: 1 B/ns = 1 GB/s
  const uint64_t c_start = Enqueue(stream, start, duration);
  const uint64_t end = pinned ? start + rng_.Between(3 * kUs, 5 * kUs) : c_start + duration + kUs;
  const uint64_t corr = Api(t, kCudaMemcpyAsync, "cudaMemcpyAsync", start, end);
  const bool to_device = kind == CopyKind::kHtoD;
  Emit(kMemcpy, Memcpy{.copy_kind = kind,
                       .src_kind = to_device ? host : MemoryKind::kDevice,
                       .dst_kind = to_device ? MemoryKind::kDevice : host,
                       .bytes = bytes,
                       .async = true,
                       .start_ns = c_start,
                       .end_ns = c_start + duration,
                       .correlation_id = corr,
                       .context_id = kContext,
                       .stream_id = stream});
  t.now = end + rng_.Between(300, 1500);
}

void Simulator::Memset(Thread& t, uint64_t bytes, uint32_t stream) {
  const uint64_t start = t.now, end = start + rng_.Between(3 * kUs, 5 * kUs);
  const uint64_t corr = Api(t, kCudaMemsetAsync, "cudaMemsetAsync", start, end);
  const uint64_t duration = 1000 + bytes / 1000;  // ~1 TB/s
  const uint64_t m_start = Enqueue(stream, start, duration);
  Emit(kMemset, libprof::Memset{.memory_kind = MemoryKind::kDevice,
                                .bytes = bytes,
                                .async = true,
                                .start_ns = m_start,
                                .end_ns = m_start + duration,
                                .correlation_id = corr,
                                .context_id = kContext,
                                .stream_id = stream});
  t.now = end + rng_.Between(300, 1500);
}

void Simulator::StreamSync(Thread& t, uint32_t stream) {
  const uint64_t start = t.now;
  const uint64_t end = std::max(start + 1500, stream_free_[stream] + kUs);
  const uint64_t corr = Api(t, kCudaStreamSynchronize, "cudaStreamSynchronize", start, end);
  Emit(kSync, Synchronization{.type = SyncType::kStreamSynchronize,
                              .start_ns = start,
                              .end_ns = end,
                              .correlation_id = corr,
                              .context_id = kContext,
                              .stream_id = stream});
  t.now = end + rng_.Between(300, 1500);
}

void Simulator::Malloc(Thread& t) {
  const uint64_t bytes = uint64_t{rng_.Between(1, 64)} << 20;
  const uint64_t start = t.now, end = start + rng_.Between(10 * kUs, 40 * kUs);
  const uint64_t corr = Api(t, kCudaMalloc, "cudaMalloc", start, end);
  t.workspace = next_address_;
  t.workspace_bytes = bytes;
  next_address_ += bytes;
  Emit(kMemory, MemoryOp{.operation = MemoryOperation::kAllocation,
                         .memory_kind = MemoryKind::kDevice,
                         .address = t.workspace,
                         .bytes = bytes,
                         .time_ns = end - kUs,
                         .correlation_id = corr,
                         .context_id = kContext});
  t.now = end + rng_.Between(300, 1500);
}

// cudaFree synchronises the device: it returns once every stream has drained.
void Simulator::Free(Thread& t) {
  const uint64_t start = t.now;
  const uint64_t end = std::max(start + 5 * kUs, AllStreamsIdle() + 2 * kUs);
  const uint64_t corr = Api(t, kCudaFree, "cudaFree", start, end);
  Emit(kMemory, MemoryOp{.operation = MemoryOperation::kRelease,
                         .memory_kind = MemoryKind::kDevice,
                         .address = t.workspace,
                         .bytes = t.workspace_bytes,
                         .time_ns = end - kUs,
                         .correlation_id = corr,
                         .context_id = kContext});
  t.workspace = 0;
  t.now = end + rng_.Between(300, 1500);
}

void Simulator::Iteration(Thread& t, uint64_t i) {
  static constexpr const char* kLayerNames[kLayers] = {"layer0", "layer1", "layer2",
                                                       "layer3", "layer4", "layer5"};
  const uint32_t main = t.compute[0], side = t.compute[1];
  Push(t, "iteration");
  if (i % 50 == 0) Malloc(t);

  Push(t, "data");
  Copy(t, CopyKind::kHtoD, MemoryKind::kPinned, 4 << 20, t.copy_stream);
  if (i % 10 == 0) Copy(t, CopyKind::kHtoD, MemoryKind::kPageable, 256 << 10, t.copy_stream);
  StreamSync(t, t.copy_stream);
  Pop(t);

  Push(t, "forward");
  for (int layer = 0; layer < kLayers; ++layer) {
    Push(t, kLayerNames[layer]);
    const int v = layer % 3;  // layers of three sizes: distinct shapes of each op
    for (Op op : {kGemmTn, kBias, kGeluFwd, kNormFwd}) Launch(t, op, v, main);
    Pop(t);
  }
  Launch(t, kSoftmax, 2, main);
  Pop(t);

  Push(t, "backward");
  Memset(t, 16 << 20, main);  // zero the gradients
  for (int layer = kLayers - 1; layer >= 0; --layer) {
    Push(t, kLayerNames[layer]);
    const int v = layer % 3;
    Launch(t, kNormBwd, v, main);
    Launch(t, kGeluBwd, v, main);
    Launch(t, kDropout, v, main);
    Launch(t, kGemmNt, v, main);
    Launch(t, kGemmNn, v, side);  // weight gradients overlap on the side stream
    Pop(t);
  }
  Pop(t);

  Push(t, "optimizer");
  StreamSync(t, side);
  for (int group = 0; group < kLayers; ++group) Launch(t, kAdam, group % 3, main);
  Launch(t, kReduce, 0, main);
  Pop(t);

  Copy(t, CopyKind::kDtoH, MemoryKind::kPageable, 4, main);  // loss.item(): waits for the step
  if (i % 20 == 0) {
    Copy(t, CopyKind::kDtoH, MemoryKind::kPinned, 1 << 20, main);  // metrics
    StreamSync(t, main);
  }
  if (i % 50 == 49 && t.workspace != 0) Free(t);
  Pop(t);
}

void Simulator::MakeCatalog() {
  for (int op = 0; op < kOps; ++op) {
    const std::string name = kOpNames[op];
    for (uint32_t tile : kTiles) {
      KernelType type;
      const std::string mangled =
          "_Z" + std::to_string(name.size()) + name + "ILi" + std::to_string(tile) + "EEvPKfS1_Pfi";
      const std::string demangled = "void " + name + "<" + std::to_string(tile) +
                                    ">(float const*, float const*, float*, int)";
      type.shape.name_id = writer_->Intern(mangled);
      type.shape.demangled_name_id = writer_->Intern(demangled);
      type.shape.grid = {static_cast<uint32_t>(rng_.Between(1, 16)) * 132, 1, 1};
      type.shape.block = {tile * 4, 1, 1};
      type.shape.registers_per_thread = static_cast<uint32_t>(rng_.Between(16, 128));
      type.shape.static_shared_memory_bytes = tile * 256;
      type.shape.context_id = kContext;
      // Log-uniform in 2-200 µs: many short kernels, a few long GEMMs' worth.
      type.mean_ns = static_cast<uint64_t>(2000.0 * std::pow(100.0, rng_.Unit()));
      catalog_.push_back(type);
    }
  }
}

void Simulator::WriteDefinitions() {
  writer_->SetRuntimeVersion(13000);
  writer_->Add(
      ContextInfo{.context_id = kContext, .null_stream_id = kNullStream, .compute_api = 1});
  writer_->Add(
      StreamInfo{.stream_id = kNullStream, .context_id = kContext, .type = StreamType::kNull});
  stream_free_[kNullStream] = 0;
  for (uint32_t i = 0; i < options_.threads; ++i) {
    Thread t;
    t.tid = options_.pid + i;  // the main thread's id is the pid
    t.now = kT0 + 1'000 * kUs + i * 37 * kUs;
    t.compute[0] = 13 + 3 * i;
    t.compute[1] = 14 + 3 * i;
    t.copy_stream = 15 + 3 * i;
    for (uint32_t stream : {t.compute[0], t.compute[1], t.copy_stream}) {
      writer_->Add(StreamInfo{.stream_id = stream,
                              .context_id = kContext,
                              .type = StreamType::kDefault,
                              .correlation_id = next_corr_++});
      stream_free_[stream] = 0;
    }
    threads_.push_back(t);
  }
}

void Simulator::Run() {
  MakeCatalog();
  WriteDefinitions();
  // Threads take turns an iteration at a time, so their records interleave in the file as those
  // of concurrent threads do in CUPTI's buffers.
  for (uint64_t i = 0; simulated_ < options_.records; ++i) {
    for (Thread& t : threads_) Iteration(t, i);
  }
  uint64_t end = AllStreamsIdle();
  for (const Thread& t : threads_) end = std::max(end, t.now);
  writer_->Finish(RunEnd{.end_time_ns = end + 10 * kUs,
                         .reason = "exit",
                         .records_written = writer_->records_written(),
                         .chunks_written = writer_->chunks_written() + 1});
}

TraceHeader MakeHeader(const Options& options) {
  TraceHeader h;
  h.libprof_version = "synthetic";
  h.pid = options.pid;
  h.rank = options.rank;
  if (options.rank) h.rank_source = "LIBPROF_RANK";
  h.parent_pid = 1;
  h.hostname = "synthetic-host";
  h.command_line = {"python3", "train.py", "--seed", std::to_string(options.seed)};
  h.timebase = Timebase::kClockMonotonic;
  h.start_time_ns = kT0;
  h.wall_clock_offset_ns = 1'795'000'000'000'000'000;  // a date in 2026
  h.start_wall_time_ns = kT0 + h.wall_clock_offset_ns;
  h.cuda_driver_version = 13000;
  h.cuda_runtime_version = 13000;
  h.cupti_version = 130001;
  h.devices.push_back(DeviceInfo{.id = 0,
                                 .name = "NVIDIA H200",
                                 .uuid = std::string(16, '\x42'),
                                 .sm_count = 132,
                                 .global_memory_bytes = 150'000'000'000,
                                 .compute_capability_major = 9,
                                 .pci_bus_id = "0000:18:00.0",
                                 .core_clock_khz = 1980000,
                                 .memory_clock_khz = 3201000,
                                 .memory_bus_width_bits = 6144,
                                 .max_threads_per_block = 1024,
                                 .l2_cache_bytes = 62'914'560});
  h.settings = {{"LIBPROF_TRACE", "runtime,driver,kernel,memcpy,memset,sync,memory,nvtx,overhead"},
                {"LIBPROF_API_FILTER", "significant"}};
  return h;
}

constexpr const char* kUsage =
    "usage: make_synthetic_trace -o PATH [--records N] [--threads T] [--seed S] [--pid P]\n"
    "                            [--rank R] [--kinds KIND,...]\n"
    "Writes a synthetic training-loop trace of about N timed records (default 1000000).\n"
    "--kinds writes only those kinds (runtime, driver, kernel, memcpy, memset, sync, nvtx,\n"
    "memory) of the same simulated run. Prints the records written per kind and the bytes.\n";

template <typename T>
bool ParseNumber(std::string_view text, T* out) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return error == std::errc() && end == text.data() + text.size();
}

bool ParseKinds(std::string_view list, Options* options) {
  std::fill(std::begin(options->kinds), std::end(options->kinds), false);
  while (!list.empty()) {
    const std::string_view name = list.substr(0, list.find(','));
    list.remove_prefix(std::min(list.size(), name.size() + 1));
    auto it = std::find(std::begin(kKindNames), std::end(kKindNames), name);
    if (it == std::end(kKindNames)) return false;
    options->kinds[it - std::begin(kKindNames)] = true;
  }
  return true;
}

bool ParseArgs(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (i + 1 >= argc) return false;
    const std::string_view value = argv[++i];
    bool ok = true;
    if (flag == "-o")
      options->out = value;
    else if (flag == "--records")
      ok = ParseNumber(value, &options->records);
    else if (flag == "--threads")
      ok = ParseNumber(value, &options->threads) && options->threads > 0;
    else if (flag == "--seed")
      ok = ParseNumber(value, &options->seed);
    else if (flag == "--pid")
      ok = ParseNumber(value, &options->pid);
    else if (flag == "--rank")
      ok = ParseNumber(value, &options->rank.emplace());
    else if (flag == "--kinds")
      ok = ParseKinds(value, options);
    else
      ok = false;
    if (!ok) return false;
  }
  return !options->out.empty();
}

int Main(int argc, char** argv) {
  Options options;
  if (!ParseArgs(argc, argv, &options)) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  std::string error;
  auto sink = FileSink::Create(options.out, /*overwrite=*/true, &error);
  if (sink == nullptr) {
    std::fprintf(stderr, "make_synthetic_trace: %s\n", error.c_str());
    return 1;
  }
  TraceWriter writer(sink.get(), TraceWriter::Options{});
  writer.WriteHeader(MakeHeader(options));
  Simulator simulator(&writer, options);
  simulator.Run();
  if (writer.failed()) {
    std::fprintf(stderr, "make_synthetic_trace: writing %s failed: %s\n", options.out.c_str(),
                 sink->error().c_str());
    return 1;
  }
  // One line of key=value pairs, for bench/run_local.sh.
  std::printf("records=%llu bytes=%llu", static_cast<unsigned long long>(writer.records_written()),
              static_cast<unsigned long long>(writer.bytes_written()));
  for (int kind = 0; kind < kKinds; ++kind) {
    std::printf(" %s=%llu", kKindNames[kind].data(),
                static_cast<unsigned long long>(simulator.written(static_cast<Kind>(kind))));
  }
  std::printf("\n");
  return 0;
}

}  // namespace
}  // namespace libprof::bench

int main(int argc, char** argv) { return libprof::bench::Main(argc, argv); }
