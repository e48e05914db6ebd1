#include "analysis/model/trace_index.h"

#include <algorithm>
#include <map>
#include <memory>
#include <tuple>

#include "proto/api_nesting.h"
#include "proto/correlation_join.h"
#include "analysis/model/kernel_names.h"
#include "analysis/model/nearly_sorted.h"

namespace libprof::analysis {
namespace {

// The readable name of each kind of device operation (TraceIndex::OpName), interned.
class OpNamer {
 public:
  using Names = std::unordered_map<std::string, std::unique_ptr<std::string>>;
  OpNamer(const ProcessTrace& trace, Names* names) : trace_(trace), names_(*names) {}

  // Kernel names are demangled once per distinct (mangled, demangled) pair.
  const std::string* operator()(const Kernel& k) {
    // By name id first (string ids are dense): the map only for a name seen with several
    // demangled names. Millions of kernels, a few dozen names.
    const uint32_t id = k.shape.name_id;
    if (id < by_name_id_.size() && by_name_id_[id].second != nullptr &&
        by_name_id_[id].first == k.shape.demangled_name_id) {
      return by_name_id_[id].second;
    }
    const std::string* name = Named(k);
    if (id < kMaxNameIds) {
      if (id >= by_name_id_.size()) by_name_id_.resize(id + 1, {0, nullptr});
      if (by_name_id_[id].second == nullptr) by_name_id_[id] = {k.shape.demangled_name_id, name};
    }
    return name;
  }
  const std::string* Named(const Kernel& k) {
    const auto key = std::make_pair(k.shape.name_id, k.shape.demangled_name_id);
    auto it = kernel_names_.find(key);
    if (it == kernel_names_.end()) {
      it = kernel_names_
               .emplace(key, Intern(KernelDisplayName(trace_.Str(k.shape.name_id),
                                                      trace_.Str(k.shape.demangled_name_id))))
               .first;
    }
    return it->second;
  }
  const std::string* operator()(const Memcpy& m) {
    return Intern(TraceIndex::CopyName(m.src_kind, m.dst_kind, m.copy_kind));
  }
  const std::string* operator()(const Memset& m) {
    return Intern(TraceIndex::SetName(m.memory_kind));
  }
  const std::string* operator()(const GraphTrace& g) {
    return Intern("[graph " + std::to_string(g.graph_id) + "]");
  }

