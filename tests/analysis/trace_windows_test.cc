// Proves the windowed read (trace_windows.h) with `profview streams` on it: on random training
// loops of several threads and streams of every class, delivered as libprof's flushes deliver
// them (out of order between threads' calls and device work), the windows' streams reports
// added up equal the whole trace's whenever the read says it is exact; with a horizon as long
// as the disorder the read is exact and cuts several windows; with a horizon too short it
// notices the disorder (inexact) instead of answering wrong; a kernel issued before a cut and
// delivered after it makes the read inexact; a file of several processes is inexact at once.
#include "analysis/model/trace_windows.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <random>

#include "proto/trace_merge.h"
#include "tests/analysis/trace_builder.h"
#include "analysis/metrics/streams.h"
#include "analysis/reports/streams_report.h"

namespace libprof::analysis::testing {
namespace {

// Steps of a training loop on `threads` threads, all threads starting each step together and
// draining their streams at its end (a quiescent point between steps). Per thread and
// iteration: kernel launches (2-4 µs calls; kernels queue on the thread's stream), a copy
// (pinned HtoD async, or pageable DtoH that holds the call until done) and now and then a
// cudaStreamSynchronize. Streams: 10 non-blocking, 11 default, 12 without a STREAM record but
// issued to through _ptsz calls (per-thread default), 13 without a record (blocking), 0 the
// legacy null stream of context 1 (a memset now and then).
TraceBuilder RandomLoop(uint64_t seed, int steps) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(rng() % 10000) / 10000.0;
  };
  TraceBuilder b;
  b.AddContext(1, 0);
  b.AddStream(10, StreamType::kNonBlocking);
  b.AddStream(11, StreamType::kDefault);
  const int threads = 1 + static_cast<int>(rng() % 4);
  double step_start = 100;
  std::map<uint32_t, double> stream_free;
  for (int step = 0; step < steps; ++step) {
    double step_end = step_start;
    for (int t = 0; t < threads; ++t) {
      const uint32_t tid = 100 + t;
      const uint32_t stream = 10 + static_cast<uint32_t>(t);
      const bool ptsz = stream == 12;
      double now = step_start + uniform(0, 5);
      const double range_start = now;
      const int iterations = 1 + static_cast<int>(rng() % 4);
      for (int it = 0; it < iterations; ++it) {
        const int kernels = static_cast<int>(rng() % 6);
        for (int k = 0; k < kernels; ++k) {
          const double call = uniform(2, 4);
          const double start = std::max(now + call + uniform(1, 3), stream_free[stream]);
          const double end = start + uniform(1, 60);
          b.Launch("k" + std::to_string(rng() % 5), now, now + call, start, end, stream, tid,
                   ptsz ? "cudaLaunchKernel_ptsz" : "cudaLaunchKernel");
          stream_free[stream] = end;
          now += call + uniform(0.3, 1.5);
        }
        if (rng() % 2) {
          const uint64_t corr = b.Api("cudaMemcpyAsync", now, now + 3, tid);
          const double start = std::max(now + 4, stream_free[stream]);
          b.AddMemcpy(CopyKind::kHtoD, MemoryKind::kPinned, MemoryKind::kDevice, 1 << 20, start,
                      start + uniform(5, 40), corr, stream, true);
          stream_free[stream] = start + 40;
          now += 4;
        } else {
          const double start = std::max(now + 2, stream_free[stream]);
          const double end = start + uniform(2, 30);
          const uint64_t corr = b.Api("cudaMemcpy", now, end + 1, tid);
          b.AddMemcpy(CopyKind::kDtoH, MemoryKind::kDevice, MemoryKind::kPageable, 4096, start,
                      end, corr, stream, false);
          stream_free[stream] = end;
          now = end + 1.5;
        }
        if (rng() % 5 == 0) {
          const double start = std::max(now + 2, stream_free[0]);
          const uint64_t corr = b.Api("cudaMemset", now, start + 6, tid);
          b.AddMemset(MemoryKind::kDevice, 1 << 16, start, start + 5, corr, 0, false);
          stream_free[0] = start + 5;
          now = start + 7;
        }
        if (rng() % 3 == 0) {
          const double end = std::max(now + 1, stream_free[stream] + 1);
          const uint64_t corr = b.Api("cudaStreamSynchronize", now, end, tid);
          b.AddSync(SyncType::kStreamSynchronize, now, end, corr, stream);
          now = end + 0.5;
        }
        now += uniform(0, 20);  // host work
      }
      // The step ends with the stream drained.
      const double end = std::max(now + 1, stream_free[stream] + 1);
      const uint64_t corr = b.Api("cudaStreamSynchronize", now, end, tid);
      b.AddSync(SyncType::kStreamSynchronize, now, end, corr, stream);
      b.AddRange("step", range_start, end + 0.5, tid);
      step_end = std::max({step_end, end + 1, stream_free[0] + 1});
    }
    step_start = step_end + uniform(1, 30);
  }
  b.SetEnd(step_start + 10);
  // CUDA numbers calls as they start; the threads above were written one after another.
  std::vector<std::pair<uint64_t, uint64_t>> by_start;  // (start, corr)
  for (const ApiCall& c : b.records().api_calls) by_start.push_back({c.start_ns, c.correlation_id});
  std::sort(by_start.begin(), by_start.end());
  std::map<uint64_t, uint64_t> renumbered;
  for (const auto& [start, corr] : by_start) renumbered[corr] = renumbered.size() + 1;
  ForEachList(b.records(), [&]<typename T>(std::vector<T>& list) {
    if constexpr (kHasCorrelation<T>) {
      for (T& r : list) r.correlation_id = renumbered[r.correlation_id];
    }
  });
  return b;
}

