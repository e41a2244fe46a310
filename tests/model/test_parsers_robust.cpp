// The model stage's parsers (device files, measurement files, calibration files, machine profiles) answer any
// mangled input with ridge::Error or a value, never another exception or a crash. A cheap, deterministic
// complement to libFuzzer.
#include <gtest/gtest.h>

#include <fstream>

#include "ridge/device.hpp"
#include "ridge/error.hpp"
#include "ridge/machine.hpp"
#include "ridge/predict.hpp"
#include "support/test_support.hpp"

namespace ridge {
namespace {

using test::survive_mutations;

TEST(ParsersRobust, DeviceFiles) {
  const std::string seed = test::slurp(std::string(RIDGE_SOURCE_DIR) + "/data/devices/v100-sxm2.json");
  ASSERT_FALSE(seed.empty());
  survive_mutations(seed, [](const std::string& s) { parse_device(s, "v100-sxm2.json"); });
  // A file with measured ceilings (the "achieved" block) as well.
  const std::string h100 = test::slurp(std::string(RIDGE_SOURCE_DIR) + "/data/devices/h100-sxm.json");
  ASSERT_NE(h100.find("\"achieved\""), std::string::npos);
  survive_mutations(h100, [](const std::string& s) { (void)parse_device(s, "h100-sxm.json").achieved_fraction(Precision::FP16); });
}

TEST(ParsersRobust, MeasurementFiles) {
  const std::string seed = R"({"model": "m", "device": "v100", "layers": [
    {"name": "a", "op": "Conv", "time_s": 1e-3, "flops": 1000, "bytes": "2000"},
    {"name": "b", "op": "Relu", "forward": {"median_s": 1e-4}, "flops": 10, "bytes_read": 8, "bytes_written": 8, "cost_known": true}]})";
  survive_mutations(seed, [](const std::string& s) { samples_from({parse_measurement(s, "m.json")}); });
  // Ingested kernels with FLOPs per pipe, fitted and predicted at per-pipe peaks.
  const std::string kernels = R"({"model": "k", "kernels": [
    {"name": "a", "family": "gemm", "time_s": 1e-5, "flops": 30, "flops_tensor": 20, "flops_fp32": 10, "flops_fp16": null, "flops_fp64": 0, "dram_bytes": 64},
    {"name": "b", "family": "gemm", "time_s": 2e-5, "flops": "60", "flops_tensor": 40, "flops_fp32": "20", "flops_fp16": 0, "flops_fp64": 0, "dram_bytes": 128},
    {"name": "c", "family": "gemm", "time_s": 4e-5, "flops": 120, "flops_tensor": 80, "flops_fp32": 40, "flops_fp16": 0, "flops_fp64": 0, "dram_bytes": 300}]})";
  PredictOptions hw;
  hw.peak_flop_per_s = 1e12, hw.bandwidth_bytes_per_s = 1e9, hw.pipe_peaks = {1e12, 1e11, 5e10};
  survive_mutations(kernels, [&](const std::string& s) {
    const auto samples = samples_from({parse_measurement(s, "k.json")});
    if (samples.empty()) return;
    const Calibration cal = calibrate(samples, hw.peak_flop_per_s, hw.bandwidth_bytes_per_s, 1, hw.pipe_peaks);
    for (const Sample& x : samples) (void)predict_sample(x, cal, hw);
  });
}

TEST(ParsersRobust, CalibrationFiles) {
  const std::string seed = R"({"format": "ridge-calibration", "version": 1, "device": "machine", "precision": "fp32",
    "combine": "sum", "fallback": {"ppp": 0.5, "ppp_mem": null, "overhead_s": 1e-6, "samples": 3},
    "classes": {"Conv": {"ppp": 0.6, "ppp_mem": 0.7, "samples": 4}}, "best_measured_flop_per_s": 2e12, "best_measured_of_peak": 1.0,
    "gemm_shapes": {"log2_mn": [10, 20], "log2_k": [8], "ppp": [[0.5], [0.9]], "samples": [3, 3]}})";
  Device gpu;  // a ceiling of 1.2e12 of a 2e12 peak: the seed's best (all of its peak) is scaled
  gpu.id = "gpu";
  gpu.peak_flops = {{Precision::FP32, 2e12}};
  gpu.achieved_flops = {{Precision::FP32, 1.2e12}};
  survive_mutations(seed, [&](const std::string& s) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(s);
    } catch (const nlohmann::json::exception&) {
      return;  // read_calibration turns this into ridge::Error; here only the structure check is under test
    }
    Calibration c = calibration_from_json(j, "cal.json");
    (void)cap_at_achieved_flops(c, gpu, Precision::FP32);
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
