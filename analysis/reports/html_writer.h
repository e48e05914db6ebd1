// The small pieces every part of the HTML report writes with: text escaped for HTML, SVG
// coordinates printed short, and the Okabe-Ito colours (readable with every common form of
// colour blindness: Okabe & Ito, "Color Universal Design", 2008) that the page and its legends
// share.
//
// Layer: analysis/reports/. Pure string functions; no trace types.
#pragma once

#include <string>
#include <string_view>

namespace libprof::analysis {

// `text` with & < > " ' escaped, safe in element content and in quoted attributes; invalid
// UTF-8 bytes become U+FFFD so that the page always parses.
std::string HtmlEscape(std::string_view text);

// A coordinate for SVG: at most one decimal, no trailing ".0" ("12", "12.5", "-3").
std::string Coord(double value);

// `value` with exactly `decimals` decimals ("12.35"); "0" for a value that is not finite.
std::string Fixed(double value, int decimals);

// The palette. Each kind of work keeps its colour in every chart and legend.
namespace palette {
inline constexpr const char* kKernel = "#0072B2";     // blue
inline constexpr const char* kHtoD = "#E69F00";       // orange
inline constexpr const char* kDtoH = "#56B4E9";       // sky blue
inline constexpr const char* kDtoD = "#009E73";       // bluish green
inline constexpr const char* kOtherCopy = "#F0E442";  // yellow
inline constexpr const char* kMemset = "#CC79A7";     // reddish purple
inline constexpr const char* kGraph = "#000000";      // black
inline constexpr const char* kApi = "#8C8C8C";        // grey: host calls
inline constexpr const char* kNvtx = "#D9D0A0";       // pale sand: NVTX ranges behind the calls
inline constexpr const char* kFinding = "#D55E00";    // vermillion: blocked calls, findings
}  // namespace palette

}  // namespace libprof::analysis
