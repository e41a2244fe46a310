// The self-contained HTML report: sections of paragraphs, tables (sortable) and inline SVG charts.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

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

bool is_total(const report::Table& t, size_t r) {
  return std::find(t.total_rows.begin(), t.total_rows.end(), static_cast<int>(r)) != t.total_rows.end();
}

// The rows `rows` of `t` (all when null) as one sortable table; total rows go to the footer.
void write_table(const report::Table& t, std::string& out, const std::vector<size_t>* rows = nullptr) {
  if (!t.title.empty() && !rows) out += "<h3>" + xml_escape(t.title) + "</h3>\n";
  out += fmt::format("<div class=\"scroll\"><table class=\"data sortable\" data-key=\"{}\">\n<thead><tr>", xml_escape(t.key));
  for (const auto& c : t.columns)
    out += fmt::format("<th title=\"{}\">{}</th>", xml_escape(c.key), xml_escape(c.title.empty() ? c.key : c.title));
  out += "</tr></thead>\n<tbody>\n";
  std::string foot;
  std::vector<size_t> all;
  if (!rows) {
    for (size_t r = 0; r < t.rows.size(); ++r) all.push_back(r);
    rows = &all;
  }
  for (size_t r : *rows) {
    bool total = is_total(t, r);
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

// Sum of column `col` over `rows`: exact for counts; empty when no row has a number there.
report::Cell column_sum(const report::Table& t, int col, const std::vector<size_t>& rows) {
  const report::Unit unit = t.columns[static_cast<size_t>(col)].unit;
  Count n = 0;
  double d = 0;
  bool any_count = false, any_real = false;
  for (size_t r : rows) {
    const auto& v = t.rows[r][static_cast<size_t>(col)].value;
    if (auto c = std::get_if<Count>(&v)) n += *c, any_count = true;
    else if (auto x = std::get_if<double>(&v); x && std::isfinite(*x)) d += *x, any_real = true;
  }
  if (any_real) return report::Cell::real(d + (any_count ? to_double(n) : 0.0), unit);
  return any_count ? report::Cell::count(n, unit) : report::Cell::empty(unit);
}

// A layer table as one collapsible <details> per module (the value of column `group_col`), in order of first
// appearance; each summary names the module, its layer count and the sums of `totals`.
void write_grouped_table(const report::Table& t, int group_col, const std::vector<std::string>& totals, std::string& out) {
  if (!t.title.empty()) out += "<h3>" + xml_escape(t.title) + "</h3>\n";
  std::vector<std::string> order;
  std::map<std::string, std::vector<size_t>> rows_of;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    if (is_total(t, r)) continue;
    auto* name = std::get_if<std::string>(&t.rows[r][static_cast<size_t>(group_col)].value);
    const std::string key = name ? *name : "";
    auto [it, added] = rows_of.try_emplace(key);
    if (added) order.push_back(key);
    it->second.push_back(r);
  }
  out += "<div class=\"modules\">\n";
  for (const std::string& g : order) {
    const auto& rows = rows_of[g];
    out += fmt::format("<details class=\"module\" data-module=\"{}\"><summary><span class=\"mod\">{}</span><span class=\"n\">{} "
                       "layer{}</span>",
                       xml_escape(g), xml_escape(g), rows.size(), rows.size() == 1 ? "" : "s");
    for (const std::string& key : totals) {
      const int col = t.column(key);
      if (col < 0) continue;
      const report::Cell sum = column_sum(t, col, rows);
      const auto& column = t.columns[static_cast<size_t>(col)];
      out += fmt::format("<span class=\"tot\" data-k=\"{}\"{}><em>{}</em> {}</span>", xml_escape(key), sort_value(sum),
                         xml_escape(column.title.empty() ? key : column.title), xml_escape(report::format_cell(sum)));
    }
    out += "</summary>\n";
    write_table(t, out, &rows);
    out += "</details>\n";
  }
  out += "</div>\n";
}

void write_fields(const report::Fields& f, std::string& out) {
  if (!f.title.empty()) out += "<h3>" + xml_escape(f.title) + "</h3>\n";
  out += fmt::format("<table class=\"fields\" data-key=\"{}\">\n", xml_escape(f.key));
  for (const auto& [col, cell] : f.items)
    out += fmt::format("<tr><th title=\"{}\">{}</th><td class=\"num\"{}>{}</td></tr>\n", xml_escape(col.key),
                       xml_escape(col.title.empty() ? col.key : col.title), sort_value(cell),
                       xml_escape(report::format_field(cell, col.exact)));
  out += "</table>\n";
}

void write_section(const ReportSection& s, size_t index, std::string& out) {
  out += fmt::format("<section id=\"{}\"{}>\n<h2>{}</h2>\n", anchor(s.id), s.headline ? " class=\"headline\"" : "",
                     xml_escape(s.title));
  for (const auto& p : s.paragraphs) out += "<p>" + xml_escape(p) + "</p>\n";
  if (s.headline) out += "<div class=\"blocks\">\n";
  for (const auto& b : s.blocks) {
    if (s.headline) out += "<div class=\"block\">";
    if (auto t = std::get_if<report::Table>(&b)) {
      const int group_col = s.group_by.empty() ? -1 : t->column(s.group_by);
      if (group_col >= 0) write_grouped_table(*t, group_col, s.group_totals, out);
      else write_table(*t, out);
    } else {
      write_fields(std::get<report::Fields>(b), out);
    }
    if (s.headline) out += "</div>\n";
  }
  if (s.headline) out += "</div>\n";
  // Element ids inside inline SVG share the page's namespace: prefix them by section and chart.
  std::vector<detail::Drawn> drawn;
  for (size_t c = 0; c < s.charts.size(); ++c) drawn.push_back(detail::draw_chart(s.charts[c], fmt::format("s{}c{}", index, c)));
  if (s.charts_side_by_side && !drawn.empty()) {  // one SVG: the plots share one pixel scale (rooflines)
    out += "<figure>\n" + detail::svg_document(drawn, true) + "</figure>\n";
  } else if (s.charts_in_grid || s.headline) {  // a row that wraps: two charts side by side, each scaled to half
    out += "<div class=\"chart-row\">\n";
    for (const auto& d : drawn) out += "<figure>\n" + detail::svg_document({d}, true) + "</figure>\n";
    out += "</div>\n";
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
