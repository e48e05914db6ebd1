#include "analysis/reports/html_timeline.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "analysis/metrics/streams.h"
#include "analysis/model/api_names.h"
#include "analysis/model/kernel_names.h"
#include "analysis/model/units.h"
#include "analysis/reports/html_writer.h"

namespace libprof::analysis {
namespace {

// Layout, in pixels. Rows are short so that a process with a dozen streams fits a screen.
constexpr double kNvtxRowHeight = 11;
constexpr double kApiRowHeight = 16;
constexpr double kStreamRowHeight = 18;
constexpr double kLaneGap = 5;
constexpr double kTop = 18;  // room for a detail view's label over the lanes
// A one-time band this wide or wider is named over the lanes (narrower ones by hover only).
constexpr double kOneTimeLabelPx = 110;
constexpr double kAxisHeight = 42;
// NVTX nesting drawn as rows; deeper ranges share the last row.
constexpr uint32_t kMaxNvtxRows = 3;
// A row with at most this many slices in view draws each one; a denser row is drawn per pixel
// column (2,000 slices of 120 bytes would be 240 KB per lane and window).
constexpr size_t kDetailLimit = 400;
// In a dense row, slices at least this wide are still drawn one by one, at most kWideLimit.
constexpr double kWidePixels = 3;
constexpr size_t kWideLimit = 150;
// Heights a dense column's bar can take: eighths of the row (finer adds path segments, not
// information a reader can see in a 17-pixel row).
constexpr int kLevels = 8;
// Slices at least this wide carry their name (cut to fit, at about 6 pixels a character).
constexpr double kLabelPixels = 40;
constexpr double kPixelsPerChar = 6.2;
// Names in hover titles: long enough for a template kernel's arguments, short enough that a few
// hundred titles per lane stay small.
constexpr size_t kTitleChars = 120;

enum Category : uint8_t {
  kApi, kNvtx, kKernel, kHtoD, kDtoH, kDtoD, kOtherCopy, kMemset, kGraph
};
static_assert(kGraph + 1 == HtmlTimeline::kCategories);

std::string Dur(uint64_t ns) { return FormatDuration(static_cast<double>(ns)); }

std::string At(uint64_t t_ns, uint64_t origin_ns) {
  return FormatDuration(static_cast<double>(t_ns > origin_ns ? t_ns - origin_ns : 0));
}

std::string When(uint64_t start_ns, uint64_t end_ns, uint64_t origin_ns) {
  return Dur(end_ns - start_ns) + " at " + At(start_ns, origin_ns);
}

const char* CategoryClass(uint8_t c) {
  static constexpr std::array<const char*, 9> kClasses = {"api", "nvtx", "kernel", "htod", "dtoh",
                                                          "dtod", "copy", "memset", "graph"};
  return c < kClasses.size() ? kClasses[c] : "api";
}

Category OpCategory(const TraceIndex& index, const DeviceOp& op) {
  switch (op.kind) {
    case DeviceOpKind::kKernel:
      return kKernel;
    case DeviceOpKind::kMemset:
      return kMemset;
    case DeviceOpKind::kGraph:
      return kGraph;
    case DeviceOpKind::kMemcpy:
      break;
  }
  switch (DirectionOf(index.records().memcpys[op.record].copy_kind)) {
    case CopyDirection::kHtoD:
      return kHtoD;
    case CopyDirection::kDtoH:
      return kDtoH;
    case CopyDirection::kDtoD:
      return kDtoD;
    case CopyDirection::kOther:
      break;
  }
  return kOtherCopy;
}

// A slice's span in pixels, clipped to the plot: (x, width), at least 0.6 wide.
std::pair<double, double> Span(const TimeScale& scale, uint64_t start_ns, uint64_t end_ns) {
  const double x1 = std::max(scale.x0, scale.X(start_ns));
  const double x2 = std::min(scale.x0 + scale.width, scale.X(end_ns));
  return {x1, std::max(x2 - x1, 0.6)};
}

}  // namespace

// One row (a thread's API calls, an NVTX nesting level, a stream) over every view: what each
// view will draw of it, fed the row's slices in order (by start, then the longer first).
struct HtmlTimelineBuilder::RowState {
  struct Wide {
    uint64_t duration_ns;
    size_t order;  // among the slices in view
    HtmlTimeline::Slice slice;
  };
  struct PerView {
    HtmlTimeline::RowPicture picture;
    std::vector<Wide> wide;  // a heap whose front is the one to drop first
  };
  explicit RowState(double h) : height(h) {}

