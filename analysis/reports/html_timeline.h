// The timeline picture of the HTML report, for one process: one lane per host thread (its NVTX
// ranges above its CUDA calls) and one per GPU stream (kernels, copies by direction in their own
// colours, memsets, graphs), top to bottom the threads that call CUDA, the streams, the threads
// with NVTX ranges only; blocked calls marked in vermillion with an arrow from the call to
// the end of the work it waited for.
//
// Scale: a lane with few slices in view draws each one (with a hover title); a denser lane is
// drawn per pixel column, as the share of that column its slices covered (TimeBins), coloured by
// the kind that covered most, and only its slices wider than a few pixels are drawn one by one.
// So the page grows with lanes x pixels, not with records. The same lanes drawn over a narrow
// window give the detail views around the top findings.
//
// Built window by window (HtmlTimelineBuilder): every view (time range) is known before the
// records that fill it are added, and each row of each view keeps only what it will draw (the
// first slices in view, its pixel columns' covered time and its widest slices), so a trace read
// in windows (model/trace_windows.h) draws exactly the picture of the whole trace, which is the
// one-window case. NVTX rows are drawn window by window in time order, each thread's nesting
// carried across cuts (AddNvtx), once every view is known.
//
// DOM (read back by tests/report/): <svg class="timeline" data-t0-ns data-t1-ns data-x0
// data-plot-width> holds <g class="start-up" data-end-ns> when start-up reaches into the view,
// <g class="lane" data-kind="thread|stream" data-thread | data-device data-stream data-y0
// data-y1> per lane and <g class="blocked" data-thread data-corr
// data-device data-stream data-op-corr data-blocked-ns> per mark, whose <line> runs from the
// call (x1, y1) to the work (x2, y2).
//
// Layer: analysis/reports/. Pure string output.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/metrics/time_bins.h"
#include "analysis/model/stream_deps.h"
#include "analysis/model/trace_index.h"
#include "analysis/reports/html_axes.h"

namespace libprof::analysis {

class HtmlTimeline {
 public:
  struct View {
    std::string id;         // of the SVG element
    size_t max_marks = 60;  // blocked-call marks drawn, those that lost most time first
    // A detail view's finding: its interval shaded across the lanes, with a label.
    uint64_t highlight_start_ns = 0, highlight_end_ns = 0;
    std::string highlight_label;
    // Start-up's end (the start-up finding's; 0 for none): the part of the view before it
    // shaded grey and labelled, so that what the findings call steady state is seen apart.
    uint64_t start_up_end_ns = 0;
    // One-time work later on (an autotuner, a compiler: StartUp::one_time), each stretch shaded
    // and named, for the same reason.
    struct Band {
      uint64_t start_ns = 0, end_ns = 0;
      std::string label;  // "XLA's autotuning"
    };
    std::vector<Band> one_time;
  };
  // A blocked call (a host-wait finding) and the operation of the work it waited for that ended
  // last.
  struct Mark {
    uint32_t thread_id = 0;
    uint64_t correlation_id = 0;
    std::string api;
    uint64_t call_start_ns = 0, call_end_ns = 0, blocked_ns = 0;
    struct Op {
      uint64_t end_ns = 0;
      uint32_t device_id = 0, stream_id = 0;
      uint64_t correlation_id = 0;
      bool kernel = false;
      std::string name;  // TraceIndex::OpName
    } op;
  };
  // The marks, most time lost first, made as they are drawn (a trace can have a million, a view
  // draws a few dozen): `for_each` calls its visitor with each in order until it returns false.
  // It may leave out marks that no view draws (beyond each view's max_marks); `count` is then
  // a lower bound above every view's max_marks.
  struct Marks {
    size_t count = 0;
    std::function<void(const std::function<bool(const Mark&)>& visit)> for_each;
  };

  // The SVG of every lane over view number `view` (HtmlTimelineBuilder::AddView's).
  std::string Svg(size_t view, const View& options) const;

  // The HTML legend of the colours the lanes use.
  static std::string Legend();

  size_t lanes() const { return lanes_.size(); }
  size_t marks() const { return marks_.count; }

