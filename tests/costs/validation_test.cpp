// The validation harness's numbers (validation/, docs/counting.md "Validation against the tools"): for every model
// in tests/data/validation/results.json and every tool that ran on it, ridge's convention for that tool on the
// committed weightless ONNX export must reproduce the tool's integer, or the pair is listed in kExpected with the
// reason. An entry of kExpected that now matches fails too, so the table stays true.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "ridge/cost.hpp"
#include "ridge/error.hpp"
#include "ridge/load.hpp"

namespace ridge {
namespace {

const std::string kDir = std::string(RIDGE_SOURCE_DIR) + "/tests/data/validation/";

/// (model, tool) pairs ridge does not reproduce, each with the one-line reason (docs/counting.md has the
/// derivation). "ridge:" marks a fault on ridge's side (to fix); "tool:" a behaviour of the tool itself.
const std::map<std::pair<std::string, std::string>, std::string> kExpected = {
#include "validation_expected.inc"
};

struct Tally {
  int pairs = 0, exact = 0;
};

TEST(Validation, RidgeReproducesEveryToolOrTheDifferenceIsListed) {
  std::ifstream in(kDir + "results.json");
  ASSERT_TRUE(in) << "missing " << kDir << "results.json";
  const nlohmann::json results = nlohmann::json::parse(in);
  std::map<std::string, Tally> per_tool;
  Tally all;
  std::vector<std::string> unexplained, stale, params_differ;
  for (const auto& [model, rec] : results.items()) {
    std::optional<Graph> g;
    std::string load_error;
    try {
      g = load_model(kDir + model + ".ext_emptybin.onnx", LoadOptions{});
    } catch (const Error& e) {
      load_error = e.what();
    }
    if (g && estimate(*g).total.params != rec["params"].get<int64_t>())
      params_differ.push_back(model + ": ridge " + to_string(estimate(*g).total.params) + ", PyTorch " +
                              std::to_string(rec["params"].get<int64_t>()));
    for (const auto& [tool, value] : rec["tools"].items()) {
      auto conv = parse_convention(tool);
      ASSERT_TRUE(conv) << tool;
      const Count want = value.get<int64_t>();
      const std::optional<Count> have = g ? std::optional<Count>(count_under(*g, *conv).total) : std::nullopt;
      const bool ok = have == want;
      const std::string got = have ? to_string(*have) : "load error: " + load_error;
      ++per_tool[tool].pairs, ++all.pairs;
      if (ok) ++per_tool[tool].exact, ++all.exact;
      const bool listed = kExpected.count({model, tool}) > 0;
      if (!ok && !listed) unexplained.push_back(model + " / " + tool + ": tool " + to_string(want) + ", ridge " + got);
      if (ok && listed) stale.push_back(model + " / " + tool + " now matches: remove it from the table");
    }
  }
  for (const auto& [tool, t] : per_tool)
    std::printf("validation %-10s %3d / %3d exact (%.1f %%)\n", tool.c_str(), t.exact, t.pairs,
                100.0 * t.exact / t.pairs);
  std::printf("validation %-10s %3d / %3d exact (%.1f %%)\n", "all", all.exact, all.pairs,
              100.0 * all.exact / std::max(all.pairs, 1));
  for (const auto& p : params_differ) std::printf("validation params differ: %s\n", p.c_str());
  for (const auto& u : unexplained) ADD_FAILURE() << "unexplained difference: " << u;
  for (const auto& s : stale) ADD_FAILURE() << s;
}

// Models that are in the zoo as well as in the harness (exported at a small input): the zoo's hand-built graph must
// give every tool's own integer and PyTorch's parameter count, as the ONNX export does.
TEST(Validation, ZooBuildersReproduceTheToolsOnTheHarnessModels) {
  std::ifstream in(kDir + "results.json");
  ASSERT_TRUE(in) << "missing " << kDir << "results.json";
  const nlohmann::json results = nlohmann::json::parse(in);
  int zoo_models = 0;
  for (const auto& [model, rec] : results.items()) {
    if (!find_zoo_entry(model)) continue;
    ++zoo_models;
    const auto shape = rec["input_shape"].get<std::vector<int64_t>>();
    ASSERT_EQ(shape.size(), 4u) << model;
    LoadOptions o;
    o.batch = shape[0];
    o.input_size = Shape{{shape[1], shape[2], shape[3]}};
    const Graph g = load_model(model, o);
    EXPECT_EQ(estimate(g).total.params, rec["params"].get<int64_t>()) << model;
    for (const auto& [tool, value] : rec["tools"].items())
      EXPECT_EQ(to_string(count_under(g, *parse_convention(tool)).total), to_string(value.get<int64_t>()))
          << model << " / " << tool;
  }
  EXPECT_GE(zoo_models, 1);  // vit_b_16 at 64 x 64
}

TEST(Validation, HandBuiltOpset18And23DecodersAreCostedCompletely) {
  // validation/export.py's decoder block (seq 16, d 64, 4 heads, MLP 128, vocab 100) at opset 18 (LayerNorm and
  // MatMul attention) and 23 (RMSNormalization and the Attention op): every node costed, the same MACs:
  // q, k, v, o 4*16*64*64 + scores and context 2*16*16*64 + MLP 2*16*64*128 + head 16*64*100.
  const Count macs = 4 * 16 * 64 * 64 + 2 * 16 * 16 * 64 + 2 * 16 * 64 * 128 + 16 * 64 * 100;
  for (const char* name : {"decoder_opset18", "decoder_opset23"}) {
    const ModelCost c = estimate(load_model(kDir + name + ".ext_emptybin.onnx", LoadOptions{}));
    EXPECT_TRUE(c.complete()) << name;
    EXPECT_EQ(to_string(c.total.macs), to_string(macs)) << name;
  }
}

}  // namespace
}  // namespace ridge
