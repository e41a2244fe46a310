// nvprof (legacy): --metrics output (text and CSV; aggregated per kernel signature, total = Invocations x Avg),
// the GPU summary (text, and CSV with a units row) and --print-gpu-trace CSV (units row).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "internal.hpp"

namespace ridge::ingest::detail {
namespace {

bool is_level(std::string_view t) {  // "(7)" in "High (7)"
  return t.size() >= 3 && t.front() == '(' && t.back() == ')';
}

// Invocations x Avg (exact when Avg is printed as an integer); rates and ratios stay averages.
std::optional<Value> total_of(std::string_view metric, std::string_view avg, Count invocations, NumberLocale loc) {
  auto [num, unit] = split_number_unit(avg);
  auto d = parse_decimal(num, loc);
  if (!d) return std::nullopt;
  Value v = to_base(*d, unit);
  if (!additive(metric, v.unit)) return v;
  return to_base(Decimal{d->mantissa * invocations, d->exp10}, unit);
}

void parse_metrics_text(const Source& s, Profile& out) {
  std::string device;
  KernelRecord* current = nullptr;
  bool in_metrics = false;
  for (size_t i = 0; i < s.lines.size(); ++i) {
    std::string_view line = s.lines[i];
    const int ln = static_cast<int>(i + 1);
    std::string_view body = trim(line);
    if (starts_with(line, "Invocations") && contains(line, "Metric Name")) {
      in_metrics = true;
      continue;
    }
    if (!in_metrics) continue;
    if (starts_with(line, "==")) {
      current = nullptr;
      continue;
    }
    if (starts_with(body, "Device \"")) {
      device = std::string(body.substr(8, body.size() > 9 ? body.size() - 9 : 0));
      continue;
    }
    if (starts_with(body, "Kernel: ")) {
      KernelRecord k = new_record(s, ln);
      k.name = std::string(body.substr(8));
      k.device = device;
      out.kernels.push_back(std::move(k));
      current = &out.kernels.back();
      continue;
    }
    if (current == nullptr || body.empty()) continue;
    auto tk = tokens(body);
    if (tk.size() < 5) {
      warn(out, s, ln, fmt::format("unreadable nvprof metric row '{}'", body));
      continue;
    }
    auto inv = parse_decimal(tk[0], NumberLocale::Dot);
    if (!inv || !inv->exact()) {
      warn(out, s, ln, fmt::format("nvprof metric row without an invocation count: '{}'", body));
      continue;
    }
    current->invocations = *inv->exact();
    std::string metric(tk[1]);
    std::string_view avg = tk.back();
    if (is_level(avg)) continue;  // utilization levels (Idle (0) .. Max (10)) are not amounts
    auto v = total_of(metric, avg, *inv->exact(), s.locale);
    if (!v) {
      warn(out, s, ln, fmt::format("nvprof metric {}: unreadable value '{}'", metric, avg));
      continue;
    }
    add_counter(*current, metric, *v);
  }
}

void parse_metrics_csv(const Source& s, size_t header, Profile& out) {
  auto h = split_csv(s.lines[header]);
  int dev = -1, kern = -1, inv = -1, name = -1, avg = -1;
  for (size_t c = 0; c < h.size(); ++c) {
    if (h[c] == "Device") dev = static_cast<int>(c);
    else if (h[c] == "Kernel") kern = static_cast<int>(c);
    else if (h[c] == "Invocations") inv = static_cast<int>(c);
    else if (h[c] == "Metric Name") name = static_cast<int>(c);
    else if (h[c] == "Avg") avg = static_cast<int>(c);
  }
  if (std::min({dev, kern, inv, name, avg}) < 0) {
    warn(out, s, static_cast<int>(header + 1),
         "nvprof metrics CSV header lacks one of Device, Kernel, Invocations, Metric Name, Avg; table skipped");
    return;
  }
  std::string last;
  for (size_t i = header + 1; i < s.lines.size(); ++i) {
    const int ln = static_cast<int>(i + 1);
    if (s.lines[i].empty() || s.lines[i][0] != '"') continue;
    auto row = split_csv(s.lines[i]);
    if (static_cast<int>(row.size()) <= std::max({dev, kern, inv, name, avg})) {
      warn(out, s, ln, "short nvprof metrics CSV row; skipped");
      continue;
    }
    std::string key = row[dev] + '\x1f' + row[kern];
    if (out.kernels.empty() || key != last) {
      KernelRecord k = new_record(s, ln);
      k.name = row[kern];
      k.device = row[dev];
      out.kernels.push_back(std::move(k));
      last = key;
    }
    auto n = parse_decimal(row[inv], NumberLocale::Dot);
    if (!n || !n->exact()) continue;
    out.kernels.back().invocations = *n->exact();
    if (is_level(tokens(row[avg]).empty() ? "" : tokens(row[avg]).back())) continue;
    if (auto v = total_of(row[name], row[avg], *n->exact(), s.locale)) add_counter(out.kernels.back(), row[name], *v);
    else warn(out, s, ln, fmt::format("nvprof metric {}: unreadable value '{}'", row[name], row[avg]));
  }
}

void parse_summary_text(const Source& s, size_t header, Profile& out) {
  TableRows t;
  t.titles = {"Type", "Time(%)", "Time", "Calls", "Avg", "Min", "Max", "Name"};
  t.units = {"", "%", "", "", "", "", "", ""};
  for (size_t i = header + 1; i < s.lines.size(); ++i) {
    std::string_view body = trim(s.lines[i]);
    if (body.empty() || starts_with(body, "API calls:") || starts_with(body, "==")) break;
    if (starts_with(body, "GPU activities:")) body = trim(body.substr(15));
    auto tk = tokens(body);
    if (tk.size() < 7) {
      warn(out, s, static_cast<int>(i + 1), fmt::format("unreadable nvprof summary row '{}'", body));
      continue;
    }
    std::vector<std::string> row = {"GPU activities"};
    for (size_t c = 0; c < 6; ++c) row.emplace_back(tk[c]);
    size_t name_at = static_cast<size_t>(tk[6].data() - body.data());
    row.emplace_back(body.substr(name_at));
    t.rows.push_back(std::move(row));
    t.row_lines.push_back(static_cast<int>(i + 1));
  }
  records_from_table(t, s, out, true);
}

// CSV with a units row under the header (summary and gpu-trace).
void parse_units_csv(const Source& s, size_t header, bool summary, Profile& out) {
  TableRows t;
  auto titles = split_csv(s.lines[header]);
  std::vector<std::string> units(titles.size());
  size_t first = header + 1;
  if (first < s.lines.size() && !s.lines[first].empty() && s.lines[first][0] != '"') {
    units = split_csv(s.lines[first]);
    units.resize(titles.size());
    ++first;
  }
  t.titles = titles;
  t.units = units;
  for (size_t i = first; i < s.lines.size(); ++i) {
    std::string_view line = s.lines[i];
    if (trim(line).empty() || starts_with(line, "==")) break;
    bool complete = true;
    auto row = split_csv(line, &complete);
    if (!complete || row.size() < titles.size()) {
      warn(out, s, static_cast<int>(i + 1), "truncated nvprof CSV row; skipped");
      continue;
    }
    t.rows.push_back(std::move(row));
    t.row_lines.push_back(static_cast<int>(i + 1));
  }
  records_from_table(t, s, out, summary);
}

}  // namespace

void parse_nvprof(const Source& s, Format f, Profile& out) {
  const size_t first = out.kernels.size();
  bool found = false;
  for (size_t i = 0; i < s.lines.size(); ++i) {
    std::string_view line = s.lines[i];
    if (f == Format::NvprofMetrics) {
      if (starts_with(line, "Invocations") && contains(line, "Metric Name")) {
        parse_metrics_text(s, out);
        found = true;
        break;
      }
      if (starts_with(line, "\"Device\",\"Kernel\",\"Invocations\"")) {
        parse_metrics_csv(s, i, out);
        found = true;
        break;
      }
    } else if (f == Format::NvprofSummary) {
      if (starts_with(trim(line), "Type") && contains(line, "Time(%)") && !contains(line, "\"")) {
        parse_summary_text(s, i, out);
        found = true;
      } else if (starts_with(line, "\"Type\",\"Time(%)\"")) {
        parse_units_csv(s, i, true, out);
        found = true;
      }
    } else if (f == Format::NvprofTrace && starts_with(line, "\"Start\",\"Duration\"")) {
      parse_units_csv(s, i, false, out);
      found = true;
    }
  }
  for (size_t i = 0; i < s.lines.size(); ++i) {
    std::string_view line = s.lines[i];
    if (contains(line, "No kernels were profiled")) warn(out, s, static_cast<int>(i + 1), "nvprof: no kernels were profiled");
    else if (starts_with(line, "======== Error:")) warn(out, s, static_cast<int>(i + 1), std::string(trim(line.substr(9))));
  }
  if (!found) warn(out, s, 0, fmt::format("{}: no result table found", format_name(f)));
  else if (out.kernels.size() == first) warn(out, s, 0, fmt::format("{}: result table is empty", format_name(f)));
}

}  // namespace ridge::ingest::detail
