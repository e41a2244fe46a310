// The report's first screen from plain numbers: picking the slowest layers, time by op group, the memory bar, the
// headline table, grouped layer tables and side-by-side rooflines on one y range.
#include "ridge/headline.hpp"

#include <cmath>

#include <fmt/format.h>

#include "report/xml_check.hpp"
#include "ridge/chart.hpp"
#include "support/test_support.hpp"

namespace ridge::headline {
namespace {

std::vector<LayerTime> layers() {
  return {{"conv1", "Conv", 3e-3, "compute"},   {"bn1", "BatchNorm", 1e-3, "memory"},
          {"layer1.0.relu", "Unary", 2e-3, "memory"}, {"layer1.0.conv", "Conv", 3e-3, "compute"},
          {"fc", "Linear", NAN, ""},              {"flatten", "View", 0.5e-3, "overhead"}};
}

TEST(Headline, OpGroupsOfOpClasses) {
  EXPECT_EQ(op_group("Conv"), "conv");
  EXPECT_EQ(op_group("DepthwiseConv"), "conv");
  EXPECT_EQ(op_group("Linear"), "matmul");
  EXPECT_EQ(op_group("MatMul"), "matmul");
  EXPECT_EQ(op_group("BatchNorm"), "norm");
  EXPECT_EQ(op_group("Unary"), "elementwise");
  EXPECT_EQ(op_group("Move"), "data movement");
  EXPECT_EQ(op_group("Reorder"), "data movement");
  EXPECT_EQ(op_group("NonMaxSuppression"), "other");
  EXPECT_EQ(op_groups().back(), "other");
}

TEST(Headline, TimeByGroupSumsEachGroupAndSkipsUnknownTimes) {
  const auto by = time_by_group(layers());
  ASSERT_EQ(by.size(), op_groups().size());
  EXPECT_DOUBLE_EQ(by[0], 6e-3);    // conv
  EXPECT_DOUBLE_EQ(by[1], 0);       // matmul: fc has no time
  EXPECT_DOUBLE_EQ(by[3], 1e-3);    // norm
  EXPECT_DOUBLE_EQ(by[4], 2e-3);    // elementwise
  EXPECT_DOUBLE_EQ(by[6], 0.5e-3);  // data movement
}

TEST(Headline, TopLayersAreTheSlowestInLayerOrderOnTies) {
  EXPECT_EQ(top_layers(layers(), 3), (std::vector<size_t>{0, 3, 2}));
  EXPECT_EQ(top_layers(layers(), 10).size(), 5u);  // the NaN layer is never picked
  EXPECT_TRUE(top_layers({}, 3).empty());
}

TEST(Headline, DominantBoundIsWhereMostTimeGoes) {
  EXPECT_EQ(dominant_bound(layers()), "compute");  // 6 ms compute, 3 ms memory, 0.5 ms overhead
  EXPECT_EQ(dominant_bound({{"a", "Unary", 1, ""}}), "");
}

TEST(Headline, ModulePathsAndScenario) {
  EXPECT_EQ(module_of("layer1.0.conv1", 1), "layer1");
  EXPECT_EQ(module_of("layer1.0.conv1", 2), "layer1.0");
  EXPECT_EQ(module_of("layer1.0.conv1", 5), "layer1.0.conv1");
  EXPECT_EQ(module_of("conv1", 1), "conv1");
  EXPECT_EQ(module_of("layer1.0.conv1", 0), "layer1.0.conv1");
  EXPECT_EQ(scenario("resnet50", 8, "amp-bf16", true), "resnet50, batch 8, amp-bf16, training");
  EXPECT_EQ(scenario("bert", 1, "fp32", false), "bert, batch 1, fp32, inference");
}

TEST(Headline, RepeatKeysStarExpertIndicesButNotLayers) {
  std::vector<std::string> names;
  for (int layer = 0; layer < 40; ++layer) {
    names.push_back(fmt::format("model.layers.{}.mlp.gate", layer));
    for (int e = 0; e < 32; ++e) names.push_back(fmt::format("model.layers.{}.mlp.experts.{}.down_proj", layer, e));
    for (int b = 0; b < 31; ++b) names.push_back(fmt::format("model.layers.{}.blocks.{}.conv", layer, b));
  }
  names.push_back("features.40.conv");  // a first index never groups, however many siblings
  const auto keys = repeat_keys(names);
  ASSERT_EQ(keys.size(), names.size());
  EXPECT_EQ(keys[0], "model.layers.0.mlp.gate");
  EXPECT_EQ(keys[1], "model.layers.0.mlp.experts.*.down_proj");
  EXPECT_EQ(keys[32], "model.layers.0.mlp.experts.*.down_proj");
  EXPECT_EQ(keys[33], "model.layers.0.blocks.0.conv");  // 31 instances: below the default 32
  EXPECT_EQ(keys[64 + 1], "model.layers.1.mlp.experts.*.down_proj");
  EXPECT_EQ(keys.back(), "features.40.conv");
  EXPECT_EQ(repeat_keys(names, 31)[33], "model.layers.0.blocks.*.conv");
  EXPECT_EQ(repeat_keys({"a.0.b.1.c", "a.0.b.2.c"}, 2)[1], "a.0.b.*.c");
  EXPECT_EQ(repeat_keys({"", "x", "1", "a.1", "a..", "./."}, 1), (std::vector<std::string>{"", "x", "1", "a.1", "a..", "./."}));
  // An ONNX export's node names: '/' separates too, and the separators stay.
  EXPECT_EQ(repeat_keys({"/model/layers.0/mlp/experts.7/down_proj/MatMul", "/model/layers.0/mlp/experts.8/down_proj/MatMul"}, 2)[0],
            "/model/layers.0/mlp/experts.*/down_proj/MatMul");
}

TEST(Headline, CollapseRepeatsSumsExactlyAndKeepsTotalsLast) {
  using report::Cell;
  using report::Unit;
  report::Table t{"layers", "", {{"name", "name"}, {"op", "op"}, {"flops", "FLOPs", Unit::Flop},
                                 {"time_s", "time", Unit::Second}, {"shape", "shape"}, {"intensity", "AI", Unit::FlopPerByte}}, {}, {}};
  const Count big = Count{1} << 70;  // beyond 64 bits once summed
  t.add_row({Cell::text("m.layers.0.router"), Cell::text("Gemm"), Cell::count(5, Unit::Flop), Cell::real(1e-6, Unit::Second),
             Cell::text("4x8"), Cell::real(2.0, Unit::FlopPerByte)});
  for (int e = 0; e < 4; ++e)
    t.add_row({Cell::text(fmt::format("m.layers.0.experts.{}.up", e)), Cell::text("Gemm"), Cell::count(big, Unit::Flop),
               Cell::real(0.5, Unit::Second), Cell::text(e < 3 ? "3x8" : "2x8"), Cell::real(1.0 + e, Unit::FlopPerByte)});
  t.total_rows.push_back(static_cast<int>(t.rows.size()));
  t.add_row({Cell::text("total"), Cell::empty(), Cell::count(4 * big + 5, Unit::Flop), Cell::real(2.000001, Unit::Second),
             Cell::empty(), Cell::empty(Unit::FlopPerByte)});
  std::vector<int> row_of;
  const report::Table c = collapse_repeats(t, 0, &row_of, 4);
  ASSERT_EQ(c.rows.size(), 3u);
  EXPECT_EQ(std::get<std::string>(c.rows[0][0].value), "m.layers.0.router");
  EXPECT_EQ(std::get<std::string>(c.rows[1][0].value), "m.layers.0.experts.*.up (×4)");
  EXPECT_EQ(std::get<std::string>(c.rows[1][1].value), "Gemm");        // every member agrees
  EXPECT_TRUE(std::get<Count>(c.rows[1][2].value) == 4 * big);         // exact
  EXPECT_DOUBLE_EQ(std::get<double>(c.rows[1][3].value), 2.0);         // seconds add
  EXPECT_EQ(std::get<std::string>(c.rows[1][4].value), "varies");      // shapes differ
  EXPECT_TRUE(std::holds_alternative<std::monostate>(c.rows[1][5].value));  // an intensity does not add
  EXPECT_EQ(c.total_rows, (std::vector<int>{2}));
  EXPECT_EQ(std::get<std::string>(c.rows[2][0].value), "total");
  EXPECT_EQ(row_of, (std::vector<int>{0, 1, 1, 1, 1, 2}));
  // Below the threshold nothing changes.
  const report::Table same = collapse_repeats(t, 0, nullptr, 5);
  EXPECT_EQ(same.rows.size(), t.rows.size());
  EXPECT_EQ(same.total_rows, t.total_rows);
}

TEST(Headline, LlmOpClassesFromNodeNames) {
  EXPECT_EQ(llm_op_class("model.layers.0.self_attn.q_proj"), "Linear");
  EXPECT_EQ(llm_op_class("lm_head"), "Linear");
  EXPECT_EQ(llm_op_class("model.layers.3.self_attn.matmul_1"), "Attention");
  EXPECT_EQ(llm_op_class("model.layers.3.self_attn.softmax"), "Softmax");
  EXPECT_EQ(llm_op_class("model.embed_tokens"), "Gather");
  EXPECT_EQ(llm_op_class("model.layers.0.input_layernorm.rsqrt"), "LayerNorm");
  EXPECT_EQ(llm_op_class("allreduce (2 per layer)"), "Communication");
  EXPECT_EQ(op_group(llm_op_class("model.layers.3.self_attn.matmul")), "attention");
  // With the op's class: MoE experts and routers are matmuls whatever their names (w1, w3, gate).
  EXPECT_EQ(op_group(llm_op_class("model.layers.0.block_sparse_moe.experts.0.w1", "Linear")), "matmul");
  EXPECT_EQ(op_group(llm_op_class("model.layers.0.block_sparse_moe.gate", "Linear")), "matmul");
  EXPECT_EQ(op_group(llm_op_class("model.layers.0.self_attn.matmul", "attention")), "attention");
  EXPECT_EQ(op_group(llm_op_class("model.layers.0.input_layernorm.pow", "Binary")), "norm");
}

TEST(Headline, RunsTableKeysAndServingColumns) {
  headline::Run a{"a100", false, "upper bound (uncalibrated)", 4e-3, 1000, "", layers()};
  headline::Run cpu{"this CPU", true, "measured", 2.0, 2, "", {}};
  report::Table t = runs_table({a, cpu}, "samples/s");
  EXPECT_EQ(t.key, "headline");
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(std::get<double>(t.rows[0][t.column("time_s")].value), 4e-3);
  EXPECT_EQ(std::get<std::string>(t.rows[0][t.column("bound")].value), "compute");
  EXPECT_TRUE(t.rows[1][t.column("bound")].is_empty());
  EXPECT_EQ(std::get<bool>(t.rows[1][t.column("measured")].value), true);
  EXPECT_EQ(t.column("ttft_s"), -1);
  headline::Run serve{"h100", false, "upper bound (uncalibrated)", 1.5, 1400, "memory", {}};
  serve.ttft_s = 0.2, serve.per_token_s = 0.005;
  report::Table s = runs_table({serve}, "tokens/s");
  EXPECT_EQ(std::get<double>(s.rows[0][s.column("ttft_s")].value), 0.2);
  EXPECT_EQ(std::get<double>(s.rows[0][s.column("per_token_s")].value), 0.005);
}

TEST(Headline, TopLayersTableHasEveryRunsTime) {
  headline::Run a{"a100", false, "", 0, 0, "", layers()};
  headline::Run b{"h100", false, "", 0, 0, "", {{"conv1", "Conv", 1e-3, ""}}};
  report::Table t = top_layers_table({a, b}, 2);
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(std::get<std::string>(t.rows[0][0].value), "conv1");
  EXPECT_NEAR(std::get<double>(t.rows[0][t.column("percent")].value), 100 * 3.0 / 9.5, 1e-9);
  EXPECT_EQ(std::get<double>(t.rows[0][t.column("time_s.h100")].value), 1e-3);
  EXPECT_TRUE(t.rows[1][t.column("time_s.h100")].is_empty());  // layer1.0.conv not in run b
}

TEST(Headline, OpGroupChartStacksToOneHundredPercent) {
  headline::Run a{"a100", false, "", 0, 0, "", layers()};
  chart::Chart c = op_group_chart("Time by op group: x", {a});
  EXPECT_TRUE(c.stacked);
  ASSERT_EQ(c.categories.size(), 1u);
  double sum = 0;
  for (const auto& s : c.series) sum += s.points.at(0).y;
  EXPECT_NEAR(sum, 100, 1e-9);
  EXPECT_EQ(c.series.size(), 4u);  // conv, norm, elementwise, data movement: groups without time are left out
  auto info = test::check_xml(chart::render_svg(c));
  ASSERT_TRUE(info.ok) << info.error;
  EXPECT_EQ(info.classes["bar"], 4);
}

TEST(Headline, MemoryChartUnitsAndLimits) {
  MemoryParts m;
  m.weights = Count(2) << 30;
  m.kv_cache = Count(14) << 30;
  EXPECT_EQ(m.total(), Count(16) << 30);
  chart::Chart c = memory_chart("Memory: x", m, {{"a100", Count(40) << 30}, {"b200", Count(180) << 30}});
  EXPECT_EQ(c.x.unit, "GiB");
  ASSERT_EQ(c.series.size(), 2u);  // parts that are zero are not drawn
  EXPECT_DOUBLE_EQ(c.series[1].points[0].y, 14);
  ASSERT_EQ(c.markers.size(), 1u);  // 40 GiB is drawn as a line; 180 GiB would squash the bar: a note
  EXPECT_DOUBLE_EQ(c.markers[0].x, 40);
  ASSERT_EQ(c.notes.size(), 1u);
  EXPECT_NE(c.notes[0].find("b200"), std::string::npos);
  auto info = test::check_xml(chart::render_svg(c));
  ASSERT_TRUE(info.ok) << info.error;
  EXPECT_EQ(info.classes["limit"], 1);
  MemoryParts small;
  small.weights = Count(100) << 20;
  EXPECT_EQ(memory_chart("m", small, {}).x.unit, "MiB");
  report::Fields f = memory_fields(m);
  EXPECT_EQ(std::get<Count>(f.items.back().second.value), Count(16) << 30);
}

TEST(Headline, SideBySideRooflinesShareOneYRange) {
  chart::RoofDevice fast{"h100", {{"FP16", 990e12}, {"BF16", 990e12}}, {{"DRAM", 3.35e12}}};
  chart::RoofDevice slow{"cpu", {{"FP32", 2e12}}, {{"DRAM", 50e9}}};
  std::vector<chart::Chart> charts = {chart::roofline_chart("h100", {fast}, {{"p", "a", 10, 1e13}}),
                                      chart::roofline_chart("cpu", {slow}, {{"m", "b", 1, 1e9, "", -1, true}})};
  EXPECT_EQ(charts[0].ceilings.size(), 2u);  // FP16 and BF16 share one line
  EXPECT_NE(charts[0].ceilings[0].label.find("FP16/BF16"), std::string::npos);
  EXPECT_TRUE(charts[0].series[0].hollow);
  EXPECT_FALSE(charts[1].series[0].hollow);
  chart::share_y_range(charts);
  EXPECT_EQ(charts[0].y.min, charts[1].y.min);
  EXPECT_EQ(charts[0].y.max, charts[1].y.max);
  EXPECT_LE(*charts[0].y.min, 1e9);
  EXPECT_GE(*charts[0].y.max, 990e12);
}

TEST(Headline, LayerTablesGroupIntoCollapsibleModules) {
  report::Table t{"layers", "Layers", {{"name", "layer"}, {"module", "module"}, {"flops", "FLOPs", report::Unit::Flop}}, {}, {}};
  t.add_row({report::Cell::text("conv1"), report::Cell::text("conv1"), report::Cell::count(7, report::Unit::Flop)});
  t.add_row({report::Cell::text("layer1.0.a"), report::Cell::text("layer1"), report::Cell::count(5, report::Unit::Flop)});
  t.add_row({report::Cell::text("layer1.0.b"), report::Cell::text("layer1"), report::Cell::count(6, report::Unit::Flop)});
  chart::ReportData data;
  chart::ReportSection s{"layers", "Layers", {}, {t}, {}};
  s.group_by = "module";
  s.group_totals = {"flops"};
  data.sections.push_back(s);
  const std::string html = chart::render_html(data);
  EXPECT_NE(html.find("<details class=\"module\" data-module=\"conv1\">"), std::string::npos);
  EXPECT_NE(html.find("<details class=\"module\" data-module=\"layer1\">"), std::string::npos);
  EXPECT_NE(html.find("2 layers"), std::string::npos);
  EXPECT_NE(html.find("data-k=\"flops\" data-v=\"11\""), std::string::npos);  // exact sum of the module's FLOPs
  EXPECT_NE(html.find("<tr data-row=\"2\">"), std::string::npos);             // rows keep their table index
}

}  // namespace
}  // namespace ridge::headline

namespace ridge::headline {
namespace {

TEST(Headline, CompareTableSideBySide) {
  Variant a{"resnet18", 1, "fp32", 11'689'512, 3'642'000'000, 53'000'000, {1e-3, NAN}, {1000, NAN}};
  Variant b{"resnet50", 1, "fp32", 25'557'032, 8'218'000'000, 112'000'000, {2e-3, 1e-3}, {500, 1000}};
  report::Table t = compare_table({a, b}, {"a100", "h100"});
  EXPECT_EQ(t.key, "compare");
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(std::get<Count>(t.rows[1][t.column("params")].value), Count(25'557'032));
  EXPECT_NEAR(std::get<double>(t.rows[1][t.column("flops_vs_first")].value), 8218.0 / 3642.0, 1e-12);
  EXPECT_EQ(std::get<double>(t.rows[1][t.column("time_s.h100")].value), 1e-3);
  EXPECT_TRUE(t.rows[0][t.column("time_s.h100")].is_empty());  // not predicted: empty, never 0
  EXPECT_EQ(t.column("samples_per_s.a100"), 8);
}

}  // namespace
}  // namespace ridge::headline
