// The timeline picture of the HTML report, for one process: one lane per host thread (its NVTX
// ranges above its CUDA calls) and one per GPU stream (kernels, copies by direction in their own
// colours, memsets, graphs), blocked calls marked in vermillion with an arrow from the call to
// the end of the work it waited for.
//
// Scale: a lane with few slices in view draws each one (with a hover title); a denser lane is
// drawn per pixel column, as the share of that column its slices covered (TimeBins), coloured by
// the kind that covered most, and only its slices wider than a few pixels are drawn one by one.
// So the page grows with lanes x pixels, not with records. The same lanes drawn over a narrow
// window give the detail views around the top findings.
//
// DOM (read back by tests/report/): <svg class="timeline" data-t0-ns data-t1-ns data-x0
// data-plot-width> holds <g class="lane" data-kind="thread|stream" data-thread | data-device
// data-stream data-y0 data-y1> per lane and <g class="blocked" data-thread data-corr
// data-device data-stream data-op-corr data-blocked-ns> per mark, whose <line> runs from the
// call (x1, y1) to the work (x2, y2).
//
// Layer: analysis/reports/. Built once per process from its TraceIndex, StreamModel and
// findings; pure string output.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/model/stream_deps.h"
#include "analysis/model/trace_index.h"
#include "analysis/reports/html_axes.h"
#include "analysis/rules/findings.h"

namespace libprof::analysis {

class HtmlTimeline {
 public:
  // `raw`: also nested, noisy and internal API calls (as summary --raw).
  HtmlTimeline(const TraceIndex& index, const StreamModel& streams,
               const std::vector<Finding>& findings, bool raw);

  struct View {
    std::string id;         // of the SVG element
    size_t max_marks = 60;  // blocked-call marks drawn, those that lost most time first
    // A detail view's finding: its interval shaded across the lanes, with a label.
    uint64_t highlight_start_ns = 0, highlight_end_ns = 0;
    std::string highlight_label;
  };
  // The SVG of every lane over scale's window.
  std::string Svg(const TimeScale& scale, const View& view) const;

  // The HTML legend of the colours the lanes use.
  static std::string Legend();

  size_t lanes() const { return lanes_.size(); }
  size_t marks() const { return marks_.size(); }

 private:
  // What a slice is, which picks its colour.
  enum Category : uint8_t {
    kApi, kNvtx, kKernel, kHtoD, kDtoH, kDtoD, kOtherCopy, kMemset, kGraph, kCategories
  };
  struct Item {
    uint64_t start_ns;
    uint64_t end_ns;
    uint32_t ref;  // index into api_calls, nvtx_events or device_ops (by the row's kind)
    Category category;
  };
  enum class RowKind : uint8_t { kNvtx, kApi, kStream };
  struct Row {
    RowKind kind;
    double height;
    std::vector<Item> items;  // by start
  };
  struct Lane {
    bool thread = true;
    uint32_t thread_id = 0;
    uint32_t device_id = 0;
    uint32_t stream_id = 0;
    std::string label;
    std::vector<Row> rows;  // top to bottom
  };
  struct Mark {
    uint32_t thread_id = 0;
    uint64_t correlation_id = 0;
    std::string api;
    uint64_t call_start_ns = 0, call_end_ns = 0, blocked_ns = 0;
    uint32_t op = 0;  // the blamed operation that ended last (index into device_ops)
  };

  void AddThreadLanes(bool raw);
  void AddStreamLanes(const StreamModel& streams);
  void AddMarks(const std::vector<Finding>& findings);
  std::string RowSvg(const Row& row, const TimeScale& scale, double y) const;
  // The name written inside a slice wide enough to hold some of it.
  std::string ItemName(const Row& row, const Item& item) const;
  std::string ItemTitle(const Row& row, const Item& item, uint64_t origin_ns) const;
  static Category OpCategory(const TraceIndex& index, const DeviceOp& op);

  const TraceIndex& index_;
  std::vector<Lane> lanes_;
  std::vector<Mark> marks_;  // most time lost first
};

}  // namespace libprof::analysis
