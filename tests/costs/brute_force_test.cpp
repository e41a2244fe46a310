// Closed-form conv and linear counts checked against brute-force loops on random small shapes.
#include <gtest/gtest.h>

#include <random>

#include "costs/tiny_graphs.hpp"
#include "load/zoo/builder.hpp"
#include "ridge/cost.hpp"
#include "ridge/op_geometry.hpp"

namespace ridge {
namespace {

using test::Tiny;

/// Output length along one axis found by sliding the window until it leaves the padded input.
int64_t brute_out_len(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) {
  int64_t n = 0;
  for (int64_t start = -p; start + d * (k - 1) <= in - 1 + p; start += s) ++n;
  return n;
}

TEST(BruteForce, ConvMacsAndFlopsMatchLoopOverOutputsAndTaps) {
  std::mt19937 rng(1234);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int checked = 0;
  for (int iter = 0; iter < 60; ++iter) {
    const int64_t groups = std::vector<int64_t>{1, 1, 2, 3, 4}[pick(0, 4)];
    const int64_t n = pick(1, 3), cin = groups * pick(1, 4), cout = groups * pick(1, 4);
    const int64_t k = pick(1, 5), s = pick(1, 3), p = pick(0, 2), d = pick(1, 2);
    const int64_t h = pick(k * d, 12), w = pick(k * d, 12);
    const bool bias = pick(0, 1) == 1;
    const int64_t oh = brute_out_len(h, k, s, p, d), ow = brute_out_len(w, k, s, p, d);
    if (oh <= 0 || ow <= 0) continue;
    // Brute force: every output element visits every tap of its group's input channels. `macs` counts every
    // tap (the convention of ridge and of every tool); `effective` skips the taps that land on padding, as
    // benchdnn's count_ops does, which the closed form must not simply restate.
    Count macs = 0, effective = 0;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t oc = 0; oc < cout; ++oc)
        for (int64_t y = 0; y < oh; ++y)
          for (int64_t x = 0; x < ow; ++x)
            for (int64_t ic = 0; ic < cin / groups; ++ic)
              for (int64_t ky = 0; ky < k; ++ky)
                for (int64_t kx = 0; kx < k; ++kx) {
                  ++macs;
                  const int64_t iy = y * s - p + ky * d, ix = x * s - p + kx * d;
                  if (iy >= 0 && iy < h && ix >= 0 && ix < w) ++effective;
                }
    // The zoo builder's closed-form output size must agree with the sliding-window count.
    zoo::Builder bld("conv", DType::F32);
    int in = bld.input("x", Shape{{n, cin, h, w}}, DType::F32);
    int out = bld.conv2d(in, "conv", cout, k, s, p, groups, bias, d);
    ASSERT_EQ(bld.shape(out), (Shape{{n, cout, oh, ow}}));
    Graph g = bld.finish({out});
    ModelCost mc = estimate(g);
    const Count outputs = n * cout * oh * ow;
    SCOPED_TRACE(mc.nodes[0].descriptor);
    EXPECT_EQ(mc.total.macs, macs);
    EXPECT_EQ(ops::conv_geometry(g, g.nodes[0]).effective_macs, effective);
    if (p > 0 && k > 1) { EXPECT_LT(effective, macs); }
    EXPECT_EQ(mc.total.flops, 2 * macs + (bias ? outputs : 0));
    EXPECT_EQ(mc.total.params, cout * (cin / groups) * k * k + (bias ? cout : 0));
    // First layer: no grad-input; grad-weight is the same MAC set (+ bias reduction).
    EXPECT_EQ(mc.total.bwd_input_flops, 0);
    EXPECT_EQ(mc.total.bwd_weight_flops, 2 * macs + (bias ? outputs : 0));
    ++checked;
  }
  EXPECT_GE(checked, 50);
}

TEST(BruteForce, LinearMacsMatchLoop) {
  std::mt19937 rng(99);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int iter = 0; iter < 50; ++iter) {
    const int64_t b = pick(1, 4), seq = pick(1, 5), in_f = pick(1, 9), out_f = pick(1, 9);
    const bool bias = pick(0, 1) == 1;
    Count macs = 0;
    for (int64_t r = 0; r < b * seq; ++r)
      for (int64_t o = 0; o < out_f; ++o)
        for (int64_t i = 0; i < in_f; ++i) ++macs;
    Tiny t;
    int x = t.input(Shape{{b, seq, in_f}});
    std::vector<int> ins = {x, t.param("w", Shape{{out_f, in_f}})};
    if (bias) ins.push_back(t.param("b", Shape{{out_f}}));
    int y = t.node(OpKind::Gemm, "fc", ins, Shape{{b, seq, out_f}}, Attrs{}.set("transB", int64_t{1}), "Linear");
    ModelCost mc = estimate(t.done({y}));
    EXPECT_EQ(mc.total.macs, macs);
    EXPECT_EQ(mc.total.flops, 2 * macs + (bias ? b * seq * out_f : 0));
  }
}

}  // namespace
}  // namespace ridge
