// The model stage's parsers (device files, measurement files, calibration files, machine profiles) answer any
// mangled input with ridge::Error or a value, never another exception or a crash. A cheap, deterministic
// complement to libFuzzer.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

#include "ridge/device.hpp"
#include "ridge/error.hpp"
#include "ridge/machine.hpp"
#include "ridge/predict.hpp"
#include "support/test_support.hpp"

namespace ridge {
namespace {

std::string mutate(std::string s, std::mt19937& rng) {
  static const std::string kTokens[] = {"{", "}", "[", "]", "\"", ":", ",", "null", "-1", "1e999", "0", "true",
                                        "\"x\"", "18446744073709551616", "{}", "[]"};
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits && !s.empty(); ++e) {
    const size_t at = rng() % s.size();
    switch (rng() % 4) {
      case 0: s.erase(at, 1 + rng() % 8); break;
      case 1: s.insert(at, kTokens[rng() % std::size(kTokens)]); break;
      case 2: s[at] = static_cast<char>(rng() % 256); break;
      default: s.resize(at); break;
    }
  }
  return s;
}

template <class Parse>
void survive_mutations(const std::string& seed, Parse parse, int rounds = 3000) {
  std::mt19937 rng(1234);
  int accepted = 0;
  for (int i = 0; i < rounds; ++i) {
    const std::string input = mutate(seed, rng);
    try {
      parse(input);
      ++accepted;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "non-ridge exception " << e.what() << " for input:\n" << input;
      return;
    }
  }
  EXPECT_GT(accepted, 0);  // some mutations stay valid: the seed itself is exercised
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ParsersRobust, DeviceFiles) {
  const std::string seed = read(std::string(RIDGE_SOURCE_DIR) + "/data/devices/v100-sxm2.json");
  ASSERT_FALSE(seed.empty());
  survive_mutations(seed, [](const std::string& s) { parse_device(s, "v100-sxm2.json"); });
}

TEST(ParsersRobust, MeasurementFiles) {
  const std::string seed = R"({"model": "m", "device": "v100", "layers": [
    {"name": "a", "op": "Conv", "time_s": 1e-3, "flops": 1000, "bytes": "2000"},
    {"name": "b", "op": "Relu", "forward": {"median_s": 1e-4}, "flops": 10, "bytes_read": 8, "bytes_written": 8, "cost_known": true}]})";
  survive_mutations(seed, [](const std::string& s) { samples_from({parse_measurement(s, "m.json")}); });
}

TEST(ParsersRobust, CalibrationFiles) {
  const std::string seed = R"({"format": "ridge-calibration", "version": 1, "device": "machine", "precision": "fp32",
    "combine": "sum", "fallback": {"ppp": 0.5, "ppp_mem": null, "overhead_s": 1e-6, "samples": 3},
    "classes": {"Conv": {"ppp": 0.6, "ppp_mem": 0.7, "samples": 4}}})";
  survive_mutations(seed, [](const std::string& s) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(s);
    } catch (const nlohmann::json::exception&) {
      return;  // read_calibration turns this into ridge::Error; here only the structure check is under test
    }
    calibration_from_json(j, "cal.json");
  });
}

TEST(ParsersRobust, MachineProfiles) {
  const std::string dir = test::temp_dir();
  const std::string seed = R"({"cpu": {"model": "x"}, "peak_gflops": {"fp32": 100, "fp64": 50},
    "bandwidth_gbs": {"L1": 500, "L2": 200, "L3": null, "DRAM": 20}})";
  auto load = [&](const std::string& s) {
    std::ofstream(dir + "/machine.json", std::ios::trunc) << s;
    load_machine_device(dir + "/machine.json");
  };
  survive_mutations(seed, load, 300);  // each round writes a file
  measure::MachineProfile p;
  p.threads = 2;
  p.peaks.push_back({DType::F32, measure::Isa::Avx2, 2, 80.0, 100.0, 0.01, 5});
  measure::LevelBandwidth dram;
  dram.level = "DRAM";
  dram.triad_gbs_all = 15.0;
  p.levels.push_back(dram);
  survive_mutations(measure::profile_to_json(p).dump(1), load, 300);
}

}  // namespace
}  // namespace ridge
