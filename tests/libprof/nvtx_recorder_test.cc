// NvtxRecorder driven directly: nesting levels, domains, start/end across threads, marks, drains
// of live and exited threads, open ranges at the final drain, the cap, disabling and fork.
#include "libprof/nvtx/nvtx_recorder.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "libprof/clock.h"
#include "tests/libprof/nvtx_test_util.h"

namespace libprof {
namespace {

using nvtx_test::DrainAll;
using nvtx_test::Text;
using nvtx_test::TraceStrings;
using nvtx_test::WithText;

NvtxAttributes Message(NvtxRecorder& recorder, const char* text) {
  return NvtxAttributes{.message_id = recorder.InternMessage(text)};
}

uint32_t Tid() { return static_cast<uint32_t>(gettid()); }

// Proves: push returns 0,1,2...; pop returns the level ended; events carry depth and nest.
TEST(NvtxRecorderTest, PushPopReturnsLevelsAndNests) {
  NvtxRecorder recorder;
  EXPECT_EQ(recorder.Push(0, Message(recorder, "a")), 0);
  EXPECT_EQ(recorder.Push(0, Message(recorder, "b")), 1);
  EXPECT_EQ(recorder.Push(0, Message(recorder, "c")), 2);
  EXPECT_EQ(recorder.Pop(0), 2);
  EXPECT_EQ(recorder.Pop(0), 1);
  EXPECT_EQ(recorder.Pop(0), 0);
  EXPECT_EQ(recorder.Pop(0), -1);  // unmatched pop

  auto drained = DrainAll(recorder);
  ASSERT_EQ(drained.events.size(), 3u);
  const NvtxEvent& c = drained.events[0];
  const NvtxEvent& b = drained.events[1];
  const NvtxEvent& a = drained.events[2];
  EXPECT_EQ(Text(recorder, a.message_id), "a");
  EXPECT_EQ(Text(recorder, c.message_id), "c");
  EXPECT_EQ(a.depth, 0u);
  EXPECT_EQ(b.depth, 1u);
  EXPECT_EQ(c.depth, 2u);
  for (const NvtxEvent& e : drained.events) {
    EXPECT_EQ(e.kind, NvtxKind::kPushPop);
    EXPECT_EQ(e.thread_id, Tid());
    EXPECT_EQ(e.end_thread_id, 0u);
    EXPECT_FALSE(e.open);
    EXPECT_LE(e.start_ns, e.end_ns);
  }
  EXPECT_LE(a.start_ns, b.start_ns);
  EXPECT_LE(b.start_ns, c.start_ns);
  EXPECT_LE(c.end_ns, b.end_ns);
  EXPECT_LE(b.end_ns, a.end_ns);
  EXPECT_TRUE(DrainAll(recorder).events.empty());  // drained once
}

// Proves: every domain has its own stack per thread; the same name gives the same domain, and
// new domains are announced once.
TEST(NvtxRecorderTest, DomainsHaveTheirOwnStacks) {
  NvtxRecorder recorder;
  const uint32_t a = recorder.CreateDomain("alpha");
  const uint32_t b = recorder.CreateDomain("beta");
  EXPECT_EQ(a, 1u);
  EXPECT_EQ(b, 2u);
  EXPECT_EQ(recorder.CreateDomain("alpha"), a);
  EXPECT_EQ(recorder.CheckedDomain(a), a);
  EXPECT_EQ(recorder.CheckedDomain(3), 0u);
  EXPECT_EQ(recorder.CheckedDomain(0x7fff12345678), 0u);

  EXPECT_EQ(recorder.Push(0, Message(recorder, "default")), 0);
  EXPECT_EQ(recorder.Push(a, Message(recorder, "in-alpha")), 0);
  EXPECT_EQ(recorder.Push(a, Message(recorder, "in-alpha-2")), 1);
  EXPECT_EQ(recorder.Pop(b), -1);
  EXPECT_EQ(recorder.Pop(a), 1);
  EXPECT_EQ(recorder.Pop(0), 0);
  EXPECT_EQ(recorder.Pop(a), 0);

  auto drained = DrainAll(recorder);
  ASSERT_EQ(drained.events.size(), 3u);
  EXPECT_EQ(drained.events[0].domain_id, a);
  EXPECT_EQ(drained.events[1].domain_id, 0u);
  EXPECT_EQ(drained.events[2].domain_id, a);
  ASSERT_EQ(drained.domains.size(), 2u);
  EXPECT_EQ(drained.domains[0].id, a);
  EXPECT_EQ(Text(recorder, drained.domains[0].name_id), "alpha");
  EXPECT_EQ(Text(recorder, drained.domains[1].name_id), "beta");
  EXPECT_TRUE(DrainAll(recorder).domains.empty());
  recorder.CreateDomain("gamma");
  EXPECT_EQ(DrainAll(recorder).domains.size(), 1u);
}

// Proves: a range started on one thread can end on another; ids are unique and non-zero;
// ending twice or an unknown id does nothing.
TEST(NvtxRecorderTest, StartEndAcrossThreads) {
  NvtxRecorder recorder;
  uint64_t id = 0;
  uint32_t starter = 0;
  std::thread([&] {
    id = recorder.StartRange(0, Message(recorder, "crossing"));
    starter = Tid();
  }).join();
  const uint64_t other = recorder.StartRange(0, Message(recorder, "other"));
  EXPECT_NE(id, 0u);
  EXPECT_NE(other, id);
  recorder.EndRange(id);
  recorder.EndRange(id);
  recorder.EndRange(987654321);
  recorder.EndRange(other);

  auto drained = DrainAll(recorder);
  ASSERT_EQ(drained.events.size(), 2u);
  const NvtxEvent& e = drained.events[0];
  EXPECT_EQ(e.kind, NvtxKind::kStartEnd);
  EXPECT_EQ(Text(recorder, e.message_id), "crossing");
  EXPECT_EQ(e.thread_id, starter);
  EXPECT_EQ(e.end_thread_id, Tid());
  EXPECT_NE(e.thread_id, e.end_thread_id);
  EXPECT_EQ(e.range_id, id);
  EXPECT_LE(e.start_ns, e.end_ns);
}

// Proves: marks are instants with their attributes; messages are interned by content.
TEST(NvtxRecorderTest, MarksAndInterningByContent) {
  NvtxRecorder recorder;
  char buffer[16];
  std::strcpy(buffer, "first");
  const uint32_t first = recorder.InternMessage(buffer);
  std::strcpy(buffer, "second");  // same pointer, new content
  const uint32_t second = recorder.InternMessage(buffer);
  EXPECT_NE(first, second);
  EXPECT_EQ(recorder.InternMessage(std::string("first")), first);  // other pointer, same text
  EXPECT_EQ(recorder.InternMessage(""), 0u);

  recorder.Mark(
      0, NvtxAttributes{
             .message_id = first, .category = 7, .color_argb = 0xFF112233, .has_color = true});
  auto drained = DrainAll(recorder);
  ASSERT_EQ(drained.events.size(), 1u);
  const NvtxEvent& m = drained.events[0];
  EXPECT_EQ(m.kind, NvtxKind::kMark);
  EXPECT_EQ(m.start_ns, m.end_ns);
  EXPECT_EQ(m.category, 7u);
  EXPECT_TRUE(m.has_color);
  EXPECT_EQ(m.color_argb, 0xFF112233u);
  EXPECT_EQ(Text(recorder, m.message_id), "first");
}

// Proves: registered strings map back to their text once drained (local ids become ids of the
// trace's table); impossible ids decode to 0; strings reach the table only through Drain.
TEST(NvtxRecorderTest, RegisteredStringsAndExport) {
  NvtxRecorder recorder;
  StringInterner& strings = TraceStrings(recorder);
  const uint32_t before = strings.size();
  const uint32_t id = recorder.RegisterString("registered");
  EXPECT_EQ(recorder.CheckedStringId(id), id);
  EXPECT_EQ(recorder.CheckedStringId(id + 1000), 0u);
  EXPECT_EQ(strings.size(), before);  // handler threads never touch the trace's table
  strings.Intern("someone-else's");   // the writer's own strings shift the ids
  recorder.Mark(0, NvtxAttributes{.message_id = recorder.CheckedStringId(id)});
  auto drained = DrainAll(recorder);
  ASSERT_EQ(drained.events.size(), 1u);
  EXPECT_EQ(Text(recorder, drained.events[0].message_id), "registered");
  EXPECT_NE(drained.events[0].message_id, id);
}

// Proves: an exited thread's events and still-open ranges are drained (open = true, ending at
// its exit), and its buffer is then gone.
TEST(NvtxRecorderTest, DrainsExitedThreadsOnce) {
  NvtxRecorder recorder;
  uint32_t worker = 0;
  std::thread([&] {
    worker = Tid();
    recorder.Push(0, Message(recorder, "left-open"));
    recorder.Push(0, Message(recorder, "closed"));
    recorder.Pop(0);
  }).join();
  auto drained = DrainAll(recorder);
  ASSERT_EQ(drained.events.size(), 2u);
  auto closed = WithText(recorder, drained.events, "closed");
  auto open = WithText(recorder, drained.events, "left-open");
  ASSERT_EQ(closed.size(), 1u);
  ASSERT_EQ(open.size(), 1u);
  EXPECT_FALSE(closed[0].open);
  EXPECT_EQ(closed[0].depth, 1u);
  EXPECT_TRUE(open[0].open);
  EXPECT_EQ(open[0].depth, 0u);
  EXPECT_EQ(open[0].thread_id, worker);
  EXPECT_GE(open[0].end_ns, closed[0].end_ns);
  EXPECT_TRUE(DrainAll(recorder, /*final=*/true, 1).events.empty());
}

// Proves: the final drain emits open push and start/end ranges ending at `now`, and leaves them
// open so that later pops still return the right level.
TEST(NvtxRecorderTest, FinalDrainEmitsOpenRanges) {
  NvtxRecorder recorder;
  recorder.Push(0, Message(recorder, "outer"));
  recorder.Push(0, Message(recorder, "inner"));
  const uint64_t id = recorder.StartRange(0, Message(recorder, "started"));
  const uint64_t now = TraceClock().NowNs() + 1000;
  auto drained = DrainAll(recorder, /*final=*/true, now);
  ASSERT_EQ(drained.events.size(), 3u);
  for (const NvtxEvent& e : drained.events) {
    EXPECT_TRUE(e.open);
    EXPECT_EQ(e.end_ns, now);
  }
  auto started = WithText(recorder, drained.events, "started");
  ASSERT_EQ(started.size(), 1u);
  EXPECT_EQ(started[0].kind, NvtxKind::kStartEnd);
  EXPECT_EQ(started[0].range_id, id);
  EXPECT_EQ(started[0].end_thread_id, 0u);
  EXPECT_EQ(WithText(recorder, drained.events, "inner")[0].depth, 1u);
  EXPECT_EQ(recorder.Pop(0), 1);
  EXPECT_EQ(recorder.Pop(0), 0);
}

// Proves: past the cap events are dropped and counted (TakeDropped resets, dropped() does not),
// and recording resumes once drained.
TEST(NvtxRecorderTest, CapDropsAndCounts) {
  NvtxRecorder recorder;
  recorder.SetMaxBufferedEvents(5);
  for (int i = 0; i < 8; ++i) recorder.Mark(0, Message(recorder, "m"));
  EXPECT_EQ(recorder.Push(0, {}), 0);  // levels are kept even when the event will be dropped
  EXPECT_EQ(recorder.Pop(0), 0);
  EXPECT_EQ(recorder.TakeDropped(), 4u);
  EXPECT_EQ(recorder.TakeDropped(), 0u);
  EXPECT_EQ(recorder.dropped(), 4u);
  EXPECT_EQ(DrainAll(recorder).events.size(), 5u);
  recorder.Mark(0, Message(recorder, "m"));
  EXPECT_EQ(DrainAll(recorder).events.size(), 1u);
  EXPECT_EQ(recorder.dropped(), 4u);
}

// Proves: disabled, nothing is recorded and earlier events are discarded, but levels and range
// ids still behave.
TEST(NvtxRecorderTest, DisabledKeepsLevels) {
  NvtxRecorder recorder;
  recorder.Mark(0, Message(recorder, "before"));
  recorder.Push(0, Message(recorder, "kept-level"));
  recorder.SetEnabled(false);
  EXPECT_FALSE(recorder.enabled());
  EXPECT_EQ(recorder.Push(0, {}), 1);
  const uint64_t a = recorder.StartRange(0, {});
  const uint64_t b = recorder.StartRange(0, {});
  EXPECT_NE(a, 0u);
  EXPECT_NE(a, b);
  recorder.EndRange(a);
  recorder.Mark(0, {});
  EXPECT_EQ(recorder.Pop(0), 1);
  EXPECT_EQ(recorder.Pop(0), 0);
  EXPECT_TRUE(DrainAll(recorder, /*final=*/true, TraceClock().NowNs()).events.empty());
  recorder.SetEnabled(true);
  recorder.Mark(0, {});
  EXPECT_EQ(DrainAll(recorder).events.size(), 1u);
}

// Proves: several threads pushing and popping while another drains lose nothing.
TEST(NvtxRecorderTest, ConcurrentThreadsAndDrains) {
  NvtxRecorder recorder;
  constexpr int kThreads = 4;
  constexpr int kPairs = 20000;
  std::atomic<bool> done{false};
  size_t drained = 0;
  std::thread drainer([&] {
    while (!done.load()) drained += DrainAll(recorder).events.size();
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      const NvtxAttributes message = Message(recorder, "work");
      for (int i = 0; i < kPairs; ++i) {
        recorder.Push(0, message);
        recorder.Pop(0);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  done = true;
  drainer.join();
  drained += DrainAll(recorder).events.size();
  EXPECT_EQ(drained, size_t{kThreads} * kPairs);
  EXPECT_EQ(recorder.dropped(), 0u);
}

// Proves: threads creating the same domains at once get the same ids, and ranges started on
// one thread and ended on another while drains run are each recorded once.
TEST(NvtxRecorderTest, ConcurrentDomainsAndCrossThreadRanges) {
  NvtxRecorder recorder;
  constexpr int kThreads = 4;
  constexpr int kRanges = 5000;
  std::vector<uint64_t> ids(kThreads * kRanges);
  std::vector<uint32_t> domain_of(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      domain_of[t] = recorder.CreateDomain("contended");
      recorder.CreateDomain("thread-" + std::to_string(t));
      for (int i = 0; i < kRanges; ++i) {
        ids[t * kRanges + i] = recorder.StartRange(domain_of[t], Message(recorder, "r"));
      }
    });
  }
  for (auto& thread : threads) thread.join();
  threads.clear();
  std::atomic<bool> done{false};
  size_t drained = 0;
  std::thread drainer([&] {
    while (!done.load()) drained += DrainAll(recorder).events.size();
  });
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {  // ends the ranges another thread started
      const int from = (t + 1) % kThreads;
      for (int i = 0; i < kRanges; ++i) recorder.EndRange(ids[from * kRanges + i]);
    });
  }
  for (auto& thread : threads) thread.join();
  done = true;
  drainer.join();
  auto rest = DrainAll(recorder);
  drained += rest.events.size();
  EXPECT_EQ(drained, size_t{kThreads} * kRanges);
  EXPECT_EQ(std::set<uint64_t>(ids.begin(), ids.end()).size(), ids.size());
  for (uint32_t domain : domain_of) EXPECT_EQ(domain, domain_of[0]);
  EXPECT_EQ(recorder.CreateDomain("contended"), domain_of[0]);
}

// Proves: in a fork child, ResetAfterFork drops the parent's completed events and other
// threads, keeps this thread's open ranges (levels stay right) under the child's tid, and
// announces the domains again; the parent is unaffected.
TEST(NvtxRecorderTest, ResetAfterForkKeepsOnlyThisThreadsOpenRanges) {
  NvtxRecorder recorder;
  const uint32_t domain = recorder.CreateDomain("forked");
  DrainAll(recorder);  // the domain is announced to the parent's recording
  std::mutex mutex;
  std::condition_variable cv;
  bool ready = false, release = false;
  std::thread other([&] {
    recorder.Mark(0, Message(recorder, "other-thread"));
    recorder.Push(0, Message(recorder, "other-open"));
    std::unique_lock<std::mutex> lock(mutex);
    ready = true;
    cv.notify_all();
    cv.wait(lock, [&] { return release; });
  });
  {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [&] { return ready; });
  }
  recorder.Push(domain, Message(recorder, "spans-fork"));
  recorder.Mark(0, Message(recorder, "parent-mark"));

