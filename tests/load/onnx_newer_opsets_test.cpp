// Models of opsets newer than Debian's libonnx 1.12 knows (18 and 23), written by
// tests/load/make_newer_opset_models.py into tests/load/data/: they load, with ridge's rules where the library
// has no schema, and cost exactly.
#include <gtest/gtest.h>

#include "load/onnx_tiny_model.hpp"
#include "ridge/cost.hpp"
#include "ridge/load.hpp"
#include "ridge/onnx_import.hpp"
#include "ridge/error.hpp"

namespace ridge {
namespace {

std::string data_file(const std::string& name) { return std::string(RIDGE_SOURCE_DIR) + "/tests/load/data/" + name; }

const Node& node_of(const Graph& g, OpKind op) {
  for (const Node& n : g.nodes)
    if (n.op == op) return n;
  throw std::runtime_error("no node of that kind");
}

Count family_macs(const Graph& g, const ModelCost& mc, OpFamily f) {
  Count macs = 0;
  for (const NodeCost& nc : mc.nodes)
    if (op_family(g.nodes[nc.node].op) == f) macs += nc.cost.macs;
  return macs;
}

TEST(OnnxNewerOpsets, Opset18ReduceMeanAxesInputSplitNumOutputsPadAxes) {
  LoadOptions o;
  o.batch = 2;
  const Graph g = import_onnx(data_file("opset18_reduce_split_pad.onnx"), o);
  const ModelCost mc = estimate(g);
  EXPECT_TRUE(mc.complete());
  EXPECT_EQ(to_string(g.value(node_of(g, OpKind::ReduceMean).outputs[0]).shape), "2x8x1");
  EXPECT_EQ(to_string(g.value(node_of(g, OpKind::Split).outputs[1]).shape), "2x8x8");
  EXPECT_EQ(to_string(g.value(node_of(g, OpKind::Pad).outputs[0]).shape), "2x8x12");
  EXPECT_EQ(family_macs(g, mc, OpFamily::MatMul), Count{2 * 8 * 8 * 32});
}

TEST(OnnxNewerOpsets, Opset23DecoderWithRmsNormRotaryAndGroupedQueryAttention) {
  LoadOptions o;
  o.batch = 1;
  o.seq_len = 4;
  o.input_shapes = {{"past_key", Shape{{1, 2, 6, 16}}}, {"past_value", Shape{{1, 2, 6, 16}}}};
  const Graph g = import_onnx(data_file("opset23_decoder_gqa.onnx"), o);
  const ModelCost mc = estimate(g);
  for (const NodeCost& nc : mc.nodes) EXPECT_EQ(nc.status, CostStatus::Ok) << g.nodes[nc.node].name << nc.reason;
  const Node& att = node_of(g, OpKind::Attention);
  EXPECT_EQ(to_string(g.value(att.outputs[0]).shape), "1x4x64");
  EXPECT_EQ(to_string(g.value(att.outputs[1]).shape), "1x2x10x16");  // present key: past 6 + 4 new
  // Projections: 4 rows x 64 x (64 + 32 + 32 + 64); attention: 4 query heads x 4 queries x 10 keys x (16 + 16).
  EXPECT_EQ(family_macs(g, mc, OpFamily::MatMul), Count{4 * 64 * 192});
  EXPECT_EQ(family_macs(g, mc, OpFamily::Attention), Count{4 * 4 * 10 * 32});
  for (const NodeCost& nc : mc.nodes) {
    const Node& n = g.nodes[nc.node];
    if (n.op == OpKind::Attention) { EXPECT_EQ(nc.cost.flops, Count{2 * 5120 + 160 + 16 * 48}); }
    if (n.op == OpKind::RMSNormalization) { EXPECT_EQ(nc.cost.flops, Count{4 * 256 + 2 * 4}); }
    if (n.op == OpKind::RotaryEmbedding) { EXPECT_TRUE(nc.cost.flops == 3 * 256 || nc.cost.flops == 3 * 128); }
  }
  EXPECT_EQ(mc.total.params, Count{64 + 64 * 64 * 2 + 64 * 32 * 2});  // the rotary caches are buffers
}

TEST(OnnxNewerOpsets, OpsetsBeyond23AndIrBeyond11AreRefusedByName) {
  for (int opset : {23, 24})
    for (int ir : {11, 12}) {
      test::TinyModel m(opset);
      m.proto().set_ir_version(ir);
      m.input("x", {1, 4}).node("Relu", {"x"}, {"y"});
      m.output("y");
      if (opset <= 23 && ir <= 11) {
        EXPECT_EQ(import_onnx_bytes(m.bytes(), "m.onnx", LoadOptions{}).nodes.size(), 1u);
        continue;
      }
      try {
        import_onnx_bytes(m.bytes(), "m.onnx", LoadOptions{});
        ADD_FAILURE() << "opset " << opset << " IR " << ir << " loaded";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(opset > 23 ? "opset 24" : "IR version 12"), std::string::npos) << e.what();
      }
    }
}

TEST(OnnxNewerOpsets, MicrosoftDomainOpsMapToTheirRecords) {
  test::TinyModel m(17);
  auto* ms = m.proto().add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  m.input("x", {2, 8, 16}).input("skip", {2, 8, 16}).weight("gamma", {16}).weight("beta", {16});
  m.node("SkipLayerNormalization", {"x", "skip", "gamma", "beta"}, {"y"}).set_domain("com.microsoft");
  m.output("y");
  const Graph g = import_onnx_bytes(m.bytes(), "ms.onnx", LoadOptions{});
  const ModelCost mc = estimate(g);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op, OpKind::MsSkipLayerNormalization);
  EXPECT_TRUE(mc.complete());
  EXPECT_EQ(mc.total.flops, Count{256 + 7 * 256 + 2 * 16});
  EXPECT_EQ(mc.total.params, Count{32});
}

