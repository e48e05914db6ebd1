#include "analysis/reports/stacks_report.h"

#include <algorithm>
#include <map>
#include <set>

#include "analysis/reports/formats.h"
#include "analysis/model/units.h"

namespace libprof::analysis {
namespace {

uint64_t Duration(uint64_t start, uint64_t end) { return end > start ? end - start : 0; }
std::string Dur(uint64_t ns) { return FormatDuration(static_cast<double>(ns)); }

std::string Hex(uint64_t value) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

// What makes two stacks the same for a reader: functions and modules, offsets where unnamed.
std::string ContentKey(const std::vector<FrameView>& frames) {
  std::string key;
  for (const FrameView& f : frames) {
    key += f.function + '\t' + f.module + '\t' + f.file + '\t' + std::to_string(f.line) + '\t' +
           (f.function.empty() ? std::to_string(f.module_offset) : "") + '\n';
  }
  return key;
}

// "libcublas.so.13+0x1a2b3c"; a Python frame's "/home/u/train.py:12".
std::string Where(const FrameView& f) {
  if (f.python) return f.file + (f.line > 0 ? ":" + std::to_string(f.line) : "");
  return (f.module.empty() ? "?" : f.module) + "+" + Hex(f.module_path.empty() ? f.address
                                                                                : f.module_offset);
}

}  // namespace

std::expected<StacksReport, std::string> AnalyzeStacks(const std::vector<ProcessTrace>& traces,
                                                       const std::string& api,
                                                       const CallSiteRule& rule) {
  StacksReport report;
  report.api = api;
  std::map<std::string, StackGroup> groups;
  std::set<std::string> names;
  for (const ProcessTrace& trace : traces) {
    const CallSites sites(trace, rule);
    for (const ApiCall& c : trace.records.api_calls) {
      const std::string& name = trace.Str(c.name_id);
      if (name != api) {
        names.insert(name);
        continue;
      }
      const uint64_t ns = Duration(c.start_ns, c.end_ns);
      ++report.calls;
      report.total_ns += ns;
      const std::vector<FrameView>& frames = sites.Frames(c.stack_id);
      if (frames.empty()) {
        ++report.calls_without_stack;
        report.ns_without_stack += ns;
        continue;
      }
      StackGroup& g = groups[ContentKey(frames)];
      if (g.calls == 0) {
        g.frames = frames;
        g.site = sites.Of(c.stack_id);
      }
      ++g.calls;
      g.total_ns += ns;
      g.max_ns = std::max(g.max_ns, ns);
    }
  }
  if (report.calls == 0) {
    std::string known;
    for (const std::string& n : names) {
      if (n.empty()) continue;
      if (known.size() > 200) {
        known += ", ...";
        break;
      }
      known += (known.empty() ? "" : ", ") + n;
    }
    return std::unexpected("--api " + api + ": no call of that name in the trace" +
                           (known.empty() ? "" : " (it has: " + known + ")"));
  }
  for (auto& [key, g] : groups) report.groups.push_back(std::move(g));
  std::stable_sort(report.groups.begin(), report.groups.end(),
                   [](const StackGroup& a, const StackGroup& b) {
                     if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
                     return a.calls > b.calls;
                   });
  return report;
}

std::string StacksTable(const StacksReport& r, size_t terminal_width) {
  const size_t stacks = r.groups.size();
  std::string out = r.api + ": " + std::to_string(r.calls) + (r.calls == 1 ? " call, " : " calls, ") +
                    Dur(r.total_ns) + " on the host; " + std::to_string(stacks) + " distinct " +
                    (stacks == 1 ? "stack" : "stacks") + ".\n";
  if (r.calls_without_stack > 0) {
    out += std::to_string(r.calls_without_stack) + " of the calls (" + Dur(r.ns_without_stack) +
           ") have no recorded stack: LIBPROF_BACKTRACE was none, or blocking and " + r.api +
           " is not a blocking call (record with collect.sh --backtrace all).\n";
  }
  for (size_t i = 0; i < r.groups.size(); ++i) {
    const StackGroup& g = r.groups[i];
    out += "\n#" + std::to_string(i + 1) + "  " + std::to_string(g.calls) +
           (g.calls == 1 ? " call" : " calls") + ", " + Dur(g.total_ns) + " in all (" +
           FormatPercent(static_cast<double>(g.total_ns), static_cast<double>(r.total_ns)) +
           " of the API's host time), mean " + Dur(g.total_ns / g.calls) + ", max " +
           Dur(g.max_ns) + "\n";
    out += "    call site: " + g.site.Chain(r.api) + "\n";
    for (size_t k = 0; k < g.frames.size(); ++k) {
      const FrameView& f = g.frames[k];
      // The call-site frame is marked (call_sites.h says which it is).
      const bool site = k == g.site.caller_frame;
      std::string function = f.function.empty() ? "??"
                             : f.python          ? f.function
                                                 : ShortFunctionName(f.function);
      std::string line = std::string(site ? "  → " : "    ") + std::to_string(k) + "  " + function +
                         "  " + Where(f);
      if (terminal_width > 8 && line.size() > terminal_width) {
        line = line.substr(0, terminal_width - 3) + "...";
      }
      out += line + "\n";
    }
  }
  return out;
}

std::string StacksCsv(const StacksReport& r) {
  std::string out = CsvLine(
      {"api", "calls", "total_ns", "mean_ns", "max_ns", "call_site", "frames"});
  for (const StackGroup& g : r.groups) {
    std::string frames;
    for (const FrameView& f : g.frames) {
      frames += (frames.empty() ? "" : " | ") +
                (f.function.empty() ? std::string("??")
                 : f.python         ? f.function
                                    : ShortFunctionName(f.function)) +
                " " + Where(f);
    }
    out += CsvLine({r.api, std::to_string(g.calls), std::to_string(g.total_ns),
                    std::to_string(g.total_ns / g.calls), std::to_string(g.max_ns),
                    g.site.Text(), frames});
  }
  if (r.calls_without_stack > 0) {
    out += CsvLine({r.api, std::to_string(r.calls_without_stack),
                    std::to_string(r.ns_without_stack),
                    std::to_string(r.ns_without_stack / r.calls_without_stack), "",
                    "(no recorded stack)", ""});
  }
  return out;
}

std::string StacksJson(const StacksReport& r) {
  JsonWriter j;
  j.BeginObject()
      .Field("api", r.api)
      .Field("calls", r.calls)
      .Field("total_ns", r.total_ns)
      .Field("calls_without_stack", r.calls_without_stack)
      .Field("ns_without_stack", r.ns_without_stack);
  j.Key("stacks").BeginArray();
  for (const StackGroup& g : r.groups) {
    j.BeginObject()
        .Field("calls", g.calls)
        .Field("total_ns", g.total_ns)
        .Field("mean_ns", g.total_ns / g.calls)
        .Field("max_ns", g.max_ns)
        .Field("call_site", g.site.Text());
    j.Key("frames").BeginArray();
    for (const FrameView& f : g.frames) {
      if (f.python) {
        j.BeginObject()
            .Field("function", f.function)
            .Field("python", true)
            .Field("file", f.file)
            .Field("line", f.line)
            .Field("framework", f.framework)
            .EndObject();
        continue;
      }
      j.BeginObject()
          .Field("function", f.function)
          .Field("module", f.module)
          .Field("module_offset", f.module_offset)
          .Field("build_id", f.build_id)
          .Field("cuda", f.cuda)
          .EndObject();
    }
    j.EndArray().EndObject();
  }
  j.EndArray().EndObject();
  return j.str();
}

}  // namespace libprof::analysis
