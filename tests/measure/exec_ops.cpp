// Every op the executor runs, against a plain reference implementation on small shapes.
// Tolerance: rtol 1e-4, atol 1e-5 (fp32 kernels that reassociate sums), unless a test says otherwise.
#include <cmath>
#include <limits>
#include <numeric>

#include "measure/exec_support.hpp"

namespace ridge::test {
namespace {

using V = std::vector<float>;

/// Naive NCHW convolution with groups, stride, padding (begin = end) and dilation.
V ref_conv(const V& x, const V& w, const V* b, int64_t N, int64_t C, int64_t H, int64_t W, int64_t OC, int64_t K,
           int64_t s, int64_t pad, int64_t d, int64_t g, int64_t OH, int64_t OW) {
  V y(N * OC * OH * OW, 0.f);
  const int64_t icg = C / g, ocg = OC / g;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oc = 0; oc < OC; ++oc)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = b ? (*b)[oc] : 0.0;
          const int64_t grp = oc / ocg;
          for (int64_t ic = 0; ic < icg; ++ic)
            for (int64_t kh = 0; kh < K; ++kh)
              for (int64_t kw = 0; kw < K; ++kw) {
                const int64_t ih = oh * s - pad + kh * d, iw = ow * s - pad + kw * d;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                acc += double(x[((n * C + grp * icg + ic) * H + ih) * W + iw]) * w[((oc * icg + ic) * K + kh) * K + kw];
              }
          y[((n * OC + oc) * OH + oh) * OW + ow] = static_cast<float>(acc);
        }
  return y;
}

Attrs conv_attrs(int64_t k, int64_t s, int64_t p, int64_t d, int64_t g) {
  return Attrs{}
      .set("kernel_shape", std::vector<int64_t>{k, k})
      .set("strides", std::vector<int64_t>{s, s})
      .set("pads", std::vector<int64_t>{p, p, p, p})
      .set("dilations", std::vector<int64_t>{d, d})
      .set("group", g);
}

struct ConvParam {
  int64_t C, OC, K, s, pad, d, g;
};
class ExecConv : public ::testing::TestWithParam<ConvParam> {};

TEST_P(ExecConv, MatchesNaiveLoop) {
  const auto c = GetParam();
  const int64_t N = 2, H = 9, W = 7;
  const int64_t OH = (H + 2 * c.pad - c.d * (c.K - 1) - 1) / c.s + 1, OW = (W + 2 * c.pad - c.d * (c.K - 1) - 1) / c.s + 1;
  ExecCase t;
  int x = t.tensor("x", Shape{{N, c.C, H, W}});
  int w = t.tensor("w", Shape{{c.OC, c.C / c.g, c.K, c.K}}, ValueKind::Param);
  int b = t.tensor("b", Shape{{c.OC}}, ValueKind::Param);
  int y = t.node(OpKind::Conv, {x, w, b}, Shape{{N, c.OC, OH, OW}}, conv_attrs(c.K, c.s, c.pad, c.d, c.g));
  V expect = ref_conv(t[x], t[w], &t[b], N, c.C, H, W, c.OC, c.K, c.s, c.pad, c.d, c.g, OH, OW);
  expect_close(t.run(y), expect);
}

INSTANTIATE_TEST_SUITE_P(Shapes, ExecConv,
                         ::testing::Values(ConvParam{3, 16, 3, 1, 1, 1, 1}, ConvParam{16, 32, 3, 2, 1, 1, 1},
                                           ConvParam{16, 16, 3, 1, 1, 1, 16}, ConvParam{8, 16, 3, 1, 2, 2, 2},
                                           ConvParam{32, 64, 1, 1, 0, 1, 1}, ConvParam{4, 8, 5, 2, 2, 1, 1}));

/// Naive ConvTranspose (NCHW, ONNX weights [C, OC/g, K, K]) as a scatter: input pixel (ih, iw) adds x w into
/// output (ih s + kh d - pad_t, iw s + kw d - pad_l); outputs outside [0, OH) x [0, OW) are dropped.
V ref_conv_transpose(const V& x, const V& w, const V* b, int64_t N, int64_t C, int64_t H, int64_t W, int64_t OC,
                     int64_t K, int64_t s, int64_t pad_t, int64_t pad_l, int64_t d, int64_t g, int64_t OH, int64_t OW) {
  std::vector<double> acc(N * OC * OH * OW, 0.0);
  const int64_t icg = C / g, ocg = OC / g;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t ic = 0; ic < C; ++ic)
      for (int64_t ih = 0; ih < H; ++ih)
        for (int64_t iw = 0; iw < W; ++iw)
          for (int64_t o = 0; o < ocg; ++o)
            for (int64_t kh = 0; kh < K; ++kh)
              for (int64_t kw = 0; kw < K; ++kw) {
                const int64_t oh = ih * s + kh * d - pad_t, ow = iw * s + kw * d - pad_l;
                if (oh < 0 || oh >= OH || ow < 0 || ow >= OW) continue;
                acc[((n * OC + ic / icg * ocg + o) * OH + oh) * OW + ow] +=
                    double(x[((n * C + ic) * H + ih) * W + iw]) * w[((ic * ocg + o) * K + kh) * K + kw];
              }
  V y(acc.size());
  for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(acc[i] + (b ? (*b)[i / (OH * OW) % OC] : 0.f));
  return y;
}

struct ConvTransposeParam {
  int64_t C, OC, K, s, pad, d, g, output_padding;
};
class ExecConvTranspose : public ::testing::TestWithParam<ConvTransposeParam> {};

TEST_P(ExecConvTranspose, MatchesNaiveScatter) {
  const auto c = GetParam();
  const int64_t N = 2, H = 5, W = 4;
  auto out = [&](int64_t in) { return c.s * (in - 1) + c.output_padding + (c.K - 1) * c.d + 1 - 2 * c.pad; };
  const int64_t OH = out(H), OW = out(W);
  ExecCase t;
  int x = t.tensor("x", Shape{{N, c.C, H, W}});
  int w = t.tensor("w", Shape{{c.C, c.OC / c.g, c.K, c.K}}, ValueKind::Param);
  int b = t.tensor("b", Shape{{c.OC}}, ValueKind::Param);
  Attrs a = conv_attrs(c.K, c.s, c.pad, c.d, c.g);
  a.set("output_padding", std::vector<int64_t>{c.output_padding, c.output_padding});
  int y = t.node(OpKind::ConvTranspose, {x, w, b}, Shape{{N, c.OC, OH, OW}}, a);
  ExecResult res;
  expect_close(t.run(y, &res), ref_conv_transpose(t[x], t[w], &t[b], N, c.C, H, W, c.OC, c.K, c.s, c.pad, c.pad, c.d,
                                                  c.g, OH, OW));
  EXPECT_EQ(res.steps.back().status, StepStatus::Executed);
}

// The last case's output_padding reaches past the full output: oneDNN gets a negative right padding.
INSTANTIATE_TEST_SUITE_P(Shapes, ExecConvTranspose,
                         ::testing::Values(ConvTransposeParam{3, 4, 3, 1, 0, 1, 1, 0},
                                           ConvTransposeParam{4, 6, 3, 2, 1, 1, 1, 1},
                                           ConvTransposeParam{4, 4, 3, 2, 1, 2, 2, 1},
                                           ConvTransposeParam{8, 8, 4, 2, 1, 1, 8, 0},
                                           ConvTransposeParam{2, 3, 2, 3, 0, 1, 1, 2}));

TEST(ExecOps, ConvTransposeAutoPadAndOutputShape) {
  struct Case {
    Attrs attrs;
    int64_t OH, OW, pad_t, pad_l;  // pads ONNX derives from total_padding = full - output
  };
  // 3x3 input, 3x3 kernel, stride 2: the full output is 7x7
  const Case cases[] = {
      {Attrs{}.set("auto_pad", std::string("SAME_UPPER")), 6, 6, 0, 0},  // odd padding at the end
      {Attrs{}.set("auto_pad", std::string("SAME_LOWER")), 6, 6, 1, 1},  // odd padding at the start
      {Attrs{}.set("output_shape", std::vector<int64_t>{6, 8}), 6, 8, 1, 0},  // 8 > 7: a bias-only column
      {Attrs{}.set("output_shape", std::vector<int64_t>{7, 9}), 7, 9, 0, 0},  // refused: 2 columns past, stride 2
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(testing::Message() << c.OH << "x" << c.OW << " pads " << c.pad_t << "," << c.pad_l);
    ExecCase t;
    int x = t.tensor("x", Shape{{1, 2, 3, 3}});
    int w = t.tensor("w", Shape{{2, 3, 3, 3}}, ValueKind::Param);
    Attrs a = c.attrs;
    a.set("strides", std::vector<int64_t>{2, 2});
    int y = t.node(OpKind::ConvTranspose, {x, w}, Shape{{1, 3, c.OH, c.OW}}, a);
    ExecResult res;
    HostTensor out = t.run(y, &res);
    if (c.OW == 9) {
      EXPECT_EQ(res.steps.back().status, StepStatus::NotExecuted);
      EXPECT_EQ(res.steps.back().reason, "ConvTranspose output reaching a stride or more past the full output");
      continue;
    }
    EXPECT_EQ(res.steps.back().status, StepStatus::Executed);
    expect_close(out, ref_conv_transpose(t[x], t[w], nullptr, 1, 2, 3, 3, 3, 3, 2, c.pad_t, c.pad_l, 1, 1, c.OH, c.OW));
  }
}

