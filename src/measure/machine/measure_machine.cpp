// measure_machine(): clock probe, peak FLOP/s per ISA and precision, and the working-set sweep.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <numeric>
#include <vector>

#include "measure/machine/kernels.hpp"
#include "measure/machine/sweep.hpp"
#include "measure/machine/thread_team.hpp"
#include "ridge/bench_loop.hpp"
#include "ridge/machine.hpp"

namespace ridge::measure {
namespace {

/// Time budgets of one measurement mode.
struct Budgets {
  BenchOptions clock, peak, stream;
};

Budgets budgets(bool quick) {
  Budgets b;
  if (quick) {
    b.clock = {.warmup_runs = 0, .min_run_time_s = 0.001, .min_samples = 3, .max_samples = 5, .max_total_time_s = 0.01};
    // Peaks get a few more samples: on a busy or virtual 2-CPU machine one thread of an all-thread run is often
    // preempted for milliseconds, and the median of 3-5 one-millisecond runs can land on such a run.
    b.peak = {.warmup_runs = 1, .min_run_time_s = 0.001, .min_samples = 7, .max_samples = 15, .target_spread = 0.02,
              .max_total_time_s = 0.04};
    b.stream = b.clock;
    return b;
  }
  b.clock = {.warmup_runs = 1, .min_run_time_s = 0.005, .min_samples = 5, .max_samples = 20, .target_spread = 0.005,
             .max_total_time_s = 0.1};
  b.peak = {.warmup_runs = 1, .min_run_time_s = 0.01, .min_samples = 5, .max_samples = 30, .target_spread = 0.005,
            .max_total_time_s = 0.2};
  b.stream = {.warmup_runs = 1, .min_run_time_s = 0.01, .min_samples = 3, .max_samples = 20, .target_spread = 0.01,
              .max_total_time_s = 0.2};
  return b;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

/// Half of MemAvailable (/proc/meminfo), else a quarter of physical memory, else 1 GiB.
int64_t default_memory_budget() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024 / 2;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? int64_t{pages} * page / 4 : int64_t{1} << 30;
}

std::string mib(int64_t bytes) {
  return bytes >= (int64_t{1} << 30) && bytes % (int64_t{1} << 20) == 0 ? fmt::format("{:.3g} GiB", bytes / 1073741824.0)
                                                                        : fmt::format("{} MiB", bytes >> 20);
}

/// FLOPs per cycle of one core for a kernel of `isa` on `dtype`: FMA pipes x lanes x (2 with FMA; without FMA
/// the multiply and the add each take a pipe slot, so 1).
// 2 FLOPs per lane and pipe: a fused multiply-add, or without FMA (scalar, SSE) a multiply and an add issued on
// separate pipes (Zen has add pipes beside its FMA pipes): the bound a measurement cannot pass.
double flops_per_cycle_per_core(const CpuFacts& cpu, Isa isa, DType dtype) {
  return cpu.fma_units_per_core * lanes(isa, dtype) * 2.0;
}

class Machine {
 public:
  Machine(const MachineOptions& o, CpuFacts cpu)
      : options_(o), budgets_(budgets(o.quick)), team_(o.threads > 0 ? o.threads : cpu.logical_cpus) {
    profile_.cpu = std::move(cpu);
    profile_.threads = team_.size();
    profile_.quick = o.quick;
    profile_.huge_pages = o.huge_pages;
  }

  MachineProfile run() {
    const auto start = std::chrono::steady_clock::now();
    profile_.measured_at = utc_now();
    const AffinityRestorer restore_affinity;  // the caller is pinned while measuring, not after
    pin_to_allowed_cpu(0);
    measure_clock();
    measure_peaks();
    measure_bandwidth();
    profile_.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    add_notes();
    return std::move(profile_);
  }

 private:
  void say(const std::string& m) const {
    if (options_.progress) options_.progress("machine: " + m);
  }

