// `profview findings`: why host time was spent waiting, and on what. The rules, with their
// stable ids, families and help, are registered in rule_registry.{h,cc}; each finding carries
// the fields below, common to every rule, and its rule's own details (rule_details.h).
// The pattern rules (family kPattern) sum many calls (which may also have findings of their
// own), so their time is an estimate of what a change would save, not added to the rest.
//
// Layer: analysis/rules/, rules. Pure computation over a ProcessTrace. This file
// holds the engine (FindFindings runs the registered passes) and the pass of the seven host rules.
//
// Accounting: per API call, the wait on earlier work (blocked-on-prior-work, sync-api or
// implicit-sync: at most one of them) and the call's own cost (pageable-async-memcpy,
// sync-memcpy, sync-memset or staged-peer-copy: host time minus that wait) never add up to more
// than its host time. GPU rules report idle device time instead of host time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/rules/rule_details.h"
#include "analysis/rules/rule_registry.h"
#include "analysis/model/call_sites.h"
#include "analysis/model/trace_loader.h"

namespace libprof::analysis {

struct FindingsOptions {
  // A wait (or synchronous cost) shorter than this is not reported. 20 µs: the threshold of the
  // blocking-copy algorithm in shared/notes/cupti-facts.md section 5; below it a wait is within
  // the noise of a CUDA call's own overhead.
  uint64_t min_wait_ns = 20'000;
  // gpu-idle-gaps: Nsight Systems' gpu_gaps default, 500 ms.
  uint64_t gap_threshold_ns = 500'000'000;
  // gpu-low-utilization: Nsight Systems' gpu_time_util defaults, 30 chunks, under 50% busy.
  uint32_t util_chunks = 30;
  double util_threshold = 0.5;
  // sync-memcpy: host-to-device copies up to this size are excluded (they return once the data
  // is staged; Nsight Systems' cuda_memcpy_sync rule does the same).
  uint64_t sync_memcpy_min_h2d_bytes = 64 * 1024;
  // gpu-idle-breakdown: reported when the device was idle at least this share of its active
  // span; 0.5 is the bar gpu-low-utilization applies per chunk (Nsight Systems' gpu_time_util).
  double idle_share = 0.5;
  // alloc-churn: groups with at least this many pairs. 5: a judgement, a loop rather than a few
  // buffers reallocated once; not from a measurement.
  uint64_t churn_min_pairs = 5;
  // Which Python frames are framework code when naming a finding's call site
  // (profview --framework-path; analysis/model/call_sites.h).
  CallSiteRule call_sites;
};

struct Blamed {
  std::string kind;  // "kernel", "memcpy", "memset", "graph"
  std::string name;
  uint64_t correlation_id = 0;
  uint32_t stream_id = 0;
  uint64_t overlap_ns = 0;          // of its execution with the host wait
  uint64_t launched_before_ns = 0;  // how long before the waiting call it was issued
  std::string via;                  // "stream", "legacy-default-stream", "event", "device", "own"
};

// One frame of a finding's call stack, innermost first.
struct FindingFrame {
  std::string function;  // demangled (a Python frame: its qualified name); "" when unknown
  std::string module;    // "app" for the program, else the module's file name; "" when unknown
  uint64_t module_offset = 0;
  std::string python_file;  // a Python frame's file; "" for a native frame
  uint32_t line = 0;        // a Python frame's line
};

// The fields every rule's findings have (some only where they apply), then the rule's own.
struct Finding {
  RuleId rule = RuleId::kBlockedOnPriorWork;
  // The API call (alloc-churn: the allocating API); "" for the device rules.
  std::string api;
  std::string file;
  uint32_t pid = 0;
  uint32_t thread_id = 0;
  uint64_t correlation_id = 0;
  uint64_t host_start_ns = 0;  // relative to the recording start (ProcessTrace::origin_ns)
  uint64_t host_duration_ns = 0;
  uint64_t blocked_ns = 0;  // the time lost (RuleFamily says what it is); <= host_duration_ns
  std::optional<uint32_t> stream_id;  // the stream of the call's work or the one it waited for
  std::optional<uint32_t> device_id;  // device rules
  std::vector<Blamed> blamed;         // largest overlap first, at most kMaxBlamed
  uint64_t blamed_omitted = 0;
  std::vector<std::string> nvtx;  // enclosing NVTX ranges on the thread, outermost first
  // Where the call came from, when its stack was recorded (analysis/model/call_sites.h):
  // "cudaMemcpyAsync ← cublasSnrm2_v2 (libcublas.so.13) ← NormalizeLoop (app)"; "" when not.
  std::string call_site;
  // The call site names a line of source (a Python frame, CallSite::caller_line): it alone
  // says which wait this is, whichever kernel the wait met (findings_digest.cc GroupBlamed).
  bool call_site_line = false;
  // The call-site frame alone (CallSite::caller: "NormalizeLoop (app)"), for the host table's
  // "Called from" column; "" when not known.
  std::string caller;
  std::vector<FindingFrame> stack;
  std::string explanation;
  FindingDetails details;  // the alternative Rule(rule).details names
  // A host-time finding of start-up work (a module load, context set-up or allocation) whose
  // call ended within start-up (analysis/metrics/start_up.h): paid once, so ranked after the
  // steady state's.
  bool in_start_up = false;
  // A host-time finding inside an autotuner, torch.compile's compilation or a CUDA library's
  // set-up, told from its stack (analysis/model/one_time_work.h): paid once per compiled graph,
  // shape, plan or handle, so ranked after the steady state's like start-up's, and saying which.
  OneTimeWork one_time = OneTimeWork::kNone;
};

// Whether `f` is paid once rather than in every step: start-up's work or one-time work.
inline bool PaidOnce(const Finding& f) { return f.in_start_up || f.one_time != OneTimeWork::kNone; }

inline constexpr size_t kMaxBlamed = 16;

// A finding handed on as soon as it is found, with `seq`, its place in the order the passes
// found them: (host_start_ns, correlation_id, seq) orders a process's findings as FindFindings
// returns them.
using FindingSink = std::function<void(Finding&& finding, uint64_t seq)>;
// Whether a sink wants a finding whole, asked before the host rules write its text (with the seq
// it will come with, and every other field set): a finding it does not want comes without its
// explanation, nvtx, stack, caller, file and blamed work after the first. Most findings are only
// counted and grouped (FindingsDigest::WantsWhole, FindingTotals), and their text was most of the
// host rules' time. None given: every finding whole.
using FindingFilter = std::function<bool(const Finding& finding, uint64_t seq)>;
// A pass's place in the registry (RulePasses()), in the high bits of its findings' `seq`; the
// low bits number the pass's findings in the order it finds them.
inline constexpr int kFindingsPassShift = 40;

// FindFindings without holding the process's findings: each goes to `sink` as it is found
// (already marked in_start_up), in no particular order. The host rules, which find the most,
// run last, so that the start-up finding is known while they run. findings_digest.h groups
// them as they come.
void StreamFindings(const ProcessTrace& trace, const FindingsOptions& options,
                    const FindingSink& sink, const FindingFilter& wants_whole = {});
void StreamFindings(const ProcessTrace& trace, const TraceIndex& index, const StreamModel& model,
                    const FindingsOptions& options, const FindingSink& sink,
                    const FindingFilter& wants_whole = {});

// Every finding of one process, ordered by time: the registered passes (rule_registry.h), run
// over one TraceIndex and StreamModel.
std::vector<Finding> FindFindings(const ProcessTrace& trace, const FindingsOptions& options);
// The same over an index and stream model already built for `trace` (the HTML report reuses
// them for its pictures).
std::vector<Finding> FindFindings(const ProcessTrace& trace, const TraceIndex& index,
                                  const StreamModel& model, const FindingsOptions& options);

// The pass of the host rules blocked-on-prior-work, sync-api, implicit-sync,
// pageable-async-memcpy, sync-memcpy and sync-memset: one pass, because a call's own cost is its
// host time minus its wait. Registered in rule_registry.cc.
void FindHostCallFindings(const RuleInput& input, std::vector<Finding>* out);
// Where the host pass hands its findings on, each as it is found.
struct HostFindingsOut {
  std::function<void(Finding&&)> found;
  // The start-up finding (none: nothing is): findings of start-up's own work are marked as
  // MarkStartUp marks them, before `wants_text` sees them.
  const Finding* start_up = nullptr;
  // As FindingFilter: whether a finding is wanted with its text. Empty: every one.
  std::function<bool(const Finding&)> wants_text;
};
void FindHostCallFindings(const RuleInput& input, const HostFindingsOut& out);
// The same pass in two steps, for a caller that learns which findings it wants whole only after
// a stretch's are all found (windowed_findings.h: windows analysed at once on several threads,
// whose findings' seqs, which FindingsDigest::WantsWhole asks, are known in window order).
// `input` and `start_up` must outlive it; one thread at a time.
class HostCallFindings {
 public:
  struct Found {
    Finding finding;
    uint32_t call = 0;  // the API call (outermost) it is of
  };
  HostCallFindings(const RuleInput& input, const Finding* start_up);
  ~HostCallFindings();
  // Every finding in the order FindHostCallFindings hands them on: whole if `whole`, else as
  // wants_text saying no gives them.
  std::vector<Found> Find(bool whole);
  // One of Find(false)'s findings as FindHostCallFindings hands it on when wants_text says yes
  // (its call analysed again).
  Finding Whole(const Found& found);
  // One of Find(true)'s findings as FindHostCallFindings hands it on when wants_text says no:
  // without its file, NVTX ranges, call stack, caller and explanation, a wait's blamed work
  // after the first (the fields Hand writes for a finding wanted whole).
  static Finding Textless(const Finding& whole);

