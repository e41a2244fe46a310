// Nsight Compute plain text: the legacy layout (70/15/30 columns under a dashed rule), the 2024+ layout
// (per-table widths under a "Metric Name / Metric Unit / Metric Value" header, grid/block in the kernel
// header) and `--print-summary per-kernel` (Minimum/Maximum/Average; totals = Average x invocations).
#include <fmt/format.h>

#include <cctype>
#include <set>

#include "internal.hpp"

namespace ridge::ingest::detail {
namespace {

struct TableState {
  bool open = false;
  int rows = 0;
  bool per_kernel = false;  // Minimum / Maximum / Average columns
  bool header_seen = false;
  std::vector<std::pair<size_t, size_t>> spans;
};

bool is_process_header(std::string_view line, int64_t* pid, std::string* process) {
  if (line.size() < 4 || line[0] != '[') return false;
  size_t close = line.find("] ");
  if (close == std::string_view::npos || close < 2) return false;
  int64_t v = 0;
  for (size_t i = 1; i < close; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(line[i]))) return false;
    v = v * 10 + (line[i] - '0');
    if (v > (int64_t(1) << 40)) return false;
  }
  std::string_view rest = line.substr(close + 2);
  size_t at = rest.rfind('@');
  if (at == std::string_view::npos) return false;
  *pid = v;
  *process = std::string(rest.substr(0, at));
  return true;
}

// Cuts a trailing ", <marker><anything>" from the kernel header (searching from the right).
bool cut_suffix(std::string_view& s, std::string_view marker, std::string_view* tail = nullptr) {
  size_t p = s.rfind(marker);
  if (p == std::string_view::npos) return false;
  if (tail) *tail = s.substr(p + marker.size());
  s = s.substr(0, p);
  return true;
}

bool is_date(std::string_view s) {  // 2021-Nov-10 20:08:01
  s = trim(s);
  return s.size() == 20 && std::isdigit(static_cast<unsigned char>(s[0])) && s[4] == '-' && s[8] == '-' && s[14] == ':';
}

// Parses the kernel header into name, device and invocation count.
void parse_kernel_header(std::string_view h, KernelRecord& k) {
  h = trim(h);
  std::string_view tail;
  if (cut_suffix(h, ", Block Size ", &tail)) {  // --print-summary per-kernel
    size_t dev = tail.find("Device ");
    if (dev != std::string_view::npos) k.device = std::string(trim(tail.substr(dev + 7, tail.find(',', dev) - dev - 7)));
    size_t inv = tail.rfind(", ");
    if (inv != std::string_view::npos) {
      auto t = tokens(tail.substr(inv + 2));
      if (!t.empty())
        if (auto d = parse_decimal(t[0], NumberLocale::Dot); d && d->exact()) k.invocations = *d->exact();
    }
  } else if (cut_suffix(h, ", Context ", &tail)) {
    size_t dev = tail.find("Device ");
    if (dev != std::string_view::npos) k.device = std::string(trim(tail.substr(dev + 7, tail.find(',', dev) - dev - 7)));
  }
  size_t comma = h.rfind(", ");
  if (comma != std::string_view::npos && is_date(h.substr(comma + 2))) h = h.substr(0, comma);
  // new layout: "name(args) (3, 1, 1)x(256, 1, 1)"
  size_t x = h.rfind(")x(");
  if (x != std::string_view::npos && h.back() == ')') {
    size_t open = h.rfind(" (", x);
    if (open != std::string_view::npos) h = h.substr(0, open);
  }
  k.name = std::string(trim(h));
}

// NVTX range lines: "<0,convLayer>" (start/end) or "<convLayer>" (push/pop); the domain line is skipped.
std::string nvtx_range(std::string_view line) {
  line = trim(line);
  if (line.size() < 3 || line.front() != '<' || line.back() != '>' || line == "<default domain>") return "";
  std::string_view inner = line.substr(1, line.size() - 2);
  size_t comma = inner.find(',');
  if (comma != std::string_view::npos && comma > 0 &&
      std::isdigit(static_cast<unsigned char>(inner[0])))
    inner = inner.substr(comma + 1);
  return std::string(inner);
}

// One metric row. Falls back to right-to-left tokens when a long name overflows its column.
bool parse_row(std::string_view row, const TableState& t, std::string* name, std::string* unit, std::string* value) {
  const auto& sp = t.spans;
  const size_t values = t.per_kernel ? 3 : 1;  // Average is the last of Min/Max/Avg
  if (sp.size() >= 2 + values && row.size() > sp[1].first && row[sp[1].first - 1] == ' ' &&
      (sp[0].second >= row.size() || row[sp[0].second] == ' ')) {
    auto cells = fixed_cells(row, sp);
    *name = cells[0];
    *unit = cells[1];
    *value = cells.back();
    if (!name->empty() && !value->empty()) return true;
  }
  auto tk = tokens(row);
  if (tk.size() < 2) return false;
  *name = std::string(tk[0]);
  size_t last = tk.size() - 1;
  *value = std::string(tk[last]);
  if (last >= 1 && tk[last - 1] == "(!)") {
    *value = "(!) " + *value;
    --last;
  }
  if (t.per_kernel) last -= std::min<size_t>(last, 2);
  *unit = last >= 2 ? std::string(tk[last - 1]) : "";
  return true;
}

}  // namespace

