#include "analysis/rules/findings_partial.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <tuple>

#include "analysis/metrics/partial_header.h"
#include "analysis/metrics/rank_skew.h"
#include "analysis/model/trace_index.h"
#include "analysis/model/trace_loader.h"
#include "analysis/rules/cross_process_rules.h"
#include "analysis/rules/rule_details.h"
#include "analysis/rules/rule_registry.h"
#include "analysis/rules/windowed_findings.h"
#include "proto/trace_inputs.h"

// std::optional as the value or null (nlohmann 3.11 has no serializer of its own for it).
namespace nlohmann {
template <class T>
struct adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& value) {
    j = value ? json(*value) : json(nullptr);
  }
  static void from_json(const json& j, std::optional<T>& value) {
    if (j.is_null()) {
      value.reset();
    } else {
      value = j.get<T>();
    }
  }
};
}  // namespace nlohmann

namespace libprof::analysis {

using json = nlohmann::json;

// The findings' parts as JSON, field by field (strict: a missing field is a damaged partial).
// A details struct is written as its fields and read back as the alternative its rule names
// (RuleInfo::details), so the rule says which struct it is.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Blamed, kind, name, correlation_id, stream_id, overlap_ns,
                                   launched_before_ns, via)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(FindingFrame, function, module, module_offset, python_file,
                                   line)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(IdleTotals, launch_ns, sync_ns, other_ns, host_function_ns,
                                   in_graph_ns, memory_wait_ns, other_device_ns)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CopyDetails, bytes, copy_kind, src_kind, dst_kind)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(IdleGapDetails, host_activity, idle)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(LowUtilizationDetails, utilization, launch_bound_idle_ns,
                                   kernels, chunks, idle)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(IdleBreakdownDetails, utilization, kernels, idle,
                                   mean_kernel_ns, launches, mean_launch_ns, one_time_idle_ns)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(StartUpDetails, first_kernel_ns, module_load_ns, module_loads,
                                   context_ns, allocation_ns, allocations, later_module_load_ns,
                                   later_module_loads, warm_up_ns, warm_up_gpu_busy_ns,
                                   gpu_busy_after, gpu_idle_ns, one_time_gpu_idle_ns,
                                   recurring_library_set_ups, recurring_module_loads,
                                   recurring_compilations, active_ns, active_gpu_busy_ns, steady_ns,
                                   steady_gpu_busy_ns)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(AllocChurnDetails, bytes, free_api, pairs, pairs_host_ns,
                                   implicit_syncs, sync_wait_ns, caching_saving_ns, async_saving_ns,
                                   pool_release_threshold, release_sync_ns)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(OverlapDetails, serialised_by, kernels, copies, copy_ns,
                                   kernel_ns)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(UnifiedMemoryDetails, kernel, fault_groups, migrated_bytes,
                                   migrations, migration_ns, event, events, allocation)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(LateRankDetails, rank, communicator, seq, late_by_ns,
                                   waiting_ranks)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(GraphRebuildDetails, instantiations, graph_launches,
                                   exec_updates, instantiate_ns, capture_ns, destroy_ns)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SharedGpuDetails, gpu, pids, processes, shared_ns, busy_ns)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(TwoWayCopiesDetails, pairs, copies, copy_ns, htod_bytes,
                                   dtoh_bytes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ProcessGpuUse::Gpu, device_id, uuid, first_ns, last_ns, busy_ns,
                                   ops)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ProcessGpuUse, path, pid, hostname, rank, origin_ns, gpus)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CollectiveCall, op, comm, comm_size, comm_rank, seq, bytes,
                                   reduction, root, host_start_ns, host_end_ns, start_ns, end_ns,
                                   has_device_work, device_ops, device_id, thread_id)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ProcessCollectives, path, pid, hostname, rank, origin_ns,
                                   calls, warnings)

inline void to_json(json& j, const NoDetails&) { j = json::object(); }
inline void from_json(const json&, NoDetails&) {}