  recorder.PrepareFork();
  const pid_t pid = fork();
  if (pid == 0) {
    recorder.ResetAfterFork();
    int code = 0;
    if (recorder.Pop(domain) != 0) code |= 1;
    auto drained = DrainAll(recorder);
    if (drained.events.size() != 1) code |= 2;
    if (!drained.events.empty() &&
        (drained.events[0].thread_id != static_cast<uint32_t>(getpid()) ||
         Text(recorder, drained.events[0].message_id) != "spans-fork")) {
      code |= 4;
    }
    if (drained.domains.size() != 1) code |= 8;
    if (recorder.dropped() != 0) code |= 16;
    _exit(code);
  }
  recorder.ParentAfterFork();
  ASSERT_GT(pid, 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);

  {
    std::lock_guard<std::mutex> lock(mutex);
    release = true;
  }
  cv.notify_all();
  other.join();
  EXPECT_EQ(recorder.Pop(domain), 0);
  auto drained = DrainAll(recorder);
  EXPECT_EQ(WithText(recorder, drained.events, "other-thread").size(), 1u);
  EXPECT_EQ(WithText(recorder, drained.events, "parent-mark").size(), 1u);
  EXPECT_EQ(WithText(recorder, drained.events, "spans-fork").size(), 1u);
  EXPECT_EQ(WithText(recorder, drained.events, "other-open").size(), 1u);  // open, thread exited
}

