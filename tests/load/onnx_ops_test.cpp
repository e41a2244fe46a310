// One small ONNX model per supported op, built in code: the importer's shape (with a symbolic batch bound
// to 2) and the cost stage's status and MACs for it.
#include <gtest/gtest.h>

#include <functional>

#include "load/onnx_tiny_model.hpp"
#include "ridge/cost.hpp"
#include "ridge/onnx_import.hpp"

namespace ridge {
namespace {

using test::set_attr;
using test::TinyModel;
using TP = onnx::TensorProto;

struct OpCase {
  const char* name;
  std::function<void(TinyModel&)> build;  ///< adds everything after input "x" [batch, 3, 8, 8]; output "y"
  Shape expected;
  Count macs = -1;                         ///< -1: not a MAC op
  std::vector<int64_t> x = {-1, 3, 8, 8};
  int x_type = TP::FLOAT;
};

void unary(TinyModel& m, const char* op) { m.node(op, {"x"}, {"y"}); }
void binary(TinyModel& m, const char* op) {
  m.weight("b", {3, 1, 1});
  m.node(op, {"x", "b"}, {"y"});
}

const Shape kSame{{2, 3, 8, 8}};

const std::vector<OpCase>& cases() {
  static const std::vector<OpCase> k = {
      {"Conv", [](TinyModel& m) {
         m.weight("w", {16, 3, 3, 3}).weight("bias", {16});
         auto& n = m.node("Conv", {"x", "w", "bias"}, {"y"});
         set_attr(n, "pads", std::vector<int64_t>{1, 1, 1, 1});
         set_attr(n, "strides", std::vector<int64_t>{2, 2});
       }, Shape{{2, 16, 4, 4}}, 2 * 16 * 4 * 4 * 3 * 9},
      {"ConvTranspose", [](TinyModel& m) {
         m.weight("w", {3, 4, 3, 3});
         auto& n = m.node("ConvTranspose", {"x", "w"}, {"y"});
         set_attr(n, "strides", std::vector<int64_t>{2, 2});
         set_attr(n, "pads", std::vector<int64_t>{1, 1, 1, 1});
         set_attr(n, "output_padding", std::vector<int64_t>{1, 1});
       }, Shape{{2, 4, 16, 16}}, 2 * 3 * 8 * 8 * 4 * 9},
      {"Gemm", [](TinyModel& m) {
         m.weight("w", {10, 64}).weight("bias", {10});
         set_attr(m.node("Gemm", {"x", "w", "bias"}, {"y"}), "transB", int64_t{1});
       }, Shape{{2, 10}}, 2 * 64 * 10, {-1, 64}},
      {"MatMulWeight", [](TinyModel& m) {
         m.weight("w", {64, 32});
         m.node("MatMul", {"x", "w"}, {"y"});
       }, Shape{{2, 5, 32}}, 2 * 5 * 64 * 32, {-1, 5, 64}},
      {"MatMulActivations", [](TinyModel& m) {
         set_attr(m.node("Transpose", {"x"}, {"xt"}), "perm", std::vector<int64_t>{0, 1, 3, 2});
         m.node("MatMul", {"x", "xt"}, {"y"}, "/MatMul");
       }, Shape{{2, 3, 8, 8}}, 2 * 3 * 8 * 8 * 8},
      {"Einsum", [](TinyModel& m) {
         m.weight("w", {2, 4, 5});
         set_attr(m.node("Einsum", {"x", "w"}, {"y"}), "equation", std::string("bij,bjk->bik"));
       }, Shape{{2, 3, 5}}, 2 * 3 * 4 * 5, {-1, 3, 4}},
      {"BatchNormalization", [](TinyModel& m) {
         m.weight("s", {3}).weight("b", {3}).weight("mean", {3}).weight("var", {3});
         m.node("BatchNormalization", {"x", "s", "b", "mean", "var"}, {"y"});
       }, kSame},
      {"LayerNormalization", [](TinyModel& m) {
         m.weight("s", {8}).weight("b", {8});
         m.node("LayerNormalization", {"x", "s", "b"}, {"y"});
       }, kSame},
      {"Relu", [](TinyModel& m) { unary(m, "Relu"); }, kSame},
      {"Sigmoid", [](TinyModel& m) { unary(m, "Sigmoid"); }, kSame},
      {"Tanh", [](TinyModel& m) { unary(m, "Tanh"); }, kSame},
      {"Erf", [](TinyModel& m) { unary(m, "Erf"); }, kSame},
      {"Gelu", [](TinyModel& m) { unary(m, "Gelu"); }, kSame},
      {"LeakyRelu", [](TinyModel& m) { unary(m, "LeakyRelu"); }, kSame},
      {"HardSigmoid", [](TinyModel& m) { unary(m, "HardSigmoid"); }, kSame},
      {"HardSwish", [](TinyModel& m) { unary(m, "HardSwish"); }, kSame},
      {"Sqrt", [](TinyModel& m) { unary(m, "Sqrt"); }, kSame},
      {"Exp", [](TinyModel& m) { unary(m, "Exp"); }, kSame},
      {"Log", [](TinyModel& m) { unary(m, "Log"); }, kSame},
      {"Neg", [](TinyModel& m) { unary(m, "Neg"); }, kSame},
      {"Reciprocal", [](TinyModel& m) { unary(m, "Reciprocal"); }, kSame},
      {"Softmax", [](TinyModel& m) { unary(m, "Softmax"); }, kSame},
      {"LogSoftmax", [](TinyModel& m) { unary(m, "LogSoftmax"); }, kSame},
      {"Identity", [](TinyModel& m) { unary(m, "Identity"); }, kSame},
      {"Dropout", [](TinyModel& m) { unary(m, "Dropout"); }, kSame},
      {"Clip", [](TinyModel& m) {
         m.floats("lo", {0}).floats("hi", {6});
         m.proto().mutable_graph()->mutable_initializer(0)->clear_dims();
         m.proto().mutable_graph()->mutable_initializer(1)->clear_dims();
         m.node("Clip", {"x", "lo", "hi"}, {"y"});
       }, kSame},
      {"Add", [](TinyModel& m) { binary(m, "Add"); }, kSame},
      {"Sub", [](TinyModel& m) { binary(m, "Sub"); }, kSame},
      {"Mul", [](TinyModel& m) { binary(m, "Mul"); }, kSame},
      {"Div", [](TinyModel& m) { binary(m, "Div"); }, kSame},
      {"Pow", [](TinyModel& m) { binary(m, "Pow"); }, kSame},
      {"Equal", [](TinyModel& m) { binary(m, "Equal"); }, kSame},
      {"Where", [](TinyModel& m) {
         m.weight("b", {3, 1, 1});
         m.node("Equal", {"x", "b"}, {"c"}, "/Equal");
         m.node("Where", {"c", "x", "b"}, {"y"});
       }, kSame},
      {"MaxPool", [](TinyModel& m) {
         auto& n = m.node("MaxPool", {"x"}, {"y"});
         set_attr(n, "kernel_shape", std::vector<int64_t>{3, 3});
         set_attr(n, "strides", std::vector<int64_t>{2, 2});
         set_attr(n, "pads", std::vector<int64_t>{1, 1, 1, 1});
       }, Shape{{2, 3, 4, 4}}},
      {"AveragePool", [](TinyModel& m) {
         auto& n = m.node("AveragePool", {"x"}, {"y"});
         set_attr(n, "kernel_shape", std::vector<int64_t>{2, 2});
         set_attr(n, "strides", std::vector<int64_t>{2, 2});
       }, Shape{{2, 3, 4, 4}}},
      {"GlobalAveragePool", [](TinyModel& m) { unary(m, "GlobalAveragePool"); }, Shape{{2, 3, 1, 1}}},
      {"ReduceMean", [](TinyModel& m) {
         set_attr(m.node("ReduceMean", {"x"}, {"y"}), "axes", std::vector<int64_t>{-1});
       }, Shape{{2, 3, 8, 1}}},
      {"ReduceSum", [](TinyModel& m) {
         m.ints("axes", {1});
         set_attr(m.node("ReduceSum", {"x", "axes"}, {"y"}), "keepdims", int64_t{0});
       }, Shape{{2, 8, 8}}},
      {"ReduceMax", [](TinyModel& m) {
         set_attr(m.node("ReduceMax", {"x"}, {"y"}), "axes", std::vector<int64_t>{2, 3});
       }, Shape{{2, 3, 1, 1}}},
      {"ArgMax", [](TinyModel& m) {
         auto& n = m.node("ArgMax", {"x"}, {"y"});
         set_attr(n, "axis", int64_t{1});
         set_attr(n, "keepdims", int64_t{0});
       }, Shape{{2, 8, 8}}},
      {"GatherEmbedding", [](TinyModel& m) {
         m.weight("table", {100, 16});
         m.node("Gather", {"table", "x"}, {"y"});
       }, Shape{{2, 7, 16}}, -1, {-1, 7}, TP::INT64},
      {"ShapeArithmeticReshape", [](TinyModel& m) {
         m.ints("zero", {0}, true).ints("axes0", {0}).ints("minus1", {-1});
         m.node("Shape", {"x"}, {"s"}, "/Shape");
         m.node("Gather", {"s", "zero"}, {"n"}, "/Gather");
         m.node("Unsqueeze", {"n", "axes0"}, {"n1"}, "/Unsqueeze");
         m.node("Concat", {"n1", "minus1"}, {"target"}, "/Concat");
         set_attr(m.proto().mutable_graph()->mutable_node(3)[0], "axis", int64_t{0});
         m.node("Reshape", {"x", "target"}, {"y"});
       }, Shape{{2, 192}}},
      {"Flatten", [](TinyModel& m) { unary(m, "Flatten"); }, Shape{{2, 192}}},
      {"Transpose", [](TinyModel& m) {
         set_attr(m.node("Transpose", {"x"}, {"y"}), "perm", std::vector<int64_t>{0, 2, 3, 1});
       }, Shape{{2, 8, 8, 3}}},
      {"Concat", [](TinyModel& m) {
         set_attr(m.node("Concat", {"x", "x"}, {"y"}), "axis", int64_t{1});
       }, Shape{{2, 6, 8, 8}}},
      {"Split", [](TinyModel& m) {
         m.ints("sizes", {1, 2});
         set_attr(m.node("Split", {"x", "sizes"}, {"a", "y"}), "axis", int64_t{1});
       }, Shape{{2, 2, 8, 8}}},
      {"Slice", [](TinyModel& m) {
         m.ints("starts", {2}).ints("ends", {6}).ints("axes", {2});
         m.node("Slice", {"x", "starts", "ends", "axes"}, {"y"});
       }, Shape{{2, 3, 4, 8}}},
      {"SqueezeUnsqueeze", [](TinyModel& m) {
         m.ints("a", {1}).ints("b", {0});
         m.node("Unsqueeze", {"x", "a"}, {"u"}, "/Unsqueeze");
         m.node("Squeeze", {"u", "a"}, {"y"});
       }, kSame},
      {"Expand", [](TinyModel& m) {
         m.ints("shape", {1, 1, 8, 1});
         m.node("Expand", {"x", "shape"}, {"y"});
       }, kSame, -1, {-1, 3, 1, 8}},
      {"Pad", [](TinyModel& m) {
         m.ints("pads", {0, 0, 1, 1, 0, 0, 1, 1});
         m.node("Pad", {"x", "pads"}, {"y"});
       }, Shape{{2, 3, 10, 10}}},
      {"Resize", [](TinyModel& m) {
         m.floats("scales", {1, 1, 2, 2});
         m.node("Resize", {"x", "", "scales"}, {"y"});
       }, Shape{{2, 3, 16, 16}}},
      {"Cast", [](TinyModel& m) { set_attr(m.node("Cast", {"x"}, {"y"}), "to", int64_t{TP::INT64}); }, kSame},
      {"ConstantOfShape", [](TinyModel& m) {
         m.node("Shape", {"x"}, {"s"}, "/Shape");
         m.node("ConstantOfShape", {"s"}, {"y"});
       }, kSame},
      {"Range", [](TinyModel& m) {
         m.ints("three", {3}, true).ints("zero", {0}, true).ints("one", {1}, true);
         m.node("Shape", {"x"}, {"s"}, "/Shape");
         m.node("Gather", {"s", "three"}, {"n"}, "/Gather");
         m.node("Range", {"zero", "n", "one"}, {"y"});
       }, Shape{{8}}},
  };
  return k;
}

class OnnxOp : public ::testing::TestWithParam<OpCase> {};

Graph import_case(const OpCase& c, const OnnxImportOptions& engines) {
  TinyModel m(c.name == std::string("LayerNormalization") ? 17 : 13);
  m.input("x", c.x, c.x_type);
  c.build(m);
  m.output("y");
  LoadOptions o;
  o.batch = 2;
  return import_onnx_bytes(m.bytes(), std::string("op-") + c.name, o, engines);
}

void check_case(const OpCase& c, const OnnxImportOptions& engines) {
  Graph g = import_case(c, engines);
  EXPECT_EQ(to_string(g.value(g.outputs.at(0)).shape), to_string(c.expected));
  ModelCost cost = estimate(g);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    EXPECT_EQ(cost.nodes[i].status, CostStatus::Ok) << g.nodes[i].name << ": " << cost.nodes[i].reason;
  if (c.macs >= 0) {
    EXPECT_EQ(to_string(cost.total.macs), to_string(c.macs));
  }
}

TEST_P(OnnxOp, ShapeAndCost) { check_case(GetParam(), {}); }

TEST_P(OnnxOp, RidgeRulesAloneGiveTheSameShape) { check_case(GetParam(), OnnxImportOptions{false, true}); }

INSTANTIATE_TEST_SUITE_P(Ops, OnnxOp, ::testing::ValuesIn(cases()), [](const auto& info) { return std::string(info.param.name); });

Graph import_model(const TinyModel& m) { return import_onnx_bytes(m.bytes(), "model.onnx", LoadOptions{}); }

TEST(OnnxOps, Opset18ResizeScalesOrSizesOnlyItsAxes) {
  struct Case {
    std::vector<int64_t> axes;
    bool sizes;
    const char* mode;
    const char* out;
    Count flops;
  };
  // x 1x2x5x6; linear over two resized axes: 3 x (2^2 - 1) FLOPs per output.
  for (const Case& k : {Case{{2, 3}, false, "linear", "1x2x10x12", 2 * 10 * 12 * 9},
                        Case{{-2, -1}, false, "nearest", "1x2x10x12", 0},
                        Case{{3}, true, "nearest", "1x2x5x12", 0}}) {
    SCOPED_TRACE(k.out);
    TinyModel m(18);
    m.input("x", {1, 2, 5, 6});
    if (k.sizes) m.ints("sizes", {12});
    else m.floats("scales", {2, 2});
    auto& n = m.node("Resize", k.sizes ? std::vector<std::string>{"x", "", "", "sizes"}
                                       : std::vector<std::string>{"x", "", "scales"}, {"y"});
    set_attr(n, "axes", k.axes);
    set_attr(n, "mode", std::string(k.mode));
    m.output("y");
    const Graph g = import_model(m);
    EXPECT_EQ(to_string(g.value(g.outputs.at(0)).shape), k.out);
    EXPECT_EQ(estimate(g).total.flops, k.flops);
  }
}

TEST(OnnxOps, SoftmaxBeforeOpset13NormalisesTheFlattenedTrailingDims) {
  // Opsets 1-12 coerce the input to 2-D at axis (default 1): 2x3x4 is 2 rows of 12 (5n - 2, log-softmax 5n - 1);
  // from opset 13 rows of the axis alone: 8 rows of 3.
  struct Case {
    int opset;
    const char* op;
    int64_t axis;  ///< -99: none given
    Count flops;
  };
  for (const Case& k : {Case{11, "Softmax", 1, 2 * (5 * 12 - 2)}, Case{11, "Softmax", -99, 2 * (5 * 12 - 2)},
                        Case{11, "LogSoftmax", 1, 2 * (5 * 12 - 1)}, Case{12, "Softmax", -1, 6 * (5 * 4 - 2)},
                        Case{13, "Softmax", 1, 8 * (5 * 3 - 2)}, Case{13, "Softmax", -99, 6 * (5 * 4 - 2)}}) {
    SCOPED_TRACE(std::string(k.op) + " opset " + std::to_string(k.opset) + " axis " + std::to_string(k.axis));
    TinyModel m(k.opset);
    m.input("x", {2, 3, 4});
    auto& n = m.node(k.op, {"x"}, {"y"});
    if (k.axis != -99) set_attr(n, "axis", k.axis);
    m.output("y");
    EXPECT_EQ(estimate(import_model(m)).total.flops, k.flops);
  }
}

TEST(OnnxOps, UnknownOpIsKeptAndNoted) {
  TinyModel m;
  m.input("x", {-1, 4}, TP::INT64);
  m.node("TfIdfVectorizer", {"x"}, {"tf"});
  m.node("Neg", {"x"}, {"y"});
  m.output("y").output("tf");
  Graph g = import_onnx_bytes(m.bytes(), "unknown-op", LoadOptions{});
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].op, OpKind::Unknown);
  EXPECT_EQ(g.nodes[0].op_type, "TfIdfVectorizer");
  bool noted = false;
  for (const auto& n : g.notes) noted |= n.find("TfIdfVectorizer x1") != std::string::npos;
  EXPECT_TRUE(noted);
  ModelCost cost = estimate(g);
  EXPECT_EQ(cost.excluded_ops.count("TfIdfVectorizer"), 1u);
}

