// Exporter artefacts on tiny models: BatchNorm folded into Conv, Mul/Div by the constant 1, decomposed
// LayerNorm and Linear (MatMul + bias Add) put back together.
#include <gtest/gtest.h>

#include "load/onnx_tiny_model.hpp"
#include "ridge/cost.hpp"
#include "ridge/onnx_import.hpp"
#include "ridge/op_rules.hpp"

namespace ridge {
namespace {

using test::set_attr;
using test::TinyModel;

bool has_note(const Graph& g, const std::string& text) {
  for (const auto& n : g.notes)
    if (n.find(text) != std::string::npos) return true;
  return false;
}

/// A Constant node holding one float (rank 0), as torch.onnx.export writes scalars.
void scalar_constant(TinyModel& m, const std::string& out, float value, const std::string& name) {
  auto& n = m.node("Constant", {}, {out}, name);
  auto* a = n.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  a->mutable_t()->add_float_data(value);
}

Graph import(TinyModel& m, const std::string& label) {
  LoadOptions o;
  o.batch = 2;
  return import_onnx_bytes(m.bytes(), label, o, {});
}

// torch exports F.dropout(x, p=0.0, training=True) (torchvision's Swin) as Dropout with ratio 0 and training_mode
// true: it drops nothing. The ratio becomes the node's attribute; the node costs nothing and saves no mask, while a
// ratio of 0.1 still drops.
TEST(OnnxArtefacts, DropoutWithAConstantRatioOfZeroDropsNothingInTraining) {
  for (float ratio : {0.f, 0.1f}) {
    TinyModel m;
    m.input("x", {-1, 4, 8}).weight("w", {8, 8});
    m.node("MatMul", {"x", "w"}, {"h"}, "proj");  // a parameter upstream: the backward needs the mask
    scalar_constant(m, "ratio", ratio, "ratio_const");
    auto& mode = m.node("Constant", {}, {"mode"}, "mode_const");
    auto* a = mode.add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::BOOL);
    a->mutable_t()->add_int32_data(1);
    m.node("Dropout", {"h", "ratio", "mode"}, {"y"}, "drop");
    m.output("y");
    const Graph g = import(m, "dropout.onnx");
    const Node& n = g.nodes[g.find_node("drop")];
    EXPECT_DOUBLE_EQ(n.attrs.f("ratio", -1), ratio);
    EXPECT_EQ(ops::dropout_active(g, n), ratio != 0.f) << ratio;
    EXPECT_EQ(estimate(g).nodes.at(g.find_node("drop")).cost.flops, ratio == 0.f ? Count{0} : Count{2 * 4 * 8});
    // Saved for backward: the MatMul's input x (fp32), plus the dropout's bool mask only when it drops.
    EXPECT_EQ(estimate_memory(g).saved_bytes, Count{2 * 4 * 8 * 4} + (ratio == 0.f ? 0 : 2 * 4 * 8)) << ratio;
  }
}

TEST(OnnxArtefacts, FoldedBatchNormConvsAreMarkedAndNoted) {
  TinyModel m;
  m.input("x", {-1, 3, 8, 8}).weight("onnx::Conv_7", {4, 3, 3, 3}).weight("onnx::Conv_8", {4});
  m.weight("head.weight", {4, 4, 1, 1}).weight("head.bias", {4});
  m.node("Conv", {"x", "onnx::Conv_7", "onnx::Conv_8"}, {"h"}, "/conv1/Conv");
  m.node("Conv", {"h", "head.weight", "head.bias"}, {"y"}, "/head/Conv");
  m.output("y");
  Graph g = import(m, "folded");
  EXPECT_EQ(g.nodes.at(g.find_node("conv1")).attrs.i("folded_batchnorm", 0), 1);
  EXPECT_FALSE(g.nodes.at(g.find_node("head")).attrs.has("folded_batchnorm"));  // a real conv bias
  EXPECT_TRUE(has_note(g, "BatchNorm folded into 1 Conv node(s)"));
  EXPECT_TRUE(has_note(g, "4 fewer parameters"));
  EXPECT_TRUE(has_note(g, "conv without bias + BatchNorm"));
  // conv1 costs as conv (no bias) + BatchNorm: 2 MACs + 2 per output element; head as conv + bias.
  const ModelCost c = estimate(g);
  const Count E = 2 * 4 * 6 * 6;
  EXPECT_EQ(to_string(c.nodes[g.find_node("conv1")].cost.flops), to_string(2 * E * 27 + 2 * E));
  EXPECT_EQ(to_string(c.nodes[g.find_node("head")].cost.flops), to_string(2 * E * 4 + E));
}

TEST(OnnxArtefacts, NoConvIsMarkedWhenBatchNormNodesRemain) {
  TinyModel m;
  m.input("x", {-1, 3, 8, 8}).weight("onnx::Conv_7", {4, 3, 3, 3}).weight("onnx::Conv_8", {4});
  for (const char* s : {"bn.weight", "bn.bias", "bn.running_mean", "bn.running_var"}) m.weight(s, {4});
  m.node("Conv", {"x", "onnx::Conv_7", "onnx::Conv_8"}, {"h"}, "/conv1/Conv");
  m.node("BatchNormalization", {"h", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var"}, {"y"},
         "/bn/BatchNormalization");
  m.output("y");
  Graph g = import(m, "not-folded");
  EXPECT_FALSE(g.nodes.at(g.find_node("conv1")).attrs.has("folded_batchnorm"));
  EXPECT_FALSE(has_note(g, "BatchNorm folded"));
}

TEST(OnnxArtefacts, AFunctionalCallInAModuleWithSubmodulesIsNotALeafModuleCall) {
  // torchvision's BasicConv2d (Inception): self.conv, self.bn, then F.relu in its own scope "/block"; an nn.ReLU
  // is a scope of its own without submodules ("/act"). Only the second is a module call (validation:
  // inception_v3 under ptflops, E for a patched F.relu and 2E for an nn.ReLU, and pthflops, 0 and 2E).
  TinyModel m;
  m.input("x", {-1, 3, 8, 8}).weight("block.conv.weight", {4, 3, 3, 3});
  m.node("Conv", {"x", "block.conv.weight"}, {"h"}, "/block/conv/Conv");
  m.node("Relu", {"h"}, {"r"}, "/block/Relu");
  m.node("Relu", {"r"}, {"y"}, "/act/Relu");
  m.output("y");
  Graph g = import(m, "basic-conv");
  const Node& functional = g.nodes.at(g.find_node("block.relu"));
  EXPECT_EQ(functional.module, "block");
  EXPECT_FALSE(functional.module_call);
  const Node& module = g.nodes.at(g.find_node("act"));
  EXPECT_TRUE(module.module_call);
  EXPECT_EQ(module.module_type, "ReLU");
  const Count E = 2 * 4 * 6 * 6, macs = E * 27;
  EXPECT_EQ(to_string(count_under(g, Convention::Ptflops).total), to_string(macs + E + 2 * E));
  EXPECT_EQ(to_string(count_under(g, Convention::Pthflops).total), to_string(macs + 2 * E));
}

TEST(OnnxArtefacts, ABareLeafModuleExportedOnItsOwnIsItsOwnModuleCall) {
  // torch.onnx.export(nn.Conv2d(3, 2, 3), 1x3x224x224): one node "/Conv" in the root scope, parameters "weight"
  // and "bias". The root module is the leaf the tools hook: ptflops 2,759,904 (its published vector, as for the
  // same Conv wrapped in nn.Sequential), thop 2,661,336 (no bias).
  TinyModel m;
  m.input("input", {1, 3, 224, 224}).weight("weight", {2, 3, 3, 3}).weight("bias", {2});
  m.node("Conv", {"input", "weight", "bias"}, {"y"}, "/Conv");
  m.output("y");
  Graph g = import(m, "bare-conv");
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_TRUE(g.nodes[0].module_call);
  EXPECT_EQ(g.nodes[0].module_type, "Conv2d");
  EXPECT_EQ(g.nodes[0].name, "conv");
  EXPECT_EQ(to_string(count_under(g, Convention::Ptflops).total), "2759904");
  EXPECT_EQ(to_string(count_under(g, Convention::Thop).total), "2661336");
  // torchinfo multiplies a Linear's "weight" and "bias" by the batch (params x output_size[0]): the module's own
  // parameter names, bare or under a one-character path ("0.bias" was read as an RNN's and multiplied by 4 x 32).
  for (const char* prefix : {"", "0."}) {
    TinyModel lin;
    lin.input("x", {4, 64}).weight(std::string(prefix) + "weight", {32, 64}).weight(std::string(prefix) + "bias", {32});
    set_attr(lin.node("Gemm", {"x", std::string(prefix) + "weight", std::string(prefix) + "bias"}, {"y"},
                      *prefix ? "/0/Gemm" : "/Gemm"),
             "transB", int64_t{1});
    lin.output("y");
    Graph l = import(lin, "linear");
    EXPECT_EQ(to_string(count_under(l, Convention::Torchinfo).total), "8320") << prefix;
  }
  // A root forward of several ops is no leaf: nothing there is a module call.
  TinyModel two;
  two.input("x", {1, 4}).weight("w", {4, 4});
  two.node("MatMul", {"x", "w"}, {"h"}, "/MatMul");
  two.node("Relu", {"h"}, {"y"}, "/Relu");
  two.output("y");
  Graph f = import(two, "functional-root");
  for (const Node& n : f.nodes) EXPECT_FALSE(n.module_call) << n.name;
}

TEST(OnnxArtefacts, TransposeLayerNormTransposeInOneScopeIsALayerNorm2dCall) {
  // torchvision's LayerNorm2d (ConvNeXt): permute, F.layer_norm, permute in its own scope. A leaf module of its
  // own type: torchinfo counts its parameters x output_size[0] (batch 2: 2 x 8); the tools that match exact
  // nn.LayerNorm see nothing (validation: convnext_tiny).
  TinyModel m;
  m.input("x", {-1, 4, 3, 3}).weight("norm.weight", {4}).weight("norm.bias", {4});
  set_attr(m.node("Transpose", {"x"}, {"t"}, "/norm/Transpose"), "perm", std::vector<int64_t>{0, 2, 3, 1});
  set_attr(m.node("LayerNormalization", {"t", "norm.weight", "norm.bias"}, {"n"}, "/norm/LayerNormalization"),
           "axis", int64_t{-1});
  set_attr(m.node("Transpose", {"n"}, {"y"}, "/norm/Transpose_1"), "perm", std::vector<int64_t>{0, 3, 1, 2});
  m.output("y");
  Graph g = import(m, "layernorm2d");
  const Node& ln = g.nodes.at(g.find_node("norm"));
  EXPECT_EQ(ln.op, OpKind::LayerNormalization);
  EXPECT_TRUE(ln.module_call);
  EXPECT_EQ(ln.module_type, "LayerNorm2d");
  EXPECT_EQ(to_string(count_under(g, Convention::Torchinfo).total), "16");
  EXPECT_EQ(to_string(count_under(g, Convention::Thop).total), "0");
  EXPECT_EQ(to_string(count_under(g, Convention::Ptflops).total), "0");
}

TEST(OnnxArtefacts, MultiplicationByOneIsAnIdentity) {
  TinyModel m;
  m.input("x", {-1, 4, 5});
  scalar_constant(m, "one", 1.0f, "/attn/Constant");
  scalar_constant(m, "two", 2.0f, "/attn/Constant_1");
  m.node("Mul", {"x", "one"}, {"a"}, "/attn/Mul");
  m.node("Mul", {"one", "a"}, {"b"}, "/attn/Mul_1");
  m.node("Div", {"b", "one"}, {"c"}, "/attn/Div");
  m.node("Div", {"one", "c"}, {"d"}, "/attn/Div_1");  // 1 / x is real work
  m.node("Mul", {"d", "two"}, {"y"}, "/attn/Mul_2");
  m.output("y");
  Graph g = import(m, "mul-by-one");
  int identities = 0;
  for (const Node& n : g.nodes)
    if (n.op == OpKind::Identity) {
      ++identities;
      EXPECT_NE(n.op_type, "Identity");  // the file's op type stays
      ASSERT_EQ(n.inputs.size(), 1u);
      EXPECT_EQ(to_string(g.value(n.inputs[0]).shape), "2x4x5");
    }
  EXPECT_EQ(identities, 3);
  EXPECT_EQ(g.nodes.at(g.find_node("attn.div_1")).op, OpKind::Div);
  EXPECT_EQ(g.nodes.at(g.find_node("attn.mul_2")).op, OpKind::Mul);
  EXPECT_TRUE(has_note(g, "3 Mul/Div node(s) by the constant 1"));
  EXPECT_EQ(to_string(estimate(g).total.flops), "80");  // 1/x and *2 over 40 elements
}

/// torch's LayerNorm over the last dim at opsets before 17, then a Linear on the 3-D result.
TinyModel layer_norm_then_linear() {
  TinyModel m;
  m.input("x", {-1, 6, 8}).weight("norm.weight", {8}).weight("norm.bias", {8});
  m.weight("onnx::MatMul_9", {8, 16}).weight("fc.bias", {16});
  set_attr(m.node("ReduceMean", {"x"}, {"mean"}, "/norm/ReduceMean"), "axes", std::vector<int64_t>{-1});
  m.node("Sub", {"x", "mean"}, {"d"}, "/norm/Sub");
  scalar_constant(m, "two", 2.0f, "/norm/Constant");
  m.node("Pow", {"d", "two"}, {"sq"}, "/norm/Pow");
  set_attr(m.node("ReduceMean", {"sq"}, {"var"}, "/norm/ReduceMean_1"), "axes", std::vector<int64_t>{-1});
  scalar_constant(m, "eps", 1e-5f, "/norm/Constant_1");
  m.node("Add", {"var", "eps"}, {"ve"}, "/norm/Add");
  m.node("Sqrt", {"ve"}, {"s"}, "/norm/Sqrt");
  m.node("Div", {"d", "s"}, {"n"}, "/norm/Div");
  m.node("Mul", {"n", "norm.weight"}, {"nw"}, "/norm/Mul");
  m.node("Add", {"nw", "norm.bias"}, {"h"}, "/norm/Add_1");
  m.node("MatMul", {"h", "onnx::MatMul_9"}, {"p"}, "/fc/MatMul");
  m.node("Add", {"fc.bias", "p"}, {"y"}, "/fc/Add");
  m.output("y");
  return m;
}

TEST(OnnxArtefacts, DecomposedLayerNormAndLinearArePutBackTogether) {
  TinyModel m = layer_norm_then_linear();
  Graph g = import(m, "layernorm-linear");
  ASSERT_EQ(g.nodes.size(), 2u);
  const Node& norm = g.nodes[0];
  EXPECT_EQ(norm.op, OpKind::LayerNormalization);
  EXPECT_EQ(norm.name, "norm");
  EXPECT_TRUE(norm.module_call);
  EXPECT_EQ(norm.module_type, "LayerNorm");
  EXPECT_EQ(norm.attrs.i("axis", 0), -1);
  EXPECT_NEAR(norm.attrs.f("epsilon", 0), 1e-5, 1e-9);
  ASSERT_EQ(norm.inputs.size(), 3u);
  const Node& fc = g.nodes[1];
  EXPECT_EQ(fc.op, OpKind::Gemm);
  EXPECT_EQ(fc.name, "fc");
  EXPECT_EQ(fc.module_type, "Linear");
  EXPECT_EQ(g.value(fc.inputs[1]).name, "fc.weight");  // the exporter's transposed copy, named as in torch
  EXPECT_EQ(to_string(g.value(g.outputs[0]).shape), "2x6x16");
  EXPECT_TRUE(has_note(g, "1 decomposed LayerNorm(s)"));
  EXPECT_TRUE(has_note(g, "1 MatMul + bias Add pair(s) fused into Linear"));
  // Same FLOPs as the parts: LayerNorm 7E + 2R, Linear 2 MACs + bias adds.
  const Count E = 2 * 6 * 8, R = 2 * 6, out = 2 * 6 * 16;
  const ModelCost c = estimate(g);
  EXPECT_EQ(to_string(c.nodes[0].cost.flops), to_string(7 * E + 2 * R));
  EXPECT_EQ(to_string(c.nodes[1].cost.flops), to_string(2 * out * 8 + out));
  EXPECT_EQ(to_string(c.total.params), "160");
}

TEST(OnnxArtefacts, RidgeRulesAloneFuseTheSame) {
  TinyModel m = layer_norm_then_linear();
  Graph g = import_onnx_bytes(m.bytes(), "layernorm-linear", [] { LoadOptions o; o.batch = 2; return o; }(),
                              OnnxImportOptions{false, true});
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].op, OpKind::LayerNormalization);
  EXPECT_EQ(g.nodes[1].op, OpKind::Gemm);
}

