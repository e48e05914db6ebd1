#include "analysis/reports/html_timeline.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <map>
#include <set>

#include "analysis/metrics/streams.h"
#include "analysis/metrics/time_bins.h"
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

std::string Dur(uint64_t ns) { return FormatDuration(static_cast<double>(ns)); }

std::string At(uint64_t t_ns, uint64_t origin_ns) {
  return FormatDuration(static_cast<double>(t_ns > origin_ns ? t_ns - origin_ns : 0));
}

const char* CategoryClass(uint8_t c) {
  static constexpr std::array<const char*, 9> kClasses = {"api", "nvtx", "kernel", "htod", "dtoh",
                                                          "dtod", "copy", "memset", "graph"};
  return c < kClasses.size() ? kClasses[c] : "api";
}

}  // namespace

HtmlTimeline::HtmlTimeline(const TraceIndex& index, const StreamModel& streams,
                           const std::vector<Finding>& findings, bool raw)
    : index_(index) {
  AddThreadLanes(raw);
  AddStreamLanes(streams);
  AddMarks(findings);
}

HtmlTimeline::Category HtmlTimeline::OpCategory(const TraceIndex& index, const DeviceOp& op) {
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

void HtmlTimeline::AddThreadLanes(bool raw) {
  const TraceRecords& r = index_.records();
  const uint32_t pid = index_.trace().header.pid;
  std::map<uint32_t, std::vector<Item>> calls, ranges;
  for (uint32_t i = 0; i < r.api_calls.size(); ++i) {
    const ApiCall& c = r.api_calls[i];
    // The calls `profview summary` counts (nested, noisy and internal ones only with --raw).
    if (!raw && (index_.IsNested(i) || IsNoiseApi(index_.ApiName(c)) ||
                 c.domain == ApiDomain::kInternalLaunch)) {
      continue;
    }
    calls[c.thread_id].push_back({c.start_ns, std::max(c.start_ns, c.end_ns), i, kApi});
  }
  for (uint32_t i = 0; i < r.nvtx_events.size(); ++i) {
    const NvtxEvent& e = r.nvtx_events[i];
    if (e.kind == NvtxKind::kMark) continue;
    ranges[e.thread_id].push_back({e.start_ns, std::max(e.start_ns, e.end_ns), i, kNvtx});
  }
  std::set<uint32_t> threads;
  for (const auto& [tid, items] : calls) threads.insert(tid);
  for (const auto& [tid, items] : ranges) threads.insert(tid);
  std::vector<uint32_t> order(threads.begin(), threads.end());
  // The main thread first, as in the export (timeline_export.cc).
  std::stable_partition(order.begin(), order.end(), [&](uint32_t t) { return t == pid; });
  const auto by_start = [](const Item& a, const Item& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns > b.end_ns;
  };
  for (uint32_t tid : order) {
    Lane lane;
    lane.thread_id = tid;
    lane.label = (tid == pid ? "main thread " : "thread ") + std::to_string(tid);
    std::vector<Item>& nvtx = ranges[tid];
    std::sort(nvtx.begin(), nvtx.end(), by_start);
    // Depth: how many earlier ranges of the thread are still open (a stack of their ends).
    std::vector<uint64_t> open;
    std::vector<Row> nvtx_rows;
    for (const Item& item : nvtx) {
      while (!open.empty() && open.back() <= item.start_ns) open.pop_back();
      const size_t depth = std::min<size_t>(open.size(), kMaxNvtxRows - 1);
      open.push_back(item.end_ns);
      while (nvtx_rows.size() <= depth) nvtx_rows.push_back({RowKind::kNvtx, kNvtxRowHeight, {}});
      nvtx_rows[depth].items.push_back(item);
    }
    lane.rows = std::move(nvtx_rows);
    std::vector<Item>& api = calls[tid];
    std::sort(api.begin(), api.end(), by_start);
    lane.rows.push_back({RowKind::kApi, kApiRowHeight, std::move(api)});
    lanes_.push_back(std::move(lane));
  }
}

void HtmlTimeline::AddStreamLanes(const StreamModel& streams) {
  std::map<std::pair<uint32_t, uint32_t>, std::vector<Item>> by_stream;
  const std::vector<DeviceOp>& ops = index_.device_ops();  // sorted by start
  for (uint32_t i = 0; i < ops.size(); ++i) {
    const DeviceOp& op = ops[i];
    by_stream[{op.device_id, op.stream_id}].push_back(
        {op.start_ns, std::max(op.start_ns, op.end_ns), i, OpCategory(index_, op)});
  }
  for (auto& [key, items] : by_stream) {
    Lane lane;
    lane.thread = false;
    lane.device_id = key.first;
    lane.stream_id = key.second;
    lane.label = "GPU " + std::to_string(key.first) + " stream " + std::to_string(key.second) +
                 " (" + ToString(streams.ClassOf(key.second)) + ")";
    lane.rows.push_back({RowKind::kStream, kStreamRowHeight, std::move(items)});
    lanes_.push_back(std::move(lane));
  }
}

void HtmlTimeline::AddMarks(const std::vector<Finding>& findings) {
  const TraceRecords& r = index_.records();
  const std::vector<DeviceOp>& ops = index_.device_ops();
  for (const Finding& f : findings) {
    if (Rule(f.rule).family != RuleFamily::kHostWait || f.correlation_id == 0) continue;
    const int64_t call = index_.LaunchingCall(f.correlation_id);
    if (call < 0 || r.api_calls[call].thread_id != f.thread_id) continue;
    const ApiCall& c = r.api_calls[call];
    for (const Blamed& b : f.blamed) {
      const auto blamed = index_.OpsOf(b.correlation_id);
      if (b.correlation_id == 0 || blamed.empty()) continue;
      // The operation of the blamed work that finished last: the one the call waited for.
      const uint32_t op = *std::max_element(
          blamed.begin(), blamed.end(),
          [&](uint32_t x, uint32_t y) { return ops[x].end_ns < ops[y].end_ns; });
      marks_.push_back({.thread_id = c.thread_id,
                        .correlation_id = f.correlation_id,
                        .api = f.api,
                        .call_start_ns = c.start_ns,
                        .call_end_ns = std::max(c.start_ns, c.end_ns),
                        .blocked_ns = f.blocked_ns,
                        .op = op});
    }
  }
  std::stable_sort(marks_.begin(), marks_.end(),
                   [](const Mark& a, const Mark& b) { return a.blocked_ns > b.blocked_ns; });
}

std::string HtmlTimeline::ItemTitle(const Row& row, const Item& item, uint64_t origin_ns) const {
  const TraceRecords& r = index_.records();
  const std::string when = Dur(item.end_ns - item.start_ns) + " at " + At(item.start_ns, origin_ns);
  switch (row.kind) {
    case RowKind::kApi: {
      const ApiCall& c = r.api_calls[item.ref];
      return index_.ApiName(c) + ": " + when + " (corr " + std::to_string(c.correlation_id) + ")";
    }
    case RowKind::kNvtx:
      return "NVTX " + index_.NvtxName(r.nvtx_events[item.ref]) + ": " + when;
    case RowKind::kStream:
      break;
  }
  const DeviceOp& op = index_.device_ops()[item.ref];
  const std::string& name = index_.OpName(op);
  std::string title = AbbreviateName(name, kTitleChars) + ": " +
                      when + " (corr " + std::to_string(op.correlation_id) + ")";
  if (op.kind == DeviceOpKind::kMemcpy || op.kind == DeviceOpKind::kMemset) {
    title += ", " + FormatBytes(op.bytes);
    const std::string bandwidth = FormatBandwidth(op.bytes, op.duration());
    if (!bandwidth.empty()) title += ", " + bandwidth;
  }
  return title;
}

std::string HtmlTimeline::ItemName(const Row& row, const Item& item) const {
  const TraceRecords& r = index_.records();
  switch (row.kind) {
    case RowKind::kApi:
      return index_.ApiName(r.api_calls[item.ref]);
    case RowKind::kNvtx:
      return index_.NvtxName(r.nvtx_events[item.ref]);
    case RowKind::kStream:
      break;
  }
  const DeviceOp& op = index_.device_ops()[item.ref];
  return index_.OpName(op);
}

std::string HtmlTimeline::RowSvg(const Row& row, const TimeScale& scale, double y) const {
  std::vector<const Item*> visible;
  for (const Item& item : row.items) {
    if (item.start_ns >= scale.t1_ns) break;  // items are sorted by start
    if (item.end_ns > scale.t0_ns || (item.end_ns == item.start_ns && item.start_ns >= scale.t0_ns))
      visible.push_back(&item);
  }
  if (visible.empty()) return "";
  const double x_end = scale.x0 + scale.width;
  const auto span = [&](const Item& item) {
    const double x1 = std::max(scale.x0, scale.X(item.start_ns));
    const double x2 = std::min(x_end, scale.X(item.end_ns));
    return std::pair(x1, std::max(x2 - x1, 0.6));
  };
  const auto slice = [&](const Item& item) {
    const auto [x, w] = span(item);
    std::string out = "<rect class=\"" + std::string(CategoryClass(item.category)) + "\" x=\"" +
                      Coord(x) + "\" y=\"" + Coord(y) + "\" width=\"" + Coord(w) +
                      "\" height=\"" + Coord(row.height - 1) + "\"><title>" +
                      HtmlEscape(ItemTitle(row, item, scale.origin_ns)) + "</title></rect>";
    if (w >= kLabelPixels && row.height >= kApiRowHeight) {
      const size_t chars = static_cast<size_t>((w - 6) / kPixelsPerChar);
      // Abbreviated as every table abbreviates names (kernel_names.h).
      const std::string name = AbbreviateName(ItemName(row, item), std::max<size_t>(chars, 2));
      out += "<text class=\"slice-label " + std::string(CategoryClass(item.category)) +
             "-label\" x=\"" + Coord(x + 3) + "\" y=\"" + Coord(y + row.height / 2 + 3.5) +
             "\">" + HtmlEscape(name) + "</text>";
    }
    return out;
  };
  std::string svg;
  if (visible.size() <= kDetailLimit) {
    for (const Item* item : visible) svg += slice(*item);
    return svg;
  }
  // Dense: per pixel column, the share of it the row's slices covered, as a bar from the row's
  // bottom (an eighth of the row at least, so that any work stays visible) in the colour of the
  // kind that covered most. Runs of equal columns become one path segment.
  const size_t columns = std::max<size_t>(1, static_cast<size_t>(scale.width));
  std::array<std::unique_ptr<TimeBins>, kCategories> bins;
  for (const Item* item : visible) {
    auto& b = bins[item->category];
    if (!b) b = std::make_unique<TimeBins>(scale.t0_ns, scale.t1_ns, columns);
    b->Add(item->start_ns, item->end_ns);
  }
  std::array<std::string, kCategories> paths;
  const double column_px = scale.width / static_cast<double>(columns);
  int run_category = -1, run_level = 0;
  size_t run_start = 0;
  const auto flush = [&](size_t end) {
    if (run_category < 0 || run_level == 0) return;
    const double h = (row.height - 1) * run_level / static_cast<double>(kLevels);
    paths[run_category] += "M" + Coord(scale.x0 + run_start * column_px) + " " +
                           Coord(y + row.height - 1 - h) + "h" +
                           Coord((end - run_start) * column_px) + "v" + Coord(h) + "h" +
                           Coord(-(static_cast<double>(end - run_start)) * column_px) + "z";
  };
  for (size_t col = 0; col < columns; ++col) {
    double total = 0, best = 0;
    int category = -1;
    for (int c = 0; c < kCategories; ++c) {
      if (!bins[c]) continue;
      const double f = bins[c]->Fraction(col);
      total += f;
      if (f > best) best = f, category = c;
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
  for (int c = 0; c < kCategories; ++c) {
    if (!paths[c].empty()) {
      svg += "<path class=\"" + std::string(CategoryClass(c)) + " dense\" d=\"" + paths[c] +
             "\"/>";
    }
  }
  // Slices wide enough to read stay individual (the widest first, at most kWideLimit).
  std::vector<const Item*> wide;
  for (const Item* item : visible) {
    if (span(*item).second >= kWidePixels) wide.push_back(item);
  }
  std::stable_sort(wide.begin(), wide.end(), [](const Item* a, const Item* b) {
    return a->end_ns - a->start_ns > b->end_ns - b->start_ns;
  });
  if (wide.size() > kWideLimit) wide.resize(kWideLimit);
  for (const Item* item : wide) svg += slice(*item);
  svg += "<rect class=\"row-hit\" x=\"" + Coord(scale.x0) + "\" y=\"" + Coord(y) + "\" width=\"" +
         Coord(scale.width) + "\" height=\"" + Coord(row.height - 1) + "\"><title>" +
         std::to_string(visible.size()) +
         " slices in view, drawn per pixel as the share of time they covered</title></rect>";
  return svg;
}

std::string HtmlTimeline::Svg(const TimeScale& scale, const View& view) const {
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
    for (const Row& row : lane.rows) {
      if (row.kind != RowKind::kNvtx) p.api_y = y;
      y += row.height;
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
      svg += RowSvg(row, scale, row_y);
      row_y += row.height;
    }
    svg += "</g>";
  }
  // The blocked calls: the call outlined, an arrow from it to the end of the work it waited for.
  size_t drawn = 0;
  const std::vector<DeviceOp>& ops = index_.device_ops();
  for (const Mark& m : marks_) {
    if (drawn >= max_marks) break;
    const DeviceOp& op = ops[m.op];
    if (m.call_end_ns <= scale.t0_ns || m.call_start_ns >= scale.t1_ns) continue;
    const auto thread = thread_lane.find(m.thread_id);
    const auto stream = stream_lane.find({op.device_id, op.stream_id});
    if (thread == thread_lane.end() || stream == stream_lane.end()) continue;
    ++drawn;
    const double call_x = std::max(scale.x0, scale.X(m.call_start_ns));
    const double call_w = std::max(2.0, std::min(scale.x0 + scale.width, scale.X(m.call_end_ns)) - call_x);
    const double api_y = placed[thread->second].api_y;
    const double op_y = placed[stream->second].api_y + kStreamRowHeight / 2;
    // The moment the call was released: where the work ended, inside the call.
    const uint64_t released = std::clamp(op.end_ns, m.call_start_ns, m.call_end_ns);
    const double x1 = std::clamp(scale.X(released), scale.x0, scale.x0 + scale.width);
    const double x2 = std::clamp(scale.X(op.end_ns), scale.x0, scale.x0 + scale.width);
    const std::string& op_name = index_.OpName(op);
    const std::string title =
        m.api + " blocked " + Dur(m.blocked_ns) + " waiting for " +
        (op.kind == DeviceOpKind::kKernel ? AbbreviateName(op_name, kProseNameChars) : op_name) + " on GPU " +
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
  }
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