TEST(OnnxOps, AnOutputExtentThatTensorValuesDecideIsUnknownNamedAndExcluded) {
  // NonZero's count of non-zero elements: rank and static dims known, the count not; the node and its consumer
  // are excluded, the totals incomplete, and the reason names the node. With the values known it folds.
  for (const bool onnx_inference : {true, false}) {
    SCOPED_TRACE(onnx_inference);
    TinyModel m;
    m.input("x", {2, 4});
    m.node("NonZero", {"x"}, {"nz"});
    set_attr(m.node("Cast", {"nz"}, {"f"}), "to", int64_t{1});
    m.output("f");
    Graph g = import_onnx_bytes(m.bytes(), "nonzero.onnx", LoadOptions{}, OnnxImportOptions{onnx_inference, true});
    EXPECT_EQ(g.nodes[0].op, OpKind::NonZero);
    const Value& nz = g.value(g.nodes[0].outputs[0]);
    EXPECT_EQ(nz.shape.rank(), 2);
    EXPECT_EQ(nz.shape.dims[0], 2);
    EXPECT_EQ(nz.shape.dims[1], -1);
    EXPECT_NE(nz.shape_note.find("depends on tensor values"), std::string::npos) << nz.shape_note;
    const ModelCost mc = estimate(g);
    EXPECT_FALSE(mc.complete());
    EXPECT_EQ(mc.nodes[0].status, CostStatus::UnknownShape);
    EXPECT_EQ(mc.excluded_ops.count("NonZero"), 1u);
  }
  TinyModel m;
  m.ints("c", {0, 3, 0, 5, 7}).node("NonZero", {"c"}, {"nz"});
  m.output("nz");
  const Graph g = import_onnx_bytes(m.bytes(), "nonzero-folded.onnx", LoadOptions{}, OnnxImportOptions{false, true});
  EXPECT_EQ(to_string(g.value(g.nodes[0].outputs[0]).shape), "1x3");
  EXPECT_TRUE(estimate(g).complete());
}

