// `ridge serve --plot FILE.svg`: memory per GPU, latency against batch and prompt length, prefill/decode ops on the
// roofline, drawn by the report's chart builders. The SVG is parsed for its charts, series and limits.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/test_support.hpp"

namespace ridge {
namespace {

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

TEST(LlmServeCharts, PlotWritesTheFourCharts) {
  const std::string path = test::temp_dir() + "/serve_charts.svg";
  auto r = test::run_ridge("serve gpt3-125m --device a100-sxm4-80gb --batch 4 --prompt 256 --generate 16 --plot " + path +
                           " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << path;
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string svg = ss.str();
  EXPECT_EQ(svg.rfind("<svg", 0) == 0 || svg.rfind("<?xml", 0) == 0, true);
  for (const char* title : {"Memory per GPU: gpt3-125m on a100-sxm4-80gb", "Latency vs batch: gpt3-125m",
                            "Latency vs prompt: gpt3-125m, batch 4", "Prefill and decode ops: gpt3-125m"})
    EXPECT_NE(svg.find(title), std::string::npos) << title;
  // Stacked memory bars at batch 1, 4 and the largest batch, against the device's memory.
  for (const char* text : {"weights", "KV cache", "batch 1", "batch 4", "(largest that fits)", "a100-sxm4-80gb memory",
                           "time to first token", "time per output token", "prefill ops", "decode ops"})
    EXPECT_NE(svg.find(text), std::string::npos) << text;
  EXPECT_EQ(count_of(svg, "<svg"), 1u);  // the four charts side by side in one document
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  std::filesystem::remove(path);
}

TEST(LlmServeCharts, PlotPathIsCheckedFirst) {
  auto r = test::run_ridge("serve gpt3-125m --device a100-sxm4-80gb --plot chart.txt");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("chart.txt"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ridge