std::string WholeStreams(const std::string& path) {
  std::vector<std::string> warnings;
  auto loaded = LoadTraceFile(path, &warnings);
  EXPECT_TRUE(loaded.has_value());
  std::vector<StreamsReport> reports;
  for (const ProcessTrace& t : *loaded) reports.push_back(AnalyzeStreams(t));
  return StreamsJson(reports);
}

struct Windowed {
  bool exact = false;
  size_t windows = 0;
  std::string json;
  std::string why;  // why the read was inexact
};

uint64_t LongestSpanNs(const TraceRecords& records) {
  uint64_t longest = 0;
  ForEachList(records, [&]<typename T>(const std::vector<T>& list) {
    if constexpr (kIsTimed<T> && kHasTime<T>) {
      for (const T& r : list) longest = std::max(longest, EndNs(r) - StartNs(r));
    }
  });
  return longest;
}

Windowed WindowedStreams(const std::string& path, const WindowLimits& limits) {
  StreamsAccumulator streams;
  auto read = ReadInWindows(path, limits, [&](const ProcessTrace& w) { streams.Add(w); });
  EXPECT_TRUE(read.has_value());
  if (!read) return {};
  Windowed out{read->exact, read->windows, "", read->why_inexact};
  if (read->exact) out.json = StreamsJson({streams.Finish(read->whole)});
  return out;
}

TEST(TraceWindowsTest, WindowsWithAHorizonAsLongAsTheDisorderGiveTheWholeTraceAnswer) {
  TempDir dir;
  size_t several = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    SCOPED_TRACE(seed);
    TraceBuilder b = RandomLoop(seed, 40);
    std::mt19937_64 rng(seed);
    const double flush_us = 20 + static_cast<double>(rng() % 400);
    const double lag_us = static_cast<double>(rng() % 400);
    const std::string path = dir.Path("loop.pb");
    b.WriteFlushed(path, flush_us, lag_us);
    // A record arrives at most a flush and the lag after records that end later, and starts
    // at most the longest span before its end (the windows check starts).
    // Every other seed: each waiting list on a thread of its own in the tries' passes; every
    // third: chunks decoded on three threads.
    const WindowLimits limits{.horizon_ns = static_cast<uint64_t>((flush_us + lag_us) * 1000) +
                                            LongestSpanNs(b.records()) + 1000,
                              .cut_every_records = 16 + rng() % 64,
                              .list_thread_records = seed % 2 == 0 ? size_t{1} : size_t{1} << 14,
                              .decode_ahead = seed % 3 == 0 ? size_t{5} : size_t{1},
                              .decoders = seed % 3 == 0 ? size_t{3} : size_t{1}};
    const Windowed w = WindowedStreams(path, limits);
    EXPECT_TRUE(w.exact) << w.why;
    several += w.windows > 1;
    if (w.exact) EXPECT_EQ(w.json, WholeStreams(path));
  }
  EXPECT_GT(several, 25u);  // windows were really cut
}

// The windowed read keeps the waiting calls by correlation id from chunk to chunk: a table by
// id while the ids are dense, a hash map once they are sparse (libprof records some of a
// program's calls, and the ids number them all); where calls share an id (their work's key then
// follows the earliest), every key is found again at each try. Each gives the whole trace's
// answer and cuts windows; with findings' pageable pairs held too.
void RenumberCorrelations(TraceBuilder* b, const std::function<uint64_t(uint64_t)>& to) {
  ForEachList(b->records(), [&]<typename T>(std::vector<T>& list) {
    if constexpr (kHasCorrelation<T>) {
      for (T& r : list) {
        if (r.correlation_id != 0) r.correlation_id = to(r.correlation_id);
      }
    }
  });
}

