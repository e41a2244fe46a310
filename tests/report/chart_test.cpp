// Charts: SVG well-formed, the expected number of points, bars, ceilings and axis labels; files by extension.
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "report/xml_check.hpp"
#include "ridge/chart.hpp"
#include "ridge/error.hpp"
#include "support/test_support.hpp"

namespace ridge::chart {
namespace {

using test::check_xml;
using test::XmlInfo;

XmlInfo parse(const std::string& svg) {
  XmlInfo info = check_xml(svg);
  EXPECT_TRUE(info.ok) << info.error;
  EXPECT_EQ(info.root, "svg");
  return info;
}

bool contains(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

std::vector<RoofDevice> two_devices() {
  return {{"gpu-a", {{"FP32", 19.5e12}, {"FP16", 312e12}}, {{"DRAM", 1.555e12}, {"L2", 4.8e12}}},
          {"gpu-b", {{"FP32", 15.7e12}}, {{"DRAM", 0.9e12}}}};
}

TEST(TickLabel, UsesSiPrefixes) {
  EXPECT_EQ(tick_label(0), "0");
  EXPECT_EQ(tick_label(1), "1");
  EXPECT_EQ(tick_label(1000), "1k");
  EXPECT_EQ(tick_label(2500), "2.5k");
  EXPECT_EQ(tick_label(1e7), "10M");
  EXPECT_EQ(tick_label(1e9), "1G");
  EXPECT_EQ(tick_label(312e12), "312T");
  EXPECT_EQ(tick_label(0.001), "0.001");
  EXPECT_EQ(tick_label(0.1), "0.1");
  EXPECT_EQ(tick_label(0.25), "0.25");
  EXPECT_EQ(tick_label(1e-6), "1\u00b5");
  EXPECT_EQ(tick_label(-2000), "-2k");
}

TEST(Palette, IsOkabeIto) {
  ASSERT_EQ(palette().size(), 8u);
  EXPECT_EQ(palette()[0], "#0072B2");
  EXPECT_EQ(palette()[1], "#D55E00");
}

TEST(Roofline, HasCeilingsRidgePointsAndEveryPoint) {
  std::vector<RoofPoint> points;
  for (int i = 0; i < 40; ++i)
    points.push_back({i % 2 ? "measured" : "estimated", fmt::format("layer{}", i), std::pow(10.0, -0.5 + i * 0.08), 1e11 * (1 + i)});
  Chart c = roofline_chart("Roofline", two_devices(), points, 5);
  XmlInfo info = parse(render_svg(c));
  EXPECT_EQ(info.classes["pt"], 40);
  EXPECT_EQ(info.classes["ceiling"], 6);  // 3 compute + 3 memory ceilings
  EXPECT_EQ(info.classes["marker"], 2);   // one ridge point per device
  EXPECT_LE(info.classes["pt-label"], 10);
  EXPECT_GE(info.classes["pt-label"], 1);
  const auto& titles = info.text_by_class["axis-title"];
  EXPECT_TRUE(contains(titles, "Arithmetic intensity (FLOP/B)"));
  EXPECT_TRUE(contains(titles, "Performance (FLOP/s)"));
  const auto& ticks = info.text_by_class["tick"];
  EXPECT_TRUE(contains(ticks, "1T"));
  EXPECT_TRUE(contains(ticks, "100G"));
  EXPECT_TRUE(contains(ticks, "10"));
  ASSERT_EQ(c.markers.size(), 2u);
  EXPECT_NEAR(c.markers[0].x, 19.5e12 / 1.555e12, 1e-9);
  // Labels are drawn over the roofs with a white outline under their glyphs, so a crossing roof stays legible.
  const std::string svg = render_svg(c);
  const size_t label = svg.find("FP32 19.5TFLOP/s</text>");
  ASSERT_NE(label, std::string::npos) << svg;
  const size_t open = svg.rfind("<text", label);
  ASSERT_NE(open, std::string::npos);
  EXPECT_NE(svg.substr(open, label - open).find("paint-order=\"stroke\""), std::string::npos);
}

/// x and y of the <text> element whose content starts with `label`.
std::pair<double, double> text_anchor(const std::string& svg, const std::string& label) {
  const size_t at = svg.find(">" + label);
  if (at == std::string::npos) return {NAN, NAN};
  const size_t open = svg.rfind("<text", at);
  const size_t x = svg.find(" x=\"", open), y = svg.find(" y=\"", open);
  return {std::stod(svg.substr(x + 4)), std::stod(svg.substr(y + 4))};
}

TEST(Roofline, LabelsOfNearlyEqualMemoryRoofsDoNotShareAStretchOfTheDiagonal) {
  // A device's data-sheet DRAM and its measured DRAM run almost on top of each other (h200: 4.8 and 4.28 TB/s).
  const std::string svg =
      render_svg(roofline_chart("r", {{"gpu", {{"FP32", 67e12}}, {{"DRAM", 4.8e12}, {"DRAM measured", 4.28e12}}}}, {}));
  const auto [x1, y1] = text_anchor(svg, "DRAM 4.8");
  const auto [x2, y2] = text_anchor(svg, "DRAM measured");
  ASSERT_TRUE(std::isfinite(x1) && std::isfinite(x2)) << svg;
  EXPECT_GT(std::hypot(x2 - x1, y2 - y1), 100.0);  // "DRAM measured 4.28TB/s" is about 120 px long
}

TEST(Roofline, PointsALogAxisCannotShowAreCountedInANote) {
  Chart c = roofline_chart("r", two_devices(), {{"s", "ok", 10, 1e12}, {"s", "zero", 0, 1e12}, {"s", "nan", 5, NAN}});
  std::string svg = render_svg(c);
  XmlInfo info = parse(svg);
  EXPECT_EQ(info.classes["pt"], 1);
  ASSERT_EQ(info.classes["note"], 1);
  EXPECT_NE(info.text_by_class["note"][0].find("2 points"), std::string::npos);
}

TEST(Sweep, EstimatedAndMeasuredAreSeparateSeriesWithBatchTicks) {
  std::vector<SweepSeries> s = {{"FLOPs (estimated)", {}, false}, {"FLOPs (measured)", {}, true}};
  for (int b = 1; b <= 256; b *= 2) {
    s[0].xy.push_back({double(b), 4e9 * b});
    s[1].xy.push_back({double(b), 4.4e9 * b});
  }
  Chart c = sweep_chart("sweep", {"Batch size"}, {"FLOPs", "FLOP"}, s);
  EXPECT_EQ(c.x.scale, Scale::Log);
  std::string svg = render_svg(c);
  XmlInfo info = parse(svg);
  EXPECT_EQ(info.classes["pt"], 18);
  EXPECT_EQ(info.classes["series-line"], 2);
  const auto& ticks = info.text_by_class["tick"];
  for (const char* t : {"1", "2", "4", "8", "16", "32", "64", "128", "256"}) EXPECT_TRUE(contains(ticks, t)) << t;
  EXPECT_NE(svg.find("FLOPs (estimated)"), std::string::npos);
  EXPECT_NE(svg.find("stroke-dasharray"), std::string::npos);
}

TEST(Sweep, CrowdedBatchTicksLeaveLabelsOutRatherThanOverlap) {
  // `sweep -b 1:257:32` on a log axis: 161, 193, 225 and 257 fall within a label's width of each other.
  SweepSeries s{"FLOPs", {}, false};
  for (int b = 1; b <= 257; b += 32) s.xy.push_back({double(b), 4e9 * b});
  const Chart c = sweep_chart("sweep", {"Batch size"}, {"FLOPs", "FLOP"}, {s});
  ASSERT_EQ(c.x.scale, Scale::Log);
  const auto& ticks = parse(render_svg(c)).text_by_class["tick"];
  for (const char* t : {"1", "33", "65", "257"}) EXPECT_TRUE(contains(ticks, t)) << t;  // the last is always kept
  int crowded = 0;
  for (const char* t : {"161", "193", "225"}) crowded += contains(ticks, t);
  EXPECT_LT(crowded, 3);
}

TEST(Sweep, LinearAxisWhenTheRangeIsNarrow) {
  const double mib = 1048576;
  Chart c = sweep_chart("s", {"Batch size"}, {"Memory", "B"}, {{"memory", {{1, mib}, {2, 2 * mib}, {3, 3 * mib}}, false}});
  EXPECT_EQ(c.x.scale, Scale::Linear);
  XmlInfo info = parse(render_svg(c));
  // A byte axis is drawn in the binary unit of its largest value, as the tables print memory.
  EXPECT_TRUE(contains(info.text_by_class["tick"], "3"));
  EXPECT_TRUE(contains(info.text_by_class["axis-title"], "Memory (MiB)"));
}

TEST(Bars, AStackedByteAxisReadsInBinaryUnitsWithRoomPastItsLimit) {
  Chart c;
  c.kind = Kind::Bars;
  c.stacked = true;
  c.x = {"memory per GPU", "B"};
  c.categories = {"batch 1", "batch 87"};
  const double gib = 1073741824.0;
  // Bar values are in y (x is the category) and drawn on the x axis.
  c.series = {{"weights", Mark::Bars, {{0, 12.6 * gib}, {1, 12.6 * gib}}},
              {"KV cache", Mark::Bars, {{0, 0.3 * gib}, {1, 27.2 * gib}}}};
  c.markers = {{40 * gib, 0, "a100 memory"}};
  XmlInfo info = parse(render_svg(c));
  EXPECT_TRUE(contains(info.text_by_class["axis-title"], "memory per GPU (GiB)"));
  EXPECT_TRUE(contains(info.text_by_class["tick"], "40"));
  EXPECT_TRUE(contains(info.text_by_class["tick"], "50"));  // the 40 GiB limit line is not on the frame
}

// A prefix joins a unit symbol ("4GFLOP") but not a word: samples/s read "4.53k samples/s", never "4.53ksamples/s".
TEST(Sweep, TooltipsJoinAPrefixToASymbolAndSpaceItFromAWord) {
  Chart rate = sweep_chart("r", {"Batch size"}, {"Samples per second", "samples/s"}, {{"rate", {{1, 4530}, {2, 9060}}, false}});
  EXPECT_NE(rate.series[0].points[0].tip.find("4.53k samples/s"), std::string::npos) << rate.series[0].points[0].tip;
  Chart flops = sweep_chart("f", {"Batch size"}, {"FLOPs", "FLOP"}, {{"flops", {{1, 4e9}, {2, 8e9}}, false}});
  EXPECT_NE(flops.series[0].points[0].tip.find("4GFLOP"), std::string::npos) << flops.series[0].points[0].tip;
  Chart memory = sweep_chart("m", {"Batch size"}, {"Memory", "B"}, {{"peak", {{8, 180.0 * 1048576}, {16, 1e9}}, false}});
  EXPECT_NE(memory.series[0].points[0].tip.find("180 MiB"), std::string::npos) << memory.series[0].points[0].tip;
}

TEST(LayerShares, TopLayersPlusOtherAndUnknownValuesNoted) {
  LayerShares sh{{}, {"FLOPs", "time"}, {{}, {}}};
  for (int i = 0; i < 30; ++i) {
    sh.layers.push_back(fmt::format("l{}", i));
    sh.values[0].push_back(i + 1);
    sh.values[1].push_back(i == 29 ? NAN : 1);
  }
  Chart c = layer_share_chart("shares", sh, 10);
  ASSERT_EQ(c.categories.size(), 11u);
  EXPECT_EQ(c.categories.front(), "l29");
  EXPECT_EQ(c.categories.back(), "other (20 layers)");
  double sum = 0;
  for (const auto& p : c.series[0].points) sum += p.y;
  EXPECT_NEAR(sum, 100.0, 1e-9);
  XmlInfo info = parse(render_svg(c));
  EXPECT_EQ(info.classes["bar"], 21);  // 11 + 11 minus the unknown one
  EXPECT_EQ(info.classes["category"], 11);
  EXPECT_TRUE(contains(info.text_by_class["axis-title"], "Share of the model's total (%)"));
}

// Tooltips carry each metric's unit, as the tables print it: from a report table, a time column in seconds
// ("23.1 us") and bytes with binary prefixes ("512 B", "180 MiB").
TEST(LayerShares, TooltipsNameTheUnitOfTheirTableColumn) {
  report::Table t;
  t.columns = {{"name", "layer"}, {"time_s", "time", report::Unit::Second}, {"bytes", "bytes", report::Unit::Byte}};
  t.add_row({report::Cell::text("conv"), report::Cell::real(23.1e-6, report::Unit::Second),
             report::Cell::count(512, report::Unit::Byte)});
  const LayerShares sh = layer_shares_from_table(t, "name", {{"time_s", "time"}, {"bytes", "bytes"}});
  ASSERT_EQ(sh.units, (std::vector<std::string>{"s", "B"}));
  const Chart c = layer_share_chart("shares", sh, 10);
  EXPECT_NE(c.series[0].points[0].tip.find("(23.1 us)"), std::string::npos) << c.series[0].points[0].tip;
  EXPECT_NE(c.series[1].points[0].tip.find("(512 B)"), std::string::npos) << c.series[1].points[0].tip;
}

TEST(Scatter, HasTheIdentityLineAndSameRangeOnBothAxes) {
  std::vector<EstimateVsMeasured> pts;
  for (int i = 0; i < 12; ++i) pts.push_back({fmt::format("l{}", i), 1e6 * (i + 1), 1.2e6 * (i + 1), i});
  Chart c = scatter_chart("est vs meas", {"Estimated", "FLOP"}, {"Measured", "FLOP"}, pts);
  EXPECT_EQ(c.x.min, c.y.min);
  EXPECT_EQ(c.x.max, c.y.max);
  std::string svg = render_svg(c);
  XmlInfo info = parse(svg);
  EXPECT_EQ(info.classes["pt"], 12);
  EXPECT_EQ(info.classes["ceiling"], 1);
  EXPECT_NE(svg.find("data-row=\"11\""), std::string::npos);
}

TEST(Svg, EscapesText) {
  Chart c;
  c.title = "a <b> & \"c\"";
  c.series.push_back({"s&t", Mark::Points, {{1, 2, "<x>", "tip & <more>"}}});
  XmlInfo info = parse(render_svg(c));
  EXPECT_EQ(info.classes["pt"], 1);
}

TEST(Svg, SideBySideChartsHaveDistinctClipIds) {
  auto devs = two_devices();
  std::string svg = render_svg_row({roofline_chart("a", {devs[0]}, {}), roofline_chart("b", {devs[1]}, {})});
  XmlInfo info = parse(svg);
  EXPECT_EQ(info.elements["clipPath"], 2);
  EXPECT_NE(svg.find("id=\"c0-plot\""), std::string::npos);
  EXPECT_NE(svg.find("id=\"c1-plot\""), std::string::npos);
}

/// The width and height attributes of an SVG document.
std::pair<double, double> svg_size(const std::string& svg) {
  auto attr = [&](const std::string& name) {
    const size_t at = svg.find(name + "=\"");
    return at == std::string::npos ? 0.0 : std::stod(svg.substr(at + name.size() + 2));
  };
  return {attr("width"), attr("height")};
}

TEST(Svg, TwoChartsShareARowAndFourMakeATwoByTwoGrid) {
  auto devs = two_devices();
  const Chart one = roofline_chart("a", {devs[0]}, {});
  const auto [w1, h1] = svg_size(render_svg(one));
  const auto [w2, h2] = svg_size(render_svg_row({one, one}));
  EXPECT_DOUBLE_EQ(w2, 2 * w1);
  EXPECT_DOUBLE_EQ(h2, h1);
  const std::string four = render_svg_row({one, one, one, one});
  const auto [w4, h4] = svg_size(four);
  EXPECT_DOUBLE_EQ(w4, 2 * w1);
  EXPECT_DOUBLE_EQ(h4, 2 * h1);
  EXPECT_NE(four.find(fmt::format("translate({:.0f},{:.0f})", w1, h1)), std::string::npos);  // the fourth
}

TEST(WriteChart, SvgAndPngByExtension) {
  std::string dir = test::temp_dir();
  Chart c = roofline_chart("r", two_devices(), {{"s", "a", 3, 1e12}});
  write_chart(c, dir + "/r.svg");
  std::ifstream svg(dir + "/r.svg");
  std::stringstream ss;
  ss << svg.rdbuf();
  EXPECT_TRUE(check_xml(ss.str()).ok);
  if (std::system("command -v rsvg-convert >/dev/null 2>&1") != 0) GTEST_SKIP() << "rsvg-convert not installed";
  write_chart(c, dir + "/r.png");
  std::ifstream png(dir + "/r.png", std::ios::binary);
  std::string head(8, '\0');
  png.read(head.data(), 8);
  EXPECT_EQ(head, "\x89PNG\r\n\x1a\n");
  EXPECT_GT(std::filesystem::file_size(dir + "/r.png"), 5000u);
}

TEST(WriteChart, BadExtensionAndUnwritablePathSayWhy) {
  Chart c;
  try {
    write_chart(c, "plot.jpg");
    FAIL() << "expected a usage error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("plot.jpg"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find(".svg or"), std::string::npos);
  }
  try {
    write_chart(c, "/nonexistent-dir/x.svg");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/x.svg"), std::string::npos);
  }
}

}  // namespace
}  // namespace ridge::chart
