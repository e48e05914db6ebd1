// Streams the Chrome Trace Event Format (JSON object form) that ui.perfetto.dev and
// chrome://tracing open: `{"displayTimeUnit":"ns","otherData":{...},"traceEvents":[...]}`, one
// event per line, each written as soon as it is given, so the document never sits in memory.
//
// Layer: analysis/reports/. Knows the format, not libprof's traces; writes to a
// std::ostream and never throws (stream errors are reported by Finish()).
//
// Format reference: "Trace Event Format" (Google, the document chrome://tracing implements) and
// Perfetto's JSON importer. Times there are microseconds; we keep nanoseconds exact by writing
// them with three decimals.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace libprof::analysis {

// "1234.567" for 1234567 ns, "-0.001" for -1 ns: microseconds with exactly three decimals.
std::string FormatMicros(int64_t ns);

// The members of one JSON object ("args", "otherData"), built in order. Keys and strings are
// escaped (control characters, quotes, backslashes; invalid UTF-8 becomes U+FFFD).
class EventArgs {
 public:
  EventArgs& Add(std::string_view key, std::string_view value);
  EventArgs& Add(std::string_view key, const char* value) {
    return Add(key, std::string_view(value));
  }
  EventArgs& Add(std::string_view key, const std::string& value) {
    return Add(key, std::string_view(value));
  }
  EventArgs& Add(std::string_view key, uint64_t value);
  EventArgs& Add(std::string_view key, uint32_t value) { return Add(key, uint64_t{value}); }
  EventArgs& Add(std::string_view key, int64_t value);
  EventArgs& Add(std::string_view key, int32_t value) { return Add(key, int64_t{value}); }
  EventArgs& Add(std::string_view key, bool value);
  // Finite values with up to 6 significant digits; NaN and infinities become null.
  EventArgs& Add(std::string_view key, double value);
  // `json` must already be a valid JSON value (an array or object built by the caller).
  EventArgs& AddJson(std::string_view key, std::string_view json);

  bool empty() const { return members_.empty(); }
  std::string Json() const { return "{" + members_ + "}"; }
  void AppendTo(std::string* out) const {
    *out += '{';
    *out += members_;
    *out += '}';
  }

 private:
  void AddKey(std::string_view key);
  std::string members_;
};

// One trace event, made by the factory of its phase:
//   'X' complete (ts, dur), 'i' instant on a thread, 'b'/'e' nestable async (id),
//   's'/'f' flow start/finish (id; the finish binds to the enclosing slice, "bp":"e"),
//   'M' metadata (no ts), 'C' counter (its values are the args; one track per name and pid).
// Strings are viewed, not copied: they must outlive the Write() call.
struct ChromeEvent {
  static ChromeEvent Complete(std::string_view name, std::string_view category, uint32_t pid,
                              uint32_t tid, int64_t ts_ns, int64_t dur_ns);
  static ChromeEvent Instant(std::string_view name, std::string_view category, uint32_t pid,
                             uint32_t tid, int64_t ts_ns);
  static ChromeEvent AsyncBegin(std::string_view name, std::string_view category, uint32_t pid,
                                uint32_t tid, int64_t ts_ns, uint64_t id);
  static ChromeEvent AsyncEnd(std::string_view name, std::string_view category, uint32_t pid,
                              uint32_t tid, int64_t ts_ns, uint64_t id);
  static ChromeEvent FlowStart(std::string_view name, std::string_view category, uint32_t pid,
                               uint32_t tid, int64_t ts_ns, uint64_t id);
  static ChromeEvent FlowEnd(std::string_view name, std::string_view category, uint32_t pid,
                             uint32_t tid, int64_t ts_ns, uint64_t id);
  static ChromeEvent Metadata(std::string_view name, uint32_t pid, uint32_t tid,
                              const EventArgs* args);
  static ChromeEvent Counter(std::string_view name, uint32_t pid, int64_t ts_ns,
                             const EventArgs* values);

  ChromeEvent& WithArgs(const EventArgs* a) {
    args = a;
    return *this;
  }
  // "cname": one of chrome://tracing's reserved colour names ("terrible" is red).
  ChromeEvent& WithColor(std::string_view c) {
    color = c;
    return *this;
  }

  char phase = 'X';
  std::string_view name;
  std::string_view category;  // "" leaves "cat" out
  uint32_t pid = 0;
  uint32_t tid = 0;
  int64_t ts_ns = 0;  // relative to the document's origin
  int64_t dur_ns = 0;
  std::optional<uint64_t> id;
  char scope = 0;  // instants: 't' thread
  bool bind_enclosing = false;
  std::string_view color;
  const EventArgs* args = nullptr;
};

class ChromeTraceWriter {
 public:
  // Writes the opening of the document, with `other_data` as "otherData".
  ChromeTraceWriter(std::ostream* out, const EventArgs& other_data);
  ChromeTraceWriter(const ChromeTraceWriter&) = delete;
  ChromeTraceWriter& operator=(const ChromeTraceWriter&) = delete;

  void Write(const ChromeEvent& event);
  // Closes the event array and the document and flushes; false if any write failed.
  bool Finish();
  uint64_t events() const { return events_; }

 private:
  std::ostream& out_;
  std::string line_;  // reused for each event
  uint64_t events_ = 0;
};

}  // namespace libprof::analysis
