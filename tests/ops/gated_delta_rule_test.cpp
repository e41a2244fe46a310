// GatedDeltaRule's closed form checked against a brute-force count: every chunk, every strict and kept pair, every
// triple of the triangular inverse and every state element enumerated one by one, as for SelectiveScan.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ridge/cost.hpp"
#include "ridge/error.hpp"
#include "ridge/op_rules.hpp"

namespace ridge {
namespace delta_test {

struct Dims {
  int64_t batch, len, key_heads, heads, kd, vd, chunk;
};

// The forward FLOPs of docs/counting.md's rule, by enumeration.
Count brute_force_flops(const Dims& d, bool step, bool l2norm) {
  Count flops = 0;
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t t = 0; t < d.len; ++t)
      for (int64_t kh = 0; l2norm && kh < d.key_heads; ++kh) flops += 2 * (3 * d.kd + 2);  // q and k normalised
  if (step && d.len == 1) {
    for (int64_t b = 0; b < d.batch; ++b)
      for (int64_t h = 0; h < d.heads; ++h) {
        flops += 10 + d.kd + 2 * d.vd;  // the gate and e^g; the query's scale; v - hᵀk and its beta
        for (int64_t i = 0; i < d.kd; ++i)
          for (int64_t j = 0; j < d.vd; ++j) flops += 1 + 2 + 2 + 2;  // decay; hᵀk; the rank-1 update; hᵀq
      }
    return flops;
  }
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t h = 0; h < d.heads; ++h)
      for (int64_t start = 0; start < d.len; start += d.chunk) {
        const int64_t q = std::min(d.chunk, d.len - start);
        for (int64_t i = 0; i < q; ++i) {
          flops += 13 + 5 * d.kd + 3 * d.vd;        // per token
          flops += 3 * 2 * d.kd * d.vd;             // v - w h, kᵀ v_new, q on the carried state
          for (int64_t j = 0; j < i; ++j) {         // a strict pair
            flops += 2 * d.kd + 4;                  // k_i . k_j, its decay and beta
            flops += 2 * (d.kd + d.vd);             // the inverse's row times beta k e^g and beta v (w, u)
            for (int64_t m = j + 1; m < i; ++m) flops += 2;  // forward substitution: one MAC per triple
          }
          for (int64_t j = 0; j <= i; ++j) flops += 2 * d.kd + 2 * d.vd + 3;  // a kept pair: score, x v_new, decay
        }
        flops += 2 * d.kd * d.vd;  // the carried state's decay and add
      }
  return flops;
}

Graph graph(const Dims& d, bool step, bool l2norm) {
  std::string desc = fmt::format("gateddeltarule:{0}x{1}x{2}x{3},{0}x{1}x{2}x{3},{0}x{1}x{4}x{5},{0}x{1}x{4},{0}x{1}x{4},"
                                 "{4},{4}",
                                 d.batch, d.len, d.key_heads, d.kd, d.heads, d.vd);
  if (step) desc += fmt::format(",{}x{}x{}x{}", d.batch, d.heads, d.kd, d.vd);
  desc += fmt::format("/chunk_size={}/qk_l2norm={}", d.chunk, l2norm ? 1 : 0);
  return ops::graph_of(ops::parse_descriptor(desc), "delta");
}

TEST(GatedDeltaRule, ClosedFormEqualsEnumerationAcrossChunkBoundaries) {
  for (int64_t len : {1, 2, 3, 4, 5, 7, 8, 9, 16, 17})
    for (int64_t chunk : {1, 2, 3, 4, 8, 64})
      for (const Dims base : {Dims{1, 0, 1, 2, 2, 3, 0}, Dims{2, 0, 2, 4, 3, 2, 0}})
        for (bool l2norm : {false, true}) {
          Dims d = base;
          d.len = len, d.chunk = chunk;
          EXPECT_EQ(estimate(graph(d, false, l2norm)).total.flops, brute_force_flops(d, false, l2norm))
              << len << " " << chunk << " " << l2norm;
        }
}

TEST(GatedDeltaRule, OneTokenWithAStateIsTheRecurrence) {
  for (const Dims d : {Dims{1, 1, 1, 2, 3, 2, 64}, Dims{3, 1, 2, 4, 5, 7, 64}}) {
    EXPECT_EQ(estimate(graph(d, true, true)).total.flops, brute_force_flops(d, true, true));
    EXPECT_LT(estimate(graph(d, true, true)).total.flops, estimate(graph(d, false, true)).total.flops);
  }
}

// The backward is each MAC's two operand gradients (4 FLOPs per MAC), the elementwise terms once more, A_log and
// dt_bias 2 per token and head each, and, for a chunked pass from a state, that state's decay (in a one-token step
// the state is an operand of two products, so its gradient is part of the MACs' share).
TEST(GatedDeltaRule, BackwardIsTwoGradientsPerMacPlusTheElementwiseTerms) {
  for (const Dims d : {Dims{1, 5, 1, 2, 3, 2, 2}, Dims{2, 9, 2, 4, 2, 3, 4}, Dims{1, 1, 1, 2, 2, 2, 64}})
    for (bool step : {false, true}) {
      const Cost c = estimate(graph(d, step, true)).total;
      const Count elementwise = c.flops - 2 * c.macs;
      const Count per_head = 2 * 2 * d.batch * d.len * d.heads;
      const Count state = step && d.len > 1 ? 2 * d.batch * d.heads * d.kd * d.vd : 0;
      EXPECT_EQ(c.bwd_flops(), 4 * c.macs + elementwise + per_head + state) << d.len << " " << step;
    }
}

TEST(GatedDeltaRule, MismatchedInputsAreRefusedNamingThem) {
  for (const char* desc : {"gateddeltarule:1x4x1x2,1x4x1x3,1x4x2x2,1x4x2,1x4x2",            // q and k differ
                           "gateddeltarule:1x4x2x2,1x4x2x2,1x4x3x2,1x4x3,1x4x3",            // 3 heads, 2 key heads
                           "gateddeltarule:1x4x1x2,1x4x1x2,1x4x2x2,1x4x3,1x4x2",            // a's heads
                           "gateddeltarule:1x4x1x2,1x4x1x2,1x4x2x2,1x4x2,1x4x2,3,2",        // A_log
                           "gateddeltarule:1x4x1x2,1x4x1x2,1x4x2x2,1x4x2,1x4x2,2,2,1x2x2x3",  // state
                           "gateddeltarule:1x4x1x2",                                          // only q
                           "gateddeltarule:1x4x1x2,1x4x1x2,1x4x2x2,1x4x2"})                   // no b
    EXPECT_THROW(ops::graph_of(ops::parse_descriptor(desc), "delta"), Error) << desc;
}

}  // namespace delta_test
}  // namespace ridge
