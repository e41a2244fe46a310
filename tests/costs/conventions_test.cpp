// Every small published vector from the tools' own test suites and docs (counting-conventions.md), and the
// seeds' numbers, under the matching convention.
#include <gtest/gtest.h>

#include "costs/tiny_graphs.hpp"
#include "ridge/cost.hpp"
#include "ridge/load.hpp"

namespace ridge {
namespace {

using test::Tiny;

Count total(const Graph& g, Convention c) { return count_under(g, c).total; }

Graph zoo(const std::string& name, int64_t batch) {
  LoadOptions o;
  o.batch = batch;
  return build_zoo_model(name, o);
}

TEST(Conventions, PtflopsConv2dWithBias) {
  Tiny t;
  int x = t.input(Shape{{1, 3, 224, 224}});
  int y = t.node(OpKind::Conv, "0", {x, t.param("0.weight", Shape{{2, 3, 3, 3}}), t.param("0.bias", Shape{{2}})},
                 Shape{{1, 2, 222, 222}}, test::conv_attrs(3, 1, 0), "Conv2d");
  Graph g = t.done({y});
  EXPECT_EQ(total(g, Convention::Ptflops), 2759904);
  EXPECT_EQ(count_under(g, Convention::Ptflops).params, 56);
}

TEST(Conventions, PtflopsConvTranspose2dUsesInputPositions) {
  Tiny t;
  int x = t.input(Shape{{1, 3, 224, 224}});
  // ConvTranspose weight layout: [Cin, Cout/g, k, k]; output (224-1)*2+3 = 449.
  int y = t.node(OpKind::ConvTranspose, "0",
                 {x, t.param("0.weight", Shape{{3, 2, 3, 3}}), t.param("0.bias", Shape{{2}})},
                 Shape{{1, 2, 449, 449}}, test::conv_attrs(3, 2, 0), "ConvTranspose2d");
  EXPECT_EQ(total(t.done({y}), Convention::Ptflops), 3112706);
}

TEST(Conventions, PtflopsLinearVectors) {
  {
    Tiny t;
    int x = t.input(Shape{{1, 3}});
    int y = t.node(OpKind::Gemm, "0", {x, t.param("0.weight", Shape{{2, 3}}), t.param("0.bias", Shape{{2}})},
                   Shape{{1, 2}}, Attrs{}.set("transB", int64_t{1}), "Linear");
    EXPECT_EQ(total(t.done({y}), Convention::Ptflops), 8);
  }
  {
    Tiny t;
    int x = t.input(Shape{{1, 4, 5, 3}});
    int y = t.node(OpKind::Gemm, "0", {x, t.param("0.weight", Shape{{2, 3}})}, Shape{{1, 4, 5, 2}},
                   Attrs{}.set("transB", int64_t{1}), "Linear");
    EXPECT_EQ(total(t.done({y}), Convention::Ptflops), 120);
  }
}

/// Swin's window attention as exported: functional linears on the module's own qkv and proj weights (named
/// "attn.qkv" and "attn.proj" by the importer), then a residual add outside the module. `proj` renames the second.
Graph window_attention(const std::string& proj) {
  Tiny t;
  int x = t.input(Shape{{1, 16, 8}});
  int q = t.node(OpKind::MatMul, "attn.qkv", {x, t.param("attn.qkv.weight", Shape{{8, 24}})}, Shape{{1, 16, 24}});
  int p = t.node(OpKind::MatMul, "attn." + proj, {q, t.param("attn.proj.weight", Shape{{24, 8}})},
                 Shape{{1, 16, 8}});
  int y = t.node(OpKind::Add, "add", {x, p}, Shape{{1, 16, 8}});
  t.g.nodes[0].module = t.g.nodes[1].module = "attn";
  t.g.nodes[2].module = "";
  return t.done({y});
}

TEST(Conventions, PthflopsCountsTorchvisionsFxWrappedWindowAttentionAsZero) {
  // torchvision wraps shifted_window_attention with torch.fx.wrap: fx records one call_function, which pthflops
  // counts 0. Only the residual add outside it counts (operator add: 2 x E(out)). validation: swin_t.
  EXPECT_EQ(total(window_attention("proj"), Convention::Pthflops), 2 * 16 * 8);
  // Without the qkv + proj pair it is not that function: each matmul counts E(a) x N.
  EXPECT_EQ(total(window_attention("other"), Convention::Pthflops), 16 * 8 * 24 + 16 * 24 * 8 + 2 * 16 * 8);
}

/// A Linear inside module "model" typed "Transformer", whose child "model.<child>" is typed `child_type`.
Graph linear_inside_transformer(const std::string& child, const std::string& child_type) {
  Tiny t;
  int x = t.input(Shape{{1, 3}});
  int y = t.node(OpKind::Gemm, "model." + child + ".lin", {x, t.param("w", Shape{{2, 3}})}, Shape{{1, 2}},
                 Attrs{}.set("transB", int64_t{1}), "Linear");
  t.g.nodes[0].module = "model." + child + ".lin";
  t.g.modules = {{"", "Root", {}}, {"model", "Transformer", {}}, {"model." + child, child_type, {}},
                 {"model." + child + ".lin", "Linear", {}}};
  return t.done({y});
}

TEST(Conventions, PthflopsTreatsOnlyTorchNnTransformerAsAnFxLeaf) {
  // torch.nn.Transformer (encoder and decoder children) is a torch.nn class: fx keeps it as one opaque call.
  EXPECT_EQ(total(linear_inside_transformer("encoder", "TransformerEncoder"), Convention::Pthflops), 0);
  // HF DistilBERT's own `Transformer` class (a `layer` list of TransformerBlocks) is traced through: the
  // Linear counts its MACs plus nothing for a missing bias.
  EXPECT_EQ(total(linear_inside_transformer("layer", "ModuleList"), Convention::Pthflops), 6);
}

TEST(Conventions, ThopConvIgnoresBias) {
  Tiny t;
  int x = t.input(Shape{{1, 3, 32, 32}});
  int y = t.node(OpKind::Conv, "0", {x, t.param("0.weight", Shape{{12, 3, 5, 5}}), t.param("0.bias", Shape{{12}})},
                 Shape{{1, 12, 30, 30}}, test::conv_attrs(5, 1, 1), "Conv2d");
  EXPECT_EQ(total(t.done({y}), Convention::Thop), 810000);
}

TEST(Conventions, FvcoreDocstringConvPlusLinear) {
  Tiny t;
  int x = t.input(Shape{{1, 3, 10, 10}});
  int c = t.node(OpKind::Conv, "conv", {x, t.param("conv.weight", Shape{{10, 3, 1, 1}}), t.param("conv.bias", Shape{{10}})},
                 Shape{{1, 10, 10, 10}}, test::conv_attrs(1, 1, 0), "Conv2d");
  int f = t.node(OpKind::Flatten, "flatten", {c}, Shape{{1, 1000}}, Attrs{}.set("axis", int64_t{1}));
  int y = t.node(OpKind::Gemm, "fc", {f, t.param("fc.weight", Shape{{10, 1000}}), t.param("fc.bias", Shape{{10}})},
                 Shape{{1, 10}}, Attrs{}.set("transB", int64_t{1}), "Linear");
  Graph g = t.done({y});
  ConventionCount cc = count_under(g, Convention::Fvcore);
  EXPECT_EQ(cc.total, 13000);
  EXPECT_EQ(cc.per_node[0], 3000);
  EXPECT_EQ(cc.per_node[2], 10000);
}

TEST(Conventions, DeepSpeedLeNet5AtBatch1024) {
  Graph g = zoo("lenet5", 1024);
  ConventionCount cc = count_under(g, Convention::Deepspeed);
  EXPECT_EQ(cc.total, 866076672);
  EXPECT_NE(cc.headline_text.find("426,516,480"), std::string::npos) << cc.headline_text;  // MACs
  EXPECT_EQ(cc.params, 61706);
}

TEST(Conventions, TorchinfoReadmeMnistNet) {
  Graph g = zoo("mnist-slides", 2);
  EXPECT_EQ(total(g, Convention::Torchinfo), 975200);  // "Total mult-adds (M): 0.98" = 975.20 k
  ToolMemoryLines m = torchinfo_memory(g);
  EXPECT_EQ(m.forward_backward_bytes, 113600);  // 113.60 kB
  EXPECT_EQ(m.params_bytes, 87360);             // 87.36 kB
  EXPECT_EQ(count_under(g, Convention::Torchinfo).params, 21840);
}

TEST(Conventions, TorchsummaryReadmeMnistNet) {
  ToolMemoryLines m = torchsummary_memory(zoo("mnist-slides", 1));
  EXPECT_EQ(m.text,
            "Input size (MB): 0.00\nForward/backward pass size (MB): 0.06\nParams size (MB): 0.08\n"
            "Estimated Total Size (MB): 0.15");
  EXPECT_EQ(m.params_bytes, 21840 * 4);
}

TEST(Seeds, Seed003Vgg16UnderPthflops) {
  Graph g = zoo("vgg16", 1);
  ConventionCount cc = count_under(g, Convention::Pthflops);
  EXPECT_EQ(cc.total, 15516752872);
  // Per-layer values printed in the seed.
  auto at = [&](const std::string& name) { return cc.per_node.at(g.find_node(name)); };
  EXPECT_EQ(at("features.0"), 89915392);
  EXPECT_EQ(at("features.1"), 6422528);
  EXPECT_EQ(at("features.4"), 2408448);
  EXPECT_EQ(at("avgpool"), 1229312);
  EXPECT_EQ(at("classifier.0"), 102764544);
  EXPECT_EQ(at("classifier.6"), 4097000);
  Count conv = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].op == OpKind::Conv) conv += cc.per_node[i];
  EXPECT_EQ(conv + at("avgpool"), 15361407488);  // the seed's "conv" run kept avgpool in
  EXPECT_NEAR(100.0 * to_double(conv) / to_double(cc.total), 99.0, 0.05);
}

