// The skeleton of the HTML report: the document head with its inline style sheet, the page
// header, sections with ids (the tests look for them), tables from TableCells, and the end of
// the document. Everything is inline: the page needs no network, no server and no script to
// be read (hover titles are SVG <title>s).
//
// Layer: analysis/reports/. Pure string functions.
#pragma once

#include <string>
#include <string_view>

#include "analysis/reports/table_renderer.h"

namespace libprof::analysis {

// "<!DOCTYPE html>..." up to and including <body> and the page's <h1>.
std::string HtmlPageStart(std::string_view title, std::string_view subtitle);
// Closes the page; `footer` is escaped.
std::string HtmlPageEnd(std::string_view footer);

// <section id="id" class="section"><h2>title</h2> body </section>; `body` is HTML.
std::string HtmlSection(std::string_view id, std::string_view title, std::string_view body,
                        int level = 2);

// An HTML <table> of the cells (escaped), right-aligned where the column is; `css_class` is
// added to the table's class.
std::string HtmlTable(const TableCells& cells, std::string_view css_class = "");

// <p class="note"> with the escaped text.
std::string HtmlNote(std::string_view text);

}  // namespace libprof::analysis
