// The shared measurement loop: calibrate, warm up, sample until the noise is low.
#include "ridge/bench_loop.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "ridge/error.hpp"

namespace ridge::measure {
namespace {

/// Quantile of sorted values by linear interpolation between closest ranks.
double quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

/// Times one call of run(iterations) in seconds.
double time_run(const RunFn& run, int64_t iterations, const ClockFn& clock) {
  const double start = clock();
  run(iterations);
  return clock() - start;
}

/// Grows the iteration count until one run lasts at least min_run_time_s (or hits max_iterations).
int64_t calibrate(const RunFn& run, const BenchOptions& o, const ClockFn& clock) {
  int64_t iterations = 1;
  for (;;) {
    const double t = time_run(run, iterations, clock);
    if (t >= o.min_run_time_s || iterations >= o.max_iterations) return iterations;
    // Aim 20% past the target from the observed rate, growing at most 10x per step (early runs are noisy).
    double factor = t > 0 ? 1.2 * o.min_run_time_s / t : 10.0;
    factor = std::clamp(factor, 2.0, 10.0);
    const double next = std::ceil(static_cast<double>(iterations) * factor);
    iterations = next >= static_cast<double>(o.max_iterations) ? o.max_iterations : static_cast<int64_t>(next);
  }
}

}  // namespace

double steady_seconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

BenchStats summarize(std::vector<double> samples_s, int64_t iterations, double total_time_s) {
  RIDGE_ASSERT(!samples_s.empty(), "summarize needs at least one sample");
  std::sort(samples_s.begin(), samples_s.end());
  BenchStats s;
  s.median_s = quantile(samples_s, 0.5);
  s.q1_s = quantile(samples_s, 0.25);
  s.q3_s = quantile(samples_s, 0.75);
  s.min_s = samples_s.front();
  s.max_s = samples_s.back();
  s.spread = s.median_s > 0 ? (s.q3_s - s.q1_s) / s.median_s : 0.0;
  s.samples = static_cast<int>(samples_s.size());
  s.iterations = iterations;
  s.total_time_s = total_time_s;
  return s;
}

BenchStats bench_loop(const RunFn& run, const BenchOptions& options, const ClockFn& clock) {
  if (options.min_samples < 1 || options.max_samples < options.min_samples || options.max_iterations < 1)
    throw Error("bench_loop: need 1 <= min_samples <= max_samples and max_iterations >= 1");
  const double start = clock();
  const int64_t iterations = calibrate(run, options, clock);
  for (int i = 0; i < options.warmup_runs; ++i) run(iterations);

  std::vector<double> per_iteration;
  BenchStats stats;
  for (;;) {
    per_iteration.push_back(time_run(run, iterations, clock) / static_cast<double>(iterations));
    const int n = static_cast<int>(per_iteration.size());
    if (n < options.min_samples) continue;
    stats = summarize(per_iteration, iterations, clock() - start);
    stats.converged = stats.spread <= options.target_spread;
    if (stats.converged || n >= options.max_samples || stats.total_time_s >= options.max_total_time_s) break;
  }
  return stats;
}

}  // namespace ridge::measure