TEST(Seeds, Seed002ResNetTheoreticalFlopsAreBatch2Pthflops) {
  // pytorch-estimate-flops (pthflops) numbers quoted in seed 002 come out at batch size 2.
  EXPECT_EQ(total(zoo("resnet18", 2), Convention::Pthflops), 3653586920);
  EXPECT_EQ(total(zoo("resnet50", 2), Convention::Pthflops), 8286749672);
  EXPECT_NE(total(zoo("resnet18", 1), Convention::Pthflops), 3653586920);
}

TEST(Seeds, Seed000MnistConv2PenAndPaper) {
  Graph g = zoo("mnist", 1);
  ModelCost mc = estimate(g);
  const Cost& conv2 = mc.nodes.at(g.find_node("conv2")).cost;
  // 64 x 24 x 24 outputs, each 288 multiplies + 288 adds (287 + bias): 36864 x 577 = 2.1e7.
  EXPECT_EQ(conv2.flops, Count{36864} * (2 * 288 + 1));
  EXPECT_NEAR(to_double(conv2.flops), 2.1e7, 0.05e7);
}

TEST(Conventions, TorchvisionMetaOpsForKnownModels) {
  // torchvision's documented GFLOPS (really GMACs) at batch 1.
  EXPECT_EQ(count_under(zoo("resnet50", 1), Convention::Torchvision).headline_text.substr(0, 5), "4.089");
  EXPECT_EQ(count_under(zoo("resnet18", 1), Convention::Torchvision).headline_text.substr(0, 5), "1.814");
  EXPECT_EQ(count_under(zoo("vgg16", 1), Convention::Torchvision).headline_text.substr(0, 6), "15.470");
  EXPECT_EQ(count_under(zoo("mobilenet_v2", 1), Convention::Torchvision).headline_text.substr(0, 5), "0.301");
  EXPECT_EQ(count_under(zoo("mnasnet1_0", 1), Convention::Torchvision).headline_text.substr(0, 4), "0.31");  // 2 digits published
  EXPECT_EQ(count_under(zoo("alexnet", 1), Convention::Torchvision).headline_text.substr(0, 5), "0.714");
  EXPECT_EQ(count_under(zoo("googlenet", 1), Convention::Torchvision).headline_text.substr(0, 5), "1.498");
  EXPECT_EQ(count_under(zoo("densenet121", 1), Convention::Torchvision).headline_text.substr(0, 5), "2.834");
}

