// Machine profile: JSON round trip, cache validity (fingerprint, quick, junk), the roofline query.
#include <gtest/gtest.h>

#include <fstream>

#include "ridge/error.hpp"
#include "ridge/machine.hpp"
#include "ridge/measure.hpp"
#include "support/test_support.hpp"

namespace ridge::measure {
namespace {

MachineProfile sample_profile() {
  MachineProfile p;
  p.cpu.model = "Test CPU";
  p.cpu.vendor = "GenuineIntel";
  p.cpu.flags_digest = "abc";
  p.cpu.logical_cpus = 2;
  p.cpu.cores = 2;
  p.cpu.isas = {Isa::Scalar, Isa::Sse, Isa::Avx2, Isa::Avx512};
  p.cpu.best_isa = Isa::Avx512;
  p.cpu.nominal_clock_ghz = 2.6;
  p.cpu.clock_source = "test";
  p.cpu.caches = {{1, "Data", 48 << 10, 1}, {2, "Unified", 2 << 20, 1}};
  p.cpu.cache_source = CacheSource::Cpuid;
  p.cpu.cache_source_detail = "CPUID leaf 0x4";
  p.cpu.fingerprint = "f00d";
  p.threads = 2;
  p.measured_clock_ghz = 3.7;
  p.peaks = {{DType::F32, Isa::Avx512, 1, 230, 236, 0.01, 5}, {DType::F32, Isa::Avx2, 1, 118, 118, 0.01, 5},
             {DType::F32, Isa::Avx512, 2, 460, 472, 0.01, 5}, {DType::F64, Isa::Avx512, 1, 115, 118, 0.01, 5},
             {DType::F64, Isa::Avx512, 2, 230, 236, 0.01, 5}};
  LevelBandwidth l1;
  l1.level = "L1";
  l1.capacity_bytes = 48 << 10;
  l1.read_gbs_one = 300;
  l1.triad_gbs_one = 400;
  l1.read_gbs_all = 600;
  l1.triad_gbs_all = 800;
  LevelBandwidth dram;
  dram.level = "DRAM";
  dram.triad_gbs_one = 16;
  dram.triad_gbs_all = 30;
  p.levels = {l1, dram};
  p.sweep = {{"read", 1, 16 << 10, 300, "L1"}};
  p.duration_s = 12.5;
  p.measured_at = "2024-01-01T00:00:00Z";
  p.notes = {"a note"};
  return p;
}

TEST(MachineProfile, JsonRoundTrip) {
  const MachineProfile p = sample_profile();
  const nlohmann::json j = profile_to_json(p);
  const MachineProfile q = profile_from_json(j);
  EXPECT_EQ(profile_to_json(q), j);
  EXPECT_EQ(q.cpu.best_isa, Isa::Avx512);
  EXPECT_EQ(q.levels[1].read_gbs_one, std::nullopt);  // null stays absent
  EXPECT_EQ(q.levels[1].triad_gbs_all, 30);
  EXPECT_EQ(q.cpu.cache_source, CacheSource::Cpuid);
  EXPECT_EQ(j["cpu"]["cache_source"], "cpuid");  // the profile says where its cache sizes came from
}

TEST(MachineProfile, RejectsJsonThatIsNotAProfile) {
  EXPECT_THROW(profile_from_json(nlohmann::json::parse("[1,2]"), "x.json"), Error);
  nlohmann::json j = profile_to_json(sample_profile());
  j["peaks"][0]["isa"] = "avx9000";
  try {
    profile_from_json(j, "x.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("x.json"), std::string::npos);
  }
  j = profile_to_json(sample_profile());
  j.erase("levels");
  EXPECT_THROW(profile_from_json(j), Error);
  j = profile_to_json(sample_profile());
  j["cpu"]["cache_source"] = "guess";
  EXPECT_THROW(profile_from_json(j), Error);
  j = profile_to_json(sample_profile());
  j["format_version"] = 1;  // profiles from before the cache sources are measured again
  EXPECT_THROW(profile_from_json(j), Error);
}

TEST(MachineProfile, PeakAndBandwidthQueries) {
  const MachineProfile p = sample_profile();
  EXPECT_EQ(p.peak_gflops(DType::F32, false), 230);  // best ISA, not avx2
  EXPECT_EQ(p.peak_gflops(DType::F32, true), 460);
  EXPECT_EQ(p.peak_gflops(DType::F64, true), 230);
  EXPECT_EQ(p.peak_gflops(DType::BF16, true), 460);  // other types use the fp32 peak
  EXPECT_EQ(p.theoretical_gflops(DType::F32, true), 472);
  EXPECT_EQ(p.bandwidth_gbs("DRAM", true), 30);
  EXPECT_EQ(p.bandwidth_gbs("L2", true), std::nullopt);
}

TEST(MachineProfile, AttainableFollowsTheRoofline) {
  const MachineProfile p = sample_profile();
  EXPECT_DOUBLE_EQ(attainable_gflops(p, 1.0), 30);         // memory bound: AI x DRAM bandwidth
  EXPECT_DOUBLE_EQ(attainable_gflops(p, 1000.0), 460);     // compute bound
  EXPECT_DOUBLE_EQ(attainable_gflops(p, 1.0, DType::F32, 1), 16);
  EXPECT_DOUBLE_EQ(attainable_gflops(p, 1000.0, DType::F64, 1), 115);
  EXPECT_DOUBLE_EQ(attainable_gflops(p, 0.5, DType::F32, 0, "L1"), 400);
  EXPECT_DOUBLE_EQ(attainable_gflops(p, 1.0, DType::F32, 0, "L3"), 30);  // unmeasured level: DRAM
  EXPECT_DOUBLE_EQ(attainable_gflops(p, 0.0), 0);
}

// A measured step's roof is the bandwidth of the smallest level holding its bytes: 16 KiB fit the 48 KiB L1
// (800 GB/s with 2 threads), 1 MiB only DRAM (30 GB/s).
TEST(MachineProfile, MeasuredStepsMeetTheRoofOfTheLevelTheirBytesFitIn) {
  const MachineProfile p = sample_profile();
  ModelMeasurement m;
  m.threads = 2;
  for (const Count bytes : {Count{16} << 10, Count{1} << 20}) {
    LayerMeasurement l;
    l.flops = bytes / 4;  // 0.25 FLOP per byte: memory-bound at every level
    l.bytes = bytes;
    l.forward.median_s = 1e-6;
    l.gflops_per_s = to_double(l.flops) / 1e-6 / 1e9;
    m.layers.push_back(l);
  }
  ridge::apply_roofline(m, p);
  EXPECT_EQ(m.layers[0].roofline_level, "L1");
  EXPECT_DOUBLE_EQ(m.layers[0].roofline_gflops_per_s, 0.25 * 800);
  EXPECT_EQ(m.layers[1].roofline_level, "DRAM");
  EXPECT_DOUBLE_EQ(m.layers[1].roofline_gflops_per_s, 0.25 * 30);
}

TEST(MachineProfile, CacheIsReusedOnlyForTheSameCpu) {
  const std::string path = test::temp_dir() + "/sub/machine.json";
  MachineProfile p = sample_profile();
  std::string why;
  EXPECT_FALSE(load_cached_profile(path, p.cpu, false, &why));
  EXPECT_EQ(why, "no cache file");
  save_profile(p, path);
  auto again = load_cached_profile(path, p.cpu, false, &why);
  ASSERT_TRUE(again.has_value()) << why;
  EXPECT_EQ(profile_to_json(*again), profile_to_json(p));

  CpuFacts other = p.cpu;
  other.fingerprint = "beef";
  EXPECT_FALSE(load_cached_profile(path, other, false, &why));
  EXPECT_NE(why.find("different CPU"), std::string::npos) << why;

  p.quick = true;
  save_profile(p, path);
  EXPECT_FALSE(load_cached_profile(path, p.cpu, false, &why));
  EXPECT_NE(why.find("quick"), std::string::npos) << why;
  EXPECT_TRUE(load_cached_profile(path, p.cpu, true, &why));

  std::ofstream(path) << "{ not json";
  EXPECT_FALSE(load_cached_profile(path, p.cpu, true, &why));
  EXPECT_NE(why.find("not valid JSON"), std::string::npos) << why;
}

TEST(MachineProfile, HugePagesAreRecordedAndAskingForThemReMeasuresAProfileWithout) {
  // The cached profile carries this machine's CPU facts (only its fingerprint matters here), measured without
  // huge pages: a default request reuses it, a request for huge pages measures again (quick, so short).
  const std::string path = test::temp_dir() + "/pages/machine.json";
  MachineProfile cached = sample_profile();
  cached.cpu = detect_cpu();
  cached.threads = 1;
  save_profile(cached, path);
  ProfileSource src;
  MachineOptions o;
  o.quick = true;
  o.threads = 1;
  EXPECT_FALSE(load_or_measure_machine(o, false, path, &src).huge_pages);
  EXPECT_TRUE(src.from_cache) << src.reason;
  o.huge_pages = true;
  const MachineProfile p = load_or_measure_machine(o, false, path, &src);
  EXPECT_FALSE(src.from_cache);
  EXPECT_EQ(src.reason, "cache measured without huge pages");
  EXPECT_TRUE(p.huge_pages);
  EXPECT_TRUE(profile_from_json(profile_to_json(p)).huge_pages);  // the cache file keeps the page policy
  bool noted = false;
  for (const std::string& n : p.notes) noted |= n.rfind("pages: transparent huge pages requested", 0) == 0;
  EXPECT_TRUE(noted);
  // Measuring pinned this thread to one CPU and gave its mask back: the CPU (and its fingerprint) look the same.
  EXPECT_EQ(detect_cpu().fingerprint, cached.cpu.fingerprint);
}

TEST(MachineProfile, DefaultPathFollowsXdg) {
  const char* old = std::getenv("XDG_CACHE_HOME");
  const std::string saved = old ? old : "";
  setenv("XDG_CACHE_HOME", "/tmp/xdg-test", 1);
  EXPECT_EQ(default_profile_path(), "/tmp/xdg-test/ridge/machine.json");
  if (old) setenv("XDG_CACHE_HOME", saved.c_str(), 1);
  else unsetenv("XDG_CACHE_HOME");
}

TEST(MachineProfile, QuickMeasurementFillsL1AndL2Only) {
  // Facts are injected (a machine with L1d 48 KiB, L2 2 MiB, L3 32 MiB, one thread): what is measured and
  // where each point lands follows from them, not from this machine's sysfs. Only the kernels run for real.
  CpuSources none;
  none.sysfs_root = test::temp_dir();
  MachineOptions o;
  o.quick = true;
  o.threads = 1;
  o.cpu = detect_cpu(none);
  o.cpu->caches = {{1, "Data", 48 << 10, 1}, {2, "Unified", 2 << 20, 1}, {3, "Unified", 32 << 20, 1}};
  o.cpu->cache_source = CacheSource::Cpuid;
  const MachineProfile p = measure_machine(o);
  EXPECT_TRUE(p.quick);
  EXPECT_GT(p.peak_gflops(DType::F32, false), 0);
  EXPECT_GT(p.peak_gflops(DType::F64, true), 0);
  ASSERT_EQ(p.levels.size(), 4u);
  EXPECT_EQ(p.levels[0].level, "L1");
  EXPECT_TRUE(p.levels[0].read_gbs_one.has_value());
  EXPECT_TRUE(p.levels[0].triad_gbs_one.has_value());
  EXPECT_EQ(p.levels[1].level, "L2");
  EXPECT_TRUE(p.levels[1].triad_gbs_one.has_value());
  EXPECT_FALSE(p.levels[2].triad_gbs_one.has_value());  // quick mode: L3 and DRAM not measured, not zero
  EXPECT_EQ(p.levels.back().level, "DRAM");
  EXPECT_FALSE(p.levels.back().gbs(true).has_value());
  for (const SweepPoint& s : p.sweep) EXPECT_LE(s.working_set_bytes, 1 << 20);
  bool source_noted = false;
  for (const std::string& n : p.notes) source_noted |= n.rfind("cache sizes from cpuid", 0) == 0;
  EXPECT_TRUE(source_noted);
}

}  // namespace
}  // namespace ridge::measure
