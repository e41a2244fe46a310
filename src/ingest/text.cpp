// Line, CSV and fixed-width table splitting shared by every reader, and the generic table -> records step
// used by the trace and summary formats (nsys, nvprof, torch.profiler).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "internal.hpp"
#include "ridge/text.hpp"

namespace ridge::ingest::detail {

Lines::Lines(std::string_view text) {
  size_t start = 0;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") start = 3;  // UTF-8 byte-order mark
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    // progress bars rewrite the line with '\r': keep what was printed last
    size_t cr = line.rfind('\r');
    if (cr != std::string_view::npos && cr + 1 == line.size()) {
      line.remove_suffix(1);
      cr = line.rfind('\r');
    }
    if (cr != std::string_view::npos) line.remove_prefix(cr + 1);
    if (end == text.size() && line.empty()) break;
    lines.push_back(line);
    start = end + 1;
  }
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }

size_t indent(std::string_view s) {
  size_t n = 0;
  while (n < s.size() && s[n] == ' ') ++n;
  return n;
}

std::vector<std::string> split_csv(std::string_view line, bool* complete) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          out.back() += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  if (complete) *complete = !quoted;
  return out;
}

std::vector<std::string_view> tokens(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    size_t start = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

bool is_dash_rule(std::string_view s) {
  s = trim(s);
  if (s.size() < 3 || s.find("---") == std::string_view::npos) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return c == '-' || c == ' '; });
}

std::vector<std::pair<size_t, size_t>> dash_spans(std::string_view rule) {
  std::vector<std::pair<size_t, size_t>> spans;
  size_t i = 0;
  while (i < rule.size()) {
    while (i < rule.size() && rule[i] != '-') ++i;
    size_t start = i;
    while (i < rule.size() && rule[i] == '-') ++i;
    if (i > start) spans.emplace_back(start, i);
  }
  return spans;
}

std::vector<std::string> fixed_cells(std::string_view row, const std::vector<std::pair<size_t, size_t>>& spans) {
  std::vector<std::string> cells;
  cells.reserve(spans.size());
  for (size_t c = 0; c < spans.size(); ++c) {
    size_t begin = c == 0 ? 0 : spans[c - 1].second + 1;
    size_t end = c + 1 == spans.size() ? row.size() : spans[c].second + 1;
    if (begin >= row.size()) {
      cells.emplace_back();
      continue;
    }
    cells.emplace_back(trim(row.substr(begin, end > begin ? end - begin : 0)));
  }
  return cells;
}

void warn(Profile& p, const Source& s, int line, std::string message) {
  p.warnings.push_back(Warning{s.file, line, std::move(message)});
}

void run_boundary(Profile& p, const Source& s, int line, std::string why) {
  p.runs.push_back(Run{s.file, line, s.label, std::move(why)});
}

KernelRecord new_record(const Source& s, int line) {
  KernelRecord r;
  r.file = s.file;
  r.line = line;
  r.label = s.label;
  return r;
}

void add_counter(KernelRecord& r, const std::string& metric, const Value& v) {
  auto [it, inserted] = r.counters.try_emplace(metric, v);
  if (inserted) return;
  Value& cur = it->second;
  cur.real += v.real;
  if (cur.exact && v.exact) *cur.exact += *v.exact;
  else cur.exact.reset();
}

namespace {

int find_column(const TableRows& t, std::initializer_list<std::string_view> names, bool allow_percent = false) {
  for (std::string_view n : names)
    for (size_t c = 0; c < t.titles.size(); ++c)
      if (ascii_lower(t.titles[c]) == n && (allow_percent || t.units[c] != "%")) return static_cast<int>(c);
  return -1;
}

// Columns whose values add up over rows (a summary's total time, a trace's durations and byte sizes).
constexpr std::string_view kDurationTitles[] = {"duration", "total time", "time", "self cuda", "self device"};
constexpr std::string_view kByteTitles[] = {"bytes", "size", "total"};

}  // namespace

void records_from_table(const TableRows& t, const Source& s, Profile& out, bool summary) {
  const int name_col = find_column(t, {"name", "kernel name", "operation", "kernel"});
  const int count_col = find_column(t, {"instances", "calls", "count", "num calls", "invocations", "# of calls"});
  const int device_col = find_column(t, {"device"});
  const int id_col = find_column(t, {"corrid", "correlation_id"});
  const int type_col = find_column(t, {"type"});
  int duration_col = -1, bytes_col = -1;
  for (std::string_view d : kDurationTitles)
    if (duration_col < 0) duration_col = find_column(t, {d});
  for (std::string_view b : kByteTitles)
    if (bytes_col < 0) bytes_col = find_column(t, {b});
  if (name_col < 0) {
    warn(out, s, t.row_lines.empty() ? 0 : t.row_lines[0], "table without a Name column; skipped");
    return;
  }
  int skipped_events = 0, first_skipped = 0;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    const auto& row = t.rows[r];
    auto cell = [&](int c) -> std::string_view {
      return c >= 0 && c < static_cast<int>(row.size()) ? std::string_view(row[c]) : std::string_view();
    };
    if (type_col >= 0 && contains(cell(type_col), "API")) continue;
    KernelRecord k = new_record(s, t.row_lines[r]);
    k.name = std::string(cell(name_col));
    if (k.name.empty()) continue;
    k.memop = k.name[0] == '[' || contains(k.name, "memcpy") || contains(k.name, "memset");
    k.device = std::string(cell(device_col));
    if (id_col >= 0)
      if (auto d = parse_decimal(cell(id_col), NumberLocale::Dot); d && d->exact()) k.launch_id = static_cast<int64_t>(*d->exact());
    if (count_col >= 0) {
      auto d = parse_decimal(cell(count_col), s.locale);
      if (d && d->exact() && *d->exact() >= 0) k.invocations = *d->exact();
    }
    std::optional<Value> duration;
    if (duration_col >= 0 && !cell(duration_col).empty()) {
      std::string_view unit = t.units[duration_col];
      duration = unit.empty() ? parse_with_unit(cell(duration_col), s.locale)
                              : parse_in_unit(cell(duration_col), unit, s.locale);
    }
    if (!duration) {
      if (!summary && cell(duration_col).empty()) {
        if (skipped_events++ == 0) first_skipped = t.row_lines[r];
        continue;  // nvprof Unified Memory fault rows carry no duration
      }
      warn(out, s, t.row_lines[r], fmt::format("'{}': unreadable duration '{}'", k.name, cell(duration_col)));
    } else {
      add_counter(k, t.titles[duration_col], *duration);
    }
    if (bytes_col >= 0 && !cell(bytes_col).empty()) {
      std::string_view unit = t.units[bytes_col];
      auto v = unit.empty() ? parse_with_unit(cell(bytes_col), s.locale) : parse_in_unit(cell(bytes_col), unit, s.locale);
      if (v) add_counter(k, t.titles[bytes_col] + " transferred", *v);
    }
    out.kernels.push_back(std::move(k));
  }
  if (skipped_events > 0)
    warn(out, s, first_skipped,
         fmt::format("{} rows without a duration (Unified Memory events) skipped", skipped_events));
}

}  // namespace ridge::ingest::detail

namespace ridge::ingest {

std::string Warning::text() const {
  return line > 0 ? fmt::format("{}:{}: {}", file, line, message) : fmt::format("{}: {}", file, message);
}

}  // namespace ridge::ingest
