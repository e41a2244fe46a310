// The shipped H200 CNN calibration (data/calibrations/h200-bf16.json, made by bench/gpu/h200_cnn_check.sh --write
// from the ncu profiles of tests/data/gpu/h200) and what `ridge predict resnet50 --device h200 --precision amp-bf16`
// says for our own H200 runs, against the GPU kernel time of the same steps read from the torch.profiler files in
// place. Nothing measured is written here: every measured number is read from the fixtures. docs/model.md, "H200".
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "support/test_support.hpp"

namespace ridge {
namespace {

using nlohmann::json;

const std::string kH200 = std::string(RIDGE_SOURCE_DIR) + "/tests/data/gpu/h200/";

json ridge_json(const std::string& args) {
  const auto r = test::run_ridge(args + " --format json");
  EXPECT_EQ(r.exit_code, 0) << args << ": " << r.err;
  return r.exit_code == 0 ? json::parse(r.out) : json::object();
}

// The two captures the calibration and its cross-model check use, ingested as the bench script does.
struct Captures {
  std::string dir = test::temp_dir();
  std::string resnet50 = dir + "/resnet50.json", llama = dir + "/llama3-8b.json";
  Captures() {
    EXPECT_EQ(test::run_ridge("ingest " + kH200 + "ncu_resnet50_train_bs64.csv " + kH200 +
                              "ncu_resnet50_train_bs64_rest.csv " + kH200 + "ncu_resnet50_infer_bs256.csv --json " +
                              resnet50).exit_code, 0);
    EXPECT_EQ(test::run_ridge("ingest " + kH200 + "ncu_llama_prefill512.csv " + kH200 + "ncu_llama_decode_bs1.csv --json " +
                              llama).exit_code, 0);
  }
};

const Captures& captures() {
  static const Captures c;
  return c;
}

TEST(CnnH200, ShippedCalibrationIsTheFitOfTheResnet50Profiles) {
  const std::string out = captures().dir + "/refit.json";
  ridge_json("calibrate " + captures().resnet50 + " --device h200 --precision bf16 -o " + out);
  const json refit = json::parse(test::slurp(out));
  const json shipped = json::parse(test::slurp(std::string(RIDGE_SOURCE_DIR) + "/data/calibrations/h200-bf16.json"));
  EXPECT_EQ(shipped["device"], "h200-sxm");
  EXPECT_EQ(shipped["precision"], "bf16");
  ASSERT_EQ(refit["classes"].size(), shipped["classes"].size());
  for (const auto& [cls, f] : shipped["classes"].items()) {
    EXPECT_EQ(refit["classes"][cls].value("flops_pipe", "peak"), f.value("flops_pipe", "peak")) << cls;
    for (const char* k : {"ppp", "ppp_mem", "overhead_s"}) {
      if (!f.contains(k) || f[k].is_null()) continue;
      EXPECT_NEAR(refit["classes"][cls][k].get<double>() / f[k].get<double>(), 1.0, 1e-6) << cls << "." << k;
    }
  }
  // BatchNorm's kernels do their FLOPs on the fp32 vector pipe: its PPP is a fraction of that pipe's peak, and the
  // conv kernels' of the tensor cores'.
  EXPECT_EQ(shipped["classes"]["normalization"].value("flops_pipe", ""), "vector");
  EXPECT_FALSE(shipped["classes"]["conv"].contains("flops_pipe"));
}

// Fit on resnet50, predict the Llama kernels, and the reverse: each capture's summed kernel time from a fit on the
// other alone.
TEST(CnnH200, CrossModelErrorsAreLow) {
  const json fit = ridge_json("calibrate " + captures().resnet50 + " " + captures().llama +
                              " --device h200 --precision bf16 -o " + captures().dir + "/both.json");
  ASSERT_EQ(fit["leave_one_model_out"].size(), 2u);
  for (const auto& row : fit["leave_one_model_out"])
    EXPECT_LT(row["end_to_end_error"].get<double>(), 15.0) << row["model"];  // 9.5 % (Llama), 4.7 % (resnet50)
}

// Calibrated predictions of the four timed resnet50 cases against their GPU kernel time; the uncalibrated bound is
// below every measurement and further from it. Tolerances are a few points above the errors of 2026-12-01 (train
// -3.5 % / -0.1 %, inference batch 1 +7.7 %, batch 256 +4.3 %). Before BatchNorm's FLOPs were timed at the vector
// pipe's peak its calibration was fitted at (flops_pipe), the training steps came out 13-15 % fast.
TEST(CnnH200, CalibratedResnet50IsCloseToTheMeasuredKernelTime) {
  struct Case {
    const char* mode;
    int batch;
    const char* profile;
    double tolerance;
  };
  for (const Case& c : {Case{"train", 64, "torch_resnet50_train_bs64_trace.json", 0.07},
                        Case{"train", 256, "torch_resnet50_train_bs256_table.txt", 0.05},
                        Case{"infer", 1, "torch_resnet50_infer_bs1_table.txt", 0.12},
                        Case{"infer", 256, "torch_resnet50_infer_bs256_trace.json", 0.08}}) {
    const std::string args = "predict resnet50 --device h200 --precision amp-bf16 --batch " + std::to_string(c.batch) +
                             (std::string(c.mode) == "train" ? " --train" : "");
    const json cal = ridge_json(args);
    const json bound = ridge_json(args + " --calibration none");
    const json measured = ridge_json("ingest " + kH200 + c.profile);
    const double gpu = measured["totals"]["kernel_time_s"].get<double>();
    const double predicted = cal["total_time_s"].get<double>(), upper = bound["total_time_s"].get<double>();
    EXPECT_EQ(cal["time_kind"], "calibrated") << c.profile;
    EXPECT_EQ(bound["time_kind"], "upper_bound") << c.profile;
    EXPECT_NEAR(predicted / gpu, 1.0, c.tolerance) << c.profile << ": predicted " << predicted << " s, kernels " << gpu;
    EXPECT_LT(upper, gpu) << c.profile;
    EXPECT_LT(std::abs(predicted - gpu), std::abs(upper - gpu)) << c.profile;
  }
}

}  // namespace
}  // namespace ridge