TEST(ExecOps, GemmTransBWithBias) {
  ExecCase t;
  int a = t.tensor("a", Shape{{3, 5}});
  int w = t.tensor("w", Shape{{4, 5}}, ValueKind::Param);
  int b = t.tensor("b", Shape{{4}}, ValueKind::Param);
  int y = t.node(OpKind::Gemm, {a, w, b}, Shape{{3, 4}}, Attrs{}.set("transB", int64_t{1}));
  V e(12);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) {
      double acc = t[b][j];
      for (int k = 0; k < 5; ++k) acc += double(t[a][i * 5 + k]) * t[w][j * 5 + k];
      e[i * 4 + j] = static_cast<float>(acc);
    }
  expect_close(t.run(y), e);
}

TEST(ExecOps, GemmAlphaBetaTransA) {
  ExecCase t;
  int a = t.tensor("a", Shape{{5, 3}});
  int w = t.tensor("w", Shape{{5, 4}}, ValueKind::Param);
  int c = t.tensor("c", Shape{{3, 4}}, ValueKind::Param);
  int y = t.node(OpKind::Gemm, {a, w, c}, Shape{{3, 4}},
                 Attrs{}.set("transA", int64_t{1}).set("alpha", 0.5).set("beta", 2.0));
  V e(12);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) {
      double acc = 0;
      for (int k = 0; k < 5; ++k) acc += double(t[a][k * 3 + i]) * t[w][k * 4 + j];
      e[i * 4 + j] = static_cast<float>(0.5 * acc + 2.0 * t[c][i * 4 + j]);
    }
  expect_close(t.run(y), e);
}

TEST(ExecOps, BatchedMatMulWithBroadcast) {
  ExecCase t;
  int a = t.tensor("a", Shape{{2, 3, 4, 5}});
  int b = t.tensor("b", Shape{{3, 5, 6}});
  int y = t.node(OpKind::MatMul, {a, b}, Shape{{2, 3, 4, 6}});
  V e(2 * 3 * 4 * 6);
  for (int n = 0; n < 2; ++n)
    for (int h = 0; h < 3; ++h)
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 6; ++j) {
          double acc = 0;
          for (int k = 0; k < 5; ++k) acc += double(t[a][((n * 3 + h) * 4 + i) * 5 + k]) * t[b][(h * 5 + k) * 6 + j];
          e[((n * 3 + h) * 4 + i) * 6 + j] = static_cast<float>(acc);
        }
  expect_close(t.run(y), e);
}

TEST(ExecOps, MatMulActivationTimesWeight) {
  ExecCase t;
  int a = t.tensor("a", Shape{{2, 3, 4}});
  int w = t.tensor("w", Shape{{4, 5}}, ValueKind::Param);
  int y = t.node(OpKind::MatMul, {a, w}, Shape{{2, 3, 5}});
  V e(30);
  for (int r = 0; r < 6; ++r)
    for (int j = 0; j < 5; ++j) {
      double acc = 0;
      for (int k = 0; k < 4; ++k) acc += double(t[a][r * 4 + k]) * t[w][k * 5 + j];
      e[r * 5 + j] = static_cast<float>(acc);
    }
  expect_close(t.run(y), e);
}

TEST(ExecOps, BatchNormInference) {
  ExecCase t;
  int x = t.tensor("x", Shape{{2, 3, 4, 4}});
  int s = t.tensor("s", Shape{{3}}, ValueKind::Param);
  int b = t.tensor("b", Shape{{3}}, ValueKind::Param);
  int m = t.tensor("m", Shape{{3}}, ValueKind::Buffer);
  int v = t.tensor("v", Shape{{3}}, ValueKind::Buffer, 0.5f, 1.5f);
  int y = t.node(OpKind::BatchNormalization, {x, s, b, m, v}, Shape{{2, 3, 4, 4}}, Attrs{}.set("epsilon", 1e-3));
  V e(t[x].size());
  for (size_t i = 0; i < e.size(); ++i) {
    const size_t c = (i / 16) % 3;
    e[i] = (t[x][i] - t[m][c]) / std::sqrt(t[v][c] + 1e-3f) * t[s][c] + t[b][c];
  }
  expect_close(t.run(y), e);
}

TEST(ExecOps, LayerNormLastAxis) {
  ExecCase t;
  int x = t.tensor("x", Shape{{2, 3, 8}});
  int s = t.tensor("s", Shape{{8}}, ValueKind::Param);
  int b = t.tensor("b", Shape{{8}}, ValueKind::Param);
  int y = t.node(OpKind::LayerNormalization, {x, s, b}, Shape{{2, 3, 8}}, Attrs{}.set("epsilon", 1e-5));
  V e(48);
  for (int r = 0; r < 6; ++r) {
    double mean = 0, var = 0;
    for (int k = 0; k < 8; ++k) mean += t[x][r * 8 + k] / 8.0;
    for (int k = 0; k < 8; ++k) var += std::pow(t[x][r * 8 + k] - mean, 2) / 8.0;
    for (int k = 0; k < 8; ++k)
      e[r * 8 + k] = static_cast<float>((t[x][r * 8 + k] - mean) / std::sqrt(var + 1e-5) * t[s][k] + t[b][k]);
  }
  expect_close(t.run(y), e);
}

struct UnaryParam {
  OpKind op;
  float (*ref)(float);
  Attrs attrs;
  float lo, hi;
};
class ExecUnary : public ::testing::TestWithParam<UnaryParam> {};

TEST_P(ExecUnary, MatchesStdMath) {
  const auto& u = GetParam();
  ExecCase t;
  int x = t.tensor("x", Shape{{2, 3, 5}}, ValueKind::Input, u.lo, u.hi);
  int y = t.node(u.op, {x}, Shape{{2, 3, 5}}, u.attrs);
  V e;
  for (float v : t[x]) e.push_back(u.ref(v));
  expect_close(t.run(y), e);
}

INSTANTIATE_TEST_SUITE_P(
    Ops, ExecUnary,
    ::testing::Values(
        UnaryParam{OpKind::Relu, [](float v) { return std::max(v, 0.f); }, {}, -1, 1},
        UnaryParam{OpKind::Clip, [](float v) { return std::clamp(v, 0.f, 0.5f); },
                   Attrs{}.set("min", 0.0).set("max", 0.5), -1, 1},
        UnaryParam{OpKind::Sigmoid, [](float v) { return 1.f / (1.f + std::exp(-v)); }, {}, -3, 3},
        UnaryParam{OpKind::Tanh, [](float v) { return std::tanh(v); }, {}, -3, 3},
        UnaryParam{OpKind::Gelu, [](float v) { return 0.5f * v * (1.f + std::erf(v / std::sqrt(2.f))); }, {}, -3, 3},
        UnaryParam{OpKind::Erf, [](float v) { return std::erf(v); }, {}, -2, 2},
        UnaryParam{OpKind::Exp, [](float v) { return std::exp(v); }, {}, -2, 2},
        UnaryParam{OpKind::Log, [](float v) { return std::log(v); }, {}, 0.1f, 3},
        UnaryParam{OpKind::Sqrt, [](float v) { return std::sqrt(v); }, {}, 0.1f, 3},
        UnaryParam{OpKind::LeakyRelu, [](float v) { return v > 0 ? v : 0.1f * v; }, Attrs{}.set("alpha", 0.1), -1, 1},
        UnaryParam{OpKind::HardSigmoid, [](float v) { return std::clamp(0.2f * v + 0.5f, 0.f, 1.f); }, {}, -4, 4},
        UnaryParam{OpKind::HardSwish, [](float v) { return v * std::clamp(v / 6.f + 0.5f, 0.f, 1.f); }, {}, -4, 4},
        UnaryParam{OpKind::Neg, [](float v) { return -v; }, {}, -1, 1},
        UnaryParam{OpKind::Reciprocal, [](float v) { return 1.f / v; }, {}, 0.5f, 2},
        UnaryParam{OpKind::Silu, [](float v) { return v / (1.f + std::exp(-v)); }, {}, -4, 4},
        UnaryParam{OpKind::Elu, [](float v) { return v > 0 ? v : 0.5f * (std::exp(v) - 1.f); },
                   Attrs{}.set("alpha", 0.5), -2, 2},
        UnaryParam{OpKind::Abs, [](float v) { return std::fabs(v); }, {}, -2, 2},
        UnaryParam{OpKind::Mish, [](float v) { return v * std::tanh(std::log1p(std::exp(v))); }, {}, -4, 4},
        UnaryParam{OpKind::Softplus, [](float v) { return std::log1p(std::exp(v)); }, {}, -4, 4}));

