#include "libprof/backtrace/call_site_recorder.h"

#include <new>

#include "libprof/log.h"

namespace libprof {
namespace {

// LIBPROF_BACKTRACE_DEPTH's maximum (settings.cc): the walk's buffers live on the stack.
constexpr size_t kMaxDepth = 256;

// Each recorder's number, so that a thread's cache never serves ids of another recorder's
// table (tests make several, one after another, possibly at one address).
std::atomic<uint64_t> recorder_generations{0};

// The calling thread's PythonFrameCache for the recorder of `generation`, made on first use
// (and anew for another recorder); nullptr when it cannot be allocated (frames are then read).
PythonFrameCache* ThreadCache(uint64_t generation) {
  thread_local uint64_t cache_generation = 0;
  thread_local std::unique_ptr<PythonFrameCache> cache;
  if (cache == nullptr || cache_generation != generation) {
    cache.reset(new (std::nothrow) PythonFrameCache());
    cache_generation = generation;
  }
  return cache.get();
}

}  // namespace

CallSiteRecorder::CallSiteRecorder(size_t depth, const SkipRanges& skip,
                                   std::unique_ptr<PythonFrameReader> python)
    : depth_(std::min(std::max<size_t>(depth, 1), kMaxDepth)),
      skip_(skip),
      python_(std::move(python)),
      table_(kMaxStacks, depth_),
      python_frames_(python_ != nullptr ? kMaxPythonFrames : 0),
      generation_(recorder_generations.fetch_add(1, std::memory_order_relaxed) + 1) {}

void CallSiteRecorder::OnApiEnter(uint64_t correlation_id) {
  if (!enabled()) return;
  uintptr_t pcs[kMaxDepth];
  const size_t depth = WalkStack(skip_, pcs, depth_);
  uint32_t python[kMaxDepth];
  size_t python_depth = 0;
  if (python_ != nullptr) {
    bool cut = false;
    python_depth = InternPythonFrames(
        *python_, [this] { return ThreadCache(generation_); }, python_frames_, python, depth_,
        &cut);
    if (cut) python_cut_.fetch_add(1, std::memory_order_relaxed);
  }
  const uint32_t stack_id = table_.Intern(pcs, depth, python, python_depth);
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

uint32_t CallSiteRecorder::FrameId(uintptr_t pc, StringInterner& strings, TraceRecords* out) {
  auto [it, inserted] = frame_ids_.try_emplace(pc, 0);
  if (!inserted) return it->second;
  const SymbolizedFrame s = symbolizer_.Symbolize(pc);
  StackFrame frame;
  frame.id = ++frames_written_;
  frame.address = pc;
  if (s.has_module) {
    auto [module, new_module] = module_ids_.try_emplace(s.module_path, 0);
    if (new_module) {
      module->second = static_cast<uint32_t>(module_ids_.size());
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
  return frame.id;
}

PythonFrame CallSiteRecorder::PythonFrameRecord(uint32_t python_id, StringInterner& strings) {
  while (python_records_.size() < python_id) {
    const PythonFrameTable::Frame f =
        python_frames_.Get(static_cast<uint32_t>(python_records_.size() + 1));
    python_records_.push_back({.file_id = strings.Intern(f.file),
                               .line = f.line,
                               .function_id = strings.Intern(f.function)});
  }
  return python_records_[python_id - 1];
}

void CallSiteRecorder::TakeNewStacks(StringInterner& strings, TraceRecords* out, bool final) {
  if (final) Disable();  // capture has stopped (the final flush ran first); the table is final
  if (table_.size() > stacks_written_) {
    const std::vector<StackTable::Stack> stacks = table_.Snapshot(stacks_written_);
    symbolizer_.AllowRelist();  // modules loaded since the last batch
    for (const StackTable::Stack& s : stacks) {
      CallStack& stack = out->call_stacks.emplace_back();
      stack.id = static_cast<uint32_t>(++stacks_written_);
      for (uintptr_t pc : s.pcs) stack.frame_ids.push_back(FrameId(pc, strings, out));
      for (uint32_t id : s.python) stack.python_frames.push_back(PythonFrameRecord(id, strings));
    }
  }
  if (!final) return;
  if (const uint64_t lost = missed(); lost > 0) {
    Log().warn(
        "{} API calls went without a call stack (over {} distinct stacks, or the "
        "writer thread fell behind)",
        lost, kMaxStacks);
  }
  if (const uint64_t cut = python_cut_.load(); cut > 0) {
    Log().warn("{} call stacks lost their outer Python frames (over {} distinct Python frames)",
               cut, kMaxPythonFrames);
  }
}

}  // namespace libprof
