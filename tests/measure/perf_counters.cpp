// Hardware counters: available or not, the group never fails and says why once.
#include <gtest/gtest.h>

#include <iostream>

#include "ridge/perf_counters.hpp"

namespace ridge::measure {
namespace {

TEST(PerfCounters, EventTableIsConsistent) {
  ASSERT_GE(counter_events().size(), 2u);
  EXPECT_EQ(counter_events()[0].name, "cycles");
  for (const CounterEvent& e : counter_events()) {
    const bool fp = e.name.rfind("fp_arith", 0) == 0;
    EXPECT_EQ(fp, e.flops_per_count > 0) << e.name;
    EXPECT_EQ(fp, e.intel_only) << e.name;
  }
}

TEST(PerfCounters, GroupWorksOrExplainsWhyNot) {
  CounterGroup g;
  volatile double x = 1;
  {
    ScopedCounting scope(g);
    for (int i = 0; i < 100000; ++i) x = x * 1.0000001 + 1e-9;
  }
  const CounterReading r = g.read();
  if (!g.available()) {
    EXPECT_FALSE(g.unavailable_reason().empty());
    EXPECT_NE(g.unavailable_reason().find("perf_event_open"), std::string::npos);
    EXPECT_TRUE(r.values.empty());
    EXPECT_FALSE(r.flops().has_value());
    EXPECT_EQ(counters_unavailable_reason(), g.unavailable_reason());
    std::cout << "hardware counters unavailable: " << g.unavailable_reason() << "\n";
    return;
  }
  EXPECT_TRUE(g.unavailable_reason().empty());
  ASSERT_TRUE(r.get("cycles").has_value());
  EXPECT_GT(*r.get("cycles"), 0);
  g.reset();
  EXPECT_TRUE(counters_unavailable_reason().empty());
}

TEST(PerfCounters, FlopsFromFpArithCounts) {
  CounterReading r;
  r.values = {{"cycles", 100}, {"fp_arith_scalar_double", 3}, {"fp_arith_512b_packed_single", 2}};
  EXPECT_EQ(r.flops(), Count{3 + 2 * 16});
  EXPECT_EQ(r.get("instructions"), std::nullopt);
  CounterReading none;
  none.values = {{"cycles", 100}};
  EXPECT_EQ(none.flops(), std::nullopt);  // no FP events opened: unknown, not zero
}

}  // namespace
}  // namespace ridge::measure