/// Reference numpy-style broadcasting binary op on row-major data.
V ref_broadcast(const V& a, const Shape& as, const V& b, const Shape& bs, const Shape& ys, float (*f)(float, float)) {
  V y(ys.elements());
  const int r = ys.rank();
  for (size_t i = 0; i < y.size(); ++i) {
    std::vector<int64_t> idx(r);
    size_t rem = i;
    for (int k = r - 1; k >= 0; --k) idx[k] = rem % ys[k], rem /= ys[k];
    auto offset = [&](const Shape& s) {
      int64_t off = 0;
      for (int k = 0; k < s.rank(); ++k) off = off * s[k] + (s[k] == 1 ? 0 : idx[r - s.rank() + k]);
      return off;
    };
    y[i] = f(a[offset(as)], b[offset(bs)]);
  }
  return y;
}

struct BinaryParam {
  OpKind op;
  float (*ref)(float, float);
  Shape a, b, y;
};
class ExecBinary : public ::testing::TestWithParam<BinaryParam> {};

TEST_P(ExecBinary, BroadcastsLikeNumpy) {
  const auto& p = GetParam();
  ExecCase t;
  int a = t.tensor("a", p.a, ValueKind::Input, 0.5f, 1.5f);
  int b = t.tensor("b", p.b, ValueKind::Input, 0.5f, 1.5f);
  int y = t.node(p.op, {a, b}, p.y);
  expect_close(t.run(y), ref_broadcast(t[a], p.a, t[b], p.b, p.y, p.ref));
}

float add(float a, float b) { return a + b; }
float sub(float a, float b) { return a - b; }
float mul(float a, float b) { return a * b; }
float div_(float a, float b) { return a / b; }
float pow_(float a, float b) { return std::pow(a, b); }

INSTANTIATE_TEST_SUITE_P(
    Ops, ExecBinary,
    ::testing::Values(BinaryParam{OpKind::Add, add, Shape{{2, 3, 4}}, Shape{{2, 3, 4}}, Shape{{2, 3, 4}}},
                      BinaryParam{OpKind::Add, add, Shape{{2, 3, 4}}, Shape{{4}}, Shape{{2, 3, 4}}},
                      BinaryParam{OpKind::Add, add, Shape{{3, 1}}, Shape{{2, 3, 4}}, Shape{{2, 3, 4}}},
                      BinaryParam{OpKind::Sub, sub, Shape{{1, 4}}, Shape{{3, 1}}, Shape{{3, 4}}},
                      BinaryParam{OpKind::Mul, mul, Shape{{2, 3, 4, 4}}, Shape{{2, 3, 1, 1}}, Shape{{2, 3, 4, 4}}},
                      BinaryParam{OpKind::Div, div_, Shape{{2, 3}}, Shape{{}}, Shape{{2, 3}}},
                      BinaryParam{OpKind::Div, div_, Shape{{3}}, Shape{{2, 3}}, Shape{{2, 3}}},
                      BinaryParam{OpKind::Pow, pow_, Shape{{2, 3}}, Shape{{1}}, Shape{{2, 3}}}));

TEST(ExecOps, MaxPoolCeilModeAndAveragePool) {
  ExecCase t;
  int x = t.tensor("x", Shape{{1, 2, 5, 5}});
  Attrs a = Attrs{}
                .set("kernel_shape", std::vector<int64_t>{2, 2})
                .set("strides", std::vector<int64_t>{2, 2})
                .set("ceil_mode", int64_t{1});
  int y = t.node(OpKind::MaxPool, {x}, Shape{{1, 2, 3, 3}}, a);
  V e;
  for (int c = 0; c < 2; ++c)
    for (int oh = 0; oh < 3; ++oh)
      for (int ow = 0; ow < 3; ++ow) {
        float m = -1e30f;
        for (int kh = 0; kh < 2; ++kh)
          for (int kw = 0; kw < 2; ++kw)
            if (oh * 2 + kh < 5 && ow * 2 + kw < 5) m = std::max(m, t[x][(c * 5 + oh * 2 + kh) * 5 + ow * 2 + kw]);
        e.push_back(m);
      }
  expect_close(t.run(y), e);

  ExecCase u;
  int x2 = u.tensor("x", Shape{{1, 1, 4, 4}});
  Attrs pad = Attrs{}
                  .set("kernel_shape", std::vector<int64_t>{3, 3})
                  .set("pads", std::vector<int64_t>{1, 1, 1, 1});
  int y2 = u.node(OpKind::AveragePool, {x2}, Shape{{1, 1, 4, 4}}, pad);
  V e2;
  for (int oh = 0; oh < 4; ++oh)
    for (int ow = 0; ow < 4; ++ow) {
      float s = 0;
      int cnt = 0;
      for (int ih = oh - 1; ih <= oh + 1; ++ih)
        for (int iw = ow - 1; iw <= ow + 1; ++iw)
          if (ih >= 0 && ih < 4 && iw >= 0 && iw < 4) s += u[x2][ih * 4 + iw], ++cnt;
      e2.push_back(s / cnt);  // count_include_pad = 0
    }
  expect_close(u.run(y2), e2);
}

TEST(ExecOps, GlobalAndAdaptiveAveragePool) {
  ExecCase t;
  int x = t.tensor("x", Shape{{2, 3, 4, 6}});
  int g = t.node(OpKind::GlobalAveragePool, {x}, Shape{{2, 3, 1, 1}});
  V e;
  for (int i = 0; i < 6; ++i) e.push_back(std::accumulate(&t[x][i * 24], &t[x][i * 24] + 24, 0.f) / 24);
  expect_close(t.run(g), e);
  int a = t.node(OpKind::AdaptiveAvgPool, {x}, Shape{{2, 3, 2, 3}}, Attrs{}.set("output_size", std::vector<int64_t>{2, 3}));
  V e2;
  for (int i = 0; i < 6; ++i)
    for (int oh = 0; oh < 2; ++oh)
      for (int ow = 0; ow < 3; ++ow) {
        float s = 0;
        for (int kh = 0; kh < 2; ++kh)
          for (int kw = 0; kw < 2; ++kw) s += t[x][i * 24 + (oh * 2 + kh) * 6 + ow * 2 + kw];
        e2.push_back(s / 4);
      }
  expect_close(t.run(a), e2);
}

TEST(ExecOps, SoftmaxAndLogSoftmax) {
  for (OpKind op : {OpKind::Softmax, OpKind::LogSoftmax}) {
    ExecCase t;
    int x = t.tensor("x", Shape{{3, 7}}, ValueKind::Input, -3, 3);
    int y = t.node(op, {x}, Shape{{3, 7}}, Attrs{}.set("axis", int64_t{-1}));
    V e(21);
    for (int r = 0; r < 3; ++r) {
      double s = 0;
      for (int k = 0; k < 7; ++k) s += std::exp(t[x][r * 7 + k]);
      for (int k = 0; k < 7; ++k)
        e[r * 7 + k] = static_cast<float>(op == OpKind::Softmax ? std::exp(t[x][r * 7 + k]) / s : t[x][r * 7 + k] - std::log(s));
    }
    expect_close(t.run(y), e);
  }
}

