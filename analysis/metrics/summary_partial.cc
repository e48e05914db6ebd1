#include "analysis/metrics/summary_partial.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <optional>

#include "analysis/metrics/partial_header.h"

namespace libprof::analysis {
namespace {

using nlohmann::json;

// 128-bit sums of squares as decimal text: JSON numbers stop at 64 bits.
std::string U128ToString(unsigned __int128 v) {
  if (v == 0) return "0";
  std::string s;
  while (v != 0) {
    s.push_back(static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  }
  std::reverse(s.begin(), s.end());
  return s;
}

std::optional<unsigned __int128> U128FromString(const std::string& s) {
  if (s.empty() || s.size() > 39) return std::nullopt;
  unsigned __int128 v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    const unsigned __int128 next = v * 10 + static_cast<unsigned>(c - '0');
    if (next / 10 != v) return std::nullopt;  // overflow
    v = next;
  }
  return v;
}

json StatsJson(const Stats& stats) {
  const Stats::State s = stats.state();
  json buckets = json::array();
  for (const auto& [bucket, count] : s.histogram.Buckets()) {
    buckets.push_back(bucket);
    buckets.push_back(count);
  }
  return json{{"count", s.count}, {"total", s.total},   {"min", s.min},
              {"max", s.max},     {"squares", U128ToString(s.squares)}, {"buckets", buckets}};
}

// Sorted, disjoint intervals as the numbers start, length, gap, length, ... (small, and every
// one non-negative, which the reader checks), each an unsigned LEB128 varint, the bytes in
// base64: the union pieces are nearly all of a partial, and as JSON numbers they took 2.3 times
// the bytes and most of the time of writing and reading one (bench/README.md).
constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string Base64(const std::string& bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t v = static_cast<uint8_t>(bytes[i]) << 16 |
                       static_cast<uint8_t>(bytes[i + 1]) << 8 | static_cast<uint8_t>(bytes[i + 2]);
    for (int shift : {18, 12, 6, 0}) out.push_back(kBase64[(v >> shift) & 63]);
  }
  if (i < bytes.size()) {
    uint32_t v = static_cast<uint8_t>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= static_cast<uint8_t>(bytes[i + 1]) << 8;
    out.push_back(kBase64[(v >> 18) & 63]);
    out.push_back(kBase64[(v >> 12) & 63]);
    out.push_back(i + 1 < bytes.size() ? kBase64[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

std::optional<std::string> FromBase64(const std::string& text) {
  static const auto kValue = [] {
    std::array<int8_t, 256> table;
    table.fill(-1);
    for (int i = 0; i < 64; ++i) table[static_cast<uint8_t>(kBase64[i])] = static_cast<int8_t>(i);
    return table;
  }();
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    const size_t pad = i + 4 == text.size() ? (text[i + 3] == '=') + (text[i + 2] == '=') : 0;
    uint32_t v = 0;
    for (size_t k = 0; k < 4; ++k) {
      const int8_t d = k >= 4 - pad ? 0 : kValue[static_cast<uint8_t>(text[i + k])];
      if (d < 0) return std::nullopt;
      v = v << 6 | static_cast<uint32_t>(d);
    }
    out.push_back(static_cast<char>(v >> 16));
    if (pad < 2) out.push_back(static_cast<char>(v >> 8 & 0xFF));
    if (pad < 1) out.push_back(static_cast<char>(v & 0xFF));
  }
  return out;
}

void PutVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

json IntervalsJson(const std::vector<Interval>& list) {
  std::string bytes;
  bytes.reserve(list.size() * 6);
  uint64_t last_end = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    PutVarint(i == 0 ? list[i].start_ns : list[i].start_ns - last_end, &bytes);
    PutVarint(list[i].end_ns - list[i].start_ns, &bytes);
    last_end = list[i].end_ns;
  }
  return Base64(bytes);
}

json RowJson(const SummaryRow& r) {
  return json{{"name", r.name},           {"kind", r.kind},   {"domain", r.domain},
              {"has_bytes", r.has_bytes}, {"bytes", r.bytes}, {"gpu_ns", r.gpu_ns},
              {"stats", StatsJson(r.stats)}};
}

json RowsJson(const std::vector<SummaryRow>& rows) {
  json out = json::array();
  for (const SummaryRow& r : rows) out.push_back(RowJson(r));
  return out;
}

json ListsJson(const std::optional<TotalIntervals>& lists) {
  if (!lists) return nullptr;
  return json{{"windows", IntervalsJson(lists->windows)},
              {"host", IntervalsJson(lists->host)},
              {"device", IntervalsJson(lists->device)}};
}

json FindingsJson(const std::optional<ProcessFindings>& f) {
  if (!f) return nullptr;
  return json{{"host_lost_ns", f->host_lost_ns},
              {"findings", f->findings},
              {"top_rule", f->top_rule},
              {"top_in_start_up", f->top_in_start_up},
              {"top_one_time", f->top_one_time},
              {"top_api", f->top_api},
              {"top_waiting_for", f->top_waiting_for},
              {"top_time_kind", f->top_time_kind},
              {"top_time_lost_ns", f->top_time_lost_ns},
              {"top_count", f->top_count}};
}

json ProcessJson(const Summary& s) {
  json copies = json::array();
  for (const CopyRow& c : s.copies) {
    copies.push_back(json{{"copy_kind", static_cast<int>(c.copy_kind)},
                          {"src_kind", static_cast<int>(c.src_kind)},
                          {"dst_kind", static_cast<int>(c.dst_kind)},
                          {"count", c.count},
                          {"bytes", c.bytes},
                          {"total_ns", c.total_ns}});
  }
  return json{{"path", s.path},
              {"pid", s.pid},
              {"hostname", s.hostname},
              {"gpus", s.gpus},
              {"span", json::array({s.span.start_ns, s.span.end_ns})},
              {"rank", s.rank ? json(*s.rank) : json(nullptr)},
              {"trace_ns", s.trace_ns},
              {"events", s.events},
              {"host_api_ns", s.host_api_ns},
              {"gpu_busy_ns", s.gpu_busy_ns},
              {"dropped_records", s.dropped_records},
              {"repaired_ends", s.repaired_ends},
              {"hidden_calls", s.hidden_calls},
              {"hidden_ns", s.hidden_ns},
              {"hidden_nested_calls", s.hidden_nested_calls},
              {"host", RowsJson(s.host)},
              {"device", RowsJson(s.device)},
              {"copies", copies},
              {"nvtx", RowsJson(s.nvtx)},
              {"findings", FindingsJson(s.findings)}};
}

// Thrown inside the parser only, for a value that has the right JSON type but cannot be.
struct BadValue {
  std::string what;
};

Stats ParseStats(const json& j) {
  Stats::State s;
  s.count = j.at("count").get<uint64_t>();
  s.total = j.at("total").get<uint64_t>();
  s.min = j.at("min").get<uint64_t>();
  s.max = j.at("max").get<uint64_t>();
  auto squares = U128FromString(j.at("squares").get<std::string>());
  if (!squares) throw BadValue{"a sum of squares is not a number"};
  s.squares = *squares;
  const json& buckets = j.at("buckets");
  if (!buckets.is_array() || buckets.size() % 2 != 0) throw BadValue{"histogram buckets unpaired"};
  for (size_t i = 0; i < buckets.size(); i += 2) {
    const uint64_t bucket = buckets[i].get<uint64_t>();
    if (bucket > UINT32_MAX || !s.histogram.AddBucket(static_cast<uint32_t>(bucket),
                                                      buckets[i + 1].get<uint64_t>())) {
      throw BadValue{"a histogram bucket out of range"};
    }
  }
  auto stats = Stats::FromState(std::move(s));
  if (!stats) throw BadValue{"statistics that disagree with their histogram"};
  return *stats;
}

std::vector<Interval> ParseIntervals(const json& j) {
  auto bytes = FromBase64(j.get<std::string>());
  if (!bytes) throw BadValue{"an interval list that is not base64"};
  std::vector<uint64_t> numbers;
  uint64_t v = 0;
  int shift = 0;
  for (char c : *bytes) {
    const auto byte = static_cast<uint8_t>(c);
    if (shift > 63 || (shift == 63 && (byte & 0x7E) != 0)) throw BadValue{"a varint too long"};
    v |= static_cast<uint64_t>(byte & 0x7F) << shift;
    if (byte & 0x80) {
      shift += 7;
      continue;
    }
    numbers.push_back(v);
    v = 0;
    shift = 0;
  }
  if (shift != 0 || numbers.size() % 2 != 0) throw BadValue{"an interval list cut short"};
  std::vector<Interval> out;
  out.reserve(numbers.size() / 2);
  uint64_t last_end = 0;
  for (size_t i = 0; i < numbers.size(); i += 2) {
    const uint64_t gap = numbers[i], length = numbers[i + 1];
    const uint64_t start = last_end + gap;
    if (start < last_end || start + length < start) {
      throw BadValue{"an interval list that is not sorted and disjoint"};
    }
    out.push_back(Interval{start, start + length});
    last_end = start + length;
  }
  return out;
}

std::vector<SummaryRow> ParseRows(const json& j) {
  std::vector<SummaryRow> rows;
  for (const json& r : j) {
    SummaryRow row;
    row.name = r.at("name").get<std::string>();
    row.kind = r.at("kind").get<std::string>();
    row.domain = r.at("domain").get<std::string>();
    row.has_bytes = r.at("has_bytes").get<bool>();
    row.bytes = r.at("bytes").get<uint64_t>();
    row.gpu_ns = r.at("gpu_ns").get<uint64_t>();
    row.stats = ParseStats(r.at("stats"));
    rows.push_back(std::move(row));
  }
  return rows;
}

template <typename Enum>
Enum ParseEnum(const json& j, int max) {
  const int v = j.get<int>();
  if (v < 0 || v > max) throw BadValue{"an enumeration value out of range"};
  return static_cast<Enum>(v);
}

std::optional<TotalIntervals> ParseLists(const json& j) {
  if (j.is_null()) return std::nullopt;
  return TotalIntervals{ParseIntervals(j.at("windows")), ParseIntervals(j.at("host")),
                        ParseIntervals(j.at("device"))};
}

std::optional<ProcessFindings> ParseFindings(const json& j) {
  if (j.is_null()) return std::nullopt;
  ProcessFindings f;
  f.host_lost_ns = j.at("host_lost_ns").get<uint64_t>();
  f.findings = j.at("findings").get<uint64_t>();
  f.top_rule = j.at("top_rule").get<std::string>();
  f.top_in_start_up = j.at("top_in_start_up").get<bool>();
  f.top_one_time = j.at("top_one_time").get<std::string>();
  f.top_api = j.at("top_api").get<std::string>();
  f.top_waiting_for = j.at("top_waiting_for").get<std::string>();
  f.top_time_kind = j.at("top_time_kind").get<std::string>();
  f.top_time_lost_ns = j.at("top_time_lost_ns").get<uint64_t>();
  f.top_count = j.at("top_count").get<uint64_t>();
  return f;
}

void ParseProcess(const json& j, Summary* s) {
  s->path = j.at("path").get<std::string>();
  s->pid = j.at("pid").get<uint32_t>();
  s->hostname = j.at("hostname").get<std::string>();
  s->gpus = j.at("gpus").get<std::vector<std::string>>();
  s->span = {j.at("span").at(0).get<uint64_t>(), j.at("span").at(1).get<uint64_t>()};
  if (!j.at("rank").is_null()) s->rank = j.at("rank").get<uint32_t>();
  s->trace_ns = j.at("trace_ns").get<uint64_t>();
  s->events = j.at("events").get<uint64_t>();
  s->host_api_ns = j.at("host_api_ns").get<uint64_t>();
  s->gpu_busy_ns = j.at("gpu_busy_ns").get<uint64_t>();
  s->dropped_records = j.at("dropped_records").get<uint64_t>();
  s->repaired_ends = j.at("repaired_ends").get<uint64_t>();
  s->hidden_calls = j.at("hidden_calls").get<uint64_t>();
  s->hidden_ns = j.at("hidden_ns").get<uint64_t>();
  s->hidden_nested_calls = j.at("hidden_nested_calls").get<uint64_t>();
  s->host = ParseRows(j.at("host"));
  s->device = ParseRows(j.at("device"));
  s->nvtx = ParseRows(j.at("nvtx"));
  s->findings = ParseFindings(j.at("findings"));
  for (const json& c : j.at("copies")) {
    s->copies.push_back(CopyRow{.copy_kind = ParseEnum<CopyKind>(c.at("copy_kind"), 10),
                                .src_kind = ParseEnum<MemoryKind>(c.at("src_kind"), 7),
                                .dst_kind = ParseEnum<MemoryKind>(c.at("dst_kind"), 7),
                                .count = c.at("count").get<uint64_t>(),
                                .bytes = c.at("bytes").get<uint64_t>(),
                                .total_ns = c.at("total_ns").get<uint64_t>()});
  }
}

void ParseState(const json& j, CombinedState* state) {
  for (const json& process : j.at("processes")) {
    Summary s;
    ParseProcess(process, &s);
    state->parts.push_back(std::move(s));
  }
  const json& clock = j.at("clock");
  state->hostname = clock.at("hostname").get<std::string>();
  state->timebase = ParseEnum<Timebase>(clock.at("timebase"), 2);
  state->same_clock = clock.at("same_clock").get<bool>();
  state->on_shared_clock = ParseLists(j.at("shared_clock"));
  if (!j.at("uniform_wall_offset_ns").is_null()) {
    state->uniform_wall_offset = j.at("uniform_wall_offset_ns").get<int64_t>();
  }
  state->on_wall_clock = ParseLists(j.at("wall_clock"));
  // What SummaryCombiner keeps when it does not know the clock (as for every partial).
  const bool none = state->parts.empty();
  const bool consistent =
      none ? !state->on_shared_clock && !state->uniform_wall_offset && !state->on_wall_clock
           : state->same_clock == state->on_shared_clock.has_value() &&
                 state->uniform_wall_offset.has_value() != state->on_wall_clock.has_value() &&
                 (!state->uniform_wall_offset || state->on_shared_clock);
  if (!consistent) throw BadValue{"union lists that do not fit its clock"};
}

}  // namespace

std::string SummaryPartialJson(const SummaryPartial& p) {
  json processes = json::array();
  for (const Summary& part : p.state.parts) processes.push_back(ProcessJson(part));
  const CombinedState& st = p.state;
  json warnings = json::array();
  for (const SummaryPartial::Warning& w : p.warnings) {
    warnings.push_back(json{{"file", w.file}, {"text", w.text}});
  }
  json out{{"format", kSummaryPartialFormat},
           {"version", kSummaryPartialVersion},
           {"options",
            {{"raw", p.options.raw},
             {"by_caller", p.options.by_caller},
             {"findings", p.options.findings}}},
           {"filters", FiltersJson(p.filters)},
           {"files", p.files},
           {"pids_seen", p.pids_seen},
           {"threads_seen", p.threads_seen},
           {"warnings", warnings},
           {"processes", processes},
           {"clock", {{"hostname", st.hostname},
                      {"timebase", static_cast<int>(st.timebase)},
                      {"same_clock", st.same_clock}}},
           {"shared_clock", ListsJson(st.on_shared_clock)},
           {"uniform_wall_offset_ns",
            st.uniform_wall_offset ? json(*st.uniform_wall_offset) : json(nullptr)},
           {"wall_clock", ListsJson(st.on_wall_clock)}};
  return out.dump() + "\n";
}

std::expected<SummaryPartial, std::string> ParseSummaryPartial(std::string_view text,
                                                               const std::string& name) {
  auto parsed = ParsePartialHeader(text, name, kSummaryPartialFormat, kSummaryPartialVersion,
                                   "a partial summary", "summary");
  if (!parsed) return std::unexpected(parsed.error());
  const json& j = *parsed;
  try {
    SummaryPartial p;
    p.options.raw = j.at("options").at("raw").get<bool>();
    p.options.by_caller = j.at("options").at("by_caller").get<bool>();
    p.options.findings = j.at("options").at("findings").get<bool>();
    p.filters = ParseFilters(j.at("filters"));
    p.files = j.at("files").get<std::vector<std::string>>();
    p.pids_seen = j.at("pids_seen").get<std::vector<uint32_t>>();
    p.threads_seen = j.at("threads_seen").get<std::vector<uint32_t>>();
    for (const json& w : j.at("warnings")) {
      p.warnings.push_back({w.at("file").get<std::string>(), w.at("text").get<std::string>()});
    }
    ParseState(j, &p.state);
    return p;
  } catch (const json::exception& e) {
    return std::unexpected(name + ": a damaged partial summary (" + e.what() + ")");
  } catch (const BadValue& e) {
    return std::unexpected(name + ": a damaged partial summary (" + e.what + ")");
  }
}

std::expected<void, std::string> PartialsCombiner::Add(SummaryPartial p, const std::string& name) {
  if (!any_) {
    meta_.options = p.options;
    meta_.filters = p.filters;
  } else if (p.options.raw != meta_.options.raw ||
             p.options.by_caller != meta_.options.by_caller ||
             p.options.findings != meta_.options.findings ||
             p.filters != meta_.filters) {
    return std::unexpected(name + ": made with other options or filters (--raw, --by, --findings, " +
                           "--pid, --tid, --nvtx, --from, --to) than " + first_name_);
  }
  for (const std::string& f : p.files) {
    if (auto it = source_of_.find(f); it != source_of_.end()) {
      return std::unexpected(f + " is in two partial summaries: " + it->second + " and " + name);
    }
  }
  if (!any_) first_name_ = name;
  any_ = true;
  for (std::string& f : p.files) {
    source_of_.emplace(f, name);
    meta_.files.push_back(std::move(f));
  }
  meta_.pids_seen.insert(meta_.pids_seen.end(), p.pids_seen.begin(), p.pids_seen.end());
  meta_.threads_seen.insert(meta_.threads_seen.end(), p.threads_seen.begin(), p.threads_seen.end());
  meta_.warnings.insert(meta_.warnings.end(), p.warnings.begin(), p.warnings.end());
  combiner_.Merge(std::move(p.state));
  return {};
}

SummaryPartial PartialsCombiner::TakePartial() {
  SummaryPartial out = std::move(meta_);
  out.state = combiner_.TakeState();
  *this = PartialsCombiner();
  return out;
}

std::expected<SummaryReport, std::string> PartialsCombiner::Finish(
    std::vector<std::string>* warnings) {
  // The order summary prints files given in name order (a shell glob): by trace path.
  std::stable_sort(meta_.warnings.begin(), meta_.warnings.end(),
                   [](const auto& a, const auto& b) { return a.file < b.file; });
  for (const SummaryPartial::Warning& w : meta_.warnings) warnings->push_back(w.text);
  auto matched = CheckFiltersMatched(meta_.filters, meta_.pids_seen, meta_.threads_seen,
                                     combiner_.parts() > 0);
  if (!matched) return std::unexpected(matched.error());
  combiner_.SortParts();
  return combiner_.Finish();
}

}  // namespace libprof::analysis
