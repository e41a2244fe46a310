// Nsight Systems: gputrace / cuda_gpu_trace (per launch) and the kernel / memory-time summaries
// (cuda_gpu_kern_sum, gpukernsum, cuda_gpu_mem_time_sum, gpumemtimesum), each as CSV or as a text table
// (fixed width under a dashed rule, or whitespace-separated with the name last). Tables are recognised by
// their columns, whatever the report is called in the nsys version at hand.
#include <fmt/format.h>

#include "internal.hpp"

namespace ridge::ingest::detail {
namespace {

enum class Kind { Trace, Summary, Other };

Kind classify(const std::vector<std::string>& titles) {
  auto has = [&](std::string_view t) {
    for (const auto& x : titles)
      if (x == t) return true;
    return false;
  };
  if (has("Start") && has("Duration")) return Kind::Trace;
  if (has("Total Time") && (has("Instances") || (has("Operation") && has("Count")))) return Kind::Summary;
  return Kind::Other;
}

bool is_header(std::string_view line) {
  return contains(line, "Start (ns)") || contains(line, "Total Time (ns)") || contains(line, "Total (MB)");
}

bool ends_table(std::string_view line) {
  std::string_view t = trim(line);
  return t.empty() || starts_with(t, "Processing [") || starts_with(t, "SKIPPED:") || starts_with(t, "[") ||
         starts_with(t, "Generated:") || starts_with(t, "** ");
}

// Titles of a text header: cells under the rule's spans, or runs separated by two or more spaces.
std::vector<std::string> text_titles(std::string_view header, const std::vector<std::pair<size_t, size_t>>* spans) {
  if (spans) return fixed_cells(header, *spans);
  std::vector<std::string> out;
  std::string_view h = trim(header);
  size_t i = 0;
  while (i < h.size()) {
    size_t gap = h.find("  ", i);
    if (gap == std::string_view::npos) gap = h.size();
    out.emplace_back(trim(h.substr(i, gap - i)));
    i = gap;
    while (i < h.size() && h[i] == ' ') ++i;
  }
  return out;
}

// Reads one table starting at `header`; returns the index of the first line after it.
size_t read_table(const Source& s, size_t header, TableRows& t, Profile& out) {
  std::string_view h = s.lines[header];
  const bool csv = contains(h, ",") && !contains(h, "  ");
  std::vector<std::string> raw;
  std::vector<std::pair<size_t, size_t>> spans;
  size_t i = header + 1;
  if (csv) {
    raw = split_csv(h);
  } else if (i < s.lines.size() && is_dash_rule(s.lines[i])) {
    spans = dash_spans(s.lines[i]);
    raw = text_titles(h, &spans);
    ++i;
  } else {
    raw = text_titles(h, nullptr);
  }
  for (const auto& title : raw) {
    auto [name, unit] = split_title_unit(title);
    t.titles.push_back(name);
    t.units.push_back(unit);
  }
  for (; i < s.lines.size() && !ends_table(s.lines[i]); ++i) {
    std::string_view line = s.lines[i];
    std::vector<std::string> row;
    if (csv) {
      bool complete = true;
      row = split_csv(line, &complete);
      if (!complete || row.size() < raw.size()) {  // a row cut short: its last cells would read as empty or wrong
        warn(out, s, static_cast<int>(i + 1), "truncated nsys CSV row; skipped");
        continue;
      }
    } else if (!spans.empty()) {
      row = fixed_cells(line, spans);
    } else {
      auto tk = tokens(line);
      if (tk.size() < raw.size()) continue;
      for (size_t c = 0; c + 1 < raw.size(); ++c) row.emplace_back(tk[c]);
      row.emplace_back(line.substr(static_cast<size_t>(tk[raw.size() - 1].data() - line.data())));
    }
    row.resize(raw.size());
    t.rows.push_back(std::move(row));
    t.row_lines.push_back(static_cast<int>(i + 1));
  }
  return i;
}

}  // namespace

void parse_nsys(const Source& s, Format f, Profile& out) {
  std::vector<TableRows> traces, summaries;
  for (size_t i = 0; i < s.lines.size(); ++i) {
    if (contains(s.lines[i], "does not contain CUDA"))
      warn(out, s, static_cast<int>(i + 1), std::string(trim(s.lines[i])));
    if (!is_header(s.lines[i])) continue;
    TableRows t;
    size_t next = read_table(s, i, t, out);
    Kind k = classify(t.titles);
    if (k == Kind::Trace) traces.push_back(std::move(t));
    else if (k == Kind::Summary) summaries.push_back(std::move(t));
    i = next > i ? next - 1 : i;
  }
  const size_t first = out.kernels.size();
  for (const auto& t : traces) records_from_table(t, s, out, false);
  if (!traces.empty() && !summaries.empty())
    warn(out, s, 0, "nsys: per-launch trace and summary tables in one file; the summaries were not added again");
  else
    for (const auto& t : summaries) records_from_table(t, s, out, true);
  if (out.kernels.size() == first)
    warn(out, s, 0, fmt::format("{}: no CUDA kernel or memory-operation table found", format_name(f)));
}

}  // namespace ridge::ingest::detail
