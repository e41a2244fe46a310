// `ridge serve --plot FILE.svg`: memory per GPU, latency against batch and prompt length, prefill/decode ops on the
// roofline, drawn by the report's chart builders. The SVG is parsed for its charts, series and limits.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <cmath>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "ridge/api.hpp"
#include "ridge/chart.hpp"
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
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  const std::string svg = test::slurp(path);
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

// Each latency curve tells the progress callback of every point before it is analysed, then of its end
// (done == total), so `ridge serve --plot` on a large model shows where it is.
TEST(LlmServeCharts, LatencyCurvesReportEachPoint) {
  ServeOptions o;
  o.batch = 4, o.prompt = 256, o.generate = 16;
  report::ServeRequest req{ModelSource{"gpt3-125m"}, "a100-sxm4-80gb", {}, "none", o};
  std::vector<std::string> calls;
  const auto charts = report::serve_charts(req, [&](const std::string& what, size_t done, size_t total,
                                                     const std::string& detail) {
    calls.push_back(fmt::format("{} {}/{} {}", what, done, total, detail));
  });
  ASSERT_EQ(charts.size(), 4u);
  // Batches 1, 2, 4, ... up to 256 (the largest that fits is larger); prompts 128, 256, ... up to 2048 - 16.
  ASSERT_EQ(calls.size(), 10u + 6u) << fmt::format("{}", fmt::join(calls, "\n"));
  EXPECT_EQ(calls[0], "serve --plot: latency vs batch 0/9 batch 1");
  EXPECT_EQ(calls[8], "serve --plot: latency vs batch 8/9 batch 256");
  EXPECT_EQ(calls[9], "serve --plot: latency vs batch 9/9 ");
  EXPECT_EQ(calls[10], "serve --plot: latency vs prompt tokens 0/5 prompt tokens 128");
  EXPECT_EQ(calls[14], "serve --plot: latency vs prompt tokens 4/5 prompt tokens 2032");
  EXPECT_EQ(calls[15], "serve --plot: latency vs prompt tokens 5/5 ");
}

TEST(LlmServeCharts, PlotPathIsCheckedFirst) {
  auto r = test::run_ridge("serve gpt3-125m --device a100-sxm4-80gb --plot chart.txt");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("chart.txt"), std::string::npos) << r.err;
}

// Training memory per GPU under ZeRO 0-3 (for `ridge train --plot`): stacked parts, the layout's stage marked, ZeRO
// sharding the optimizer states (stage 1), gradients (2) and weights (3) over dp.
TEST(LlmServeCharts, TrainMemoryChartShardsWithZero) {
  const LlmConfig* c = find_llm_config("llama-2-7b");
  ASSERT_NE(c, nullptr);
  const Device d = find_device(load_devices(), "a100-sxm4-80gb");
  TrainOptions o;
  o.gpus = 8;
  o.zero = 1;
  o.seq = 2048;
  const chart::Chart ch = report::train_memory_chart(*c, d, o);
  ASSERT_EQ(ch.categories.size(), 4u);
  EXPECT_EQ(ch.categories[1], "ZeRO 1 (this layout)");
  ASSERT_EQ(ch.series.size(), 4u);
  const auto& weights = ch.series[0].points;
  const auto& optimizer = ch.series[2].points;
  EXPECT_EQ(ch.series[2].name, "optimizer states");
  EXPECT_DOUBLE_EQ(optimizer[0].y, 8 * optimizer[1].y);  // 12 Psi over dp 8
  EXPECT_DOUBLE_EQ(weights[2].y, 8 * weights[3].y);      // 2 Psi over dp 8 at stage 3
  ASSERT_EQ(ch.markers.size(), 1u);
  const std::string svg = chart::render_svg(ch);
  for (const char* text : {"ZeRO 0", "ZeRO 3", "gradients", "activations", "a100-sxm4-80gb memory"})
    EXPECT_NE(svg.find(text), std::string::npos) << text;
}

// Where a micro-batch's compute time goes: one stacked bar per op class, largest first, summing to the ops' times.
TEST(LlmServeCharts, TrainTimeChartStacksEachOpClass) {
  const Device d = find_device(load_devices(), "h100-sxm");
  TrainOptions o;
  o.gpus = 8, o.zero = 1, o.seq = 2048, o.recompute = Recompute::Full;
  const TrainResult r = analyze_training(*find_llm_config("llama-2-7b"), d, o);
  const chart::Chart ch = report::train_time_chart(r);
  ASSERT_EQ(ch.series.size(), 3u);
  ASSERT_FALSE(ch.categories.empty());
  EXPECT_EQ(ch.categories[0], "Linear");  // the projections take most of a 7B model's time
  double drawn = 0, previous = INFINITY;
  for (size_t i = 0; i < ch.categories.size(); ++i) {
    double bar = 0;
    for (const auto& s : ch.series) bar += s.points[i].y;
    EXPECT_LE(bar, previous) << ch.categories[i];
    previous = bar;
    drawn += bar;
  }
  double ops = 0;
  for (const TrainOp& op : r.ops) ops += op.time_s();
  EXPECT_NEAR(drawn, ops, 1e-12 * ops);
  EXPECT_GT(ch.series[2].points[0].y, 0.0);  // full recomputation: the projections' forward again
}

// `ridge train --plot` writes that chart for the command's own layout.
TEST(LlmServeCharts, TrainPlotWritesTheMemoryChart) {
  const std::string path = test::temp_dir() + "/train_charts.svg";
  auto r = test::run_ridge("train llama-2-7b --device a100-sxm4-80gb --gpus 8 --zero 2 --plot " + path + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  const std::string svg = test::slurp(path);
  for (const char* text : {"Training memory per GPU: llama-2-7b on a100-sxm4-80gb", "ZeRO 2 (this layout)",
                           "optimizer states", "a100-sxm4-80gb memory", "Compute time per micro-batch and GPU by op class"})
    EXPECT_NE(svg.find(text), std::string::npos) << text;
  std::filesystem::remove(path);
  r = test::run_ridge("train llama-2-7b --device a100-sxm4-80gb --gpus 8 --plot chart.txt");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("chart.txt"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ridge
