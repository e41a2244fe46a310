// The shared measurement loop: warm up, grow the iteration count until one timed run is long enough for the
// clock, then repeat timed runs until the relative noise is low (or a sample/time cap is hit) and summarise.
// Used by the machine micro-benchmarks (machine.hpp) and by the oneDNN executor for per-layer timing.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

namespace ridge::measure {

/// How long and how often to measure. Defaults suit kernels from microseconds to tens of milliseconds.
struct BenchOptions {
  int warmup_runs = 1;             ///< untimed runs (at the calibrated iteration count) before sampling
  double min_run_time_s = 0.005;   ///< grow iterations until one timed run takes at least this long
  int64_t max_iterations = int64_t{1} << 40;  ///< never run more iterations than this in one timed run
  int min_samples = 5;             ///< always take at least this many timed runs
  int max_samples = 50;            ///< never take more timed runs than this
  double target_spread = 0.02;     ///< stop once spread (IQR / median) is at or below this
  double max_total_time_s = 2.0;   ///< stop sampling once this much time went into the whole loop
};

/// Summary of the timed runs, all times per single iteration in seconds.
struct BenchStats {
  double median_s = 0;          ///< median time of one iteration
  double min_s = 0;             ///< fastest sample (per iteration)
  double max_s = 0;             ///< slowest sample (per iteration)
  double q1_s = 0;              ///< first quartile (per iteration)
  double q3_s = 0;              ///< third quartile (per iteration)
  double spread = 0;            ///< relative noise: (q3 - q1) / median
  int samples = 0;              ///< number of timed runs
  int64_t iterations = 1;       ///< iterations per timed run (after calibration)
  double total_time_s = 0;      ///< wall time spent in the whole loop, calibration and warm-up included
  bool converged = false;       ///< spread reached target_spread before a cap stopped sampling
};

/// Runs `iterations` repetitions of the work being measured (the callee loops; the loop overhead is its own).
using RunFn = std::function<void(int64_t iterations)>;
/// A monotonic clock in seconds; injectable so tests can use a synthetic clock.
using ClockFn = std::function<double()>;

/// Seconds from std::chrono::steady_clock.
double steady_seconds();

/// Measures `run`: calibrates the iteration count, warms up, samples until converged or capped.
BenchStats bench_loop(const RunFn& run, const BenchOptions& options = {}, const ClockFn& clock = steady_seconds);

/// Statistics of per-iteration sample times (median, quartiles by linear interpolation, min, max, spread).
/// `samples_s` must not be empty. `iterations` and `total_time_s` are copied into the result.
BenchStats summarize(std::vector<double> samples_s, int64_t iterations = 1, double total_time_s = 0);

}  // namespace ridge::measure
