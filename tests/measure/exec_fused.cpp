// The end-to-end program (ExecOptions::fuse): its outputs equal the per-layer program's within 1e-5 of the
// output's scale, nodes are absorbed into Conv/Gemm/MatMul steps, buffers are shared by liveness, and
// `ridge measure --end-to-end` reports both programs.
#include <nlohmann/json.hpp>
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <filesystem>
#include <cmath>

#include "measure/exec_support.hpp"
#include "ridge/load.hpp"
#include "support/test_support.hpp"

namespace ridge::test {
namespace {

/// max |fused - per_layer| over max |per_layer|, over every output.
double relative_difference(const ExecResult& fused, const ExecResult& per_layer) {
  double diff = 0, scale = 0;
  for (const auto& [name, want] : per_layer.outputs) {
    const HostTensor& got = fused.outputs.at(name);
    EXPECT_EQ(got.shape, want.shape) << name;
    if (got.data.size() != want.data.size()) return INFINITY;
    for (size_t i = 0; i < want.data.size(); ++i) {
      diff = std::max(diff, std::abs(double(got.data[i]) - want.data[i]));
      scale = std::max(scale, std::abs(double(want.data[i])));
    }
  }
  return scale > 0 ? diff / scale : diff;
}

/// Runs `g` both ways; expects equal outputs (1e-5 relative) and returns the fused run.
ExecResult expect_fused_matches(const Graph& g, ExecOptions o = {}) {
  o.threads = 2;
  const ExecResult per_layer = execute(g, o);
  o.fuse = true;
  ExecResult fused = execute(g, o);
  EXPECT_LE(relative_difference(fused, per_layer), 1e-5) << g.name;
  for (const auto& s : fused.steps) EXPECT_NE(s.status, StepStatus::NotExecuted) << s.name << ": " << s.reason;
  // A kernel the per-layer program runs optimised is never a reference kernel in the fused program (on AVX2,
  // oneDNN runs nChw16c convs only in its reference kernel: resnet50 took 148 s per pass instead of 0.08 s).
  for (const auto& s : fused.steps) {
    auto alone = std::find_if(per_layer.steps.begin(), per_layer.steps.end(),
                              [&](const auto& a) { return a.name == s.name && a.op == s.op; });
    if (alone != per_layer.steps.end() && !reference_kernel(alone->kernel)) {
      EXPECT_FALSE(reference_kernel(s.kernel)) << g.name << ": " << s.name << " runs " << s.kernel << " fused, "
                                               << alone->kernel << " alone";
    }
  }
  return fused;
}

size_t fused_node_count(const ExecResult& r) {
  size_t n = 0;
  for (const auto& s : r.steps) n += s.fused_nodes.size();
  return n;
}

Attrs conv_attrs(int64_t k, int64_t pad, int64_t group = 1) {
  return Attrs{}
      .set("kernel_shape", std::vector<int64_t>{k, k})
      .set("pads", std::vector<int64_t>{pad, pad, pad, pad})
      .set("group", group);
}

/// conv-bn-relu, conv-bn + residual add + relu, depthwise conv + Clip (ReLU6), 1x1 conv + residual, Gemm + Relu.
TEST(ExecFused, ConvBatchNormResidualDepthwiseAndGemmMatchPerLayer) {
  ExecCase t;
  const Shape act{{2, 8, 6, 6}};
  int x = t.tensor("x", act);
  auto bn = [&](int in, const std::string& p) {
    int s = t.tensor(p + ".s", Shape{{8}}, ValueKind::Param, 0.5f, 1.5f);
    int b = t.tensor(p + ".b", Shape{{8}}, ValueKind::Param);
    int m = t.tensor(p + ".m", Shape{{8}}, ValueKind::Buffer, -0.5f, 0.5f);
    int v = t.tensor(p + ".v", Shape{{8}}, ValueKind::Buffer, 0.5f, 2.0f);
    return t.node(OpKind::BatchNormalization, {in, s, b, m, v}, act, Attrs{}.set("epsilon", 1e-5));
  };
  int w1 = t.tensor("w1", Shape{{8, 8, 3, 3}}, ValueKind::Param, -0.2f, 0.2f);
  int c1 = t.node(OpKind::Conv, {x, w1}, act, conv_attrs(3, 1));
  int r1 = t.node(OpKind::Relu, {bn(c1, "bn1")}, act);
  int w2 = t.tensor("w2", Shape{{8, 8, 3, 3}}, ValueKind::Param, -0.2f, 0.2f);
  int b2 = t.tensor("b2", Shape{{8}}, ValueKind::Param);
  int c2 = t.node(OpKind::Conv, {r1, w2, b2}, act, conv_attrs(3, 1));
  int r2 = t.node(OpKind::Relu, {t.node(OpKind::Add, {bn(c2, "bn2"), x}, act)}, act);
  int wd = t.tensor("wd", Shape{{8, 1, 3, 3}}, ValueKind::Param, -0.5f, 0.5f);
  int dw = t.node(OpKind::Conv, {r2, wd}, act, conv_attrs(3, 1, 8));
  int six = t.floats("six", {6.f}), zero = t.floats("zero", {0.f});
  int r6 = t.node(OpKind::Clip, {dw, zero, six}, act);
  int wp = t.tensor("wp", Shape{{8, 8, 1, 1}}, ValueKind::Param, -0.3f, 0.3f);
  int pw = t.node(OpKind::Add, {t.node(OpKind::Conv, {r6, wp}, act, conv_attrs(1, 0)), r2}, act);
  int f = t.node(OpKind::Flatten, {pw}, Shape{{2, 288}}, Attrs{}.set("axis", int64_t{1}));
  int fw = t.tensor("fc.w", Shape{{10, 288}}, ValueKind::Param, -0.1f, 0.1f);
  int fb = t.tensor("fc.b", Shape{{10}}, ValueKind::Param);
  t.g.outputs = {t.node(OpKind::Relu, {t.node(OpKind::Gemm, {f, fw, fb}, Shape{{2, 10}}, Attrs{}.set("transB", int64_t{1}))},
                        Shape{{2, 10}})};
  ExecOptions o;
  for (const auto& [name, data] : t.data) {
    const bool input = name == "x";
    (input ? o.inputs : o.weights)[name] = data;
  }
  const ExecResult fused = expect_fused_matches(t.g, o);
  // bn1+relu, bn2+add+relu, clip, add, relu of the Gemm: 8 absorbed nodes
  EXPECT_EQ(fused_node_count(fused), 8u);
}

/// MatMul + bias Add + Gelu, MatMul + bias + residual Add (a transformer's feed-forward block).
// Squeeze-excitation (EfficientNet, MobileNetV3): a conv's channel-blocked output times a per-channel [N, C, 1, 1]
// scale. oneDNN 2.6 runs that product optimised only when the scale has the same blocking; with a plain scale it
// ran in the reference loop end to end (jit alone), with two reorders of the activation around it
// (efficientnet_v2_s at batch 8: 91 reorder steps, now 31; 0.28-0.30 s, now 0.25 s).
TEST(ExecFused, SqueezeExcitationScaleOfABlockedActivationRunsOptimised) {
  ExecCase t;
  int x = t.tensor("x", Shape{{2, 16, 8, 8}});
  int w1 = t.tensor("w1", Shape{{32, 16, 3, 3}}, ValueKind::Param, -0.2f, 0.2f);
  int c1 = t.node(OpKind::Conv, {x, w1}, Shape{{2, 32, 8, 8}}, conv_attrs(3, 1));
  int pooled = t.node(OpKind::GlobalAveragePool, {c1}, Shape{{2, 32, 1, 1}});
  int ws = t.tensor("ws", Shape{{32, 32, 1, 1}}, ValueKind::Param, -0.3f, 0.3f);
  int scale = t.node(OpKind::Sigmoid, {t.node(OpKind::Conv, {pooled, ws}, Shape{{2, 32, 1, 1}}, conv_attrs(1, 0))},
                     Shape{{2, 32, 1, 1}});
  int se = t.node(OpKind::Mul, {c1, scale}, Shape{{2, 32, 8, 8}});
  int w2 = t.tensor("w2", Shape{{32, 32, 3, 3}}, ValueKind::Param, -0.2f, 0.2f);
  t.g.outputs = {t.node(OpKind::Conv, {se, w2}, Shape{{2, 32, 8, 8}}, conv_attrs(3, 1))};
  // fails the Mul if it runs in a reference kernel fused but optimised alone (with SSE4.1 only, oneDNN 2.6 runs
  // this broadcast in its reference kernel either way)
  const ExecResult fused = expect_fused_matches(t.g, t.options());
  EXPECT_EQ(std::count_if(fused.steps.begin(), fused.steps.end(), [](const auto& s) { return s.op == "Mul"; }), 1);
}

TEST(ExecFused, MatMulBiasGeluResidualMatchPerLayer) {
  ExecCase t;
  const Shape tok{{2, 5, 16}}, hid{{2, 5, 32}};
  int x = t.tensor("x", tok);
  int w1 = t.tensor("w1", Shape{{16, 32}}, ValueKind::Param, -0.3f, 0.3f);
  int b1 = t.tensor("b1", Shape{{32}}, ValueKind::Param);
  int h = t.node(OpKind::Gelu, {t.node(OpKind::Add, {b1, t.node(OpKind::MatMul, {x, w1}, hid)}, hid)}, hid);
  int w2 = t.tensor("w2", Shape{{32, 16}}, ValueKind::Param, -0.3f, 0.3f);
  int b2 = t.tensor("b2", Shape{{16}}, ValueKind::Param);
  t.g.outputs = {t.node(OpKind::Add, {t.node(OpKind::Add, {t.node(OpKind::MatMul, {h, w2}, tok), b2}, tok), x}, tok)};
  ExecOptions o;
  for (const auto& [name, data] : t.data) (name == "x" ? o.inputs : o.weights)[name] = data;
  EXPECT_EQ(fused_node_count(expect_fused_matches(t.g, o)), 4u);
}

/// Products with constant weights that oneDNN's matmul would run in its gemm kernel run as a 1x1 convolution
/// (M rows as positions) in the end-to-end program when M >= 2 and N is a channel block or more: row-major and
/// transposed (transB) weights, bias, GELU, a residual read as a binary post-op and one added in place. A
/// matrix-vector product (M = 1), a product with N = 2 and a Gemm whose C is a full [M, N] matrix keep the
/// matmul. The kernels asserted depend on what oneDNN dispatches here (where its matmul is not `gemm`, the rule
/// does not apply and only the values are checked); the values never depend on it.
TEST(ExecFused, GemmKernelProductsRunAsOneByOneConvs) {
  ExecCase t;
  const Shape tok{{3, 8, 24}}, hid{{3, 8, 40}};
  int x = t.tensor("x", tok);
  int w1 = t.tensor("w1", Shape{{24, 40}}, ValueKind::Param, -0.3f, 0.3f);
  int b1 = t.tensor("b1", Shape{{40}}, ValueKind::Param);
  int mm1 = t.node(OpKind::MatMul, {x, w1}, hid);
  int h = t.node(OpKind::Gelu, {t.node(OpKind::Add, {mm1, b1}, hid)}, hid);
  int w2 = t.tensor("w2", Shape{{24, 40}}, ValueKind::Param, -0.3f, 0.3f);  // stored [N, K]: Gemm transB
  int b2 = t.tensor("b2", Shape{{24}}, ValueKind::Param);
  const Shape rows{{24, 40}}, out{{24, 24}};
  int flat = t.node(OpKind::Reshape, {h, t.ints("rows", {24, 40})}, rows);
  int g2 = t.node(OpKind::Gemm, {flat, w2, b2}, out, Attrs{}.set("transB", int64_t{1}));
  int y = t.node(OpKind::Add, {g2, t.tensor("r", out)}, out);  // a graph input: binary post-op
  int w3 = t.tensor("w3", Shape{{24, 24}}, ValueKind::Param, -0.3f, 0.3f);
  int mm3 = t.node(OpKind::MatMul, {t.tensor("z", out), w3}, out);
  int y2 = t.node(OpKind::Add, {mm3, y}, out);  // last use of y: in place
  int v = t.tensor("v", Shape{{1, 24}});
  int mv = t.node(OpKind::MatMul, {v, w3}, Shape{{1, 24}});  // M = 1
  int w4 = t.tensor("w4", Shape{{24, 2}}, ValueKind::Param, -0.3f, 0.3f);
  int narrow = t.node(OpKind::MatMul, {y2, w4}, Shape{{24, 2}});  // N = 2
  // A Gemm's C as a full [M, N] matrix is no conv bias (oneDNN 2.6 runs that matmul in ref:any on AVX2 anyway)
  int c = t.tensor("c", out, ValueKind::Param);
  int full_c = t.node(OpKind::Gemm, {y2, w3, c}, out);
  t.g.outputs = {y2, mv, narrow, full_c};
  ExecOptions o;
  for (const auto& [name, data] : t.data) (name == "x" || name == "v" || name == "r" || name == "z" ? o.inputs : o.weights)[name] = data;
  ExecOptions alone = o;
  alone.threads = 2;
  const ExecResult per_layer = execute(t.g, alone);
  const ExecResult fused = expect_fused_matches(t.g, o);
  EXPECT_EQ(fused_node_count(fused), 4u);  // bias + GELU, bias + residual, in-place residual
  auto kernel = [](const ExecResult& r, int node) {
    for (const auto& s : r.steps)
      if (s.node == node && s.op != "Reorder") return s.kernel;
    return std::string("(no step)");
  };
  auto producer = [&](int value) { return t.g.value(value).producer; };
  int as_conv = 0;
  for (int node : {producer(mm1), producer(g2), producer(mm3)}) {
    if (kernel(per_layer, node).rfind("gemm", 0) != 0) continue;
    EXPECT_EQ(kernel(fused, node).rfind("jit_1x1", 0), 0u) << t.g.nodes[node].name << ": " << kernel(fused, node);
    ++as_conv;
  }
  for (int node : {producer(mv), producer(narrow), producer(full_c)})
    EXPECT_NE(kernel(fused, node).rfind("jit_1x1", 0), 0u) << t.g.nodes[node].name;
  if (as_conv == 0) GTEST_LOG_(INFO) << "oneDNN's matmul is not its gemm kernel here: the 1x1-conv rule is not live";
}

/// Attention scores: MatMul + scale, Softmax (in place in the end-to-end program: it is the scores' only reader),
/// MatMul with the values.
TEST(ExecFused, SoftmaxInPlaceBetweenMatMulsMatchesPerLayer) {
  ExecCase t;
  const Shape q{{2, 3, 6, 8}}, scores{{2, 3, 6, 6}};
  int x = t.tensor("q", q), k = t.tensor("kt", Shape{{2, 3, 8, 6}}), v = t.tensor("v", Shape{{2, 3, 6, 8}});
  int s = t.node(OpKind::Mul, {t.node(OpKind::MatMul, {x, k}, scores), t.floats("scale", {0.35f})}, scores);
  int p = t.node(OpKind::Softmax, {s}, scores, Attrs{}.set("axis", int64_t{-1}));
  t.g.outputs = {t.node(OpKind::MatMul, {p, v}, q)};
  ExecOptions o;
  for (const auto& [name, data] : t.data) (name == "scale" ? o.weights : o.inputs)[name] = data;
  const ExecResult r = expect_fused_matches(t.g, o);
  size_t softmax = 0;
  for (const auto& st : r.steps) softmax += st.op == "Softmax" && st.status == StepStatus::Executed;
  EXPECT_EQ(softmax, 1u);
}

/// distilbert's attention: Transpose(q) / sqrt(d) (a Div by a constant), Transpose(k), MatMul, Softmax. The Div
/// becomes a linear post-op of the MatMul (no step of its own), which reads the transposed q; the buffer of the
/// transposed q stays alive until that MatMul (the Transpose of k, built between them, must not take it).
TEST(ExecFused, AttentionScaleDivIsAPostOpOfTheMatMul) {
  ExecCase t;
  const Shape rows{{2, 6, 3, 8}}, heads{{2, 3, 6, 8}}, kt{{2, 3, 8, 6}}, scores{{2, 3, 6, 6}};
  int x = t.tensor("q", rows), k = t.tensor("k", rows);
  const Attrs perm = Attrs{}.set("perm", std::vector<int64_t>{0, 2, 1, 3});
  int q = t.node(OpKind::Div, {t.node(OpKind::Transpose, {x}, heads, perm), t.floats("sqrt_d", {2.8284271f})}, heads);
  int kk = t.node(OpKind::Transpose, {k}, kt, Attrs{}.set("perm", std::vector<int64_t>{0, 2, 3, 1}));
  t.g.outputs = {t.node(OpKind::Softmax, {t.node(OpKind::MatMul, {q, kk}, scores)}, scores, Attrs{}.set("axis", int64_t{-1}))};
  ExecOptions o;
  for (const auto& [name, data] : t.data) (name == "sqrt_d" ? o.weights : o.inputs)[name] = data;
  const ExecResult r = expect_fused_matches(t.g, o);
  for (const auto& st : r.steps) EXPECT_NE(st.op, "Div") << st.name;
  EXPECT_EQ(fused_node_count(r), 1u);
}

/// Linear (Gemm on 3-D rows) + torch's erf GELU (Div, Erf, Add, Mul, Mul), then a decomposed LayerNorm.
TEST(ExecFused, DecomposedGeluAndLayerNormMatchPerLayer) {
  ExecCase t;
  const Shape tok{{2, 5, 16}}, col{{2, 5, 1}};
  int x = t.tensor("x", tok);
  int w = t.tensor("w", Shape{{16, 16}}, ValueKind::Param, -0.3f, 0.3f);
  int b = t.tensor("b", Shape{{16}}, ValueKind::Param);
  int h = t.node(OpKind::Gemm, {x, w, b}, tok);
  int e = t.node(OpKind::Erf, {t.node(OpKind::Div, {h, t.floats("sqrt2", {1.4142135f})}, tok)}, tok);
  int one = t.node(OpKind::Add, {e, t.floats("one", {1.f})}, tok);
  int gelu = t.node(OpKind::Mul, {t.node(OpKind::Mul, {h, one}, tok), t.floats("half", {0.5f})}, tok);
  const Attrs last = Attrs{}.set("axes", std::vector<int64_t>{-1});
  int mean = t.node(OpKind::ReduceMean, {gelu}, col, last);
  int d = t.node(OpKind::Sub, {gelu, mean}, tok);
  int var = t.node(OpKind::ReduceMean, {t.node(OpKind::Pow, {d, t.floats("two", {2.f})}, tok)}, col, last);
  int sd = t.node(OpKind::Sqrt, {t.node(OpKind::Add, {var, t.floats("eps", {1e-5f})}, col)}, col);
  int g = t.tensor("gamma", Shape{{16}}, ValueKind::Param), beta = t.tensor("beta", Shape{{16}}, ValueKind::Param);
  t.g.outputs = {t.node(OpKind::Add, {t.node(OpKind::Mul, {t.node(OpKind::Div, {d, sd}, tok), g}, tok), beta}, tok)};
  ExecOptions o;
  for (const auto& [name, data] : t.data) (name == "x" ? o.inputs : o.weights)[name] = data;
  const ExecResult r = expect_fused_matches(t.g, o);
  EXPECT_EQ(fused_node_count(r), 5u + 8u);
  size_t executed = 0;
  for (const auto& s : r.steps) executed += s.status == StepStatus::Executed;
  EXPECT_EQ(executed, 2u);  // Gemm + GELU post-op, one LayerNorm
}

/// A chain of elementwise ops: the end-to-end program keeps only a few activation buffers alive.
TEST(ExecFused, ActivationBuffersAreSharedByLiveness) {
  ExecCase t;
  const Shape s{{1, 16, 32, 32}};
  int v = t.tensor("x", s);
  for (OpKind op : {OpKind::Relu, OpKind::Sigmoid, OpKind::Tanh, OpKind::Exp, OpKind::Sigmoid, OpKind::Tanh,
                    OpKind::Relu, OpKind::Sigmoid})
    v = t.node(op, {v}, s);
  t.g.outputs = {v};
  const Count tensor_bytes = s.elements() * 4;
  ExecOptions o;
  const ExecResult per_layer = execute(t.g, o);
  o.fuse = true;
  const ExecResult fused = execute(t.g, o);
  EXPECT_EQ(relative_difference(fused, per_layer), 0.0);
  EXPECT_EQ(per_layer.buffer_bytes, 9 * tensor_bytes);
  EXPECT_LE(fused.buffer_bytes, 3 * tensor_bytes);  // the input and two buffers taking turns
}

/// Activation reorders (steps with op "Reorder") of a program, each as "consumer op <- producer op".
std::vector<std::string> activation_reorders(const Graph& g, const ExecResult& r) {
  std::vector<std::string> out;
  for (const auto& s : r.steps) {
    if (s.op != "Reorder") continue;
    const Node& consumer = g.nodes.at(s.node);
    std::string from = "input";
    for (int in : consumer.inputs)
      if (in >= 0 && g.value(in).producer >= 0) from = std::string(op_name(g.nodes[g.value(in).producer].op));
    out.push_back(std::string(op_name(consumer.op)) + " <- " + from);
  }
  return out;
}

/// Whether oneDNN has a Winograd convolution for this CPU (its kernels need AVX-512: an AVX2 machine has none, and
/// the executor then runs those convs direct). A fact of the machine the test reads rather than assumes.
bool cpu_has_winograd() {
  using tag = dnnl::memory::format_tag;
  using dt = dnnl::memory::data_type;
  try {
    const dnnl::engine cpu(dnnl::engine::kind::cpu, 0);
    const dnnl::memory::desc x({2, 16, 16, 16}, dt::f32, tag::any), w({16, 16, 3, 3}, dt::f32, tag::any);
    const dnnl::convolution_forward::desc conv(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_winograd,
                                               x, w, x, {1, 1}, {1, 1}, {1, 1});
    dnnl::convolution_forward::primitive_desc(conv, cpu);
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

/// Blocked layouts stay between layers: conv, conv, conv + BN + residual Add, MaxPool, 1x1 conv, depthwise conv and
/// GlobalAveragePool in a row reorder the activations only where Flatten needs the plain layout (weights are
/// packed at build time: no weight reorder step); the 3x3 stride-1 convs run the Winograd kernel where oneDNN has one.
TEST(ExecFused, ConsecutiveConvsKeepTheirLayout) {
  ExecCase t;
  const Shape a{{2, 16, 16, 16}}, b{{2, 32, 16, 16}}, pooled{{2, 32, 8, 8}}, g1{{2, 32, 1, 1}};
  int x = t.tensor("x", Shape{{2, 3, 16, 16}});
  auto weights = [&](const std::string& name, Shape s) { return t.tensor(name, s, ValueKind::Param, -0.2f, 0.2f); };
  int c1 = t.node(OpKind::Relu, {t.node(OpKind::Conv, {x, weights("w1", Shape{{16, 3, 3, 3}})}, a, conv_attrs(3, 1))}, a);
  int ca = t.node(OpKind::Relu, {t.node(OpKind::Conv, {c1, weights("wa", Shape{{16, 16, 3, 3}})}, a, conv_attrs(3, 1))}, a);
  int c2 = t.node(OpKind::Conv, {ca, weights("w2", Shape{{16, 16, 3, 3}})}, a, conv_attrs(3, 1));
  int s = t.tensor("bn.s", Shape{{16}}, ValueKind::Param, 0.5f, 1.5f), sh = t.tensor("bn.b", Shape{{16}}, ValueKind::Param);
  int m = t.tensor("bn.m", Shape{{16}}, ValueKind::Buffer, -0.5f, 0.5f), v = t.tensor("bn.v", Shape{{16}}, ValueKind::Buffer, 0.5f, 2.f);
  int bn = t.node(OpKind::BatchNormalization, {c2, s, sh, m, v}, a, Attrs{}.set("epsilon", 1e-5));
  int res = t.node(OpKind::Relu, {t.node(OpKind::Add, {bn, c1}, a)}, a);
  int c3 = t.node(OpKind::Relu, {t.node(OpKind::Conv, {res, weights("w3", Shape{{32, 16, 1, 1}})}, b, conv_attrs(1, 0))}, b);
  const Attrs pool = Attrs{}.set("kernel_shape", std::vector<int64_t>{2, 2}).set("strides", std::vector<int64_t>{2, 2});
  int p = t.node(OpKind::MaxPool, {c3}, pooled, pool);
  int dw = t.node(OpKind::Conv, {p, weights("wd", Shape{{32, 1, 3, 3}})}, pooled, conv_attrs(3, 1, 32));
  int c4 = t.node(OpKind::Conv, {dw, weights("w4", Shape{{32, 32, 1, 1}})}, pooled, conv_attrs(1, 0));
  int gap = t.node(OpKind::GlobalAveragePool, {c4}, g1);
  t.g.outputs = {t.node(OpKind::Flatten, {gap}, Shape{{2, 32}}, Attrs{}.set("axis", int64_t{1}))};
  ExecOptions o;
  for (const auto& [name, data] : t.data) (name == "x" ? o.inputs : o.weights)[name] = data;
  const ExecResult r = expect_fused_matches(t.g, o);
  for (const auto& reorder : activation_reorders(t.g, r))
    EXPECT_TRUE(reorder == "Conv <- input" || reorder == "Flatten <- GlobalAveragePool") << reorder;
  EXPECT_LE(activation_reorders(t.g, r).size(), 2u);
  size_t winograd = 0;
  for (const auto& s : r.steps) winograd += s.kernel.find("wino") != std::string::npos;
  // The second and third (relu, sum + relu) convs: the first has 3 input channels.
  EXPECT_EQ(winograd, cpu_has_winograd() ? 2u : 0u);
}

/// Steps of a program running a Conv node absorbed into another Conv's step (oneDNN's fused depthwise post-op).
size_t fused_depthwise_steps(const Graph& g, const ExecResult& r) {
  size_t n = 0;
  for (const auto& s : r.steps)
    n += std::any_of(s.fused_nodes.begin(), s.fused_nodes.end(), [&](int a) { return g.nodes[a].op == OpKind::Conv; });
  return n;
}

/// A 1x1 conv + Relu, then inverted residual blocks (mobilenet_v2): 1x1 expand + ReLU6, 3x3 depthwise (stride 1,
/// with bias) + ReLU6, 1x1 project + residual Add; then 1x1 + Relu, depthwise stride 2 (no bias, no post-op). Its
/// inputs and weights go into `o`.
ExecCase inverted_residuals(ExecOptions& o) {
  ExecCase t;
  const Shape in{{2, 24, 14, 14}}, wide{{2, 48, 14, 14}}, half{{2, 48, 7, 7}};
  auto weights = [&](const std::string& name, Shape s) { return t.tensor(name, s, ValueKind::Param, -0.3f, 0.3f); };
  int x0 = t.tensor("x", in);
  int x = t.node(OpKind::Relu, {t.node(OpKind::Conv, {x0, weights("w0", Shape{{24, 24, 1, 1}})}, in, conv_attrs(1, 0))}, in);
  int six = t.floats("six", {6.f}), zero = t.floats("zero", {0.f});
  auto relu6 = [&](int v, const Shape& s) { return t.node(OpKind::Clip, {v, zero, six}, s); };
  int e1 = relu6(t.node(OpKind::Conv, {x, weights("we1", Shape{{48, 24, 1, 1}}), weights("be1", Shape{{48}})}, wide,
                        conv_attrs(1, 0)), wide);
  int d1 = relu6(t.node(OpKind::Conv, {e1, weights("wd1", Shape{{48, 1, 3, 3}}), weights("bd1", Shape{{48}})}, wide,
                        conv_attrs(3, 1, 48)), wide);
  int p1 = t.node(OpKind::Add, {t.node(OpKind::Conv, {d1, weights("wp1", Shape{{24, 48, 1, 1}})}, in, conv_attrs(1, 0)), x}, in);
  int e2 = t.node(OpKind::Relu, {t.node(OpKind::Conv, {p1, weights("we2", Shape{{48, 24, 1, 1}})}, wide, conv_attrs(1, 0))}, wide);
  t.g.outputs = {t.node(OpKind::Conv, {e2, weights("wd2", Shape{{48, 1, 3, 3}})}, half,
                        conv_attrs(3, 1, 48).set("strides", std::vector<int64_t>{2, 2}))};
  for (const auto& [name, data] : t.data) (name == "x" ? o.inputs : o.weights)[name] = data;
  return t;
}

// Each 1x1 + depthwise pair runs as one primitive (the expanded tensor never written out), the layout stays blocked
// from conv to conv.
TEST(ExecFused, OneByOneAndDepthwiseConvsRunAsOnePrimitive) {
  ExecOptions o;
  const ExecCase t = inverted_residuals(o);
  const ExecResult r = expect_fused_matches(t.g, o);
  EXPECT_EQ(fused_depthwise_steps(t.g, r), 2u);
  size_t convs = 0;
  for (const auto& s : r.steps) convs += s.op == "Conv";
  EXPECT_EQ(convs, 4u);  // six Conv nodes
  for (const auto& reorder : activation_reorders(t.g, r)) EXPECT_EQ(reorder, "Conv <- input");
  EXPECT_EQ(fused_node_count(r), 7u);  // relu; clip, dw, clip; add; relu, dw
}

// When oneDNN refuses a fused kernel (a CPU or oneDNN version without it), the program falls back and computes
// the same outputs: without the appended depthwise conv, or with every absorbed node on its own.
TEST(ExecFused, RefusedFusedKernelsFallBackToTheSameOutputs) {
  ExecOptions o;
  const ExecCase t = inverted_residuals(o);
  o.refuse_fused = ExecOptions::Refuse::Depthwise;
  const ExecResult no_dw = expect_fused_matches(t.g, o);
  EXPECT_EQ(fused_depthwise_steps(t.g, no_dw), 0u);
  EXPECT_EQ(fused_node_count(no_dw), 5u);  // relu; clip; clip; add; relu (each depthwise conv runs on its own)
  o.refuse_fused = ExecOptions::Refuse::Any;
  const ExecResult plain = expect_fused_matches(t.g, o);
  EXPECT_EQ(fused_node_count(plain), 0u);
  size_t steps = 0;
  for (const auto& s : plain.steps) steps += s.op != "Reorder";
  EXPECT_EQ(steps, t.g.nodes.size());  // every node its own step again
}

TEST(ExecFused, ReferenceKernelsAreToldFromOptimisedOnes) {
  for (const char* k : {"ref:any", "reference", "ref_fused_convolution:any:ref:any:ref:any",
                        "ref_fused_convolution:any:jit_1x1:avx2:ref:any", "ref_fused_convolution:any:"})
    EXPECT_TRUE(reference_kernel(k)) << k;
  for (const char* k : {"jit:avx2", "brg:avx512_core", "jit_1x1:avx2", "gemm:jit", "view", "copy", "",
                        "ref_fused_convolution:any:jit_1x1:avx2:jit_dw:avx2"})
    EXPECT_FALSE(reference_kernel(k)) << k;
}

/// The measurement names the steps that ran in reference kernels, slowest first, with their share of the time.
TEST(ExecFused, StepsInReferenceKernelsAreNamedInANote) {
  ModelMeasurement m;
  auto layer = [&](const char* name, const char* kernel, double s, StepStatus status = StepStatus::Executed) {
    LayerMeasurement l;
    l.step.name = name;
    l.step.kernel = kernel;
    l.step.status = status;
    l.forward.median_s = s;
    l.forward.samples = 5;
    m.layers.push_back(l);
    m.layers_sum_s += status == StepStatus::Executed ? s : 0;
  };
  layer("conv", "jit:avx2", 0.006);
  EXPECT_EQ(reference_kernel_note(m), "");
  layer("gather", "reference", 0.001);
  layer("pool", "ref:any", 0.003);
  layer("skipped", "reference", 0.0, StepStatus::NotExecuted);
  EXPECT_EQ(reference_kernel_note(m),
            "2 steps ran in reference kernels (correct but not optimised: an optimised runtime may be faster): "
            "pool 3 ms (ref:any), gather 1 ms (reference); 40.0 % of the sum of layer medians");
  // measure_graph() adds it: Erf runs in ridge's own loop, Relu in oneDNN's kernel
  for (OpKind op : {OpKind::Erf, OpKind::Relu}) {
    ExecCase t;
    const Shape s{{4, 64}};
    t.g.outputs = {t.node(op, {t.tensor("x", s)}, s)};
    MeasureOptions o;
    o.min_repeats = o.max_repeats = 1;
    o.warmup = 0;
    const ModelMeasurement run = measure_graph(t.g, o);
    const bool noted = std::any_of(run.notes.begin(), run.notes.end(), [&](const std::string& n) {
      return n.find("1 step ran in reference kernels") != std::string::npos && n.find(run.layers.at(0).step.name) != std::string::npos;
    });
    EXPECT_EQ(noted, op == OpKind::Erf) << run.layers.at(0).step.kernel;
  }
}

TEST(ExecFused, ZooModelsMatchPerLayer) {
  for (const char* name : {"mnist", "resnet18"}) {
    LoadOptions lo;
    lo.input_size = Shape{{3, 64, 64}};
    if (std::string(name) == "mnist") lo.input_size.reset();
    const ExecResult r = expect_fused_matches(load_model(name, lo));
    EXPECT_GT(fused_node_count(r), 0u) << name;
  }
}

TEST(ExecFused, OnnxModelsMatchPerLayer) {
  RIDGE_REQUIRE_SHARED();
  for (const char* name : {"onnx/mobilenet_v2.ext_emptybin.onnx"}) {  // depthwise convs, Clip from Constants
    LoadOptions lo;  // a small image keeps the test short
    lo.input_shapes = {{"input", Shape{{1, 3, 64, 64}}}};
    ExecOptions o;
    o.weights = read_onnx_weights(fixture(name));  // Constant nodes (Clip bounds); the weights stay random
    const Graph g = load_model(fixture(name), lo);
    const ExecResult r = expect_fused_matches(g, o);
    EXPECT_GT(fused_node_count(r), 0u) << name;
    EXPECT_EQ(fused_depthwise_steps(g, r), 16u) << name;  // every expand 1x1 with its depthwise conv
  }
}

// Every hand-made and torchvision export in tests/data/validation (CNNs with squeeze-excitation, 3-D and
// transposed convs, RNNs, transformers, Swin's mask, the opset-23 decoder) at its own small input: the end-to-end
// program equals the per-layer one, executes every step, and runs no step in a reference kernel that runs
// optimised alone. Its first run found squeeze-excitation products in the reference loop end to end.
TEST(ExecFused, EveryValidationExportMatchesPerLayer) {
  for_each_validation_export([](const Graph& g, const ExecOptions& o) { expect_fused_matches(g, o); });
}

TEST(ExecFused, OnnxDistilbertMatchesPerLayer) {  // attention scale, GELU, LayerNorm, in-place Softmax
  RIDGE_REQUIRE_SHARED();
  const std::string file = fixture("onnx/distilbert.op13.ext_emptybin.onnx");
  LoadOptions lo;
  lo.seq_len = 16;  // short sequences keep the test short
  ExecOptions o;
  o.weights = read_onnx_weights(file);
  const Graph g = load_model(file, lo);
  const ExecResult r = expect_fused_matches(g, o);
  size_t divs = 0;  // 6 attention scales and the 13 LayerNorms' Divs are absorbed
  for (const auto& s : r.steps) divs += s.op == "Div";
  EXPECT_EQ(divs, 0u);
}

TEST(ExecFused, OnnxTestdataStillReproducesPyTorch) {
  RIDGE_REQUIRE_SHARED();
  const std::string dir = fixture("onnx/testdata/mnist_cnn");
  auto [in_name, input] = read_tensor_pb(dir + "/test_data_set_0/input_0.pb");
  auto [out_name, expected] = read_tensor_pb(dir + "/test_data_set_0/output_0.pb");
  LoadOptions lo;
  lo.batch = input.shape[0];
  Graph g = load_model(dir + "/model.onnx", lo);
  ExecOptions o;
  o.weights = read_onnx_weights(dir + "/model.onnx");
  o.inputs[g.value(g.inputs.at(0)).name] = input;
  const ExecResult r = expect_fused_matches(g, o);
  EXPECT_TRUE(compare_tensors(r.outputs.begin()->second, expected, 1e-4, 1e-5).passed);
}

TEST(ExecCli, MeasureEndToEndReportsBothPrograms) {
  auto r = run_ridge("measure mnist --batch 2 --repeat 3 --threads 1 --machine none --end-to-end --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["total_time_s"].get<double>(), 0);
  EXPECT_GT(j["end_to_end_time_s"].get<double>(), 0);
  EXPECT_GT(j["end_to_end"]["end_to_end_time_s"].get<double>(), 0);
  EXPECT_TRUE(j["end_to_end"].contains("fusion_gain_percent"));
  ASSERT_FALSE(j["fusion_groups"].empty());
  for (const auto& grp : j["fusion_groups"]) {
    EXPECT_NE(grp["nodes"].get<std::string>().find('+'), std::string::npos);
    EXPECT_GT(grp["fused_time_s"].get<double>(), 0);
    EXPECT_GT(grp["per_layer_time_s"].get<double>(), 0);
  }
}

}  // namespace
}  // namespace ridge::test