  // What HtmlTimelineBuilder fills.
  // What a slice is, which picks its colour: API call, NVTX range, kernel, copy HtoD, DtoH,
  // DtoD, other copy, memset, graph.
  static constexpr size_t kCategories = 9;
  // A slice drawn one by one: its place, colour, hover title and the name written inside it.
  struct Slice {
    double x = 0, w = 0;
    uint8_t category = 0;
    std::string title;
    std::string label;  // "" when the slice is too narrow to carry one
  };
  // What one row draws over one view.
  struct RowPicture {
    size_t visible = 0;         // slices in view
    std::vector<Slice> slices;  // every slice in view, when there are at most kDetailLimit
    // Dense rows: per category present, the covered time of each pixel column; the widest
    // slices, widest first (ties in row order).
    std::array<std::unique_ptr<TimeBins>, kCategories> bins;
    std::vector<Slice> wide;
  };
  struct Row {
    double height = 0;
    std::vector<RowPicture> views;
  };
  struct Lane {
    bool thread = true;
    uint32_t thread_id = 0;
    uint32_t device_id = 0;
    uint32_t stream_id = 0;
    std::string label;
    std::vector<Row> rows;  // top to bottom
  };

 private:
  friend class HtmlTimelineBuilder;
  std::string RowSvg(const RowPicture& row, double height, const TimeScale& scale,
                     double y) const;

  std::vector<TimeScale> scales_;
  std::vector<Lane> lanes_;
  Marks marks_;
};

// Builds an HtmlTimeline from the windows of one process, in time order (the whole trace: one).
class HtmlTimelineBuilder {
 public:
  // `raw`: also nested, noisy and internal API calls (as summary --raw); `pid`: the process's
  // (its main thread's lane comes first).
  HtmlTimelineBuilder(bool raw, uint32_t pid);
  ~HtmlTimelineBuilder();
  HtmlTimelineBuilder(HtmlTimelineBuilder&&) noexcept;

  // A picture over `scale`, filled by the Adds that name it; returns its number.
  size_t AddView(const TimeScale& scale);
  // One window's API calls and device operations into the rows of `views`; with `lanes`, its
  // threads with NVTX ranges are noted too (once per window of the process, before the views'
  // NVTX rows are drawn: a thread's lane can be asked for at once).
  void Add(const TraceIndex& window, const std::vector<size_t>& views, bool lanes);
  // Whether the thread has a lane (its calls or NVTX ranges noted so far).
  bool HasThreadLane(uint32_t thread_id) const {
    return api_rows_.contains(thread_id) || nvtx_threads_.contains(thread_id);
  }
  // NVTX rows, drawn in every view once all are added: each window's ranges (those of its list
  // from `first` on) in time order, window after window, each thread's nesting carried from one
  // to the next, so that no range is held. A range goes with the window of its start, but may
  // arrive in a later one when it is written at its end (an epoch's): the first read notes those
  // (NoteLateNvtx) and AddNvtx draws each in the window it starts in, not the one it came in
  // (or, when it starts between two windows, where no record starts, in the later one).
  void NoteLateNvtx(const ProcessTrace& window, const NvtxEvent& range);
  // The window's span: its ranges start in [from_ns, to_ns), but for late ones.
  void AddNvtx(const ProcessTrace& window, size_t first, uint64_t from_ns, uint64_t to_ns);
  // `stream_class`: a stream's class, for its label.
  HtmlTimeline Finish(const std::function<StreamClass(uint32_t stream_id)>& stream_class,
                      HtmlTimeline::Marks marks);

 private:
  struct RowState;  // html_timeline.cc
  struct NvtxRange {
    uint64_t start_ns, end_ns;
    uint32_t thread_id;
    std::string name;  // TraceIndex::NvtxName
  };
  struct NvtxThread {
    std::vector<uint64_t> open;  // the ends of the ranges still open, innermost last
    std::vector<RowState> rows;  // by depth
  };

  bool raw_;
  uint32_t pid_;
  std::vector<TimeScale> scales_;
  std::map<uint32_t, std::unique_ptr<RowState>> api_rows_;  // by thread
  std::map<std::pair<uint32_t, uint32_t>, std::unique_ptr<RowState>> stream_rows_;
  std::set<uint32_t> nvtx_threads_;
  std::map<uint32_t, NvtxThread> nvtx_;  // by thread
  std::vector<NvtxRange> late_nvtx_;     // by start
  size_t late_drawn_ = 0;                // late_nvtx_[..late_drawn_) were drawn
};

}  // namespace libprof::analysis
