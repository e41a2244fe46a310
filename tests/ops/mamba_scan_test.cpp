// MambaScan (Mamba-1's selective_scan_fn) checked against a count of every token, channel and state element, its
// backward against the rule "twice the forward", and its refusals.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ridge/cost.hpp"
#include "ridge/error.hpp"
#include "ridge/op_rules.hpp"

namespace ridge {
namespace mamba_scan_test {

struct Dims {
  int64_t batch, len, channels, state;
};

// The forward FLOPs of docs/counting.md's rule, by enumeration (D, z and dt_bias present).
Count brute_force_flops(const Dims& d) {
  Count flops = 0;
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t t = 0; t < d.len; ++t)
      for (int64_t ch = 0; ch < d.channels; ++ch) {
        flops += 1 + 3 + 1;  // dt + dt_bias, softplus, dt x
        flops += 2;          // D x
        flops += 4 + 1;      // silu(z) and the product
        for (int64_t n = 0; n < d.state; ++n) flops += 3 + 2 + 2;  // dt A, exp, (dt x) B; update; readout
      }
  return flops;
}

Graph graph(const Dims& d, bool with_state) {
  std::string desc = fmt::format("mambascan:{0}x{1}x{2},{0}x{1}x{2},{2}x{3},{0}x{1}x{3},{0}x{1}x{3},{2},{0}x{1}x{2},{2}",
                                 d.batch, d.len, d.channels, d.state);
  if (with_state) desc += fmt::format(",{}x{}x{}", d.batch, d.channels, d.state);
  return ops::graph_of(ops::parse_descriptor(desc), "scan");
}

TEST(MambaScan, ClosedFormEqualsEnumeration) {
  for (const Dims d : {Dims{1, 1, 1, 1}, Dims{1, 7, 3, 2}, Dims{2, 5, 4, 16}, Dims{3, 1, 6, 5}}) {
    EXPECT_EQ(estimate(graph(d, false)).total.flops, brute_force_flops(d));
    // a decode step from a state is the same recurrence: the state changes nothing of the count
    EXPECT_EQ(estimate(graph(d, true)).total.flops, brute_force_flops(d));
  }
}

TEST(MambaScan, BackwardIsTwiceTheForwardPlusBiasAndState) {
  const Dims d{2, 5, 4, 3};
  const Cost c = estimate(graph(d, true)).total;
  const Count tc = d.batch * d.len * d.channels;
  EXPECT_EQ(c.bwd_flops(), 2 * c.flops + 2 * tc + 2 * d.batch * d.channels * d.state);
  // The output and the final state: [B, L, I] and [B, I, N].
  const Graph g = graph(d, false);
  EXPECT_EQ(to_string(g.value(g.nodes[0].outputs[0]).shape), "2x5x4");
  EXPECT_EQ(to_string(g.value(g.nodes[0].outputs[1]).shape), "2x4x3");
}

TEST(MambaScan, MismatchedInputsAreRefusedNamingThem) {
  for (const char* desc : {"mambascan:1x4x3,1x4x2,3x2,1x4x2,1x4x2",          // dt's channels
                           "mambascan:1x4x3,1x4x3,2x2,1x4x2,1x4x2",          // A's channels
                           "mambascan:1x4x3,1x4x3,3x2,1x4x2,1x4x3",          // C's state
                           "mambascan:1x4x3,1x4x3,3x2,1x4x2,1x4x2,4",        // D
                           "mambascan:1x4x3,1x4x3,3x2,1x4x2,1x4x2,3,1x4x2",  // z
                           "mambascan:1x4x3,1x4x3,3x2,1x4x2,1x4x2,3,1x4x3,3,1x3x3",  // state
                           "mambascan:1x4x3",                                 // only x
                           "mambascan:1x4x3,1x4x3,3x2,1x4x2"})                // no C
    EXPECT_THROW(ops::graph_of(ops::parse_descriptor(desc), "scan"), Error) << desc;
}

}  // namespace mamba_scan_test
}  // namespace ridge