namespace {

struct BadPartial {
  std::string what;
};

RuleId RuleFromName(const std::string& name) {
  for (const RuleInfo& r : Rules()) {
    if (r.id == name) return r.rule;
  }
  throw BadPartial{"unknown rule \"" + name + "\""};
}

template <size_t I = 0>
FindingDetails DetailsFromJson(size_t alternative, const json& j) {
  if constexpr (I < std::variant_size_v<FindingDetails>) {
    if (alternative == I) {
      std::variant_alternative_t<I, FindingDetails> details;
      from_json(j, details);
      return details;
    }
    return DetailsFromJson<I + 1>(alternative, j);
  } else {
    throw BadPartial{"a rule with unknown details"};
  }
}

json FindingJson(const Finding& f) {
  json details;
  std::visit([&](const auto& d) { to_json(details, d); }, f.details);
  return json{{"rule", RuleName(f.rule)},
              {"api", f.api},
              {"file", f.file},
              {"pid", f.pid},
              {"thread_id", f.thread_id},
              {"correlation_id", f.correlation_id},
              {"host_start_ns", f.host_start_ns},
              {"host_duration_ns", f.host_duration_ns},
              {"blocked_ns", f.blocked_ns},
              {"stream_id", f.stream_id},
              {"device_id", f.device_id},
              {"blamed", f.blamed},
              {"blamed_omitted", f.blamed_omitted},
              {"nvtx", f.nvtx},
              {"call_site", f.call_site},
              {"call_site_line", f.call_site_line},
              {"caller", f.caller},
              {"stack", f.stack},
              {"explanation", f.explanation},
              {"details", details},
              {"in_start_up", f.in_start_up},
              {"one_time", OneTimeWorkId(f.one_time)}};
}

Finding ParseFinding(const json& j) {
  Finding f;
  f.rule = RuleFromName(j.at("rule").get<std::string>());
  f.api = j.at("api").get<std::string>();
  f.file = j.at("file").get<std::string>();
  f.pid = j.at("pid").get<uint32_t>();
  f.thread_id = j.at("thread_id").get<uint32_t>();
  f.correlation_id = j.at("correlation_id").get<uint64_t>();
  f.host_start_ns = j.at("host_start_ns").get<uint64_t>();
  f.host_duration_ns = j.at("host_duration_ns").get<uint64_t>();
  f.blocked_ns = j.at("blocked_ns").get<uint64_t>();
  f.stream_id = j.at("stream_id").get<std::optional<uint32_t>>();
  f.device_id = j.at("device_id").get<std::optional<uint32_t>>();
  f.blamed = j.at("blamed").get<std::vector<Blamed>>();
  f.blamed_omitted = j.at("blamed_omitted").get<uint64_t>();
  f.nvtx = j.at("nvtx").get<std::vector<std::string>>();
  f.call_site = j.at("call_site").get<std::string>();
  f.call_site_line = j.at("call_site_line").get<bool>();
  f.caller = j.at("caller").get<std::string>();
  f.stack = j.at("stack").get<std::vector<FindingFrame>>();
  f.explanation = j.at("explanation").get<std::string>();
  f.details = DetailsFromJson(Rule(f.rule).details, j.at("details"));
  f.in_start_up = j.at("in_start_up").get<bool>();
  const std::string one_time = j.at("one_time").get<std::string>();
  f.one_time = OneTimeWorkFromId(one_time);
  if (!one_time.empty() && f.one_time == OneTimeWork::kNone) {
    throw BadPartial{"unknown one-time work \"" + one_time + "\""};
  }
  return f;
}

json ThresholdsJson(const FindingsOptions& t) {
  return json{{"min_wait_ns", t.min_wait_ns},
              {"gap_threshold_ns", t.gap_threshold_ns},
              {"util_chunks", t.util_chunks},
              {"util_threshold", t.util_threshold},
              {"sync_memcpy_min_h2d_bytes", t.sync_memcpy_min_h2d_bytes},
              {"idle_share", t.idle_share},
              {"churn_min_pairs", t.churn_min_pairs},
              {"framework_paths", t.call_sites.framework_paths}};
}

FindingsOptions ParseThresholds(const json& j) {
  FindingsOptions t;
  t.min_wait_ns = j.at("min_wait_ns").get<uint64_t>();
  t.gap_threshold_ns = j.at("gap_threshold_ns").get<uint64_t>();
  t.util_chunks = j.at("util_chunks").get<uint32_t>();
  t.util_threshold = j.at("util_threshold").get<double>();
  t.sync_memcpy_min_h2d_bytes = j.at("sync_memcpy_min_h2d_bytes").get<uint64_t>();
  t.idle_share = j.at("idle_share").get<double>();
  t.churn_min_pairs = j.at("churn_min_pairs").get<uint64_t>();
  t.call_sites.framework_paths = j.at("framework_paths").get<std::vector<std::string>>();
  return t;
}

bool SameThresholds(const FindingsOptions& a, const FindingsOptions& b) {
  return ThresholdsJson(a) == ThresholdsJson(b);
}


json DigestJson(const FindingsDigest::State& s) {
  json groups = json::array();
  for (const FindingsDigest::State::Group& g : s.groups) {
    groups.push_back(json{{"worst", FindingJson(g.group.worst)},
                          {"count", g.group.count},
                          {"total_blocked_ns", g.group.total_blocked_ns},
                          {"total_host_ns", g.group.total_host_ns},
                          {"order", g.worst}});
  }
  json start_ups = json::array();
  for (const auto& [process, f] : s.start_ups) {
    start_ups.push_back(json{{"process", process}, {"finding", FindingJson(f)}});
  }
  json idle = json::array();
  for (const FindingsDigest::State::Idle& i : s.idle) {
    idle.push_back(json{{"pid", i.pid}, {"device", i.device}, {"rule", RuleName(i.rule)},
                        {"ns", i.ns}});
  }
  return json{{"groups", groups},
              {"start_ups", start_ups},
              {"counts", s.counts},
              {"size", s.size},
              {"pids", s.pids},
              {"sums",
               {{"host", s.sums.host},
                {"saving", s.sums.saving},
                {"start_up", s.sums.start_up},
                {"rank_wait", s.sums.rank_wait},
                {"host_in_start_up", s.sums.host_in_start_up},
                {"host_in_one_time", s.sums.host_in_one_time},
                {"host_waits", s.sums.host_waits},
                {"gpu_idle_in_one_time", s.sums.gpu_idle_in_one_time},
                {"one_time_kinds", s.sums.one_time_kinds}}},
              {"host_threads", s.host_threads},
              {"idle", idle},
              {"processes", s.processes},
              {"first_waits", s.first_waits}};
}

FindingsDigest::State ParseDigest(const json& j) {
  FindingsDigest::State s;
  for (const json& g : j.at("groups")) {
    FindingsDigest::State::Group group;
    group.group.worst = ParseFinding(g.at("worst"));
    group.group.count = g.at("count").get<uint64_t>();
    group.group.total_blocked_ns = g.at("total_blocked_ns").get<uint64_t>();
    group.group.total_host_ns = g.at("total_host_ns").get<uint64_t>();
    group.worst = g.at("order").get<FindingsDigest::Order>();
    s.groups.push_back(std::move(group));
  }
  for (const json& u : j.at("start_ups")) {
    s.start_ups.emplace_back(u.at("process").get<uint64_t>(), ParseFinding(u.at("finding")));
  }
  s.counts = j.at("counts").get<std::array<size_t, 5>>();
  s.size = j.at("size").get<size_t>();
  s.pids = j.at("pids").get<std::vector<uint32_t>>();
  const json& sums = j.at("sums");
  s.sums.host = sums.at("host").get<uint64_t>();
  s.sums.saving = sums.at("saving").get<uint64_t>();
  s.sums.start_up = sums.at("start_up").get<uint64_t>();
  s.sums.rank_wait = sums.at("rank_wait").get<uint64_t>();
  s.sums.host_in_start_up = sums.at("host_in_start_up").get<uint64_t>();
  s.sums.host_in_one_time = sums.at("host_in_one_time").get<uint64_t>();
  s.sums.host_waits = sums.at("host_waits").get<uint64_t>();
  s.sums.gpu_idle_in_one_time = sums.at("gpu_idle_in_one_time").get<uint64_t>();
  s.sums.one_time_kinds = sums.at("one_time_kinds").get<uint32_t>();
  s.host_threads = j.at("host_threads").get<std::vector<std::pair<uint32_t, uint32_t>>>();
  for (const json& i : j.at("idle")) {
    s.idle.push_back({i.at("pid").get<uint32_t>(), i.at("device").get<uint32_t>(),
                      RuleFromName(i.at("rule").get<std::string>()), i.at("ns").get<uint64_t>()});
  }
  s.processes = j.at("processes").get<uint64_t>();
  s.first_waits = j.at("first_waits").get<std::vector<std::pair<uint32_t, uint64_t>>>();
  return s;
}

}  // namespace

