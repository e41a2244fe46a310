// All-thread timings use the team's wall span (first start to last end), from injected per-thread times.
#include <gtest/gtest.h>

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
