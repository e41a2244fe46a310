// This CPU's empirical roofline as a document (`ridge machine`).
#include <fmt/format.h>

#include "ridge/api.hpp"
#include "ridge/perf_counters.hpp"
#include "ridge/predict.hpp"

namespace ridge::report {
namespace {

Cell number(double v) { return v > 0 ? Cell::real(v) : Cell::empty(); }
Cell number(const std::optional<double>& v) { return v ? Cell::real(*v) : Cell::empty(); }

// "busy-machine" when a result's spread (IQR / median) is above timing_flags' limit.
std::vector<std::string> spread_flags(double spread) { return timing_flags(1.0, 0.0, spread); }
// "2-thread-peak-below-1-thread" when the all-thread figure is below the one-thread one (both measured).
std::vector<std::string> all_below_one(const std::optional<double>& one, const std::optional<double>& all) {
  return one && all ? thread_peak_flags(*one, *all) : std::vector<std::string>{};
}

std::string caches_text(const measure::CpuFacts& c) {
  std::string out;
  for (const auto& l : c.caches) {
    const int64_t kib = l.size_bytes >> 10;
    out += fmt::format("{}L{} {}", out.empty() ? "" : ", ", l.level,
                       kib >= 1024 ? fmt::format("{} MiB", kib >> 10) : fmt::format("{} KiB", kib));
    if (l.shared_cpus > 1) out += fmt::format(" (shared by {})", l.shared_cpus);
  }
  return out.empty() ? "unknown" : out;
}

Fields cpu_fields(const measure::MachineProfile& p, const measure::ProfileSource& src) {
  const auto& c = p.cpu;
  std::string isas;
  for (auto i : c.isas) isas += (isas.empty() ? "" : ", ") + std::string(measure::isa_info(i).name);
  Fields f{"cpu", "CPU", {}};
  f.add("model", "model", Cell::text(c.model))
      .add("cores", "physical cores", Cell::count(c.cores))
      .add("logical_cpus", "logical CPUs", Cell::count(c.logical_cpus))
      .add("threads", "threads (all-thread runs)", Cell::count(p.threads))
      .add("isas", "ISAs", Cell::text(isas))
      .add("nominal_clock_ghz", "nominal clock GHz", number(c.nominal_clock_ghz))
      .add("measured_clock_ghz", "measured clock GHz", number(p.measured_clock_ghz))
      .add("caches", "caches", Cell::text(caches_text(c)))
      .add("cache_source", "cache sizes from", Cell::text(std::string(measure::cache_source_name(c.cache_source))))
      .add("fingerprint", "fingerprint", Cell::text(c.fingerprint))
      .add("profile", "profile",
           Cell::text(src.from_cache ? fmt::format("{} (cached, measured {})", src.path, p.measured_at)
                                     : fmt::format("{} (measured now: {})", src.path, src.reason)))
      .add("duration_s", "measurement took", Cell::real(p.duration_s, Unit::Second));
  return f;
}

Fields precision_fields(std::string key, std::string title, double fp32, double fp64) {
  Fields f{std::move(key), std::move(title), {}};
  f.add("fp32", "fp32", number(fp32)).add("fp64", "fp64", number(fp64));
  return f;
}

// Sanity flags of a profile, each naming the figure: all-thread results below one-thread ones (the all-thread run
// was starved or the thread count is wrong) and results whose spread says the machine was busy.
std::vector<std::string> machine_flags(const measure::MachineProfile& p) {
  std::vector<std::string> out;
  for (DType t : {DType::F32, DType::F64})
    for (const auto& f : thread_peak_flags(p.peak_gflops(t, false), p.peak_gflops(t, true)))
      out.push_back(fmt::format("{}: {} peak on {} threads {:.1f} GFLOP/s is below the 1-thread {:.1f}", f,
                                dtype_name(t), p.threads, p.peak_gflops(t, true), p.peak_gflops(t, false)));
  for (const auto& l : p.levels)
    for (const auto& f : all_below_one(l.triad_gbs_one, l.triad_gbs_all))
      out.push_back(fmt::format("{}: {} triad on {} threads {:.1f} GB/s is below the 1-thread {:.1f}", f, l.level,
                                p.threads, *l.triad_gbs_all, *l.triad_gbs_one));
  for (const auto& r : p.peaks)
    for (const auto& f : spread_flags(r.spread))
      out.push_back(fmt::format("{}: {} {} peak on {} thread(s) spread {:.0f} % between runs", f, dtype_name(r.dtype),
                                measure::isa_info(r.isa).name, r.threads, 100 * r.spread));
  return out;
}

Fields level_fields(const measure::MachineProfile& p, std::string key, std::string title, bool all) {
  Fields f{std::move(key), std::move(title), {}};
  for (const char* level : {"L1", "L2", "L3", "DRAM"}) f.add(level, level, number(p.bandwidth_gbs(level, all)));
  return f;
}

Table peaks_table(const measure::MachineProfile& p) {
  Table t;
  t.key = "peaks";
  t.title = "Peak GFLOP/s per ISA (measured vs theoretical)";
  t.columns = {{"precision", "precision"},
               {"isa", "ISA"},
               {"threads", "threads", Unit::Count},
               {"gflops", "GFLOP/s"},
               {"theoretical_gflops", "theoretical GFLOP/s"},
               {"ratio", "measured/theoretical", Unit::Ratio},
               {"spread_percent", "spread", Unit::Percent},
               {"flags", "flags"}};
  for (const auto& r : p.peaks)
    t.add_row({Cell::text(std::string(dtype_name(r.dtype))), Cell::text(std::string(measure::isa_info(r.isa).name)),
               Cell::count(r.threads), number(r.gflops), number(r.theoretical_gflops),
               r.theoretical_gflops > 0 ? Cell::real(r.gflops / r.theoretical_gflops, Unit::Ratio) : Cell::empty(),
               Cell::real(100 * r.spread, Unit::Percent),
               Cell::text(fmt::format("{}", fmt::join(spread_flags(r.spread), ", ")))});
  return t;
}

Table levels_table(const measure::MachineProfile& p) {
  Table t;
  t.key = "levels";
  t.title = "Bandwidth GB/s per memory level (a cache: best sweep point inside it; DRAM: far above the last cache)";
  t.columns = {{"level", "level"},
               {"capacity_bytes", "capacity", Unit::Byte},
               {"read_gbs_one_thread", "read 1 thread"},
               {"triad_gbs_one_thread", "triad 1 thread"},
               {"read_gbs_all_threads", fmt::format("read {} threads", p.threads)},
               {"triad_gbs_all_threads", fmt::format("triad {} threads", p.threads)},
               {"flags", "flags"}};
  for (const auto& l : p.levels)
    t.add_row({Cell::text(l.level), l.capacity_bytes > 0 ? Cell::count(l.capacity_bytes, Unit::Byte) : Cell::empty(Unit::Byte),
               number(l.read_gbs_one), number(l.triad_gbs_one), number(l.read_gbs_all), number(l.triad_gbs_all),
               Cell::text(fmt::format("{}", fmt::join(all_below_one(l.triad_gbs_one, l.triad_gbs_all), ", ")))});
  return t;
}

Table sweep_table(const measure::MachineProfile& p) {
  Table t;
  t.key = "sweep";
  t.title = "Working-set sweep";
  t.columns = {{"kernel", "kernel"},
               {"threads", "threads", Unit::Count},
               {"working_set_bytes", "working set per thread", Unit::Byte},
               {"gbs", "GB/s"},
               {"level", "level"}};
  for (const auto& s : p.sweep)
    t.add_row({Cell::text(s.kernel), Cell::count(s.threads), Cell::count(s.working_set_bytes, Unit::Byte),
               Cell::real(s.gbs), Cell::text(s.level)});
  return t;
}

}  // namespace

Document machine_report(const measure::MachineProfile& p, const measure::ProfileSource& src, bool with_sweep) {
  using measure::isa_info;
  Document d;
  d.title = fmt::format("Empirical roofline of {} ({}, {} threads)", p.cpu.model, isa_info(p.cpu.best_isa).name,
                        p.threads);
  d.blocks.push_back(cpu_fields(p, src));
  d.blocks.push_back(precision_fields("peak_gflops", fmt::format("Peak GFLOP/s, {} threads", p.threads),
                                      p.peak_gflops(DType::F32, true), p.peak_gflops(DType::F64, true)));
  d.blocks.push_back(precision_fields("peak_gflops_one_thread", "Peak GFLOP/s, 1 thread",
                                      p.peak_gflops(DType::F32, false), p.peak_gflops(DType::F64, false)));
  d.blocks.push_back(precision_fields("theoretical_peak_gflops",
                                      fmt::format("Theoretical peak GFLOP/s, {} threads", p.threads),
                                      p.theoretical_gflops(DType::F32, true), p.theoretical_gflops(DType::F64, true)));
  d.blocks.push_back(level_fields(p, "bandwidth_gbs", fmt::format("Bandwidth GB/s (triad), {} threads", p.threads), true));
  d.blocks.push_back(level_fields(p, "bandwidth_gbs_one_thread", "Bandwidth GB/s (triad), 1 thread", false));
  d.blocks.push_back(peaks_table(p));
  d.blocks.push_back(levels_table(p));
  if (with_sweep) d.blocks.push_back(sweep_table(p));
  d.notes = p.notes;
  const auto flags = machine_flags(p);
  Fields shown{"flags", "Sanity flags", {}};
  shown.add("flags", "flags", Cell::text(flags.empty() ? "none" : fmt::format("{}", fmt::join(flags, ", "))));
  d.blocks.insert(d.blocks.begin() + 1, std::move(shown));
  for (const auto& f : flags) d.notes.push_back("flag " + f);
  for (const char* level : {"L1", "L2", "L3", "DRAM"})
    if (!p.bandwidth_gbs(level, true)) d.notes.push_back(fmt::format("{} bandwidth not measured", level));
  const std::string& counters = measure::counters_unavailable_reason();
  d.notes.push_back(counters.empty() ? "hardware counters available (perf_event_open)"
                                     : "hardware counters unavailable: " + counters);
  d.extra["profile"] = measure::profile_to_json(p);
  return d;
}


}  // namespace ridge::report