// Proves the capture trigger (LIBPROF_CAPTURE_RANGE=nvtx:...): one window per outermost matching
// range, nested and start/end ranges included, and only in the named domain.
TEST(NvtxRecorderTest, CaptureTriggerOpensAndClosesWindows) {
  NvtxRecorder recorder;
  std::vector<bool> changes;
  recorder.SetCaptureTrigger("step", "app", [&](bool on) { changes.push_back(on); });
  const uint32_t app = recorder.CreateDomain("app");
  recorder.Push(0, Message(recorder, "step"));  // default domain: not the trigger
  recorder.Pop(0);
  EXPECT_TRUE(changes.empty());
  recorder.Push(app, Message(recorder, "step"));
  recorder.Push(app, Message(recorder, "step"));  // nested: same window
  recorder.Push(app, Message(recorder, "other"));
  recorder.Pop(app);
  recorder.Pop(app);
  EXPECT_EQ(changes, (std::vector<bool>{true}));
  recorder.Pop(app);
  EXPECT_EQ(changes, (std::vector<bool>{true, false}));
  uint64_t id = recorder.StartRange(app, Message(recorder, "step"));
  EXPECT_EQ(changes, (std::vector<bool>{true, false, true}));
  std::thread([&] { recorder.EndRange(id); }).join();  // ended on another thread
  EXPECT_EQ(changes, (std::vector<bool>{true, false, true, false}));
}