 private:
  const std::string* Intern(std::string name) {
    auto [it, inserted] = names_.try_emplace(name, nullptr);
    if (inserted) it->second = std::make_unique<std::string>(std::move(name));
    return it->second.get();
  }
  static constexpr uint32_t kMaxNameIds = 1u << 24;  // bounds by_name_id_ on a hostile file
  const ProcessTrace& trace_;
  Names& names_;
  std::map<std::pair<uint32_t, uint32_t>, const std::string*> kernel_names_;
  // name id -> (demangled name id, name) of the first kernel seen with that name id.
  std::vector<std::pair<uint32_t, const std::string*>> by_name_id_;
};

bool ByStart(const DeviceOp& a, const DeviceOp& b) { return a.start_ns < b.start_ns; }

// Merges the sorted stretches [0, ends[0]), [ends[0], ends[1]), ... of *ops into one sorted list,
// an earlier stretch's op first among equal starts (as a stable sort of the whole). The first
// stretch (the kernels: most of the ops) stays where it is: the others are merged aside, then
// into place from the back, so only they are copied.
void MergeStretches(const std::vector<size_t>& ends, std::vector<DeviceOp>* ops) {
  if (ends.empty() || ends.front() == ops->size()) return;
  std::vector<std::pair<size_t, size_t>> heads;  // [next, end) of each later stretch with ops
  for (size_t k = 1; k < ends.size(); ++k) {
    if (ends[k] > ends[k - 1]) heads.push_back({ends[k - 1], ends[k]});
  }
  std::vector<DeviceOp> rest;  // the later stretches, merged
  rest.reserve(ops->size() - ends.front());
  while (!heads.empty()) {
    size_t best = 0;
    for (size_t k = 1; k < heads.size(); ++k) {
      if (ByStart((*ops)[heads[k].first], (*ops)[heads[best].first])) best = k;
    }
    rest.push_back((*ops)[heads[best].first]);
    if (++heads[best].first == heads[best].second) heads.erase(heads.begin() + best);
  }
  // From the back: of equal starts the first stretch's op goes first, so `rest`'s is placed
  // later, that is, taken first here.
  size_t first = ends.front(), later = rest.size(), to = ops->size();
  while (later > 0) {
    if (first > 0 && ByStart(rest[later - 1], (*ops)[first - 1])) {
      (*ops)[--to] = (*ops)[--first];
    } else {
      (*ops)[--to] = rest[--later];
    }
  }
}

}  // namespace

std::string TraceIndex::CopyName(MemoryKind src, MemoryKind dst, CopyKind kind) {
  if (kind == CopyKind::kPtoP) return "[copy device to peer device memory]";
  if (IsStagedPeerPiece(kind, src, dst)) {
    return "[copy device to peer device memory, staged through host]";
  }
  return std::string("[copy ") + ToString(src) + " to " + ToString(dst) + " memory]";
}

std::string TraceIndex::SetName(MemoryKind kind) {
  return std::string("[set ") + ToString(kind) + " memory]";
}

TraceIndex::TraceIndex(const ProcessTrace& trace) : trace_(&trace) {
  const TraceRecords& r = trace.records;
  {
    std::vector<bool> known;
    for (const ApiCall& c : r.api_calls) {
      if (c.name_id >= traits_.size()) {
        traits_.resize(c.name_id + 1);
        known.resize(c.name_id + 1);
      }
      if (!known[c.name_id]) {
        traits_[c.name_id] = TraitsOf(trace.Str(c.name_id));
        known[c.name_id] = true;
      }
    }
  }
  // The ops kind by kind (ForEachDeviceOp's order), each kind's stretch sorted by start where
  // it lies, then the stretches merged: what a stable sort of the whole by start gives, without
  // its n log n (a kind's records arrive nearly in time order) or pairs of op and name to move.
  ops_.reserve(DeviceOpCount(r));
  OpNamer namer(trace, &names_);
  std::vector<size_t> stretch_ends;
  ForEachList(r, [&]<typename T>(const std::vector<T>& list) {
    if constexpr (kIsDeviceOp<T>) {
      constexpr size_t kind = static_cast<size_t>(OpKindOf(T{}));
      std::vector<const std::string*>& names = kind_names_[kind];
      names.reserve(list.size());
      const size_t begin = ops_.size();
      for (uint32_t i = 0; i < list.size(); ++i) {
        ops_.push_back(MakeDeviceOp(list[i], i));
        names.push_back(namer(list[i]));
      }
      StableSortNearlySorted(ops_.begin() + begin, ops_.end(), ByStart);
      stretch_ends.push_back(ops_.size());
    }
  });
  MergeStretches(stretch_ends, &ops_);

  // OpsOf: op indices by correlation id, in start order among equal ids.
  std::vector<std::pair<uint64_t, uint32_t>> by_corr(ops_.size());
  for (uint32_t i = 0; i < ops_.size(); ++i) by_corr[i] = {ops_[i].correlation_id, i};
  StableSortNearlySorted(by_corr.begin(), by_corr.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
  ops_by_corr_.reserve(by_corr.size());
  ops_corr_.reserve(by_corr.size());
  for (const auto& [corr, i] : by_corr) {
    ops_corr_.push_back(corr);
    ops_by_corr_.push_back(i);
  }
  // Where each id's run starts, for a lookup per OpsOf instead of a binary search (the idle
  // classifier and the rules ask for every call).
  uint64_t lo_corr = UINT64_MAX, hi_corr = 0;
  size_t ids = 0;
  for (size_t p = 0; p < ops_corr_.size(); ++p) {
    if (ops_corr_[p] == 0 || (p > 0 && ops_corr_[p] == ops_corr_[p - 1])) continue;
    lo_corr = std::min(lo_corr, ops_corr_[p]);
    hi_corr = std::max(hi_corr, ops_corr_[p]);
    ++ids;
  }
  run_by_corr_.Reset(lo_corr, hi_corr, ids);
  for (size_t p = 0; p < ops_corr_.size(); ++p) {
    if (ops_corr_[p] == 0 || (p > 0 && ops_corr_[p] == ops_corr_[p - 1])) continue;
    run_by_corr_.Set(ops_corr_[p], static_cast<uint32_t>(p));
  }

  // Nesting per thread (proto/api_nesting.h): each thread's calls sorted, then judged in order.
  nested_.assign(r.api_calls.size(), false);
  outermost_.resize(r.api_calls.size());
  std::unordered_map<uint32_t, std::vector<uint32_t>> by_thread;
  {
    // A thread's calls come in runs: its list is looked up once per run, not per call.
    uint32_t last_tid = 0;
    std::vector<uint32_t>* last = nullptr;
    for (uint32_t i = 0; i < r.api_calls.size(); ++i) {
      const uint32_t tid = r.api_calls[i].thread_id;
      if (last == nullptr || tid != last_tid) {
        last = &by_thread[tid];
        last_tid = tid;
      }
      last->push_back(i);
    }
  }
  for (auto& [tid, calls] : by_thread) {
    // NestingBefore is a total order: any sort gives this one. A thread's calls come nearly in
    // it (a nested driver call just before its runtime call).
    StableSortNearlySorted(calls.begin(), calls.end(), [&](uint32_t a, uint32_t b) {
      return NestingBefore(r.api_calls[a], a, r.api_calls[b], b);
    });
    ThreadNesting nesting(NestingRule::kAnyCall);
    ThreadCalls& top = top_level_[tid];
    for (uint32_t i : calls) {
      const NestingDecision d = nesting.Next(r.api_calls[i], i);
      nested_[i] = d.nested;
      outermost_[i] = static_cast<uint32_t>(d.outermost);
      if (outermost_[i] == i) top.calls.push_back(i);
    }
    // By start, then file order (NestingBefore differs only on ties of start).
    StableSortNearlySorted(top.calls.begin(), top.calls.end(), [&](uint32_t a, uint32_t b) {
      return std::tie(r.api_calls[a].start_ns, a) < std::tie(r.api_calls[b].start_ns, b);
    });
    top.max_end.reserve(top.calls.size());
    uint64_t running = 0;
    for (uint32_t i : top.calls) {
      running = std::max(running, r.api_calls[i].end_ns);
      top.max_end.push_back(running);
    }
  }

  // The launching call of each id (proto/correlation_join.h); calls come in file order.
  call_by_corr_.ResetForIds(r.api_calls);
  for (uint32_t i = 0; i < r.api_calls.size(); ++i) {
    const uint64_t corr = r.api_calls[i].correlation_id;
    if (corr == 0) continue;
    const int64_t holder = call_by_corr_.Find(corr);
    if (holder < 0 || LaunchesRather(nested_[i], i, nested_[holder], holder)) {
      call_by_corr_.Set(corr, i);
    }
  }
  for (const NvtxDomain& d : r.nvtx_domains) domain_names_[d.id] = d.name_id;
}

const TraceIndex::ThreadCalls* TraceIndex::TopLevelCalls(uint32_t thread_id) const {
  auto it = top_level_.find(thread_id);
  return it == top_level_.end() ? nullptr : &it->second;
}

int64_t TraceIndex::LaunchingCall(uint64_t corr) const {
  return corr == 0 ? -1 : call_by_corr_.Find(corr);
}

const std::string& TraceIndex::OpName(const DeviceOp& op) const {
  return *kind_names_[static_cast<size_t>(op.kind)][op.record];
}

const std::string& TraceIndex::NvtxDomainName(uint32_t domain_id) const {
  static const std::string* empty = new std::string;
  if (domain_id == 0) return *empty;
  auto it = domain_names_.find(domain_id);
  return it == domain_names_.end() ? *empty : trace_->Str(it->second);
}

std::string TraceIndex::NvtxName(const NvtxEvent& event) const {
  const std::string& domain = NvtxDomainName(event.domain_id);
  const std::string& message = trace_->Str(event.message_id);
  return domain.empty() ? message : domain + ": " + message;
}

std::span<const uint32_t> TraceIndex::OpsOf(uint64_t corr) const {
  if (corr == 0) {  // ops without an id: not in run_by_corr_
    auto [first, last] = std::equal_range(ops_corr_.begin(), ops_corr_.end(), corr);
    return {ops_by_corr_.data() + (first - ops_corr_.begin()), static_cast<size_t>(last - first)};
  }
  const int64_t first = run_by_corr_.Find(corr);
  if (first < 0) return {};
  size_t last = static_cast<size_t>(first) + 1;
  while (last < ops_corr_.size() && ops_corr_[last] == corr) ++last;
  return {ops_by_corr_.data() + first, last - static_cast<size_t>(first)};
}

}  // namespace libprof::analysis
