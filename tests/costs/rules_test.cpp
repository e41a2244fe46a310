// ridge's own per-op rules (docs/counting.md), one row per op family.
#include <gtest/gtest.h>

#include "costs/tiny_graphs.hpp"
#include "ridge/cost.hpp"
#include "ridge/error.hpp"
#include "ridge/load.hpp"

namespace ridge {
namespace {

using test::Tiny;

/// Cost of a single unary/shape-preserving node on a [2, 3, 4] input.
Cost one(OpKind op, Attrs attrs = {}) {
  Tiny t;
  int x = t.input(Shape{{2, 3, 4}});
  int y = t.node(op, "op", {x}, Shape{{2, 3, 4}}, std::move(attrs));
  return estimate(t.done({y})).total;
}

TEST(Rules, ElementwiseUnaryPerElement) {
  const Count E = 24;
  EXPECT_EQ(one(OpKind::Relu).flops, E);
  EXPECT_EQ(one(OpKind::Clip).flops, 2 * E);
  EXPECT_EQ(one(OpKind::Sigmoid).flops, 3 * E);
  EXPECT_EQ(one(OpKind::Tanh).flops, E);
  EXPECT_EQ(one(OpKind::Erf).flops, E);
  EXPECT_EQ(one(OpKind::Gelu).flops, 5 * E);
  EXPECT_EQ(one(OpKind::Gelu, Attrs{}.set("approximate", std::string("tanh"))).flops, 8 * E);
  EXPECT_EQ(one(OpKind::HardSwish).flops, 5 * E);
  EXPECT_EQ(one(OpKind::Exp).flops, E);
  // Bytes: read the input, write the output, fp32.
  EXPECT_EQ(one(OpKind::Relu).bytes_read, E * 4);
  EXPECT_EQ(one(OpKind::Relu).bytes_written, E * 4);
  // Views move nothing.
  EXPECT_EQ(one(OpKind::Identity).bytes(), 0);
  EXPECT_EQ(one(OpKind::Identity).flops, 0);
}

TEST(Rules, SoftmaxPerRow) {
  // 6 rows of 4: softmax 5n-2 = 18 per row, log-softmax 5n-1 = 19 per row.
  EXPECT_EQ(one(OpKind::Softmax, Attrs{}.set("axis", int64_t{-1})).flops, 6 * 18);
  EXPECT_EQ(one(OpKind::LogSoftmax, Attrs{}.set("axis", int64_t{-1})).flops, 6 * 19);
}

TEST(Rules, LayerNormEqualsItsDecomposition) {
  // Fused: 7E + 2R.
  Tiny t;
  int x = t.input(Shape{{2, 5, 8}});
  int y = t.node(OpKind::LayerNormalization, "ln", {x, t.param("ln.weight", Shape{{8}}), t.param("ln.bias", Shape{{8}})},
                 Shape{{2, 5, 8}}, Attrs{}.set("axis", int64_t{-1}), "LayerNorm");
  Count fused = estimate(t.done({y})).total.flops;
  // Decomposed as exported by torch.onnx: ReduceMean, Sub, Pow, ReduceMean, Add(eps), Sqrt, Div, Mul, Add.
  Tiny d;
  int in = d.input(Shape{{2, 5, 8}});
  Attrs mean = Attrs{}.set("axes", std::vector<int64_t>{-1}).set("keepdims", int64_t{1});
  int gamma = d.param("g", Shape{{8}}), beta = d.param("b", Shape{{8}});
  int eps = d.g.add_value(Value{"eps", DType::F32, Shape{}, ValueKind::Constant});
  int two = d.g.add_value(Value{"two", DType::F32, Shape{}, ValueKind::Constant});
  int m = d.node(OpKind::ReduceMean, "mean", {in}, Shape{{2, 5, 1}}, mean);
  int c = d.node(OpKind::Sub, "sub", {in, m}, Shape{{2, 5, 8}});
  int sq = d.node(OpKind::Pow, "pow", {c, two}, Shape{{2, 5, 8}});
  int v = d.node(OpKind::ReduceMean, "var", {sq}, Shape{{2, 5, 1}}, mean);
  int ve = d.node(OpKind::Add, "add_eps", {v, eps}, Shape{{2, 5, 1}});
  int sd = d.node(OpKind::Sqrt, "sqrt", {ve}, Shape{{2, 5, 1}});
  int nrm = d.node(OpKind::Div, "div", {c, sd}, Shape{{2, 5, 8}});
  int sc = d.node(OpKind::Mul, "mul", {nrm, gamma}, Shape{{2, 5, 8}});
  int out = d.node(OpKind::Add, "add", {sc, beta}, Shape{{2, 5, 8}});
  EXPECT_EQ(estimate(d.done({out})).total.flops, fused);
  EXPECT_EQ(fused, 7 * 80 + 2 * 10);
}

TEST(Rules, PoolingCounts) {
  Tiny t;
  int x = t.input(Shape{{1, 2, 6, 6}});
  Attrs a = Attrs{}.set("kernel_shape", std::vector<int64_t>{2, 2}).set("strides", std::vector<int64_t>{2, 2});
  int mp = t.node(OpKind::MaxPool, "mp", {x}, Shape{{1, 2, 3, 3}}, a);
  int ap = t.node(OpKind::AveragePool, "ap", {x}, Shape{{1, 2, 3, 3}}, a);
  int gp = t.node(OpKind::GlobalAveragePool, "gp", {x}, Shape{{1, 2, 1, 1}});
  int ad = t.node(OpKind::AdaptiveAvgPool, "ad", {x}, Shape{{1, 2, 4, 4}},
                  Attrs{}.set("output_size", std::vector<int64_t>{4, 4}));
  Graph g = t.done({mp, ap, gp, ad});
  ModelCost mc = estimate(g);
  EXPECT_EQ(mc.nodes[0].cost.flops, 18 * 3);   // 3 comparisons per output
  EXPECT_EQ(mc.nodes[1].cost.flops, 18 * 4);   // 3 adds + 1 divide
  EXPECT_EQ(mc.nodes[2].cost.flops, 72);       // every input once
  // 6 -> 4 adaptive: windows [0,2) [1,3) [3,5) [4,6): 2 each per axis -> 4 taps per output, 16 outputs per map.
  EXPECT_EQ(mc.nodes[3].cost.flops, 2 * 16 * 4);
}

TEST(Rules, MatMulAndBroadcastBinary) {
  Tiny t;
  int a = t.input(Shape{{2, 3, 4, 5}});
  int b = t.input(Shape{{2, 3, 5, 6}});
  int mm = t.node(OpKind::MatMul, "mm", {a, b}, Shape{{2, 3, 4, 6}});
  int bias = t.param("bias", Shape{{6}});
  int add = t.node(OpKind::Add, "add", {mm, bias}, Shape{{2, 3, 4, 6}});
  ModelCost mc = estimate(t.done({add}));
  EXPECT_EQ(mc.nodes[0].cost.macs, 2 * 3 * 4 * 6 * 5);
  EXPECT_EQ(mc.nodes[0].cost.flops, 2 * 2 * 3 * 4 * 6 * 5);
  EXPECT_EQ(mc.nodes[1].cost.flops, 144);
  // Bias gradient sums over the 24 broadcast rows: 144 - 6 adds.
  EXPECT_EQ(mc.nodes[1].cost.bwd_weight_flops, 144 - 6);
}

TEST(Rules, UnknownOpIsListedNeverSilentlyZero) {
  Tiny t;
  int x = t.input(Shape{{1, 4}});
  int y = t.node(OpKind::Unknown, "nms", {x}, Shape{{1, 4}});
  t.g.nodes[0].op_type = "NonMaxSuppression";
  int z = t.node(OpKind::Relu, "relu", {y}, Shape{{1, 4}});
  ModelCost mc = estimate(t.done({z}));
  EXPECT_FALSE(mc.complete());
  EXPECT_EQ(mc.excluded_ops.at("NonMaxSuppression"), 1);
  EXPECT_EQ(mc.nodes[0].status, CostStatus::Unsupported);
  EXPECT_EQ(mc.total.flops, 4);  // only the relu
}

TEST(Rules, IncompletenessNamesTheNodesMostFrequentOpFirstAndStrictThrows) {
  Tiny t;
  int x = t.input(Shape{{1, 4}});
  int a = t.node(OpKind::Unknown, "loop", {x}, Shape{{1, 4}});
  int b = t.node(OpKind::Unknown, "nms1", {a}, Shape{{1, 4}});
  int c = t.node(OpKind::Unknown, "nms2", {b}, Shape{{1, 4}});
  t.g.nodes[0].op_type = "Loop";
  t.g.nodes[1].op_type = t.g.nodes[2].op_type = "NonMaxSuppression";
  int z = t.node(OpKind::Relu, "relu", {c}, Shape{{1, 4}});
  const Graph& g = t.done({z});
  const Incompleteness inc = incompleteness(g, estimate(g));
  ASSERT_FALSE(inc.complete());
  ASSERT_EQ(inc.nodes.size(), 3u);
  EXPECT_EQ(inc.nodes[0].name, "loop");
  EXPECT_EQ(incomplete_line(inc),
            "INCOMPLETE: 3 nodes not costed (NonMaxSuppression x2, Loop) — totals are lower bounds (--strict makes "
            "this an error)");
  try {
    require_complete(inc, "m.onnx");
    FAIL() << "require_complete did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "--strict: m.onnx: node 'loop' (op Loop) cannot be costed: op Loop has no cost rule (and 2 more)");
  }
}

TEST(Rules, CompleteModelHasNoIncompleteLine) {
  Tiny t;
  int x = t.input(Shape{{1, 4}});
  int z = t.node(OpKind::Relu, "relu", {x}, Shape{{1, 4}});
  const Graph& g = t.done({z});
  const Incompleteness inc = incompleteness(g, estimate(g));
  EXPECT_TRUE(inc.complete());
  EXPECT_EQ(incomplete_line(inc), "");
  EXPECT_NO_THROW(require_complete(inc, "m"));
}

TEST(Rules, UnknownShapeIsReportedWithTheTensorName) {
  Tiny t;
  int x = t.input(Shape{{1, 4}});
  int y = t.node(OpKind::Relu, "relu", {x}, Shape{{-1, 4}});
  t.g.values[y].shape_note = "Reshape target not foldable";
  int z = t.node(OpKind::Relu, "relu2", {y}, Shape{{-1, 4}});
  ModelCost mc = estimate(t.done({z}));
  EXPECT_EQ(mc.nodes[1].status, CostStatus::UnknownShape);
  EXPECT_NE(mc.nodes[1].reason.find("Reshape target not foldable"), std::string::npos);
  EXPECT_FALSE(mc.complete());
}

TEST(Rules, IncompleteLineSaysWhenNodesWereLeftOutForUnknownShapesAndWhy) {
  // A reader of "Mul x84 not costed" must learn that the shapes are missing (and the fix), not that Mul has no rule.
  Tiny t;
  int x = t.input(Shape{{1, 4}});
  int a = t.node(OpKind::Relu, "relu", {x}, Shape{{-1, 4}});
  t.g.values[a].shape_note = "'ids' has a symbolic dim that was not bound: pass --seq-len N";
  int b = t.node(OpKind::Relu, "relu2", {a}, Shape{{-1, 4}});
  int c = t.node(OpKind::Unknown, "loop", {b}, Shape{{1, 4}});
  t.g.nodes[2].op_type = "Loop";
  const Graph& g = t.done({c});
  const Incompleteness some = incompleteness(g, estimate(g));
  ASSERT_EQ(some.nodes.size(), 3u);  // relu's own output shape is unknown too
  EXPECT_EQ(some.nodes[0].status, CostStatus::UnknownShape);
  EXPECT_EQ(some.nodes[1].status, CostStatus::UnknownShape);
  EXPECT_EQ(some.nodes[2].status, CostStatus::Unsupported);
  const std::string line = incomplete_line(some);
  EXPECT_EQ(line.rfind("INCOMPLETE: 3 nodes not costed (Relu x2, Loop) — totals are lower bounds (--strict makes this "
                       "an error); 2 of them for unknown shapes, first node 'relu': ",
                       0),
            0u)
      << line;
  EXPECT_NE(line.find("pass --seq-len N"), std::string::npos) << line;

  Incompleteness all = some;
  all.nodes.pop_back();
  EXPECT_NE(incomplete_line(all).find("; all 2 for unknown shapes, first node 'relu'"), std::string::npos);
  all.nodes.pop_back();
  EXPECT_NE(incomplete_line(all).find("; it is for unknown shapes"), std::string::npos);
}

TEST(Rules, TiedEmbeddingParamsCountedOnce) {
  LoadOptions o;
  o.seq_len = 8;
  Graph g = build_zoo_model("gpt2", o);
  EXPECT_EQ(estimate(g).total.params, 124439808);
}

TEST(Rules, GradInputSkippedForFirstLayerOnly) {
  Graph g = build_zoo_model("mnist", LoadOptions{});
  ModelCost mc = estimate(g);
  EXPECT_EQ(mc.nodes.at(g.find_node("conv1")).cost.bwd_input_flops, 0);
  EXPECT_GT(mc.nodes.at(g.find_node("conv2")).cost.bwd_input_flops, 0);
  EXPECT_EQ(mc.nodes.at(g.find_node("conv2")).cost.bwd_input_flops, 2 * mc.nodes.at(g.find_node("conv2")).cost.macs);
}

TEST(Rules, NoOverflowAtLlmScale) {
  LoadOptions one, big;
  one.batch = 1;
  big.batch = 10000;
  Graph g1 = build_zoo_model("gpt2", one), gb = build_zoo_model("gpt2", big);
  ModelCost c1 = estimate(g1), cb = estimate(gb);
  // Every term is linear in batch at fixed sequence length, so the counts scale exactly.
  EXPECT_EQ(cb.total.flops, 10000 * c1.total.flops);
  EXPECT_EQ(cb.total.bwd_flops(), 10000 * c1.total.bwd_flops());
  EXPECT_GT(cb.total.flops, Count{1} << 51);
  MemoryEstimate m = estimate_memory(gb, Optimizer::Adam);
  EXPECT_GT(m.training_peak_bytes, m.saved_bytes);
}

TEST(Rules, DistilBertMatmulMacsMatchFixtureFormula) {
  // ../shared/fixtures/onnx/README.md: 42,467,328 B T + 9,216 B T^2 at batch B, sequence T.
  for (int64_t T : {16, 128}) {
    LoadOptions o;
    o.batch = 2;
    o.seq_len = T;
    EXPECT_EQ(estimate(build_zoo_model("distilbert", o)).total.macs, 42467328 * 2 * T + 9216 * 2 * T * T);
  }
}

}  // namespace
}  // namespace ridge

