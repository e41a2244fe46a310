// The importer's default (ridge's rules first, ONNX's inference only where they fall short) gives the same Graph
// as the full import with ONNX's inference always on, on every ONNX file the tests have: the 44 exported models
// of the validation harness and the fixtures in ../shared, at two batch sizes.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "ridge/cost.hpp"
#include "ridge/onnx_import.hpp"
#include "support/test_support.hpp"

namespace ridge {
namespace {

std::vector<std::string> onnx_files(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
    if (it->path().extension() == ".onnx") files.push_back(it->path().string());
  std::sort(files.begin(), files.end());
  return files;
}

/// Notes that only the full import can make (about ONNX's inference itself).
std::vector<std::string> without_inference_notes(const std::vector<std::string>& notes) {
  std::vector<std::string> kept;
  for (const auto& n : notes)
    if (n.find("ONNX shape inference") == std::string::npos) kept.push_back(n);
  return kept;
}

void expect_same_graph(const std::string& path, int64_t batch) {
  SCOPED_TRACE(path + " at batch " + std::to_string(batch));
  LoadOptions opts;
  opts.batch = batch;
  OnnxImportOptions full;
  full.onnx_inference_for_gaps_only = false;
  Graph a, b;
  try {
    b = import_onnx(path, opts, full);
  } catch (const Error& e) {  // a file the full import refuses must be refused the same way
    EXPECT_THROW(import_onnx(path, opts, OnnxImportOptions{}), Error) << e.what();
    return;
  }
  a = import_onnx(path, opts, OnnxImportOptions{});
  ASSERT_EQ(a.nodes.size(), b.nodes.size());
  ASSERT_EQ(a.values.size(), b.values.size());
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    EXPECT_EQ(a.nodes[i].name, b.nodes[i].name);
    EXPECT_EQ(a.nodes[i].op_type, b.nodes[i].op_type);
    EXPECT_EQ(a.nodes[i].module, b.nodes[i].module) << a.nodes[i].name;
    EXPECT_EQ(a.nodes[i].inputs, b.nodes[i].inputs) << a.nodes[i].name;
  }
  for (size_t v = 0; v < a.values.size(); ++v) {
    EXPECT_EQ(a.values[v].name, b.values[v].name);
    EXPECT_EQ(a.values[v].shape.dims, b.values[v].shape.dims) << a.values[v].name;
    EXPECT_EQ(a.values[v].dtype, b.values[v].dtype) << a.values[v].name;
    EXPECT_EQ(a.values[v].kind, b.values[v].kind) << a.values[v].name;
  }
  EXPECT_EQ(without_inference_notes(a.notes), without_inference_notes(b.notes));
  const ModelCost ca = estimate(a), cb = estimate(b);
  EXPECT_EQ(ca.total.params, cb.total.params);
  EXPECT_EQ(ca.total.macs, cb.total.macs);
  EXPECT_EQ(ca.total.flops, cb.total.flops);
  EXPECT_EQ(ca.total.bytes_read, cb.total.bytes_read);
  EXPECT_EQ(ca.total.bytes_written, cb.total.bytes_written);
  EXPECT_EQ(ca.total.bwd_flops(), cb.total.bwd_flops());
  for (size_t i = 0; i < a.nodes.size() && i < ca.nodes.size() && i < cb.nodes.size(); ++i)
    EXPECT_TRUE(ca.nodes[i].cost == cb.nodes[i].cost && ca.nodes[i].status == cb.nodes[i].status) << a.nodes[i].name;
}

TEST(OnnxEngines, RulesFirstGivesTheFullImportsGraphOnEveryValidationModel) {
  const auto files = onnx_files(std::string(RIDGE_SOURCE_DIR) + "/tests/data/validation");
  ASSERT_GE(files.size(), 40u);
  for (const auto& f : files)
    for (int64_t batch : {1, 3}) expect_same_graph(f, batch);
}

TEST(OnnxEngines, RulesFirstGivesTheFullImportsGraphOnEveryOnnxFixture) {
  RIDGE_REQUIRE_SHARED();
  const auto files = onnx_files(test::fixture("onnx"));
  ASSERT_GE(files.size(), 10u);
  for (const auto& f : files)
    for (int64_t batch : {1, 3}) expect_same_graph(f, batch);
}

}  // namespace
}  // namespace ridge