// torchvision's Vision Transformers: every weights entry's `num_params` and `_ops` (GMACs, three decimals) in
// torchvision/models/vision_transformer.py, at the image size its weights were trained at.
TEST(Conventions, TorchvisionVisionTransformersAtEachWeightsImageSize) {
  struct Row {
    const char* model;
    int64_t image;
    Count params;
    const char* ops;
  };
  const Row rows[] = {{"vit_b_16", 224, 86567656, "17.564"},   {"vit_b_16", 384, 86859496, "55.484"},
                      {"vit_b_32", 224, 88224232, "4.409"},    {"vit_l_16", 224, 304326632, "61.555"},
                      {"vit_l_16", 512, 305174504, "361.986"}, {"vit_l_32", 224, 306535400, "15.378"},
                      {"vit_h_14", 224, 632045800, "167.295"}, {"vit_h_14", 518, 633470440, "1016.717"}};
  for (const Row& r : rows) {
    LoadOptions o;
    o.input_size = Shape{{3, r.image, r.image}};
    const Graph g = load_model(r.model, o);
    EXPECT_EQ(estimate(g).total.params, r.params) << r.model << " at " << r.image;
    const std::string text = count_under(g, Convention::Torchvision).headline_text;
    EXPECT_EQ(text.substr(0, text.find(' ')), r.ops) << r.model << " at " << r.image;
  }
}

TEST(Conventions, EveryConventionHasANameAndParses) {
  for (const auto& c : conventions()) {
    auto p = parse_convention(c.name);
    ASSERT_TRUE(p.has_value()) << c.name;
    EXPECT_EQ(*p, c.id);
    EXPECT_FALSE(c.differs.empty());
  }
  EXPECT_FALSE(parse_convention("nope").has_value());
}

TEST(Conventions, TorchIsTwiceTorchvision) {
  Graph g = zoo("resnet50", 3);
  EXPECT_EQ(total(g, Convention::Torch), 2 * total(g, Convention::Torchvision));
}

}  // namespace
}  // namespace ridge
