// Equivalence of ONNX fixtures with their zoo twins at batch 1 and 3: same MACs and FLOPs under ridge's
// convention and under every other convention, same parameters wherever the export did not fold BatchNorm,
// and where it did, exactly one parameter fewer per BatchNorm channel, said in a note.
#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "ridge/cost.hpp"
#include "ridge/load.hpp"
#include "support/test_support.hpp"

namespace ridge {
namespace {

struct Twin {
  const char* onnx;
  const char* zoo;
  bool bn_folded;
  std::optional<int64_t> seq_len;  ///< the zoo's default sequence length for language models
};

const Twin kTwins[] = {
    {"mnist_cnn", "mnist", false, std::nullopt},
    {"mnist_cnn_c128", "mnist-wide", false, std::nullopt},
    {"mnist_old", "mnist-slides", false, std::nullopt},
    {"alexnet", "alexnet", false, std::nullopt},
    {"vgg16", "vgg16", false, std::nullopt},
    {"resnet18", "resnet18", true, std::nullopt},
    {"resnet50", "resnet50", true, std::nullopt},
    {"mobilenet_v2", "mobilenet_v2", true, std::nullopt},
    {"transformer_lm", "transformer-lm", false, 35},
    {"distilbert.op13", "distilbert", false, 128},
};

/// Per-node-name sums of one cost field where two graphs differ (op types when names do not match up).
std::string breakdown(const Graph& g, const ModelCost& c, Count Cost::*field) {
  std::map<std::string, Count> by_op;
  for (size_t i = 0; i < g.nodes.size(); ++i) by_op[g.nodes[i].op_type] += c.nodes[i].cost.*field;
  std::ostringstream os;
  for (const auto& [op, v] : by_op)
    if (v != 0) os << op << "=" << to_string(v) << " ";
  return os.str();
}

/// Channels of every BatchNorm of a graph: the parameters an eval-mode export loses by folding them.
Count batchnorm_channels(const Graph& g) {
  Count channels = 0;
  for (const Node& n : g.nodes)
    if (n.op == OpKind::BatchNormalization) channels += g.value(n.inputs.at(1)).shape.elements();
  return channels;
}

class OnnxZooTwin : public ::testing::TestWithParam<std::tuple<Twin, int64_t>> {
 protected:
  void SetUp() override {
    if (!test::have_shared()) GTEST_SKIP() << "../shared/fixtures not found beside the clone; fixture test skipped";
    LoadOptions o;
    o.batch = std::get<1>(GetParam());
    o.seq_len = twin().seq_len;
    onnx_ = import_onnx(test::fixture(std::string("onnx/") + twin().onnx + ".ext_emptybin.onnx"), o);
    zoo_ = build_zoo_model(twin().zoo, o);
  }
  const Twin& twin() const { return std::get<0>(GetParam()); }
  Graph onnx_, zoo_;
};

TEST_P(OnnxZooTwin, SameMacsAndFlops) {
  const ModelCost a = estimate(onnx_), b = estimate(zoo_);
  EXPECT_TRUE(a.complete());
  EXPECT_EQ(to_string(a.total.macs), to_string(b.total.macs))
      << "onnx: " << breakdown(onnx_, a, &Cost::macs) << "\nzoo:  " << breakdown(zoo_, b, &Cost::macs);
  EXPECT_EQ(to_string(a.total.flops), to_string(b.total.flops))
      << "onnx: " << breakdown(onnx_, a, &Cost::flops) << "\nzoo:  " << breakdown(zoo_, b, &Cost::flops);
}

TEST_P(OnnxZooTwin, SameHeadlineUnderEveryConvention) {
  for (const auto& info : conventions()) {
    const ConventionCount a = count_under(onnx_, info.id), b = count_under(zoo_, info.id);
    EXPECT_EQ(to_string(a.total), to_string(b.total)) << info.name;
  }
}

TEST_P(OnnxZooTwin, SameParamsUnlessBatchNormWasFolded) {
  const Count a = estimate(onnx_).total.params, b = estimate(zoo_).total.params;
  if (!twin().bn_folded) {
    EXPECT_EQ(to_string(a), to_string(b));
    return;
  }
  const Count lost = batchnorm_channels(zoo_);
  if (std::string(twin().onnx) == "resnet18") {
    EXPECT_EQ(to_string(lost), "4800");  // fixtures README
  }
  EXPECT_EQ(to_string(b - a), to_string(lost));
  int folded = 0, batchnorms = 0;
  for (const Node& n : onnx_.nodes) folded += n.attrs.i("folded_batchnorm", 0) != 0;
  for (const Node& n : zoo_.nodes) batchnorms += n.op == OpKind::BatchNormalization;
  EXPECT_EQ(folded, batchnorms);
  bool noted = false;
  for (const auto& note : onnx_.notes)
    noted |= note.find(with_commas(lost) + " fewer parameters") != std::string::npos &&
             note.find("conv without bias + BatchNorm") != std::string::npos;
  EXPECT_TRUE(noted) << "no note says the file has " << with_commas(lost) << " fewer parameters";
}

TEST_P(OnnxZooTwin, OnlyFoldedExportsMarkConvs) {
  for (const Node& n : onnx_.nodes)
    if (n.attrs.i("folded_batchnorm", 0) != 0) {
      EXPECT_TRUE(twin().bn_folded) << n.name;
      EXPECT_EQ(n.op, OpKind::Conv) << n.name;
    }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, OnnxZooTwin,
                         ::testing::Combine(::testing::ValuesIn(kTwins), ::testing::Values(int64_t{1}, int64_t{3})),
                         [](const auto& info) {
                           std::string s = std::get<0>(info.param).onnx;
                           for (char& c : s)
                             if (c == '.') c = '_';
                           return s + "_batch" + std::to_string(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace ridge
