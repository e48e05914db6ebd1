#include "tests/analysis/findings_loop.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "analysis/model/trace_loader.h"

namespace libprof::analysis::testing {

namespace {

// A one-frame native stack of `function`, added to `b`; its id.
uint32_t NativeStack(TraceBuilder& b, const std::string& function) {
  TraceRecords& r = b.records();
  const uint32_t frame = static_cast<uint32_t>(r.stack_frames.size() + 1);
  r.stack_frames.push_back(
      {.id = frame, .address = 0x4000 + frame, .function_id = b.Intern(function)});
  const uint32_t stack = static_cast<uint32_t>(r.call_stacks.size() + 1);
  r.call_stacks.push_back({.id = stack, .frame_ids = {frame}});
  return stack;
}

}  // namespace

// Steps of a training loop; every step ends with every stream drained (a quiescent point).
TraceBuilder FindingsLoop(uint64_t seed, int steps, const LoopShape& shape) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(rng() % 10000) / 10000.0;
  };
  TraceBuilder b;
  b.AddContext(1, 0);
  b.AddStream(10, StreamType::kNonBlocking);
  b.AddStream(11, StreamType::kDefault);
  const int threads = 1 + static_cast<int>(rng() % 3);
  std::map<uint32_t, double> stream_free;
  uint64_t next_address = 0x1000, next_sync_id = 1;
  // (event id, sync id, when) of the recordings thread 0 made and those of earlier steps; the
  // other threads' of this step.
  std::vector<std::tuple<uint32_t, uint64_t, double>> recorded, this_step;
  // Start-up: context, a module, a first allocation.
  double now = 100;
  b.Api("cuInit", now, now + 150, 100, 0, ApiDomain::kDriver);
  now += 160;
  if (seed % 4 == 2) {
    // The runtime creates the context inside the program's first call that needs one.
    b.Api("cudaFree", now, now + 400, 100);
    b.records().contexts.back().created_ns = Us(now + 300);
    b.records().contexts.back().created_thread_id = 100;
    now += 410;
  }
  b.Api("cuModuleLoadData", now, now + 80, 100, 0, ApiDomain::kDriver);
  now += 90;
  if (seed % 3 == 1) {
    // A warm-up (start_up.h): a first kernel, 5 ms of host work with the GPU idle but for one
    // more short kernel (a just-in-time compiler tracing the model), then the module it built.
    // Fixed values, so that the other seeds' loops stay what they were.
    b.Launch("eager", now, now + 3, now + 5, now + 7, 10, 100);
    // An autotuner's candidate, timed with a synchronisation: a wait of the warm-up, paid once,
    // and told as XLA's autotuning by its stack (one_time_work.h).
    b.Launch("candidate", now + 2000, now + 2003, now + 2005, now + 2035, 10, 100);
    const uint64_t timed = b.Api("cudaDeviceSynchronize", now + 2004, now + 2036, 100);
    b.records().api_calls.back().stack_id = NativeStack(b, "xla::Autotuner::GetTunedConfig");
    b.AddSync(SyncType::kContextSynchronize, now + 2004, now + 2036, timed);
    for (double at = now + 300; at < now + 5000; at += 700) {
      b.Api("cudaGetDevice", at, at + 2, 100);
    }
    b.Api("cuModuleLoadData", now + 5000, now + 5060, 100, 0, ApiDomain::kDriver);
    now += 5070;
  }
  double step_start = now + uniform(1, 50);
  const double epoch_start = step_start - 1;
  auto malloc_free = [&](uint32_t tid, double at, uint64_t bytes, double* end) {
    const uint64_t address = next_address;
    next_address += 0x100000;
    const uint64_t a = b.Api("cudaMalloc", at, at + uniform(5, 30), tid);
    b.records().memory_ops.push_back(MemoryOp{.operation = MemoryOperation::kAllocation,
                                              .memory_kind = MemoryKind::kDevice,
                                              .address = address,
                                              .bytes = bytes,
                                              .time_ns = b.records().api_calls.back().start_ns + 1000,
                                              .correlation_id = a});
    const double free_at = at + 40 + uniform(0, 20);
    const double free_end = std::max(free_at + uniform(5, 30), stream_free[11] + 2);
    const uint64_t f = b.Api("cudaFree", free_at, free_end, tid);
    b.records().memory_ops.push_back(MemoryOp{.operation = MemoryOperation::kRelease,
                                              .memory_kind = MemoryKind::kDevice,
                                              .address = address,
                                              .bytes = bytes,
                                              .time_ns = b.records().api_calls.back().start_ns + 1000,
                                              .correlation_id = f});
    *end = free_end + 1;
  };
  // Every fifth seed: XLA recompiling mid-run (one-time work in the steady state, start_up.h):
  // a tuner thread times three candidates 1.5 ms apart, each waited for by a call whose stack
  // is the autotuner's, while thread 0's step-end syncs carry the program's own stack, which
  // ends a run of the tuner's calls (the warm-up's candidate is then a run of its own).
  const bool recompiles = seed % 5 == 4;
  // Every sixth seed: a cuFFT plan made at every step (a library's set-up that recurs,
  // start_up.h: not paid once), each step's end stacked too. (Not drawn.)
  const bool plans = seed % 6 == 5;
  // Every seventh seed: a CUDA graph captured, instantiated, launched once and destroyed at
  // every step (graph_rules.h). (Not drawn.)
  const bool graphs = seed % 7 == 2;
  const uint32_t own_stack = recompiles || plans ? NativeStack(b, "train_step") : 0;
  const uint32_t plan_stack = plans ? NativeStack(b, "cufftPlan1d") : 0;
  for (int step = 0; step < steps; ++step) {
    if (recompiles && step == steps / 2) {
      const uint32_t tuner = NativeStack(b, "xla::gpu::GemmFusionAutotunerImpl::Profile");
      double t = std::max(step_start, stream_free[10]);
      for (int c = 0; c < 3; ++c, t += 1500) {
        b.Launch("candidate_" + std::to_string(c), t, t + 3, t + 5, t + 35, 10, 150);
        const uint64_t corr = b.Api("cudaStreamSynchronize", t + 4, t + 36, 150);
        b.records().api_calls.back().stack_id = tuner;
        b.AddSync(SyncType::kStreamSynchronize, t + 4, t + 36, corr, 10);
      }
      stream_free[10] = t - 1500 + 35;
      step_start = t;
    }
    double step_end = step_start;
    for (int t = 0; t < threads; ++t) {
      const uint32_t tid = 100 + t;
      const uint32_t stream = t == 0 ? 10 : t == 1 ? 11 : 13;
      now = step_start + uniform(0, 5);
      const double range_start = now;
      if (plan_stack != 0 && t == 0) {
        b.Api("cuMemAlloc", now, now + 40, tid);
        b.records().api_calls.back().stack_id = plan_stack;
        now += 150;  // the plan's host work
      }
      if (graphs && t == 0) {
        b.Api("cudaStreamBeginCapture", now, now + 1, tid);
        b.Api("cudaLaunchKernel", now + 2, now + 4, tid);  // captured
        b.Api("cudaStreamEndCapture", now + 5, now + 7, tid);
        b.Api("cudaGraphInstantiate", now + 8, now + 48, tid);
        const uint64_t corr = b.Api("cudaGraphLaunch", now + 50, now + 58, tid);
        const double start = std::max(now + 60, stream_free[stream]);
        b.AddKernel("graph_step", start, start + 10, corr, stream).graph_id = 5 + step;
        stream_free[stream] = start + 10;
        b.Api("cudaGraphExecDestroy", now + 59, now + 65, tid);
        now += 70;
      }
      const int iterations = 1 + static_cast<int>(rng() % 3);
      for (int it = 0; it < iterations; ++it) {
        const double inner_start = now;
        const int kernels = static_cast<int>(rng() % 5);
        for (int k = 0; k < kernels; ++k) {
          const double call = uniform(2, 6);
          const uint32_t s = rng() % 7 == 0 ? 0 : stream;  // now and then the legacy stream
          const double start = std::max(now + call + uniform(1, 3), stream_free[s]);
          const double end = start + uniform(1, 80);
          b.Launch("k" + std::to_string(rng() % 5), now, now + call, start, end, s, tid);
          if (rng() % 9 == 0) {  // lazy loading inside the launch
            switch ((step + k) % 3) {  // (not drawn: the loop's other draws stay as they were)
              case 0:  // as a nested call
                b.Api("cuModuleLoadData", now + 0.5, now + call - 0.5, tid, 0,
                      ApiDomain::kDriver, true);
                break;
              case 1:  // as CUDA 13 records it: only CUPTI's overhead record, inside the launch
                b.AddOverhead(TraceBuilder::kLazyFunctionLoading, now + 0.5, now + 1, tid);
                break;
              default:  // the overhead record on a thread with no call then
                b.AddOverhead(TraceBuilder::kRuntimeTriggeredModuleLoading, now, now + call, 999);
            }
          }
          stream_free[s] = end;
          now += call + uniform(0.3, 1.5);
        }
        if (kernels > 0 && (step + it + t) % 5 == 2) {
          // A host function, 300 µs on CUDA's callback thread, and a kernel queued behind it.
          // (Not drawn: the loop's other draws stay as they were.)
          b.Api("cudaLaunchHostFunc", now, now + 2, tid);
          b.records().api_calls.back().stream_id = stream;
          const double start = std::max(now + 8, stream_free[stream] + 300);
          b.Launch("after_host_function", now + 3, now + 6, start, start + 20, stream, tid);
          stream_free[stream] = start + 20;
          now += 7;
        }
        switch (rng() % 4) {
          case 0: {  // pinned, async
            const uint64_t corr = b.Api("cudaMemcpyAsync", now, now + 3, tid);
            const double start = std::max(now + 4, stream_free[stream]);
            b.AddMemcpy(CopyKind::kHtoD, MemoryKind::kPinned, MemoryKind::kDevice, 1 << 20, start,
                        start + uniform(5, 40), corr, stream, true);
            stream_free[stream] = start + 40;
            now += 4;
            if ((step + it + t) % 4 == 1) {
              // A download queued behind it on its stream (two-way-copies-one-stream). (Not
              // drawn: the loop's other draws stay as they were.)
              const uint64_t down = b.Api("cudaMemcpyAsync", now, now + 3, tid);
              const double down_start = stream_free[stream];
              b.AddMemcpy(CopyKind::kDtoH, MemoryKind::kDevice, MemoryKind::kPinned, 1 << 20,
                          down_start, down_start + 30, down, stream, true);
              stream_free[stream] = down_start + 30;
              now += 4;
            }
            break;
          }
          case 1: {  // pageable, async: holds the call; then a launch on another stream
            const double start = std::max(now + 2, stream_free[stream]);
            const double end = start + uniform(20, 60);
            const uint64_t corr = b.Api("cudaMemcpyAsync", now, end + 1, tid);
            b.AddMemcpy(CopyKind::kHtoD, MemoryKind::kPageable, MemoryKind::kDevice, 1 << 20,
                        start, end, corr, stream, true);
            stream_free[stream] = end;
            now = end + 2;
            const uint32_t other = stream == 10 ? 11 : 10;
            const double k_start = std::max(now + 4, stream_free[other]);
            b.Launch("after_copy", now, now + 3, k_start, k_start + uniform(10, 50), other, tid);
            stream_free[other] = k_start + 50;
            now += 4;
            break;
          }
          case 2: {  // pageable, synchronous, on the legacy stream
            const double start = std::max({now + 2, stream_free[0], stream_free[stream]});
            const double end = start + uniform(30, 90);
            const uint64_t corr = b.Api("cudaMemcpy", now, end + 1, tid);
            b.AddMemcpy(CopyKind::kDtoH, MemoryKind::kDevice, MemoryKind::kPageable, 1 << 20,
                        start, end, corr, 0, false);
            stream_free[0] = end;
            now = end + 1.5;
            break;
          }
          default: {  // an event, recorded now, synchronised now or in a later step
            const uint64_t corr = b.Api("cudaEventRecord", now, now + 1, tid);
            const uint32_t event = 1 + static_cast<uint32_t>(rng() % 3);
            const uint64_t sync_id = next_sync_id++;
            b.AddEvent(event, sync_id, corr, stream);
            (t == 0 ? recorded : this_step).push_back({event, sync_id, now});
            now += 2;
            break;
          }
        }
        // Thread 0 synchronises its own recordings and those of earlier steps (so that the one
        // it names is the event's latest, unless stale ones are asked for).
        if (rng() % 3 == 0 && !recorded.empty() && (t == 0 || shape.stale_event_syncs)) {
          auto [event, sync_id, when] = recorded[rng() % recorded.size()];
          for (const auto& [e, id, at] : recorded) {
            if (e == event && at > when && !shape.stale_event_syncs) {  // the latest
              sync_id = id;
              when = at;
            }
          }
          const double end = std::max(now + 1, stream_free[stream] + 1);
          const uint64_t corr = b.Api("cudaEventSynchronize", now, end, tid);
          b.AddSync(SyncType::kEventSynchronize, now, end, corr, kNoStream,
                    rng() % 2 ? sync_id : 0)
              .event_id = event;
          now = end + 0.5;
        }
        if (rng() % 6 == 0) {
          double end = 0;
          malloc_free(tid, now, 1 << (16 + rng() % 2), &end);
          now = end;
        }
        if (rng() % 8 == 0) {  // a device-wide synchronisation
          double drained = now + 1;
          for (const auto& [s, free] : stream_free) drained = std::max(drained, free + 1);
          const uint64_t corr = b.Api("cudaDeviceSynchronize", now, drained, tid);
          b.AddSync(SyncType::kContextSynchronize, now, drained, corr);
          now = drained + 0.5;
        }
        b.AddRange("iteration", inner_start, now + 0.2, tid, NvtxKind::kPushPop, 1);
        now += uniform(0, 20);  // host work
      }
      if (t == 0 && rng() % 4 == 0) {  // device 1, now and then
        const uint64_t corr = b.Api("cudaLaunchKernel", now, now + 3, tid);
        b.AddKernel("on_gpu1", now + 5, now + 5 + uniform(5, 60), corr, 20).shape.device_id = 1;
        stream_free[20] = now + 70;
        now += 4;
      }
      if (t == 0 && rng() % 10 == 0) {  // a long host stretch: the GPUs idle, calls meanwhile
        const double until = now + uniform(300, 3000);
        for (double at = now + 10; at < until; at += uniform(40, 400)) {
          b.Api(rng() % 2 ? "cudaGetDevice" : "cudaStreamQuery", at, at + uniform(1, 30), tid);
        }
        if (rng() % 3 == 0) b.Api("cuModuleLoadData", until - 100, until - 20, tid, 0,
                                  ApiDomain::kDriver);
        now = until;
      }
      // Every fourth seed: a stream-ordered pair from a pool of release threshold 0, whose
      // memory the step-end synchronisation gives back to the OS (200 µs) and the next step's
      // allocation maps again (100 µs; memory_rules.h). (Not drawn.)
      const bool gives_back = t == 0 && seed % 4 == 3;
      if (gives_back) {
        for (const auto& [api, op, at] :
             {std::tuple{"cudaMallocAsync", MemoryOperation::kAllocation, now},
              std::tuple{"cudaFreeAsync", MemoryOperation::kRelease, now + 101}}) {
          const double cost = op == MemoryOperation::kAllocation ? 100 : 2;
          MemoryOp m{.operation = op,
                     .memory_kind = MemoryKind::kDevice,
                     .address = 0xF000'0000,
                     .bytes = 1 << 20};
          m.correlation_id = b.Api(api, at, at + cost, tid);
          m.time_ns = b.records().api_calls.back().start_ns + 1000;
          m.stream_id = stream;
          m.async = true;
          m.pool_type = 1;  // a local pool, release threshold 0
          m.pool_bytes = 1 << 20;
          b.records().memory_ops.push_back(m);
        }
        now += 104;
      }
      // The step ends with every stream drained.
      double drained = now + 1;
      for (const auto& [s, free] : stream_free) drained = std::max(drained, free + 1);
      if (gives_back) drained += 200;
      const uint64_t corr = b.Api("cudaStreamSynchronize", now, drained, tid);
      if (t == 0) b.records().api_calls.back().stack_id = own_stack;
      b.AddSync(SyncType::kStreamSynchronize, now, drained, corr, stream);
      b.AddRange("step", range_start, drained + 0.5, tid);
      step_end = std::max(step_end, drained + 1);
    }
    step_start = step_end + uniform(1, 30);
    recorded.insert(recorded.end(), this_step.begin(), this_step.end());
    this_step.clear();
  }
  if (shape.epoch_range) b.AddRange("epoch", epoch_start, step_start, 100);
  b.SetEnd(step_start + 10);
  // CUDA numbers calls as they start; the threads above were written one after another.
  b.NumberCallsByStart();
  return b;
}

