// The device database: every required device is present with sources, peaks are dense, files are validated.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "ridge/device.hpp"
#include "ridge/error.hpp"
#include "ridge/machine.hpp"
#include "ridge/predict.hpp"
#include "support/test_support.hpp"

namespace ridge {
namespace {

const std::vector<Device>& db() {
  static const std::vector<Device> devices = load_devices();
  return devices;
}

double peak(const std::string& name, Precision p) { return find_device(db(), name).peak(p).value_or(-1); }

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(Devices, EveryRequiredDeviceIsPresentWithSources) {
  for (const char* name : {"k80", "k80-board", "p100", "v100-sxm2", "v100-pcie", "t4", "a100-sxm4-40gb", "a100-sxm4-80gb",
                           "a100-pcie-40gb", "a100-pcie-80gb", "a10", "a30", "l4", "l40s", "h100-sxm", "h100-pcie", "h200",
                           "b200", "mi250x", "mi300x", "v100", "a100", "h100"}) {
    SCOPED_TRACE(name);
    const Device d = find_device(db(), name);
    EXPECT_FALSE(d.source_of("peak_flops.fp32").empty());
    EXPECT_FALSE(d.source_of("bandwidth_bytes_per_s.dram").empty());
    EXPECT_GT(d.memory_bytes, 0);
    EXPECT_GT(d.dram_bandwidth(), 0);
    EXPECT_TRUE(d.peak(Precision::FP32).has_value());
    EXPECT_NE(d.interconnect("pcie"), nullptr);
  }
}

TEST(Devices, PeaksAreDenseNeverSparse) {
  EXPECT_DOUBLE_EQ(peak("a100", Precision::FP16), 312e12);
  EXPECT_DOUBLE_EQ(peak("a100", Precision::TF32), 156e12);
  EXPECT_DOUBLE_EQ(peak("a100", Precision::INT8), 624e12);
  EXPECT_DOUBLE_EQ(peak("h100", Precision::FP16), 989.5e12);
  EXPECT_DOUBLE_EQ(peak("h100", Precision::INT8), 1979e12);
  EXPECT_DOUBLE_EQ(peak("l4", Precision::FP16), 121e12);
  EXPECT_DOUBLE_EQ(peak("l4", Precision::TF32), 60e12);
  EXPECT_DOUBLE_EQ(peak("mi300x", Precision::FP16), 1307.4e12);
  EXPECT_DOUBLE_EQ(peak("b200", Precision::FP16), 2250e12);
}

TEST(Devices, MultiDiePartsAreSplitAsDocumented) {
  EXPECT_DOUBLE_EQ(peak("k80-board", Precision::FP32), 8.73e12);
  EXPECT_DOUBLE_EQ(peak("k80-board", Precision::FP64), 2.91e12);
  EXPECT_DOUBLE_EQ(peak("k80", Precision::FP32), 8.73e12 / 2);
  EXPECT_DOUBLE_EQ(find_device(db(), "k80").dram_bandwidth(), 240e9);
  EXPECT_DOUBLE_EQ(peak("mi250x", Precision::FP16), 383e12 / 2);
  EXPECT_DOUBLE_EQ(find_device(db(), "mi250x").dram_bandwidth(), 3276.8e9 / 2);
  EXPECT_FALSE(find_device(db(), "k80").peak(Precision::FP16).has_value());  // no tensor cores
  EXPECT_FALSE(find_device(db(), "v100").peak(Precision::BF16).has_value());
}

TEST(Devices, RidgePointsMatchTheReferenceTable) {
  auto ridge_of = [](const char* name, Precision p) {
    const Device d = find_device(db(), name);
    return ridge_point(*d.peak(p), d.dram_bandwidth());
  };
  EXPECT_NEAR(ridge_of("v100-sxm2", Precision::FP32), 17.44, 0.01);   // seed 002: 1.57e13 / 9e11
  EXPECT_NEAR(ridge_of("a100-sxm4-40gb", Precision::FP32), 12.54, 0.01);
  EXPECT_NEAR(ridge_of("v100-sxm2", Precision::FP16), 139, 0.5);
  EXPECT_NEAR(ridge_of("h100-sxm", Precision::FP16), 295, 0.5);
  EXPECT_NEAR(ridge_of("t4", Precision::FP32), 25.3, 0.05);
  EXPECT_NEAR(ridge_of("mi300x", Precision::FP32), 30.8, 0.05);
}

TEST(Devices, LookupIsCaseInsensitiveAndSuggestsOnTypos) {
  EXPECT_EQ(find_device(db(), "V100").id, "v100-sxm2");
  EXPECT_EQ(find_device(db(), "NVIDIA A100 SXM4 80GB").id, "a100-sxm4-80gb");
  try {
    find_device(db(), "v10");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("v100"), std::string::npos) << e.what();
  }
}

TEST(Devices, JsonHasPeaksByPrecisionAndBandwidthByLevel) {
  const auto j = device_to_json(find_device(db(), "v100"));
  EXPECT_DOUBLE_EQ(j["peak_flops"]["fp32"].get<double>(), 15.7e12);
  EXPECT_DOUBLE_EQ(j["bandwidth_bytes_per_s"]["dram"].get<double>(), 900e9);
  EXPECT_DOUBLE_EQ(j["bandwidth_bytes_per_s"]["l2"].get<double>(), 2996.77e9);
}

TEST(Devices, BadFilesGiveOneLineErrorsNamingFileAndField) {
  const std::string ok_tail = R"(, "bandwidth_bytes_per_s": {"dram": 1e11}, "sources": {"peak_flops": "x", "bandwidth_bytes_per_s": "y"}})";
  struct Case { std::string text, expect; };
  const std::vector<Case> cases = {
      {"{", "not valid JSON: parse error at line 1, column 2"},  // without nlohmann's "[json.exception...]" tag
      {"[]", "expected a JSON object"},
      {R"({"name": "x", "peak_flops": {"fp32": 1e12}, "bandwidth_bytes_per_s": {"dram": 1e11}})", "has no source"},
      {R"({"name": "x", "peak_flops": {"fp8": 1e12})" + ok_tail, "peak_flops.fp8: unknown precision"},
      {R"({"name": "x", "peak_flops": {"fp32": -1})" + ok_tail, "must be a positive"},
      {R"({"name": "x", "peak_flops": {"fp32": "fast"})" + ok_tail, "expected a number"},
      {R"({"name": "x", "peak_flops": {"fp32": 1e12}, "bandwidth_bytes_per_s": {"l2": 1e11}, "sources": {"peak_flops": "x", "bandwidth_bytes_per_s": "y"}})", "dram: missing"},
      {R"({"name": "x", "flops": 3, "peak_flops": {"fp32": 1e12})" + ok_tail, "flops: unknown field"},
      {R"({"name": "x", "peak_flops": {"fp32": 1e12}, "achieved": {"flops": {"fp32": 2e12}})" + ok_tail,
       "achieved.flops.fp32: 2e+12 FLOP/s is above peak_flops.fp32 (1e+12)"},
      {R"({"name": "x", "peak_flops": {"fp32": 1e12}, "achieved": {"flops": {"bf16": 1e11}})" + ok_tail,
       "achieved.flops.bf16: measured at a precision peak_flops does not list"},
      {R"({"name": "x", "peak_flops": {"fp32": 1e12}, "achieved": {"bandwidth_bytes_per_s": {"dram": 2e11}})" + ok_tail,
       "achieved.bandwidth_bytes_per_s.dram: 2e+11 B/s is above bandwidth_bytes_per_s.dram (1e+11)"},
      {R"({"name": "x", "peak_flops": {"fp32": 1e12}, "achieved": {"bandwidth_bytes_per_s": {"l2": 1e10}})" + ok_tail,
       "achieved.bandwidth_bytes_per_s.l2: measured for a level bandwidth_bytes_per_s does not list"},
      {R"({"name": "x", "peak_flops": {"fp32": 1e12}, "achieved": {"clock": 1})" + ok_tail,
       "achieved.clock: unknown field"},
  };
  for (const auto& c : cases) {
    try {
      parse_device(c.text, "dev.json");
      ADD_FAILURE() << "accepted: " << c.text;
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind("dev.json: ", 0), 0u) << msg;
      EXPECT_NE(msg.find(c.expect), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
  }
}

TEST(Devices, UserFolderAddsAndReplacesDevicesAndRejectsDuplicateAliases) {
  const std::string dir = test::temp_dir();
  write(dir + "/my-gpu.json", R"({"name": "My GPU", "aliases": ["mine"], "peak_flops": {"fp32": 2e12},
    "bandwidth_bytes_per_s": {"dram": 1e11}, "sources": {"peak_flops": "me", "bandwidth_bytes_per_s": "me"}})");
  write(dir + "/t4.json", R"({"name": "Tuned T4", "aliases": ["t4"], "peak_flops": {"fp32": 7e12},
    "bandwidth_bytes_per_s": {"dram": 3e11}, "sources": {"peak_flops": "me", "bandwidth_bytes_per_s": "me"}})");
  const auto devices = load_devices({dir});
  EXPECT_DOUBLE_EQ(*find_device(devices, "mine").peak(Precision::FP32), 2e12);
  EXPECT_EQ(find_device(devices, "t4").name, "Tuned T4");
  EXPECT_EQ(devices.size(), db().size() + 1);

