// The self-contained HTML report: sections of paragraphs, tables (sortable) and inline SVG charts.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "report/charts/svg.hpp"
#include "report/html/assets.hpp"

namespace ridge::chart {
namespace {

using detail::xml_escape;

// Exact sort key of a cell: integers as their decimal digits, reals with full precision, text: none.
std::string sort_value(const report::Cell& c) {
  if (c.is_empty()) return " data-v=\"\"";
  if (auto n = std::get_if<Count>(&c.value)) return " data-v=\"" + to_string(*n) + "\"";
  if (auto d = std::get_if<double>(&c.value)) return fmt::format(" data-v=\"{:.17g}\"", *d);
  return "";
}

std::string anchor(const std::string& text) {
  std::string out;
  for (char ch : text) {
    unsigned char c = static_cast<unsigned char>(ch);
    out += std::isalnum(c) ? static_cast<char>(std::tolower(c)) : '-';
  }
  return out.empty() ? "section" : out;
}

void write_table(const report::Table& t, std::string& out) {
  if (!t.title.empty()) out += "<h3>" + xml_escape(t.title) + "</h3>\n";
  out += fmt::format("<div class=\"scroll\"><table class=\"data sortable\" data-key=\"{}\">\n<thead><tr>", xml_escape(t.key));
  for (const auto& c : t.columns)
    out += fmt::format("<th title=\"{}\">{}</th>", xml_escape(c.key), xml_escape(c.title.empty() ? c.key : c.title));
  out += "</tr></thead>\n<tbody>\n";
  std::string foot;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    bool total = std::find(t.total_rows.begin(), t.total_rows.end(), static_cast<int>(r)) != t.total_rows.end();
    std::string& dest = total ? foot : out;
    dest += total ? "<tr>" : fmt::format("<tr data-row=\"{}\">", r);
    for (size_t c = 0; c < t.rows[r].size() && c < t.columns.size(); ++c) {
      const report::Cell& cell = t.rows[r][c];
      bool text = std::holds_alternative<std::string>(cell.value);
      dest += fmt::format("<td{}{}>{}</td>", text ? "" : " class=\"num\"", sort_value(cell),
                          xml_escape(report::format_cell(cell, t.columns[c].exact)));
    }
    dest += "</tr>\n";
  }
  out += "</tbody>\n";
  if (!foot.empty()) out += "<tfoot>\n" + foot + "</tfoot>\n";
  out += "</table></div>\n";
}

void write_fields(const report::Fields& f, std::string& out) {
  if (!f.title.empty()) out += "<h3>" + xml_escape(f.title) + "</h3>\n";
  out += fmt::format("<table class=\"fields\" data-key=\"{}\">\n", xml_escape(f.key));
  for (const auto& [col, cell] : f.items)
    out += fmt::format("<tr><th title=\"{}\">{}</th><td class=\"num\"{}>{}</td></tr>\n", xml_escape(col.key),
                       xml_escape(col.title.empty() ? col.key : col.title), sort_value(cell),
                       xml_escape(report::format_cell(cell, col.exact)));
  out += "</table>\n";
}

void write_section(const ReportSection& s, size_t index, std::string& out) {
  out += fmt::format("<section id=\"{}\">\n<h2>{}</h2>\n", anchor(s.id), xml_escape(s.title));
  for (const auto& p : s.paragraphs) out += "<p>" + xml_escape(p) + "</p>\n";
  for (const auto& b : s.blocks) {
    if (auto t = std::get_if<report::Table>(&b)) write_table(*t, out);
    else write_fields(std::get<report::Fields>(b), out);
  }
  // Element ids inside inline SVG share the page's namespace: prefix them by section and chart.
  std::vector<detail::Drawn> drawn;
  for (size_t c = 0; c < s.charts.size(); ++c) drawn.push_back(detail::draw_chart(s.charts[c], fmt::format("s{}c{}", index, c)));
  if (s.charts_side_by_side && !drawn.empty()) {
    out += "<figure>\n" + detail::svg_document(drawn, true) + "</figure>\n";
  } else {
    for (const auto& d : drawn) out += "<figure>\n" + detail::svg_document({d}, true) + "</figure>\n";
  }
  out += "</section>\n";
}

}  // namespace

std::string render_html(const ReportData& data) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<title>" + xml_escape(data.title) + "</title>\n<style>" + detail::kReportCss + "</style>\n</head>\n<body>\n";
  out += "<header>\n<h1>" + xml_escape(data.title) + "</h1>\n";
  for (const auto& line : data.subtitle) out += "<p>" + xml_escape(line) + "</p>\n";
  out += "<nav>";
  for (const auto& s : data.sections) out += fmt::format("<a href=\"#{}\">{}</a>", anchor(s.id), xml_escape(s.title));
  if (!data.notes.empty()) out += "<a href=\"#notes\">Notes</a>";
  out += "</nav>\n</header>\n<main>\n";
  for (size_t i = 0; i < data.sections.size(); ++i) write_section(data.sections[i], i, out);
  if (!data.notes.empty()) {
    out += "<section id=\"notes\">\n<h2>Notes</h2>\n<ul>\n";
    for (const auto& n : data.notes) out += "<li>" + xml_escape(n) + "</li>\n";
    out += "</ul>\n</section>\n";
  }
  out += "</main>\n<div id=\"tip\" hidden></div>\n<script>";
  out += detail::kReportJs;
  out += "</script>\n</body>\n</html>\n";
  return out;
}

void write_html(const ReportData& data, const std::string& path) {
  report::write_text_file(path, render_html(data));
}

}  // namespace ridge::chart