std::string FindingsPartialJson(const FindingsPartial& p) {
  json processes = json::array();
  for (const FindingsPartial::Process& process : p.processes) {
    processes.push_back(json{{"file", process.file}, {"index", process.index}});
  }
  json collectives = json::array();
  for (const auto& [process, c] : p.collectives) {
    collectives.push_back(json{{"process", process}, {"collectives", c}});
  }
  json gpu_use = json::array();
  for (const auto& [process, use] : p.gpu_use) {
    gpu_use.push_back(json{{"process", process}, {"gpu_use", use}});
  }
  json warnings = json::array();
  for (const FindingsPartial::Warning& w : p.warnings) {
    warnings.push_back(json{{"file", w.file}, {"text", w.text}});
  }
  json out{
      {"format", kFindingsPartialFormat},
      {"version", kFindingsPartialVersion},
      {"thresholds", ThresholdsJson(p.thresholds)},
      {"filters", FiltersJson(p.filters)},
      {"files", p.files},
      {"processes", processes},
      {"digest", DigestJson(p.digest)},
      {"collectives", collectives},
      {"gpu_use", gpu_use},
      {"trace_ns", p.trace_ns},
      {"matches", {{"pids", p.matches.pids}, {"tids", p.matches.tids}, {"nvtx", p.matches.nvtx}}},
      {"warnings", warnings}};
  return out.dump() + "\n";
}

