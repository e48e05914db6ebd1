// Formats `profview check` (rules/run_checks.h): one line per assertion with its measured
// value, and the same as JUnit XML so that CI systems show each assertion as a test.
//
// Layer: analysis/reports/. Pure formatting.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "analysis/rules/run_checks.h"

namespace libprof::analysis {

// What was checked, for the title line and the JUnit suite name.
struct CheckReportContext {
  std::vector<std::string> inputs;
  std::string scope;  // "" or "per iteration of NVTX range 'step' (20 iterations)"
  size_t terminal_width = 120;
};

// A table (Result, Assertion, Measured) under a title, and a last line "All 5 assertions
// hold." or "2 of 5 assertions failed.".
std::string CheckTable(const std::vector<CheckOutcome>& outcomes,
                       const CheckReportContext& context);

// JUnit XML: one <testsuite name="profview check"> with a <testcase> per assertion, a
// <failure> for each that failed (message: the measured value).
std::string CheckJunit(const std::vector<CheckOutcome>& outcomes,
                       const CheckReportContext& context);

// `text` with &, <, >, " and ' escaped for XML, and control characters other than tab, CR and
// LF (not allowed in XML 1.0) replaced by '?'.
std::string XmlEscape(const std::string& text);

}  // namespace libprof::analysis
