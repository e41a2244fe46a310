// The machine profile: JSON form (the cache file), the cache itself, and the roofline queries other stages use.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "ridge/error.hpp"
#include "ridge/machine.hpp"

namespace ridge::measure {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json optional_json(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
std::optional<double> optional_from(const json& j) {
  return j.is_number() ? std::optional<double>(j.get<double>()) : std::nullopt;
}

json cpu_to_json(const CpuFacts& c) {
  json caches = json::array();
  for (const CacheLevel& l : c.caches)
    caches.push_back({{"level", l.level}, {"type", l.type}, {"size_bytes", l.size_bytes}, {"shared_cpus", l.shared_cpus}});
  json isas = json::array();
  for (Isa i : c.isas) isas.push_back(isa_info(i).name);
  return {{"model", c.model}, {"vendor", c.vendor}, {"flags_digest", c.flags_digest},
          {"logical_cpus", c.logical_cpus}, {"cores", c.cores}, {"isas", isas},
          {"best_isa", isa_info(c.best_isa).name}, {"fma_units_per_core", c.fma_units_per_core},
          {"nominal_clock_ghz", c.nominal_clock_ghz}, {"clock_source", c.clock_source}, {"caches", caches},
          {"cache_source", cache_source_name(c.cache_source)}, {"cache_source_detail", c.cache_source_detail},
          {"fingerprint", c.fingerprint}};
}

Isa isa_from(const json& j, const std::string& what) {
  auto isa = parse_isa(j.get<std::string>());
  if (!isa) throw Error(fmt::format("{}: unknown ISA '{}'", what, j.get<std::string>()));
  return *isa;
}

DType dtype_from(const json& j, const std::string& what) {
  auto t = parse_dtype(j.get<std::string>());
  if (!t || (*t != DType::F32 && *t != DType::F64))
    throw Error(fmt::format("{}: unknown precision '{}'", what, j.get<std::string>()));
  return *t;
}

CpuFacts cpu_from_json(const json& j, const std::string& what) {
  CpuFacts c;
  c.model = j.at("model").get<std::string>();
  c.vendor = j.at("vendor").get<std::string>();
  c.flags_digest = j.at("flags_digest").get<std::string>();
  c.logical_cpus = j.at("logical_cpus").get<int>();
  c.cores = j.at("cores").get<int>();
  for (const json& i : j.at("isas")) c.isas.push_back(isa_from(i, what));
  c.best_isa = isa_from(j.at("best_isa"), what);
  c.fma_units_per_core = j.at("fma_units_per_core").get<int>();
  c.nominal_clock_ghz = j.at("nominal_clock_ghz").get<double>();
  c.clock_source = j.at("clock_source").get<std::string>();
  for (const json& l : j.at("caches"))
    c.caches.push_back({l.at("level").get<int>(), l.at("type").get<std::string>(), l.at("size_bytes").get<int64_t>(),
                        l.at("shared_cpus").get<int>()});
  const std::string source = j.at("cache_source").get<std::string>();
  const auto parsed = parse_cache_source(source);
  if (!parsed) throw Error(fmt::format("{}: unknown cache source '{}'", what, source));
  c.cache_source = *parsed;
  c.cache_source_detail = j.at("cache_source_detail").get<std::string>();
  c.fingerprint = j.at("fingerprint").get<std::string>();
  return c;
}

const PeakResult* best_peak(const MachineProfile& p, DType dtype, bool all_threads) {
  const DType want = dtype == DType::F64 ? DType::F64 : DType::F32;
  const PeakResult* best = nullptr;
  for (const PeakResult& r : p.peaks) {
    if (r.dtype != want || (all_threads ? r.threads != p.threads : r.threads != 1)) continue;
    if (!best || r.gflops > best->gflops) best = &r;
  }
  // A one-thread machine has no separate all-thread rows.
  if (!best && all_threads && p.threads == 1) return best_peak(p, dtype, false);
  return best;
}

}  // namespace

double MachineProfile::peak_gflops(DType dtype, bool all_threads) const {
  const PeakResult* r = best_peak(*this, dtype, all_threads);
  return r ? r->gflops : 0.0;
}

double MachineProfile::theoretical_gflops(DType dtype, bool all_threads) const {
  const PeakResult* r = best_peak(*this, dtype, all_threads);
  return r ? r->theoretical_gflops : 0.0;
}

std::optional<double> MachineProfile::bandwidth_gbs(std::string_view level, bool all_threads) const {
  for (const LevelBandwidth& l : levels)
    if (l.level == level) return l.gbs(all_threads);
  return std::nullopt;
}

json profile_to_json(const MachineProfile& p) {
  json peaks = json::array();
  for (const PeakResult& r : p.peaks)
    peaks.push_back({{"precision", dtype_name(r.dtype)}, {"isa", isa_info(r.isa).name}, {"threads", r.threads},
                     {"gflops", r.gflops}, {"theoretical_gflops", r.theoretical_gflops}, {"spread", r.spread},
                     {"samples", r.samples}});
  json levels = json::array();
  for (const LevelBandwidth& l : p.levels)
    levels.push_back({{"level", l.level}, {"capacity_bytes", l.capacity_bytes},
                      {"read_gbs_one_thread", optional_json(l.read_gbs_one)},
                      {"triad_gbs_one_thread", optional_json(l.triad_gbs_one)},
                      {"read_gbs_all_threads", optional_json(l.read_gbs_all)},
                      {"triad_gbs_all_threads", optional_json(l.triad_gbs_all)}});
  json sweep = json::array();
  for (const SweepPoint& s : p.sweep)
    sweep.push_back({{"kernel", s.kernel}, {"threads", s.threads}, {"working_set_bytes", s.working_set_bytes},
                     {"gbs", s.gbs}, {"level", s.level}});
  return {{"format_version", MachineProfile::kFormatVersion}, {"cpu", cpu_to_json(p.cpu)}, {"threads", p.threads},
          {"measured_clock_ghz", p.measured_clock_ghz}, {"peaks", peaks}, {"levels", levels}, {"sweep", sweep},
          {"quick", p.quick}, {"huge_pages", p.huge_pages}, {"duration_s", p.duration_s}, {"measured_at", p.measured_at}, {"notes", p.notes}};
}

MachineProfile profile_from_json(const json& j, const std::string& what) {
  try {
    if (!j.is_object()) throw Error(fmt::format("{}: not a JSON object", what));
    if (j.value("format_version", 0) != MachineProfile::kFormatVersion)
      throw Error(fmt::format("{}: format_version {} (expected {})", what, j.value("format_version", 0),
                              MachineProfile::kFormatVersion));
    MachineProfile p;
    p.cpu = cpu_from_json(j.at("cpu"), what);
    p.threads = j.at("threads").get<int>();
    p.measured_clock_ghz = j.at("measured_clock_ghz").get<double>();
    for (const json& r : j.at("peaks"))
      p.peaks.push_back({dtype_from(r.at("precision"), what), isa_from(r.at("isa"), what), r.at("threads").get<int>(),
                         r.at("gflops").get<double>(), r.at("theoretical_gflops").get<double>(),
                         r.at("spread").get<double>(), r.at("samples").get<int>()});
    for (const json& l : j.at("levels"))
      p.levels.push_back({l.at("level").get<std::string>(), l.at("capacity_bytes").get<int64_t>(),
                          optional_from(l.at("read_gbs_one_thread")), optional_from(l.at("triad_gbs_one_thread")),
                          optional_from(l.at("read_gbs_all_threads")), optional_from(l.at("triad_gbs_all_threads"))});
    for (const json& s : j.at("sweep"))
      p.sweep.push_back({s.at("kernel").get<std::string>(), s.at("threads").get<int>(),
                         s.at("working_set_bytes").get<int64_t>(), s.at("gbs").get<double>(),
                         s.at("level").get<std::string>()});
    p.quick = j.at("quick").get<bool>();
    p.huge_pages = j.at("huge_pages").get<bool>();
    p.duration_s = j.at("duration_s").get<double>();
    p.measured_at = j.at("measured_at").get<std::string>();
    p.notes = j.at("notes").get<std::vector<std::string>>();
    return p;
  } catch (const json::exception& e) {
    throw Error(fmt::format("{}: not a machine profile ({})", what, e.what()));
  }
}

std::string default_profile_path() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg) return (fs::path(xdg) / "ridge" / "machine.json").string();
  const char* home = std::getenv("HOME");
  return (fs::path(home && *home ? home : "/tmp") / ".cache" / "ridge" / "machine.json").string();
}

