// Cache sizes from injected sources (fake sysfs trees, recorded CPUID registers, a sysconf table), the order of
// the chain, and the sweep plan those facts lead to, DRAM working set included. Nothing here reads this
// machine's sysfs, CPUID or sysconf.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "measure/machine/sweep.hpp"
#include "measure/machine_fakes.hpp"
#include "support/test_support.hpp"

namespace ridge::measure {
namespace {

namespace fs = std::filesystem;
constexpr int64_t KiB = 1024, MiB = KiB * 1024, GiB = MiB * 1024;

using test_fakes::fake_sysfs_with_caches;
using test_fakes::write;

/// CPUID replayed from a table; leaves not in it read as zeros, as the instruction does above the maximum.
CpuidFn fake_cpuid(std::map<std::pair<uint32_t, uint32_t>, CpuidRegs> table) {
  return [table = std::move(table)](uint32_t leaf, uint32_t sub) {
    auto it = table.find({leaf, sub});
    return it == table.end() ? CpuidRegs{} : it->second;
  };
}

// Leaf 0 registers: EAX the highest basic leaf, then the vendor in EBX, EDX, ECX.
constexpr CpuidRegs kIntelLeaf0{0x1f, 0x756e6547, 0x6c65746e, 0x49656e69};  // "GenuineIntel"
constexpr CpuidRegs kAmdLeaf0{0x10, 0x68747541, 0x444d4163, 0x69746e65};    // "AuthenticAMD"

/// An Intel Xeon's leaf 4: L1d 48 KiB, L1i 32 KiB, L2 2 MiB (2 threads each), L3 105 MiB shared by 128.
CpuidFn intel_xeon_cpuid() {
  return fake_cpuid({{{0, 0}, kIntelLeaf0},
                     {{4, 0}, {0xFC004121, 0x02C0003F, 0x3F, 0}},
                     {{4, 1}, {0xFC004122, 0x01C0003F, 0x3F, 0}},
                     {{4, 2}, {0xFC004143, 0x03C0003F, 0x7FF, 0}},
                     {{4, 3}, {0xFC1FC163, 0x0380003F, 0x1BFFF, 0}}});
}

/// An AMD Zen 4's leaf 0x8000001D: L1d 32 KiB, L1i 32 KiB, L2 1 MiB (2 threads each), L3 32 MiB shared by 16.
CpuidFn amd_zen_cpuid() {
  return fake_cpuid({{{0, 0}, kAmdLeaf0},
                     {{0x80000000, 0}, {0x80000021, 0, 0, 0}},
                     {{0x8000001D, 0}, {0x4121, 0x01C0003F, 0x3F, 0}},
                     {{0x8000001D, 1}, {0x4122, 0x01C0003F, 0x3F, 0}},
                     {{0x8000001D, 2}, {0x4143, 0x01C0003F, 0x7FF, 0}},
                     {{0x8000001D, 3}, {0x3C163, 0x03C0003F, 0x7FFF, 0}}});
}

/// The VM of issue 15: an AMD CPU whose hypervisor returns zeros for leaf 0x8000001D.
CpuidFn amd_vm_cpuid() {
  return fake_cpuid({{{0, 0}, {0xd, 0x68747541, 0x444d4163, 0x69746e65}}, {{0x80000000, 0}, {0x80000021, 0, 0, 0}}});
}

/// glibc's sysconf on that VM (it reads AMD's legacy leaves 0x80000005/6).
SysconfFn vm_sysconf() {
  return [](int name) -> long {
    if (name == _SC_LEVEL1_DCACHE_SIZE) return 48 * KiB;
    if (name == _SC_LEVEL2_CACHE_SIZE) return 1 * MiB;
    if (name == _SC_LEVEL3_CACHE_SIZE) return 508 * MiB;
    return 0;
  };
}

SysconfFn no_sysconf() {
  return [](int) -> long { return 0; };
}

/// Sources whose sysfs root is an empty directory, as in a VM without cache entries.
CpuSources vm_sources(CpuidFn cpuid, SysconfFn sysconf) {
  CpuSources s;
  s.sysfs_root = test::temp_dir();
  s.cpuinfo_path = s.sysfs_root + "/no-cpuinfo";
  s.cpuid = std::move(cpuid);
  s.sysconf = std::move(sysconf);
  return s;
}

void expect_level(const CacheLevel& c, int level, const std::string& type, int64_t size, int shared) {
  EXPECT_EQ(c.level, level);
  EXPECT_EQ(c.type, type);
  EXPECT_EQ(c.size_bytes, size) << "L" << level;
  EXPECT_EQ(c.shared_cpus, shared) << "L" << level;
}

TEST(MachineCaches, DecodesIntelLeaf4) {
  const CpuidFn cpuid = intel_xeon_cpuid();
  EXPECT_EQ(cpuid_vendor(cpuid), "GenuineIntel");
  EXPECT_EQ(cpuid_cache_leaf("GenuineIntel"), 4u);
  const auto l1i = decode_cpuid_cache(cpuid(4, 1));
  ASSERT_TRUE(l1i.has_value());
  EXPECT_EQ(l1i->type, "Instruction");
  EXPECT_FALSE(decode_cpuid_cache(cpuid(4, 4)).has_value());  // the null entry
  const auto caches = read_cpuid_caches(cpuid, 4);
  ASSERT_EQ(caches.size(), 3u);  // the instruction cache is skipped
  expect_level(caches[0], 1, "Data", 48 * KiB, 2);
  expect_level(caches[1], 2, "Unified", 2 * MiB, 2);
  expect_level(caches[2], 3, "Unified", 105 * MiB, 128);
}

TEST(MachineCaches, DecodesAmdLeaf8000001D) {
  const CpuidFn cpuid = amd_zen_cpuid();
  EXPECT_EQ(cpuid_vendor(cpuid), "AuthenticAMD");
  EXPECT_EQ(cpuid_cache_leaf("AuthenticAMD"), 0x8000001Du);
  EXPECT_EQ(cpuid_cache_leaf("HygonGenuine"), 0x8000001Du);
  const auto caches = read_cpuid_caches(cpuid, 0x8000001D);
  ASSERT_EQ(caches.size(), 3u);
  expect_level(caches[0], 1, "Data", 32 * KiB, 2);
  expect_level(caches[1], 2, "Unified", 1 * MiB, 2);
  expect_level(caches[2], 3, "Unified", 32 * MiB, 16);
}

TEST(MachineCaches, CpuidLeafAboveTheMaximumOrHiddenIsEmpty) {
  EXPECT_TRUE(read_cpuid_caches(amd_vm_cpuid(), 0x8000001D).empty());  // zeros from the hypervisor
  // A CPU whose highest extended leaf is below 0x8000001D is not asked for it, whatever the table says.
  const CpuidFn old_amd = fake_cpuid({{{0x80000000, 0}, {0x8000001A, 0, 0, 0}},
                                      {{0x8000001D, 0}, {0x4121, 0x01C0003F, 0x3F, 0}}});
  EXPECT_TRUE(read_cpuid_caches(old_amd, 0x8000001D).empty());
  const CpuidFn old_intel = fake_cpuid({{{0, 0}, {2, 0, 0, 0}}, {{4, 0}, {0x121, 0x01C0003F, 0x3F, 0}}});
  EXPECT_TRUE(read_cpuid_caches(old_intel, 4).empty());
}

TEST(MachineCaches, SysconfLevelsAndSharing) {
  const auto caches = read_sysconf_caches(vm_sysconf(), 2);
  ASSERT_EQ(caches.size(), 3u);
  expect_level(caches[0], 1, "Data", 48 * KiB, 1);
  expect_level(caches[1], 2, "Unified", 1 * MiB, 1);
  expect_level(caches[2], 3, "Unified", 508 * MiB, 2);  // sharing unknown: every CPU this process may use
  EXPECT_TRUE(read_sysconf_caches(no_sysconf(), 2).empty());
}

TEST(MachineCaches, ChainPrefersSysfsThenCpuidThenSysconfThenAssumed) {
  CpuSources s = vm_sources(amd_zen_cpuid(), vm_sysconf());
  s.sysfs_root = fake_sysfs_with_caches();
  CacheFacts f = detect_caches(s, 2);
  EXPECT_EQ(f.source, CacheSource::Sysfs);
  ASSERT_EQ(f.levels.size(), 3u);
  EXPECT_EQ(f.levels[2].size_bytes, 16 * MiB);
  EXPECT_NE(f.detail.find("devices/system/cpu/cpu0/cache"), std::string::npos) << f.detail;

  s = vm_sources(amd_zen_cpuid(), vm_sysconf());  // empty sysfs
  f = detect_caches(s, 2);
  EXPECT_EQ(f.source, CacheSource::Cpuid);
  ASSERT_EQ(f.levels.size(), 3u);
  EXPECT_EQ(f.levels[2].size_bytes, 32 * MiB);
  EXPECT_NE(f.detail.find("0x8000001d"), std::string::npos) << f.detail;
  EXPECT_NE(f.detail.find("has none"), std::string::npos) << f.detail;  // says why sysfs was passed over

  s = vm_sources(amd_vm_cpuid(), vm_sysconf());  // the VM: no sysfs, CPUID hidden
  f = detect_caches(s, 2);
  EXPECT_EQ(f.source, CacheSource::Sysconf);
  ASSERT_EQ(f.levels.size(), 3u);
  EXPECT_EQ(f.levels[2].size_bytes, 508 * MiB);
  EXPECT_NE(f.detail.find("reports none"), std::string::npos) << f.detail;

  s = vm_sources(amd_vm_cpuid(), no_sysconf());
  f = detect_caches(s, 2);
  EXPECT_EQ(f.source, CacheSource::Assumed);
  ASSERT_EQ(f.levels.size(), assumed_caches().size());
  EXPECT_NE(f.detail.find("assumed"), std::string::npos) << f.detail;

  s = vm_sources(nullptr, nullptr);  // sources left out are skipped
  EXPECT_EQ(detect_caches(s, 2).source, CacheSource::Assumed);
}

TEST(MachineCaches, SourceNamesRoundTrip) {
  for (CacheSource s : {CacheSource::Sysfs, CacheSource::Cpuid, CacheSource::Sysconf, CacheSource::Assumed})
    EXPECT_EQ(parse_cache_source(cache_source_name(s)), s);
  EXPECT_FALSE(parse_cache_source("guess").has_value());
}

TEST(MachineCaches, DetectCpuRecordsTheSourceAndReadsTheInjectedRoot) {
  CpuSources s = vm_sources(intel_xeon_cpuid(), vm_sysconf());
  write(s.sysfs_root + "/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "3500000");
  s.cpuinfo_path = s.sysfs_root + "/cpuinfo";
  write(s.cpuinfo_path, "vendor_id\t: GenuineIntel\nmodel name\t: Test Xeon\ncpu MHz\t\t: 2100.000\nflags\t\t: fpu avx2");
  const CpuFacts f = detect_cpu(s);
  EXPECT_EQ(f.model, "Test Xeon");
  EXPECT_EQ(f.vendor, "GenuineIntel");
  EXPECT_DOUBLE_EQ(f.nominal_clock_ghz, 3.5);
  EXPECT_EQ(f.cache_source, CacheSource::Cpuid);
  EXPECT_TRUE(f.llc_known());
  ASSERT_EQ(f.caches.size(), 3u);
  EXPECT_EQ(f.caches[2].size_bytes, 105 * MiB);
  EXPECT_EQ(f.fingerprint, detect_cpu(s).fingerprint);  // stable
  CpuSources other = s;
  other.cpuid = amd_vm_cpuid();  // the same CPU described by sysconf instead: another fingerprint
  EXPECT_NE(detect_cpu(other).fingerprint, f.fingerprint);
}

TEST(MachineCaches, HostSourcesFollowRidgeSysfsRoot) {
  const char* old = std::getenv("RIDGE_SYSFS_ROOT");
  const std::string saved = old ? old : "";
  setenv("RIDGE_SYSFS_ROOT", "/tmp/ridge-empty-sysfs", 1);
  EXPECT_EQ(CpuSources::host().sysfs_root, "/tmp/ridge-empty-sysfs");
  unsetenv("RIDGE_SYSFS_ROOT");
  EXPECT_EQ(default_sysfs_root(), "/sys");
  if (old) setenv("RIDGE_SYSFS_ROOT", saved.c_str(), 1);
}

/// Facts as detect_cpu() gives them for `sources`, with `threads` CPUs.
CpuFacts facts(const CpuSources& sources, int threads) {
  CpuFacts f;
  f.logical_cpus = threads;
  const CacheFacts c = detect_caches(sources, threads);
  f.caches = c.levels;
  f.cache_source = c.source;
  return f;
}

bool has_level(const sweep::Plan& plan, int threads, const std::string& level) {
  for (const auto& p : plan.points)
    if (p.threads == threads && p.level == level) return true;
  return false;
}

TEST(MachineCaches, DramWorkingSetIsFarAboveTheLastLevelCache) {
  const std::vector<CacheLevel> c = {{1, "Data", 48 * KiB, 1}, {2, "Unified", 2 * MiB, 1}, {3, "Unified", 32 * MiB, 2}};
  auto d = sweep::plan_dram(c, true, 1, 64 * GiB);
  EXPECT_EQ(d.llc_bytes, 32 * MiB);
  EXPECT_EQ(d.target_bytes, 256 * MiB);  // 8x the L3
  EXPECT_EQ(d.bytes_per_thread, 256 * MiB);
  EXPECT_FALSE(d.capped);
  d = sweep::plan_dram(c, true, 2, 64 * GiB);  // two threads share one L3: 256 MiB together
  EXPECT_EQ(d.bytes_per_thread, 128 * MiB);
  d = sweep::plan_dram(c, true, 4, 64 * GiB);  // four threads reach two L3 instances
  EXPECT_EQ(d.llc_bytes, 64 * MiB);
  EXPECT_EQ(d.bytes_per_thread, 128 * MiB);
  const std::vector<CacheLevel> small = {{1, "Data", 32 * KiB, 1}, {2, "Unified", 4 * MiB, 4}};
  EXPECT_EQ(sweep::plan_dram(small, true, 1, 64 * GiB).bytes_per_thread, 256 * MiB);  // at least 256 MiB
  d = sweep::plan_dram(c, true, 1, 100 * MiB);  // the memory budget wins, and says so
  EXPECT_TRUE(d.capped);
  EXPECT_EQ(d.bytes_per_thread, 100 * MiB);
  d = sweep::plan_dram(assumed_caches(), false, 2, 64 * GiB);  // unknown LLC: a large fixed set
  EXPECT_EQ(d.llc_bytes, 0);
  EXPECT_EQ(d.bytes_per_thread * 2, sweep::kUnknownLlcDramBytes);
  // The VM of issue 15 (sysconf: L3 508 MiB, shared by both CPUs): 8x is about 4 GiB, on one or two threads.
  const auto vm = read_sysconf_caches(vm_sysconf(), 2);
  EXPECT_EQ(sweep::plan_dram(vm, true, 1, 64 * GiB).bytes_per_thread, 8 * 508 * MiB);
  EXPECT_EQ(sweep::plan_dram(vm, true, 2, 64 * GiB).bytes_per_thread, 4 * 508 * MiB);
}

TEST(MachineCaches, VmWithoutSysfsStillPlansEveryLevel) {
  // Issue 15: no cache entries in sysfs. Facts come from CPUID, and the plan has points inside L1, L2 and L3
  // and one DRAM point per thread count far above the L3.
  const CpuFacts f = facts(vm_sources(intel_xeon_cpuid(), no_sysconf()), 2);
  ASSERT_EQ(f.cache_source, CacheSource::Cpuid);
  const sweep::Plan plan = sweep::plan_sweep(f, 2, false, 64 * GiB);
  for (int threads : {1, 2})
    for (const char* level : {"L1", "L2", "L3", "DRAM"}) EXPECT_TRUE(has_level(plan, threads, level)) << level;
  ASSERT_TRUE(plan.dram_one && plan.dram_all);
  EXPECT_EQ(plan.dram_one->bytes_per_thread, 840 * MiB);  // 8 x 105 MiB
  EXPECT_EQ(plan.dram_all->bytes_per_thread, 420 * MiB);  // both threads share the L3
  int dram_points = 0;
  for (const auto& p : plan.points) {
    if (p.level != "DRAM") continue;
    ++dram_points;
    EXPECT_EQ(p.working_set_bytes, p.threads == 1 ? plan.dram_one->bytes_per_thread : plan.dram_all->bytes_per_thread);
  }
  EXPECT_EQ(dram_points, 2);  // the DRAM points are the planned ones, nothing else is labelled DRAM
  EXPECT_EQ(plan.buffer_bytes_first, 840 * MiB);
  EXPECT_EQ(plan.buffer_bytes_other, 420 * MiB);

  // The same VM where CPUID is hidden too: sysconf's sizes give the same levels.
  const CpuFacts g = facts(vm_sources(amd_vm_cpuid(), vm_sysconf()), 2);
  ASSERT_EQ(g.cache_source, CacheSource::Sysconf);
  const sweep::Plan q = sweep::plan_sweep(g, 2, false, 64 * GiB);
  for (const char* level : {"L1", "L2", "L3", "DRAM"}) EXPECT_TRUE(has_level(q, 1, level)) << level;
}

TEST(MachineCaches, AssumedCachesLabelPointsBeyondL2AsUnknown) {
  const CpuFacts f = facts(vm_sources(nullptr, nullptr), 2);
  ASSERT_FALSE(f.llc_known());
  const sweep::Plan plan = sweep::plan_sweep(f, 2, false, 64 * GiB);
  EXPECT_TRUE(has_level(plan, 1, "L1"));
  EXPECT_TRUE(has_level(plan, 1, "L2+"));
  EXPECT_FALSE(has_level(plan, 1, "L3"));
  EXPECT_EQ(plan.dram_one->bytes_per_thread, sweep::kUnknownLlcDramBytes);
  EXPECT_EQ(plan.points.back().level, "DRAM");
  EXPECT_EQ(sweep::classify(f.caches, 4 * MiB, 1, false), "L2+");
}

TEST(MachineCaches, QuickPlanStopsInsideThePrivateCaches) {
  const CpuFacts f = facts(vm_sources(intel_xeon_cpuid(), no_sysconf()), 2);
  const sweep::Plan plan = sweep::plan_sweep(f, 2, true, 64 * GiB);
  EXPECT_FALSE(plan.dram_one.has_value());
  EXPECT_FALSE(plan.dram_all.has_value());
  EXPECT_TRUE(has_level(plan, 1, "L1"));
  EXPECT_TRUE(has_level(plan, 1, "L2"));
  for (const auto& p : plan.points) {
    EXPECT_LE(p.working_set_bytes, 1 * MiB);
    EXPECT_NE(p.level, "L3");
    EXPECT_NE(p.level, "DRAM");
  }
}

TEST(MachineCaches, DramBandwidthIsTheLargestSetNotTheBestPoint) {
  const std::vector<CacheLevel> c = {{1, "Data", 48 * KiB, 1}};
  const std::vector<SweepPoint> points = {
      {"triad", 1, 16 * KiB, 700, "L1"},   {"triad", 1, 256 * MiB, 40, "DRAM"},
      {"triad", 1, 2 * GiB, 25, "DRAM"},   {"read", 1, 2 * GiB, 30, "DRAM"},
  };
  const auto levels = sweep::summarize_levels(c, points, 1);
  ASSERT_EQ(levels.size(), 2u);
  EXPECT_EQ(levels[1].triad_gbs_one, 25);
  EXPECT_EQ(levels[1].triad_gbs_all, 25);  // one thread is all threads here
  EXPECT_EQ(levels[1].read_gbs_one, 30);
  EXPECT_EQ(levels[0].triad_gbs_one, 700);
}

TEST(MachineCaches, DramPointIsTheSustainedMeanCachePointsTheMedianPass) {
  // Passes of 1.0, 1.0, 1.0, 1.2 and 1.8 s (slowed by other memory traffic): median 1.0, mean 1.2.
  EXPECT_DOUBLE_EQ(sweep::point_time_s(1.0, 1.2, "DRAM"), 1.2);  // likwid-bench's total bytes / total time
  EXPECT_DOUBLE_EQ(sweep::point_time_s(1.0, 1.2, "L1"), 1.0);
  EXPECT_DOUBLE_EQ(sweep::point_time_s(1.0, 1.2, "L3-DRAM"), 1.0);  // a transition is a cache point
}

}  // namespace
}  // namespace ridge::measure