  // A slice of this row; `title` and `name` make its hover title and its name, asked only for
  // the views that may draw it one by one.
  template <typename Title, typename Name>
  void Feed(const std::vector<TimeScale>& scales, const std::vector<size_t>& which,
            uint64_t start_ns, uint64_t end_ns, uint8_t category, const Title& title,
            const Name& name) {
    if (views.size() < scales.size()) views.resize(scales.size());
    std::optional<std::string> title_text;  // the same in every view (one origin)
    for (size_t v : which) {
      const TimeScale& scale = scales[v];
      if (start_ns >= scale.t1_ns) continue;
      if (!(end_ns > scale.t0_ns || (end_ns == start_ns && start_ns >= scale.t0_ns))) continue;
      PerView& view = views[v];
      HtmlTimeline::RowPicture& p = view.picture;
      const size_t order = p.visible++;
      const auto make = [&](double x, double w) {
        HtmlTimeline::Slice s{.x = x, .w = w, .category = category};
        if (!title_text) title_text = title(scale.origin_ns);
        s.title = *title_text;
        if (w >= kLabelPixels && height >= kApiRowHeight) {
          const size_t chars = static_cast<size_t>((w - 6) / kPixelsPerChar);
          // Abbreviated as every table abbreviates names (kernel_names.h).
          s.label = AbbreviateName(name(), std::max<size_t>(chars, 2));
        }
        return s;
      };
      const auto [x, w] = Span(scale, start_ns, end_ns);
      if (p.visible <= kDetailLimit) {
        p.slices.push_back(make(x, w));
      } else if (p.visible == kDetailLimit + 1) {
        std::vector<HtmlTimeline::Slice>().swap(p.slices);  // dense from now on
      }
      auto& bins = p.bins[category];
      if (!bins) {
        bins = std::make_unique<TimeBins>(scale.t0_ns, scale.t1_ns,
                                          std::max<size_t>(1, static_cast<size_t>(scale.width)));
      }
      bins->Add(start_ns, end_ns);
      // The widest kWideLimit slices, ties to the earlier: the heap's front is the narrowest
      // kept, the later of equals.
      if (w < kWidePixels) continue;
      const uint64_t duration = end_ns - start_ns;
      const auto better = [](const Wide& a, const Wide& b) {
        return a.duration_ns != b.duration_ns ? a.duration_ns > b.duration_ns : a.order < b.order;
      };
      if (view.wide.size() == kWideLimit) {
        if (duration <= view.wide.front().duration_ns) continue;
        std::pop_heap(view.wide.begin(), view.wide.end(), better);
        view.wide.pop_back();
      }
      view.wide.push_back({duration, order, make(x, w)});
      std::push_heap(view.wide.begin(), view.wide.end(), better);
    }
  }

  // What the views draw, the row's state given up.
  HtmlTimeline::Row Finish(size_t view_count) {
    views.resize(view_count);
    HtmlTimeline::Row row{.height = height};
    for (PerView& v : views) {
      std::sort(v.wide.begin(), v.wide.end(), [](const Wide& a, const Wide& b) {
        return a.duration_ns != b.duration_ns ? a.duration_ns > b.duration_ns : a.order < b.order;
      });
      for (Wide& w : v.wide) v.picture.wide.push_back(std::move(w.slice));
      row.views.push_back(std::move(v.picture));
    }
    return row;
  }

