// The synthetic 600-layer report opened in headless Chromium by tests/scripts/browser_check.mjs (skipped when
// node, chromium or chromedriver is missing). The end-to-end `ridge report` check is in tests/scripts/browser.cmake.
#include <sys/wait.h>

#include <cstdlib>

#include "report/synthetic_report.hpp"
#include "ridge/chart.hpp"
#include "support/test_support.hpp"

namespace ridge::chart {
namespace {

TEST(Browser, SyntheticSixHundredLayerReportLoadsCleanly) {
  if (std::system("command -v node >/dev/null 2>&1") != 0) GTEST_SKIP() << "node not installed; browser check skipped";
  const std::string dir = test::temp_dir();
  write_html(test::synthetic_report(600), dir + "/synthetic.html");
  std::string sections;
  for (const auto& id : test::synthetic_section_ids()) sections += (sections.empty() ? "" : ",") + id;
  const std::string cmd = "node " RIDGE_SOURCE_DIR "/tests/scripts/browser_check.mjs --html " + dir +
                          "/synthetic.html --sections " + sections + ",notes --min-rows 600 --min-charts 4 --screenshot " +
                          dir + "/synthetic.png >" + dir + "/browser.log 2>&1";
  const int status = std::system(cmd.c_str());
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  const std::string log = [&] {
    std::string out, line;
    FILE* f = std::fopen((dir + "/browser.log").c_str(), "r");
    char buf[512];
    while (f && std::fgets(buf, sizeof buf, f)) out += buf;
    if (f) std::fclose(f);
    return out;
  }();
  if (code == 77) GTEST_SKIP() << log;
  EXPECT_EQ(code, 0) << log;
}

}  // namespace
}  // namespace ridge::chart