TEST(ExecOps, ConcatTransposeAndViews) {
  ExecCase t;
  int a = t.tensor("a", Shape{{2, 3, 4}});
  int b = t.tensor("b", Shape{{2, 2, 4}});
  int c = t.node(OpKind::Concat, {a, b}, Shape{{2, 5, 4}}, Attrs{}.set("axis", int64_t{1}));
  int tr = t.node(OpKind::Transpose, {c}, Shape{{4, 2, 5}}, Attrs{}.set("perm", std::vector<int64_t>{2, 0, 1}));
  int r = t.node(OpKind::Reshape, {tr}, Shape{{8, 5}});
  int f = t.node(OpKind::Flatten, {r}, Shape{{8, 5}}, Attrs{}.set("axis", int64_t{1}));
  int d = t.node(OpKind::Dropout, {f}, Shape{{8, 5}});
  V cat(40);
  for (int n = 0; n < 2; ++n)
    for (int ch = 0; ch < 5; ++ch)
      for (int k = 0; k < 4; ++k)
        cat[(n * 5 + ch) * 4 + k] = ch < 3 ? t[a][(n * 3 + ch) * 4 + k] : t[b][(n * 2 + ch - 3) * 4 + k];
  V e(40);
  for (int k = 0; k < 4; ++k)
    for (int n = 0; n < 2; ++n)
      for (int ch = 0; ch < 5; ++ch) e[(k * 2 + n) * 5 + ch] = cat[(n * 5 + ch) * 4 + k];
  ExecResult res;
  expect_close(t.run(d, &res), e);
  EXPECT_EQ(res.steps.back().kernel, "view");
}

// A concat of a batch of 1 may hand its consumer a layout that differs from row-major only in the strides of the
// unit batch dim (oneDNN's bac for [1, 4, 8]): the same bytes. The Add after it (ViT's class token + position
// embedding) must still get oneDNN's optimised binary kernel, not its reference one (50x slower).
TEST(ExecOps, AddAfterAUnitBatchConcatRunsTheOptimisedKernel) {
  ExecCase t;
  int cls = t.tensor("cls", Shape{{1, 1, 8}});
  int patches = t.tensor("patches", Shape{{1, 3, 8}});
  int pos = t.tensor("pos", Shape{{1, 4, 8}}, ValueKind::Param);
  int c = t.node(OpKind::Concat, {cls, patches}, Shape{{1, 4, 8}}, Attrs{}.set("axis", int64_t{1}));
  int y = t.node(OpKind::Add, {c, pos}, Shape{{1, 4, 8}});
  V e(32);
  for (int i = 0; i < 32; ++i) e[i] = (i < 8 ? t[cls][i] : t[patches][i - 8]) + t[pos][i];
  ExecResult res;
  expect_close(t.run(y, &res), e);
  ASSERT_FALSE(res.steps.empty());
  EXPECT_EQ(res.steps.back().op, "Add");
  EXPECT_EQ(res.steps.back().kernel.find("ref"), std::string::npos) << res.steps.back().kernel;
}

// A broadcast along a middle axis (Swin's attention mask, [1, 9, 1, 49, 49] over [1, 9, 3, 49, 49]): right values,
// and never oneDNN's reference binary kernel (50x slower than ridge's row loop, which runs instead where oneDNN has
// no optimised kernel for the pattern).
TEST(ExecOps, MiddleAxisBroadcastAddAvoidsTheReferenceBinary) {
  ExecCase t;
  int a = t.tensor("a", Shape{{1, 2, 3, 4, 5}});
  int m = t.tensor("m", Shape{{1, 2, 1, 4, 5}});
  int y = t.node(OpKind::Add, {a, m}, Shape{{1, 2, 3, 4, 5}});
  V e(120);
  for (int i = 0; i < 120; ++i) {
    const int w = i / 60, k = i % 20;
    e[i] = t[a][i] + t[m][w * 20 + k];
  }
  ExecResult res;
  expect_close(t.run(y, &res), e);
  EXPECT_NE(res.steps.back().kernel, "ref:any");
}

TEST(ExecOps, GatherEmbeddingRows) {
  ExecCase t;
  int table = t.tensor("table", Shape{{10, 4}}, ValueKind::Param);
  Value ids;
  ids.name = "ids";
  ids.dtype = DType::I64;
  ids.shape = Shape{{2, 3}};
  ids.kind = ValueKind::Input;
  int idv = t.g.add_value(ids);
  t.g.inputs.push_back(idv);
  t.data["ids"] = HostTensor{ids.shape, {1, 9, 0, 3, 3, -1}};
  int y = t.node(OpKind::Gather, {table, idv}, Shape{{2, 3, 4}}, Attrs{}.set("axis", int64_t{0}));
  V e;
  for (int row : {1, 9, 0, 3, 3, 9})
    for (int k = 0; k < 4; ++k) e.push_back(t[table][row * 4 + k]);
  expect_close(t.run(y), e);
}

TEST(ExecOps, ReduceMeanSumMaxAndArgMax) {
  ExecCase t;
  int x = t.tensor("x", Shape{{2, 3, 4}});
  int mean = t.node(OpKind::ReduceMean, {x}, Shape{{2, 1, 4}},
                    Attrs{}.set("axes", std::vector<int64_t>{1}).set("keepdims", int64_t{1}));
  V e(8);
  for (int n = 0; n < 2; ++n)
    for (int k = 0; k < 4; ++k) e[n * 4 + k] = (t[x][n * 12 + k] + t[x][n * 12 + 4 + k] + t[x][n * 12 + 8 + k]) / 3;
  expect_close(t.run(mean), e);
  int sum = t.node(OpKind::ReduceSum, {x}, Shape{{2}}, Attrs{}.set("axes", std::vector<int64_t>{1, 2}).set("keepdims", int64_t{0}));
  V s2 = {std::accumulate(&t[x][0], &t[x][0] + 12, 0.f), std::accumulate(&t[x][12], &t[x][12] + 12, 0.f)};
  expect_close(t.run(sum), s2);
  int mx = t.node(OpKind::ReduceMax, {x}, Shape{{1, 1, 1}}, Attrs{});
  expect_close(t.run(mx), {*std::max_element(t[x].begin(), t[x].end())});
  int am = t.node(OpKind::ArgMax, {x}, Shape{{2, 3, 1}}, Attrs{}.set("axis", int64_t{2}));
  V ea;
  for (int r = 0; r < 6; ++r)
    ea.push_back(static_cast<float>(std::max_element(&t[x][r * 4], &t[x][r * 4] + 4) - &t[x][r * 4]));
  expect_close(t.run(am), ea);
}

TEST(ExecOps, SliceAndSplit) {
  ExecCase t;
  int x = t.tensor("x", Shape{{2, 6}});
  int s = t.node(OpKind::Slice, {x}, Shape{{2, 3}},
                 Attrs{}.set("axes", std::vector<int64_t>{1}).set("starts", std::vector<int64_t>{2}).set("ends", std::vector<int64_t>{5}));
  expect_close(t.run(s), {t[x][2], t[x][3], t[x][4], t[x][8], t[x][9], t[x][10]});

  ExecCase u;
  int x2 = u.tensor("x", Shape{{2, 6}});
  Value o1, o2;
  o1.name = "first", o2.name = "second";
  o1.shape = Shape{{2, 2}}, o2.shape = Shape{{2, 4}};
  int a = u.g.add_value(o1), b = u.g.add_value(o2);
  Node n;
  n.name = "split";
  n.op = OpKind::Split;
  n.inputs = {x2};
  n.outputs = {a, b};
  n.attrs.set("axis", int64_t{1}).set("split", std::vector<int64_t>{2, 4});
  u.g.add_node(n);
  expect_close(u.run(b), {u[x2][2], u[x2][3], u[x2][4], u[x2][5], u[x2][8], u[x2][9], u[x2][10], u[x2][11]});
}

TEST(ExecOps, WhereAndEqualBroadcast) {
  ExecCase t;
  int a = t.tensor("a", Shape{{2, 3}});
  int b = t.tensor("b", Shape{{3}});
  int eq = t.node(OpKind::Equal, {a, a}, Shape{{2, 3}});
  int w = t.node(OpKind::Where, {eq, b, a}, Shape{{2, 3}});
  V e;
  for (int i = 0; i < 6; ++i) e.push_back(t[b][i % 3]);
  expect_close(t.run(w), e);
}

// GPT-2's causal mask: a [1, 1, T, T] condition over [B, H, T, T] scores, a scalar fill; and a condition broadcast
// along the last axis ([T, 1]), where every row reads one element. Checked element by element.
TEST(ExecOps, WhereBroadcastsTheConditionRowByRow) {
  for (const Shape& cond_shape : {Shape{{1, 1, 4, 5}}, Shape{{4, 1}}}) {
    ExecCase t;
    int cond = t.tensor("cond", cond_shape);
    for (size_t i = 0; i < t.data["cond"].data.size(); ++i) t.data["cond"].data[i] = i % 3 == 0 ? 0.f : 1.f;
    int x = t.tensor("x", Shape{{2, 3, 4, 5}});
    int fill = t.tensor("fill", Shape{});
    int w = t.node(OpKind::Where, {cond, x, fill}, Shape{{2, 3, 4, 5}});
    V e(120);
    for (int i = 0; i < 120; ++i) {
      const int row = (i / 5) % 4, col = i % 5;
      const float c = cond_shape.rank() == 4 ? t[cond][row * 5 + col] : t[cond][row];
      e[i] = c != 0.f ? t[x][i] : t[fill][0];
    }
    expect_close(t.run(w), e);
  }
}