namespace ridge {
namespace {

TEST(Rules, FoldedBatchNormConvCostsLikeConvPlusBatchNorm) {
  // zoo-style pair: conv (no bias) + BatchNorm2d
  test::Tiny a;
  int x = a.input(Shape{{2, 3, 8, 8}});
  int c = a.node(OpKind::Conv, "conv", {x, a.param("conv.weight", Shape{{4, 3, 3, 3}})}, Shape{{2, 4, 6, 6}},
                 test::conv_attrs(3, 1, 0), "Conv2d");
  int bn = a.node(OpKind::BatchNormalization, "bn",
                  {c, a.param("bn.weight", Shape{{4}}), a.param("bn.bias", Shape{{4}})}, Shape{{2, 4, 6, 6}}, {},
                  "BatchNorm2d");
  Graph pair = a.done({bn});
  // export-style: one conv with a bias, marked by the importer
  test::Tiny b;
  int y = b.input(Shape{{2, 3, 8, 8}});
  Attrs attrs = test::conv_attrs(3, 1, 0);
  attrs.set("folded_batchnorm", int64_t{1});
  int f = b.node(OpKind::Conv, "conv", {y, b.param("w", Shape{{4, 3, 3, 3}}), b.param("b", Shape{{4}})},
                 Shape{{2, 4, 6, 6}}, attrs, "Conv2d");
  Graph folded = b.done({f});
  EXPECT_EQ(estimate(folded).total.flops, estimate(pair).total.flops);
  EXPECT_EQ(estimate(folded).total.macs, estimate(pair).total.macs);
  for (const auto& conv : conventions())
    EXPECT_EQ(count_under(folded, conv.id).total, count_under(pair, conv.id).total) << conv.name;
}

TEST(Rules, IntegerArithmeticIsNotFlops) {
  test::Tiny t;
  int ids = t.input(Shape{{2, 8}}, DType::I64);
  int zero = t.g.add_value(Value{"zero", DType::I64, Shape{}, ValueKind::Constant});
  int eq = t.node(OpKind::Equal, "eq", {ids, zero}, Shape{{2, 8}});
  EXPECT_EQ(estimate(t.done({eq})).total.flops, 0);
}

}  // namespace
}  // namespace ridge