// Options that make every rule family fire on the loops above.
std::vector<FindingsOptions> OptionSets() {
  FindingsOptions a;
  a.min_wait_ns = 1'000;
  a.gap_threshold_ns = 200'000;
  a.churn_min_pairs = 2;
  FindingsOptions b = a;
  b.util_chunks = 7;
  b.util_threshold = 0.9;
  b.idle_share = 0.1;
  b.gap_threshold_ns = 30'000;
  FindingsOptions c;  // the defaults
  return {a, b, c};
}

// A finding as the reports show it, with its seq.
std::string Describe(uint64_t seq, const Finding& f) {
  std::string s = std::to_string(seq) + " " + std::string(RuleName(f.rule)) + " " + f.api + " " +
                  std::to_string(f.thread_id) + " " + std::to_string(f.correlation_id) + " " +
                  std::to_string(f.host_start_ns) + "+" + std::to_string(f.host_duration_ns) +
                  " lost " + std::to_string(f.blocked_ns) + (f.in_start_up ? " start-up" : "") +
                  (f.one_time != OneTimeWork::kNone ? " " + std::string(OneTimeWorkId(f.one_time))
                                                    : "") +
                  " [" + f.explanation + "]";
  for (const std::string& n : f.nvtx) s += " /" + n;
  return s;
}