TEST(OnnxOps, CustomDomainOpIsKeptAsUnknown) {
  TinyModel m;
  auto* op = m.proto().add_opset_import();
  op->set_domain("com.example");
  op->set_version(1);
  m.input("x", {-1, 4});
  m.node("Fancy", {"x"}, {"y"}).set_domain("com.example");
  m.output("y");
  Graph g = import_onnx_bytes(m.bytes(), "custom-domain", LoadOptions{});
  EXPECT_EQ(g.nodes[0].op, OpKind::Unknown);
  EXPECT_EQ(g.nodes[0].op_type, "com.example.Fancy");
  EXPECT_FALSE(g.value(g.outputs[0]).shape_note.empty());
}

// torch's eval-mode export stores one of two equal-valued parameters (a fresh TransformerEncoderLayer's norm
// weights, zero biases) and gives the other its value through an Identity under its own name: two parameters, as
// `module.parameters()` counts them. Tied weights are one initializer read twice (TiedEmbedding... below).
TEST(OnnxOps, AnIdentityOverAnInitializerIsAParameterOfItsOwn) {
  TinyModel m;
  m.input("x", {-1, 16}).weight("a.weight", {16, 16});
  m.node("Identity", {"a.weight"}, {"b.weight"}, "Identity_0");
  m.node("MatMul", {"x", "a.weight"}, {"h"}, "/a/MatMul");
  m.node("MatMul", {"h", "b.weight"}, {"y"}, "/b/MatMul");
  m.output("y");
  Graph g = import_onnx_bytes(m.bytes(), "equal-valued", LoadOptions{});
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_NE(g.nodes[0].inputs[1], g.nodes[1].inputs[1]);
  EXPECT_EQ(g.value(g.nodes[1].inputs[1]).name, "b.weight");
  EXPECT_EQ(g.value(g.nodes[1].inputs[1]).kind, ValueKind::Param);
  EXPECT_EQ(to_string(estimate(g).total.params), "512");
  bool noted = false;
  for (const auto& n : g.notes) noted |= n.find("'b.weight' = 'a.weight'") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(OnnxOps, AnInt8WeightBehindDequantizeLinearIsAParameterAndItsScaleAndZeroPointAreNot) {
  TinyModel m;  // QDQ: int8 weight -> DequantizeLinear (per output channel) -> Conv with an fp32 bias
  m.input("x", {1, 3, 8, 8}).weight("wq", {4, 3, 3, 3}, TP::INT8).weight("s", {4}).weight("z", {4}, TP::INT8);
  m.weight("b", {4});
  set_attr(m.node("DequantizeLinear", {"wq", "s", "z"}, {"w"}), "axis", int64_t{0});
  m.node("Conv", {"x", "w", "b"}, {"y"});
  m.output("y");
  Graph g = import_onnx_bytes(m.bytes(), "qdq-conv", LoadOptions{});
  const Node& dq = g.nodes[0];
  EXPECT_EQ(g.value(dq.inputs[0]).kind, ValueKind::Param);
  EXPECT_EQ(g.value(dq.inputs[0]).dtype, DType::I8);
  EXPECT_NE(g.value(dq.inputs[1]).kind, ValueKind::Param);
  EXPECT_NE(g.value(dq.inputs[2]).kind, ValueKind::Param);
  EXPECT_EQ(g.value(dq.outputs[0]).dtype, DType::F32);
  const ModelCost mc = estimate(g);
  EXPECT_TRUE(mc.complete());
  EXPECT_EQ(to_string(mc.total.params), "112");   // 4x3x3x3 int8 + 4 fp32
  EXPECT_EQ(to_string(mc.total.flops - 2 * mc.total.macs - 144), "216");  // DequantizeLinear: 2 x 108
  EXPECT_EQ(to_string(estimate_memory(g, Optimizer::Adam).param_bytes), "124");  // 108 x 1 B + 4 x 4 B
  EXPECT_EQ(to_string(estimate_memory(g, Optimizer::Adam).grad_bytes), "16");    // the fp32 bias only
}

TEST(OnnxOps, AQuantizedWeightTransposedBeforeItsMatMulIsAParameter) {
  TinyModel m;
  m.input("x", {4, 16}).weight("wq", {8, 16}, TP::UINT8).weight("s", {}).weight("z", {}, TP::UINT8);
  m.node("DequantizeLinear", {"wq", "s", "z"}, {"wt"});
  m.node("Transpose", {"wt"}, {"w"});
  m.node("MatMul", {"x", "w"}, {"y"});
  m.output("y");
  Graph g = import_onnx_bytes(m.bytes(), "qdq-matmul", LoadOptions{});
  EXPECT_EQ(to_string(estimate(g).total.params), "128");
}

TEST(OnnxOps, ONNXRuntimeQuantizedOpsCountIntegerWeightsAsParametersAndTheirMacs) {
  // What onnxruntime.quantization writes (QOperator format): DynamicQuantizeLinear, then QLinearConv with an int8
  // weight (per output channel scales) and int32 bias, and MatMulInteger with a uint8 weight.
  TinyModel m;
  m.input("x", {1, 3, 8, 8});
  m.weight("xs", {}).weight("xz", {}, TP::UINT8).weight("w", {4, 3, 3, 3}, TP::INT8).weight("ws", {4});
  m.weight("wz", {4}, TP::INT8).weight("ys", {}).weight("yz", {}, TP::UINT8).weight("b", {4}, TP::INT32);
  m.weight("b2", {8, 5}, TP::UINT8).weight("b2z", {}, TP::UINT8);
  m.node("DynamicQuantizeLinear", {"x"}, {"xq", "xqs", "xqz"});
  set_attr(m.node("QLinearConv", {"xq", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"}, {"yq"}), "pads",
           std::vector<int64_t>{1, 1, 1, 1});
  m.node("MatMulInteger", {"yq", "b2", "yz", "b2z"}, {"acc"});
  m.output("acc");
  for (const bool onnx_inference : {true, false}) {
    SCOPED_TRACE(onnx_inference);
    Graph g = import_onnx_bytes(m.bytes(), "quantized.onnx", LoadOptions{}, OnnxImportOptions{onnx_inference, true});
    EXPECT_EQ(g.nodes[1].op, OpKind::QLinearConv);
    EXPECT_EQ(to_string(g.value(g.nodes[1].outputs[0]).shape), "1x4x8x8");
    EXPECT_EQ(g.value(g.nodes[1].outputs[0]).dtype, DType::U8);
    EXPECT_EQ(to_string(g.value(g.nodes[2].outputs[0]).shape), "1x4x8x5");
    EXPECT_EQ(g.value(g.nodes[2].outputs[0]).dtype, DType::I32);
    for (const char* name : {"w", "b", "b2"}) {
      for (const Value& v : g.values)
        if (v.name == name) {
          EXPECT_EQ(v.kind, ValueKind::Param) << name;
        }
    }
    for (const char* name : {"xs", "xz", "ws", "wz", "ys", "yz", "b2z"}) {
      for (const Value& v : g.values)
        if (v.name == name) {
          EXPECT_NE(v.kind, ValueKind::Param) << name;
        }
    }
    const ModelCost mc = estimate(g);
    EXPECT_TRUE(mc.complete());
    EXPECT_EQ(to_string(mc.total.params), "152");  // 108 int8 + 4 int32 + 40 uint8
    // QLinearConv 256 outputs x 27 MACs; MatMulInteger 160 outputs x 8.
    EXPECT_EQ(to_string(mc.total.macs), std::to_string(256 * 27 + 160 * 8));
    // DynamicQuantizeLinear 7E + 7; QLinearConv 2 MACs + bias + 5 per output; MatMulInteger 2 MACs.
    EXPECT_EQ(to_string(mc.total.flops), std::to_string(7 * 192 + 7 + 2 * 256 * 27 + 6 * 256 + 2 * 160 * 8));
    EXPECT_EQ(to_string(estimate_memory(g, Optimizer::Adam).param_bytes), "164");  // 108 + 16 + 40 bytes
    EXPECT_EQ(to_string(estimate_memory(g, Optimizer::Adam).grad_bytes), "0");
    EXPECT_EQ(mc.total.bwd_flops(), 0);
  }
}

TEST(OnnxOps, OneHotValuesAreNotAParameter) {
  TinyModel m(13);
  m.input("ids", {2, 3}, TP::INT64).ints("depth", {10}, true).floats("values", {0.f, 1.f}).weight("w", {10, 4});
  m.node("OneHot", {"ids", "depth", "values"}, {"h"});
  m.node("MatMul", {"h", "w"}, {"y"});
  m.output("y");
  Graph g = import_onnx_bytes(m.bytes(), "onehot", LoadOptions{});
  EXPECT_EQ(to_string(g.value(g.nodes[0].outputs[0]).shape), "2x3x10");
  EXPECT_EQ(to_string(estimate(g).total.params), "40");
}

TEST(OnnxOps, UpsampleTakesItsScalesFromTheAttributeOrInputOne) {
  for (int opset : {7, 9}) {
    SCOPED_TRACE(opset);
    TinyModel m(opset);
    m.input("x", {1, 2, 5, 6});
    if (opset == 9) {
      m.floats("scales", {1.f, 1.f, 2.f, 2.f});
      set_attr(m.node("Upsample", {"x", "scales"}, {"y"}), "mode", std::string("linear"));
    } else {
      auto& n = m.node("Upsample", {"x"}, {"y"});
      set_attr(n, "mode", std::string("linear"));
      auto* a = n.add_attribute();
      a->set_name("scales");
      a->set_type(onnx::AttributeProto::FLOATS);
      for (float f : {1.f, 1.f, 2.f, 2.f}) a->add_floats(f);
    }
    m.output("y");
    Graph g = import_onnx_bytes(m.bytes(), "upsample", LoadOptions{});
    EXPECT_EQ(to_string(g.value(g.outputs[0]).shape), "1x2x10x12");
    EXPECT_EQ(to_string(estimate(g).total.params), "0");
    EXPECT_EQ(to_string(estimate(g).total.flops), std::to_string(2 * 10 * 12 * 9));  // bilinear: 3 lerps of 3
  }
}

TEST(OnnxOps, TiedEmbeddingIsNotedAndCountedOnce) {
  TinyModel m;
  m.input("ids", {-1, 5}, TP::INT64).weight("emb", {50, 8});
  m.node("Gather", {"emb", "ids"}, {"h"}, "/embed/Gather");
  set_attr(m.node("Gemm", {"h2", "emb"}, {"y"}, "/decoder/Gemm"), "transB", int64_t{1});
  m.ints("shape", {-1, 8});
  m.node("Reshape", {"h", "shape"}, {"h2"}, "/Reshape");
  m.output("y");
  Graph g = import_onnx_bytes(m.bytes(), "tied", LoadOptions{});
  EXPECT_EQ(to_string(g.value(g.outputs[0]).shape), "5x50");
  EXPECT_EQ(to_string(estimate(g).total.params), "400");
  bool noted = false;
  for (const auto& n : g.notes) noted |= n.find("tied embedding: 'emb'") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(OnnxOps, ABiasSlicedIntoTheAddAfterAMatMulIsAParameterAndAPositionalTableIsNot) {
  // MultiheadAttention's unfolded export: in_proj_bias [3E] is sliced and each third added to a MatMul's output.
  // A positional table [T, E] sliced and added to a product stays a buffer; a vector added to an input, too.
  TinyModel m;
  m.input("x", {-1, 4, 8}).weight("w", {8, 8}).weight("in_proj_bias", {24}).weight("pe", {16, 8});
  m.weight("offset", {32});
  m.ints("b0", {8}).ints("b1", {16}).ints("axis", {0}).ints("t0", {0}).ints("t1", {4});
  m.ints("o0", {0}).ints("o1", {8});
  m.node("MatMul", {"x", "w"}, {"h"}, "/q/MatMul");
  m.node("Slice", {"in_proj_bias", "b0", "b1", "axis"}, {"bk"}, "/q/Slice");
  m.node("Add", {"h", "bk"}, {"hb"}, "/q/Add");
  m.node("Slice", {"pe", "t0", "t1", "axis"}, {"pe4"}, "/pe/Slice");
  m.node("Add", {"hb", "pe4"}, {"hp"}, "/pe/Add");
  m.node("Slice", {"offset", "o0", "o1", "axis"}, {"off8"}, "/off/Slice");
  m.node("Add", {"x", "off8"}, {"xo"}, "/off/Add");
  m.node("Add", {"hp", "xo"}, {"y"}, "/sum");
  m.output("y");
  const Graph g = import_onnx_bytes(m.bytes(), "sliced-bias", LoadOptions{});
  auto kind_of = [&](const std::string& name) {
    for (const Value& v : g.values)
      if (v.name == name) return v.kind;
    throw std::runtime_error("no value " + name);
  };
  EXPECT_EQ(kind_of("in_proj_bias"), ValueKind::Param);
  EXPECT_EQ(kind_of("pe"), ValueKind::Buffer);
  EXPECT_EQ(kind_of("offset"), ValueKind::Buffer);
  EXPECT_EQ(to_string(estimate(g).total.params), std::to_string(8 * 8 + 24));
}

TEST(OnnxOps, ShapeArithmeticInFloatFoldsAsTorchvisionsDetectionTransformComputesItsPadding) {
  // GeneralizedRCNNTransform pads the batch to ceil(max(h) / 32.0) * 32: a ReduceMax over float sizes, casts, a
  // float Div and Ceil. With both engines and with ridge's rules alone the pads fold and the Conv after is costed
  // (before: every later node had an unknown shape, and SSD's anchor Expand was refused as "declared scalar").
  for (const bool onnx_inference : {true, false}) {
    SCOPED_TRACE(onnx_inference);
    TinyModel m;
    m.input("x", {1, 3, 300, 300});
    m.weight("w", {8, 3, 3, 3});
    m.floats("heights", {300, 250}).floats("stride", {32}).ints("zero", {0}, true);
    set_attr(m.node("ReduceMax", {"heights"}, {"h"}), "keepdims", int64_t{0});
    set_attr(m.node("Cast", {"h"}, {"h_int"}), "to", int64_t{TP::INT64});
    set_attr(m.node("Cast", {"h_int"}, {"h_float"}), "to", int64_t{TP::FLOAT});
    m.node("Div", {"h_float", "stride"}, {"q"});  // 300 / 32 = 9.375: not whole, so not folded...
    m.node("Ceil", {"q"}, {"q_up"});
    m.floats("whole", {320});  // ...but 320 / 32 is
    m.node("Div", {"whole", "stride"}, {"k"});
    m.node("Ceil", {"k"}, {"k_up"});
    m.node("Mul", {"k_up", "stride"}, {"padded"});
    set_attr(m.node("Cast", {"padded"}, {"padded_int"}), "to", int64_t{TP::INT64});
    m.node("Sub", {"padded_int", "h_int"}, {"extra"});  // [320] - 300 = [20]
    m.ints("axes", {0});
    m.node("Unsqueeze", {"zero", "axes"}, {"z1"});
    set_attr(m.node("Concat", {"z1", "z1", "z1", "z1", "z1", "z1", "extra", "extra"}, {"pads"}), "axis", int64_t{0});
    m.node("Pad", {"x", "pads"}, {"xp"});
    m.node("Conv", {"xp", "w"}, {"y"});
    m.output("y").output("q_up");
    const Graph g = import_onnx_bytes(m.bytes(), "pad-to-32.onnx", LoadOptions{}, OnnxImportOptions{onnx_inference, true});
    const ModelCost mc = estimate(g);
    const Node& conv = g.nodes[static_cast<size_t>(g.find_node("conv"))];
    EXPECT_EQ(to_string(g.value(conv.outputs[0]).shape), "1x8x318x318");  // 300 + 20 padded, 3x3 kernel
    EXPECT_EQ(mc.nodes[static_cast<size_t>(g.find_node("conv"))].cost.macs, int64_t{318} * 318 * 8 * 27);
  }
}

TEST(OnnxOps, FloatScaleArithmeticFoldsIntoAResizesSizesAsTorchvisionsDetectionTransformComputesThem) {
  // GeneralizedRCNNTransform resizes by scale = min_size / min(h, w) in float32, then sizes floor(h * scale):
  // 300x400 to min side 320 gives 320x426. Faster R-CNN and RetinaNet stopped there, every later node unknown.
  for (const bool onnx_inference : {true, false}) {
    SCOPED_TRACE(onnx_inference);
    TinyModel m;
    m.input("x", {1, 3, 300, 400});
    m.floats("hw", {300, 400}).floats("min_size", {320}).floats("h", {300}).floats("w", {400});
    m.ints("nc", {1, 3});
    set_attr(m.node("ReduceMin", {"hw"}, {"short"}), "keepdims", int64_t{1});
    m.node("Reciprocal", {"short"}, {"inv"});
    m.node("Mul", {"inv", "min_size"}, {"scale"});
    m.node("Identity", {"scale"}, {"scale_copy"});  // a float payload passes an Identity too
    m.node("Mul", {"h", "scale_copy"}, {"h_scaled"});
    m.node("Mul", {"w", "scale_copy"}, {"w_scaled"});
    m.node("Floor", {"h_scaled"}, {"h_new"});
    m.node("Floor", {"w_scaled"}, {"w_new"});
    set_attr(m.node("Concat", {"h_new", "w_new"}, {"hw_new"}), "axis", int64_t{0});
    set_attr(m.node("Cast", {"hw_new"}, {"hw_int"}), "to", int64_t{TP::INT64});
    set_attr(m.node("Concat", {"nc", "hw_int"}, {"sizes"}), "axis", int64_t{0});
    set_attr(m.node("Resize", {"x", "", "", "sizes"}, {"y"}), "mode", std::string("linear"));
    m.output("y");
    const Graph g = import_onnx_bytes(m.bytes(), "resize-to-min-side.onnx", LoadOptions{},
                                      OnnxImportOptions{onnx_inference, true});
    const Node& resize = g.nodes[static_cast<size_t>(g.find_node("resize"))];
    EXPECT_EQ(to_string(g.value(resize.outputs[0]).shape), "1x3x320x426");
    EXPECT_EQ(estimate(g).nodes[static_cast<size_t>(g.find_node("resize"))].status, CostStatus::Ok);
  }
}

TEST(OnnxOps, ExpandToAComputedShapeWhoseRankIsNotKnownYetIsNotTakenForAScalar) {
  // SSD's anchor generator: Expand(x, Concat(Shape(a), Shape(b))) where a and b have data-dependent extents. The
  // output's rank is unknown until the rule runs; an empty Shape there is not a declared scalar.
  TinyModel m;
  m.input("x", {2, 3});
  m.node("NonZero", {"x"}, {"nz"});
  m.ints("flat", {-1});
  m.node("Reshape", {"nz", "flat"}, {"v"});
  m.node("Shape", {"v"}, {"n"});
  m.ints("one", {1});
  set_attr(m.node("Concat", {"n", "one"}, {"target"}), "axis", int64_t{0});
  m.node("Reshape", {"v", "target"}, {"col"});
  m.node("Expand", {"col", "target"}, {"y"});
  m.output("y");
  for (const bool onnx_inference : {true, false}) {
    SCOPED_TRACE(onnx_inference);
    const Graph g = import_onnx_bytes(m.bytes(), "anchors.onnx", LoadOptions{}, OnnxImportOptions{onnx_inference, true});
    EXPECT_EQ(estimate(g).nodes[static_cast<size_t>(g.find_node("expand"))].status, CostStatus::UnknownShape);
  }
}

TEST(OnnxOps, IntegerShapeArithmeticPastInt64IsLeftUnfoldedNotWrapped) {
  TinyModel m;
  m.input("x", {2, 3});
  m.ints("big", {int64_t{1} << 62}).ints("four", {4});
  m.node("Mul", {"big", "four"}, {"wrapped"});  // 2^64: wrapped to 0 before, a Reshape to [0] would follow
  m.node("Reshape", {"x", "wrapped"}, {"y"});
  m.output("y");
  const Graph g = import_onnx_bytes(m.bytes(), "overflow.onnx", LoadOptions{}, OnnxImportOptions{false, true});
  EXPECT_FALSE(g.value(g.nodes[static_cast<size_t>(g.find_node("mul"))].outputs[0]).has_int_data);
}

TEST(OnnxOps, ParametersTheWriterSaysTheGraphDoesNotUseAreNoted) {
  // The Python API lists a module's parameters that its traced forward does not reach (googlenet's aux1/aux2): the
  // totals stay the graph's, and every output says how many torch counts besides. A malformed entry is skipped.
  TinyModel m;
  m.input("x", {1, 4});
  m.node("Relu", {"x"}, {"y"});
  m.output("y");
  auto* prop = m.proto().add_metadata_props();
  prop->set_key(kParametersNotInGraphKey);
  prop->set_value("aux1.conv.weight:1000,aux1.fc.bias:10,aux2.fc.weight:2000,broken,aux3.w:-5,aux4.w:12x");
  const Graph g = import_onnx_bytes(m.bytes(), "aux.onnx", LoadOptions{});
  std::string note;
  for (const auto& n : g.notes)
    if (n.find("that its traced forward pass does not use") != std::string::npos) note = n;
  EXPECT_EQ(note, "the module has 3,010 parameters (3 tensors, in aux1, aux2) that its traced forward pass does not "
                  "use (e.g. auxiliary heads that run only in training): torch's parameter count includes them, "
                  "ridge's totals do not");
  EXPECT_EQ(estimate(g).total.params, 0);
}

}  // namespace
}  // namespace ridge