namespace ridge {
namespace {

TEST(OpClass, ConvolutionsSplitByGroupsOtherOpsByFamily) {
  test::Tiny t;
  const int x = t.input(Shape{{1, 8, 6, 6}});
  auto conv = [&](const std::string& name, int64_t cout, int64_t groups) {
    return t.node(OpKind::Conv, name, {x, t.param(name + ".weight", Shape{{cout, 8 / groups, 3, 3}})},
                  Shape{{1, cout, 4, 4}}, test::conv_attrs(3, 1, 0, 1, groups), "Conv2d");
  };
  const int dense = conv("dense", 16, 1), depthwise = conv("depthwise", 8, 8), grouped = conv("grouped", 8, 2);
  const int relu = t.node(OpKind::Relu, "relu", {dense}, Shape{{1, 16, 4, 4}});
  const Graph g = t.done({relu, depthwise, grouped});
  EXPECT_EQ(op_class(g, g.nodes[g.find_node("dense")]), "Conv");
  EXPECT_EQ(op_class(g, g.nodes[g.find_node("depthwise")]), "DepthwiseConv");
  EXPECT_EQ(op_class(g, g.nodes[g.find_node("grouped")]), "GroupedConv");
  EXPECT_EQ(op_class(g, g.nodes[g.find_node("relu")]), "Unary");
}

}  // namespace
}  // namespace ridge

namespace ridge {
namespace {

// Dropout drops only in a graph built for training: there it reads, writes and scales every element (1 FLOP
// each way); at inference it is a view.
TEST(Rules, DropoutCostsOnlyWhileTraining) {
  LoadOptions o;
  o.batch = 10;
  for (bool training : {false, true}) {
    o.training = training;
    const Graph g = load_model("mnist", o);
    const ModelCost mc = estimate(g);
    int seen = 0;
    for (const auto& nc : mc.nodes) {
      const Node& n = g.nodes[nc.node];
      if (n.op != OpKind::Dropout) continue;
      ++seen;
      const Count elems = g.value(n.outputs[0]).shape.elements();
      EXPECT_EQ(nc.cost.flops, training ? elems : 0) << n.name;
      EXPECT_EQ(nc.cost.bytes(), training ? 2 * elems * 4 : 0) << n.name;  // fp32 in and out
      EXPECT_EQ(nc.cost.bwd_flops(), training ? elems : 0) << n.name;
    }
    EXPECT_EQ(seen, 2);
  }
}

}  // namespace
}  // namespace ridge