std::optional<MachineProfile> load_cached_profile(const std::string& path, const CpuFacts& current,
                                                  bool accept_quick, std::string* why) {
  auto fail = [&](std::string reason) -> std::optional<MachineProfile> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  std::ifstream in(path);
  if (!in) return fail("no cache file");
  json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return fail("cache file is not valid JSON");
  MachineProfile p;
  try {
    p = profile_from_json(j, path);
  } catch (const Error& e) {
    return fail(fmt::format("cache file unreadable ({})", e.what()));
  }
  if (p.cpu.fingerprint != current.fingerprint)
    return fail(fmt::format("cache is for a different CPU ({}, fingerprint {})", p.cpu.model, p.cpu.fingerprint));
  if (p.quick && !accept_quick) return fail("cache holds a quick-mode profile");
  return p;
}

void save_profile(const MachineProfile& p, const std::string& path) {
  std::error_code ec;
  const fs::path target(path);
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  const std::string tmp = path + fmt::format(".tmp{}", getpid());
  {
    std::ofstream out(tmp);
    out << profile_to_json(p).dump(2) << "\n";
    if (!out) throw Error(fmt::format("{}: cannot write machine profile", path));
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw Error(fmt::format("{}: cannot write machine profile ({})", path, ec.message()));
  }
}