bool IsFindingsPartial(std::string_view text) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_object() && j.contains("format") && j["format"] == kFindingsPartialFormat;
}

std::expected<FindingsPartial, std::string> ParseFindingsPartial(std::string_view text,
                                                                 const std::string& name) {
  auto parsed = ParsePartialHeader(text, name, kFindingsPartialFormat, kFindingsPartialVersion,
                                   "a findings partial", "findings");
  if (!parsed) return std::unexpected(parsed.error());
  const json& j = *parsed;
  try {
    FindingsPartial p;
    p.thresholds = ParseThresholds(j.at("thresholds"));
    p.filters = ParseFilters(j.at("filters"));
    p.files = j.at("files").get<std::vector<std::string>>();
    for (const json& process : j.at("processes")) {
      p.processes.push_back(
          {process.at("file").get<std::string>(), process.at("index").get<uint32_t>()});
    }
    p.digest = ParseDigest(j.at("digest"));
    if (p.digest.processes != p.processes.size()) {
      throw BadPartial{"its digest counts " + std::to_string(p.digest.processes) +
                       " processes, its list " + std::to_string(p.processes.size())};
    }
    for (const json& c : j.at("collectives")) {
      const uint64_t process = c.at("process").get<uint64_t>();
      if (process == 0 || process > p.processes.size()) {
        throw BadPartial{"collectives of process " + std::to_string(process) +
                         ", which it does not list"};
      }
      p.collectives.emplace_back(process, c.at("collectives").get<ProcessCollectives>());
    }
    for (const json& g : j.at("gpu_use")) {
      const uint64_t process = g.at("process").get<uint64_t>();
      if (process == 0 || process > p.processes.size()) {
        throw BadPartial{"GPUs of process " + std::to_string(process) + ", which it does not list"};
      }
      p.gpu_use.emplace_back(process, g.at("gpu_use").get<ProcessGpuUse>());
    }
    p.trace_ns = j.at("trace_ns").get<uint64_t>();
    const json& m = j.at("matches");
    p.matches.pids = m.at("pids").get<std::vector<uint32_t>>();
    p.matches.tids = m.at("tids").get<std::vector<uint32_t>>();
    p.matches.nvtx = m.at("nvtx").get<bool>();
    for (const json& w : j.at("warnings")) {
      p.warnings.push_back({w.at("file").get<std::string>(), w.at("text").get<std::string>()});
    }
    for (const auto& group : p.digest.groups) {
      const uint64_t process = std::get<0>(group.worst);
      if (process == 0 || process > p.processes.size()) {
        throw BadPartial{"a finding of a process it does not list"};
      }
    }
    return p;
  } catch (const json::exception& e) {
    return std::unexpected(name + ": a damaged findings partial (" + e.what() + ")");
  } catch (const BadPartial& e) {
    return std::unexpected(name + ": a damaged findings partial (" + e.what + ")");
  }
}

