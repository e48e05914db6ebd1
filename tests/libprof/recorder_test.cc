#include "libprof/recorder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "libprof/capture_gates.h"
#include "proto/trace_reader.h"

namespace libprof {
namespace {

// A fake CUPTI: a "buffer" is an array of ApiCall structs, decoded by copying them out.
struct FakeActivity final : ActivitySource {
  BufferPool* pool = nullptr;
  FlushRequester* writer = nullptr;
  std::mutex mutex;
  std::deque<std::pair<uint8_t*, size_t>> completed;
  std::atomic<int> flushes{0};
  std::atomic<int> final_flushes{0};
  std::atomic<uint64_t> dropped{0};
  std::atomic<uint64_t> undecoded{0};
  std::atomic<bool> emit_device{false};
  // Takeover: buffers never come while launches go on.
  std::atomic<bool> launching{false};
  std::atomic<uint64_t> launches{0};

  void Connect(FlushRequester* w) override { writer = w; }
  void Flush() override { ++flushes; }
  void FlushFinal() override { ++final_flushes; }
  bool TakeBuffer(TraceRecords* out) override {
    std::pair<uint8_t*, size_t> next;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (completed.empty()) return false;
      next = completed.front();
      completed.pop_front();
    }
    if (emit_device) {
      DeviceInfo device;
      device.name = "H200";
      device.sm_count = 132;
      out->devices.push_back(device);
    }
    for (size_t at = 0; at + sizeof(ApiCall) <= next.second; at += sizeof(ApiCall)) {
      ApiCall call;
      std::memcpy(&call, next.first + at, sizeof call);
      out->api_calls.push_back(call);
    }
    pool->Release(next.first, next.second);
    return true;
  }
  uint64_t TakeDropped() override { return dropped.exchange(0); }
  uint64_t TakeUndecoded() override { return undecoded.exchange(0); }
  ActivityCounters Counters() override {
    if (launching) launches += 10;
    return {.buffers = 0, .launches = launches.load(), .recording = launching.load()};
  }
  void CountLaunches(bool) override {}
  // Urgent flushes: the interval the recorder is asked to keep, and how often it asked.
  std::atomic<uint32_t> urgent_ms{0};
  std::atomic<int> urgent_asked{0};
  uint32_t UrgentFlushIntervalMs() override {
    ++urgent_asked;
    return urgent_ms.load();
  }

  // As CUPTI's buffer-completed callback would.
  void Complete(uint8_t* buffer, size_t size) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      completed.emplace_back(buffer, size);
    }
    writer->RequestFlush();
  }
};

struct FakeNvtx final : NvtxSource {
  std::atomic<uint64_t> dropped{0};
  std::atomic<bool> final_drain{false};
  void Drain(StringInterner&, std::vector<NvtxEvent>* events, std::vector<NvtxDomain>*,
             std::vector<NvtxPayloadSchema>*, bool final, uint64_t now_ns) override {
    if (!final) return;
    final_drain = true;
    NvtxEvent open_range;
    open_range.kind = NvtxKind::kPushPop;
    open_range.start_ns = 5;
    open_range.end_ns = now_ns;
    open_range.open = true;
    events->push_back(open_range);
  }
  uint64_t TakeDropped() override { return dropped.exchange(0); }
};

struct FakeCallSites final : CallSiteSource {
  std::mutex mutex;
  std::vector<CallSitePair> noted;  // "at API entry"
  std::atomic<int> stack_takes{0};
  void Note(uint64_t correlation_id, uint32_t stack_id) {
    std::lock_guard<std::mutex> lock(mutex);
    noted.emplace_back(correlation_id, stack_id);
  }
  void TakePairs(std::vector<CallSitePair>* out) override {
    std::lock_guard<std::mutex> lock(mutex);
    out->swap(noted);
    noted.clear();
  }
  // Hands its one stack over the first time (a real source hands each new stack once).
  std::atomic<int> final_takes{0};
  void TakeNewStacks(StringInterner&, TraceRecords* out, bool final) override {
    if (final) ++final_takes;
    if (stack_takes++ > 0) return;
    out->call_stacks.push_back({.id = 7, .frame_ids = {1, 2}});
    out->stack_frames.push_back({.id = 1, .address = 0x1000});
    out->stack_frames.push_back({.id = 2, .address = 0x2000});
  }
};

struct FakeDetails final : DetailsSource {
  void CompleteHeader(TraceHeader* header) override { header->cuda_driver_version = 13000; }
  uint32_t RuntimeVersion() override { return 12080u; }
  void CompleteDevice(DeviceInfo* device) override { device->pci_bus_id = "0000:18:00.0"; }
};

