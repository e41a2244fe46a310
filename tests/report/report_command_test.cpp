// `ridge report` and `--plot` end to end through the built binary.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "report/xml_check.hpp"
#include "support/test_support.hpp"

namespace ridge::test {
namespace {

TEST(ReportCommand, WritesEverySectionForAZooModel) {
  const std::string out = temp_dir() + "/r.html";
  RunResult r = run_ridge("report resnet18 --device a100-sxm4-40gb --device v100-sxm2 --sweep 1,4 -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("report written to " + out), std::string::npos) << r.out;
  const std::string html = slurp(out);
  for (const char* id : {"summary", "layers", "charts", "prediction", "notes"})
    EXPECT_NE(html.find(std::string("<section id=\"") + id + "\">"), std::string::npos) << id;
  auto svgs = svg_fragments(html);
  EXPECT_GE(svgs.size(), 4u);  // roofline, shares, FLOPs and memory sweeps (+ time sweep)
  for (const auto& s : svgs) EXPECT_TRUE(check_xml(s).ok) << check_xml(s).error;
  EXPECT_NE(html.find("data-row="), std::string::npos);
}

TEST(ReportCommand, BadInputGivesOneLineErrors) {
  RunResult missing_o = run_ridge("report resnet18");
  EXPECT_EQ(missing_o.exit_code, 2);
  RunResult bad_device = run_ridge("report resnet18 --device no-such-gpu -o " + temp_dir() + "/x.html");
  EXPECT_EQ(bad_device.exit_code, 1);
  EXPECT_NE(bad_device.err.find("no-such-gpu"), std::string::npos) << bad_device.err;
  RunResult unwritable = run_ridge("report resnet18 --sweep 1 -o /nonexistent-dir/r.html");
  EXPECT_EQ(unwritable.exit_code, 1);
  EXPECT_NE(unwritable.err.find("/nonexistent-dir/r.html"), std::string::npos) << unwritable.err;
}

TEST(PlotOption, SummaryDrawsSvgAndRejectsOtherExtensions) {
  const std::string dir = temp_dir();
  RunResult s = run_ridge("summary resnet18 --plot " + dir + "/shares.svg");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  XmlInfo shares = check_xml(slurp(dir + "/shares.svg"));
  ASSERT_TRUE(shares.ok) << shares.error;
  EXPECT_GT(shares.classes["bar"], 10);
  RunResult bad = run_ridge("summary resnet18 --plot " + dir + "/x.jpg");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("x.jpg"), std::string::npos);
}

}  // namespace
}  // namespace ridge::test