std::expected<FindingsPartial, std::string> FindFindingsPartial(
    const std::vector<std::string>& inputs, const FilterOptions& filters,
    const FindingsOptions& thresholds) {
  if (inputs.empty()) return std::unexpected("no trace file given");
  auto files = ExpandTraceInputs(inputs);
  if (!files) return std::unexpected(files.error());
  // In name order, as combine numbers the processes of every partial: of equal findings the
  // partial keeps the one the whole list would show.
  std::sort(files->begin(), files->end());
  FindingsPartial p;
  p.thresholds = thresholds;
  p.filters = filters;
  FindingsDigest digest;
  for (const std::string& path : *files) {
    const FilterMatches before = p.matches;
    // The warning of --nvtx's left-out work, with the file's others (as RunFindings gives it).
    auto note_left_out = [&] {
      if (std::string w = NvtxLeftOutWarning(path, before, p.matches); !w.empty()) {
        p.warnings.push_back({path, std::move(w)});
      }
    };
    // In windows, filtered there, when they give the exact findings (bounded memory,
    // windowed_findings.h), as RunFindings reads a file.
    auto plan = WindowedFindings::Plan(path, thresholds, filters);
    if (!plan) return std::unexpected(plan.error());
    if (plan->exact()) {
      p.files.push_back(path);
      NoteMatches(plan->matches(), &p.matches);
      if (plan->kept()) {
        p.processes.push_back({path, 0});
        WindowedCrossProcessInputs process_inputs;
        if (auto ran = plan->AddTo(&digest, process_inputs.Hooks()); !ran) {
          return std::unexpected(ran.error());
        }
        CrossProcessInputs inputs;
        process_inputs.Finish(*plan, &inputs);
        p.gpu_use.emplace_back(p.processes.size(), std::move(inputs.gpu_use.front()));
        p.trace_ns += plan->whole().window_ns();
      }
      for (const std::string& w : plan->warnings()) p.warnings.push_back({path, w});
      note_left_out();
      continue;
    }
    std::vector<std::string> warnings;
    auto loaded = LoadTraceFile(path, &warnings);
    if (!loaded) return std::unexpected(loaded.error());
    auto kept = FilterProcesses(std::move(*loaded), filters, &p.matches);
    if (!kept) return std::unexpected(kept.error());
    p.files.push_back(path);
    uint32_t index = 0;
    for (const ProcessTrace& t : *kept) {
      // As RunFindings does it: each process's findings grouped as they are found.
      digest.BeginProcess();
      p.processes.push_back({path, index++});
      StreamFindings(
          t, thresholds, [&](Finding&& f, uint64_t seq) { digest.Add(std::move(f), seq); },
          [&](const Finding& f, uint64_t seq) { return digest.WantsWhole(f, seq); });
      p.trace_ns += t.window_ns();
      CrossProcessInputs inputs;
      inputs.AddWhole(t, &warnings);
      p.gpu_use.emplace_back(p.processes.size(), std::move(inputs.gpu_use.front()));
      if (!inputs.collectives.empty()) {
        p.collectives.emplace_back(p.processes.size(), std::move(inputs.collectives.front()));
      }
    }
    for (std::string& w : warnings) p.warnings.push_back({path, std::move(w)});
    note_left_out();
  }
  p.digest = digest.TakeState();
  return p;
}

std::expected<void, std::string> FindingsPartialsCombiner::Add(FindingsPartial p,
                                                               const std::string& name) {
  if (!partials_.empty()) {
    const FindingsPartial& first = partials_.front();
    if (!SameThresholds(p.thresholds, first.thresholds) || p.filters != first.filters) {
      return std::unexpected(name + ": made with other thresholds, --framework-path or filters " +
                             "(--pid, --tid, --nvtx, --from, --to) than " + first_name_);
    }
  } else {
    first_name_ = name;
  }
  for (const std::string& f : p.files) {
    if (auto it = source_of_.find(f); it != source_of_.end()) {
      return std::unexpected(f + " is in two findings partials: " + it->second + " and " + name);
    }
  }
  for (const std::string& f : p.files) source_of_.emplace(f, name);
  partials_.push_back(std::move(p));
  return {};
}

