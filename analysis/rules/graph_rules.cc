#include "analysis/rules/graph_rules.h"

#include <algorithm>
#include <string_view>

#include "analysis/model/units.h"
#include "analysis/rules/framework_hints.h"
#include "analysis/rules/rule_details.h"

namespace libprof::analysis {
namespace {

std::string Dur(uint64_t ns) { return FormatDuration(static_cast<double>(ns)); }

bool StartsWithEither(std::string_view name, std::string_view runtime, std::string_view driver) {
  return name.starts_with(runtime) || name.starts_with(driver);
}

}  // namespace

GraphRebuildAccumulator::GraphCall GraphRebuildAccumulator::Classify(const TraceIndex& window,
                                                                     const ApiCall& call) {
  if (call.name_id >= by_name_id_.size()) by_name_id_.resize(call.name_id + 1, GraphCall::kUnknown);
  GraphCall& kind = by_name_id_[call.name_id];
  if (kind != GraphCall::kUnknown) return kind;
  const std::string_view name = window.ApiName(call);
  if (StartsWithEither(name, "cudaGraphInstantiate", "cuGraphInstantiate")) {
    kind = GraphCall::kInstantiate;
  } else if (StartsWithEither(name, "cudaGraphLaunch", "cuGraphLaunch")) {
    kind = GraphCall::kLaunch;
  } else if (StartsWithEither(name, "cudaGraphExecUpdate", "cuGraphExecUpdate")) {
    kind = GraphCall::kUpdate;
  } else if (name == "cudaGraphExecDestroy" || name == "cuGraphExecDestroy" ||
             name == "cudaGraphDestroy" || name == "cuGraphDestroy") {  // (not ...DestroyNode)
    kind = GraphCall::kDestroy;
  } else if (StartsWithEither(name, "cudaStreamBeginCapture", "cuStreamBeginCapture")) {
    kind = GraphCall::kBeginCapture;
  } else if (StartsWithEither(name, "cudaStreamEndCapture", "cuStreamEndCapture")) {
    kind = GraphCall::kEndCapture;
  } else {
    kind = GraphCall::kNone;
  }
  return kind;
}

void GraphRebuildAccumulator::Add(const TraceIndex& window) {
  const std::vector<ApiCall>& calls = window.records().api_calls;
  std::vector<uint32_t> capturing_threads;  // with a capture in this window, or one still open
  for (const auto& [thread, open] : capturing_) {
    if (open) capturing_threads.push_back(thread);
  }
  for (size_t i = 0; i < calls.size(); ++i) {
    if (window.Outermost(i) != i) continue;
    const ApiCall& c = calls[i];
    const uint64_t ns = c.end_ns > c.start_ns ? c.end_ns - c.start_ns : 0;
    switch (Classify(window, c)) {
      case GraphCall::kInstantiate:
        ++instantiations_;
        instantiate_ns_ += ns;
        ++instantiations_by_thread_[c.thread_id];
        first_ns_ = std::min(first_ns_, c.start_ns);
        last_ns_ = std::max(last_ns_, c.end_ns);
        break;
      case GraphCall::kLaunch:
        ++launches_;
        break;
      case GraphCall::kUpdate:
        ++updates_;
        break;
      case GraphCall::kDestroy:
        destroy_ns_ += ns;
        break;
      case GraphCall::kBeginCapture:
        capturing_threads.push_back(c.thread_id);
        break;
      default:
        break;
    }
  }
  // The captures: each thread's top-level calls in time order, from a begin to its end.
  std::sort(capturing_threads.begin(), capturing_threads.end());
  capturing_threads.erase(std::unique(capturing_threads.begin(), capturing_threads.end()),
                          capturing_threads.end());
  for (uint32_t thread : capturing_threads) {
    const TraceIndex::ThreadCalls* thread_calls = window.TopLevelCalls(thread);
    if (thread_calls == nullptr) continue;
    bool& open = capturing_[thread];
    for (uint32_t i : thread_calls->calls) {
      const ApiCall& c = calls[i];
      const GraphCall kind = Classify(window, c);
      if (kind == GraphCall::kBeginCapture) open = true;
      if (open) capture_ns_ += c.end_ns > c.start_ns ? c.end_ns - c.start_ns : 0;
      if (kind == GraphCall::kEndCapture) open = false;
    }
  }
}

void GraphRebuildAccumulator::Finish(const ProcessTrace& whole, const FindingsOptions& options,
                                     std::vector<Finding>* out) const {
  if (instantiations_ < std::max<uint64_t>(options.churn_min_pairs, 2)) return;
  if (launches_ >= 2 * instantiations_) return;  // (most executables ran again)
  const uint64_t rebuild_ns = instantiate_ns_ + destroy_ns_ + capture_ns_;
  const uint64_t saving = rebuild_ns - rebuild_ns / instantiations_;  // all but one's share
  if (saving < options.min_wait_ns) return;
  Finding f;
  f.rule = RuleId::kGraphRebuild;
  f.api = "cudaGraphInstantiate";
  f.file = whole.path;
  f.pid = whole.header.pid;
  f.thread_id = std::max_element(instantiations_by_thread_.begin(), instantiations_by_thread_.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; })
                    ->first;
  f.host_start_ns = first_ns_ > whole.origin_ns ? first_ns_ - whole.origin_ns : 0;
  f.host_duration_ns = last_ns_ > first_ns_ ? last_ns_ - first_ns_ : 0;
  f.blocked_ns = saving;
  GraphRebuildDetails details;
  details.instantiations = instantiations_;
  details.graph_launches = launches_;
  details.exec_updates = updates_;
  details.instantiate_ns = instantiate_ns_;
  details.capture_ns = capture_ns_;
  details.destroy_ns = destroy_ns_;
  f.explanation =
      "CUDA graphs were instantiated " + std::to_string(instantiations_) + " times for " +
      std::to_string(launches_) + " graph launches (" +
      FormatNumber(static_cast<double>(launches_) / static_cast<double>(instantiations_)) +
      " launches per graph): the instantiations took " + Dur(instantiate_ns_) + " of host time" +
      (capture_ns_ > 0 ? ", the stream captures that built them " + Dur(capture_ns_) : "") +
      (destroy_ns_ > 0 ? ", destroying graphs and executables " + Dur(destroy_ns_) : "") +
      ". A graph pays off when it is instantiated once and launched many times: instantiate it "
      "once and launch it again, changing its parameters in place (cudaGraphExecUpdate, "
      "cudaGraphExecKernelNodeSetParams) where they differ from step to step, or launch the "
      "kernels directly; that would save up to " +
      Dur(saving) + " (all but one graph's share)";
  if (RecordedInPyTorch(whole)) {
    f.explanation +=
        "; in PyTorch, capture once with torch.cuda.graph(g) before the loop and call "
        "g.replay() each step, copying new inputs into the captured input tensors "
        "(torch.cuda.make_graphed_callables captures once); torch.compile(mode="
        "\"reduce-overhead\") records a graph for each new input shape, so inputs of many shapes "
        "rebuild them: pad or bucket them to a few. Each torch.cuda.graph() capture also empties "
        "PyTorch's caching allocators, so their memory is allocated again after it";
  }
  f.details = std::move(details);
  out->push_back(std::move(f));
}

void FindGraphFindings(const RuleInput& input, std::vector<Finding>* out) {
  GraphRebuildAccumulator graphs;
  graphs.Add(input.index);
  graphs.Finish(input.trace, input.options, out);
}

}  // namespace libprof::analysis
