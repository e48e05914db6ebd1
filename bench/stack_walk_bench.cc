// The CPU cost of recording a call stack at API entry (LIBPROF_BACKTRACE), without a GPU: the
// walk (_Unwind_Backtrace) and the interning (StackTable), per call, for stacks of several
// depths. It calls CallSiteRecorder::OnApiEnter, the function CUPTI's callback calls, from the
// bottom of a recursion `frames` deep, in a loop (one call site, so after the first call every
// stack is found in the table, as in a program's steady state).
//
// Usage: stack_walk_bench [calls=200000]
// Prints one line per depth: frames walked, ns per walk, ns per walk+intern, ns per OnApiEnter.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "libprof/backtrace/call_site_recorder.h"
#include "libprof/backtrace/stack_table.h"
#include "libprof/backtrace/stack_walker.h"

namespace {

using Clock = std::chrono::steady_clock;
using libprof::CallSitePair;
using libprof::CallSiteRecorder;
using libprof::SkipRanges;
using libprof::StackTable;

enum class Work { kWalk, kWalkIntern, kOnApiEnter };

struct Run {
  Work work;
  long calls;
  CallSiteRecorder* recorder;
  StackTable* table;
  size_t frames = 0;
  double ns_per_call = 0;
};

__attribute__((noinline)) void Measure(Run* run) {
  const SkipRanges none;
  uintptr_t pcs[256];
  const auto start = Clock::now();
  for (long i = 0; i < run->calls; ++i) {
    switch (run->work) {
      case Work::kWalk:
        run->frames = libprof::WalkStack(none, pcs, 256);
        break;
      case Work::kWalkIntern:
        run->frames = libprof::WalkStack(none, pcs, 256);
        run->table->Intern(pcs, run->frames);
        break;
      case Work::kOnApiEnter:
        run->recorder->OnApiEnter(static_cast<uint64_t>(i));
        break;
    }
  }
  run->ns_per_call =
      std::chrono::duration<double, std::nano>(Clock::now() - start).count() / run->calls;
}

// Recursion that the compiler keeps: each level is a real frame with unwind info.
__attribute__((noinline)) int Descend(int levels, Run* run) {
  if (levels == 0) {
    Measure(run);
    return 0;
  }
  const int r = Descend(levels - 1, run);
  asm volatile("" ::: "memory");
  return r + 1;
}

}  // namespace

int main(int argc, char** argv) {
  const long calls = argc > 1 ? std::atol(argv[1]) : 200000;
  std::printf("%8s %12s %14s %16s\n", "frames", "walk ns", "walk+intern ns", "OnApiEnter ns");
  std::vector<CallSitePair> drained;
  for (int levels : {5, 15, 30, 60}) {
    StackTable table(CallSiteRecorder::kMaxStacks, 256);
    CallSiteRecorder recorder(256, SkipRanges{});
    Run walk{Work::kWalk, calls, &recorder, &table};
    Run intern{Work::kWalkIntern, calls, &recorder, &table};
    Run enter{Work::kOnApiEnter, calls, &recorder, &table};
    Descend(levels, &walk);
    Descend(levels, &intern);
    Descend(levels, &enter);
    recorder.TakePairs(&drained);
    std::printf("%8zu %12.1f %14.1f %16.1f\n", walk.frames, walk.ns_per_call, intern.ns_per_call,
                enter.ns_per_call);
  }
  return 0;
}