  void measure_clock() {
    say("clock");
    volatile int64_t sink = 0;
    const BenchStats s = bench_loop([&](int64_t n) { sink = kernels::clock_probe(n); }, budgets_.clock);
    // The fastest sample: being descheduled only ever adds time, the clock itself does not vary that fast.
    profile_.measured_clock_ghz = kernels::kClockProbeAdds / s.min_s / 1e9;
  }

  /// Runs work(thread, iterations) on `threads` threads under bench_loop. A run's time is the wall time from the
  /// first thread entering `work` to the last one leaving it (team_span_s), so waking the team (a futex round
  /// trip, noisy in a VM) is not counted but threads that start late are. `mean_s`, when given, receives the
  /// mean time of one iteration over the sampled runs (the last `samples` runs; BenchStats keeps only quantiles).
  BenchStats time_threads(int threads, const std::function<void(int, int64_t)>& work, const BenchOptions& o,
                          double* mean_s = nullptr) {
    double kernel_time_s = 0;  // a clock that only advances while kernels run
    std::vector<double> run_times_s;
    std::vector<double> starts(threads), ends(threads);
    auto run = [&](int64_t n) {
      auto timed = [&](int t) {
        if (t >= threads) return;
        starts[t] = steady_seconds();
        work(t, n);
        ends[t] = steady_seconds();
      };
      if (threads == 1) timed(0);
      else team_.run(timed);
      run_times_s.push_back(team_span_s(starts, ends));
      kernel_time_s += run_times_s.back();
    };
    // An untimed run first: workers asleep since the last measurement wake here (a halted vCPU can take over a
    // millisecond), not in the calibration, which would otherwise settle on runs too short to time.
    if (threads > 1) team_.run([](int) {});
    const BenchStats s = bench_loop(run, o, [&] { return kernel_time_s; });
    if (mean_s) {
      const auto sampled = run_times_s.end() - std::min<ptrdiff_t>(s.samples, std::ssize(run_times_s));
      *mean_s = std::accumulate(sampled, run_times_s.end(), 0.0) / std::max(1, s.samples) /
                static_cast<double>(s.iterations);
    }
    return s;
  }

  double clock_ghz() const {
    return profile_.measured_clock_ghz > 0 ? profile_.measured_clock_ghz : profile_.cpu.nominal_clock_ghz;
  }

  PeakResult measure_peak(const kernels::Desc& d, int threads) {
    say(fmt::format("peak {} {} on {} thread(s)", dtype_name(d.dtype), isa_info(d.isa).name, threads));
    const int64_t acc_bytes = int64_t{d.chains} * lanes(d.isa, d.dtype) * dtype_bytes(d.dtype);
    std::vector<PageBuffer> accumulators;
    std::vector<kernels::Args> args(threads);
    for (int t = 0; t < threads; ++t) {
      accumulators.emplace_back(acc_bytes, /*huge_pages=*/false);
      // acc = acc * x + y with acc = 1, x = 1 - y stays at 1: no overflow, no denormals.
      for (int64_t i = 0; i < acc_bytes / dtype_bytes(d.dtype); ++i) {
        if (d.dtype == DType::F32) static_cast<float*>(accumulators[t].data())[i] = 1.0f;
        else static_cast<double*>(accumulators[t].data())[i] = 1.0;
      }
      args[t] = {.out = accumulators[t].data(), .x = 1.0 - 1.0 / 1024, .y = 1.0 / 1024};
    }
    const BenchStats s = time_threads(threads, [&](int t, int64_t n) { d.fn(args[t], n); }, budgets_.peak);
    PeakResult r{d.dtype, d.isa, threads};
    r.gflops = to_double(kernels::flops(d, args[0], 1)) * threads / s.median_s / 1e9;
    r.theoretical_gflops = std::min(threads, profile_.cpu.cores) *
                           flops_per_cycle_per_core(profile_.cpu, d.isa, d.dtype) * clock_ghz();
    r.spread = s.spread;
    r.samples = s.samples;
    return r;
  }

