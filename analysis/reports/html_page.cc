#include "analysis/reports/html_page.h"

#include "analysis/reports/html_writer.h"

namespace libprof::analysis {
namespace {

// One style sheet for the page and its SVGs. Colours: html_writer.h's palette.
constexpr const char* kStyle = R"CSS(
:root { --ink: #1d1d1f; --muted: #5f6368; --rule: #d8d8dc; --band: #f6f6f8; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans",
       sans-serif; color: var(--ink); background: #fff; }
main { max-width: 1320px; margin: 0 auto; padding: 18px 28px 40px; }
header.page { border-bottom: 2px solid var(--ink); margin-bottom: 14px; padding-bottom: 8px; }
h1 { font-size: 22px; margin: 0 0 2px; }
h2 { font-size: 18px; margin: 26px 0 8px; padding-bottom: 3px; border-bottom: 1px solid var(--rule); }
h3 { font-size: 15px; margin: 18px 0 6px; }
.subtitle, .note, .caption-text { color: var(--muted); }
.note { font-size: 12.5px; margin: 4px 0 8px; max-width: 1100px; }
.headline { display: flex; flex-wrap: wrap; gap: 10px; margin: 6px 0 4px; }
.stat { border: 1px solid var(--rule); border-radius: 6px; padding: 8px 14px; min-width: 170px;
        background: var(--band); }
.stat .value { font-size: 20px; font-weight: 600; }
.stat .label { font-size: 12px; color: var(--muted); }
.stat.warn { border-color: #D55E00; }
table { border-collapse: collapse; margin: 6px 0 12px; font-size: 12.5px; }
th, td { padding: 3px 9px; border-bottom: 1px solid var(--rule); text-align: left;
         vertical-align: top; }
th { background: var(--band); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.name { max-width: 640px; overflow-wrap: anywhere; }
tbody tr:hover { background: #fbf6e8; }
ol.findings { padding-left: 22px; margin: 6px 0; }
ol.findings li { margin: 0 0 9px; max-width: 1150px; }
.rule { font-weight: 600; color: #D55E00; }
.site, .nvtx-path { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12px;
                    color: var(--muted); display: block; }
a { color: #0072B2; }
.legend { display: flex; flex-wrap: wrap; gap: 6px 16px; font-size: 12px; margin: 4px 0 6px; }
.legend .key { display: inline-flex; align-items: center; gap: 5px; }
.swatch { width: 14px; height: 10px; display: inline-block; border: 1px solid rgba(0,0,0,.25); }
.swatch.blocked { background: none; border: 2px solid #D55E00; }
.figure { overflow-x: auto; }
svg { display: block; font-size: 11px; }
svg text { fill: var(--ink); }
svg .tick { text-anchor: middle; fill: var(--muted); font-size: 10.5px; }
svg .tick.end { text-anchor: end; }
svg .caption { text-anchor: middle; fill: var(--muted); font-size: 11.5px; }
svg .caption.start { text-anchor: start; }
svg .axis-line { stroke: #8a8a8e; stroke-width: 1; }
svg .grid { stroke: #ececef; stroke-width: 1; }
svg .lane-bg { fill: #000; fill-opacity: .02; }
svg .lane-bg.odd { fill: #1d1d50; fill-opacity: .055; }
svg .lane-label { text-anchor: end; font-size: 11px; }
svg .row-hit { fill: transparent; }
.api, svg .api { fill: #8C8C8C; background: #8C8C8C; }
.nvtx, svg .nvtx { fill: #D9D0A0; background: #D9D0A0; }
svg rect.nvtx { stroke: #a89c5e; stroke-width: .5; }
.kernel, svg .kernel { fill: #0072B2; background: #0072B2; }
.htod, svg .htod { fill: #E69F00; background: #E69F00; }
.dtoh, svg .dtoh { fill: #56B4E9; background: #56B4E9; }
.dtod, svg .dtod { fill: #009E73; background: #009E73; }
.copy, svg .copy { fill: #F0E442; background: #F0E442; }
svg rect.copy { stroke: #8f8526; stroke-width: .5; }
.memset, svg .memset { fill: #CC79A7; background: #CC79A7; }
.graph, svg .graph { fill: #000000; background: #000000; }
svg .blocked-call { fill: none; stroke: #D55E00; stroke-width: 1.6; }
svg .blocked line { stroke: #D55E00; stroke-width: 1.6; }
svg .arrow-head { fill: #D55E00; }
svg .series { fill: none; stroke-width: 1.6; }
svg .area { opacity: .35; }
svg .bar { fill: #0072B2; }
svg .best { stroke: var(--ink); stroke-width: 2; }
svg .limit { stroke: #D55E00; stroke-width: 1.5; stroke-dasharray: 4 3; }
svg .value-label { font-size: 11px; fill: var(--ink); }
svg .finding-band { fill: #D55E00; opacity: .16; }
svg .start-up-band { fill: #777; opacity: .10; }
svg .start-up-label { text-anchor: end; fill: #666; font-size: 11px; }
svg .one-time-band { fill: #CC79A7; opacity: .12; }
svg .one-time-label { text-anchor: middle; fill: #8a4f72; font-size: 11px; }
svg .highlight-label { text-anchor: middle; fill: #D55E00; font-size: 11px; font-weight: 600; }
svg .slice-label { font-size: 10.5px; fill: #fff; pointer-events: none; }
svg .nvtx-label, svg .copy-label, svg .htod-label, svg .dtoh-label { fill: #1d1d1f; }
footer { margin-top: 30px; color: var(--muted); font-size: 12px; border-top: 1px solid var(--rule);
         padding-top: 8px; }
)CSS";

}  // namespace

std::string HtmlPageStart(std::string_view title, std::string_view subtitle) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
         "<meta name=\"generator\" content=\"profview report\">\n<title>" +
         HtmlEscape(title) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n<main>\n" +
         "<header class=\"page\"><h1>" + HtmlEscape(title) + "</h1><div class=\"subtitle\">" +
         HtmlEscape(subtitle) + "</div></header>\n";
}

std::string HtmlPageEnd(std::string_view footer) {
  return "<footer>" + HtmlEscape(footer) + "</footer>\n</main>\n</body>\n</html>\n";
}

std::string HtmlSection(std::string_view id, std::string_view title, std::string_view body,
                        int level) {
  const std::string h = level == 3 ? "h3" : "h2";
  return "<section id=\"" + HtmlEscape(id) + "\" class=\"section\"><" + h + ">" +
         HtmlEscape(title) + "</" + h + ">\n" + std::string(body) + "</section>\n";
}

std::string HtmlTable(const TableCells& cells, std::string_view css_class) {
  std::string html = "<table class=\"data" +
                     (css_class.empty() ? std::string() : " " + HtmlEscape(css_class)) +
                     "\"><thead><tr>";
  for (const TableColumn& c : cells.columns) {
    html += std::string("<th") + (c.align == Align::kRight ? " class=\"num\"" : "") + ">" +
            HtmlEscape(c.header) + "</th>";
  }
  html += "</tr></thead><tbody>";
  for (const auto& row : cells.rows) {
    html += "<tr>";
    for (size_t i = 0; i < row.size() && i < cells.columns.size(); ++i) {
      const TableColumn& c = cells.columns[i];
      const char* cls = c.align == Align::kRight ? " class=\"num\""
                        : c.shrinkable           ? " class=\"name\""
                                                 : "";
      html += std::string("<td") + cls + ">" + HtmlEscape(row[i]) + "</td>";
    }
    html += "</tr>";
  }
  return html + "</tbody></table>\n";
}

std::string HtmlNote(std::string_view text) {
  return "<p class=\"note\">" + HtmlEscape(text) + "</p>\n";
}

}  // namespace libprof::analysis