// What the capture gates switch, with when.
struct FakeSwitch final : CaptureGates::Switch {
  std::mutex mutex;
  std::vector<std::pair<bool, uint64_t>> changes;  // (on, when)
  void SetRecording(bool on) override {
    std::lock_guard<std::mutex> lock(mutex);
    changes.emplace_back(on, TraceClock().NowNs());
  }
};

Settings WindowSettings(uint32_t delay_ms, uint32_t duration_ms) {
  Settings settings;
  settings.delay_ms = delay_ms;
  settings.duration_ms = duration_ms;
  return settings;
}

struct Fixture {
  std::string path;
  CaptureContext context;
  BufferPool pool{1 << 16, 1, 4};
  FakeActivity activity;
  FakeNvtx nvtx;
  FakeCallSites call_sites;
  FakeDetails details;
  FakeSwitch recording;
  CaptureGates gates;
  std::unique_ptr<Recorder> recorder;

  explicit Fixture(const std::string& name, uint32_t flush_ms = 1000, uint32_t delay_ms = 0,
                   uint32_t duration_ms = 0)
      : gates(WindowSettings(delay_ms, duration_ms)) {
    path = ::testing::TempDir() + "/" + name + "-" + std::to_string(getpid()) + ".pb";
    std::string error;
    auto sink = FileSink::Create(path, /*overwrite=*/true, &error);
    EXPECT_NE(sink, nullptr) << error;
    activity.pool = &pool;
    gates.Connect(&recording, context.clock.NowNs());
    Recorder::Options options;
    options.flush_interval_ms = flush_ms;
    Recorder::Sources sources{.activity = &activity,
                              .nvtx = &nvtx,
                              .call_sites = &call_sites,
                              .details = &details,
                              .gates = &gates};
    recorder = std::make_unique<Recorder>(std::move(sink), path, &context, &pool, sources, options);
    TraceHeader header;
    header.pid = 77;
    EXPECT_TRUE(recorder->Start(header));
  }
  ~Fixture() {
    recorder.reset();  // stopped and closed before its file goes
    std::remove(path.c_str());
  }

  // Hands the recorder a buffer holding `calls`, as CUPTI's completion callback would.
  void Complete(const std::vector<ApiCall>& calls) {
    uint8_t* buffer = pool.Acquire();
    ASSERT_NE(buffer, nullptr);
    std::memcpy(buffer, calls.data(), calls.size() * sizeof(ApiCall));
    activity.Complete(buffer, calls.size() * sizeof(ApiCall));
  }

  // `while_writing`: the file may be caught before its header is whole (the writer is running):
  // then nothing is read, without a failure.
  TraceRecords ReadAll(bool* has_run_end = nullptr, bool while_writing = false) {
    auto reader = TraceReader::Open(path);
    EXPECT_TRUE(reader.has_value() || while_writing) << reader.error();
    TraceRecords all, chunk;
    if (!reader.has_value()) return all;
    header = (*reader)->header();
    while ((*reader)->Next(&chunk)) {
      all.api_calls.insert(all.api_calls.end(), chunk.api_calls.begin(), chunk.api_calls.end());
      all.nvtx_events.insert(all.nvtx_events.end(), chunk.nvtx_events.begin(),
                             chunk.nvtx_events.end());
      all.drops.insert(all.drops.end(), chunk.drops.begin(), chunk.drops.end());
      all.devices.insert(all.devices.end(), chunk.devices.begin(), chunk.devices.end());
      all.call_stacks.insert(all.call_stacks.end(), chunk.call_stacks.begin(),
                             chunk.call_stacks.end());
      all.stack_frames.insert(all.stack_frames.end(), chunk.stack_frames.begin(),
                              chunk.stack_frames.end());
      if (chunk.run_end) all.run_end = chunk.run_end;
      if (chunk.cuda_runtime_version) all.cuda_runtime_version = chunk.cuda_runtime_version;
    }
    return all;
  }
  TraceHeader header;
};

ApiCall Call(ApiDomain domain, uint64_t start, uint64_t end, uint64_t corr) {
  ApiCall c;
  c.domain = domain;
  c.start_ns = start;
  c.end_ns = end;
  c.thread_id = 9;
  c.correlation_id = corr;
  return c;
}