TEST(OnnxArtefacts, NormalisationWithoutTheLayerNormShapeStaysDecomposed) {
  TinyModel m;
  m.input("x", {-1, 6, 8});
  set_attr(m.node("ReduceMean", {"x"}, {"mean"}, "/n/ReduceMean"), "axes", std::vector<int64_t>{1});  // not last
  m.node("Sub", {"x", "mean"}, {"d"}, "/n/Sub");
  scalar_constant(m, "two", 2.0f, "/n/Constant");
  m.node("Pow", {"d", "two"}, {"sq"}, "/n/Pow");
  set_attr(m.node("ReduceMean", {"sq"}, {"var"}, "/n/ReduceMean_1"), "axes", std::vector<int64_t>{1});
  scalar_constant(m, "eps", 1e-5f, "/n/Constant_1");
  m.node("Add", {"var", "eps"}, {"ve"}, "/n/Add");
  m.node("Sqrt", {"ve"}, {"s"}, "/n/Sqrt");
  m.node("Div", {"d", "s"}, {"y"}, "/n/Div");
  m.output("y");
  Graph g = import(m, "not-layernorm");
  for (const Node& n : g.nodes) EXPECT_NE(n.op, OpKind::LayerNormalization);
  EXPECT_FALSE(has_note(g, "LayerNorm"));
}

}  // namespace
}  // namespace ridge