MachineProfile load_or_measure_machine(const MachineOptions& options, bool refresh, const std::string& path,
                                       ProfileSource* source) {
  ProfileSource src{false, path, "--refresh"};
  const CpuFacts cpu = detect_cpu();
  std::optional<MachineProfile> cached;
  if (!refresh) cached = load_cached_profile(path, cpu, options.quick, &src.reason);
  if (cached && options.threads > 0 && cached->threads != options.threads) {
    cached.reset();
    src.reason = "cache measured with a different thread count";
  }
  // Asking for huge pages re-measures a profile without them; a cached huge-page profile serves everyone else
  // (its notes say how it was measured).
  if (cached && options.huge_pages && !cached->huge_pages) {
    cached.reset();
    src.reason = "cache measured without huge pages";
  }
  MachineProfile p;
  if (cached) {
    p = std::move(*cached);
    src.from_cache = true;
    src.reason.clear();
  } else {
    p = measure_machine(options);
    // A quick profile never replaces a full one for this CPU.
    if (options.quick && load_cached_profile(path, cpu, false)) {
      p.notes.push_back(fmt::format("quick profile not cached: {} holds a full profile", path));
    } else {
      try {
        save_profile(p, path);
      } catch (const Error& e) {
        p.notes.push_back(fmt::format("profile not cached: {}", e.what()));
      }
    }
  }
  if (source) *source = src;
  return p;
}

double attainable_gflops(const MachineProfile& p, double flops_per_byte, DType dtype, int threads,
                         std::string_view level) {
  const int all = std::max(1, p.threads);
  const int t = threads <= 0 ? all : std::min(threads, all);
  // Weight of the all-thread ceiling: 0 at one thread, 1 at all threads.
  const double w = all > 1 ? static_cast<double>(t - 1) / (all - 1) : 1.0;
  auto blend = [&](double one, double many) { return one + w * (many - one); };
  const double peak = blend(p.peak_gflops(dtype, false), p.peak_gflops(dtype, true));
  std::optional<double> one = p.bandwidth_gbs(level, false), many = p.bandwidth_gbs(level, true);
  if (!one || !many) {
    one = p.bandwidth_gbs("DRAM", false);
    many = p.bandwidth_gbs("DRAM", true);
  }
  if (!one || !many) return peak;
  return std::min(peak, std::max(0.0, flops_per_byte) * blend(*one, *many));
}

}  // namespace ridge::measure
