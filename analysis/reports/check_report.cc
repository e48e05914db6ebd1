#include "analysis/reports/check_report.h"

#include <algorithm>

#include "analysis/reports/table_renderer.h"

namespace libprof::analysis {
namespace {

size_t Failures(const std::vector<CheckOutcome>& outcomes) {
  return static_cast<size_t>(std::count_if(outcomes.begin(), outcomes.end(),
                                           [](const CheckOutcome& o) { return !o.passed; }));
}

std::string Joined(const std::vector<std::string>& inputs) {
  std::string out;
  for (const std::string& s : inputs) out += (out.empty() ? "" : " ") + s;
  return out;
}

}  // namespace

std::string XmlEscape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') {
          out += '?';
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string CheckTable(const std::vector<CheckOutcome>& outcomes,
                       const CheckReportContext& context) {
  std::string out = "Checked " + Joined(context.inputs) + "\n";
  if (!context.scope.empty()) out += "/step: " + context.scope + "\n";
  std::vector<std::vector<std::string>> rows;
  for (const CheckOutcome& o : outcomes) {
    rows.push_back({o.passed ? "PASS" : "FAIL", o.assertion, o.measured_text});
  }
  out += RenderTable({{"Result", Align::kLeft},
                      {"Assertion", Align::kLeft, /*shrinkable=*/true, 24},
                      {"Measured", Align::kLeft}},
                     rows, context.terminal_width);
  for (const CheckOutcome& o : outcomes) {
    if (!o.note.empty()) out += o.note + "\n";
  }
  const size_t failed = Failures(outcomes);
  const size_t n = outcomes.size();
  if (failed == 0) {
    out += n == 1 ? "The assertion holds.\n" : "All " + std::to_string(n) + " assertions hold.\n";
  } else {
    out += std::to_string(failed) + " of " + std::to_string(n) +
           (n == 1 ? " assertion failed.\n" : " assertions failed.\n");
  }
  return out;
}

std::string CheckJunit(const std::vector<CheckOutcome>& outcomes,
                       const CheckReportContext& context) {
  const std::string tests = std::to_string(outcomes.size());
  const std::string failures = std::to_string(Failures(outcomes));
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<testsuites name=\"profview check\" tests=\"" + tests + "\" failures=\"" + failures +
         "\" errors=\"0\">\n";
  out += "  <testsuite name=\"profview check\" tests=\"" + tests + "\" failures=\"" + failures +
         "\" errors=\"0\" skipped=\"0\">\n";
  out += "    <properties>\n      <property name=\"traces\" value=\"" +
         XmlEscape(Joined(context.inputs)) + "\"/>\n    </properties>\n";
  for (const CheckOutcome& o : outcomes) {
    out += "    <testcase classname=\"profview.check\" name=\"" + XmlEscape(o.assertion) +
           "\" time=\"0\">";
    const std::string note = o.note.empty() ? "" : " " + o.note;
    if (o.passed) {
      out += "<system-out>" + XmlEscape("measured " + o.measured_text + note) + "</system-out>";
    } else {
      out += "\n      <failure message=\"" + XmlEscape("measured " + o.measured_text) +
             "\" type=\"assertion\">" +
             XmlEscape(o.assertion + ": measured " + o.measured_text + note) + "</failure>\n    ";
    }
    out += "</testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace libprof::analysis
