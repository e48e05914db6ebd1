// The findings rule graph-rebuild: a program that captures (or builds) and instantiates a CUDA
// graph again and again, launching each executable graph about once. A CUDA graph pays off by
// being instantiated once and launched many times: instantiation (tens of µs to ms, growing
// with the nodes), the capture's calls and the destruction of the graph and its executable
// are host time a launched-once graph never earns back (.carry/s17/graph_reinstantiate.cu on
// an H200: 20 kernels captured, instantiated, launched and destroyed per step, about 50 µs of
// host time a step beside the 52 µs launch; PyTorch's torch.cuda.graph() per step also empties
// its caching allocators at each capture).
//
// It counts the process's top-level calls that instantiate an executable graph
// (cudaGraphInstantiate*, cuGraphInstantiate*), launch one (cudaGraphLaunch, cuGraphLaunch) or
// update one in place (cudaGraphExecUpdate, cuGraphExecUpdate), and the host time of the
// rebuilding: the instantiations, the destruction of graphs and executables, and the stream
// captures (from cudaStreamBeginCapture to cudaStreamEndCapture on their thread, those calls
// and every top-level call between them). A finding when there are at least
// --churn-min-pairs instantiations, fewer than two launches per instantiation, and the rebuilding
// after the first instantiation (its share, the saving) is at least --min-wait.
//
// Layer: analysis/rules/, rules; run from the rule registry. Pure computation over TraceIndex.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "analysis/model/trace_index.h"
#include "analysis/rules/findings.h"

namespace libprof::analysis {

// The rule's pass, registered in rule_registry.cc: at most one finding per process.
void FindGraphFindings(const RuleInput& input, std::vector<Finding>* out);

// The rule over a one-process trace read in windows (trace_windows.h), in window order: counts
// and sums add up, and a capture still open at a cut carries on into the next window.
// FindGraphFindings is one Add.
class GraphRebuildAccumulator {
 public:
  void Add(const TraceIndex& window);
  void Finish(const ProcessTrace& whole, const FindingsOptions& options,
              std::vector<Finding>* out) const;

 private:
  enum class GraphCall : uint8_t {
    kUnknown,
    kNone,
    kInstantiate,
    kLaunch,
    kUpdate,
    kDestroy,
    kBeginCapture,
    kEndCapture
  };
  GraphCall Classify(const TraceIndex& window, const ApiCall& call);

  std::vector<GraphCall> by_name_id_;  // each name classified once
  uint64_t instantiations_ = 0, launches_ = 0, updates_ = 0;
  uint64_t instantiate_ns_ = 0, destroy_ns_ = 0, capture_ns_ = 0;
  uint64_t first_ns_ = UINT64_MAX, last_ns_ = 0;  // the first and last instantiation
  std::map<uint32_t, uint64_t> instantiations_by_thread_;
  std::map<uint32_t, bool> capturing_;  // by thread: inside a stream capture at the last cut
};

}  // namespace libprof::analysis