  void measure_peaks() {
    const std::vector<Isa> isas = options_.quick ? std::vector<Isa>{profile_.cpu.best_isa} : profile_.cpu.isas;
    for (DType dtype : {DType::F32, DType::F64}) {
      for (Isa isa : isas) profile_.peaks.push_back(measure_peak(*kernels::find(kernels::Kind::Peak, isa, dtype), 1));
      if (team_.size() > 1)
        profile_.peaks.push_back(
            measure_peak(*kernels::find(kernels::Kind::Peak, profile_.cpu.best_isa, dtype), team_.size()));
    }
  }

  /// One sweep point: `d` on `threads` threads, each over its own `ws` bytes inside its buffer.
  SweepPoint measure_stream(const kernels::Desc& d, int threads, int64_t ws, const std::string& level) {
    const int64_t arrays = d.kind == kernels::Kind::Triad ? 3 : 1;
    const int64_t block = kernels::block_elements(d);
    const int64_t n = std::max<int64_t>(block, ws / arrays / dtype_bytes(d.dtype) / block * block);
    const int64_t stride = kernels::stream_array_stride_bytes(n * dtype_bytes(d.dtype));
    std::vector<kernels::Args> args(threads);
    for (int t = 0; t < threads; ++t) {
      char* base = static_cast<char*>(buffers_[t].data());
      args[t] = {.out = base + 2 * stride, .in1 = base, .in2 = base + stride, .n = n, .x = 0.5};
      if (d.kind == kernels::Kind::Read) args[t].out = nullptr;
    }
    std::vector<double> sinks(threads);
    double mean_s = 0;
    const BenchStats s = time_threads(threads, [&](int t, int64_t n) { sinks[t] = d.fn(args[t], n); },
                                      budgets_.stream, &mean_s);
    SweepPoint p;
    p.kernel = std::string(kernels::kind_name(d.kind));
    p.threads = threads;
    p.working_set_bytes = n * arrays * dtype_bytes(d.dtype);
    p.gbs = to_double(kernels::bytes(d, args[0], 1)) * threads / sweep::point_time_s(s.median_s, mean_s, level) / 1e9;
    p.level = level;
    return p;
  }

  void measure_bandwidth() {
    const int64_t budget = options_.memory_budget_bytes > 0 ? options_.memory_budget_bytes : default_memory_budget();
    plan_ = sweep::plan_sweep(profile_.cpu, team_.size(), options_.quick, budget);
    allocate_buffers();
    const Isa isa = profile_.cpu.best_isa;
    const auto* read = kernels::find(kernels::Kind::Read, isa, DType::F64);
    const auto* triad = kernels::find(kernels::Kind::Triad, isa, DType::F64);
    size_t done = 0;
    for (const sweep::PlannedPoint& pt : plan_.points) {
      say(fmt::format("bandwidth {} thread(s), {} KiB per thread ({}/{})", pt.threads, pt.working_set_bytes >> 10,
                      ++done, plan_.points.size()));
      for (const auto* d : {read, triad})
        profile_.sweep.push_back(measure_stream(*d, pt.threads, pt.working_set_bytes, pt.level));
    }
    profile_.levels = sweep::summarize_levels(profile_.cpu.caches, profile_.sweep, team_.size());
    buffers_.clear();
  }

  /// One buffer per thread (thread 0 large enough for the one-thread sweep), first touched by its own thread so
  /// its pages are local to it.
  void allocate_buffers() {
    say(fmt::format("allocating and touching sweep buffers ({} + {} x {})", mib(plan_.buffer_bytes_first),
                    team_.size() - 1, mib(plan_.buffer_bytes_other)));
    const int64_t slack = 3 * 4096;
    for (int t = 0; t < team_.size(); ++t)
      buffers_.emplace_back((t == 0 ? plan_.buffer_bytes_first : plan_.buffer_bytes_other) + slack,
                            options_.huge_pages);
    team_.run([&](int t) { std::memset(buffers_[t].data(), 0, buffers_[t].bytes()); });
  }

