// The rules over several processes (registered with cross_rank): late-rank (rank_rules.h) and
// shared-gpu (shared_gpu_rules.h). They need every process, so `findings`, `combine`, `diff`
// and `check` keep a few numbers per process while reading (its collectives, its GPUs) and run
// them once all are in, after every process's own findings.
//
// Layer: analysis/rules/.
#pragma once

#include <string>
#include <vector>

#include "analysis/metrics/gpu_use.h"
#include "analysis/model/collectives.h"
#include "analysis/model/trace_loader.h"
#include "analysis/rules/findings.h"
#include "analysis/rules/findings_digest.h"
#include "analysis/rules/windowed_findings.h"

namespace libprof::analysis {

// What the cross-process rules keep of the processes read so far, in reading order.
struct CrossProcessInputs {
  std::vector<ProcessCollectives> collectives;  // of the processes with NCCL ranges
  std::vector<ProcessGpuUse> gpu_use;           // of every process

  // A process read whole: its GPUs, and its collectives when it has NCCL ranges (their
  // warnings to *warnings).
  void AddWhole(const ProcessTrace& trace, std::vector<std::string>* warnings);
};

// A process read in windows (windowed_findings.h; a trace with NCCL ranges never is): its GPUs
// measured on the run read's in-order hook.
class WindowedCrossProcessInputs {
 public:
  // The hooks to pass to WindowedFindings::Run or AddTo. The object must outlive that call.
  WindowedFindings::Hooks Hooks();
  // Once the run read is over: the process into *inputs.
  void Finish(const WindowedFindings& plan, CrossProcessInputs* inputs);

 private:
  GpuUseAccumulator use_;
};

// Their findings, late-rank's then shared-gpu's.
std::vector<Finding> FindCrossProcessFindings(const CrossProcessInputs& inputs,
                                              const FindingsOptions& options);

// The same into *digest as one more process's (BeginProcess), when there are any.
void AddCrossProcessFindings(const CrossProcessInputs& inputs, const FindingsOptions& options,
                             FindingsDigest* digest);

}  // namespace libprof::analysis