// RMSNormalization over the last axis and over the last two, with a per-element scale.
TEST(ExecOps, RmsNormalizationOverTheTrailingAxes) {
  for (int64_t axis : {-1, 1}) {
    ExecCase t;
    int x = t.tensor("x", Shape{{2, 3, 4}});
    const int64_t inner = axis == -1 ? 4 : 12;
    int w = t.tensor("w", Shape{{inner}}, ValueKind::Param);
    int y = t.node(OpKind::RMSNormalization, {x, w}, Shape{{2, 3, 4}},
                   Attrs{}.set("axis", axis).set("epsilon", 1e-3));
    V e(24);
    for (int64_t r = 0; r < 24 / inner; ++r) {
      double sum = 0;
      for (int64_t j = 0; j < inner; ++j) sum += t[x][r * inner + j] * t[x][r * inner + j];
      const double inv = 1.0 / std::sqrt(sum / inner + 1e-3);
      for (int64_t j = 0; j < inner; ++j) e[r * inner + j] = static_cast<float>(t[x][r * inner + j] * inv * t[w][j]);
    }
    expect_close(t.run(y), e);
  }
}

// A recurrent node whose inputs disagree in shape (here the recurrence weights) is refused with the reason, not
// read out of bounds; a well-formed one runs.
TEST(ExecOps, LstmWithMismatchedRecurrenceWeightsIsRefused) {
  for (int64_t r_width : {2, 5}) {
    ExecCase t;
    int x = t.tensor("x", Shape{{3, 1, 4}});
    int w = t.tensor("w", Shape{{1, 8, 4}}, ValueKind::Param);  // 4 gates x hidden 2
    int r = t.tensor("r", Shape{{1, 8, r_width}}, ValueKind::Param);
    int y = t.node(OpKind::LSTM, {x, w, r}, Shape{{3, 1, 1, 2}}, Attrs{}.set("hidden_size", int64_t{2}));
    ExecResult res;
    t.run(y, &res);
    const StepInfo& step = res.steps.back();
    if (r_width == 2) {
      EXPECT_EQ(step.status, StepStatus::Executed) << step.reason;
    } else {
      EXPECT_EQ(step.status, StepStatus::NotExecuted);
      EXPECT_NE(step.reason.find("recurrence weights 1x8x5, expected 1x8x2"), std::string::npos) << step.reason;
    }
  }
}

TEST(ExecOps, PadModesOnOneAxis) {
  struct Case {
    std::string mode;
    std::vector<int64_t> pads;
    V expect;
  };
  const Case cases[] = {{"constant", {-1, 2}, {2, 3, 9, 9}},  // a negative pad crops
                        {"reflect", {2, 2}, {3, 2, 1, 2, 3, 2, 1}},
                        {"edge", {2, 2}, {1, 1, 1, 2, 3, 3, 3}},
                        {"wrap", {2, 2}, {2, 3, 1, 2, 3, 1, 2}}};
  for (const auto& c : cases) {
    ExecCase t;
    int x = t.tensor("x", Shape{{3}});
    t.data["x"].data = {1, 2, 3};
    int y = t.node(OpKind::Pad, {x, t.ints("pads", c.pads), t.floats("value", {9})},
                   Shape{{static_cast<int64_t>(c.expect.size())}}, Attrs{}.set("mode", c.mode));
    expect_close(t.run(y), c.expect);
  }
}

TEST(ExecOps, PadModesOnChosenAxes) {
  const int64_t N = 2, C = 3, H = 4, W = 5, top = 1, left = 2, OH = H + 1 + 3, OW = W + 2 + 1;
  for (std::string mode : {"constant", "reflect", "edge", "wrap"}) {
    ExecCase t;
    int x = t.tensor("x", Shape{{N, C, H, W}});
    int y = t.node(OpKind::Pad, {x, t.ints("pads", {top, left, 3, 1}), -1, t.ints("axes", {-2, 3})},
                   Shape{{N, C, OH, OW}}, Attrs{}.set("mode", mode));
    auto source = [&](int64_t i, int64_t n) -> int64_t {  // pads are smaller than the dims: one reflection
      if (i >= 0 && i < n) return i;
      if (mode == "edge") return i < 0 ? 0 : n - 1;
      if (mode == "reflect") return i < 0 ? -i : 2 * (n - 1) - i;
      if (mode == "wrap") return i < 0 ? i + n : i - n;
      return -1;
    };
    V e;
    for (int64_t p = 0; p < N * C; ++p)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          const int64_t ih = source(oh - top, H), iw = source(ow - left, W);
          e.push_back(ih < 0 || iw < 0 ? 0.f : t[x][(p * H + ih) * W + iw]);
        }
    expect_close(t.run(y), e);
  }
}

/// Input coordinate of output index j in ONNX Resize (scale * in is the resized length, as ONNX's reference).
double resize_coord(const std::string& ctm, int64_t j, int64_t in, int64_t out, double scale) {
  const double len = scale * static_cast<double>(in);
  if (ctm == "align_corners") return len == 1 ? 0 : j * (in - 1.0) / (len - 1);
  if (ctm == "asymmetric") return j / scale;
  if (ctm == "pytorch_half_pixel" && len <= 1) return 0;
  if (ctm == "tf_half_pixel_for_nn") return (j + 0.5) / scale;
  if (ctm == "half_pixel_symmetric") return in / 2.0 * (1 - out / len) + (j + 0.5) / scale - 0.5;
  return (j + 0.5) / scale - 0.5;
}

int64_t nearest(double x, const std::string& mode, int64_t in) {
  const bool tie = x - std::floor(x) == 0.5;
  const double r = mode == "floor"                ? std::floor(x)
                   : mode == "ceil"               ? std::ceil(x)
                   : tie && mode == "round_prefer_ceil" ? std::ceil(x)
                   : tie                          ? std::floor(x)
                                                  : std::round(x);
  return std::clamp<int64_t>(static_cast<int64_t>(r), 0, in - 1);
}

struct ResizeParam {
  std::string mode, ctm, nearest_mode;
  std::vector<float> scales;    // empty: sizes given
  std::vector<int64_t> sizes;   // output dims
};
class ExecResize : public ::testing::TestWithParam<ResizeParam> {};

TEST_P(ExecResize, MatchesDirectInterpolation) {
  const auto& c = GetParam();
  const int64_t N = 2, C = 3, H = 5, W = 7, OH = c.sizes[2], OW = c.sizes[3];
  ExecCase t;
  int x = t.tensor("x", Shape{{N, C, H, W}});
  Attrs a = Attrs{}.set("mode", c.mode).set("coordinate_transformation_mode", c.ctm);
  if (!c.nearest_mode.empty()) a.set("nearest_mode", c.nearest_mode);
  std::vector<int> ins{x, -1};
  if (c.scales.empty()) ins.insert(ins.end(), {-1, t.ints("sizes", c.sizes)});
  else ins.push_back(t.floats("scales", c.scales));
  int y = t.node(OpKind::Resize, ins, Shape{c.sizes}, a);
  const double sh = c.scales.empty() ? double(OH) / H : c.scales[2], sw = c.scales.empty() ? double(OW) / W : c.scales[3];
  V e;
  for (int64_t p = 0; p < N * C; ++p)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        const double yc = resize_coord(c.ctm, oh, H, OH, sh), xc = resize_coord(c.ctm, ow, W, OW, sw);
        auto at = [&](int64_t ih, int64_t iw) {
          return double(t[x][(p * H + std::clamp<int64_t>(ih, 0, H - 1)) * W + std::clamp<int64_t>(iw, 0, W - 1)]);
        };
        if (c.mode == "nearest") {
          e.push_back(static_cast<float>(at(nearest(yc, c.nearest_mode, H), nearest(xc, c.nearest_mode, W))));
          continue;
        }
        const int64_t y0 = static_cast<int64_t>(std::floor(yc)), x0 = static_cast<int64_t>(std::floor(xc));
        const double fy = yc - y0, fx = xc - x0;
        e.push_back(static_cast<float>((1 - fy) * ((1 - fx) * at(y0, x0) + fx * at(y0, x0 + 1)) +
                                       fy * ((1 - fx) * at(y0 + 1, x0) + fx * at(y0 + 1, x0 + 1))));
      }
  expect_close(t.run(y), e);
}

