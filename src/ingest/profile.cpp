// Entry points: sniff the formats in a text, run one parser per format, read files, and combine several
// files (the NERSC layout: one metric per run, joined on launch ID and kernel name).
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "internal.hpp"
#include "ridge/error.hpp"

namespace ridge::ingest {
namespace {

struct FormatRow {
  Format format;
  std::string_view name;
  bool (*present)(std::string_view text);
};

bool has(std::string_view text, std::string_view s) { return text.find(s) != std::string_view::npos; }

// A JSON document (object or list) with Chrome-trace events: torch.profiler's export_chrome_trace.
bool is_trace_json(std::string_view t) {
  if (t.substr(0, 3) == "\xEF\xBB\xBF") t.remove_prefix(3);
  t = ridge::trim(t.substr(0, 1 << 16));
  if (t.empty() || (t.front() != '{' && t.front() != '[')) return false;
  return has(t, "\"traceEvents\"") || (has(t, "\"ph\"") && has(t, "\"ts\""));
}

// Signatures from profiler-formats.md section 1, one row per format.
const std::vector<FormatRow> kFormats = {
    {Format::NcuCsv, "ncu-csv",
     [](std::string_view t) { return has(t, "\"ID\",\"Process ID\""); }},
    {Format::NcuText, "ncu-text",
     [](std::string_view t) {
       return has(t, "\n    Section: ") || has(t, "NVTX Start/End Ranges") ||
              ((has(t, "==PROF==") || has(t, "==WARNING== No kernels")) && !has(t, "\"ID\",\"Process ID\""));
     }},
    {Format::NvprofMetrics, "nvprof-metrics",
     [](std::string_view t) { return has(t, "\nInvocations ") || has(t, "\"Device\",\"Kernel\",\"Invocations\""); }},
    {Format::NvprofSummary, "nvprof-summary",
     [](std::string_view t) {
       return (has(t, "Time(%)") && has(t, "Calls")) ||
              (has(t, "NVPROF is profiling") && !has(t, "\nInvocations ") && !has(t, "\"Start\",\"Duration\""));
     }},
    {Format::NvprofTrace, "nvprof-trace", [](std::string_view t) { return has(t, "\"Start\",\"Duration\""); }},
    {Format::NsysTrace, "nsys-trace",
     [](std::string_view t) { return has(t, "Start (ns)") && has(t, "Duration (ns)"); }},
    {Format::NsysStats, "nsys-stats",
     [](std::string_view t) {
       return !(has(t, "Start (ns)") && has(t, "Duration (ns)")) &&
              (has(t, "Total Time (ns)") || has(t, "' stats report") || (has(t, "Processing [") && has(t, ".py]")));
     }},
    {Format::TorchTable, "torch-table", [](std::string_view t) { return has(t, "Self CPU %"); }},
    {Format::TorchTrace, "torch-trace", [](std::string_view t) { return is_trace_json(t); }},
};

const FormatRow& row_of(Format f) {
  for (const auto& r : kFormats)
    if (r.format == f) return r;
  RIDGE_ASSERT(false, "format missing from kFormats");
  return kFormats.front();
}

void run_parser(const detail::Source& s, Format f, Profile& out) {
  switch (f) {
    case Format::NcuText: detail::parse_ncu_text(s, out); break;
    case Format::NcuCsv: detail::parse_ncu_csv(s, out); break;
    case Format::NvprofMetrics:
    case Format::NvprofSummary:
    case Format::NvprofTrace: detail::parse_nvprof(s, f, out); break;
    case Format::NsysTrace:
    case Format::NsysStats: detail::parse_nsys(s, f, out); break;
    case Format::TorchTable: detail::parse_torch_table(s, out); break;
    case Format::TorchTrace: detail::parse_torch_trace(s, out); break;
  }
}

std::set<std::string> metric_names(const Profile& p) {
  std::set<std::string> out;
  for (const auto& k : p.kernels)
    for (const auto& [name, v] : k.counters) out.insert(name);
  return out;
}

bool is_ncu(const Profile& p) {
  return !p.formats.empty() && std::all_of(p.formats.begin(), p.formats.end(), [](Format f) {
    return f == Format::NcuCsv || f == Format::NcuText;
  });
}

// Why the parts cannot be joined launch by launch, or "" when they can.
std::string join_obstacle(const std::vector<Profile>& parts, bool need_disjoint) {
  const auto& base = parts.front();
  std::set<std::string> seen = metric_names(base);
  for (size_t p = 1; p < parts.size(); ++p) {
    const auto& other = parts[p];
    if (!is_ncu(base) || !is_ncu(other)) return "only ncu captures carry launch IDs";
    if (other.kernels.size() != base.kernels.size())
      return fmt::format("{} has {} launches, {} has {}", base.files.front(), base.kernels.size(),
                         other.files.front(), other.kernels.size());
    for (size_t i = 0; i < base.kernels.size(); ++i)
      if (other.kernels[i].name != base.kernels[i].name || other.kernels[i].launch_id != base.kernels[i].launch_id ||
          other.kernels[i].label != base.kernels[i].label)
        return fmt::format("launch {} differs: '{}' in {} vs '{}' in {}", i, base.kernels[i].name.substr(0, 60),
                           base.files.front(), other.kernels[i].name.substr(0, 60), other.files.front());
    for (const auto& m : metric_names(other))
      if (!seen.insert(m).second && need_disjoint) return fmt::format("metric {} appears in several files", m);
  }
  return "";
}

// Sorts the run boundaries the parsers declared by line, gives every record the last run starting at or before
// its line, and drops runs that hold no record (a boundary before any result, or two at the same place).
void assign_runs(Profile& p) {
  std::stable_sort(p.runs.begin(), p.runs.end(), [](const Run& a, const Run& b) { return a.line < b.line; });
  std::vector<size_t> used(p.runs.size(), 0);
  for (auto& k : p.kernels) {
    auto after = std::upper_bound(p.runs.begin() + 1, p.runs.end(), k.line,
                                  [](int line, const Run& r) { return line < r.line; });
    k.run = static_cast<size_t>(after - p.runs.begin()) - 1;
    ++used[k.run];
  }
  std::vector<Run> kept;
  std::vector<size_t> index(p.runs.size(), 0);
  for (size_t r = 0; r < p.runs.size(); ++r) {
    if (used[r] == 0 && !(r == 0 && p.kernels.empty())) continue;
    if (kept.empty()) p.runs[r].boundary.clear(), p.runs[r].line = 0;  // the first run starts with the file
    index[r] = kept.size();
    kept.push_back(std::move(p.runs[r]));
  }
  p.runs = std::move(kept);
  for (auto& k : p.kernels) k.run = index[k.run];
  if (p.runs.size() > 1) {
    std::string where;
    for (size_t r = 1; r < p.runs.size(); ++r)
      where += fmt::format("{}line {} ({})", r > 1 ? ", " : "", p.runs[r].line, p.runs[r].boundary);
    p.notes.push_back(fmt::format("{} holds {} profiling runs, new run at {}; totals add them up (--run N selects "
                                  "one)", p.files.front(), p.runs.size(), where));
  }
}

}  // namespace

std::string_view format_name(Format f) { return row_of(f).name; }

const std::vector<Format>& all_formats() {
  static const std::vector<Format> kAll = [] {
    std::vector<Format> v;
    for (const auto& r : kFormats) v.push_back(r.format);
    return v;
  }();
  return kAll;
}

std::optional<Format> parse_format(std::string_view name) {
  for (const auto& r : kFormats)
    if (r.name == name) return r.format;
  return std::nullopt;
}

std::vector<Format> sniff(std::string_view text) {
  if (is_trace_json(text)) return {Format::TorchTrace};  // JSON holds no other format's signature legitimately
  std::vector<Format> out;
  for (const auto& r : kFormats)
    if (r.present(text)) out.push_back(r.format);
  return out;
}

Profile parse_text(std::string_view text, const std::string& name, const ReadOptions& opts) {
  Profile p;
  p.files.push_back(name);
  p.runs.push_back(Run{name, 0, opts.label, ""});
  detail::Source src(name, text, opts.label);
  p.formats = opts.format ? std::vector<Format>{*opts.format} : sniff(text);
  if (ridge::trim(text).empty()) {
    detail::warn(p, src, 0, "file is empty");
    return p;
  }
  if (p.formats.empty()) {
    detail::warn(p, src, 0, "unknown format: no ncu, nsys, nvprof or torch.profiler signature found");
    return p;
  }
  if (p.formats.size() > 1) {
    std::string names;
    for (Format f : p.formats) names += (names.empty() ? "" : ", ") + std::string(format_name(f));
    p.notes.push_back(fmt::format("{} holds several captures ({}); their records are all listed", name, names));
  }
  if (src.locale == detail::NumberLocale::Comma)
    p.notes.push_back(fmt::format("{}: numbers use '.' grouping and ',' decimals (read as such)", name));
  for (Format f : p.formats) run_parser(src, f, p);
  assign_runs(p);
  return p;
}

Profile read_file(const std::string& path, const ReadOptions& opts) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error(fmt::format("{}: is a directory, not a profile", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot open ({})", path, std::strerror(errno)));
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) throw Error(fmt::format("{}: read failed", path));
  std::string text = buf.str();
  return parse_text(text, path, opts);
}

namespace {

// Moves a part's warnings, notes, formats and files into the combined profile.
void take_provenance(Profile& out, Profile& part) {
  for (auto& w : part.warnings) out.warnings.push_back(std::move(w));
  for (auto& n : part.notes) out.notes.push_back(std::move(n));
  for (Format f : part.formats)
    if (std::find(out.formats.begin(), out.formats.end(), f) == out.formats.end()) out.formats.push_back(f);
  for (auto& f : part.files) out.files.push_back(std::move(f));
}

// Slices of one capture listed one after another as its one run; a slice holding several runs is refused.
Profile sequence(std::vector<Profile> parts) {
  Profile out;
  for (auto& part : parts) {
    if (part.runs.size() > 1)
      throw UsageError(fmt::format("--join sequence: {} holds {} runs, not a slice of one capture (--run N picks one)",
                                   part.files.empty() ? std::string("a file") : part.files.front(), part.runs.size()));
    take_provenance(out, part);
    if (out.runs.empty()) out.runs = std::move(part.runs);
    for (auto& k : part.kernels) {
      k.run = 0;
      out.kernels.push_back(std::move(k));
    }
  }
  out.notes.push_back(fmt::format("--join sequence: {} files read as consecutive slices of one capture: {} launches",
                                  parts.size(), out.kernels.size()));
  return out;
}

}  // namespace

std::optional<JoinMode> parse_join_mode(std::string_view s) {
  if (s == "auto") return JoinMode::Auto;
  if (s == "id") return JoinMode::Id;
  if (s == "none") return JoinMode::Concat;
  if (s == "sequence") return JoinMode::Sequence;
  return std::nullopt;
}

Profile combine(std::vector<Profile> parts, JoinMode mode) {
  if (parts.empty()) return {};
  if (parts.size() == 1) return std::move(parts.front());
  if (mode == JoinMode::Sequence) return sequence(std::move(parts));
  Profile out;
  std::string obstacle = mode == JoinMode::Concat ? "--join none" : join_obstacle(parts, mode == JoinMode::Auto);
  const bool join = obstacle.empty();
  if (!join && mode == JoinMode::Id)
    out.warnings.push_back(Warning{parts.front().files.front(), 0, "--join id: cannot join (" + obstacle + "); files listed one after another"});
  for (size_t p = 0; p < parts.size(); ++p) {
    Profile& part = parts[p];
    take_provenance(out, part);
    const size_t run_offset = out.runs.size();
    if (!join || p == 0)
      for (auto& r : part.runs) out.runs.push_back(std::move(r));
    if (join && p > 0) {
      for (size_t i = 0; i < part.kernels.size(); ++i)
        for (auto& [name, v] : part.kernels[i].counters) out.kernels[i].counters.try_emplace(name, std::move(v));
    } else {
      for (auto& k : part.kernels) {
        k.run += run_offset;
        out.kernels.push_back(std::move(k));
      }
    }
  }
  if (join)
    out.notes.push_back(fmt::format("joined {} files launch by launch on (ID, kernel name): {} launches", parts.size(),
                                    out.kernels.size()));
  return out;
}

std::vector<size_t> run_records(const Profile& p, size_t run) {
  std::vector<size_t> out;
  for (size_t i = 0; i < p.kernels.size(); ++i)
    if (p.kernels[i].run == run) out.push_back(i);
  return out;
}

Profile select_run(Profile p, size_t run) {
  if (run < 1 || run > p.runs.size())
    throw UsageError(fmt::format("--run {}: the input holds {} run{} (1..{})", run, p.runs.size(),
                                 p.runs.size() == 1 ? "" : "s", p.runs.size()));
  std::vector<KernelRecord> kept;
  for (auto& k : p.kernels)
    if (k.run == run - 1) {
      k.run = 0;
      kept.push_back(std::move(k));
    }
  p.kernels = std::move(kept);
  const Run& r = p.runs[run - 1];
  p.notes.push_back(fmt::format("--run {}: only the run starting at {} line {} is shown", run, r.file, r.line));
  p.runs = {p.runs[run - 1]};
  return p;
}

}  // namespace ridge::ingest
