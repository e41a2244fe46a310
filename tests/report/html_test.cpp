// The HTML report: self-contained, every section, a sortable row per layer, well-formed inline SVG.
#include <chrono>

#include "report/synthetic_report.hpp"
#include "report/xml_check.hpp"
#include "ridge/chart.hpp"
#include "ridge/error.hpp"
#include "support/test_support.hpp"

namespace ridge::chart {
namespace {

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t i = text.find(what); i != std::string::npos; i = text.find(what, i + what.size())) ++n;
  return n;
}

TEST(Html, SyntheticSixHundredLayerReportIsCompleteAndSmall) {
  const std::string html = render_html(test::synthetic_report(600));
  for (const auto& id : test::synthetic_section_ids()) EXPECT_NE(html.find("<section id=\"" + id + "\">"), std::string::npos) << id;
  EXPECT_NE(html.find("<section id=\"notes\">"), std::string::npos);
  EXPECT_EQ(count_of(html, "<tr data-row="), 600u);  // one sortable row per layer; the total sits in <tfoot>
  EXPECT_EQ(count_of(html, "<tfoot>"), 1u);
  EXPECT_EQ(count_of(html, "class=\"data sortable\""), 1u);
  EXPECT_LT(html.size(), 2'000'000u) << "a 600-layer report should stay light to open";
  EXPECT_LT(count_of(html, "<script"), 2u);
}

TEST(Html, InlineSvgIsWellFormedWithUniqueIds) {
  const std::string html = render_html(test::synthetic_report(50));
  auto svgs = test::svg_fragments(html);
  ASSERT_EQ(svgs.size(), 4u);
  int points = 0;
  for (const auto& s : svgs) {
    auto info = test::check_xml(s);
    ASSERT_TRUE(info.ok) << info.error;
    points += info.classes["pt"];
  }
  EXPECT_EQ(points, 50 + 14 + 50);  // roofline layers, sweep (2 x 7), scatter layers
  EXPECT_EQ(count_of(html, "id=\"s2c0-plot\""), 1u);
  EXPECT_EQ(count_of(html, "id=\"s4c0-plot\""), 1u);
}

TEST(Html, NeedsNoNetwork) {
  const std::string html = render_html(test::synthetic_report(10));
  EXPECT_EQ(html.find(" src="), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  // The only URL is the SVG namespace name, which browsers never fetch.
  EXPECT_EQ(count_of(html, "http"), count_of(html, "http://www.w3.org/2000/svg"));
}

TEST(Html, EscapesUserText) {
  ReportData d;
  d.title = "<script>alert(1)</script>";
  d.sections.push_back({"x", "A & B", {"1 < 2"}, {}, {}});
  const std::string html = render_html(d);
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_NE(html.find("A &amp; B"), std::string::npos);
}

TEST(Html, WriteHtmlNamesAnUnwritableFile) {
  try {
    write_html({}, "/nonexistent-dir/r.html");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/r.html"), std::string::npos);
  }
}

}  // namespace
}  // namespace ridge::chart