INSTANTIATE_TEST_SUITE_P(
    Modes, ExecResize,
    ::testing::Values(ResizeParam{"linear", "half_pixel", "", {}, {2, 3, 9, 4}},
                      ResizeParam{"linear", "align_corners", "", {1, 1, 1.5f, 0.6f}, {2, 3, 7, 4}},
                      ResizeParam{"linear", "asymmetric", "", {1, 1, 2, 2}, {2, 3, 10, 14}},
                      ResizeParam{"linear", "pytorch_half_pixel", "", {}, {2, 3, 1, 10}},
                      ResizeParam{"nearest", "half_pixel", "round_prefer_floor", {1, 1, 2, 0.5f}, {2, 3, 10, 3}},
                      ResizeParam{"nearest", "asymmetric", "floor", {}, {2, 3, 7, 12}},
                      ResizeParam{"nearest", "align_corners", "ceil", {}, {2, 3, 3, 9}},
                      ResizeParam{"nearest", "half_pixel", "round_prefer_ceil", {1, 1, 3, 1.5f}, {2, 3, 15, 10}},
                      ResizeParam{"nearest", "tf_half_pixel_for_nn", "round_prefer_floor", {1, 1, 0.5f, 2}, {2, 3, 2, 14}},
                      ResizeParam{"linear", "half_pixel_symmetric", "", {1, 1, 1.7f, 0.75f}, {2, 3, 8, 5}}));

TEST(ExecOps, ResizeOnnxExamples) {
  struct Case {
    std::string mode, ctm;
    std::vector<float> scales;
    Shape out;
    V expect;
  };
  const Case cases[] = {
      {"nearest", "half_pixel", {1, 1, 2, 3}, Shape{{1, 1, 4, 6}},
       {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}},
      {"linear", "half_pixel", {1, 1, 2, 2}, Shape{{1, 1, 4, 4}},
       {1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f, 2.5f, 2.75f, 3.25f, 3.5f, 3, 3.25f, 3.75f, 4}},
      {"linear", "align_corners", {1, 1, 2, 2}, Shape{{1, 1, 4, 4}},
       {1, 4 / 3.f, 5 / 3.f, 2, 5 / 3.f, 2, 7 / 3.f, 8 / 3.f, 7 / 3.f, 8 / 3.f, 3, 10 / 3.f, 3, 10 / 3.f, 11 / 3.f, 4}},
  };
  for (const auto& c : cases) {
    ExecCase t;
    int x = t.tensor("x", Shape{{1, 1, 2, 2}});
    t.data["x"].data = {1, 2, 3, 4};
    int y = t.node(OpKind::Resize, {x, -1, t.floats("scales", c.scales)}, c.out,
                   Attrs{}.set("mode", c.mode).set("coordinate_transformation_mode", c.ctm));
    expect_close(t.run(y), c.expect);
  }
}

TEST(ExecOps, ResizeWithoutScalesPayloadUsesTheGraphSizes) {  // `ridge measure` reads no weights
  ExecCase t;
  int x = t.tensor("x", Shape{{1, 1, 2, 2}});
  t.data["x"].data = {1, 2, 3, 4};
  int scales = t.floats("scales", {1, 1, 2, 2});
  t.data.erase("scales");
  int y = t.node(OpKind::Resize, {x, -1, scales}, Shape{{1, 1, 4, 4}});
  ExecResult res;
  expect_close(t.run(y, &res), {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
  EXPECT_NE(std::find_if(res.notes.begin(), res.notes.end(),
                         [](const std::string& s) { return s.find("output/input size ratios") != std::string::npos; }),
            res.notes.end());
}

TEST(ExecOps, ResizeRefusesWhatItCannotRun) {
  const std::pair<Attrs, std::string> cases[] = {
      {Attrs{}.set("mode", std::string("cubic")), "Resize mode cubic"},
      {Attrs{}.set("mode", std::string("linear")).set("coordinate_transformation_mode", std::string("tf_crop_and_resize")),
       "Resize coordinate_transformation_mode tf_crop_and_resize"},
      {Attrs{}.set("nearest_mode", std::string("nearest_even")), "Resize nearest_mode nearest_even"},
      {Attrs{}.set("antialias", int64_t{1}), "Resize with antialias"},
  };
  for (const auto& [attrs, reason] : cases) {
    ExecCase t;
    int x = t.tensor("x", Shape{{1, 1, 2, 2}});
    int y = t.node(OpKind::Resize, {x, -1, t.floats("scales", {1, 1, 2, 2})}, Shape{{1, 1, 4, 4}}, attrs);
    ExecResult res;
    t.run(y, &res);
    ASSERT_EQ(res.steps.size(), 1u);
    EXPECT_EQ(res.steps[0].status, StepStatus::NotExecuted);
    EXPECT_EQ(res.steps[0].reason, reason);
  }
}

TEST(ExecOps, SliceWithStepsAndNegativeSteps) {
  ExecCase t;
  int x = t.tensor("x", Shape{{4, 6, 5}});
  // axis 0: 3, 2, 1; axis 1: from -1 (5) down to -7 (before the start) by 2: 5, 3, 1; axis 2: 0, 2, 4
  int y = t.node(OpKind::Slice, {x, t.ints("starts", {3, -1, 0}), t.ints("ends", {0, -7, 5}), t.ints("axes", {0, 1, 2}),
                                 t.ints("steps", {-1, -2, 2})},
                 Shape{{3, 3, 3}});
  V e;
  for (int i : {3, 2, 1})
    for (int j : {5, 3, 1})
      for (int k : {0, 2, 4}) e.push_back(t[x][(i * 6 + j) * 5 + k]);
  expect_close(t.run(y), e);

  constexpr int64_t kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
  int rev = t.node(OpKind::Slice, {x, t.ints("s2", {kMax}), t.ints("e2", {kMin}), t.ints("a2", {-1}), t.ints("p2", {-1})},
                   Shape{{4, 6, 5}});
  V r;
  for (int row = 0; row < 24; ++row)
    for (int k = 4; k >= 0; --k) r.push_back(t[x][row * 5 + k]);
  expect_close(t.run(rev), r);
}

}  // namespace
namespace {

/// Brute-force attention on 4-D [B, H, len, size] tensors: K/V already hold past + new keys, `bias` is the full
/// [B, Hq, L, T] additive bias (-inf masked), query head h reads K/V head h / (Hq / Hkv).
V brute_attention(const V& q, const V& k, const V& v, const V& bias, int64_t B, int64_t Hq, int64_t Hkv, int64_t L,
                  int64_t T, int64_t E, int64_t Ev, double scale, double softcap) {
  V y(static_cast<size_t>(B * Hq * L * Ev));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h)
      for (int64_t i = 0; i < L; ++i) {
        const int64_t hk = h / (Hq / Hkv);
        std::vector<double> s(T);
        double best = -INFINITY, sum = 0;
        for (int64_t t = 0; t < T; ++t) {
          double dot = 0;
          for (int64_t e = 0; e < E; ++e) dot += q[((b * Hq + h) * L + i) * E + e] * k[((b * Hkv + hk) * T + t) * E + e];
          dot *= scale;
          if (softcap > 0) dot = softcap * std::tanh(dot / softcap);
          s[t] = dot + bias[((b * Hq + h) * L + i) * T + t];
          best = std::max(best, s[t]);
        }
        for (auto& x : s) sum += x = std::exp(x - best);
        for (int64_t e = 0; e < Ev; ++e) {
          double acc = 0;
          for (int64_t t = 0; t < T; ++t) acc += s[t] / sum * v[((b * Hkv + hk) * T + t) * Ev + e];
          y[((b * Hq + h) * L + i) * Ev + e] = static_cast<float>(acc);
        }
      }
  return y;
}

}  // namespace

