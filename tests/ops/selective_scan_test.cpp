// SelectiveScan's closed form checked against a brute-force count: every chunk, every causal pair and every state
// element enumerated one by one (benchdnn's way of checking counts where the chunk boundary makes a formula doubtful).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ridge/cost.hpp"
#include "ridge/error.hpp"
#include "ridge/op_rules.hpp"

namespace ridge {
namespace scan_test {

struct Dims {
  int64_t batch, len, heads, hd, groups, state, chunk;
};

// The forward FLOPs of docs/counting.md's rule, by enumeration.
Count brute_force_flops(const Dims& d, bool step) {
  Count flops = 0;
  if (step && d.len == 1) {
    for (int64_t b = 0; b < d.batch; ++b)
      for (int64_t h = 0; h < d.heads; ++h) {
        flops += 8;  // dt + dt_bias, softplus, dt A, exp
        for (int64_t p = 0; p < d.hd; ++p) {
          flops += 1 + 2;  // dt x; D x (a MAC)
          for (int64_t n = 0; n < d.state; ++n) flops += 3 + 2;  // decay, outer product, add; readout MAC
        }
      }
    return flops;
  }
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t start = 0; start < d.len; start += d.chunk) {
      const int64_t q = std::min(d.chunk, d.len - start);
      for (int64_t i = 0; i < q; ++i)
        for (int64_t j = 0; j <= i; ++j) {  // a kept (causal) pair
          flops += 2 * d.groups * d.state;  // C_i . B_j per group
          flops += d.heads * (2 * d.hd + 3);  // score x x_j per head, its decay (sub, exp, mul)
        }
      for (int64_t i = 0; i < q; ++i)
        for (int64_t h = 0; h < d.heads; ++h) {
          flops += 6;  // dt prep and the running sum of dt A
          for (int64_t p = 0; p < d.hd; ++p) {
            flops += 2 + 2;  // D x; x dt and the carried state's decay
            flops += 2 * d.state * 2;  // B_i x_i into the chunk state; C_i on the carried state
          }
        }
      flops += 2 * d.heads * d.hd * d.state;  // the carried state's decay and add
    }
  return flops;
}

Count rule_flops(const Dims& d, bool step) {
  std::string desc = fmt::format("selectivescan:{0}x{1}x{2}x{3},{0}x{1}x{2},{2},{0}x{1}x{4}x{5},{0}x{1}x{4}x{5},{2},{2}",
                                 d.batch, d.len, d.heads, d.hd, d.groups, d.state);
  if (step) desc += fmt::format(",{}x{}x{}x{}", d.batch, d.heads, d.hd, d.state);
  desc += fmt::format("/chunk_size={}", d.chunk);
  const Graph g = ops::graph_of(ops::parse_descriptor(desc), "scan");
  return estimate(g).total.flops;
}

TEST(SelectiveScan, ClosedFormEqualsEnumerationAcrossChunkBoundaries) {
  for (int64_t len : {1, 2, 3, 5, 7, 8, 9, 16, 17})
    for (int64_t chunk : {1, 2, 4, 8, 64})
      for (const Dims base : {Dims{1, 0, 2, 3, 1, 2, 0}, Dims{2, 0, 4, 2, 2, 3, 0}}) {
        Dims d = base;
        d.len = len, d.chunk = chunk;
        EXPECT_EQ(rule_flops(d, false), brute_force_flops(d, false)) << len << " " << chunk;
      }
}

TEST(SelectiveScan, OneTokenWithAStateIsTheRecurrence) {
  for (const Dims d : {Dims{1, 1, 2, 3, 1, 2, 8}, Dims{3, 1, 4, 5, 2, 7, 256}}) {
    EXPECT_EQ(rule_flops(d, true), brute_force_flops(d, true));
    // The step does less than a one-token chunk (no pair of C and B, no carried-state output of its own).
    EXPECT_LT(rule_flops(d, true), rule_flops(d, false));
  }
}

TEST(SelectiveScan, MismatchedInputsAreRefusedNamingThem) {
  for (const char* desc : {"selectivescan:1x4x2x3,1x4x3,2,1x4x1x2,1x4x1x2,2,2",         // dt heads
                           "selectivescan:1x4x3x3,1x4x3,3,1x4x2x2,1x4x2x2,3,3",         // 3 heads, 2 groups
                           "selectivescan:1x4x2x3,1x4x2,2,1x4x1x2,1x4x1x3,2,2",         // B and C differ
                           "selectivescan:1x4x2x3,1x4x2,2,1x4x1x2,1x4x1x2,2,2,1x2x3x3",  // state
                           "selectivescan:1x4x2x3",                                       // only x
                           "selectivescan:1x4x2x3,1x4x2,2,1x4x1x2"})                      // no C
    EXPECT_THROW(ops::graph_of(ops::parse_descriptor(desc), "scan"), Error) << desc;
}

}  // namespace scan_test
}  // namespace ridge
