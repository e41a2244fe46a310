// The ONNX fixtures in ../shared/fixtures/onnx import with the node and initializer counts their README lists,
// every tensor fully shaped once inputs are bound, module paths recovered, and artefacts noted.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "ridge/cost.hpp"
#include "ridge/load.hpp"
#include "support/test_support.hpp"

namespace ridge {
namespace {

struct FixtureFacts {
  const char* file;
  size_t nodes;                ///< nodes in the file
  size_t fused_away;           ///< nodes ridge folds into LayerNorm and Linear (10 per LayerNorm, 1 per Linear)
  Count initializer_elements;  ///< params + buffers, from the fixtures README
  Count params;                ///< trainable only
};

// From ../shared/fixtures/onnx/README.md; fused_away: transformer_lm 5 LayerNorms + 7 Linears, distilbert
// 13 LayerNorms + 36 Linears + 6 GELUs (Div, Erf, Add, Mul and 3 constants each).
const FixtureFacts kFixtures[] = {
    {"mnist_cnn", 10, 0, 1'199'882, 1'199'882},
    {"mnist_cnn_c128", 10, 0, 2'398'026, 2'398'026},
    {"mnist_old", 12, 0, 21'840, 21'840},
    {"alexnet", 20, 0, 61'100'840, 61'100'840},
    {"vgg16", 38, 0, 138'357'544, 138'357'544},
    {"resnet18", 49, 0, 11'684'712, 11'684'712},
    {"resnet50", 122, 0, 25'530'472, 25'530'472},
    {"mobilenet_v2", 170, 0, 3'487'816, 3'487'816},
    {"transformer_lm", 277, 57, 14'828'878, 13'828'878},
    {"distilbert.op13", 521, 208, 66'362'880, 66'362'880},
    {"mnist_cnn.train", 16, 0, 1'199'882, 1'199'882},
    {"resnet18.train", 69, 0, 11'699'112, 11'689'512},
};

std::string path_of(const std::string& stem) { return test::fixture("onnx/" + stem + ".ext_emptybin.onnx"); }

LoadOptions bound(int64_t batch) {
  LoadOptions o;
  o.batch = batch;
  o.seq_len = 128;
  return o;
}

Count elements_of(const Graph& g, bool (*keep)(const Value&)) {
  Count n = 0;
  for (const Value& v : g.values)
    if (keep(v)) n += v.shape.elements();
  return n;
}

class OnnxFixture : public ::testing::TestWithParam<FixtureFacts> {};

TEST_P(OnnxFixture, CountsMatchTheReadme) {
  RIDGE_REQUIRE_SHARED();
  const FixtureFacts& f = GetParam();
  Graph g = import_onnx(path_of(f.file), bound(1));
  EXPECT_EQ(g.nodes.size() + f.fused_away, f.nodes);
  EXPECT_EQ(to_string(elements_of(g, [](const Value& v) { return v.is_weight(); })), to_string(f.initializer_elements));
  EXPECT_EQ(to_string(elements_of(g, [](const Value& v) { return v.kind == ValueKind::Param; })), to_string(f.params));
}

TEST_P(OnnxFixture, EveryTensorIsShapedOnceInputsAreBound) {
  RIDGE_REQUIRE_SHARED();
  for (int64_t batch : {1, 3}) {
    Graph g = import_onnx(path_of(GetParam().file), bound(batch));
    for (const Value& v : g.values)
      EXPECT_TRUE(v.shape.known()) << v.name << " " << to_string(v.shape) << ": " << v.shape_note;
    for (const std::string& note : g.notes) EXPECT_EQ(note.find("unknown shape"), std::string::npos) << note;
  }
}

TEST_P(OnnxFixture, NodeNamesAreUniqueAndScoped) {
  RIDGE_REQUIRE_SHARED();
  Graph g = import_onnx(path_of(GetParam().file), bound(1));
  std::vector<std::string> names;
  for (const Node& n : g.nodes) names.push_back(n.name);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end());
  for (const Node& n : g.nodes) EXPECT_EQ(n.name.find('/'), std::string::npos) << n.name;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, OnnxFixture, ::testing::ValuesIn(kFixtures),
                         [](const auto& info) {
                           std::string s = info.param.file;
                           std::replace(s.begin(), s.end(), '.', '_');
                           return s;
                         });

TEST(OnnxFixtures, ResNetModulesFollowTorchNames) {
  RIDGE_REQUIRE_SHARED();
  Graph g = import_onnx(path_of("resnet18"), bound(1));
  const Node& conv = g.nodes.at(g.find_node("layer1.0.conv1"));
  EXPECT_EQ(conv.op, OpKind::Conv);
  EXPECT_EQ(conv.module, "layer1.0.conv1");
  EXPECT_TRUE(conv.module_call);
  EXPECT_EQ(conv.module_type, "Conv2d");
  const Node& add = g.nodes.at(g.find_node("layer1.0.add"));
  EXPECT_EQ(add.module, "layer1.0");
  EXPECT_FALSE(add.module_call);
  const int relu1 = g.find_node("layer1.0.relu_1");
  ASSERT_GE(relu1, 0);
  EXPECT_EQ(g.nodes[relu1].module, "layer1.0.relu");  // the same ReLU module called twice
  EXPECT_EQ(g.nodes[relu1].module_type, "ReLU");
  const Node& pool = g.nodes.at(g.find_node("avgpool"));
  EXPECT_EQ(pool.op, OpKind::AdaptiveAvgPool);
  EXPECT_EQ(pool.attrs.ints("output_size"), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(pool.module_type, "AdaptiveAvgPool2d");
  EXPECT_EQ(g.value(g.outputs.at(0)).shape, (Shape{{1, 1000}}));
  bool noted = false;
  for (const auto& n : g.notes) noted |= n.find("BatchNorm folded into 20 Conv") != std::string::npos &&
                                          n.find("4,800 fewer parameters") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(OnnxFixtures, MobileNetClipIsReLU6AndModulePathsNest) {
  RIDGE_REQUIRE_SHARED();
  Graph g = import_onnx(path_of("mobilenet_v2"), bound(1));
  const int clip = g.find_node("features.1.conv.0.2");
  ASSERT_GE(clip, 0);
  EXPECT_EQ(g.nodes[clip].module_type, "ReLU6");
  const int conv = g.find_node("features.1.conv.0.0");
  ASSERT_GE(conv, 0);
  EXPECT_EQ(g.nodes[conv].module_type, "Conv2d");
}

TEST(OnnxFixtures, TrainingResNetKeepsBatchNormWithBuffers) {
  RIDGE_REQUIRE_SHARED();
  Graph g = import_onnx(path_of("resnet18.train"), bound(2));
  const Node& bn = g.nodes.at(g.find_node("bn1"));
  EXPECT_EQ(bn.op, OpKind::BatchNormalization);
  EXPECT_EQ(bn.module_type, "BatchNorm2d");
  EXPECT_EQ(g.value(bn.inputs[1]).kind, ValueKind::Param);
  EXPECT_EQ(g.value(bn.inputs[3]).kind, ValueKind::Buffer);
  EXPECT_EQ(g.value(bn.outputs[0]).shape, (Shape{{2, 64, 112, 112}}));
}

TEST(OnnxFixtures, TransformerShapesFoldThroughShapeArithmetic) {
  RIDGE_REQUIRE_SHARED();
  LoadOptions o;
  o.batch = 4;
  Graph g = import_onnx(path_of("transformer_lm"), o);
  EXPECT_EQ(g.value(g.outputs.at(0)).shape, (Shape{{35, 4, 33278}}));
  for (const Value& v : g.values)
    if (v.name == "pos_encoder.pe") {
      EXPECT_EQ(v.kind, ValueKind::Buffer);
    }
}

TEST(OnnxFixtures, TransformerModulesAreRecognised) {
  RIDGE_REQUIRE_SHARED();
  Graph g = import_onnx(path_of("transformer_lm"), bound(1));
  std::map<std::string, std::string> type;
  for (const auto& m : g.modules) type[m.path] = m.type;
  EXPECT_EQ(type["encoder"], "TransformerEncoder");
  EXPECT_EQ(type["encoder.layers"], "ModuleList");
  EXPECT_EQ(type["encoder.layers.1"], "TransformerEncoderLayer");
  EXPECT_EQ(type["encoder.layers.1.self_attn"], "MultiheadAttention");
  const int in_proj = g.find_node("encoder.layers.0.self_attn.in_proj");
  ASSERT_GE(in_proj, 0);
  EXPECT_EQ(g.nodes[in_proj].op, OpKind::Gemm);
  const int norm = g.find_node("encoder.layers.0.norm1");
  ASSERT_GE(norm, 0);
  EXPECT_EQ(g.nodes[norm].module_type, "LayerNorm");
  const int relu = g.find_node("encoder.layers.0.relu");
  ASSERT_GE(relu, 0);
  EXPECT_EQ(g.nodes[relu].attrs.s("torch_fn", ""), "captured");
}

TEST(OnnxFixtures, DistilBertBindsBatchAndSequence) {
  RIDGE_REQUIRE_SHARED();
  LoadOptions o;
  o.batch = 2;
  o.seq_len = 64;
  Graph g = import_onnx(path_of("distilbert.op13"), o);
  EXPECT_EQ(g.value(g.outputs.at(0)).shape, (Shape{{2, 64, 768}}));
  o.seq_len.reset();
  o.input_shapes = {{"input_ids", Shape{{3, 16}}}};
  g = import_onnx(path_of("distilbert.op13"), o);
  EXPECT_EQ(g.value(g.outputs.at(0)).shape, (Shape{{3, 16, 768}}));
}

TEST(OnnxFixtures, UnboundSequenceIsNotedNotFatal) {
  RIDGE_REQUIRE_SHARED();
  Graph g = import_onnx(path_of("distilbert.op13"), LoadOptions{});
  bool noted = false;
  for (const auto& n : g.notes) noted |= n.find("'seq'") != std::string::npos;
  EXPECT_TRUE(noted);
  int unknown = 0;
  for (const Value& v : g.values)
    if (!v.shape.known()) {
      ++unknown;
      EXPECT_FALSE(v.shape_note.empty()) << v.name;
    }
  EXPECT_GT(unknown, 0);
  // The input itself says how to bind it (its shape is in the file, with a symbolic dim).
  const int ids = g.inputs.at(0);
  EXPECT_NE(g.value(ids).shape_note.find("has a symbolic dim that was not bound: pass --seq-len N or --input input_ids="),
            std::string::npos)
      << g.value(ids).shape_note;
}

TEST(OnnxFixtures, EmbeddedWeightsImportLikeExternalOnes) {
  RIDGE_REQUIRE_SHARED();
  for (const char* name : {"mnist_cnn", "mnist_old"}) {
    Graph embedded = import_onnx(test::fixture(std::string("onnx/testdata/") + name + "/model.onnx"), bound(2));
    Graph external = import_onnx(path_of(name), bound(2));
    ASSERT_EQ(embedded.nodes.size(), external.nodes.size());
    for (size_t i = 0; i < embedded.nodes.size(); ++i) {
      EXPECT_EQ(embedded.nodes[i].name, external.nodes[i].name);
      for (size_t k = 0; k < embedded.nodes[i].outputs.size(); ++k)
        EXPECT_EQ(embedded.value(embedded.nodes[i].outputs[k]).shape, external.value(external.nodes[i].outputs[k]).shape);
    }
  }
}

}  // namespace
}  // namespace ridge

namespace ridge {
namespace {

/// Everything `ridge summary` and `ridge flops --all-conventions` compute, on a graph that may have unknown
/// shapes: none of it may reach an internal error.
void cost_everything(const Graph& g) {
  const ModelCost mc = estimate(g);
  (void)estimate_memory(g, Optimizer::Adam);
  (void)torchinfo_memory(g);
  (void)torchsummary_memory(g);
  for (const auto& c : conventions()) (void)count_under(g, c.id);
  (void)mc;
}

TEST(OnnxFixtures, Gpt2Opset13LoadsAndCostsWithAndWithoutASequenceLength) {
  RIDGE_REQUIRE_SHARED();
  LoadOptions o;
  o.batch = 1;
  o.seq_len = 128;
  const Graph g = import_onnx(path_of("gpt2.op13"), o);
  cost_everything(g);
  Count linear_macs = 0;
  const ModelCost mc = estimate(g);
  for (const NodeCost& nc : mc.nodes) {
    const OpFamily f = op_family(g.nodes[nc.node].op);
    if (f == OpFamily::Linear || f == OpFamily::MatMul) linear_macs += nc.cost.macs;
  }
  EXPECT_EQ(linear_macs, Count{16'114'089'984});  // the fixtures README, at batch 1 and sequence 128
  // Without a sequence length the shapes stay unknown: costs are excluded and named, never an internal error.
  const Graph unbound = import_onnx(path_of("gpt2.op13"), LoadOptions{});
  cost_everything(unbound);
}

}  // namespace
}  // namespace ridge