FindingsPartial FindingsPartialsCombiner::MergeInto(FindingsDigest* digest) {
  FindingsPartial out;
  if (partials_.empty()) return out;
  out.thresholds = partials_.front().thresholds;
  out.filters = partials_.front().filters;
  // Every process in trace path order, then its order in the file: the order `findings`
  // reads files given in name order.
  using Place = std::tuple<std::string, uint32_t, size_t, uint64_t>;  // file, index, partial, #
  std::vector<Place> places;
  for (size_t k = 0; k < partials_.size(); ++k) {
    for (size_t i = 0; i < partials_[k].processes.size(); ++i) {
      const FindingsPartial::Process& p = partials_[k].processes[i];
      places.emplace_back(p.file, p.index, k, i + 1);
    }
  }
  std::sort(places.begin(), places.end());
  std::map<std::pair<size_t, uint64_t>, uint64_t> number;  // (partial, its #) -> the new #
  for (size_t n = 0; n < places.size(); ++n) {
    const auto& [file, index, partial, own] = places[n];
    number[{partial, own}] = n + 1;
    out.processes.push_back({file, index});
  }
  std::vector<std::pair<uint64_t, ProcessCollectives>> collectives;
  std::vector<std::pair<uint64_t, ProcessGpuUse>> gpu_use;
  std::set<uint32_t> pids, tids;
  for (size_t k = 0; k < partials_.size(); ++k) {
    FindingsPartial& p = partials_[k];
    digest->Merge(std::move(p.digest), [&](uint64_t own) { return number.at({k, own}); });
    for (auto& [own, c] : p.collectives) collectives.emplace_back(number.at({k, own}), std::move(c));
    for (auto& [own, u] : p.gpu_use) gpu_use.emplace_back(number.at({k, own}), std::move(u));
    out.files.insert(out.files.end(), p.files.begin(), p.files.end());
    out.trace_ns += p.trace_ns;
    pids.insert(p.matches.pids.begin(), p.matches.pids.end());
    tids.insert(p.matches.tids.begin(), p.matches.tids.end());
    out.matches.nvtx = out.matches.nvtx || p.matches.nvtx;
    out.warnings.insert(out.warnings.end(), p.warnings.begin(), p.warnings.end());
  }
  digest->SetProcesses(places.size());
  std::sort(collectives.begin(), collectives.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  out.collectives = std::move(collectives);
  std::sort(gpu_use.begin(), gpu_use.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  out.gpu_use = std::move(gpu_use);
  std::sort(out.files.begin(), out.files.end());
  out.matches.pids.assign(pids.begin(), pids.end());
  out.matches.tids.assign(tids.begin(), tids.end());
  // The order `findings` prints the traces' warnings in: by file.
  std::stable_sort(out.warnings.begin(), out.warnings.end(),
                   [](const auto& a, const auto& b) { return a.file < b.file; });
  partials_.clear();
  source_of_.clear();
  return out;
}

FindingsPartial FindingsPartialsCombiner::TakePartial() {
  FindingsDigest digest;
  FindingsPartial out = MergeInto(&digest);
  out.digest = digest.TakeState();
  return out;
}

std::expected<FindingsPartialsCombiner::Result, std::string> FindingsPartialsCombiner::Finish(
    std::vector<std::string>* warnings) {
  Result result;
  FindingsPartial all = MergeInto(&result.digest);
  for (const FindingsPartial::Warning& w : all.warnings) warnings->push_back(w.text);
  if (auto matched = CheckFilterMatches(all.filters, all.matches); !matched) {
    return std::unexpected(matched.error());
  }
  result.thresholds = all.thresholds;
  result.trace_ns = all.trace_ns;
  // The cross-process rules, once every process is in, after every process's findings
  // (RunFindings).
  CrossProcessInputs inputs;
  for (auto& [process, c] : all.collectives) inputs.collectives.push_back(std::move(c));
  for (auto& [process, u] : all.gpu_use) inputs.gpu_use.push_back(std::move(u));
  AddCrossProcessFindings(inputs, all.thresholds, &result.digest);
  return result;
}

}  // namespace libprof::analysis