  write(dir + "/clash.json", R"({"name": "Clash", "aliases": ["v100"], "peak_flops": {"fp32": 2e12},
    "bandwidth_bytes_per_s": {"dram": 1e11}, "sources": {"peak_flops": "me", "bandwidth_bytes_per_s": "me"}})");
  EXPECT_THROW(load_devices({dir}), Error);
  EXPECT_THROW(load_devices({dir + "/missing"}), Error);
}

TEST(Devices, ThisMachineComesFromTheRidgeMachineProfile) {
  const std::string dir = test::temp_dir();
  EXPECT_FALSE(load_machine_device(dir + "/none.json").has_value());
  write(dir + "/machine.json", R"({"cpu": {"model": "Test CPU"}, "peak_gflops": {"fp32": 100.5, "fp64": 50},
    "bandwidth_gbs": {"L1": 500, "L2": 200, "DRAM": 20, "L3": null}})");
  const auto d = load_machine_device(dir + "/machine.json");
  ASSERT_TRUE(d.has_value());
  EXPECT_DOUBLE_EQ(*d->peak(Precision::FP32), 100.5e9);
  EXPECT_DOUBLE_EQ(d->dram_bandwidth(), 20e9);
  EXPECT_EQ(d->bandwidth_bytes_per_s.count("l3"), 0u);
  EXPECT_EQ(d->name, "this machine (Test CPU)");
  // The cache format `ridge machine` writes: all-thread ceilings are used.
  measure::MachineProfile p;
  p.threads = 2;
  p.cpu.model = "Cache CPU";
  p.peaks.push_back({DType::F32, measure::Isa::Avx2, 2, 80.0, 100.0, 0.01, 5});
  p.peaks.push_back({DType::F32, measure::Isa::Avx2, 1, 40.0, 50.0, 0.01, 5});
  measure::LevelBandwidth dram;
  dram.level = "DRAM";
  dram.triad_gbs_all = 15.0;
  dram.triad_gbs_one = 9.0;
  p.levels.push_back(dram);
  write(dir + "/cache.json", measure::profile_to_json(p).dump());
  const auto c = load_machine_device(dir + "/cache.json");
  ASSERT_TRUE(c.has_value());
  EXPECT_DOUBLE_EQ(*c->peak(Precision::FP32), 80e9);
  EXPECT_DOUBLE_EQ(c->dram_bandwidth(), 15e9);
  EXPECT_EQ(c->name, "this machine (Cache CPU)");
  write(dir + "/bad.json", R"({"peak": 1})");
  EXPECT_THROW(load_machine_device(dir + "/bad.json"), Error);

  const char* old = std::getenv("XDG_CACHE_HOME");
  const std::string saved = old ? old : "";
  setenv("XDG_CACHE_HOME", (dir + "/empty-cache").c_str(), 1);
  try {
    find_device(db(), "machine");
    ADD_FAILURE() << "expected an error without a profile";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("run `ridge machine` first"), std::string::npos) << e.what();
  }
  if (old) setenv("XDG_CACHE_HOME", saved.c_str(), 1);
  else unsetenv("XDG_CACHE_HOME");
}

