// bench_loop and summarize on a synthetic clock: statistics, calibration, stopping rules. No real timing.
#include <gtest/gtest.h>

#include "ridge/bench_loop.hpp"
#include "ridge/error.hpp"

namespace ridge::measure {
namespace {

TEST(BenchLoopStats, SummarizeQuartilesAndSpread) {
  const BenchStats s = summarize({5, 1, 4, 2, 3}, 10, 1.5);
  EXPECT_DOUBLE_EQ(s.median_s, 3);
  EXPECT_DOUBLE_EQ(s.q1_s, 2);
  EXPECT_DOUBLE_EQ(s.q3_s, 4);
  EXPECT_DOUBLE_EQ(s.min_s, 1);
  EXPECT_DOUBLE_EQ(s.max_s, 5);
  EXPECT_DOUBLE_EQ(s.spread, 2.0 / 3.0);
  EXPECT_EQ(s.samples, 5);
  EXPECT_EQ(s.iterations, 10);
  EXPECT_DOUBLE_EQ(s.total_time_s, 1.5);
}

TEST(BenchLoopStats, SummarizeInterpolatesEvenCounts) {
  const BenchStats s = summarize({1, 2, 3, 4});
  EXPECT_DOUBLE_EQ(s.median_s, 2.5);
  EXPECT_DOUBLE_EQ(s.q1_s, 1.75);
  EXPECT_DOUBLE_EQ(s.q3_s, 3.25);
}

/// A clock that only advances when the fake work "runs": each iteration costs `per_iteration_s`, scaled by
/// a repeating noise pattern per run.
struct FakeWork {
  double now = 0;
  double per_iteration_s = 1e-6;
  std::vector<double> noise = {1.0};
  size_t runs = 0;
  int64_t total_iterations = 0;
  void run(int64_t n) {
    now += per_iteration_s * static_cast<double>(n) * noise[runs++ % noise.size()];
    total_iterations += n;
  }
};

TEST(BenchLoop, CalibratesUntilRunIsLongEnoughThenConverges) {
  FakeWork w;
  BenchOptions o;
  o.min_run_time_s = 0.01;
  const BenchStats s = bench_loop([&](int64_t n) { w.run(n); }, o, [&] { return w.now; });
  EXPECT_GE(static_cast<double>(s.iterations) * w.per_iteration_s, o.min_run_time_s);
  EXPECT_LT(static_cast<double>(s.iterations) * w.per_iteration_s, 10 * o.min_run_time_s);
  EXPECT_NEAR(s.median_s, w.per_iteration_s, 1e-12);
  EXPECT_TRUE(s.converged);
  EXPECT_EQ(s.samples, o.min_samples);  // noiseless: stops at the minimum
  EXPECT_NEAR(s.spread, 0, 1e-9);
}

TEST(BenchLoop, NoisyWorkStopsAtTheSampleCap) {
  FakeWork w;
  w.noise = {1.0, 1.5, 0.8, 1.3, 1.1};
  BenchOptions o;
  o.min_run_time_s = 0.001;
  o.max_samples = 12;
  o.max_total_time_s = 1e9;
  const BenchStats s = bench_loop([&](int64_t n) { w.run(n); }, o, [&] { return w.now; });
  EXPECT_EQ(s.samples, 12);
  EXPECT_FALSE(s.converged);
  EXPECT_GT(s.spread, o.target_spread);
  EXPECT_LE(s.min_s, s.median_s);
  EXPECT_LE(s.median_s, s.max_s);
}

TEST(BenchLoop, StopsAtTheTimeCap) {
  FakeWork w;
  w.per_iteration_s = 0.1;  // every run already exceeds min_run_time
  w.noise = {1.0, 2.0};
  BenchOptions o;
  o.max_total_time_s = 0.5;
  o.min_samples = 3;
  const BenchStats s = bench_loop([&](int64_t n) { w.run(n); }, o, [&] { return w.now; });
  EXPECT_EQ(s.iterations, 1);
  EXPECT_EQ(s.samples, 3);  // calibration + warm-up + 3 samples = 0.7 s > 0.5 s
  EXPECT_FALSE(s.converged);
}

TEST(BenchLoop, RespectsMaxIterations) {
  FakeWork w;
  w.per_iteration_s = 1e-12;
  BenchOptions o;
  o.max_iterations = 1000;
  const BenchStats s = bench_loop([&](int64_t n) { w.run(n); }, o, [&] { return w.now; });
  EXPECT_EQ(s.iterations, 1000);
}

TEST(BenchLoop, RejectsInconsistentOptions) {
  BenchOptions o;
  o.min_samples = 10;
  o.max_samples = 5;
  EXPECT_THROW(bench_loop([](int64_t) {}, o), Error);
}

}  // namespace
}  // namespace ridge::measure