TEST(TraceWindowsTest, SparseOrSharedCorrelationIdsGiveTheWholeTraceAnswer) {
  TempDir dir;
  for (const bool shared : {false, true}) {
    size_t several = 0;
    for (uint64_t seed = 1; seed <= 12; ++seed) {
      SCOPED_TRACE(::testing::Message() << "seed " << seed << (shared ? " shared" : " sparse"));
      TraceBuilder b = RandomLoop(seed, 40);
      if (shared) {  // a call inside each call, with its id (as a driver call in its runtime call)
        std::vector<ApiCall>& calls = b.records().api_calls;
        const size_t n = calls.size();
        for (size_t i = 0; i < n; ++i) {
          ApiCall inner = calls[i];
          const uint64_t length = inner.end_ns - inner.start_ns;
          inner.start_ns += length / 4;
          inner.end_ns -= length / 4;
          calls.push_back(inner);
        }
      } else {
        RenumberCorrelations(&b, [](uint64_t id) { return id * 1'000'003; });
      }
      const std::string path = dir.Path("loop.pb");
      b.WriteFlushed(path, 100, 50);
      const WindowLimits limits{.horizon_ns = 150'000 + LongestSpanNs(b.records()) + 1000,
                                .cut_every_records = 24,
                                .hold_pageable_pairs = true,
                                .list_thread_records = seed % 2 == 0 ? size_t{1} : size_t{1} << 14};
      const Windowed w = WindowedStreams(path, limits);
      several += w.exact && w.windows > 1;
      if (w.exact) EXPECT_EQ(w.json, WholeStreams(path));
    }
    EXPECT_GT(several, 8u);  // exact, and windows were really cut
  }
}

// A read given an earlier read's cuts (WindowLimits::known_cuts, as the windowed findings' second
// read is) hands on the same windows, record for record, without looking for quiescent points;
// with cuts the file does not read to (one try short) it is inexact instead.
TEST(TraceWindowsTest, AReadWithTheFirstReadsCutsHandsOnTheSameWindows) {
  TempDir dir;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE(seed);
    TraceBuilder b = RandomLoop(seed, 40);
    const std::string path = dir.Path("loop.pb");
    b.WriteFlushed(path, 100, 50);
    WindowLimits limits{.horizon_ns = 150'000 + LongestSpanNs(b.records()) + 1000,
                        .cut_every_records = 16 + seed,
                        .hold_pageable_pairs = seed % 2 == 0};
    std::vector<std::pair<TraceRecords, uint64_t>> first, second;  // records, span's end
    auto read = ReadInWindows(path, limits, [&](ProcessTrace& w, const WindowSpan& span) {
      first.push_back({w.records, span.to_ns});
    });
    ASSERT_TRUE(read.has_value());
    ASSERT_TRUE(read->exact) << read->why_inexact;
    ASSERT_GT(read->windows, 2u);
    limits.known_cuts =
        std::make_shared<const std::vector<std::vector<uint64_t>>>(read->cuts);
    auto again = ReadInWindows(path, limits, [&](ProcessTrace& w, const WindowSpan& span) {
      second.push_back({w.records, span.to_ns});
    });
    ASSERT_TRUE(again.has_value());
    EXPECT_TRUE(again->exact) << again->why_inexact;
    EXPECT_EQ(again->cuts, read->cuts);
    ASSERT_EQ(second.size(), first.size());
    for (size_t i = 0; i < first.size(); ++i) {
      EXPECT_EQ(second[i].second, first[i].second) << "window " << i;
      EXPECT_TRUE(second[i].first == first[i].first) << "window " << i;
    }
    // One try short of the first read's: the read notices.
    std::vector<std::vector<uint64_t>> short_cuts = read->cuts;
    short_cuts.pop_back();
    limits.known_cuts = std::make_shared<const std::vector<std::vector<uint64_t>>>(short_cuts);
    auto differently = ReadInWindows(path, limits, [](const ProcessTrace&) {});
    ASSERT_TRUE(differently.has_value());
    EXPECT_FALSE(differently->exact);
    EXPECT_NE(differently->why_inexact.find("read differently"), std::string::npos);
  }
}

TEST(TraceWindowsTest, AHorizonShorterThanTheDisorderIsNoticedNeverAnsweredWrong) {
  TempDir dir;
  size_t inexact = 0, exact = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    SCOPED_TRACE(seed);
    const TraceBuilder b = RandomLoop(seed, 30);
    const std::string path = dir.Path("loop.pb");
    b.WriteFlushed(path, 50, 200);  // device work 200 µs behind its calls
    const Windowed w = WindowedStreams(path, {.horizon_ns = 1, .cut_every_records = 8});
    (w.exact ? exact : inexact) += 1;
    if (w.exact) EXPECT_EQ(w.json, WholeStreams(path));
  }
  EXPECT_GT(inexact, 0u);
}