TEST(Devices, PrecisionNamesParse) {
  EXPECT_EQ(parse_precision("FP16"), Precision::FP16);
  EXPECT_EQ(parse_precision("double"), Precision::FP64);
  EXPECT_EQ(parse_precision("bfloat16"), Precision::BF16);
  EXPECT_FALSE(parse_precision("fp8").has_value());
  for (const auto& p : precisions()) EXPECT_EQ(parse_precision(p.name), p.id);
}

// The H200's measured ceilings are the best of the GEMM sweep and the copy of tests/data/gpu/h200/ceilings.json
// (bench/gpu/collect.sh), rounded to four digits; the chart and `ridge devices` show them beside the peaks.
TEST(Devices, H200AchievedCeilingsAreTheBestOfItsMeasuredSweep) {
  const Device& d = find_device(db(), "h200");
  const auto sweep = nlohmann::json::parse(test::slurp(std::string(RIDGE_SOURCE_DIR) + "/tests/data/gpu/h200/ceilings.json"));
  std::map<std::string, double> best;
  for (const auto& g : sweep["gemm"]) {
    const double rate = g["flops"].get<double>() / (g["median_ms"].get<double>() * 1e-3);
    double& b = best[g["dtype"].get<std::string>()];
    b = std::max(b, rate);
  }
  ASSERT_EQ(best.size(), 4u);
  ASSERT_EQ(d.achieved_flops.size(), 4u);
  for (const auto& [name, rate] : best) {
    const auto p = parse_precision(name);
    ASSERT_TRUE(p && d.achieved_flops.count(*p)) << name;
    EXPECT_NEAR(d.achieved_flops.at(*p) / rate, 1.0, 5e-4) << name;
    EXPECT_LT(d.achieved_flops.at(*p), *d.peak(*p)) << name;
  }
  double copy = 0;
  for (const auto& b : sweep["bandwidth"])
    if (b["kind"] == "copy") copy = b["bytes_moved"].get<double>() / (b["median_ms"].get<double>() * 1e-3);
  ASSERT_GT(copy, 0);
  EXPECT_NEAR(d.achieved_bandwidth_bytes_per_s.at("dram") / copy, 1.0, 5e-4);
  EXPECT_EQ(d.l2_bytes, 62914560);  // what cudaGetDeviceProperties reported there (env.txt)
  const auto j = device_to_json(d);
  EXPECT_DOUBLE_EQ(j["achieved"]["flops"]["bf16"].get<double>(), d.achieved_flops.at(Precision::BF16));
}

}  // namespace
}  // namespace ridge