  double height;
  std::vector<PerView> views;
};

HtmlTimelineBuilder::HtmlTimelineBuilder(bool raw, uint32_t pid) : raw_(raw), pid_(pid) {}
HtmlTimelineBuilder::~HtmlTimelineBuilder() = default;
HtmlTimelineBuilder::HtmlTimelineBuilder(HtmlTimelineBuilder&&) noexcept = default;

size_t HtmlTimelineBuilder::AddView(const TimeScale& scale) {
  scales_.push_back(scale);
  return scales_.size() - 1;
}

void HtmlTimelineBuilder::Add(const TraceIndex& index, const std::vector<size_t>& views,
                              bool lanes) {
  const TraceRecords& r = index.records();
  // Each thread's calls by start (the longer first), as the row draws them.
  struct Call {
    uint64_t start_ns, end_ns;
    uint32_t ref;
  };
  std::map<uint32_t, std::vector<Call>> calls;
  for (uint32_t i = 0; i < r.api_calls.size(); ++i) {
    const ApiCall& c = r.api_calls[i];
    // The calls `profview summary` counts (nested, noisy and internal ones only with --raw).
    if (!raw_ && (index.IsNested(i) || IsNoiseApi(index.ApiName(c)) ||
                  c.domain == ApiDomain::kInternalLaunch)) {
      continue;
    }
    calls[c.thread_id].push_back({c.start_ns, std::max(c.start_ns, c.end_ns), i});
  }
  for (auto& [tid, list] : calls) {
    std::sort(list.begin(), list.end(), [](const Call& a, const Call& b) {
      return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns > b.end_ns;
    });
    std::unique_ptr<RowState>& row = api_rows_[tid];
    if (!row) row = std::make_unique<RowState>(kApiRowHeight);
    for (const Call& call : list) {
      const ApiCall& c = r.api_calls[call.ref];
      row->Feed(
          scales_, views, call.start_ns, call.end_ns, kApi,
          [&](uint64_t origin) {
            return index.ApiName(c) + ": " + When(call.start_ns, call.end_ns, origin) +
                   " (corr " + std::to_string(c.correlation_id) + ")";
          },
          [&]() -> const std::string& { return index.ApiName(c); });
    }
  }
  const std::vector<DeviceOp>& ops = index.device_ops();  // sorted by start
  for (uint32_t i = 0; i < ops.size(); ++i) {
    const DeviceOp& op = ops[i];
    std::unique_ptr<RowState>& row = stream_rows_[{op.device_id, op.stream_id}];
    if (!row) row = std::make_unique<RowState>(kStreamRowHeight);
    const uint64_t end = std::max(op.start_ns, op.end_ns);
    row->Feed(
        scales_, views, op.start_ns, end, OpCategory(index, op),
        [&](uint64_t origin) {
          std::string title = AbbreviateName(index.OpName(op), kTitleChars) + ": " +
                              When(op.start_ns, end, origin) + " (corr " +
                              std::to_string(op.correlation_id) + ")";
          if (op.kind == DeviceOpKind::kMemcpy || op.kind == DeviceOpKind::kMemset) {
            title += ", " + FormatBytes(op.bytes);
            const std::string bandwidth = FormatBandwidth(op.bytes, op.duration());
            if (!bandwidth.empty()) title += ", " + bandwidth;
          }
          return title;
        },
        [&]() -> const std::string& { return index.OpName(op); });
  }
  if (!lanes) return;
  for (const NvtxEvent& e : r.nvtx_events) {
    if (e.kind != NvtxKind::kMark) nvtx_threads_.insert(e.thread_id);
  }
}

namespace {

// TraceIndex::NvtxName without an index: "domain: message", or the message in the default domain.
std::string NvtxRangeName(const ProcessTrace& trace, const NvtxEvent& e) {
  const std::string& message = trace.Str(e.message_id);
  if (e.domain_id == 0) return message;
  const NvtxDomain* domain = nullptr;  // the last definition wins, as TraceIndex's map
  for (const NvtxDomain& d : trace.records.nvtx_domains) {
    if (d.id == e.domain_id) domain = &d;
  }
  if (domain == nullptr || trace.Str(domain->name_id).empty()) return message;
  return trace.Str(domain->name_id) + ": " + message;
}

}  // namespace

void HtmlTimelineBuilder::NoteLateNvtx(const ProcessTrace& window, const NvtxEvent& e) {
  const NvtxRange range{e.start_ns, std::max(e.start_ns, e.end_ns), e.thread_id,
                        NvtxRangeName(window, e)};
  late_nvtx_.insert(std::upper_bound(late_nvtx_.begin(), late_nvtx_.end(), range,
                                     [](const NvtxRange& a, const NvtxRange& b) {
                                       return a.start_ns < b.start_ns;
                                     }),
                    range);
}

void HtmlTimelineBuilder::AddNvtx(const ProcessTrace& window, size_t first, uint64_t from_ns,
                                  uint64_t to_ns) {
  std::vector<size_t> every(scales_.size());
  for (size_t v = 0; v < every.size(); ++v) every[v] = v;
  std::map<uint32_t, std::vector<NvtxRange>> by_thread;
  const std::vector<NvtxEvent>& events = window.records.nvtx_events;
  for (size_t i = first; i < events.size(); ++i) {
    const NvtxEvent& e = events[i];
    if (e.kind == NvtxKind::kMark || e.start_ns < from_ns) continue;  // late: drawn in its window
    by_thread[e.thread_id].push_back(
        {e.start_ns, std::max(e.start_ns, e.end_ns), e.thread_id, NvtxRangeName(window, e)});
  }
  // The late ranges that start in the window, and any that start before it and were not drawn
  // (in a stretch between two windows: windows begin at their first record, not at the cut).
  for (; late_drawn_ < late_nvtx_.size() && late_nvtx_[late_drawn_].start_ns < to_ns;
       ++late_drawn_) {
    by_thread[late_nvtx_[late_drawn_].thread_id].push_back(late_nvtx_[late_drawn_]);
  }
  for (auto& [tid, nvtx] : by_thread) {
    std::sort(nvtx.begin(), nvtx.end(), [](const NvtxRange& a, const NvtxRange& b) {
      return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns > b.end_ns;
    });
    // Depth: how many earlier ranges of the thread are still open (a stack of their ends).
    NvtxThread& thread = nvtx_[tid];
    for (const NvtxRange& range : nvtx) {
      while (!thread.open.empty() && thread.open.back() <= range.start_ns) thread.open.pop_back();
      const size_t depth = std::min<size_t>(thread.open.size(), kMaxNvtxRows - 1);
      thread.open.push_back(range.end_ns);
      while (thread.rows.size() <= depth) thread.rows.emplace_back(kNvtxRowHeight);
      thread.rows[depth].Feed(
          scales_, every, range.start_ns, range.end_ns, kNvtx,
          [&](uint64_t origin) {
            return "NVTX " + range.name + ": " + When(range.start_ns, range.end_ns, origin);
          },
          [&]() -> const std::string& { return range.name; });
    }
  }
}

HtmlTimeline HtmlTimelineBuilder::Finish(
    const std::function<StreamClass(uint32_t stream_id)>& stream_class,
    HtmlTimeline::Marks marks) {
  HtmlTimeline timeline;
  timeline.scales_ = scales_;
  timeline.marks_ = std::move(marks);
  // Threads that call CUDA (the main thread first, as in the export, timeline_export.cc), then
  // the GPU streams they feed, then threads with NVTX ranges alone (a runtime's compile or
  // worker threads: JAX's XLA pool had 20), so that those never push the streams off the page.
  std::vector<uint32_t> calling, nvtx_only;
  for (const auto& [tid, row] : api_rows_) calling.push_back(tid);
  for (const auto& [tid, thread] : nvtx_) {
    if (!thread.rows.empty() && !api_rows_.contains(tid)) nvtx_only.push_back(tid);
  }
  // (Both by thread id already: the maps are ordered.)
  std::stable_partition(calling.begin(), calling.end(), [&](uint32_t t) { return t == pid_; });
  std::stable_partition(nvtx_only.begin(), nvtx_only.end(), [&](uint32_t t) { return t == pid_; });
  const auto add_thread = [&](uint32_t tid) {
    HtmlTimeline::Lane lane;
    lane.thread_id = tid;
    lane.label = (tid == pid_ ? "main thread " : "thread ") + std::to_string(tid);
    if (auto nvtx = nvtx_.find(tid); nvtx != nvtx_.end()) {
      for (RowState& row : nvtx->second.rows) lane.rows.push_back(row.Finish(scales_.size()));
    }
    auto api = api_rows_.find(tid);
    lane.rows.push_back(api != api_rows_.end() ? api->second->Finish(scales_.size())
                                               : RowState(kApiRowHeight).Finish(scales_.size()));
    timeline.lanes_.push_back(std::move(lane));
  };
  for (uint32_t tid : calling) add_thread(tid);
  for (auto& [key, row] : stream_rows_) {
    HtmlTimeline::Lane lane;
    lane.thread = false;
    lane.device_id = key.first;
    lane.stream_id = key.second;
    lane.label = "GPU " + std::to_string(key.first) + " stream " + std::to_string(key.second) +
                 " (" + ToString(stream_class(key.second)) + ")";
    lane.rows.push_back(row->Finish(scales_.size()));
    timeline.lanes_.push_back(std::move(lane));
  }
  for (uint32_t tid : nvtx_only) add_thread(tid);
  api_rows_.clear();
  stream_rows_.clear();
  nvtx_.clear();
  return timeline;
}

std::string HtmlTimeline::RowSvg(const RowPicture& row, double height, const TimeScale& scale,
                                 double y) const {
  if (row.visible == 0) return "";
  const auto slice = [&](const Slice& s) {
    std::string out = "<rect class=\"" + std::string(CategoryClass(s.category)) + "\" x=\"" +
                      Coord(s.x) + "\" y=\"" + Coord(y) + "\" width=\"" + Coord(s.w) +
                      "\" height=\"" + Coord(height - 1) + "\"><title>" + HtmlEscape(s.title) +
                      "</title></rect>";
    if (!s.label.empty()) {
      out += "<text class=\"slice-label " + std::string(CategoryClass(s.category)) +
             "-label\" x=\"" + Coord(s.x + 3) + "\" y=\"" + Coord(y + height / 2 + 3.5) +
             "\">" + HtmlEscape(s.label) + "</text>";
    }
    return out;
  };
  std::string svg;
  if (row.visible <= kDetailLimit) {
    for (const Slice& s : row.slices) svg += slice(s);
    return svg;
  }
  // Dense: per pixel column, the share of it the row's slices covered, as a bar from the row's
  // bottom (an eighth of the row at least, so that any work stays visible) in the colour of the
  // kind that covered most. Runs of equal columns become one path segment.
  const size_t columns = std::max<size_t>(1, static_cast<size_t>(scale.width));
  std::array<std::string, kCategories> paths;
  const double column_px = scale.width / static_cast<double>(columns);
  int run_category = -1, run_level = 0;
  size_t run_start = 0;
  const auto flush = [&](size_t end) {
    if (run_category < 0 || run_level == 0) return;
    const double h = (height - 1) * run_level / static_cast<double>(kLevels);
    paths[run_category] += "M" + Coord(scale.x0 + run_start * column_px) + " " +
                           Coord(y + height - 1 - h) + "h" +
                           Coord((end - run_start) * column_px) + "v" + Coord(h) + "h" +
                           Coord(-(static_cast<double>(end - run_start)) * column_px) + "z";
  };
  for (size_t col = 0; col < columns; ++col) {
    double total = 0, best = 0;
    int category = -1;
    for (size_t c = 0; c < kCategories; ++c) {
      if (!row.bins[c]) continue;
      const double f = row.bins[c]->Fraction(col);
      total += f;
      if (f > best) best = f, category = static_cast<int>(c);
    }
    const int level =
        total <= 0 ? 0 : std::clamp(static_cast<int>(std::ceil(total * kLevels)), 1, kLevels);
    if (level != run_level || category != run_category) {
      flush(col);
      run_category = category;
      run_level = level;
      run_start = col;
    }
  }
  flush(columns);
  for (size_t c = 0; c < kCategories; ++c) {
    if (!paths[c].empty()) {
      svg += "<path class=\"" + std::string(CategoryClass(c)) + " dense\" d=\"" + paths[c] +
             "\"/>";
    }
  }
  // Slices wide enough to read stay individual (the widest first, at most kWideLimit).
  for (const Slice& s : row.wide) svg += slice(s);
  svg += "<rect class=\"row-hit\" x=\"" + Coord(scale.x0) + "\" y=\"" + Coord(y) + "\" width=\"" +
         Coord(scale.width) + "\" height=\"" + Coord(height - 1) + "\"><title>" +
         std::to_string(row.visible) +
         " slices in view, drawn per pixel as the share of time they covered</title></rect>";
  return svg;
}

std::string HtmlTimeline::Svg(size_t view_number, const View& view) const {
  const TimeScale& scale = scales_[view_number];
  const std::string& id = view.id;
  const size_t max_marks = view.max_marks;
  // Lane positions first: the marks need the rows' y.
  struct Placed {
    double y0 = 0, y1 = 0;
    double api_y = 0;  // the row the marks attach to (API calls, or the stream's row)
  };
  std::vector<Placed> placed;
  std::map<uint32_t, size_t> thread_lane;
  std::map<std::pair<uint32_t, uint32_t>, size_t> stream_lane;
  double y = kTop;
  for (size_t i = 0; i < lanes_.size(); ++i) {
    const Lane& lane = lanes_[i];
    Placed p{.y0 = y};
    for (size_t r = 0; r < lane.rows.size(); ++r) {
      // Every row but a thread's NVTX rows (the last row: its API calls, or the stream's).
      if (!lane.thread || r + 1 == lane.rows.size()) p.api_y = y;
      y += lane.rows[r].height;
    }
    p.y1 = y;
    y += kLaneGap;
    placed.push_back(p);
    if (lane.thread) {
      thread_lane[lane.thread_id] = i;
    } else {
      stream_lane[{lane.device_id, lane.stream_id}] = i;
    }
  }
  const double plot_bottom = y;
  const double width = scale.x0 + scale.width + 12;
  const double height = plot_bottom + kAxisHeight;
  std::string svg = "<svg class=\"timeline\" id=\"" + HtmlEscape(id) + "\" viewBox=\"0 0 " +
                    Coord(width) + " " + Coord(height) + "\" width=\"" + Coord(width) +
                    "\" height=\"" + Coord(height) + "\" data-t0-ns=\"" +
                    std::to_string(scale.t0_ns) + "\" data-t1-ns=\"" +
                    std::to_string(scale.t1_ns) + "\" data-origin-ns=\"" +
                    std::to_string(scale.origin_ns) + "\" data-x0=\"" + Coord(scale.x0) +
                    "\" data-plot-width=\"" + Coord(scale.width) + "\">";
  svg += "<defs><marker id=\"" + HtmlEscape(id) +
         "-arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" "
         "markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0 0L10 5L0 10z\" "
         "class=\"arrow-head\"/></marker></defs>";
  svg += TimeAxisSvg(scale, plot_bottom, true, kTop);
  // Under the lanes (their backgrounds are translucent), so that colours stay true.
  if (view.start_up_end_ns > scale.t0_ns) {
    const double x2 = std::clamp(scale.X(view.start_up_end_ns), scale.x0, scale.x0 + scale.width);
    svg += "<g class=\"start-up\" data-end-ns=\"" + std::to_string(view.start_up_end_ns) +
           "\"><rect class=\"start-up-band\" x=\"" + Coord(scale.x0) + "\" y=\"" +
           Coord(kTop - 3) + "\" width=\"" + Coord(std::max(2.0, x2 - scale.x0)) +
           "\" height=\"" + Coord(plot_bottom - kTop + 3) +
           "\"/><text class=\"start-up-label\" x=\"" + Coord(x2 - 4) + "\" y=\"" +
           Coord(kTop - 6) + "\">start-up, paid once ◂</text></g>";
  }
  for (const View::Band& band : view.one_time) {
    if (band.end_ns <= scale.t0_ns || band.start_ns >= scale.t1_ns) continue;
    const double x1 = std::clamp(scale.X(band.start_ns), scale.x0, scale.x0 + scale.width);
    const double x2 = std::clamp(scale.X(band.end_ns), scale.x0, scale.x0 + scale.width);
    svg += "<g class=\"one-time\" data-start-ns=\"" + std::to_string(band.start_ns) +
           "\" data-end-ns=\"" + std::to_string(band.end_ns) + "\"><title>" +
           HtmlEscape(band.label) + ", paid once</title><rect class=\"one-time-band\" x=\"" +
           Coord(x1) + "\" y=\"" + Coord(kTop - 3) + "\" width=\"" +
           Coord(std::max(2.0, x2 - x1)) + "\" height=\"" + Coord(plot_bottom - kTop + 3) + "\"/>";
    if (x2 - x1 >= kOneTimeLabelPx) {
      svg += "<text class=\"one-time-label\" x=\"" + Coord((x1 + x2) / 2) + "\" y=\"" +
             Coord(kTop - 6) + "\">" + HtmlEscape(band.label) + "</text>";
    }
    svg += "</g>";
  }
  if (view.highlight_end_ns > view.highlight_start_ns) {
    const double x1 = std::clamp(scale.X(view.highlight_start_ns), scale.x0, scale.x0 + scale.width);
    const double x2 = std::clamp(scale.X(view.highlight_end_ns), scale.x0, scale.x0 + scale.width);
    svg += "<g class=\"highlight\"><rect class=\"finding-band\" x=\"" + Coord(x1) + "\" y=\"" +
           Coord(kTop - 3) + "\" width=\"" + Coord(std::max(2.0, x2 - x1)) + "\" height=\"" +
           Coord(plot_bottom - kTop + 3) + "\"/>";
    if (!view.highlight_label.empty()) {
      svg += "<text class=\"highlight-label\" x=\"" + Coord((x1 + x2) / 2) + "\" y=\"" +
             Coord(kTop - 6) + "\">" + HtmlEscape(view.highlight_label) + "</text>";
    }
    svg += "</g>";
  }
  for (size_t i = 0; i < lanes_.size(); ++i) {
    const Lane& lane = lanes_[i];
    const Placed& p = placed[i];
    svg += "<g class=\"lane\" data-kind=\"" + std::string(lane.thread ? "thread" : "stream") + "\"";
    if (lane.thread) {
      svg += " data-thread=\"" + std::to_string(lane.thread_id) + "\"";
    } else {
      svg += " data-device=\"" + std::to_string(lane.device_id) + "\" data-stream=\"" +
             std::to_string(lane.stream_id) + "\"";
    }
    svg += " data-y0=\"" + Coord(p.y0) + "\" data-y1=\"" + Coord(p.y1) + "\">";
    svg += "<rect class=\"lane-bg" + std::string(i % 2 ? " odd" : "") + "\" x=\"" +
           Coord(scale.x0) + "\" y=\"" + Coord(p.y0) + "\" width=\"" + Coord(scale.width) +
           "\" height=\"" + Coord(p.y1 - p.y0) + "\"/>";
    svg += "<text class=\"lane-label\" x=\"" + Coord(scale.x0 - 8) + "\" y=\"" +
           Coord(p.api_y + (lane.thread ? kApiRowHeight : kStreamRowHeight) / 2 + 4) + "\">" +
           HtmlEscape(lane.label) + "</text>";
    double row_y = p.y0;
    for (const Row& row : lane.rows) {
      svg += RowSvg(row.views[view_number], row.height, scale, row_y);
      row_y += row.height;
    }
    svg += "</g>";
  }
  // The blocked calls: the call outlined, an arrow from it to the end of the work it waited for.
  size_t drawn = 0;
  if (marks_.for_each) marks_.for_each([&](const Mark& m) {
    if (drawn >= max_marks) return false;
    const Mark::Op& op = m.op;
    if (m.call_end_ns <= scale.t0_ns || m.call_start_ns >= scale.t1_ns) return true;
    const auto thread = thread_lane.find(m.thread_id);
    const auto stream = stream_lane.find({op.device_id, op.stream_id});
    if (thread == thread_lane.end() || stream == stream_lane.end()) return true;
    ++drawn;
    const double call_x = std::max(scale.x0, scale.X(m.call_start_ns));
    const double call_w = std::max(2.0, std::min(scale.x0 + scale.width, scale.X(m.call_end_ns)) - call_x);
    const double api_y = placed[thread->second].api_y;
    const double op_y = placed[stream->second].api_y + kStreamRowHeight / 2;
    // The moment the call was released: where the work ended, inside the call.
    const uint64_t released = std::clamp(op.end_ns, m.call_start_ns, m.call_end_ns);
    const double x1 = std::clamp(scale.X(released), scale.x0, scale.x0 + scale.width);
    const double x2 = std::clamp(scale.X(op.end_ns), scale.x0, scale.x0 + scale.width);
    const std::string title =
        m.api + " blocked " + Dur(m.blocked_ns) + " waiting for " +
        (op.kernel ? AbbreviateName(op.name, kProseNameChars) : op.name) + " on GPU " +
        std::to_string(op.device_id) + " stream " + std::to_string(op.stream_id);
    svg += "<g class=\"blocked\" data-thread=\"" + std::to_string(m.thread_id) +
           "\" data-corr=\"" + std::to_string(m.correlation_id) + "\" data-device=\"" +
           std::to_string(op.device_id) + "\" data-stream=\"" + std::to_string(op.stream_id) +
           "\" data-op-corr=\"" + std::to_string(op.correlation_id) + "\" data-blocked-ns=\"" +
           std::to_string(m.blocked_ns) + "\"><title>" + HtmlEscape(title) + "</title>";
    svg += "<rect class=\"blocked-call\" x=\"" + Coord(call_x) + "\" y=\"" + Coord(api_y - 1) +
           "\" width=\"" + Coord(call_w) + "\" height=\"" + Coord(kApiRowHeight + 1) + "\"/>";
    svg += "<line x1=\"" + Coord(x1) + "\" y1=\"" + Coord(api_y + kApiRowHeight / 2) +
           "\" x2=\"" + Coord(x2) + "\" y2=\"" + Coord(op_y) + "\" marker-end=\"url(#" +
           HtmlEscape(id) + "-arrow)\"/></g>";
    return true;
  });
  return svg + "</svg>";
}

std::string HtmlTimeline::Legend() {
  struct Entry {
    const char* css;
    const char* text;
  };
  static constexpr Entry kEntries[] = {
      {"api", "CUDA API call"},    {"nvtx", "NVTX range"},       {"kernel", "kernel"},
      {"htod", "copy HtoD"},       {"dtoh", "copy DtoH"},        {"dtod", "copy DtoD"},
      {"copy", "other copy"},      {"memset", "memset"},         {"graph", "graph launch"},
      {"blocked", "blocked call → the work it waited for"}};
  std::string html = "<div class=\"legend\">";
  for (const Entry& e : kEntries) {
    html += "<span class=\"key\"><span class=\"swatch " + std::string(e.css) + "\"></span>" +
            e.text + "</span>";
  }
  return html + "</div>";
}

}  // namespace libprof::analysis
