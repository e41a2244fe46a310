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

// Reports of several models or batches (compare, sweep) name the incomplete model and its ops on the first line
// and in the JSON, as the one-model reports do.
TEST(Incomplete, CompareAndSweepNameTheIncompleteModel) {
  // compare names the loaded model, sweep the model as given (here its path).
  const std::string line_end = " (com.example.Mystery) — their totals are lower bounds (--strict makes this an error)";
  for (const std::string& cmd : {"compare resnet18 " + kModel + " -d a100", "sweep " + kModel + " -b 1 -d a100"}) {
    const auto r = test::run_ridge(cmd);
    ASSERT_EQ(r.exit_code, 0) << cmd << ": " << r.err;
    const std::string first = r.out.substr(0, r.out.find('\n'));
    EXPECT_EQ(first.rfind("INCOMPLETE: ops not costed in ", 0), 0u) << first;
    EXPECT_TRUE(first.ends_with(line_end)) << first;
    EXPECT_NE(first.find("incomplete_custom_op"), std::string::npos) << first;
    const auto j = test::run_ridge(cmd + " --format json");
    ASSERT_EQ(j.exit_code, 0) << cmd << ": " << j.err;
    EXPECT_NE(j.out.find("\"complete\": false"), std::string::npos) << cmd;
    EXPECT_NE(j.out.find("com.example.Mystery"), std::string::npos) << cmd;
  }
  const auto whole = test::run_ridge("compare resnet18 resnet50 --format json");
  EXPECT_NE(whole.out.find("\"complete\": true"), std::string::npos);
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