// Proves the recorder stamps with the clock it is given (the capture context's), not a global:
// after SetClock(CLOCK_REALTIME) a mark carries realtime, and so does a thread's exit.
TEST(NvtxRecorderTest, StampsWithTheClockGiven) {
  NvtxRecorder recorder;
  std::atomic<int> step{0};
  std::thread early([&] {  // registered before SetClock, exits after
    recorder.Push(0, Message(recorder, "left-open"));
    step = 1;
    while (step.load() != 2) std::this_thread::yield();
  });
  while (step.load() != 1) std::this_thread::yield();
  recorder.SetClock(TraceClock(CLOCK_REALTIME));
  const uint64_t before = ReadClockNs(CLOCK_REALTIME);
  step = 2;
  early.join();
  recorder.Mark(0, Message(recorder, "now"));
  std::thread([&] { recorder.Push(0, Message(recorder, "exits")); }).join();
  auto drained = DrainAll(recorder);
  const auto marks = WithText(recorder, drained.events, "now");
  ASSERT_EQ(marks.size(), 1u);
  EXPECT_GE(marks[0].start_ns, before);
  EXPECT_LE(marks[0].start_ns, ReadClockNs(CLOCK_REALTIME));
  // A thread that existed before SetClock still ends on the new clock.
  const auto exited = WithText(recorder, drained.events, "left-open");
  ASSERT_EQ(exited.size(), 1u);
  EXPECT_GE(exited[0].end_ns, before);
  EXPECT_EQ(WithText(recorder, drained.events, "exits").size(), 1u);
}