TEST(TraceWindowsTest, AKernelDeliveredAfterTheCutOfItsLaunchIsNoticed) {
  // Two launches far apart, each with its kernel; the first kernel is queued until after the
  // second launch and delivered last: the cut between the launches was made without it.
  TraceBuilder b;
  b.Launch("early", 10, 13, 5000, 5010, 7);
  b.Launch("late", 4000, 4003, 4005, 4100, 8);
  TempDir dir;
  const std::string path = dir.Path("t.pb");
  b.WriteFlushed(path, 100, /*device_lag_us=*/0);
  // Cut as soon as anything waits, with no horizon: only the correlation check can notice.
  const Windowed w = WindowedStreams(path, {.horizon_ns = 1, .cut_every_records = 1});
  EXPECT_FALSE(w.exact);
}

// Windows are cut on a thread of their own while the caller works on the last one: they still
// come in time order, each once (spans one after another; a stretch without records makes no
// window), with every record; and a caller that throws gets its
// exception back (the reading thread stopped and joined), not a hang or a terminated program.
TEST(TraceWindowsTest, WindowsComeInOrderAndACallersExceptionComesBack) {
  TempDir dir;
  TraceBuilder b = RandomLoop(3, 60);
  const std::string path = dir.Path("loop.pb");
  b.WriteFlushed(path, 50, 0);
  const WindowLimits limits{.horizon_ns = 60'000, .cut_every_records = 16};
  std::vector<WindowSpan> spans;
  size_t records = 0;
  auto read = ReadInWindows(path, limits, [&](ProcessTrace& w, const WindowSpan& span) {
    spans.push_back(span);
    ForEachList(w.records, [&]<typename T>(const std::vector<T>& list) {
      if constexpr (kIsTimed<T>) records += list.size();
    });
    w.records = TraceRecords();  // a caller may take the records
  });
  ASSERT_TRUE(read.has_value());
  ASSERT_TRUE(read->exact) << read->why_inexact;
  ASSERT_GT(spans.size(), 3u);
  EXPECT_EQ(spans.size(), read->windows);
  EXPECT_EQ(spans.back().to_ns, UINT64_MAX);
  for (size_t i = 0; i < spans.size(); ++i) {
    EXPECT_LT(spans[i].from_ns, spans[i].to_ns);
    if (i > 0) EXPECT_GE(spans[i].from_ns, spans[i - 1].to_ns);
  }
  size_t timed = 0;
  ForEachList(b.records(), [&]<typename T>(const std::vector<T>& list) {
    if constexpr (kIsTimed<T>) timed += list.size();
  });
  EXPECT_EQ(records, timed);

  for (size_t throw_at : {size_t{0}, size_t{2}}) {
    size_t seen = 0;
    EXPECT_THROW(ReadInWindows(path, limits,
                               [&](ProcessTrace&, const WindowSpan&) {
                                 if (seen++ == throw_at) throw std::runtime_error("caller");
                               }),
                 std::runtime_error);
    EXPECT_EQ(seen, throw_at + 1);
  }
}

TEST(TraceWindowsTest, AFileOfSeveralProcessesIsReadWhole) {
  TempDir dir;
  TraceBuilder a(1), c(2);
  a.Launch("k", 10, 13, 15, 20, 7);
  c.Launch("k", 10, 13, 15, 20, 7);
  a.Write(dir.Path("a.pb"));
  c.Write(dir.Path("c.pb"));
  auto merged = MergeTraceFiles({dir.Path("a.pb"), dir.Path("c.pb")}, dir.Path("m.pb"), {});
  ASSERT_TRUE(merged.has_value()) << merged.error();
  auto read = ReadInWindows(dir.Path("m.pb"), {}, [](const ProcessTrace&) {});
  ASSERT_TRUE(read.has_value());
  EXPECT_FALSE(read->exact);
  EXPECT_EQ(read->windows, 0u);
}

TEST(TraceWindowsTest, AMissingFileIsTheLoadersError) {
  std::vector<std::string> warnings;
  auto read = ReadInWindows("/nonexistent/t.pb", {}, [](const ProcessTrace&) {});
  auto loaded = LoadTraceFile("/nonexistent/t.pb", &warnings);
  ASSERT_FALSE(read.has_value());
  ASSERT_FALSE(loaded.has_value());
  EXPECT_EQ(read.error(), loaded.error());
}

}  // namespace
}  // namespace libprof::analysis::testing