// Proves the whole pipeline: buffers in, header completed, nesting applied, drops and NVTX
// drained, forced flush at stop, run end written, buffers back in the pool.
TEST(RecorderTest, StopWritesEverything) {
  Fixture f("recorder-stop");
  f.Complete({Call(ApiDomain::kDriver, 110, 120, 2), Call(ApiDomain::kRuntime, 100, 130, 1)});
  f.activity.dropped = 3;
  f.activity.undecoded = 2;  // records of a kind this build does not decode
  f.recorder->Stop("exit");
  f.recorder->Stop("exit");  // idempotent
  EXPECT_EQ(f.activity.final_flushes.load(), 1);
  EXPECT_TRUE(f.nvtx.final_drain.load());
  TraceRecords all = f.ReadAll();
  EXPECT_EQ(f.header.pid, 77u);
  EXPECT_EQ(f.header.cuda_driver_version, 13000u);
  EXPECT_EQ(all.cuda_runtime_version, 12080u);
  ASSERT_EQ(all.api_calls.size(), 2u);
  for (const ApiCall& c : all.api_calls) EXPECT_EQ(c.nested, c.correlation_id == 2);
  ASSERT_EQ(all.nvtx_events.size(), 1u);
  EXPECT_TRUE(all.nvtx_events[0].open);
  ASSERT_EQ(all.drops.size(), 2u);
  EXPECT_EQ(all.drops[0].source, "cupti");
  EXPECT_EQ(all.drops[0].count, 3u);
  EXPECT_EQ(all.drops[1].source, "cupti-undecoded");
  EXPECT_EQ(all.drops[1].count, 2u);
  ASSERT_TRUE(all.run_end.has_value());
  EXPECT_EQ(all.run_end->reason, "exit");
  EXPECT_EQ(all.run_end->records_dropped, 5u);
  EXPECT_EQ(all.run_end->records_written, 3u);  // 2 API calls + 1 NVTX range
  EXPECT_EQ(f.recorder->records_dropped(), 5u);
  uint8_t* recycled = f.pool.Acquire();  // the decoded buffer went back to the pool
  EXPECT_NE(recycled, nullptr);
  f.pool.Release(recycled, 0);
}

