#include "analysis/metrics/run_diff.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "analysis/model/trace_index.h"  // TraceIndex::CopyName

namespace libprof::analysis {
namespace {

// The spread of a sum of `calls` values that vary with standard deviation `std` each.
double SumSpread(const Stats& s, double per) {
  return s.std() * std::sqrt(static_cast<double>(s.count()) / per);
}

// The spread of a sum of rows that vary independently, each as its calls did (SumSpread): the
// root of the sum of their squared spreads.
double RowsSpread(const std::vector<SummaryRow>& rows, double per) {
  double variance = 0;
  for (const SummaryRow& r : rows) variance += std::pow(SumSpread(r.stats, per), 2);
  return std::sqrt(variance);
}

// Judges a row from its sides (either may be absent).
void JudgeRow(RowDiff& d, double base_per, double next_per, double threshold, double floor,
              size_t* common) {
  const RowSide empty;
  const RowSide& b = d.base ? *d.base : empty;
  const RowSide& n = d.next ? *d.next : empty;
  d.total = Compare(static_cast<double>(b.stats.total()) / base_per,
                    static_cast<double>(n.stats.total()) / next_per, SumSpread(b.stats, base_per),
                    SumSpread(n.stats, next_per), threshold, floor);
  d.calls = Compare(static_cast<double>(b.stats.count()) / base_per,
                    static_cast<double>(n.stats.count()) / next_per, 0, 0, threshold);
  d.mean = Compare(b.stats.mean(), n.stats.mean(), b.stats.std(), n.stats.std(), threshold);
  d.bytes = Compare(static_cast<double>(b.bytes) / base_per,
                    static_cast<double>(n.bytes) / next_per, 0, 0, threshold);
  // One call has no spread to judge its mean by.
  if (b.stats.count() < 2 || n.stats.count() < 2) d.mean.significant = false;
  d.gpu = Compare(static_cast<double>(b.gpu_ns) / base_per,
                  static_cast<double>(n.gpu_ns) / next_per, 0, 0, threshold, floor);
  if (!d.base) {
    d.status = DiffStatus::kAppeared;
  } else if (!d.next) {
    d.status = DiffStatus::kDisappeared;
  } else {
    if (d.base_name.empty()) ++*common;
    d.status = !d.total.significant    ? DiffStatus::kWithinNoise
               : d.total.delta() > 0 ? DiffStatus::kSlower
                                     : DiffStatus::kFaster;
  }
}

// Copies of one direction that moved from one kind of memory to another (pageable to pinned
// host memory, say) have a new name: one row gone, one new. When a direction has exactly one of
// each and they differ in the memory kind of one end, they become one row,
// "[copy pageable → pinned to device]", so that the diff says what the change did to
// these copies (time and bandwidth) rather than listing them apart.
void PairCopiesByDirection(std::map<std::pair<std::string, std::string>, RowDiff>* rows,
                           const std::vector<CopyRow>& base_copies,
                           const std::vector<CopyRow>& next_copies) {
  std::map<std::string, const CopyRow*> shape;  // row name -> its copy kind and memory kinds
  for (const auto* copies : {&base_copies, &next_copies}) {
    for (const CopyRow& c : *copies) {
      shape[TraceIndex::CopyName(c.src_kind, c.dst_kind, c.copy_kind)] = &c;
    }
  }
  // Per direction: the copy rows only in the base run, and only in the new one.
  std::map<CopyKind, std::pair<std::vector<std::string>, std::vector<std::string>>> unmatched;
  for (const auto& [key, d] : *rows) {
    auto it = shape.find(d.name);
    if (d.kind != "memcpy" || !key.first.empty() || it == shape.end()) continue;
    auto& [gone, appeared] = unmatched[it->second->copy_kind];
    if (!d.next) gone.push_back(d.name);
    if (!d.base) appeared.push_back(d.name);
  }
  for (const auto& [kind, names] : unmatched) {
    const auto& [gone, appeared] = names;
    if (gone.size() != 1 || appeared.size() != 1 || kind == CopyKind::kPtoP) continue;
    const CopyRow& b = *shape.at(gone[0]);
    const CopyRow& n = *shape.at(appeared[0]);
    const bool src_moved = b.src_kind != n.src_kind;
    if (src_moved == (b.dst_kind != n.dst_kind)) continue;  // both ends changed: not one move
    auto moved = [](MemoryKind from, MemoryKind to) {
      return from == to ? std::string(ToString(from))
                        : std::string(ToString(from)) + " → " + ToString(to);
    };
    RowDiff paired = std::move(rows->at({"", gone[0]}));
    paired.next = std::move(rows->at({"", appeared[0]}).next);
    paired.base_name = gone[0];
    paired.next_name = appeared[0];
    // Without "memory]" so that the name fits the Name column's narrowest width (34).
    paired.name =
        "[copy " + moved(b.src_kind, n.src_kind) + " to " + moved(b.dst_kind, n.dst_kind) + "]";
    rows->erase({"", gone[0]});
    rows->erase({"", appeared[0]});
    (*rows)[{"", paired.name}] = std::move(paired);
  }
}

// Device rows are matched by name whatever their kind (a memcpy row's name says its kind and
// direction; copies that changed memory kind, see PairCopiesByDirection); host and NVTX rows by
// name (and domain).
std::vector<RowDiff> CompareRows(const std::vector<SummaryRow>& base,
                                 const std::vector<SummaryRow>& next, double base_per,
                                 double next_per, double threshold, double floor,
                                 size_t* common, const std::vector<CopyRow>* base_copies = nullptr,
                                 const std::vector<CopyRow>* next_copies = nullptr) {
  std::map<std::pair<std::string, std::string>, RowDiff> rows;
  auto side = [](const SummaryRow& r) {
    return RowSide{.stats = r.stats, .bytes = r.bytes, .gpu_ns = r.gpu_ns};
  };
  for (const SummaryRow& r : base) {
    RowDiff& d = rows[{r.domain, r.name}];
    d.kind = r.kind;
    d.name = r.name;
    d.domain = r.domain;
    d.has_bytes = r.has_bytes;
    d.base = side(r);
  }
  for (const SummaryRow& r : next) {
    RowDiff& d = rows[{r.domain, r.name}];
    if (!d.base) {
      d.kind = r.kind;
      d.name = r.name;
      d.domain = r.domain;
    }
    d.has_bytes = d.has_bytes || r.has_bytes;
    d.next = side(r);
  }
  if (base_copies != nullptr) PairCopiesByDirection(&rows, *base_copies, *next_copies);
  std::vector<RowDiff> out;
  for (auto& [key, d] : rows) {
    JudgeRow(d, base_per, next_per, threshold, floor, common);
    out.push_back(std::move(d));
  }
  std::stable_sort(out.begin(), out.end(), [](const RowDiff& a, const RowDiff& b) {
    const bool sa = a.status != DiffStatus::kWithinNoise;
    const bool sb = b.status != DiffStatus::kWithinNoise;
    if (sa != sb) return sa;
    const double da = std::fabs(a.total.delta()), db = std::fabs(b.total.delta());
    if (da != db) return da > db;
    // Equal changes (often none): the bigger row first, as summary orders them.
    const double sa_total = std::max(a.total.base, a.total.next);
    const double sb_total = std::max(b.total.base, b.total.next);
    if (sa_total != sb_total) return sa_total > sb_total;
    return std::tie(a.name, a.domain) < std::tie(b.name, b.domain);
  });
  return out;
}

}  // namespace

std::optional<double> Change::relative() const {
  if (base == 0) return std::nullopt;
  return (next - base) / base;
}

Change Compare(double base, double next, double base_spread, double next_spread,
               double threshold, double floor) {
  Change c{.base = base, .next = next};
  c.noise = std::max({threshold * std::fabs(base), base_spread, next_spread, floor});
  c.significant = std::fabs(next - base) > c.noise;
  return c;
}

const char* ToString(DiffStatus status) {
  switch (status) {
    case DiffStatus::kWithinNoise:
      return "~";
    case DiffStatus::kSlower:
      return "slower";
    case DiffStatus::kFaster:
      return "faster";
    case DiffStatus::kAppeared:
      return "new";
    case DiffStatus::kDisappeared:
      return "gone";
  }
  return "?";
}

std::vector<std::pair<std::optional<size_t>, std::optional<size_t>>> PairProcesses(
    const std::vector<std::optional<uint32_t>>& base_ranks,
    const std::vector<std::optional<uint32_t>>& next_ranks, bool* by_rank) {
  auto all_ranked = [](const std::vector<std::optional<uint32_t>>& ranks) {
    return std::all_of(ranks.begin(), ranks.end(),
                       [](const std::optional<uint32_t>& r) { return r.has_value(); });
  };
  std::vector<std::pair<std::optional<size_t>, std::optional<size_t>>> pairs;
  *by_rank = !base_ranks.empty() && !next_ranks.empty() && all_ranked(base_ranks) &&
             all_ranked(next_ranks);
  std::vector<bool> taken(next_ranks.size(), false);
  for (size_t i = 0; i < base_ranks.size(); ++i) {
    std::optional<size_t> partner;
    if (*by_rank) {
      for (size_t j = 0; j < next_ranks.size(); ++j) {
        if (!taken[j] && next_ranks[j] == base_ranks[i]) {
          partner = j;
          break;
        }
      }
    } else if (i < next_ranks.size()) {
      partner = i;
    }
    if (partner) taken[*partner] = true;
    pairs.emplace_back(i, partner);
  }
  for (size_t j = 0; j < next_ranks.size(); ++j) {
    if (!taken[j]) pairs.emplace_back(std::nullopt, j);
  }
  return pairs;
}

RunComparison CompareRuns(const SummaryReport& base, const SummaryReport& next,
                    const RangeInstances* base_iterations, const RangeInstances* next_iterations,
                    const DiffOptions& options) {
  RunComparison diff;
  const double threshold = options.threshold;
  const bool per_iteration = base_iterations != nullptr && next_iterations != nullptr;
  if (per_iteration) {
    diff.base_iterations = *base_iterations;
    diff.next_iterations = *next_iterations;
    diff.base_per = std::max(1.0, base_iterations->PerProcess());
    diff.next_per = std::max(1.0, next_iterations->PerProcess());
  }

  // Processes.
  std::vector<std::optional<uint32_t>> base_ranks, next_ranks;
  for (const Summary& s : base.parts) base_ranks.push_back(s.rank);
  for (const Summary& s : next.parts) next_ranks.push_back(s.rank);
  bool by_rank = false;
  for (const auto& [b, n] : PairProcesses(base_ranks, next_ranks, &by_rank)) {
    ProcessPair p;
    const Summary empty;
    const Summary& sb = b ? base.parts[*b] : empty;
    const Summary& sn = n ? next.parts[*n] : empty;
    if (b) p.base = ProcessLabel{.pid = sb.pid, .rank = sb.rank, .path = sb.path};
    if (n) p.next = ProcessLabel{.pid = sn.pid, .rank = sn.rank, .path = sn.path};
    // As the headline figures below: CUDA API time and GPU busy vary as their rows do together.
    auto figure = [&](uint64_t Summary::*field, std::vector<SummaryRow> Summary::*rows) {
      return Compare(static_cast<double>(sb.*field), static_cast<double>(sn.*field),
                     rows ? RowsSpread(sb.*rows, 1) : 0, rows ? RowsSpread(sn.*rows, 1) : 0,
                     threshold);
    };
    p.trace = figure(&Summary::trace_ns, nullptr);
    p.host_api = figure(&Summary::host_api_ns, &Summary::host);
    p.gpu_busy = figure(&Summary::gpu_busy_ns, &Summary::device);
    diff.pairs.push_back(p);
  }
  diff.paired_by = by_rank ? "rank" : "order";

  // Headline figures.
  double base_rel_spread = 0, next_rel_spread = 0;
  if (per_iteration) {
    const double bm = base_iterations->Median(), nm = next_iterations->Median();
    diff.headline.push_back(
        {"iteration", "Iteration (median)",
         Compare(bm, nm, base_iterations->Spread(), next_iterations->Spread(), threshold)});
    base_rel_spread = bm > 0 ? base_iterations->Spread() / bm : 0;
    next_rel_spread = nm > 0 ? next_iterations->Spread() / nm : 0;
  }
  // CUDA API time and GPU busy are (the union of) their rows: they vary at least as much as
  // their rows do together, so that a change no row stands out with (the context creation moving
  // from one call to another) does not stand out overall either.
  auto headline = [&](const char* id, const char* label, uint64_t b, uint64_t n,
                      const std::vector<SummaryRow>* base_rows,
                      const std::vector<SummaryRow>* next_rows) {
    const double vb = static_cast<double>(b) / diff.base_per;
    const double vn = static_cast<double>(n) / diff.next_per;
    double base_spread = vb * base_rel_spread, next_spread = vn * next_rel_spread;
    if (base_rows != nullptr) {
      base_spread = std::max(base_spread, RowsSpread(*base_rows, diff.base_per));
      next_spread = std::max(next_spread, RowsSpread(*next_rows, diff.next_per));
    }
    diff.headline.push_back({id, label, Compare(vb, vn, base_spread, next_spread, threshold)});
  };
  headline("wall", per_iteration ? "Time in the ranges" : "Wall time", base.total.trace_ns,
           next.total.trace_ns, nullptr, nullptr);
  headline("host_api", "CUDA API time", base.total.host_api_ns, next.total.host_api_ns,
           &base.total.host, &next.total.host);
  headline("gpu_busy", "GPU busy", base.total.gpu_busy_ns, next.total.gpu_busy_ns,
           &base.total.device, &next.total.device);

  diff.floor_ns = options.min_share * static_cast<double>(base.total.trace_ns) / diff.base_per;
  diff.host = CompareRows(base.total.host, next.total.host, diff.base_per, diff.next_per,
                          threshold, diff.floor_ns, &diff.common_names);
  diff.device = CompareRows(base.total.device, next.total.device, diff.base_per, diff.next_per,
                            threshold, diff.floor_ns, &diff.common_names, &base.total.copies,
                            &next.total.copies);
  diff.nvtx = CompareRows(base.total.nvtx, next.total.nvtx, diff.base_per, diff.next_per,
                          threshold, diff.floor_ns, &diff.common_names);
  return diff;
}

}  // namespace libprof::analysis
