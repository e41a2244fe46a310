// Loud when incomplete: a model with a node ridge cannot cost (tests/load/data/incomplete_custom_op.onnx, written
// by tests/load/make_ort_contrib_models.py) heads every human report with the INCOMPLETE line, marks the JSON
// `complete: false` with the node list, and --strict turns it into exit 1 naming the node.
#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace ridge {
namespace {

const std::string kModel = std::string(RIDGE_SOURCE_DIR) + "/tests/load/data/incomplete_custom_op.onnx";
const std::string kLine =
    "INCOMPLETE: 1 node not costed (com.example.Mystery) — totals are lower bounds (--strict makes this an error)";

TEST(Incomplete, FirstLineOfSummaryFlopsAndPredictSaysSo) {
  for (const std::string cmd : {"summary", "flops", "predict -d a100"}) {
    const auto r = test::run_ridge(cmd + " " + kModel);
    ASSERT_EQ(r.exit_code, 0) << cmd << ": " << r.err;
    EXPECT_EQ(r.out.substr(0, r.out.find('\n')), kLine) << cmd;
  }
}

TEST(Incomplete, JsonSaysCompleteFalseWithTheNodesAndStderrSaysItOnce) {
  const auto r = test::run_ridge("summary --format json " + kModel);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"complete\": false"), std::string::npos) << r.out.substr(0, 400);
  EXPECT_NE(r.out.find("\"node\": \"mystery\""), std::string::npos);
  EXPECT_EQ(r.err, "ridge: " + kLine + "\n");
}

TEST(Incomplete, StrictExitsOneNamingTheFirstNode) {
  for (const std::string cmd : {"summary", "flops", "predict -d a100"}) {
    const auto r = test::run_ridge(cmd + " --strict " + kModel);
    EXPECT_EQ(r.exit_code, 1) << cmd;
    EXPECT_NE(r.err.find("--strict: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("node 'mystery' (op com.example.Mystery) cannot be costed"), std::string::npos) << r.err;
  }
  EXPECT_EQ(test::run_ridge("summary --strict resnet18").exit_code, 0);
}

}  // namespace
}  // namespace ridge