 private:
  struct Parts;
  std::unique_ptr<Parts> parts_;
};

// Whether `f` is a host-time finding that ended within `start_up` (the start-up finding; none:
// no finding is) and is start-up's own work or lies in its warm-up (its StartUpDetails').
bool IsPaidInStartUp(const Finding* start_up, const Finding& f);
// Whether the start-up finding says one-time work of `work`'s kind recurs through the run: a
// CUDA library's set-up (StartUp::library_set_up_recurs), or an autotuner's or compiler's
// (StartUp::recurring_compilations). Then it is not one-time work.
bool OneTimeWorkRecurs(const Finding* start_up, OneTimeWork work);
// Such a finding is marked in_start_up and says so.
void MarkStartUp(const Finding* start_up, Finding* f);
// Findings handed on with their seq (StreamFindings), in FindFindings' order.
std::vector<Finding> InFindOrder(std::vector<std::pair<uint64_t, Finding>> found);

// Findings with the same rule, API, first blamed name (but for those paid once, start-up's and
// one-time work's: what they waited for is no fix), call site (but for one-time work's: the
// tuner's or compiler's own lines), details' group key (rule_details.h), paid once or not and
// which one-time work, worst (largest blocked_ns) first.
struct FindingGroup {
  Finding worst;
  uint64_t count = 0;
  uint64_t total_blocked_ns = 0;
  uint64_t total_host_ns = 0;
};
// Groups sorted by total_blocked_ns (the time lost), largest first; start-up ones after the rest.
std::vector<FindingGroup> GroupFindings(const std::vector<Finding>& findings);

}  // namespace libprof::analysis