/// ONNX Runtime's attention fusions (tests/load/make_ort_contrib_models.py): packed-QKV Attention, MultiHeadAttention
/// with a bias, GroupQueryAttention with rotary and a KV cache; every node costed, numbers worked by hand.
TEST(OnnxNewerOpsets, MicrosoftAttentionMultiHeadAndGroupQueryAttentionAreCosted) {
  const Graph g = import_onnx(data_file("ort_attention_ops.onnx"), LoadOptions{});
  const ModelCost mc = estimate(g);
  for (const NodeCost& nc : mc.nodes) EXPECT_EQ(nc.status, CostStatus::Ok) << g.nodes[nc.node].name << nc.reason;
  EXPECT_EQ(to_string(g.value(node_of(g, OpKind::MsAttention).outputs[0]).shape), "1x4x32");
  EXPECT_EQ(to_string(g.value(node_of(g, OpKind::MsMultiHeadAttention).outputs[0]).shape), "1x4x32");
  const Node& gqa = node_of(g, OpKind::MsGroupQueryAttention);
  EXPECT_EQ(to_string(g.value(gqa.outputs[0]).shape), "1x4x32");
  EXPECT_EQ(to_string(g.value(gqa.outputs[1]).shape), "1x2x10x8");  // past 6 + 4 new = total_sequence_length
  for (const NodeCost& nc : mc.nodes) {
    const Node& n = g.nodes[nc.node];
    // Attention: projection 4 x 32 x 96 MACs + bias 384; 4 heads x 4 queries x 4 keys x (8 + 8) MACs, scale 64,
    // softmax 16 rows x (5*4 - 2).
    if (n.op == OpKind::MsAttention) {
      EXPECT_EQ(nc.cost.macs, Count{12288 + 1024});
      EXPECT_EQ(nc.cost.flops, Count{2 * 12288 + 384 + 2 * 1024 + 64 + 16 * 18});
    }
    // MultiHeadAttention: the bias over Q, K and V (3 x 128), then the same core.
    if (n.op == OpKind::MsMultiHeadAttention) {
      EXPECT_EQ(nc.cost.flops, Count{384 + 2 * 1024 + 64 + 16 * 18});
    }
    // GroupQueryAttention: rotary on Q (4 x 4 heads x 8 dims) and K (4 x 2 x 8), 3 FLOPs each; 16 query rows x 10
    // keys x (8 + 8) MACs, scale 160, softmax 16 x (5*10 - 2).
    if (n.op == OpKind::MsGroupQueryAttention) {
      EXPECT_EQ(nc.cost.flops, Count{3 * 128 + 3 * 64 + 2 * 2560 + 160 + 16 * 48});
    }
  }
  EXPECT_EQ(family_macs(g, mc, OpFamily::MatMul), Count{4 * (3 * 1024 + 1024 + 2 * 512)});
  EXPECT_EQ(mc.total.params, Count{3072 + 96 + 96 + 5120});
}

/// Swin's window padding: pad = (7 - H % 7) % 7, zero when H % 7 == 0 (Not/Equal/Where), written into the pads
/// with ScatterND. Folded, the padded shape is known and the conv after it is costed.
TEST(OnnxNewerOpsets, WindowPaddingFoldsThroughModNotWhereAndScatterNd) {
  test::TinyModel m(18);
  m.input("x", {1, 3, 10, 10}).weight("w", {4, 3, 1, 1});
  m.ints("two", {2}, true).ints("seven", {7}, true).ints("zero", {0}, true).ints("zeros", {0, 0, 0, 0, 0, 0, 0, 0});
  m.ints("where", {6, 7});
  m.node("Shape", {"x"}, {"s"}, "shape");
  test::set_attr(m.node("Gather", {"s", "two"}, {"h"}, "gather"), "axis", int64_t{0});
  m.node("Mod", {"h", "seven"}, {"r"}, "mod1");
  m.node("Sub", {"seven", "r"}, {"p"}, "sub");
  m.node("Mod", {"p", "seven"}, {"p7"}, "mod2");
  m.node("Equal", {"r", "zero"}, {"divisible"}, "equal");
  m.node("Not", {"divisible"}, {"needs"}, "not");
  m.node("Where", {"needs", "p7", "zero"}, {"pad"}, "where_pad");
  m.ints("zero1", {0});
  m.node("Unsqueeze", {"pad", "zero1"}, {"pad1"}, "unsqueeze");
  test::set_attr(m.node("Concat", {"pad1", "pad1"}, {"updates"}, "concat"), "axis", int64_t{0});
  m.node("Reshape", {"where", "shape21"}, {"idx"}, "reshape");
  m.ints("shape21", {2, 1});
  m.node("ScatterND", {"zeros", "idx", "updates"}, {"pads"}, "scatter");
  m.node("Pad", {"x", "pads"}, {"xp"}, "pad");
  m.node("Conv", {"xp", "w"}, {"y"}, "conv");
  m.output("y");
  const Graph g = import_onnx_bytes(m.bytes(), "swin_pad.onnx", LoadOptions{});
  const ModelCost mc = estimate(g);
  EXPECT_TRUE(mc.complete());
  EXPECT_EQ(to_string(g.value(node_of(g, OpKind::Pad).outputs[0]).shape), "1x3x14x14");
  EXPECT_EQ(mc.total.macs, Count{4 * 14 * 14 * 3});
}

}  // namespace
}  // namespace ridge
