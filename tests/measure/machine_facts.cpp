// CPU facts parsing (fake sysfs trees) and sweep planning on fake caches.
#include <gtest/gtest.h>

#include <filesystem>

#include "measure/machine/sweep.hpp"
#include "measure/machine_fakes.hpp"
#include "ridge/error.hpp"
#include "support/test_support.hpp"

namespace ridge::measure {
namespace {

namespace fs = std::filesystem;

using test_fakes::fake_index;

TEST(MachineFacts, ParsesCacheSizes) {
  EXPECT_EQ(parse_cache_size("48K"), 48 << 10);
  EXPECT_EQ(parse_cache_size("2048K\n"), 2 << 20);
  EXPECT_EQ(parse_cache_size("480M"), int64_t{480} << 20);
  EXPECT_EQ(parse_cache_size("1G"), int64_t{1} << 30);
  EXPECT_EQ(parse_cache_size("512"), 512);
  EXPECT_THROW(parse_cache_size("big"), Error);
  EXPECT_THROW(parse_cache_size("12Q"), Error);
  EXPECT_THROW(parse_cache_size(""), Error);
}

TEST(MachineFacts, CountsCpuLists) {
  EXPECT_EQ(count_cpu_list("0"), 1);
  EXPECT_EQ(count_cpu_list("0-3,8,10-11"), 7);
  EXPECT_EQ(count_cpu_list("0-1\n"), 2);
  EXPECT_THROW(count_cpu_list("3-1"), Error);
  EXPECT_THROW(count_cpu_list("a-b"), Error);
}

TEST(MachineFacts, ReadsFakeSysfsCaches) {
  const fs::path dir = fs::path(test::temp_dir()) / "cache";
  fake_index(dir, 0, 1, "Data", "48K", "0");
  fake_index(dir, 1, 1, "Instruction", "32K", "0");
  fake_index(dir, 3, 3, "Unified", "32768K", "0-15");
  fake_index(dir, 2, 2, "Unified", "2048K", "0-1");
  const auto caches = read_cache_levels(dir.string());
  ASSERT_EQ(caches.size(), 3u);  // the instruction cache is skipped
  EXPECT_EQ(caches[0].level, 1);
  EXPECT_EQ(caches[0].size_bytes, 48 << 10);
  EXPECT_EQ(caches[1].level, 2);
  EXPECT_EQ(caches[1].shared_cpus, 2);
  EXPECT_EQ(caches[2].size_bytes, int64_t{32} << 20);
  EXPECT_EQ(caches[2].shared_cpus, 16);
}

TEST(MachineFacts, MissingSysfsIsEmptyAndJunkNamesTheFile) {
  EXPECT_TRUE(read_cache_levels("/nonexistent/ridge/cache").empty());
  const fs::path dir = fs::path(test::temp_dir()) / "cache";
  fake_index(dir, 0, 1, "Data", "lots", "0");
  try {
    read_cache_levels(dir.string());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("index0/size"), std::string::npos) << e.what();
  }
}

TEST(MachineFacts, DetectsThisCpusIsasWithInjectedSysfs) {
  CpuSources s;
  s.sysfs_root = test::temp_dir();  // empty: caches, topology and cpufreq all missing
  const CpuFacts f = detect_cpu(s);
  EXPECT_FALSE(f.model.empty());
  EXPECT_GE(f.logical_cpus, 1);
  EXPECT_EQ(f.cores, f.logical_cpus);  // no topology: every CPU counts as a core
  ASSERT_FALSE(f.isas.empty());
  EXPECT_EQ(f.isas.front(), Isa::Scalar);
  EXPECT_EQ(f.best_isa, f.isas.back());
  EXPECT_EQ(f.cache_source, CacheSource::Assumed);  // no CPUID or sysconf given either
  EXPECT_FALSE(f.llc_known());
  EXPECT_EQ(f.fingerprint, detect_cpu(s).fingerprint);  // stable
}

std::vector<CacheLevel> fake_caches() {
  return {{1, "Data", 48 << 10, 1}, {2, "Unified", 2 << 20, 1}, {3, "Unified", int64_t{32} << 20, 2}};
}

TEST(MachineSweep, ClassifiesWorkingSets) {
  const auto c = fake_caches();
  EXPECT_EQ(sweep::classify(c, 16 << 10, 1), "L1");
  EXPECT_EQ(sweep::classify(c, 64 << 10, 1), "L1-L2");
  EXPECT_EQ(sweep::classify(c, 512 << 10, 1), "L2");
  EXPECT_EQ(sweep::classify(c, 8 << 20, 1), "L3");
  EXPECT_EQ(sweep::classify(c, 64 << 20, 1), "L3-DRAM");
  EXPECT_EQ(sweep::classify(c, 128 << 20, 1), "DRAM");
  // Two threads split the shared L3: 16 MiB each, so 16 MiB per thread is no longer inside it.
  EXPECT_EQ(sweep::classify(c, 8 << 20, 2), "L3");
  EXPECT_EQ(sweep::classify(c, 16 << 20, 2), "L3-DRAM");
  EXPECT_EQ(sweep::classify({}, 1 << 10, 1), "DRAM");
}

TEST(MachineSweep, PlansWorkingSets) {
  const auto ws = sweep::working_sets(64 << 10);
  EXPECT_EQ(ws, (std::vector<int64_t>{8 << 10, 16 << 10, 32 << 10, 64 << 10}));
  const auto big = sweep::working_sets(int64_t{128} << 20);
  EXPECT_EQ(big.size(), 10u + 2u + 1u);  // 8 KiB..4 MiB doubling, 16 and 64 MiB, then the last
  EXPECT_EQ(big.back(), int64_t{128} << 20);
}

TEST(MachineSweep, LevelBandwidthIsTheBestPointInsideTheLevel) {
  const auto c = fake_caches();
  const std::vector<SweepPoint> points = {
      {"read", 1, 16 << 10, 100, "L1"},   {"read", 1, 8 << 10, 120, "L1"},  {"triad", 1, 16 << 10, 90, "L1"},
      {"read", 2, 16 << 10, 230, "L1"},   {"read", 1, 64 << 10, 500, "L1-L2"},
      {"triad", 1, 256 << 20, 10, "DRAM"}, {"triad", 2, 256 << 20, 18, "DRAM"},
  };
  const auto levels = sweep::summarize_levels(c, points, 2);
  ASSERT_EQ(levels.size(), 4u);
  EXPECT_EQ(levels[0].level, "L1");
  EXPECT_EQ(levels[0].read_gbs_one, 120);
  EXPECT_EQ(levels[0].triad_gbs_one, 90);
  EXPECT_EQ(levels[0].read_gbs_all, 230);
  EXPECT_FALSE(levels[0].triad_gbs_all.has_value());  // not measured: absent, never zero
  EXPECT_FALSE(levels[1].read_gbs_one.has_value());    // the transition point does not count for L2
  EXPECT_EQ(levels[3].level, "DRAM");
  EXPECT_EQ(levels[3].gbs(true), 18);
  EXPECT_EQ(levels[3].gbs(false), 10);
}

}  // namespace
}  // namespace ridge::measure
