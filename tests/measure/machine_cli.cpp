// `ridge machine` end to end in quick mode: JSON keys, the cache file, --refresh, bad flags.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <optional>

#include "measure/machine_fakes.hpp"
#include "support/test_support.hpp"

namespace ridge {
namespace {

/// Sets RIDGE_SYSFS_ROOT for the ridge processes a test starts, and restores it after.
class ScopedSysfsRoot {
 public:
  explicit ScopedSysfsRoot(const std::string& root) {
    if (const char* old = std::getenv("RIDGE_SYSFS_ROOT")) saved_ = old;
    setenv("RIDGE_SYSFS_ROOT", root.c_str(), 1);
  }
  ~ScopedSysfsRoot() {
    if (saved_) setenv("RIDGE_SYSFS_ROOT", saved_->c_str(), 1);
    else unsetenv("RIDGE_SYSFS_ROOT");
  }

 private:
  std::optional<std::string> saved_;
};

TEST(MachineCli, QuickJsonHasPeaksBandwidthAndIsCached) {
  // Cache sizes come from a fake sysfs (L1d 32K, L2 1M, L3 16M), not from this machine's.
  const ScopedSysfsRoot sysfs(measure::test_fakes::fake_sysfs_with_caches());
  const std::string dir = test::temp_dir();
  const auto r = test::run_ridge("machine --quick --format json --cache " + dir + "/ridge/machine.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const char* p : {"fp32", "fp64"}) {
    ASSERT_TRUE(j["peak_gflops"][p].is_number()) << j.dump(1);
    EXPECT_GT(j["peak_gflops"][p].get<double>(), 0);
    EXPECT_TRUE(j["peak_gflops_one_thread"][p].is_number());
    EXPECT_TRUE(j["theoretical_peak_gflops"].contains(p));
  }
  for (const char* level : {"L1", "L2", "L3", "DRAM"}) EXPECT_TRUE(j["bandwidth_gbs"].contains(level)) << level;
  EXPECT_TRUE(j["bandwidth_gbs"]["L1"].is_number());
  EXPECT_TRUE(j["bandwidth_gbs"]["L2"].is_number());
  EXPECT_TRUE(j["bandwidth_gbs_one_thread"]["L1"].is_number());
  EXPECT_TRUE(j["bandwidth_gbs"]["L3"].is_null());
  EXPECT_TRUE(j["bandwidth_gbs"]["DRAM"].is_null());  // quick mode: not measured, and the notes say so
  EXPECT_EQ(j["cpu"]["cache_source"], "sysfs");
  EXPECT_EQ(j["profile"]["cpu"]["cache_source"], "sysfs");
  EXPECT_EQ(j["profile"]["cpu"]["caches"].size(), 3u);
  bool noted = false;
  for (const auto& n : j["notes"]) noted |= n.get<std::string>() == "DRAM bandwidth not measured";
  EXPECT_TRUE(noted) << j["notes"].dump();
  EXPECT_FALSE(j["peaks"].empty());
  EXPECT_TRUE(std::filesystem::exists(dir + "/ridge/machine.json"));
  EXPECT_NE(r.err.find("machine:"), std::string::npos);  // progress on stderr

  const auto again = test::run_ridge("machine --quick --format json --cache " + dir + "/ridge/machine.json");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const auto k = nlohmann::json::parse(again.out);
  EXPECT_NE(k["cpu"]["profile"].get<std::string>().find("cached"), std::string::npos);
  EXPECT_EQ(k["profile"]["measured_at"], j["profile"]["measured_at"]);
  EXPECT_EQ(k["peak_gflops"], j["peak_gflops"]);

  const auto refreshed =
      test::run_ridge("machine --quick --refresh --format json --cache " + dir + "/ridge/machine.json");
  ASSERT_EQ(refreshed.exit_code, 0) << refreshed.err;
  EXPECT_NE(nlohmann::json::parse(refreshed.out)["cpu"]["profile"].get<std::string>().find("measured now"),
            std::string::npos);
}

TEST(MachineCli, WithoutSysfsCachesTheSourceIsNamedAndSysfsIsNot) {
  // The VM of issue 15: an empty sysfs root. Which later source answers depends on the CPU; that one answered,
  // and why sysfs did not, is in the profile.
  const ScopedSysfsRoot sysfs(test::temp_dir());
  const std::string dir = test::temp_dir();
  const auto r = test::run_ridge("machine --quick --format json --cache " + dir + "/machine.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_NE(j["cpu"]["cache_source"], "sysfs");
  EXPECT_NE(j["profile"]["cpu"]["cache_source_detail"].get<std::string>().find("has none"), std::string::npos);
  EXPECT_TRUE(j["bandwidth_gbs"]["L1"].is_number());  // every source names an L1
  EXPECT_TRUE(j["bandwidth_gbs"]["DRAM"].is_null());
}

TEST(MachineCli, DefaultCacheIsUnderXdgCacheHome) {
  const std::string dir = test::temp_dir();
  const std::string cmd = "cd " + dir + " && RIDGE_SYSFS_ROOT=" + measure::test_fakes::fake_sysfs_with_caches() +
                          " XDG_CACHE_HOME=" + dir + " " + RIDGE_BINARY +
                          " machine --quick --format table >out.txt 2>err.txt";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  EXPECT_TRUE(std::filesystem::exists(dir + "/ridge/machine.json"));
}

TEST(MachineCli, BadFlagsAreUsageErrors) {
  const auto r = test::run_ridge("machine --quick --threads 0");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  const auto s = test::run_ridge("machine --quick --no-such-flag");
  EXPECT_EQ(s.exit_code, 2) << s.err;
}

}  // namespace
}  // namespace ridge
