#include "libprof/backtrace/call_site_recorder.h"

#include <map>
#include <unordered_map>

#include "libprof/backtrace/symbolizer.h"
#include "libprof/log.h"

namespace libprof {
namespace {

// LIBPROF_BACKTRACE_DEPTH's maximum (settings.cc): the walk's buffer lives on the stack.
constexpr size_t kMaxDepth = 256;

}  // namespace

CallSiteRecorder::CallSiteRecorder(size_t depth, const SkipRanges& skip)
    : depth_(std::min(std::max<size_t>(depth, 1), kMaxDepth)),
      skip_(skip),
      table_(kMaxStacks, depth_) {}

void CallSiteRecorder::OnApiEnter(uint64_t correlation_id) {
  if (!enabled()) return;
  uintptr_t pcs[kMaxDepth];
  const size_t depth = WalkStack(skip_, pcs, depth_);
  const uint32_t stack_id = table_.Intern(pcs, depth);
  if (stack_id == 0) return;  // counted by the table (or an empty stack: nothing to say)
  std::lock_guard<std::mutex> lock(pairs_mutex_);
  if (pairs_.size() >= kMaxPendingPairs) {
    missed_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  try {
    pairs_.emplace_back(correlation_id, stack_id);
  } catch (...) {
    missed_.fetch_add(1, std::memory_order_relaxed);
  }
}

void CallSiteRecorder::TakePairs(std::vector<CallSitePair>* out) {
  out->clear();
  std::lock_guard<std::mutex> lock(pairs_mutex_);
  // Swapping hands the caller's (cleared) capacity back to the hot path: no reallocation there
  // once both vectors have grown to the usual batch size.
  pairs_.swap(*out);
}

void CallSiteRecorder::TakeStacks(StringInterner& strings, TraceRecords* out) {
  Disable();  // capture has stopped (the final flush ran first); the table is final
  Symbolize(strings, out);
  if (const uint64_t lost = missed(); lost > 0) {
    Log().warn(
        "{} API calls went without a call stack (over {} distinct stacks, or the "
        "writer thread fell behind)",
        lost, kMaxStacks);
  }
}

void CallSiteRecorder::Symbolize(StringInterner& strings, TraceRecords* out) const {
  const std::vector<std::vector<uintptr_t>> stacks = table_.Snapshot();
  Symbolizer symbolizer;
  std::unordered_map<uintptr_t, uint32_t> frame_ids;
  std::map<std::string, uint32_t> module_ids;  // by path
  for (size_t i = 0; i < stacks.size(); ++i) {
    CallStack& stack = out->call_stacks.emplace_back();
    stack.id = static_cast<uint32_t>(i + 1);
    for (uintptr_t pc : stacks[i]) {
      auto [it, inserted] = frame_ids.try_emplace(pc, 0);
      if (inserted) {
        const SymbolizedFrame s = symbolizer.Symbolize(pc);
        StackFrame frame;
        frame.id = static_cast<uint32_t>(out->stack_frames.size() + 1);
        frame.address = pc;
        if (s.has_module) {
          auto [module, new_module] = module_ids.try_emplace(s.module_path, 0);
          if (new_module) {
            module->second = static_cast<uint32_t>(out->stack_modules.size() + 1);
            out->stack_modules.push_back({.id = module->second,
                                          .path_id = strings.Intern(s.module_path),
                                          .build_id = s.build_id,
                                          .executable = s.executable});
          }
          frame.module_id = module->second;
          frame.module_offset = s.module_offset;
        }
        frame.function_id = s.function.empty() ? 0 : strings.Intern(s.function);
        frame.function_offset = s.function_offset;
        out->stack_frames.push_back(frame);
        it->second = frame.id;
      }
      stack.frame_ids.push_back(it->second);
    }
  }
}

}  // namespace libprof
