#include "tests/analysis/scenarios.h"

#include <string>
#include <vector>

namespace libprof::analysis::testing {

TraceBuilder Nrm2Scenario() {
  TraceBuilder b(4242);
  b.AddContext(1, 7);
  b.AddStream(7, StreamType::kNull);
  const uint32_t t = 1;
  // cuBLAS asks for the capture state before every operation: noise.
  for (int i = 0; i < 5; ++i) b.Api("cudaStreamGetCaptureInfo_v2", 1 + i * 0.2, 1.1 + i * 0.2, t);
  b.Api("cudaFuncGetAttributes", 3, 40.67, t);
  // Upload of the 4-byte scalar: pageable H2D, staged at once (not blocked).
  const uint64_t up = b.Api("cudaMemcpyAsync", 41, 58.64, t);
  b.Api("cuMemcpyHtoDAsync_v2", 42, 57, t, 0, ApiDomain::kDriver, /*nested=*/true);
  b.AddMemcpy(CopyKind::kHtoD, MemoryKind::kPageable, MemoryKind::kDevice, 4, 50, 50.715, up, 7,
              true);
  // The two nrm2 kernels (the first one long), with the demangled name CUPTI gives.
  constexpr const char* kMangled = "_Z11nrm2_kernelIfffLi1ELi0ELi128EEv16cublasNrm2ParamsIiT_T1_E";
  const uint32_t demangled = b.Intern(
      "void nrm2_kernel<float, float, float, 1, 0, 128>(cublasNrm2Params<int, float, float>)");
  const uint64_t k1 = b.Api("cudaLaunchKernel", 60, 77.64, t);
  b.Api("cuLaunchKernel", 61, 76, t, 0, ApiDomain::kDriver, true);
  b.AddKernel(kMangled, 80, 5010, k1, 7).shape.demangled_name_id = demangled;
  const uint64_t k2 = b.Api("cudaLaunchKernel", 78, 83.01, t);
  b.Api("cuLaunchKernel", 79, 82, t, 0, ApiDomain::kDriver, true);
  b.AddKernel(kMangled, 5011, 5020, k2, 7).shape.demangled_name_id = demangled;
  for (int i = 0; i < 4; ++i) b.Api("cudaGetLastError", 84 + i * 0.3, 84.06 + i * 0.3, t);
  b.Api("cudaEventRecord", 86, 88.15, t);
  // The download of the result: device→pageable, waits for both kernels, then copies.
  const uint64_t down = b.Api("cudaMemcpyAsync", 90, 5030, t);
  b.Api("cuMemcpyDtoHAsync_v2", 91, 5029, t, 0, ApiDomain::kDriver, true);
  b.AddMemcpy(CopyKind::kDtoH, MemoryKind::kDevice, MemoryKind::kPageable, 4, 5022, 5023.91, down,
              7, true);
  const uint64_t sync = b.Api("cudaStreamSynchronize", 5030.5, 5031.45, t);
  b.AddSync(SyncType::kStreamSynchronize, 5030.6, 5031.4, sync, 7);
  b.SetEnd(5033);
  return b;
}

TraceBuilder FilteredCallCreatesTheContextScenario() {
  TraceBuilder b(79);
  b.AddContext(1, 7);
  b.AddStream(7, StreamType::kNull);
  b.records().contexts.back().created_ns = Us(120'100);
  b.records().contexts.back().created_thread_id = 1;
  b.Api("cudaGetDevice", 50, 51, 1);
  b.Api("cudaDeviceGetStreamPriorityRange", 100, 120'110, 1);
  b.Api("cudaDeviceGetStreamPriorityRange", 120'200, 120'201, 1);
  b.Api("cudaStreamIsCapturing", 120'300, 120'301, 1);
  b.Launch("gemm", 121'000, 121'005, 121'010, 122'000, 7);
  b.SetEnd(123'000);
  return b;
}

TraceBuilder StreamsScenario() {
  TraceBuilder b(5151);
  // Context 1: legacy NULL stream 7; blocking streams 13 and 14; non-blocking stream 15; a
  // per-thread default stream 20 (reported with flag NULL, but not the context's null stream).
  b.AddContext(1, 7);
  b.AddStream(7, StreamType::kNull);
  b.AddStream(13, StreamType::kDefault);
  b.AddStream(14, StreamType::kDefault);
  b.AddStream(15, StreamType::kNonBlocking);
  b.AddStream(20, StreamType::kNull);
  const uint32_t t = 1;

  // [A] Two streams, only one waits: kernels on 13 (1 ms) and 14 (3 ms); a D→pageable copy on
  // 13 waits for the 13 kernel only (and not for the longer one on 14).
  b.Launch("_Z4spinPfil", 0, 5, 10, 1010, 13);
  b.Launch("_Z9long_spinPfil", 6, 10, 12, 3012, 14);
  const uint64_t a = b.Api("cudaMemcpyAsync", 20, 1030, t);
  b.AddMemcpy(CopyKind::kDtoH, MemoryKind::kDevice, MemoryKind::kPageable, 4096, 1012, 1020, a, 13,
              true);
  // Let everything drain.
  const uint64_t ds = b.Api("cudaDeviceSynchronize", 1040, 3020, t);
  b.AddSync(SyncType::kContextSynchronize, 1041, 3019, ds);

  // [B] Legacy default stream: a kernel on the non-blocking stream 15 (2 ms) and one on blocking
  // stream 14 (1 ms); a synchronous cudaMemcpy D→H on the legacy stream 7 waits for the stream-14
  // kernel (implicit synchronisation) but not for the non-blocking one.
  b.Launch("_Z13nonblock_workPf", 4000, 4005, 4010, 6010, 15);
  b.Launch("_Z13blocking_workPf", 4006, 4009, 4012, 5012, 14);
  const uint64_t bcopy = b.Api("cudaMemcpy", 4020, 5100, t);
  b.AddMemcpy(CopyKind::kDtoH, MemoryKind::kDevice, MemoryKind::kPinned, 1 << 20, 5015, 5095, bcopy,
              7, false);

  // [C] Per-thread default stream: a kernel on blocking stream 13 (1 ms) is running while a
  // synchronous memset on the per-thread stream 20 starts: it must not wait for stream 13.
  b.Launch("_Z11other_workPf", 7000, 7004, 7010, 8010, 13);
  const uint64_t c = b.Api("cudaMemset_ptds", 7020, 7100, t);
  b.AddMemset(MemoryKind::kDevice, 1 << 20, 7030, 7090, c, 20, false);

  // [D] cudaStreamSynchronize(14) while a 2 ms kernel runs on 14 (and another on 15).
  b.Launch("_Z4spinPfil", 9000, 9004, 9010, 11010, 14);
  b.Launch("_Z13nonblock_workPf", 9005, 9008, 9012, 12012, 15);
  const uint64_t d = b.Api("cudaStreamSynchronize", 9020, 11015, t);
  b.AddSync(SyncType::kStreamSynchronize, 9021, 11014, d, 14);

  // [E] cudaEventSynchronize on an event recorded on stream 13 after a kernel; a later kernel on
  // 13 (after the record) must not be blamed.
  b.Launch("_Z4spinPfil", 13000, 13004, 13010, 14010, 13);
  const uint64_t rec = b.Api("cudaEventRecord", 13005, 13007, t);
  b.AddEvent(3, 77, rec, 13);
  b.Launch("_Z9late_workPf", 13008, 13009, 14011, 16011, 13);
  const uint64_t e = b.Api("cudaEventSynchronize", 13020, 14015, t);
  b.AddSync(SyncType::kEventSynchronize, 13021, 14014, e, kNoStream, 77).event_id = 3;

  // [F] cudaFree with no device work of its own waits for everything running (device-wide).
  b.Launch("_Z4spinPfil", 17000, 17004, 17010, 18010, 13);
  b.Api("cudaFree", 17020, 18030, t);

  // [G] A graph launch (three kernel nodes on stream 14) followed by a pageable D→H copy that
  // waits for the whole graph.
  const uint64_t g = b.Api("cudaGraphLaunch", 19000, 19010, t);
  for (int i = 0; i < 3; ++i) {
    Kernel& k = b.AddKernel("_Z9graph_nodePf", 19020 + i * 300, 19300 + i * 300, g, 14);
    k.graph_id = 5;
    k.graph_node_id = 100 + i;
  }
  const uint64_t gcopy = b.Api("cudaMemcpyAsync", 19015, 19930, t);
  b.AddMemcpy(CopyKind::kDtoH, MemoryKind::kDevice, MemoryKind::kPageable, 64, 19905, 19910, gcopy,
              14, true);

  // [H] An event wait: stream 15 (non-blocking) waits for an event recorded on 14 after a
  // kernel; a pageable copy on 15 is therefore blocked by the stream-14 kernel.
  b.Launch("_Z13producer_workPf", 21000, 21004, 21010, 22010, 14);
  const uint64_t rec2 = b.Api("cudaEventRecord", 21005, 21006, t);
  b.AddEvent(4, 78, rec2, 14);
  const uint64_t wait = b.Api("cudaStreamWaitEvent", 21007, 21008, t);
  b.AddSync(SyncType::kStreamWaitEvent, 21007.2, 21007.8, wait, 15, 78).event_id = 4;
  const uint64_t h = b.Api("cudaMemcpyAsync", 21020, 22030, t);
  b.AddMemcpy(CopyKind::kDtoH, MemoryKind::kDevice, MemoryKind::kPageable, 256, 22012, 22020, h, 15,
              true);

  // [I] A large synchronous H→D copy from pageable memory with nothing to wait for (sync-memcpy)
  // and a small one (64 KiB, excluded by the H→D rule).
  const uint64_t big = b.Api("cudaMemcpy", 23000, 25000, t);
  b.AddMemcpy(CopyKind::kHtoD, MemoryKind::kPageable, MemoryKind::kDevice, 64 << 20, 23010, 24990,
              big, 7, false);
  const uint64_t small = b.Api("cudaMemcpy", 25010, 25060, t);
  b.AddMemcpy(CopyKind::kHtoD, MemoryKind::kPageable, MemoryKind::kDevice, 64 << 10, 25020, 25050,
              small, 7, false);
  b.SetEnd(26000);
  return b;
}

TraceBuilder ThreadsScenario() {
  TraceBuilder b(6161);
  b.AddContext(1, 7);
  for (uint32_t i = 0; i < 4; ++i) {
    const uint32_t tid = 100 + i;
    const uint32_t stream = 30 + i;
    b.AddStream(stream, StreamType::kNonBlocking);
    const double base = 10 + 5 * i;  // threads start slightly apart; kernels overlap
    b.AddRange("step", base - 2, base + 1200 + 200 * i, tid, NvtxKind::kPushPop, 0);
    b.Launch("_Z6workerPfi", base, base + 4, base + 10, base + 1010 + 200 * i, stream, tid);
    b.AddRange("copy", base + 5, base + 1100 + 200 * i, tid, NvtxKind::kPushPop, 1);
    const uint64_t c = b.Api("cudaMemcpyAsync", base + 6, base + 1020 + 200 * i, tid);
    b.AddMemcpy(CopyKind::kDtoH, MemoryKind::kDevice, MemoryKind::kPageable, 1024,
                base + 1011 + 200 * i, base + 1015 + 200 * i, c, stream, true);
  }
  // A start/end range opened on thread 100 and closed on thread 101: the kernel launched inside
  // it on thread 101 projects onto it; the one on thread 102 does not.
  NvtxEvent& phase = b.AddRange("phase", 1800, 2600, 100, NvtxKind::kStartEnd);
  phase.end_thread_id = 101;
  b.Launch("_Z6workerPfi", 1900, 1904, 1910, 2010, 31, 101);
  b.Launch("_Z6workerPfi", 1950, 1954, 2020, 2120, 32, 102);
  b.SetEnd(3000);
  return b;
}

TraceBuilder IdleScenario() {
  TraceBuilder b(7171);
  b.AddContext(1, 7);
  b.AddStream(7, StreamType::kNull);
  const uint32_t t = 1;
  // 0-10 ms: 1000 launches 10 µs apart, each kernel 2 µs: the GPU waits for the host.
  for (int i = 0; i < 1000; ++i) {
    const double s = 100 + i * 10.0;
    b.Launch("_Z4tinyPf", s, s + 8, s + 8.5, s + 10.5, 7);
  }
  // 10-610 ms: host work without CUDA calls but a 0.5 ms cudaMalloc at 300 ms; the GPU idles.
  b.Api("cudaMalloc", 300000, 300500, t);
  // 610-700 ms: one long kernel keeps the GPU busy.
  b.Launch("_Z4spinPfil", 610000, 610005, 610100, 699900, 7);
  const uint64_t s = b.Api("cudaDeviceSynchronize", 610010, 699950, t);
  b.AddSync(SyncType::kContextSynchronize, 610011, 699949, s);
  b.SetEnd(700000);
  return b;
}

TraceBuilder LaunchBoundScenario() {
  TraceBuilder b(7272);
  b.AddContext(1, 7);
  b.AddStream(7, StreamType::kNull);
  const uint32_t t = 1;
  // Call i runs [10i, 10i + 8) µs, its kernel [10i + 8.5, 10i + 10.5): the next call starts at
  // 10i + 10, before the kernel ends, so each of the 99 gaps of 8 µs is launch time.
  for (int i = 0; i < 100; ++i) {
    const double s = 10.0 * i;
    b.Launch("_Z4tinyPf", s, s + 8, s + 8.5, s + 10.5, 7);
  }
  // The last kernel ends at 1000.5. The host synchronises [1000, 1020) (19.5 µs of idle time
  // blocked in it), computes [1020, 1100) (80 µs other), then a synchronous pageable copy
  // [1100, 1150) whose transfer runs [1130, 1140) (30 µs of idle time issued by a blocking call).
  const uint64_t sync = b.Api("cudaStreamSynchronize", 1000, 1020, t);
  b.AddSync(SyncType::kStreamSynchronize, 1000.2, 1019.8, sync, 7);
  const uint64_t copy = b.Api("cudaMemcpy", 1100, 1150, t);
  b.AddMemcpy(CopyKind::kDtoH, MemoryKind::kDevice, MemoryKind::kPageable, 4096, 1130, 1140, copy,
              7, false);
  b.SetEnd(1200);
  return b;
}

TraceBuilder OverlapScenario() {
  TraceBuilder b(7373);
  b.AddContext(1, 7);
  b.AddStream(7, StreamType::kNull);
  b.AddStream(15, StreamType::kNonBlocking);
  b.AddStream(16, StreamType::kNonBlocking);
  const uint32_t t = 1;
  constexpr uint64_t kChunk = 8 << 20;
  // [A] Legacy default stream: chunk c at 10 + 300c µs: HtoD [0, 100), kernel [100, 150), DtoH
  // [150, 250) after it, all async from pinned memory on stream 7. Copies 800 µs, kernels
  // 200 µs.
  for (int c = 0; c < 4; ++c) {
    const double base = 10 + 300.0 * c;
    const uint64_t up = b.Api("cudaMemcpyAsync", base - 5, base - 3, t);
    b.AddMemcpy(CopyKind::kHtoD, MemoryKind::kPinned, MemoryKind::kDevice, kChunk, base, base + 100,
                up, 7, true);
    b.Launch("_Z9transformPj", base - 3, base - 1, base + 100, base + 150, 7);
    const uint64_t down = b.Api("cudaMemcpyAsync", base - 1, base, t);
    b.AddMemcpy(CopyKind::kDtoH, MemoryKind::kDevice, MemoryKind::kPinned, kChunk, base + 150,
                base + 250, down, 7, true);
  }
  // [B] A pageable HtoD copy on 15 that holds the host [2000, 2310) while it copies
  // [2010, 2300), then a kernel launched on 16 [2330, 2530): a pair, min(290, 200) = 200 µs.
  const uint64_t p1 = b.Api("cudaMemcpyAsync", 2000, 2310, t);
  b.AddMemcpy(CopyKind::kHtoD, MemoryKind::kPageable, MemoryKind::kDevice, kChunk, 2010, 2300, p1,
              15, true);
  b.Launch("_Z9transformPj", 2320, 2325, 2330, 2530, 16);
  // Not pairs: the next kernel is on the copy's own stream; ...
  const uint64_t p2 = b.Api("cudaMemcpyAsync", 3000, 3310, t);
  b.AddMemcpy(CopyKind::kHtoD, MemoryKind::kPageable, MemoryKind::kDevice, kChunk, 3010, 3300, p2,
              15, true);
  b.Launch("_Z9transformPj", 3320, 3325, 3330, 3430, 15);
  // ... a cudaStreamSynchronize comes before the next launch; ...
  const uint64_t p3 = b.Api("cudaMemcpyAsync", 4000, 4310, t);
  b.AddMemcpy(CopyKind::kDtoH, MemoryKind::kDevice, MemoryKind::kPageable, kChunk, 4010, 4300, p3,
              15, true);
  const uint64_t sync = b.Api("cudaStreamSynchronize", 4311, 4315, t);
  b.AddSync(SyncType::kStreamSynchronize, 4311.5, 4314.5, sync, 15);
  b.Launch("_Z9transformPj", 4320, 4325, 4330, 4530, 16);
  // ... and pinned memory: the call returns before its copy ran, the kernel overlaps it.
  const uint64_t p4 = b.Api("cudaMemcpyAsync", 5000, 5005, t);
  b.AddMemcpy(CopyKind::kHtoD, MemoryKind::kPinned, MemoryKind::kDevice, kChunk, 5010, 5300, p4, 15,
              true);
  b.Launch("_Z9transformPj", 5006, 5010, 5012, 5212, 16);
  b.SetEnd(6000);
  return b;
}

TraceBuilder TwoWayCopiesScenario() {
  TraceBuilder b(4646);
  b.AddContext(1, 7);
  b.AddStream(7, StreamType::kNull);
  b.AddStream(17, StreamType::kNonBlocking);
  b.AddStream(18, StreamType::kNonBlocking);
  constexpr uint64_t kChunk = 8 << 20;
  auto copy = [&](CopyKind kind, MemoryKind host, double call, double start, double end) {
    const bool up = kind == CopyKind::kHtoD;
    const double call_end = host == MemoryKind::kPageable ? end + 1 : call + 2;
    const uint64_t corr = b.Api("cudaMemcpyAsync", call, call_end);
    b.AddMemcpy(kind, up ? host : MemoryKind::kDevice, up ? MemoryKind::kDevice : host, kChunk,
                start, end, corr, 17, true);
  };
  for (int i = 0; i < 4; ++i) {
    const double base = 100 + 1000.0 * i;
    b.Launch("_Z7computePf", base - 10, base - 8, base, base + 100, 18);
    copy(CopyKind::kHtoD, MemoryKind::kPinned, base, base + 5, base + 205);
    copy(CopyKind::kDtoH, MemoryKind::kPinned, base + 3, base + 205, base + 405);
  }
  // Not counted: an upload queued behind a download (the next input written into the buffer
  // just read, often), ...
  copy(CopyKind::kDtoH, MemoryKind::kPinned, 5000, 5005, 5105);
  copy(CopyKind::kHtoD, MemoryKind::kPinned, 5002, 5105, 5205);
  // ... a download issued after its upload ended, ...
  copy(CopyKind::kHtoD, MemoryKind::kPinned, 6000, 6005, 6105);
  copy(CopyKind::kDtoH, MemoryKind::kPinned, 6110, 6115, 6215);
  // ... a kernel between the two on their stream, ...
  copy(CopyKind::kHtoD, MemoryKind::kPinned, 7000, 7005, 7105);
  b.Launch("_Z7computePf", 7002, 7003, 7105, 7150, 17);
  copy(CopyKind::kDtoH, MemoryKind::kPinned, 7004, 7150, 7250);
  // ... and a download to pageable memory (it holds the host: no-overlap-default-stream's).
  copy(CopyKind::kHtoD, MemoryKind::kPinned, 8000, 8005, 8105);
  copy(CopyKind::kDtoH, MemoryKind::kPageable, 8003, 8105, 8205);
  b.SetEnd(9000);
  return b;
}

// Two H200s without peer access (.carry/s14/multi_dev.cu, 2026-11-29): cudaMemcpyPeerAsync of
// 256 MiB held the host 7.85 ms while CUPTI recorded a 22 µs DtoH on GPU 0 and a 22 µs HtoD on
// GPU 1, each device→device with the whole copy's bytes; after cudaDeviceEnablePeerAccess the
// same copy was one PtoP record of 680 µs and the call returned at once.
TraceBuilder StagedPeerCopyScenario() {
  TraceBuilder b(3131);
  b.AddContext(1, 7);
  b.AddStream(7, StreamType::kNull);
  b.AddStream(14, StreamType::kDefault);
  b.AddStream(18, StreamType::kDefault, 2);
  b.Launch("fill", 10, 15, 20, 100, 14);
  constexpr uint64_t kBytes = 256u << 20;
  const uint64_t staged = b.Api("cudaMemcpyPeerAsync", 200, 8050);
  b.AddMemcpy(CopyKind::kDtoH, MemoryKind::kDevice, MemoryKind::kDevice, kBytes, 8000, 8022,
              staged, 14, true);
  Memcpy& up = b.AddMemcpy(CopyKind::kHtoD, MemoryKind::kDevice, MemoryKind::kDevice, kBytes,
                           8025, 8047, staged, 18, true);
  up.device_id = 1;
  up.context_id = 2;
  const uint64_t direct = b.Api("cudaMemcpyPeerAsync", 8100, 8110);
  Memcpy& peer = b.AddMemcpy(CopyKind::kPtoP, MemoryKind::kDevice, MemoryKind::kDevice, kBytes,
                             8120, 8800, direct, 14, true);
  peer.src_device_id = 0;
  peer.dst_device_id = 1;
  b.Launch("fill", 8900, 8905, 8910, 9000, 14);
  b.SetEnd(9100);
  return b;
}

TraceBuilder HostFunctionScenario(bool with_streams) {
  TraceBuilder b(5151);
  b.AddContext(1, 7);
  b.AddStream(7, StreamType::kNull);
  b.AddStream(14, StreamType::kDefault);
  double host = 10, gpu = 100;
  for (int step = 0; step < 20; ++step) {
    b.Launch("work", host, host + 5, gpu, gpu + 100, 14);
    b.Api("cudaLaunchHostFunc", host + 6, host + 8);
    if (with_streams) b.records().api_calls.back().stream_id = 14;
    b.Launch("work", host + 9, host + 14, gpu + 2100, gpu + 2200, 14);
    host += 15;
    gpu += 2210;
  }
  b.Api("cudaStreamSynchronize", host, gpu + 10);
  b.SetEnd(gpu + 20);
  return b;
}

TraceBuilder HostOnlyScenario() {
  TraceBuilder b(8181);
  b.Api("cudaGetDeviceCount", 1, 3, 1);
  b.Api("cudaMalloc", 5, 105, 1);
  b.Api("cudaMalloc", 110, 130, 1);
  b.Api("cudaFree", 140, 150, 1);
  b.SetEnd(200);
  return b;
}

namespace {

struct FrameSpec {
  const char* function;  // "" when unnamed
  const char* module;    // path; "" when no module contains the address
  uint64_t offset;
};

// Adds a call stack (innermost frame first) with its frames and modules; returns its id.
uint32_t AddStack(TraceBuilder& b, const std::vector<FrameSpec>& frames) {
  TraceRecords& r = b.records();
  CallStack stack;
  stack.id = static_cast<uint32_t>(r.call_stacks.size() + 1);
  for (const FrameSpec& spec : frames) {
    uint32_t module_id = 0;
    if (*spec.module != '\0') {
      const uint32_t path_id = b.Intern(spec.module);
      for (const StackModule& m : r.stack_modules) {
        if (m.path_id == path_id) module_id = m.id;
      }
      if (module_id == 0) {
        module_id = static_cast<uint32_t>(r.stack_modules.size() + 1);
        const std::string path = spec.module;
        r.stack_modules.push_back({.id = module_id,
                                   .path_id = path_id,
                                   .build_id = "5eed" + std::to_string(module_id),
                                   .executable = path.find(".so") == std::string::npos});
      }
    }
    StackFrame frame{.id = static_cast<uint32_t>(r.stack_frames.size() + 1),
                     .address = module_id != 0 ? 0x7f0000000000 + spec.offset : spec.offset,
                     .module_id = module_id,
                     .module_offset = spec.offset,
                     .function_id = *spec.function ? b.Intern(spec.function) : 0,
                     .function_offset = 0x10};
    r.stack_frames.push_back(frame);
    stack.frame_ids.push_back(frame.id);
  }
  r.call_stacks.push_back(stack);
  return stack.id;
}

}  // namespace

TraceBuilder CallSitesScenario() {
  TraceBuilder b(6262);
  b.AddContext(1, 7);
  b.AddStream(7, StreamType::kNull);
  constexpr const char* kApp = "/home/user/normalize_nrm2";
  constexpr const char* kCublas = "/usr/local/cuda/lib64/libcublas.so.13";
  constexpr const char* kLibc = "/lib/x86_64-linux-gnu/libc.so.6";
  constexpr const char* kCudart = "/opt/torch/lib/libcudart.so.13";
  constexpr const char* kTorch = "/opt/torch/lib/libtorch_cuda.so";
  // cuBLAS's copy of the result: the static cudart inside libcublas, an unnamed internal
  // function, the exported entry point, then the program.
  const uint32_t nrm2 = AddStack(b, {{"cudaMemcpyAsync", kCublas, 0x9a1230},
                                     {"", kCublas, 0x5b0044},
                                     {"cublasSnrm2_v2", kCublas, 0x1c2f10},
                                     {"(anonymous namespace)::NormalizeLoop(float*, int, long)", kApp, 0x4a10},
                                     {"main", kApp, 0x4c02},
                                     {"__libc_start_call_main", kLibc, 0x2724a}});
  // The program's own copy through the cudart it links statically.
  const uint32_t copy_back = AddStack(b, {{"cudart::cudaApiMemcpy(void*, void const*, unsigned long, cudaMemcpyKind)", kApp, 0x61000},
                                          {"cudaMemcpy", kApp, 0x60a00},
                                          {"CopyBack(float*, float*)", kApp, 0x4b80},
                                          {"main", kApp, 0x4c40},
                                          {"__libc_start_call_main", kLibc, 0x2724a}});
  // A synchronisation through the shared cudart from PyTorch's library; the outer frame lies
  // in JIT code (no module).
  const uint32_t torch = AddStack(b, {{"cudaStreamSynchronize", kCudart, 0x51a20},
                                      {"c10::cuda::CUDAStream::synchronize() const", kTorch, 0x7d2a40},
                                      {"", "", 0x7f3a2c001000}});
  const uint32_t t = 1;
  double now = 10;
  for (int i = 0; i < 3; ++i) {
    b.Launch("_Z10SpinKernelm", now, now + 5, now + 8, now + 1008, 7);
    const uint64_t k = b.Api("cudaLaunchKernel", now + 6, now + 9, t);
    b.AddKernel("_Z11nrm2_kernelIfffLi1ELi0ELi128EEv16cublasNrm2ParamsIiT_T1_E", now + 1008,
                now + 1020, k, 7);
    const uint64_t down = b.Api("cudaMemcpyAsync", now + 10, now + 1025, t);
    b.records().api_calls.back().stack_id = nrm2;
    b.Api("cuMemcpyDtoHAsync_v2", now + 11, now + 1024, t, 0, ApiDomain::kDriver, true);
    b.AddMemcpy(CopyKind::kDtoH, MemoryKind::kDevice, MemoryKind::kPageable, 4, now + 1021,
                now + 1022.5, down, 7, true);
    now += 1100;
  }
  const uint64_t spin = b.Api("cudaLaunchKernel", now, now + 4, t);
  b.AddKernel("_Z10SpinKernelm", now + 6, now + 506, spin, 7);
  const uint64_t copy = b.Api("cudaMemcpy", now + 5, now + 600, t);
  b.records().api_calls.back().stack_id = copy_back;
  b.AddMemcpy(CopyKind::kDtoH, MemoryKind::kDevice, MemoryKind::kPageable, 1 << 20, now + 506,
              now + 590, copy, 7, false);
  const uint64_t launch = b.Api("cudaLaunchKernel", now + 610, now + 614, t);
  b.AddKernel("_Z10SpinKernelm", now + 616, now + 916, launch, 7);
  const uint64_t sync = b.Api("cudaStreamSynchronize", now + 615, now + 920, t);
  b.records().api_calls.back().stack_id = torch;
  b.AddSync(SyncType::kStreamSynchronize, now + 616, now + 919, sync, 7);
  b.SetEnd(now + 1000);
  return b;
}

TraceBuilder TrainingStepsScenario(int steps, bool blocking_readback, uint32_t pid) {
  TraceBuilder b(pid);
  b.AddContext(1, 7);
  b.AddStream(7, StreamType::kNull);
  const uint32_t t = 1;
  b.Api("cudaMalloc", 10, 90, t);
  for (int i = 0; i < steps; ++i) {
    const double s = 100.0 + 1000.0 * i;
    const double jitter = 5.0 * (i % 3);
    b.AddRange("step", s, s + 990, t);
    b.AddRange("forward", s + 1, s + 30, t, NvtxKind::kPushPop, 1);
    b.Launch("_Z4gemmPf", s + 10, s + 15, s + 20, s + 400 + jitter, 7);
    b.Launch("_Z4reluPf", s + 16, s + 19, s + 401 + jitter, s + 451 + jitter, 7);
    const double copy_end = blocking_readback ? s + 455 + jitter : s + 25;
    const uint64_t copy = b.Api("cudaMemcpyAsync", s + 20, copy_end, t);
    b.AddMemcpy(CopyKind::kDtoH, MemoryKind::kDevice,
                blocking_readback ? MemoryKind::kPageable : MemoryKind::kPinned, 4,
                s + 452 + jitter, s + 453 + jitter, copy, 7, true);
  }
  b.SetEnd(100.0 + 1000.0 * steps + 50);
  return b;
}

TraceBuilder WarmUpStepsScenario(int steps, double first_us) {
  TraceBuilder b;
  b.AddContext(1, 7);
  b.AddStream(7, StreamType::kNull);
  double s = 100;
  for (int i = 0; i < steps; ++i) {
    const double length = i == 0 ? first_us : 990;
    b.AddRange("step", s, s + length, 1);
    if (i == 0 && first_us > 990) {
      b.Api("cuLibraryLoadData", s + 1, s + 200, 1, 0, ApiDomain::kDriver);
      b.Launch("autotune", s + 300, s + 305, s + 310, s + 320, 7);
    }
    b.Launch("_Z4gemmPf", s + length - 980, s + length - 975, s + length - 970,
             s + length - 600, 7);
    s += length + 10;
  }
  b.SetEnd(s + 50);
  return b;
}

namespace {

UnifiedMemoryCounter Uvm(UvmCounterKind kind, uint64_t value, double start_us, double end_us,
                         uint64_t address, uint32_t src, uint32_t dst, uint32_t flags = 0) {
  return {.counter_kind = kind,
          .value = value,
          .start_ns = Us(start_us),
          .end_ns = Us(end_us),
          .address = address,
          .src_device_id = src,
          .dst_device_id = dst,
          .flags = flags};
}

void Allocation(TraceBuilder& b, uint64_t corr, MemoryKind kind, uint64_t address, uint64_t bytes,
                double at_us, uint32_t device = 0) {
  MemoryOp op;
  op.operation = MemoryOperation::kAllocation;
  op.memory_kind = kind;
  op.address = address;
  op.bytes = bytes;
  op.time_ns = Us(at_us);
  op.correlation_id = corr;
  op.device_id = device;
  b.records().memory_ops.push_back(op);
}

// A stream-ordered allocation or free from a pool.
void PoolOp(TraceBuilder& b, uint64_t corr, MemoryOperation operation, uint64_t address,
            uint64_t bytes, double at_us, uint32_t device, uint64_t pool, uint32_t pool_type,
            uint64_t threshold, uint64_t pool_bytes, uint64_t used_bytes) {
  MemoryOp op;
  op.operation = operation;
  op.memory_kind = MemoryKind::kDevice;
  op.address = address;
  op.bytes = bytes;
  op.time_ns = Us(at_us);
  op.correlation_id = corr;
  op.device_id = device;
  op.stream_id = 7;
  op.async = true;
  op.pool_address = pool;
  op.pool_type = pool_type;
  op.pool_release_threshold = threshold;
  op.pool_bytes = pool_bytes;
  op.pool_used_bytes = used_bytes;
  b.records().memory_ops.push_back(op);
}

}  // namespace

TraceBuilder MemoryPoolScenario() {
  constexpr uint64_t kMiB = 1 << 20;
  constexpr uint64_t kPool0 = 0x7e0000000000, kPool1 = 0x7d0000000000, kImported = 0x7c0000000000;
  TraceBuilder b(/*pid=*/4545);
  b.AddContext(1, 7);
  b.AddStream(7, StreamType::kNull);
  Allocation(b, b.Api("cudaMalloc", 10, 20), MemoryKind::kDevice, 0x500000000, 64 * kMiB, 10);
  // GPU 0's default pool: four 8 MiB allocations, each freed before the next; the pool grows to
  // 8, 16, 24 and 32 MiB (memory given back at synchronisations is mapped again), 8 MiB in use.
  for (int i = 0; i < 4; ++i) {
    const double t = 100 + 100.0 * i;
    const uint64_t address = kPool0 + i * 8 * kMiB;
    PoolOp(b, b.Api("cudaMallocAsync", t, t + 5), MemoryOperation::kAllocation, address,
           8 * kMiB, t + 2, 0, kPool0, 1, 0, (i + 1) * 8 * kMiB, 8 * kMiB);
    PoolOp(b, b.Api("cudaFreeAsync", t + 50, t + 55), MemoryOperation::kRelease, address, 8 * kMiB,
           t + 52, 0, kPool0, 1, 0, (i + 1) * 8 * kMiB, 0);
  }
  // GPU 1: a pool created with threshold 0, then raised to UINT64_MAX (keep all).
  PoolOp(b, b.Api("cudaMallocFromPoolAsync", 600, 605), MemoryOperation::kAllocation, kPool1,
         16 * kMiB, 602, 1, kPool1, 1, 0, 16 * kMiB, 16 * kMiB);
  PoolOp(b, b.Api("cudaMallocFromPoolAsync", 700, 705), MemoryOperation::kAllocation,
         kPool1 + 16 * kMiB, 16 * kMiB, 702, 1, kPool1, 1, UINT64_MAX, 32 * kMiB, 32 * kMiB);
  // An imported pool (IPC): no threshold or size (CUPTI gives a process id there).
  PoolOp(b, b.Api("cudaMallocFromPoolAsync", 800, 805), MemoryOperation::kAllocation, kImported,
         4 * kMiB, 802, 1, kImported, 2, 0, 0, 0);
  b.SetEnd(1000);
  return b;
}

TraceBuilder UnifiedMemoryScenario() {
  constexpr uint64_t kMiB = 1 << 20;
  constexpr uint64_t kManaged = 0x7f0000000000;
  TraceBuilder b;
  b.AddContext(1, 7);
  b.AddStream(7, StreamType::kNull);
  auto& u = b.records().unified_memory_counters;
  // 1 GiB of device memory, then the 256 MiB managed buffer.
  Allocation(b, b.Api("cudaMalloc", 10, 20), MemoryKind::kDevice, 0x500000000, 1024 * kMiB, 10);
  Allocation(b, b.Api("cudaMallocManaged", 30, 40), MemoryKind::kManaged, kManaged, 256 * kMiB, 30);
  // The host touches it (no record: the pages start on the host), then "touch" runs on GPU 0
  // [1000, 13000) µs: 128 fault records of 2 groups each, and 128 host→device migrations of
  // 2 MiB, 80 µs each, back to back from 1100 µs (10.24 ms in all).
  b.Launch("touch", 900, 910, 1000, 13000, 7);
  for (int i = 0; i < 128; ++i) {
    const double t = 1100 + 80.0 * i;
    u.push_back(Uvm(UvmCounterKind::kGpuPageFault, 2, t - 5, t, kManaged + i * 2 * kMiB, 0, 0, 1));
    u.push_back(Uvm(UvmCounterKind::kBytesHtoD, 2 * kMiB, t, t + 80, kManaged + i * 2 * kMiB,
                    kUvmCpu, 0, 2));
  }
  // A fault group while no kernel runs on GPU 0.
  u.push_back(Uvm(UvmCounterKind::kGpuPageFault, 1, 14000, 14010, kManaged, 0, 0, 1));
  // "other" on GPU 1 [15000, 16000) µs, with 3 fault groups of its own at 15100 µs.
  b.Launch("other", 14900, 14910, 15000, 16000, 7);
  b.records().kernels.back().shape.device_id = 1;
  u.push_back(Uvm(UvmCounterKind::kGpuPageFault, 3, 15100, 15120, kManaged + 4096, 1, 0, 1));
  // "tail" on GPU 0 [17000, 18000) µs; a fault group from 17990 to 18100 µs: started inside it.
  b.Launch("tail", 16900, 16910, 17000, 18000, 7);
  u.push_back(Uvm(UvmCounterKind::kGpuPageFault, 4, 17990, 18100, kManaged + 8192, 0, 0, 2));
  // The host reads it back: 64 CPU faults from 20000 to 26300 µs, each followed by a 4 MiB
  // device→host migration of 50 µs.
  for (int i = 0; i < 64; ++i) {
    const double t = 20000 + 100.0 * i;
    u.push_back(Uvm(UvmCounterKind::kCpuPageFault, 0x401000, t, t, kManaged + i * 4 * kMiB,
                    kUvmCpu, 0));
    u.push_back(Uvm(UvmCounterKind::kBytesDtoH, 4 * kMiB, t + 10, t + 60, kManaged + i * 4 * kMiB,
                    0, kUvmCpu, 2));
  }
  // Thrashing between GPUs 0 and 1 (mask 0b11) three times over 400 µs, one throttling of GPU 1.
  for (int i = 0; i < 3; ++i) {
    u.push_back(Uvm(UvmCounterKind::kThrashing, 64 * 1024, 30000 + 200.0 * i, 30000 + 200.0 * i,
                    kManaged, 0b11, 0));
  }
  u.push_back(Uvm(UvmCounterKind::kThrottling, 0, 30500, 30700, kManaged, 1, 0));
  // From a newer writer.
  u.push_back(Uvm(static_cast<UvmCounterKind>(42), 7, 31000, 31000, 0, 0, 0));
  // cudaMalloc of 80 GiB fails: 1 GiB in use on device 0.
  const uint64_t failed = b.Api("cudaMalloc", 32000, 32050);
  for (ApiCall& c : b.records().api_calls) {
    if (c.correlation_id == failed) c.return_value = 2;
  }
  b.SetEnd(33000);
  return b;
}

std::vector<TraceBuilder> LateRankScenario() {
  constexpr uint64_t kComm = 0x1c0ffee5eedull;
  const double offsets[] = {0, 150, -70, 310};
  std::vector<TraceBuilder> ranks;
  for (int r = 0; r < 4; ++r) {
    TraceBuilder& b = ranks.emplace_back(7000 + r);
    b.header().rank = r;
    b.header().start_time_ns = Us(offsets[r] + 100);
    const double o = offsets[r] + 500;  // every time below is on rank 0's clock, then shifted
    b.NcclCommInit(kComm, 4, r, o + 0, o + 50);
    for (int k = 0; k < 3; ++k) {
      const double base = 1000 + k * 5000;
      const double arrive = base + 10 * r + (k == 1 && r == 3 ? 2090 : 0);
      const double last = base + (k == 1 ? 2120 : 30);
      b.NcclCollective("AllReduce", kComm, 8 << 20, o + arrive - 20, o + arrive - 5, o + arrive,
                       o + last + 500);
    }
    b.SetEnd(offsets[r] + 20000);
  }
  return ranks;
}

std::vector<TraceBuilder> SharedGpuScenario() {
  const std::string shared("\x22\x2b\x92\xb5\x44\x3f\x05\xf8\xb6\x63\xf5\xf7\xc1\x7b\x5e\x63", 16);
  const std::string other("\x9a\x01\x92\xb5\x44\x3f\x05\xf8\xb6\x63\xf5\xf7\xc1\x7b\x5e\x00", 16);
  const auto process = [&](uint32_t pid, const std::string& uuid, double first_us) {
    TraceBuilder b(pid);
    b.header().hostname = "node1";
    b.header().start_time_ns = Us(100);
    b.AddContext(1, 7);
    b.AddStream(7, StreamType::kNull);
    b.records().devices.push_back({.id = 0, .name = "H200", .uuid = uuid});
    for (int k = 0; k < 20; ++k) {
      const double at = first_us + 500.0 * k;
      b.Launch("step_kernel", at - 10, at - 5, at, at + 100, 7);
    }
    b.SetEnd(13000);
    return b;
  };
  std::vector<TraceBuilder> out;
  out.push_back(process(7100, shared, 1000));
  out.push_back(process(7101, shared, 3250));
  out.push_back(process(7102, other, 1000));
  return out;
}

}  // namespace libprof::analysis::testing

namespace libprof::analysis::testing {

TraceBuilder StartUpScenario() {
  TraceBuilder b(1919);
  b.AddContext(1, 7);
  b.AddStream(7, StreamType::kNull);
  const uint32_t t = 1;
  // Start-up: the primary context [100, 5100) µs, a first allocation, a first copy (the device's
  // first operation, at 5.4 ms), then two kernels whose first launches load their modules lazily
  // (cuLibraryLoadData nested in cudaLaunchKernel: 49.98 ms and 29.98 ms).
  b.Api("cuDevicePrimaryCtxRetain", 100, 5100, t, 0, ApiDomain::kDriver);
  b.Api("cudaMalloc", 5200, 5300, t);
  const uint64_t h2d = b.Api("cudaMemcpy", 5350, 5420, t);
  b.AddMemcpy(CopyKind::kHtoD, MemoryKind::kPageable, MemoryKind::kDevice, 4096, 5400, 5410, h2d,
              7, false);
  const char* kNorm =
      "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
      "at::native::NormOps<float, float, float>, unsigned int, float, 4> >(at::native::ReduceOp<"
      "float, at::native::NormOps<float, float, float>, unsigned int, float, 4>)";
  const uint64_t first = b.Api("cudaLaunchKernel", 6000, 56000, t);
  b.Api("cuLibraryLoadData", 6010, 55990, t, 0, ApiDomain::kDriver, /*nested=*/true);
  b.AddKernel(kNorm, 56005, 56010, first, 7);
  const uint64_t second = b.Api("cudaLaunchKernel", 56100, 86100, t);
  b.Api("cuLibraryLoadData", 56110, 86090, t, 0, ApiDomain::kDriver, /*nested=*/true);
  b.AddKernel("void at::native::vectorized_elementwise_kernel<4, at::native::AbsFunctor<float>, "
              "at::detail::Array<char*, 2> >(int, at::native::AbsFunctor<float>, "
              "at::detail::Array<char*, 2>)",
              86105, 86110, second, 7);
  // The steady state: 20 steps of x.norm().item(): a 980 µs kernel, a 4-byte copy back to pinned
  // memory queued behind it, and cudaStreamSynchronize waiting for both (976 µs). Before step 15
  // a module is loaded late, for 2 ms (start-up does not reach it: 2 of 17.9 ms since).
  for (int i = 0; i < 20; ++i) {
    const double s = 87000 + 1000.0 * i + (i >= 15 ? 2000 : 0);
    if (i == 15) b.Api("cuModuleLoadData", 102000, 104000, t, 0, ApiDomain::kDriver);
    b.Launch(kNorm, s, s + 5, s + 10, s + 990, 7);
    const uint64_t copy = b.Api("cudaMemcpyAsync", s + 10, s + 15, t);
    b.AddMemcpy(CopyKind::kDtoH, MemoryKind::kDevice, MemoryKind::kPinned, 4, s + 991, s + 992,
                copy, 7, true);
    const uint64_t sync = b.Api("cudaStreamSynchronize", s + 16, s + 995, t);
    b.AddSync(SyncType::kStreamSynchronize, s + 16.5, s + 994.5, sync, 7);
  }
  b.SetEnd(110000);
  return b;
}

TraceBuilder GraphRebuildScenario(int steps, int launches_per_graph, bool rebuild) {
  TraceBuilder b;
  b.AddContext(1, 7);
  b.AddStream(7, StreamType::kNull);
  double t = 10;
  for (int step = 0; step < steps; ++step) {
    if (rebuild || step == 0) {
      b.Api("cudaStreamBeginCapture", t, t + 1);
      b.Api("cudaLaunchKernel", t + 2, t + 3);  // captured: no kernel of its own
      b.Api("cudaLaunchKernel", t + 4, t + 5);
      b.Api("cudaStreamEndCapture", t + 6, t + 8);
      b.Api("cudaGraphInstantiate", t + 10, t + 50);
      b.Api("cuGraphInstantiateWithParams", t + 11, t + 49, 1, 0, ApiDomain::kDriver, true);
      t += 50;
    }
    for (int l = 0; l < launches_per_graph; ++l, t += 40) {
      const uint64_t corr = b.Api("cudaGraphLaunch", t, t + 10);
      b.AddKernel("step", t + 12, t + 20, corr, 7).graph_id = 3;
    }
    if (rebuild) {
      b.Api("cudaGraphExecDestroy", t, t + 6);
      b.Api("cudaGraphDestroy", t + 7, t + 9);
      t += 10;
    }
  }
  b.SetEnd(t + 10);
  return b;
}

}  // namespace libprof::analysis::testing