// Proves call stacks noted at API entry reach the API call with the same correlation id (and
// no other), that a call with no noted stack keeps 0, and that the symbolised stacks are written
// before the trace ends, with one final take.
TEST(RecorderTest, CallSitesJoinTheirApiCalls) {
  Fixture f("recorder-call-sites");
  f.call_sites.Note(1, 7);
  f.call_sites.Note(3, 5);  // a call never recorded (outside a capture range, say)
  f.Complete({Call(ApiDomain::kRuntime, 100, 130, 1), Call(ApiDomain::kRuntime, 140, 150, 2)});
  f.recorder->Stop("exit");
  EXPECT_EQ(f.call_sites.final_takes.load(), 1);
  TraceRecords all = f.ReadAll();
  ASSERT_EQ(all.api_calls.size(), 2u);
  for (const ApiCall& c : all.api_calls) {
    EXPECT_EQ(c.stack_id, c.correlation_id == 1 ? 7u : 0u) << c.correlation_id;
  }
  ASSERT_EQ(all.call_stacks.size(), 1u);
  EXPECT_EQ(all.call_stacks[0].frame_ids, (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(all.stack_frames.size(), 2u);
}

// Proves stacks survive a crash: while the program still runs (no run end), a call's stack is
// already in the file, in the chunk of the call or an earlier one.
TEST(RecorderTest, StacksAreWrittenWithTheirFirstCall) {
  Fixture f("recorder-stacks-early", /*flush_ms=*/20);
  f.call_sites.Note(1, 7);
  f.Complete({Call(ApiDomain::kRuntime, 100, 130, 1)});
  size_t call_chunk = 0, stack_chunk = 0;
  bool found = false;
  for (int i = 0; i < 300 && !found; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    auto reader = TraceReader::Open(f.path);
    if (!reader.has_value()) continue;  // the writer thread has not written the header yet
    TraceRecords chunk;
    bool call_seen = false, stack_seen = false, run_end = false;
    for (size_t n = 0; (*reader)->Next(&chunk); ++n) {
      for (const ApiCall& c : chunk.api_calls) {
        if (c.stack_id == 7 && !call_seen) call_seen = true, call_chunk = n;
      }
      if (!chunk.call_stacks.empty() && !stack_seen) stack_seen = true, stack_chunk = n;
      run_end |= chunk.run_end.has_value();
    }
    found = call_seen;
    if (found) {
      EXPECT_FALSE(run_end);
      EXPECT_TRUE(stack_seen);
      EXPECT_LE(stack_chunk, call_chunk);
    }
  }
  EXPECT_TRUE(found);
  f.recorder->Stop("exit");
  TraceRecords all = f.ReadAll();
  EXPECT_EQ(all.call_stacks.size(), 1u);  // written once
}

// Proves device records are completed (PCI bus id from the driver) before they are written.
TEST(RecorderTest, DevicesAreCompleted) {
  Fixture f("recorder-devices");
  f.activity.emit_device = true;
  f.Complete({Call(ApiDomain::kRuntime, 100, 130, 1)});
  f.recorder->Stop("exit");
  TraceRecords all = f.ReadAll();
  ASSERT_EQ(all.devices.size(), 1u);
  EXPECT_EQ(all.devices[0].name, "H200");
  EXPECT_EQ(all.devices[0].pci_bus_id, "0000:18:00.0");
}

// Proves the periodic flush: records reach the file within a few intervals while the program
// still runs, so a crash loses at most the last interval.
TEST(RecorderTest, PeriodicFlushWritesWhileRunning) {
  Fixture f("recorder-periodic", /*flush_ms=*/20);
  f.Complete({Call(ApiDomain::kRuntime, 100, 130, 1)});
  TraceRecords seen;
  for (int i = 0; i < 200 && seen.api_calls.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    seen = f.ReadAll(nullptr, /*while_writing=*/true);
  }
  EXPECT_EQ(seen.api_calls.size(), 1u);
  EXPECT_FALSE(seen.run_end.has_value());  // still recording
  EXPECT_GT(f.activity.flushes.load(), 0);
  f.recorder->Stop("exit");
}

// Proves the source's urgent flushes (unified-memory events a driver queue would drop): while it
// asks for a short interval, Flush() comes many times per periodic tick; once it asks for none,
// only the ticks remain. The tick is an hour, so every flush counted here is an urgent one.
TEST(RecorderTest, UrgentFlushesComeBetweenTicks) {
  Fixture f("recorder-urgent", /*flush_ms=*/3600000);
  f.activity.urgent_ms = 2;
  f.Complete({Call(ApiDomain::kRuntime, 100, 130, 1)});  // wakes the writer, which asks
  for (int i = 0; i < 500 && f.activity.flushes.load() < 10; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GE(f.activity.flushes.load(), 10);
  f.activity.urgent_ms = 0;
  // The flush in progress may still come; after it, none.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const int after = f.activity.flushes.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(f.activity.flushes.load(), after);
  f.recorder->Stop("exit");
  EXPECT_EQ(f.ReadAll().api_calls.size(), 1u);
}

// Proves the takeover watch runs on the recorder's ticks: launches going on while no buffer comes
// (another CUPTI client took the buffers) are written into the trace as their own drop report,
// apart from the buffer-space drops, with the launches missed since the silence began.
TEST(RecorderTest, CaptureTakeoverIsReported) {
  Fixture f("recorder-takeover", /*flush_ms=*/10);
  f.activity.launching = true;
  TraceRecords all;
  for (int i = 0; i < 200 && all.drops.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    all = f.ReadAll();
  }
  f.recorder->Stop("exit");
  all = f.ReadAll();
  ASSERT_EQ(all.drops.size(), 1u);
  EXPECT_EQ(all.drops[0].source, "cupti-taken-over");
  // Ticks 1..4 read 10..40 launches: counting starts at the first, silence at the second (10),
  // and the third silent tick (40) concludes.
  EXPECT_EQ(all.drops[0].count, 30u);
  EXPECT_EQ(all.run_end->records_dropped, 0u);
}

// Proves the writer thread is the gates' timer: the delay/duration window opens, then closes,
// each at (not before) its moment, even with a flush interval far longer than either.
TEST(RecorderTest, TimeWindowOpensAndCloses) {
  const uint64_t start = TraceClock().NowNs();
  Fixture f("recorder-window", /*flush_ms=*/10000, /*delay_ms=*/30, /*duration_ms=*/50);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  f.recorder->Stop("exit");
  std::lock_guard<std::mutex> lock(f.recording.mutex);
  ASSERT_EQ(f.recording.changes.size(), 2u);
  EXPECT_TRUE(f.recording.changes[0].first);
  EXPECT_FALSE(f.recording.changes[1].first);
  EXPECT_GE(f.recording.changes[0].second, start + 30000000);
  EXPECT_GE(f.recording.changes[1].second, start + 80000000);
  EXPECT_LT(f.recording.changes[1].second, start + 280000000);  // not at the next flush
}

// Proves the signal path: a stop requested the async-signal-safe way finishes the trace with the
// signal named, and the waiter is released.
TEST(RecorderTest, SignalStopFinishesTrace) {
  Fixture f("recorder-signal");
  f.Complete({Call(ApiDomain::kRuntime, 100, 130, 1)});
  f.recorder->RequestStopFromSignal(SIGTERM);
  EXPECT_TRUE(f.recorder->WaitStoppedFromSignal(5000));
  TraceRecords all = f.ReadAll();
  ASSERT_TRUE(all.run_end.has_value());
  EXPECT_EQ(all.run_end->reason, "signal SIGTERM");
  EXPECT_EQ(all.api_calls.size(), 1u);
  f.recorder->Stop("exit");  // joins; must not write a second run end
  EXPECT_TRUE(f.ReadAll().run_end.has_value());
}

}  // namespace
}  // namespace libprof