// ONNX Attention (opset 23), 4-D: grouped-query heads (4 query heads on 2 K/V heads), past key/value (present
// outputs are past + new), is_causal offset by the past, softcap, scale, and a float mask broadcast over heads.
TEST(ExecOps, AttentionWithPastCausalSoftcapAndGroupedHeads) {
  const int64_t B = 2, Hq = 4, Hkv = 2, L = 3, Tn = 2, P = 2, T = P + Tn, E = 4, Ev = 5;
  ExecCase t;
  int q = t.tensor("q", Shape{{B, Hq, L, E}}), k = t.tensor("k", Shape{{B, Hkv, Tn, E}}),
      v = t.tensor("v", Shape{{B, Hkv, Tn, Ev}}), mask = t.tensor("mask", Shape{{B, 1, L, T}}),
      pk = t.tensor("pk", Shape{{B, Hkv, P, E}}), pv = t.tensor("pv", Shape{{B, Hkv, P, Ev}});
  int y = t.node(OpKind::Attention, {q, k, v, mask, pk, pv}, Shape{{B, Hq, L, Ev}},
                 Attrs{}.set("is_causal", int64_t{1}).set("softcap", 2.0).set("scale", 0.4));
  int present_k = t.extra_output(y, Shape{{B, Hkv, T, E}}), present_v = t.extra_output(y, Shape{{B, Hkv, T, Ev}});
  // present = concat(past, new) on the sequence axis
  auto concat = [&](int past, int now, int64_t size) {
    V c;
    for (int64_t bh = 0; bh < B * Hkv; ++bh) {
      c.insert(c.end(), t[past].begin() + bh * P * size, t[past].begin() + (bh + 1) * P * size);
      c.insert(c.end(), t[now].begin() + bh * Tn * size, t[now].begin() + (bh + 1) * Tn * size);
    }
    return c;
  };
  const V kc = concat(pk, k, E), vc = concat(pv, v, Ev);
  V bias(static_cast<size_t>(B * Hq * L * T));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h)
      for (int64_t i = 0; i < L; ++i)
        for (int64_t j = 0; j < T; ++j)
          bias[((b * Hq + h) * L + i) * T + j] = j > i + P ? -INFINITY : t[mask][(b * L + i) * T + j];
  const V want = brute_attention(t[q], kc, vc, bias, B, Hq, Hkv, L, T, E, Ev, 0.4, 2.0);
  expect_close(t.run(y), want);
  expect_close(t.run(present_k), kc, 0, 0);
  expect_close(t.run(present_v), vc, 0, 0);
}

// 3-D inputs [B, L, heads * size] with q_num_heads / kv_num_heads, the default scale 1/sqrt(E), and a bool
// mask shorter than the keys (the keys past its end are masked, as ONNX's reference pads it with False).
TEST(ExecOps, AttentionThreeDimensionalWithShortBoolMask) {
  const int64_t B = 1, Hq = 2, Hkv = 1, L = 3, T = 4, E = 4, Ev = 3;
  ExecCase t;
  int q = t.tensor("q", Shape{{B, L, Hq * E}}), k = t.tensor("k", Shape{{B, T, Hkv * E}}),
      v = t.tensor("v", Shape{{B, T, Hkv * Ev}});
  int mask = t.floats("mask", {1, 0, 1, 1, 1, 0, 0, 1, 1});  // [3, 3]: attend where 1
  t.g.values[mask].shape = Shape{{L, 3}};
  t.g.values[mask].dtype = DType::Bool;
  t.data["mask"].shape = Shape{{L, 3}};
  int y = t.node(OpKind::Attention, {q, k, v, mask}, Shape{{B, L, Hq * Ev}},
                 Attrs{}.set("q_num_heads", Hq).set("kv_num_heads", Hkv));
  // the same in 4-D: Q [B, L, Hq, E] -> [B, Hq, L, E]; K and V have one head
  V q4(t[q].size());
  for (int64_t i = 0; i < L; ++i)
    for (int64_t h = 0; h < Hq; ++h)
      for (int64_t e = 0; e < E; ++e) q4[(h * L + i) * E + e] = t[q][(i * Hq + h) * E + e];
  V bias(static_cast<size_t>(Hq * L * T));
  const V& m = t[mask];
  for (int64_t h = 0; h < Hq; ++h)
    for (int64_t i = 0; i < L; ++i)
      for (int64_t j = 0; j < T; ++j) bias[(h * L + i) * T + j] = j < 3 && m[i * 3 + j] != 0 ? 0.f : -INFINITY;
  const V y4 = brute_attention(q4, t[k], t[v], bias, B, Hq, Hkv, L, T, E, Ev, 1 / std::sqrt(4.0), 0);
  V want(y4.size());  // back to [B, L, Hq * Ev]
  for (int64_t i = 0; i < L; ++i)
    for (int64_t h = 0; h < Hq; ++h)
      for (int64_t e = 0; e < Ev; ++e) want[(i * Hq + h) * Ev + e] = y4[(h * L + i) * Ev + e];
  ExecResult res;
  expect_close(t.run(y, &res), want);
  EXPECT_EQ(res.steps.back().kernel, "reference");
}

// What the kernel does not run is refused with the reason: the qk_matmul_output output, disagreeing shapes.
TEST(ExecOps, AttentionQkOutputIsRefused) {
  ExecCase t;
  int q = t.tensor("q", Shape{{1, 1, 2, 4}}), k = t.tensor("k", Shape{{1, 1, 2, 4}}), v = t.tensor("v", Shape{{1, 1, 2, 4}});
  int y = t.node(OpKind::Attention, {q, k, v}, Shape{{1, 1, 2, 4}});
  t.extra_output(y, Shape{{1, 1, 2, 4}});
  t.extra_output(y, Shape{{1, 1, 2, 4}});
  t.extra_output(y, Shape{{1, 1, 2, 2}});
  ExecResult res;
  t.run(y, &res);
  EXPECT_EQ(res.steps.back().status, StepStatus::NotExecuted);
  EXPECT_NE(res.steps.back().reason.find("qk_matmul_output"), std::string::npos) << res.steps.back().reason;
  // K with another head size than Q (a malformed file): refused, never read out of bounds
  ExecCase bad;
  int bq = bad.tensor("q", Shape{{1, 1, 2, 4}}), bk = bad.tensor("k", Shape{{1, 1, 2, 3}}),
      bv = bad.tensor("v", Shape{{1, 1, 2, 4}});
  bad.run(bad.node(OpKind::Attention, {bq, bk, bv}, Shape{{1, 1, 2, 4}}), &res);
  EXPECT_EQ(res.steps.back().status, StepStatus::NotExecuted);
  EXPECT_NE(res.steps.back().reason.find("disagree"), std::string::npos) << res.steps.back().reason;
}

// ScatterND against a brute-force scatter: whole rows (index length 1) and single elements (length 2), replace
// and add, negative indices, indices read when the step runs (a computed tensor, not a folded constant).
TEST(ExecOps, ScatterNdReplacesAndReducesAtRunTimeIndices) {
  struct Row {
    std::vector<float> idx;
    Shape idx_shape, upd_shape;
    std::string reduction;
  };
  const Row rows[] = {{{2, 0}, Shape{{2, 1}}, Shape{{2, 3}}, "none"},
                      {{1, 2, -1, 0, 1, 2}, Shape{{3, 2}}, Shape{{3}}, "add"},
                      {{3, 1}, Shape{{2, 1}}, Shape{{2, 3}}, "max"}};
  for (const Row& r : rows) {
    ExecCase t;
    int data = t.tensor("data", Shape{{4, 3}});
    int idx_in = t.tensor("idx", r.idx_shape);
    t.data["idx"].data = r.idx;
    int upd = t.tensor("upd", r.upd_shape);
    // Identity makes the indices a computed value: the kernel reads them at run time
    int idx = t.node(OpKind::Identity, {idx_in}, r.idx_shape);
    int y = t.node(OpKind::ScatterND, {data, idx, upd}, Shape{{4, 3}}, Attrs{}.set("reduction", r.reduction));
    V e = t[data];
    const int64_t k = r.idx_shape.dims.back(), slice = k == 1 ? 3 : 1;
    for (size_t u = 0; u < r.idx.size() / k; ++u) {
      int64_t off = 0;
      for (int64_t j = 0; j < k; ++j) {
        int64_t i = static_cast<int64_t>(r.idx[u * k + j]);
        if (i < 0) i += j == 0 ? 4 : 3;
        off = off * (j == 0 ? 4 : 3) + i;
      }
      for (int64_t s = 0; s < slice; ++s) {
        float& to = e[off * slice + s];
        const float from = t[upd][u * slice + s];
        to = r.reduction == "add" ? to + from : r.reduction == "max" ? std::max(to, from) : from;
      }
    }
    ExecResult res;
    expect_close(t.run(y, &res), e);
    EXPECT_EQ(res.steps.back().kernel, "reference") << r.reduction;
  }
}