// The flush delivery's disorder, as a horizon the windows wait for: a flush and the device
// lag, and 2 ms for a call or a queued operation that ends after a cut it started before (the
// longest of these loops' waits; libprof's horizon is two flush intervals).
WindowLimits LimitsFor(double flush_us, double lag_us, size_t cut_every) {
  return {.horizon_ns = static_cast<uint64_t>((flush_us + lag_us + 2000) * 1000),
          .cut_every_records = cut_every};
}

WindowLimits WriteFlushedForWindows(const TraceBuilder& b, uint64_t seed, const std::string& path,
                                    size_t cut_spread) {
  std::mt19937_64 rng(seed);
  const double flush_us = 20 + static_cast<double>(rng() % 300);
  const double lag_us = static_cast<double>(rng() % 300);
  b.WriteFlushed(path, flush_us, lag_us);
  return LimitsFor(flush_us, lag_us, 16 + rng() % cut_spread);
}

std::vector<std::string> WholeFindings(const std::string& path, const FindingsOptions& options) {
  std::vector<std::string> warnings;
  auto loaded = LoadTraceFile(path, &warnings);
  EXPECT_TRUE(loaded.has_value());
  std::vector<std::pair<uint64_t, std::string>> out;
  for (const ProcessTrace& t : *loaded) {
    StreamFindings(t, options, [&](Finding&& f, uint64_t seq) {
      out.push_back({seq, Describe(seq, f)});
    });
  }
  std::sort(out.begin(), out.end());
  std::vector<std::string> lines;
  for (auto& [seq, line] : out) lines.push_back(std::move(line));
  return lines;
}

}  // namespace libprof::analysis::testing