// Proves a new trace table starts the export over: the domains reach it again and its ids
// resolve to the same texts (a recording after fork gets a table of its own).
TEST(NvtxRecorderTest, NewTableGetsEveryDomainAgain) {
  NvtxRecorder recorder;
  const uint32_t app = recorder.CreateDomain("app");
  recorder.Mark(app, Message(recorder, "first"));
  auto drained = DrainAll(recorder);
  ASSERT_EQ(drained.domains.size(), 1u);
  StringInterner other;
  other.Intern("shifts the ids");
  recorder.Mark(app, Message(recorder, "second"));
  std::vector<NvtxEvent> events;
  std::vector<NvtxDomain> domains;
  std::vector<NvtxPayloadSchema> schemas;
  recorder.Drain(other, &events, &domains, &schemas, /*final=*/false, 0);
  ASSERT_EQ(domains.size(), 1u);
  ASSERT_EQ(events.size(), 1u);
  std::vector<std::pair<uint32_t, std::string>> texts;
  other.CollectFrom(0, &texts);
  std::map<uint32_t, std::string> text(texts.begin(), texts.end());
  EXPECT_EQ(text[domains[0].name_id], "app");
  EXPECT_EQ(text[events[0].message_id], "second");
}

}  // namespace
}  // namespace libprof
