// All-thread timings use the team's wall span (first start to last end), from injected per-thread times; the
// team runs each job once per thread.
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "measure/machine/thread_team.hpp"

namespace ridge::measure {
namespace {

TEST(MachineTeamSpan, OverlappingThreadsTakeTheLongestSpan) {
  EXPECT_DOUBLE_EQ(team_span_s({10.0, 10.1}, {11.0, 11.2}), 1.2);
}

TEST(MachineTeamSpan, ALateThreadCountsInFull) {
  // thread 1 starts when thread 0 is done: two seconds of wall time, not the one second each thread saw
  EXPECT_DOUBLE_EQ(team_span_s({0.0, 1.0}, {1.0, 2.0}), 2.0);
}

TEST(MachineTeamSpan, OneThreadIsItsOwnTime) {
  EXPECT_DOUBLE_EQ(team_span_s({3.0}, {3.5}), 0.5);
  EXPECT_DOUBLE_EQ(team_span_s({}, {}), 0.0);
}

}  // namespace
}  // namespace ridge::measure

namespace ridge::measure {
namespace {

/// Every run gives each thread index the job exactly once, and run() returns only after all of them finished,
/// both with workers that spin between runs and with workers that sleep at once (hot window 0).
void expect_each_index_once_per_run(int size, double hot_window_s) {
  ThreadTeam team(size, hot_window_s);
  ASSERT_EQ(team.size(), size);
  std::vector<std::atomic<int>> calls(static_cast<size_t>(size));
  for (int run = 1; run <= 100; ++run) {
    team.run([&](int t) { calls[static_cast<size_t>(t)].fetch_add(1); });
    for (int t = 0; t < size; ++t) ASSERT_EQ(calls[static_cast<size_t>(t)].load(), run) << "thread " << t;
  }
}

TEST(MachineThreadTeam, EachThreadRunsTheJobOncePerRun) {
  for (int size : {1, 2, 3}) {
    expect_each_index_once_per_run(size, 0.2);
    expect_each_index_once_per_run(size, 0.0);
  }
}

TEST(MachineThreadTeam, ASizeBelowOneIsOneThread) { EXPECT_EQ(ThreadTeam(0).size(), 1); }

}  // namespace
}  // namespace ridge::measure
