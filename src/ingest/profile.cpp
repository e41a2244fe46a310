// Entry points: sniff the formats in a text, run one parser per format, read files, and combine several
// files (the NERSC layout: one metric per run, joined on launch ID and kernel name).
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
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
  std::vector<Format> out;
  for (const auto& r : kFormats)
    if (r.present(text)) out.push_back(r.format);
  return out;
}

Profile parse_text(std::string_view text, const std::string& name, const ReadOptions& opts) {
  Profile p;
  p.files.push_back(name);
  detail::Source src(name, text, opts.label);
  p.formats = opts.format ? std::vector<Format>{*opts.format} : sniff(text);
  if (detail::trim(text).empty()) {
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
  return p;
}

Profile read_file(const std::string& path, const ReadOptions& opts) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot open ({})", path, std::strerror(errno)));
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) throw Error(fmt::format("{}: read failed", path));
  std::string text = buf.str();
  return parse_text(text, path, opts);
}

Profile combine(std::vector<Profile> parts, JoinMode mode) {
  if (parts.empty()) return {};
  if (parts.size() == 1) return std::move(parts.front());
  Profile out;
  std::string obstacle = mode == JoinMode::Concat ? "--join none" : join_obstacle(parts, mode == JoinMode::Auto);
  const bool join = obstacle.empty();
  if (!join && mode == JoinMode::Id)
    out.warnings.push_back(Warning{parts.front().files.front(), 0, "--join id: cannot join (" + obstacle + "); files listed one after another"});
  for (size_t p = 0; p < parts.size(); ++p) {
    Profile& part = parts[p];
    for (auto& w : part.warnings) out.warnings.push_back(std::move(w));
    for (auto& n : part.notes) out.notes.push_back(std::move(n));
    for (Format f : part.formats)
      if (std::find(out.formats.begin(), out.formats.end(), f) == out.formats.end()) out.formats.push_back(f);
    for (auto& f : part.files) out.files.push_back(std::move(f));
    if (join && p > 0) {
      for (size_t i = 0; i < part.kernels.size(); ++i)
        for (auto& [name, v] : part.kernels[i].counters) out.kernels[i].counters.try_emplace(name, std::move(v));
    } else {
      for (auto& k : part.kernels) out.kernels.push_back(std::move(k));
    }
  }
  if (join)
    out.notes.push_back(fmt::format("joined {} files launch by launch on (ID, kernel name): {} launches", parts.size(),
                                    out.kernels.size()));
  return out;
}

}  // namespace ridge::ingest
