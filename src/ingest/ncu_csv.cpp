// Nsight Compute --csv: the details page (one row per metric per launch; 12, 14 or 15+ columns, located by
// name) and --page raw (one row per launch, one column per metric, a units row under the header).
#include <fmt/format.h>

#include <set>

#include "internal.hpp"

namespace ridge::ingest::detail {
namespace {

constexpr size_t kMaxContinuationLines = 64;

// Columns that describe the launch rather than hold a metric (raw page).
const std::set<std::string, std::less<>> kLaunchColumns = {
    "ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Kernel Time", "Context", "Stream",
    "Block Size", "Grid Size", "Device", "CC", "Section Name", "Metric Name", "Metric Unit", "Metric Value",
    "Rule Name", "Rule Type", "Rule Description", "Estimated Speedup Type", "Estimated Speedup"};

struct Header {
  std::vector<std::string> names;
  int id = -1, pid = -1, process = -1, kernel = -1, device = -1, metric = -1, unit = -1, value = -1;
  std::vector<int> nvtx;
  bool raw() const { return metric < 0; }
};

Header read_header(const std::vector<std::string>& cells) {
  Header h;
  h.names = cells;
  for (size_t c = 0; c < cells.size(); ++c) {
    const std::string& n = cells[c];
    int i = static_cast<int>(c);
    if (n == "ID") h.id = i;
    else if (n == "Process ID") h.pid = i;
    else if (n == "Process Name") h.process = i;
    else if (n == "Kernel Name") h.kernel = i;
    else if (n == "Device") h.device = i;
    else if (n == "Metric Name") h.metric = i;
    else if (n == "Metric Unit") h.unit = i;
    else if (n == "Metric Value") h.value = i;
    else if (contains(n, "Domain:")) h.nvtx.push_back(i);
  }
  return h;
}

// ` "0:<default domain>:convLayer:none:none" ` -> "convLayer" (several quoted entries are '/'-joined).
std::string nvtx_from_cell(std::string_view cell) {
  std::string out;
  size_t pos = 0;
  while (pos < cell.size()) {
    size_t open = cell.find('"', pos);
    size_t close = open == std::string_view::npos ? std::string_view::npos : cell.find('"', open + 1);
    std::string_view entry = open == std::string_view::npos ? trim(cell.substr(pos)) : cell.substr(open + 1, close - open - 1);
    if (entry.empty()) break;
    size_t domain_end = entry.find(">:");
    std::string_view rest = domain_end == std::string_view::npos ? entry : entry.substr(domain_end + 2);
    std::string_view range = rest.substr(0, rest.find(':'));
    if (!range.empty()) {
      if (!out.empty()) out.push_back('/');
      out.append(range);
    }
    if (close == std::string_view::npos) break;
    pos = close + 1;
  }
  return out;
}

std::string_view field(const std::vector<std::string>& row, int c) {
  return c >= 0 && c < static_cast<int>(row.size()) ? std::string_view(row[c]) : std::string_view();
}

}  // namespace

void parse_ncu_csv(const Source& s, Profile& out) {
  Header h;
  bool have_header = false, expect_units = false;
  std::vector<std::string> raw_units;
  std::string last_key;
  KernelRecord* current = nullptr;
  int stray_lines = 0, first_stray = 0;
  std::set<std::string> unreadable;
  const size_t first = out.kernels.size();
  size_t run_start = first;  // records of the current run begin here
  int64_t last_id = -1;
  auto new_run = [&](int line, std::string why) {
    if (out.kernels.size() == run_start) return;  // nothing read yet: still the same run
    run_boundary(out, s, line, std::move(why));
    run_start = out.kernels.size();
  };
  for (size_t i = 0; i < s.lines.size(); ++i) {
    std::string_view line = s.lines[i];
    const int ln = static_cast<int>(i + 1);
    if (starts_with(line, "\"ID\",")) {
      new_run(ln, "the CSV header again");
      last_id = -1;
      h = read_header(split_csv(line));
      have_header = h.id >= 0 && h.kernel >= 0 && (h.raw() || h.value >= 0);
      if (!have_header) warn(out, s, ln, "ncu CSV header without ID / Kernel Name / Metric Value columns");
      expect_units = h.raw();
      last_key.clear();
      current = nullptr;
      continue;
    }
    if (starts_with(line, "==")) {
      if (contains(line, "No kernels were profiled")) warn(out, s, ln, "ncu: no kernels were profiled");
      continue;
    }
    if (!have_header) continue;
    if (line.empty() || line[0] != '"') {
      if (!trim(line).empty() && stray_lines++ == 0) first_stray = ln;
      continue;
    }
    bool complete = true;
    auto row = split_csv(line, &complete);
    if (!complete) {  // a quoted rule description can span lines
      std::string joined(line);
      size_t j = i + 1;
      for (; !complete && j < s.lines.size() && j < i + kMaxContinuationLines; ++j) {
        joined += '\n';
        joined += s.lines[j];
        row = split_csv(joined, &complete);
      }
      if (!complete) {
        warn(out, s, ln, "truncated CSV row (unterminated quote); skipped");
        continue;
      }
      i = j - 1;
    }
    if (expect_units) {
      expect_units = false;
      if (field(row, h.id).empty()) {
        raw_units = row;
        continue;
      }
    }
    if (row.size() <= static_cast<size_t>(h.kernel)) {
      warn(out, s, ln, fmt::format("CSV row with {} fields, expected {}; skipped", row.size(), h.names.size()));
      continue;
    }
    std::string key = std::string(field(row, h.id)) + '\x1f' + std::string(field(row, h.pid)) + '\x1f' +
                      std::string(field(row, h.kernel));
    if (current == nullptr || key != last_key) {
      int64_t id = -1;
      if (auto d = parse_decimal(field(row, h.id), NumberLocale::Dot); d && d->exact() && *d->exact() >= 0 &&
                                                                           *d->exact() < (Count(1) << 62))
        id = static_cast<int64_t>(*d->exact());
      if (id >= 0 && id < last_id) new_run(ln, fmt::format("launch IDs restart at {}", id));
      if (id >= 0) last_id = id;
      KernelRecord k = new_record(s, ln);
      k.name = std::string(field(row, h.kernel));
      k.process = std::string(field(row, h.process));
      k.device = std::string(field(row, h.device));
      k.launch_id = id;
      if (auto d = parse_decimal(field(row, h.pid), NumberLocale::Dot); d && d->exact()) k.pid = static_cast<int64_t>(*d->exact());
      for (int c : h.nvtx) {
        std::string r = nvtx_from_cell(field(row, c));
        if (r.empty()) continue;
        if (!k.nvtx.empty()) k.nvtx.push_back('/');
        k.nvtx.append(r);
      }
      out.kernels.push_back(std::move(k));
      current = &out.kernels.back();
      last_key = std::move(key);
    }
    auto store = [&](const std::string& metric, std::string_view unit, std::string_view text) {
      if (metric.empty()) return;
      auto d = parse_decimal(text, s.locale);
      if (!d) {
        if (text == "n/a" || starts_with(text, "(!)")) {
          if (unreadable.insert(metric).second)
            warn(out, s, ln, fmt::format("metric {} has value '{}' (not collected)", metric, text));
        }
        return;
      }
      add_counter(*current, metric, to_base(*d, unit));
    };
    if (h.raw()) {
      for (size_t c = 0; c < row.size() && c < h.names.size(); ++c)
        if (!kLaunchColumns.count(h.names[c]) && !contains(h.names[c], "Domain:"))
          store(h.names[c], c < raw_units.size() ? std::string_view(raw_units[c]) : std::string_view(), row[c]);
    } else {
      std::string metric(field(row, h.metric));
      if (metric.empty()) continue;  // rule rows: section id + rule name/type/description, no metric
      store(metric, field(row, h.unit), field(row, h.value));
    }
  }
  if (stray_lines > 0)
    warn(out, s, first_stray, fmt::format("{} non-CSV lines after the header ignored (program output?)", stray_lines));
  if (out.kernels.size() == first && !contains(s.text, "No kernels were profiled"))
    warn(out, s, 0, have_header ? "ncu CSV: header but no metric rows" : "ncu CSV: no header line starting \"ID\",");
}

}  // namespace ridge::ingest::detail
