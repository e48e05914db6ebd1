#include "analysis/metrics/process_summarizer.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <type_traits>

#include "analysis/metrics/unified_memory.h"
#include "analysis/model/api_names.h"
#include "analysis/model/call_sites.h"
#include "analysis/model/kernel_names.h"
#include "analysis/model/trace_index.h"
#include "analysis/model/units.h"

namespace libprof::analysis {
namespace {

uint64_t Duration(uint64_t start, uint64_t end) { return end > start ? end - start : 0; }

uint16_t CopyKey(CopyKind kind, MemoryKind src, MemoryKind dst) {
  return static_cast<uint16_t>(static_cast<unsigned>(kind) << 8 | static_cast<unsigned>(src) << 4 |
                               static_cast<unsigned>(dst));
}
CopyKind KindOf(uint16_t key) { return static_cast<CopyKind>(key >> 8); }
MemoryKind SrcOf(uint16_t key) { return static_cast<MemoryKind>((key >> 4) & 0xF); }
MemoryKind DstOf(uint16_t key) { return static_cast<MemoryKind>(key & 0xF); }

bool Contains(const std::vector<uint32_t>& list, uint32_t value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

const std::string& Str(const std::vector<std::string>& strings, uint32_t id) {
  static const std::string* empty = new std::string;
  return id < strings.size() ? strings[id] : *empty;
}

}  // namespace

ProcessSummarizer::ProcessSummarizer(Setup setup)
    : setup_(std::move(setup)),
      horizon_ns_(setup_.limits.horizon_ns.value_or(ArrivalHorizon(setup_.header))),
      // Calls reach the host union through the nesting stage, which may hold a call for one
      // horizon: they can be two behind the newest.
      host_union_(setup_.bounded ? setup_.limits.union_pieces : 0, 2 * horizon_ns_,
                  setup_.keep_intervals ? &host_pieces_ : nullptr),
      // With --tid/--nvtx, device work waits for its call's nesting to be decided (the join's
      // OnKnown), as calls do: two horizons too.
      device_union_(setup_.bounded ? setup_.limits.union_pieces : 0,
                    setup_.filters.tids.empty() && setup_.filters.nvtx.empty() ? horizon_ns_
                                                                               : 2 * horizon_ns_,
                    setup_.keep_intervals ? &device_pieces_ : nullptr),
      nesting_({.max_pending = setup_.bounded ? setup_.limits.held_calls_per_thread : 0,
                .horizon_ns = horizon_ns_},
               [this](const ApiCall& call, uint64_t seq, bool nested) {
                 CallDecided(call, seq, nested);
               }) {
  const FilterOptions& f = setup_.filters;
  window_filter_ = f.from_ns || f.to_ns;
  corr_filter_ = !f.tids.empty() || !f.nvtx.empty();
  if (setup_.windows) {
    clip_ = *setup_.windows;
    clip_all_ = false;
  } else if (window_filter_) {
    origin_ns_ = setup_.recording ? setup_.recording->start_ns : setup_.header.start_time_ns;
    const uint64_t from = f.from_ns.value_or(0);
    const uint64_t to = f.to_ns.value_or(UINT64_MAX);
    record_window_ = {{origin_ns_ + from, to == UINT64_MAX ? UINT64_MAX : origin_ns_ + to}};
    if (setup_.recording) record_window_ = Intersect({*setup_.recording}, record_window_);
    clip_ = record_window_;
    clip_all_ = false;
  }
  if (corr_filter_) {
    join_ = std::make_unique<CorrelationJoin<DeviceRecord>>(
        setup_.bounded,
        [this](const LaunchSite& site, uint64_t device_ns,
               const std::vector<const DeviceRecord*>& held) {
          if (!site.found) return;  // no kept call issued it: filtered out
          for (const DeviceRecord* r : held) EmitDevice(*r);
          if (project_) projection_.AddLaunch(site.thread_id, site.start_ns, device_ns);
        },
        horizon_ns_, setup_.limits.op_lag, setup_.limits.max_span);
    // Device work is counted as soon as its call is known to be kept (a held record then, a
    // later one on arrival: AddDevice), not after a horizon: holding every record that long
    // cost most of --nvtx's time (bench/README.md, profview diff).
    join_->OnKnown([this](const LaunchSite&, const std::vector<const DeviceRecord*>& held) {
      for (const DeviceRecord* r : held) EmitDevice(*r);
    });
  }
}

bool ProcessSummarizer::InWindow(uint64_t t) {
  if (!window_filter_) return true;
  for (const Interval& w : record_window_) {
    if (t >= w.start_ns && t < w.end_ns) {
      latest_kept_start_ = std::max(latest_kept_start_, t);
      kept_any_ = true;
      return true;
    }
  }
  return false;
}

bool ProcessSummarizer::ThreadKept(uint32_t thread_id) const {
  return setup_.filters.tids.empty() || Contains(setup_.filters.tids, thread_id);
}

void ProcessSummarizer::SeeThread(uint32_t thread_id) {
  if (!setup_.filters.tids.empty() && Contains(setup_.filters.tids, thread_id) &&
      !Contains(threads_seen_, thread_id)) {
    threads_seen_.push_back(thread_id);
  }
}

void ProcessSummarizer::AddNvtx(const std::vector<NvtxEvent>& events,
                                const std::vector<NvtxDomain>& domains) {
  domains_.insert(domains_.end(), domains.begin(), domains.end());
  for (const NvtxEvent& e : events) {
    if (e.kind == NvtxKind::kMark) continue;
    // The same order as ApplyFilters: time window, thread, then the --nvtx selection.
    if (window_filter_ && !InWindow(e.start_ns)) continue;
    if (!ThreadKept(e.thread_id)) continue;
    if (!setup_.filters.nvtx.empty()) {
      selection_candidates_.push_back(e);
    } else {
      AddRange(e);
    }
  }
}

void ProcessSummarizer::EndNvtx(const std::vector<std::string>& strings) {
  if (!setup_.filters.nvtx.empty()) {
    std::unordered_map<uint32_t, std::string> domain_names;
    for (const NvtxDomain& d : domains_) domain_names[d.id] = Str(strings, d.name_id);
    bool any = false;
    for (const NvtxEvent& e : selection_candidates_) {
      const std::string& domain = e.domain_id == 0 ? Str(strings, 0) : domain_names[e.domain_id];
      for (const std::string& name : setup_.filters.nvtx) {
        if (NvtxNameMatches(name, domain, Str(strings, e.message_id))) {
          const uint32_t end_thread = e.kind == NvtxKind::kStartEnd ? e.end_thread_id : e.thread_id;
          selection_.Add(e.thread_id, end_thread, e.start_ns, e.end_ns);
          any = true;
          break;
        }
      }
    }
    selection_.Seal();
    selected_ = any;
    for (const NvtxEvent& e : selection_candidates_) {
      if (selection_.Inside(e.thread_id, e.start_ns, e.end_ns)) AddRange(e);
    }
    std::vector<NvtxEvent>().swap(selection_candidates_);  // frees them
    clip_ = clip_all_ ? selection_.spans() : Intersect(clip_, selection_.spans());
    clip_all_ = false;
  }
  if (project_ && !join_) {
    join_ = std::make_unique<CorrelationJoin<DeviceRecord>>(
        setup_.bounded,
        [this](const LaunchSite& site, uint64_t device_ns,
               const std::vector<const DeviceRecord*>&) {
          if (site.found) projection_.AddLaunch(site.thread_id, site.start_ns, device_ns);
        },
        horizon_ns_, setup_.limits.op_lag, setup_.limits.max_span);
  }
}

void ProcessSummarizer::AddRange(const NvtxEvent& e) {
  auto [it, inserted] = nvtx_row_of_.try_emplace(uint64_t{e.domain_id} << 32 | e.message_id,
                                                 static_cast<uint32_t>(nvtx_rows_.size()));
  if (inserted) {
    NvtxRow& row = nvtx_rows_.emplace_back();
    row.domain_id = e.domain_id;
    row.message_id = e.message_id;
  }
  nvtx_rows_[it->second].stats.Add(Duration(e.start_ns, e.end_ns));
  projection_.AddRange(e.thread_id, e.start_ns, e.end_ns, it->second);
  if (e.kind == NvtxKind::kStartEnd && e.end_thread_id != 0 && e.end_thread_id != e.thread_id) {
    projection_.AddRange(e.end_thread_id, e.start_ns, e.end_ns, it->second);
  }
  project_ = true;
}

void ProcessSummarizer::Add(const TraceRecords& r, const std::vector<std::string>& strings) {
  strings_ = &strings;
  CoverRecords(r, &lo_, &hi_);
  if (setup_.options.by_caller) {
    auto append = [](const auto& from, auto* to) {
      to->insert(to->end(), from.begin(), from.end());
    };
    append(r.stack_modules, &stack_tables_.stack_modules);
    append(r.stack_frames, &stack_tables_.stack_frames);
    append(r.call_stacks, &stack_tables_.call_stacks);
  }
  for (const DropReport& d : r.drops) drops_ += d.count;
  if (r.run_end) run_end_ = r.run_end;
  for (const ContextInfo& context : r.contexts) {
    if (context.created_ns != 0) contexts_.push_back(context);
  }
  for (const DeviceInfo& device : r.devices) device_uuids_[device.id] = device.uuid;
  const FilterOptions& f = setup_.filters;
  const bool by_nvtx = !f.nvtx.empty();
  if (!selected_) {
    // Left out by --nvtx, but --tid still asks whether its threads were active.
    for (const ApiCall& c : r.api_calls) {
      if (!window_filter_ || InWindow(c.start_ns)) SeeThread(c.thread_id);
    }
    for (const NvtxEvent& e : r.nvtx_events) {
      if (!window_filter_ || InWindow(e.start_ns)) SeeThread(e.thread_id);
    }
    return;
  }
  for (const ApiCall& c : r.api_calls) {
    if (window_filter_ && !InWindow(c.start_ns)) continue;
    SeeThread(c.thread_id);
    if (!ThreadKept(c.thread_id)) continue;
    if (by_nvtx && !selection_.Inside(c.thread_id, c.start_ns, c.start_ns)) continue;
    ++events_;
    const uint64_t seq = call_seq_++;
    if (join_ && c.correlation_id != 0) join_->CallSeen(c.correlation_id, c.start_ns);
    nesting_.Add(c, seq);
  }
  ForEachDeviceOp(r, [&]<typename T>(const DeviceOp& op, const T& x) {
    if (window_filter_ && !InWindow(op.start_ns)) return;
    if (op.device_id != last_device_) {
      devices_with_work_.insert(op.device_id);
      last_device_ = op.device_id;
    }
    DeviceRecord d{.start_ns = op.start_ns,
                   .end_ns = op.end_ns,
                   .bytes = op.bytes,
                   .kind = static_cast<uint8_t>(op.kind)};
    // Each kind has its own key for the rows of the device table.
    if constexpr (std::is_same_v<T, Kernel>) {
      d.row = KernelRow(x);
    } else if constexpr (std::is_same_v<T, Memcpy>) {
      d.copy_key = CopyKey(x.copy_kind, x.src_kind, x.dst_kind);
      d.row = Row(op.kind, d.copy_key);
      d.repaired_end = x.cupti_end_ns != 0;
    } else if constexpr (std::is_same_v<T, Memset>) {
      d.row = Row(op.kind, static_cast<uint64_t>(x.memory_kind));
      d.repaired_end = x.cupti_end_ns != 0;
    } else {
      static_assert(std::is_same_v<T, GraphTrace>, "a device-op kind needs its row key here");
      d.row = Row(op.kind, x.graph_id);
    }
    AddDevice(op.correlation_id, d);
  });
  // The other records a call issued (syncs, memory operations, CUDA events) count as events.
  ForEachList(r, [&]<typename T>(const std::vector<T>& list) {
    if constexpr (kHasCorrelation<T> && !kIsDeviceOp<T> && !kIsDefinition<T> &&
                  !std::is_same_v<T, ApiCall>) {
      for (const T& x : list) {
        if constexpr (kHasTime<T>) {
          if (!window_filter_ || InWindow(StartNs(x))) CountOther(x.correlation_id, EndNs(x));
        } else {
          // No time of its own (a CUDA event): 0 never makes its id look recent.
          CountOther(x.correlation_id, 0);
        }
      }
    }
  });
  for (const NvtxEvent& e : r.nvtx_events) {
    if (window_filter_ && !InWindow(e.start_ns)) continue;
    SeeThread(e.thread_id);
    if (!ThreadKept(e.thread_id)) continue;
    if (by_nvtx && !selection_.Inside(e.thread_id, e.start_ns, e.end_ns)) continue;
    ++events_;
  }
  for (const Overhead& o : r.overheads) {
    if (window_filter_ && !InWindow(o.start_ns)) continue;
    if (!ThreadKept(o.thread_id)) continue;
    if (by_nvtx && !selection_.Inside(o.thread_id, o.start_ns, o.start_ns)) continue;
    ++events_;
  }
  AddUnifiedMemory(r.unified_memory_counters);
  nesting_.ReleaseOld();  // before the join settles: decided calls feed it
  if (join_) join_->SettleOld();
}

// Migrations are device-side time no API call issued: rows of their own in the device table
// (not in "GPU was busy", which is kernels, copies, memsets and graphs). They belong to no
// thread, so --tid and --nvtx, which keep what a thread did, leave them out.
void ProcessSummarizer::AddUnifiedMemory(const std::vector<UnifiedMemoryCounter>& records) {
  if (corr_filter_) return;
  for (const UnifiedMemoryCounter& u : records) {
    if (window_filter_ && !InWindow(u.start_ns)) continue;
    ++events_;
    const UvmCounterKind k = u.counter_kind;
    if (k != UvmCounterKind::kBytesHtoD && k != UvmCounterKind::kBytesDtoH &&
        k != UvmCounterKind::kBytesDtoD) {
      continue;
    }
    const auto [src, dst] = UvmProcessors(u);
    UvmRow& row = uvm_rows_[UvmDirection(src, dst)];
    row.stats.Add(u.end_ns > u.start_ns ? u.end_ns - u.start_ns : 0);
    row.bytes += u.value;
  }
}

uint32_t ProcessSummarizer::KernelRow(const Kernel& k) {
  const uint64_t key = uint64_t{k.shape.name_id} << 32 | k.shape.demangled_name_id;
  if (key == last_kernel_key_) return last_kernel_row_;
  auto [it, inserted] = kernel_rows_.try_emplace(key, static_cast<uint32_t>(device_rows_.size()));
  if (inserted) AddDeviceRow(DeviceOpKind::kKernel, key);
  last_kernel_key_ = key;
  last_kernel_row_ = it->second;
  return it->second;
}

uint32_t ProcessSummarizer::Row(DeviceOpKind kind, uint64_t key) {
  auto [it, inserted] = other_rows_.try_emplace(uint64_t{static_cast<uint8_t>(kind)} << 56 | key,
                                                static_cast<uint32_t>(device_rows_.size()));
  if (inserted) AddDeviceRow(kind, key);
  return it->second;
}

void ProcessSummarizer::AddDeviceRow(DeviceOpKind kind, uint64_t key) {
  DeviceRow& row = device_rows_.emplace_back();
  row.kind = static_cast<uint8_t>(kind);
  row.key = key;
}

void ProcessSummarizer::AddDevice(uint64_t corr, DeviceRecord record) {
  record.seq = device_seq_++;
  const uint64_t ns = Duration(record.start_ns, record.end_ns);
  if (corr_filter_) {
    if (corr == 0) return;  // no call can have issued it
    if (join_->KnownSite(corr, record.end_ns)) {
      EmitDevice(record);  // a kept call issued it
    } else {
      join_->Hold(corr, record, record.end_ns);
    }
    join_->AddDeviceTime(corr, ns, record.end_ns);
    return;
  }
  EmitDevice(record);
  if (join_ && corr != 0) join_->AddDeviceTime(corr, ns, record.end_ns);
}

void ProcessSummarizer::CountOther(uint64_t corr, uint64_t time_ns) {
  if (!corr_filter_) {
    ++events_;
  } else if (corr != 0) {
    DeviceRecord other;
    other.kind = kOtherRecord;
    if (join_->KnownSite(corr, time_ns)) {
      EmitDevice(other);
    } else {
      join_->Hold(corr, other, time_ns);
    }
  }
}

void ProcessSummarizer::EmitDevice(const DeviceRecord& r) {
  ++events_;
  if (r.kind == kOtherRecord) return;
  if (r.repaired_end) ++repaired_ends_;
  const uint64_t ns = Duration(r.start_ns, r.end_ns);
  DeviceRow& row = device_rows_[r.row];
  row.stats.Add(ns);
  row.bytes += r.bytes;
  if (std::tie(r.start_ns, r.seq) < std::tie(row.first_start, row.first_seq)) {
    row.first_start = r.start_ns;
    row.first_seq = r.seq;
  }
  if (r.kind == static_cast<uint8_t>(DeviceOpKind::kMemcpy)) {
    CopyTotals& c = copies_[r.copy_key];
    ++c.count;
    c.bytes += r.bytes;
    c.total_ns += ns;
  }
  if (clip_all_) {
    device_union_.Add(r.start_ns, r.end_ns);
  } else {
    device_union_.AddClipped(r.start_ns, r.end_ns, clip_);
  }
}

bool ProcessSummarizer::IsNoise(HostRow* row, uint32_t name_id) {
  if (row->noise < 0) row->noise = IsNoiseApi(Str(*strings_, name_id)) ? 1 : 0;
  return row->noise == 1;
}

void ProcessSummarizer::CallDecided(const ApiCall& c, uint64_t seq, bool nested) {
  const uint64_t key =
      setup_.options.by_caller ? uint64_t{c.stack_id} << 32 | c.name_id : uint64_t{c.name_id};
  HostRow& row = host_rows_[key];
  // (A call that created a context is shown whatever its name: the context's record comes
  // before it, as libprof holds calls back two flush intervals and writes contexts at once.)
  const bool noise = IsNoise(&row, c.name_id) && !CreatedAContext(c, contexts_);
  const bool hidden =
      !setup_.options.raw && (nested || noise || c.domain == ApiDomain::kInternalLaunch);
  if (hidden) {
    if (nested) {
      ++hidden_nested_calls_;
    } else {
      ++hidden_calls_;
      hidden_ns_ += Duration(c.start_ns, c.end_ns);
    }
  } else {
    row.stats.Add(Duration(c.start_ns, c.end_ns));
    if (seq < row.first_seq) {
      row.first_seq = seq;
      row.callback_id = c.callback_id;
    }
    if (clip_all_) {
      host_union_.Add(c.start_ns, c.end_ns);
    } else {
      host_union_.AddClipped(c.start_ns, c.end_ns, clip_);
    }
  }
  if (join_ && c.correlation_id != 0) {
    join_->CallDecided(c.correlation_id, c.thread_id, c.start_ns, seq, nested);
  }
}

Summary ProcessSummarizer::Finish(const std::vector<std::string>& strings) {
  strings_ = &strings;
  nesting_.Finish();
  if (join_) join_->Finish();
  projection_.Finish();
  host_union_.Finish();
  device_union_.Finish();
  exact_ = !nesting_.out_of_order() && !host_union_.out_of_order() &&
           !device_union_.out_of_order() && !(join_ && join_->out_of_order());

  Summary s;
  s.path = setup_.path;
  s.pid = setup_.header.pid;
  s.hostname = setup_.header.hostname;
  s.rank = setup_.header.rank;
  for (uint32_t device : devices_with_work_) {
    auto it = device_uuids_.find(device);
    if (it == device_uuids_.end()) continue;
    if (std::string uuid = FormatGpuUuid(it->second); !uuid.empty()) s.gpus.push_back(uuid);
  }
  std::sort(s.gpus.begin(), s.gpus.end());
  if (setup_.windows) {
    s.windows = *setup_.windows;
  } else {
    const Interval recording = RecordingWindow(setup_.header.start_time_ns, lo_, hi_, run_end_);
    recording_ = recording;
    s.windows = {recording};
    if (window_filter_) {
      // --from/--to counted from the header's start, and kept records up to the recording's
      // end, which was not known yet: a record starting exactly there is outside. Either
      // assumption failing means reading again with this window (Setup::recording).
      if (!setup_.recording && (recording.start_ns != origin_ns_ ||
                                (kept_any_ && latest_kept_start_ >= recording.end_ns))) {
        exact_ = false;
      }
      const uint64_t from = setup_.filters.from_ns.value_or(0);
      const uint64_t to = setup_.filters.to_ns.value_or(UINT64_MAX);
      s.windows = Intersect(s.windows, {{recording.start_ns + from,
                                         to == UINT64_MAX ? UINT64_MAX : recording.start_ns + to}});
    }
    if (!setup_.filters.nvtx.empty()) s.windows = Intersect(s.windows, selection_.spans());
  }
  for (const Interval& w : s.windows) s.trace_ns += w.length();
  if (!s.windows.empty()) s.span = {s.windows.front().start_ns, s.windows.back().end_ns};
  s.events = events_;
  s.dropped_records = std::max(drops_, run_end_ ? run_end_->records_dropped : 0);
  s.repaired_ends = repaired_ends_;
  s.host_api_ns = host_union_.length();
  s.gpu_busy_ns = device_union_.length();
  s.hidden_calls = hidden_calls_;
  s.hidden_ns = hidden_ns_;
  s.hidden_nested_calls = hidden_nested_calls_;
  s.host_intervals = std::move(host_pieces_);
  s.device_intervals = std::move(device_pieces_);

  // Host rows by name id (and call site); distinct ids with one name (merged traces) fold into
  // one row.
  std::unique_ptr<CallSites> call_sites;
  if (setup_.options.by_caller) {
    ProcessTrace stacks;
    stacks.strings = strings;
    stacks.records = std::move(stack_tables_);
    call_sites = std::make_unique<CallSites>(stacks, setup_.options.call_sites);
  }
  std::map<std::string, SummaryRow> host;
  for (const auto& [key, r] : host_rows_) {
    if (r.stats.count() == 0) continue;
    const std::string& name = Str(strings, static_cast<uint32_t>(key));
    std::string shown = name.empty() ? "[unnamed API " + std::to_string(r.callback_id) + "]" : name;
    if (call_sites) {
      if (const std::string site = call_sites->Of(static_cast<uint32_t>(key >> 32)).Text();
          !site.empty()) {
        shown += " ← " + site;
      }
    }
    auto [it, inserted] = host.try_emplace(shown);
    if (inserted) {
      it->second.name = shown;
      it->second.kind = "api";
    }
    it->second.stats.Merge(r.stats);
  }
  for (auto& [name, row] : host) s.host.push_back(std::move(row));
  SortSummaryRows(&s.host);

  // Device rows by display name; when names collide the first operation names the kind.
  struct Named {
    SummaryRow row;
    std::tuple<uint64_t, uint8_t, uint64_t> first{UINT64_MAX, 0, UINT64_MAX};
  };
  std::map<std::string, Named> device;
  for (const DeviceRow& r : device_rows_) {
    if (r.stats.count() == 0) continue;
    const auto kind = static_cast<DeviceOpKind>(r.kind);
    std::string name;
    bool staged = false;  // a piece of a peer copy staged through host memory
    switch (kind) {
      case DeviceOpKind::kKernel:
        name = KernelDisplayName(Str(strings, static_cast<uint32_t>(r.key >> 32)),
                                 Str(strings, static_cast<uint32_t>(r.key)));
        break;
      case DeviceOpKind::kMemcpy: {
        const auto key = static_cast<uint16_t>(r.key);
        name = TraceIndex::CopyName(SrcOf(key), DstOf(key), KindOf(key));
        staged = IsStagedPeerPiece(KindOf(key), SrcOf(key), DstOf(key));
        break;
      }
      case DeviceOpKind::kMemset:
        name = TraceIndex::SetName(static_cast<MemoryKind>(r.key));
        break;
      case DeviceOpKind::kGraph:
        name = "[graph " + std::to_string(r.key) + "]";
        break;
    }
    Named& n = device[name];
    const auto first = std::make_tuple(r.first_start, r.kind, r.first_seq);
    if (first < n.first) {
      n.first = first;
      n.row.kind = ToString(kind);
      // (A staged peer copy's pieces each carry the whole copy's bytes and their last part's
      // time: no bytes or bandwidth to show.)
      n.row.has_bytes =
          (kind == DeviceOpKind::kMemcpy && !staged) || kind == DeviceOpKind::kMemset;
    }
    n.row.name = name;
    n.row.stats.Merge(r.stats);
    n.row.bytes += r.bytes;
  }
  for (auto& [name, n] : device) s.device.push_back(std::move(n.row));
  for (const auto& [direction, u] : uvm_rows_) {
    SummaryRow& row = s.device.emplace_back();
    row.name = "[unified memory " + direction + "]";
    row.kind = "uvm";
    row.stats = u.stats;
    row.has_bytes = true;
    row.bytes = u.bytes;
  }
  SortSummaryRows(&s.device);

  std::map<std::tuple<CopyKind, MemoryKind, MemoryKind>, CopyRow> copies;
  for (const auto& [key, c] : copies_) {
    copies[{KindOf(key), SrcOf(key), DstOf(key)}] = CopyRow{.copy_kind = KindOf(key),
                                                            .src_kind = SrcOf(key),
                                                            .dst_kind = DstOf(key),
                                                            .count = c.count,
                                                            .bytes = c.bytes,
                                                            .total_ns = c.total_ns};
  }
  for (auto& [key, row] : copies) s.copies.push_back(row);
  std::stable_sort(s.copies.begin(), s.copies.end(),
                   [](const CopyRow& a, const CopyRow& b) { return a.total_ns > b.total_ns; });

  std::unordered_map<uint32_t, uint32_t> domain_name_ids;
  for (const NvtxDomain& d : domains_) domain_name_ids[d.id] = d.name_id;
  std::map<std::pair<std::string, std::string>, SummaryRow> nvtx;
  const std::vector<uint64_t>& gpu = projection_.gpu_ns();
  for (size_t i = 0; i < nvtx_rows_.size(); ++i) {
    const NvtxRow& r = nvtx_rows_[i];
    auto d = domain_name_ids.find(r.domain_id);
    const std::string domain =
        r.domain_id == 0 || d == domain_name_ids.end() ? "" : Str(strings, d->second);
    const std::string& message = Str(strings, r.message_id);
    SummaryRow& row = nvtx[{domain, message}];
    if (row.kind.empty()) {
      row.kind = "nvtx";
      row.name = message;
      row.domain = domain;
    }
    row.stats.Merge(r.stats);
    row.gpu_ns += i < gpu.size() ? gpu[i] : 0;
  }
  for (auto& [key, row] : nvtx) s.nvtx.push_back(std::move(row));
  SortSummaryRows(&s.nvtx);
  return s;
}

}  // namespace libprof::analysis