// An index outside the data is a one-line error naming the node, when the step runs; updates that do not match
// the indices are refused with the reason, never read out of bounds.
TEST(ExecOps, ScatterNdOutOfRangeIndexAndMismatchedUpdatesAreRefused) {
  ExecCase t;
  int data = t.tensor("data", Shape{{4, 3}});
  int idx = t.tensor("idx", Shape{{1, 1}});
  t.data["idx"].data = {4};
  int upd = t.tensor("upd", Shape{{1, 3}});
  int y = t.node(OpKind::ScatterND, {data, idx, upd}, Shape{{4, 3}});
  try {
    t.run(y);
    ADD_FAILURE() << "no error for index 4 on an axis of 4";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ScatterND index 4 out of range [0, 4)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(t.g.nodes.back().name), std::string::npos) << e.what();
  }
  for (const float nonsense : {std::nanf(""), 1e30f}) {  // never converted to an integer (undefined behaviour)
    t.data["idx"].data = {nonsense};
    try {
      t.run(y);
      ADD_FAILURE() << "no error for index " << nonsense;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("is not an integer in range"), std::string::npos) << e.what();
    }
  }
  ExecCase bad;
  int bd = bad.tensor("data", Shape{{4, 3}}), bi = bad.tensor("idx", Shape{{2, 1}}), bu = bad.tensor("upd", Shape{{2, 2}});
  ExecResult res;
  bad.run(bad.node(OpKind::ScatterND, {bd, bi, bu}, Shape{{4, 3}}), &res);
  EXPECT_EQ(res.steps.back().status, StepStatus::NotExecuted);
  EXPECT_NE(res.steps.back().reason.find("do not match"), std::string::npos) << res.steps.back().reason;
}

// Swin's shifted-window mask in miniature, as torchvision exports it: a float ConstantOfShape filled with
// region numbers by ScatterND, its indices an integer Concat computed at run time (too large for ridge to fold
// at import), then != 0 as Not(Equal) selecting -100 or 0. Every step runs, in the right values.
TEST(ExecOps, ShiftedWindowMaskFromConstantOfShapeScatterNdConcatAndNot) {
  ExecCase t;
  int shape = t.ints("shape", {4});
  int zeros = t.node(OpKind::ConstantOfShape, {shape}, Shape{{4}});  // no value attribute: float 0
  // integer index columns, as computed values of dtype int64 (not folded): rows {1, 3} then {2}
  int a_in = t.tensor("a", Shape{{2, 1}}), b_in = t.tensor("b", Shape{{1, 1}});
  t.data["a"].data = {1, 3};
  t.data["b"].data = {2};
  int a = t.node(OpKind::Identity, {a_in}, Shape{{2, 1}}), b = t.node(OpKind::Identity, {b_in}, Shape{{1, 1}});
  int idx = t.node(OpKind::Concat, {a, b}, Shape{{3, 1}}, Attrs{}.set("axis", int64_t{0}));
  for (int v : {a_in, b_in, a, b, idx}) t.g.values[v].dtype = DType::I64;
  int regions = t.node(OpKind::ConstantOfShape, {t.ints("shape3", {3})}, Shape{{3}}, Attrs{}.set("value", 2.0));
  int mask = t.node(OpKind::ScatterND, {zeros, idx, regions}, Shape{{4}});
  int eq = t.node(OpKind::Equal, {mask, t.floats("zero", {0.f})}, Shape{{4}});
  int ne = t.node(OpKind::Not, {eq}, Shape{{4}});
  for (int v : {eq, ne}) t.g.values[v].dtype = DType::Bool;
  int y = t.node(OpKind::Where, {ne, t.floats("minus100", {-100.f}), t.floats("zerof", {0.f})}, Shape{{4}});
  ExecResult res;
  expect_close(t.run(y, &res), {0.f, -100.f, -100.f, -100.f});
  for (const auto& s : res.steps) EXPECT_NE(s.status, StepStatus::NotExecuted) << s.name << ": " << s.reason;
  // an integer fill (an int64 value attribute, an I64 output too large to fold at import) runs as well
  ExecCase ti;
  int filled = ti.node(OpKind::ConstantOfShape, {ti.ints("shape", {5000})}, Shape{{5000}},
                       Attrs{}.set("value", int64_t{7}));
  ti.g.values[filled].dtype = DType::I64;
  const HostTensor out = ti.run(filled, &res);
  EXPECT_EQ(res.steps.back().status, StepStatus::Executed) << res.steps.back().reason;
  EXPECT_EQ(out.data, std::vector<float>(5000, 7.f));
}

// A BatchNormalization in ONNX's training mode (an opset-13 export of a model in train(): running and saved
// statistics asked for as outputs; or training_mode = 1) normalises with the batch's statistics, as ONNX Runtime
// does, and its running-mean / running-variance outputs are updated by momentum. Before, it used the running
// statistics: resnet18.train's output differed from ONNX Runtime's by 1.06.
TEST(ExecOps, BatchNormInTrainingModeUsesTheBatchStatistics) {
  for (const bool by_attribute : {false, true}) {
    ExecCase t;
    int x = t.tensor("x", Shape{{2, 3, 2, 2}});
    int s = t.tensor("s", Shape{{3}}, ValueKind::Param), b = t.tensor("b", Shape{{3}}, ValueKind::Param);
    int m = t.tensor("m", Shape{{3}}, ValueKind::Buffer), v = t.tensor("v", Shape{{3}}, ValueKind::Buffer, 0.5f, 1.5f);
    Attrs a = Attrs{}.set("epsilon", 1e-3).set("momentum", 0.8);
    if (by_attribute) a.set("training_mode", int64_t{1});
    int y = t.node(OpKind::BatchNormalization, {x, s, b, m, v}, Shape{{2, 3, 2, 2}}, a);
    int running_mean = t.extra_output(y, Shape{{3}}), running_var = t.extra_output(y, Shape{{3}});
    if (!by_attribute) t.extra_output(y, Shape{{3}}), t.extra_output(y, Shape{{3}});  // saved mean, var
    V want_y(t[x].size()), want_mean(3), want_var(3);
    for (size_t c = 0; c < 3; ++c) {
      double sum = 0, sq = 0;
      for (size_t i = 0; i < want_y.size(); ++i)
        if ((i / 4) % 3 == c) sum += t[x][i], sq += double(t[x][i]) * t[x][i];
      const double mean = sum / 8, var = sq / 8 - mean * mean;  // population variance, as ONNX
      for (size_t i = 0; i < want_y.size(); ++i)
        if ((i / 4) % 3 == c) want_y[i] = static_cast<float>((t[x][i] - mean) / std::sqrt(var + 1e-3) * t[s][c] + t[b][c]);
      want_mean[c] = static_cast<float>(t[m][c] * 0.8 + mean * 0.2);
      want_var[c] = static_cast<float>(t[v][c] * 0.8 + var * 0.2);
    }
    expect_close(t.run(y), want_y);
    expect_close(t.run(running_mean), want_mean);
    expect_close(t.run(running_var), want_var);
  }
}

// Dropout in ONNX's training mode (an export of a model in train()) runs: every element is dropped (0) or kept and
// scaled by 1 / (1 - ratio), the mask output says which, about 1 - ratio are kept; with training_mode false it is
// the identity. Before, such a node was "not executed" (mnist_cnn.train).
TEST(ExecOps, DropoutInTrainingModeMasksAndScales) {
  for (const int64_t training : {1, 0}) {
    ExecCase t;
    int x = t.tensor("x", Shape{{40, 100}}, ValueKind::Input, 0.5f, 1.5f);
    int y = t.node(OpKind::Dropout, {x, t.floats("ratio", {0.25f}), t.ints("training_mode", {training})},
                   Shape{{40, 100}});
    int mask = t.extra_output(y, Shape{{40, 100}});
    const HostTensor out = t.run(y);
    if (!training) {
      expect_close(out, t[x]);
      continue;
    }
    const HostTensor m = t.run(mask);
    size_t kept = 0;
    for (size_t i = 0; i < out.data.size(); ++i) {
      ASSERT_TRUE(m.data[i] == 0.f || m.data[i] == 1.f) << m.data[i];
      kept += m.data[i] == 1.f;
      EXPECT_FLOAT_EQ(out.data[i], m.data[i] * t[x][i] / 0.75f) << i;
    }
    EXPECT_NEAR(static_cast<double>(kept) / out.data.size(), 0.75, 0.03);
  }
  // ratio 0 given as an input (not the attribute that makes it a view): every element kept, unscaled
  ExecCase t;
  int x = t.tensor("x", Shape{{3, 4}});
  int y = t.node(OpKind::Dropout, {x, t.floats("ratio", {0.f}), t.ints("training_mode", {1})}, Shape{{3, 4}});
  expect_close(t.run(y), t[x]);
}

}  // namespace ridge::test