void parse_ncu_text(const Source& s, Profile& out) {
  int64_t pid = -1;
  std::string process;
  bool in_results = false;
  KernelRecord* current = nullptr;
  std::string section, pending_nvtx;
  bool in_nvtx = false;
  TableState table;
  std::string_view previous;
  int64_t launch = 0;
  const size_t first = out.kernels.size();
  size_t run_start = first;           // records of the current run begin here
  std::set<int64_t> run_pids;         // processes whose results the current run printed
  auto new_run = [&](int line, std::string why) {
    if (out.kernels.size() == run_start) return;  // nothing read yet: still the same run
    run_boundary(out, s, line, std::move(why));
    run_start = out.kernels.size();
    run_pids.clear();
    launch = 0;
  };
  for (size_t i = 0; i < s.lines.size(); ++i) {
    std::string_view line = s.lines[i];
    const int ln = static_cast<int>(i + 1);
    if (starts_with(line, "==PROF==") || starts_with(line, "==WARNING==") || starts_with(line, "==ERROR==")) {
      if (contains(line, "No kernels were profiled")) warn(out, s, ln, "ncu: no kernels were profiled");
      else if (starts_with(line, "==ERROR==")) warn(out, s, ln, std::string(trim(line)));
      else if (contains(line, "Connected to process")) {
        new_run(ln, "a new ==PROF== session");
        current = nullptr, table = {}, in_results = false;
      }
      continue;
    }
    if (is_process_header(line, &pid, &process)) {
      if (run_pids.count(pid)) new_run(ln, fmt::format("results of process {} again", pid));
      run_pids.insert(pid);
      in_results = true;
      current = nullptr;
      table = {};
      continue;
    }
    if (!in_results) continue;
    if (trim(line).empty()) {
      if (table.open && (table.rows > 0 || table.per_kernel)) table = {};
      previous = line;
      continue;
    }
    const size_t ind = indent(line);
    if (ind == 2 && i + 1 < s.lines.size()) {
      // kernel header: the next non-empty line is indented by 4 (Section / NVTX)
      size_t j = i + 1;
      while (j < s.lines.size() && trim(s.lines[j]).empty() && j < i + 3) ++j;
      if (j < s.lines.size() && indent(s.lines[j]) >= 4) {
        KernelRecord k = new_record(s, ln);
        k.pid = pid;
        k.process = process;
        k.launch_id = launch++;
        parse_kernel_header(line, k);
        out.kernels.push_back(std::move(k));
        current = &out.kernels.back();
        table = {};
        in_nvtx = false;
        continue;
      }
    }
    if (ind == 0) {  // application output after the results, or a new run
      table = {};
      continue;
    }
    if (current == nullptr) continue;
    std::string_view body = trim(line);
    if (starts_with(body, "NVTX ")) {
      in_nvtx = true;
      continue;
    }
    if (starts_with(body, "Section: ")) {
      section = std::string(body.substr(9));
      in_nvtx = false;
      table = {};
      continue;
    }
    if (in_nvtx) {
      std::string r = nvtx_range(body);
      if (!r.empty()) current->nvtx += (current->nvtx.empty() ? "" : "/") + r;
      continue;
    }
    if (is_dash_rule(line)) {
      if (table.open && table.rows == 0 && table.header_seen) {
        table.spans = dash_spans(line);  // new layout: rule under the header
      } else if (table.open && table.rows > 0) {
        table = {};
      } else {
        table = {};
        table.open = true;
        table.spans = dash_spans(line);
        if (contains(previous, "Metric Name") && contains(previous, "Average")) table.per_kernel = table.header_seen = true;
      }
      previous = line;
      continue;
    }
    previous = line;
    if (!table.open) continue;  // rule/advice text (OK, WRN, OPT, INF)
    if (contains(body, "Metric Name") && contains(body, "Metric Unit")) {
      table.header_seen = true;
      continue;
    }
    std::string name, unit, value;
    if (!parse_row(line, table, &name, &unit, &value)) {
      warn(out, s, ln, fmt::format("unreadable metric row '{}'", body));
      continue;
    }
    ++table.rows;
    // A file cut mid-line (no newline after its last line) may have cut this value's digits: "10,135,802" read as 1.
    if (ln == static_cast<int>(s.lines.size()) && !s.text.empty() && s.text.back() != '\n') {
      warn(out, s, ln, fmt::format("the file ends mid-line: the last value ('{}' {}) may be cut short; skipped", name, value));
      continue;
    }
    const NumberLocale loc = table.per_kernel ? NumberLocale::Dot : s.locale;  // per-kernel prints %.6f always
    auto d = parse_decimal(value, loc);
    if (!d) {
      if (starts_with(value, "(!)"))
        warn(out, s, ln, fmt::format("{}: metric {} is '{}' (not collected)", current->name.substr(0, 60), name, value));
      continue;  // text values such as cudaFuncCachePreferNone
    }
    Value v = to_base(*d, unit);
    if (table.per_kernel && current->invocations != 1 && additive(name, v.unit)) {
      Decimal total{d->mantissa * current->invocations, d->exp10};
      v = to_base(total, unit);
    }
    add_counter(*current, name, v);
  }
  int empty = 0, first_empty = 0;
  for (size_t i = first; i < out.kernels.size(); ++i)
    if (out.kernels[i].counters.empty() && empty++ == 0) first_empty = out.kernels[i].line;
  if (empty > 0)
    warn(out, s, first_empty, fmt::format("{} kernel record{} without any metric value (output cut short?)", empty,
                                          empty == 1 ? "" : "s"));
  if (out.kernels.size() == first && !contains(s.text, "No kernels were profiled"))
    warn(out, s, 0, "ncu text: no kernel results found (was the run killed before ncu printed its results?)");
}

}  // namespace ridge::ingest::detail
