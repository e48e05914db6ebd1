#include "analysis/reports/chrome_trace_writer.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "analysis/reports/formats.h"

namespace libprof::analysis {

namespace {

// JsonString, with a shortcut for the common case (printable ASCII with nothing to escape),
// which is most of an export's text.
void AppendJsonString(std::string_view value, std::string* out) {
  for (char c : value) {
    const auto b = static_cast<unsigned char>(c);
    if (b < 0x20 || b >= 0x7F || c == '"' || c == '\\') {
      *out += JsonString(value);
      return;
    }
  }
  *out += '"';
  out->append(value);
  *out += '"';
}

// FormatMicros without the allocation, appended to *out (std::to_chars: this runs for every
// timestamp and duration).
void AppendMicros(int64_t ns, std::string* out) {
  // The magnitude as unsigned, so that INT64_MIN needs no special case.
  const uint64_t magnitude = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  char buffer[32];
  char* p = buffer;
  if (ns < 0) *p++ = '-';
  p = std::to_chars(p, buffer + sizeof buffer, magnitude / 1000).ptr;
  const uint64_t fraction = magnitude % 1000;
  *p++ = '.';
  *p++ = static_cast<char>('0' + fraction / 100);
  *p++ = static_cast<char>('0' + fraction / 10 % 10);
  *p++ = static_cast<char>('0' + fraction % 10);
  out->append(buffer, p);
}

}  // namespace

std::string FormatMicros(int64_t ns) {
  std::string out;
  AppendMicros(ns, &out);
  return out;
}

void EventArgs::AddKey(std::string_view key) {
  if (!members_.empty()) members_ += ',';
  AppendJsonString(key, &members_);
  members_ += ':';
}

EventArgs& EventArgs::Add(std::string_view key, std::string_view value) {
  AddKey(key);
  AppendJsonString(value, &members_);
  return *this;
}

EventArgs& EventArgs::Add(std::string_view key, uint64_t value) {
  AddKey(key);
  members_ += std::to_string(value);
  return *this;
}

EventArgs& EventArgs::Add(std::string_view key, int64_t value) {
  AddKey(key);
  members_ += std::to_string(value);
  return *this;
}

EventArgs& EventArgs::Add(std::string_view key, bool value) {
  AddKey(key);
  members_ += value ? "true" : "false";
  return *this;
}

EventArgs& EventArgs::Add(std::string_view key, double value) {
  AddKey(key);
  if (!std::isfinite(value)) {
    members_ += "null";
    return *this;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  members_ += buffer;
  return *this;
}

EventArgs& EventArgs::AddJson(std::string_view key, std::string_view json) {
  AddKey(key);
  members_ += json;
  return *this;
}

namespace {

ChromeEvent Make(char phase, std::string_view name, std::string_view category, uint32_t pid,
                 uint32_t tid, int64_t ts_ns) {
  ChromeEvent e;
  e.phase = phase;
  e.name = name;
  e.category = category;
  e.pid = pid;
  e.tid = tid;
  e.ts_ns = ts_ns;
  return e;
}

}  // namespace

ChromeEvent ChromeEvent::Complete(std::string_view name, std::string_view category, uint32_t pid,
                                  uint32_t tid, int64_t ts_ns, int64_t dur_ns) {
  ChromeEvent e = Make('X', name, category, pid, tid, ts_ns);
  e.dur_ns = dur_ns;
  return e;
}

ChromeEvent ChromeEvent::Instant(std::string_view name, std::string_view category, uint32_t pid,
                                 uint32_t tid, int64_t ts_ns) {
  ChromeEvent e = Make('i', name, category, pid, tid, ts_ns);
  e.scope = 't';
  return e;
}

ChromeEvent ChromeEvent::AsyncBegin(std::string_view name, std::string_view category, uint32_t pid,
                                    uint32_t tid, int64_t ts_ns, uint64_t id) {
  ChromeEvent e = Make('b', name, category, pid, tid, ts_ns);
  e.id = id;
  return e;
}

ChromeEvent ChromeEvent::AsyncEnd(std::string_view name, std::string_view category, uint32_t pid,
                                  uint32_t tid, int64_t ts_ns, uint64_t id) {
  ChromeEvent e = Make('e', name, category, pid, tid, ts_ns);
  e.id = id;
  return e;
}

ChromeEvent ChromeEvent::FlowStart(std::string_view name, std::string_view category, uint32_t pid,
                                   uint32_t tid, int64_t ts_ns, uint64_t id) {
  ChromeEvent e = Make('s', name, category, pid, tid, ts_ns);
  e.id = id;
  return e;
}

ChromeEvent ChromeEvent::FlowEnd(std::string_view name, std::string_view category, uint32_t pid,
                                 uint32_t tid, int64_t ts_ns, uint64_t id) {
  ChromeEvent e = Make('f', name, category, pid, tid, ts_ns);
  e.id = id;
  e.bind_enclosing = true;
  return e;
}

ChromeEvent ChromeEvent::Metadata(std::string_view name, uint32_t pid, uint32_t tid,
                                  const EventArgs* args) {
  ChromeEvent e = Make('M', name, "", pid, tid, 0);
  e.args = args;
  return e;
}

ChromeEvent ChromeEvent::Counter(std::string_view name, uint32_t pid, int64_t ts_ns,
                                 const EventArgs* values) {
  ChromeEvent e = Make('C', name, "", pid, 0, ts_ns);
  e.args = values;
  return e;
}

ChromeTraceWriter::ChromeTraceWriter(std::ostream* out, const EventArgs& other_data) : out_(*out) {
  out_ << "{\"displayTimeUnit\":\"ns\",\"otherData\":" << other_data.Json()
       << ",\"traceEvents\":[\n";
}

void ChromeTraceWriter::Write(const ChromeEvent& e) {
  line_.clear();
  if (events_ > 0) line_ += ",\n";
  line_ += "{\"ph\":\"";
  line_ += e.phase;
  line_ += "\",\"name\":";
  AppendJsonString(e.name, &line_);
  if (!e.category.empty()) {
    line_ += ",\"cat\":";
    AppendJsonString(e.category, &line_);
  }
  line_ += ",\"pid\":";
  line_ += std::to_string(e.pid);
  line_ += ",\"tid\":";
  line_ += std::to_string(e.tid);
  if (e.phase != 'M') {
    line_ += ",\"ts\":";
    AppendMicros(e.ts_ns, &line_);
  }
  if (e.phase == 'X') {
    line_ += ",\"dur\":";
    AppendMicros(e.dur_ns, &line_);
  }
  if (e.id) line_ += ",\"id\":" + std::to_string(*e.id);
  if (e.scope != 0) {
    line_ += ",\"s\":\"";
    line_ += e.scope;
    line_ += '"';
  }
  if (e.bind_enclosing) line_ += ",\"bp\":\"e\"";
  if (!e.color.empty()) {
    line_ += ",\"cname\":";
    AppendJsonString(e.color, &line_);
  }
  if (e.args != nullptr && !e.args->empty()) {
    line_ += ",\"args\":";
    e.args->AppendTo(&line_);
  }
  line_ += '}';
  out_ << line_;
  ++events_;
}

bool ChromeTraceWriter::Finish() {
  out_ << "\n]}\n";
  out_.flush();
  return static_cast<bool>(out_);
}

}  // namespace libprof::analysis
