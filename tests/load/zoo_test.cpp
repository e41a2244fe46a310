// The built-in zoo: exact published parameter counts, structure, and input validation.
#include <gtest/gtest.h>

#include "ridge/cost.hpp"
#include "ridge/error.hpp"
#include "ridge/llm.hpp"
#include "ridge/load.hpp"
#include "ridge/op_rules.hpp"

namespace ridge {
namespace {

TEST(Zoo, EveryModelMatchesItsPublishedParameterCount) {
  ASSERT_EQ(zoo_entries().size(), 31u + llm_zoo_configs().size());  // + the LLM zoo (tests/load/llm_config_test.cpp)
  for (const auto& e : zoo_entries()) {
    Graph g = build_zoo_model(e.name, LoadOptions{});
    EXPECT_EQ(estimate(g).total.params, e.published_params) << e.name;
  }
}

TEST(Zoo, IssueListedCounts) {
  const std::pair<const char*, Count> expected[] = {
      {"resnet50", 25557032}, {"vgg16", 138357544}, {"vgg11", 132863336}, {"vgg19", 143667240},
      {"alexnet", 61100840},  {"resnet18", 11689512}, {"mnist", 1199882}, {"mnist-slides", 21840},
      {"gpt2", 124439808},    {"distilbert", 66362880}};
  for (const auto& [name, params] : expected)
    EXPECT_EQ(estimate(build_zoo_model(name, LoadOptions{})).total.params, params) << name;
}

TEST(Zoo, NamesAreModulePaths) {
  Graph g = build_zoo_model("resnet50", LoadOptions{});
  EXPECT_GE(g.find_node("layer1.0.conv1"), 0);
  EXPECT_GE(g.find_node("layer4.2.conv3"), 0);
  EXPECT_GE(g.find_node("layer1.0.downsample.0"), 0);
  EXPECT_GE(g.find_node("layer1.0.relu_1"), 0);  // the same ReLU module called twice
  const Node& conv = g.nodes[g.find_node("layer1.0.conv1")];
  EXPECT_TRUE(conv.module_call);
  EXPECT_EQ(conv.module_type, "Conv2d");
  const Node& add = g.nodes[g.find_node("layer1.0.add")];
  EXPECT_FALSE(add.module_call);
  EXPECT_EQ(add.module, "layer1.0");
}

TEST(Zoo, GraphsAreDagsWithResidualsAndConcats) {
  Graph r = build_zoo_model("resnet18", LoadOptions{});
  int adds = 0;
  for (const auto& n : r.nodes) adds += n.op == OpKind::Add;
  EXPECT_EQ(adds, 8);
  Graph d = build_zoo_model("densenet121", LoadOptions{});
  int cats = 0;
  for (const auto& n : d.nodes) cats += n.op == OpKind::Concat;
  EXPECT_GT(cats, 50);
  Graph l = build_zoo_model("lenet5", LoadOptions{});
  EXPECT_EQ(l.outputs.size(), 2u);  // logits and probabilities
}

TEST(Zoo, BatchAndSizesBind) {
  LoadOptions o;
  o.batch = 7;
  o.input_size = Shape{{3, 160, 160}};
  Graph g = build_zoo_model("resnet18", o);
  EXPECT_EQ(g.value(g.inputs[0]).shape, (Shape{{7, 3, 160, 160}}));
  LoadOptions s;
  s.seq_len = 64;
  Graph t = build_zoo_model("gpt2", s);
  EXPECT_EQ(t.value(t.inputs[0]).shape, (Shape{{1, 64}}));
  EXPECT_EQ(t.value(t.outputs[0]).shape, (Shape{{1, 64, 50257}}));
  Graph lm = build_zoo_model("transformer-lm", LoadOptions{});
  EXPECT_EQ(lm.value(lm.inputs[0]).shape, (Shape{{35, 1}}));  // sequence first
}

std::string zoo_error_of(const std::string& name, LoadOptions o = {}) {
  try {
    build_zoo_model(name, o);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Zoo, ErrorsSayWhichAndWhy) {
  EXPECT_NE(zoo_error_of("resnet5").find("did you mean resnet50"), std::string::npos) << zoo_error_of("resnet5");
  EXPECT_NE(zoo_error_of("vgg").find("vgg11"), std::string::npos);
  LoadOptions bad_size;
  bad_size.input_size = Shape{{3, 28, 28}};
  EXPECT_NE(zoo_error_of("mnist", bad_size).find("--input-size"), std::string::npos);
  bad_size.input_size = Shape{{1, 20, 20}};
  EXPECT_NE(zoo_error_of("mnist", bad_size).find("fc1"), std::string::npos);
  LoadOptions tiny;
  tiny.input_size = Shape{{3, 8, 8}};
  EXPECT_NE(zoo_error_of("alexnet", tiny).find("too small"), std::string::npos);
  LoadOptions seq;
  seq.seq_len = 5000;
  EXPECT_NE(zoo_error_of("gpt2", seq).find("--seq-len"), std::string::npos);
  LoadOptions zero;
  zero.batch = 0;
  EXPECT_NE(zoo_error_of("mnist", zero).find("--batch"), std::string::npos);
}

// torchvision's VisionTransformer: module paths as torchvision names them, a class token in front of the patches,
// and its dropouts (p = 0.0) no-ops while training, as torch skips them.
TEST(Zoo, VisionTransformersAsTorchvisionBuildsThem) {
  auto shape_of = [](const Graph& g, const std::string& name) {
    for (const auto& v : g.values)
      if (v.name == name) return v.shape;
    ADD_FAILURE() << "no value " << name;
    return Shape{};
  };
  LoadOptions o;
  o.batch = 2;
  Graph g = build_zoo_model("vit_b_16", o);
  for (const char* path : {"conv_proj", "encoder.layers.encoder_layer_0.ln_1",
                           "encoder.layers.encoder_layer_11.self_attention.in_proj",
                           "encoder.layers.encoder_layer_11.self_attention.out_proj",
                           "encoder.layers.encoder_layer_3.mlp.0", "encoder.layers.encoder_layer_3.mlp.3", "encoder.ln",
                           "heads.head"})
    EXPECT_GE(g.find_node(path), 0) << path;
  EXPECT_EQ(shape_of(g, "encoder.pos_embedding"), (Shape{{1, 197, 768}}));
  EXPECT_EQ(g.value(g.outputs[0]).shape, (Shape{{2, 1000}}));
  int matmuls = 0, softmaxes = 0;
  for (const auto& n : g.nodes) {
    matmuls += n.op == OpKind::MatMul;
    softmaxes += n.op == OpKind::Softmax;
  }
  EXPECT_EQ(matmuls, 24);  // q k^T and weights v in each of 12 blocks
  EXPECT_EQ(softmaxes, 12);
  // Training: nn.Dropout(p=0.0) returns its input, so a training graph's forward FLOPs equal inference's.
  LoadOptions t = o;
  t.training = true;
  Graph gt = build_zoo_model("vit_b_16", t);
  int dropouts = 0;
  for (const auto& n : gt.nodes)
    if (n.op == OpKind::Dropout) {
      ++dropouts;
      EXPECT_FALSE(ops::dropout_active(gt, n)) << n.name;
    }
  EXPECT_EQ(dropouts, 1 + 12 * 3);  // the encoder's, then each block's and its MLP's two
  EXPECT_EQ(estimate(gt).total.flops, estimate(g).total.flops);
  // A larger image is torchvision's VisionTransformer(image_size=...): the position embedding grows with it.
  LoadOptions big;
  big.input_size = Shape{{3, 384, 384}};
  Graph g384 = build_zoo_model("vit_b_16", big);
  EXPECT_EQ(shape_of(g384, "encoder.pos_embedding"), (Shape{{1, 577, 768}}));
  // torchvision asserts a square input whose side is a multiple of the patch size.
  for (Shape bad : {Shape{{3, 224, 240}}, Shape{{3, 230, 230}}, Shape{{3, 8, 8}}}) {
    LoadOptions b;
    b.input_size = bad;
    EXPECT_NE(zoo_error_of("vit_b_16", b).find("multiple of its patch size 16"), std::string::npos) << to_string(bad);
  }
}

TEST(Zoo, ClosestNames) {
  std::vector<std::string> known = {"resnet18", "resnet50", "vgg16", "gpt2"};
  EXPECT_EQ(closest_names("resnet51", known).front(), "resnet50");
  EXPECT_TRUE(closest_names("zzzzzzzzzzzz", known).empty());
  // A name listed twice (an id and an alias spelled alike) is suggested once.
  EXPECT_EQ(closest_names("a1", {"a10", "a10", "a30"}), (std::vector<std::string>{"a10", "a30"}));
  // The error-message form: a suggestion, or nothing at all when no name is close.
  EXPECT_EQ(did_you_mean("resnet51", {"resnet50", "gpt2"}), " (did you mean resnet50?)");
  EXPECT_EQ(did_you_mean("zzzzzzzzzzzz", known), "");
}

}  // namespace
}  // namespace ridge