  /// What the DRAM working sets were and why, or why they may not be DRAM.
  void note_dram() {
    std::vector<std::string> sets;
    bool capped = false;
    int64_t llc = 0, target = 0;
    for (const auto& d : {plan_.dram_one, plan_.dram_all}) {
      if (!d) continue;
      sets.push_back(fmt::format("{} per thread on {} thread(s)", mib(d->bytes_per_thread), d->threads));
      capped |= d->capped;
      llc = std::max(llc, d->llc_bytes);
      target = std::max(target, d->target_bytes);
    }
    if (sets.empty()) return;
    const std::string where = fmt::format("{}", fmt::join(sets, ", "));
    if (!profile_.cpu.llc_known())
      profile_.notes.push_back(fmt::format("last-level cache size unknown: DRAM measured on a fixed {} working set "
                                           "(all threads together): {}",
                                           mib(sweep::kUnknownLlcDramBytes), where));
    else
      profile_.notes.push_back(fmt::format("DRAM measured on {}: at least {}x the last-level cache the threads "
                                           "reach ({}) and at least {}",
                                           where, sweep::kDramLlcMultiple, mib(llc), mib(sweep::kMinDramBytes)));
    if (capped)
      profile_.notes.push_back(fmt::format("the memory budget allowed less than the {} wanted for DRAM: DRAM "
                                           "bandwidth may include cache hits",
                                           mib(target)));
  }

  void add_notes() {
    auto& n = profile_.notes;
    const CpuFacts& c = profile_.cpu;
    n.push_back(fmt::format(
        "theoretical peak = cores ({}) x FMA pipes per core ({}, assumed: cpuid does not report it) x lanes x 2 FLOPs "
        "x clock {:.3g} GHz ({}; nominal {:.3g} GHz from {})",
        c.cores, c.fma_units_per_core, clock_ghz(),
        profile_.measured_clock_ghz > 0 ? "measured with a dependent-add chain" : "nominal", c.nominal_clock_ghz,
        c.clock_source));
    n.push_back("bandwidth counts bytes loaded + stored by the kernels, without write-allocate traffic (STREAM and "
                "likwid-bench convention); a cache level's value is the best sweep point inside it (median pass), "
                "DRAM's the point planned far above the last-level cache (sustained: mean over its passes)");
    n.push_back(fmt::format("cache sizes from {}: {}", cache_source_name(c.cache_source), c.cache_source_detail));
    note_dram();
    n.push_back(profile_.huge_pages
                    ? "pages: transparent huge pages requested for the sweep buffers (--huge-pages); layers run by "
                      "`ridge measure` get the system's page policy and may stream from DRAM slower than this"
                    : "pages: the system's page policy (no huge pages requested), as likwid-bench's and the "
                      "executor's buffers get; --huge-pages asks for transparent huge pages");
    if (profile_.quick)
      n.push_back("quick mode: short samples, L1/L2 working sets only; L3 and DRAM not measured");
  }

  const MachineOptions& options_;
  Budgets budgets_;
  ThreadTeam team_;
  std::vector<PageBuffer> buffers_;
  sweep::Plan plan_;
  MachineProfile profile_;
};

}  // namespace

MachineProfile measure_machine(const MachineOptions& options) {
  CpuFacts cpu = options.cpu ? *options.cpu : detect_cpu();
  if (options.threads > cpu.logical_cpus)
    throw UsageError(fmt::format("--threads {}: this process may run on {} CPU(s); more threads than CPUs take turns "
                                 "on them, and the all-thread figures would time the scheduler",
                                 options.threads, cpu.logical_cpus));
  return Machine(options, std::move(cpu)).run();
}

}  // namespace ridge::measure
