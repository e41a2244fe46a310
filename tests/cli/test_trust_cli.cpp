// `ridge predict/sweep/summary/calibrate/report` through the binary: precision modes, upper-bound labels,
// shipped calibrations, refused mismatches and flags.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>

#include "support/test_support.hpp"

namespace {

using nlohmann::json;
using ridge::test::run_ridge;

json run_json(const std::string& args) {
  const auto r = run_ridge(args + " --format json");
  EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
  return r.exit_code == 0 ? json::parse(r.out) : json::object();
}

TEST(CliTrust, UncalibratedPredictionsSayUpperBoundBesideTheNumber) {
  // tf32: Vidur measured fp16 GEMMs only, so the A100 has no calibration at the tf32 peak.
  const auto r = run_ridge("predict resnet50 --device a100 --batch 256 --train --precision tf32");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("samples/s [upper bound (uncalibrated)]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("time per iteration [upper bound (uncalibrated)]"), std::string::npos) << r.out;
  const json j = run_json("predict resnet50 --device a100 --batch 256 --train --precision tf32");
  EXPECT_EQ(j["calibrated"], false);
  EXPECT_EQ(j["time_kind"], "upper_bound");
  const auto csv = run_ridge("predict resnet50 --device a100 --batch 8 --format csv");
  EXPECT_NE(csv.out.find("upper bound (uncalibrated)"), std::string::npos) << csv.out;
  const auto md = run_ridge("predict resnet50 --device a100 --batch 8 --format md");
  EXPECT_NE(md.out.find("upper bound (uncalibrated)"), std::string::npos) << md.out;
}

TEST(CliTrust, ABatchTheDeviceCannotHoldIsRefusedUnlessForced) {
  // vgg16 training at batch 256 needs 18.5 GiB; a T4 has 16.
  const auto r = run_ridge("predict vgg16 --train -b 256 -d t4");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("needs 18.5 GiB, more than the 16.0 GiB of t4"), std::string::npos) << r.err;
  const json forced = run_json("predict vgg16 --train -b 256 -d t4 --force");
  EXPECT_EQ(forced["fits"], false);
  const json fits = run_json("predict vgg16 --train -b 32 -d t4");
  EXPECT_EQ(fits["fits"], true);
}

TEST(CliTrust, Int8HasNoTrainingMemoryInSummaryOrTrainingBatchInSweep) {
  const json s = run_json("summary resnet18 -p int8");
  EXPECT_TRUE(s["memory"]["training_peak_bytes"].is_null());
  EXPECT_TRUE(s["memory"]["saved_bytes"].is_null());
  EXPECT_GT(s["memory"]["inference_peak_bytes"].get<int64_t>(), 0);
  const auto sweep = run_ridge("sweep resnet18 -b 1,2 -p int8 -d a100");
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  EXPECT_NE(sweep.out.find("no training batch at an inference-only precision (int8)"), std::string::npos) << sweep.out;
  EXPECT_EQ(sweep.out.find("where the search stops"), std::string::npos) << sweep.out;
}

TEST(CliTrust, APredictionThatLeavesLayersOutSaysSoBesideTheNumber) {
  const auto r = run_ridge("predict " + std::string(RIDGE_SOURCE_DIR) + "/tests/load/data/incomplete_custom_op.onnx -d a100");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("samples/s [upper bound (uncalibrated); incomplete: "), std::string::npos) << r.out;
}

TEST(CliTrust, HandSetFactorsWithoutACalibrationAreLabelledAnEstimateNotABound) {
  // --ppp scales the peak down: the time is no longer a bound, and no output may call it one.
  const std::string run = "predict resnet50 --device a100 --batch 64 --train --precision tf32";
  const json bound = run_json(run);
  EXPECT_EQ(bound["inputs"]["combine"], "max");
  for (const char* flags : {"--ppp 0.5", "--combine sum", "--launch-overhead 5e-6"}) {
    const json j = run_json(run + " " + flags);
    EXPECT_EQ(j["calibrated"], false) << flags;
    EXPECT_EQ(j["time_kind"], "hand_set") << flags;
    EXPECT_GT(j["total_time_s"].get<double>(), bound["total_time_s"].get<double>()) << flags;
    const auto table = run_ridge(run + " " + flags);
    EXPECT_NE(table.out.find("samples/s [estimate (hand-set factors, uncalibrated)]"), std::string::npos) << table.out;
    EXPECT_EQ(table.out.find("upper bound"), std::string::npos) << flags << "\n" << table.out;
    EXPECT_EQ(table.out.find("times are bounds"), std::string::npos) << flags << "\n" << table.out;
  }
}

TEST(CliTrust, CombineAndLaunchOverheadSetByHandOverrideACalibrationsPerClassValues) {
  // The shipped A100 calibration fits an overhead and a combine per class; flags the user gives must still apply.
  const std::string run = "predict resnet18 --device a100 --batch 8 --precision fp16";
  const json base = run_json(run);
  ASSERT_EQ(base["time_kind"], "calibrated");
  const json slow = run_json(run + " --launch-overhead 1e-3");
  EXPECT_EQ(slow["time_kind"], "calibrated");
  // resnet18 runs 60+ kernels forward: a millisecond each.
  EXPECT_GT(slow["total_time_s"].get<double>(), base["total_time_s"].get<double>() + 0.05);
  const json sum = run_json(run + " --combine sum"), max = run_json(run + " --combine max");
  EXPECT_GT(sum["total_time_s"].get<double>(), max["total_time_s"].get<double>());
  EXPECT_EQ(sum["inputs"]["combine"], "sum");
}

TEST(CliTrust, ACalibrationFittedForCnnsIsRefusedByServeAndAnLlmOneByPredict) {
  const std::string dir = std::string(RIDGE_SOURCE_DIR) + "/data/calibrations";
  const auto serve = run_ridge("serve llama-2-7b -d a100 --calibration " + dir + "/a100-fp16-vidur.json");
  EXPECT_EQ(serve.exit_code, 1);
  EXPECT_NE(serve.err.find("fitted for CNN predictions (scope cnn)"), std::string::npos) << serve.err;
  const std::string predict = "predict resnet18 -d a100 -p fp16 --calibration " + dir + "/llm/a100-fp16.json";
  const auto refused = run_ridge(predict);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("scope llm"), std::string::npos) << refused.err;
  const auto forced = run_ridge(predict + " --force");
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_NE(forced.out.find("forced: "), std::string::npos) << forced.out;
  const auto off = run_ridge("serve llama-2-7b -d h100 --calibration none");
  EXPECT_NE(off.out.find("roofline upper bound (uncalibrated): --calibration none"), std::string::npos) << off.out;
}

TEST(CliTrust, A100H100AndA40CnnAtHalfPrecisionAreCalibratedFromVidur) {
  for (const char* device : {"a100", "h100", "a40"}) {
    const std::string run = fmt::format("resnet50 --device {} --batch 64 --train --precision amp-fp16", device);
    const json j = run_json("predict " + run);
    EXPECT_EQ(j["calibrated"], true) << device;
    EXPECT_EQ(j["time_kind"], "calibrated") << device;
    const auto table = run_ridge("predict " + run);
    EXPECT_NE(table.out.find("samples/s [calibrated]"), std::string::npos) << table.out;
    EXPECT_NE(table.out.find(fmt::format("{}-fp16-vidur.json", device)), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("conv (GEMM shape)"), std::string::npos) << table.out;
  }
}

TEST(CliTrust, H100CnnAtTf32HasNoCalibrationAndEveryOutputSaysUpperBound) {
  // ../shared has no H100 measurement at the tf32 peak (Vidur's operators ran fp16): peak-rate bounds.
  const std::string run = "resnet50 --device h100 --batch 64 --train --precision tf32";
  const json j = run_json("predict " + run);
  EXPECT_EQ(j["calibrated"], false);
  EXPECT_EQ(j["time_kind"], "upper_bound");
  const auto table = run_ridge("predict " + run);
  EXPECT_NE(table.out.find("samples/s [upper bound (uncalibrated)]"), std::string::npos) << table.out;
  const auto sweep = run_ridge("sweep " + run);
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  EXPECT_NE(sweep.out.find("upper bound (uncalibrated)"), std::string::npos) << sweep.out;
  const std::string html = ridge::test::temp_dir() + "/h100.html";
  const auto report = run_ridge("report resnet50 --device h100 --batch 64 --precision tf32 -o " + html);
  ASSERT_EQ(report.exit_code, 0) << report.err;
  std::ifstream in(html);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("upper bound (uncalibrated)"), std::string::npos);
}

TEST(CliTrust, ShippedV100CalibrationAppliesByDefaultWithNoClassAboveItsRoof) {
  const json j = run_json("predict resnet50 --device v100 --batch 64 --train --precision amp-fp16");
  EXPECT_EQ(j["calibrated"], true);
  EXPECT_EQ(j["time_kind"], "calibrated");
  EXPECT_EQ(j["precision"], "amp-fp16");
  // The DeepCAM GEMM kernels' FLOPs are timed at the peak of the pipe they ran on (tensor cores or fp32 units) and
  // their near-collinear FLOPs and bytes go to the roofline's limit: a PPP below 1, not the 2.62 of one peak.
  const std::string flags = j.value("flags", json::array()).dump();
  EXPECT_EQ(flags.find("above-roof"), std::string::npos) << flags;
  const json none = run_json("predict resnet50 --device v100 --batch 64 --precision amp-fp16 --calibration none");
  EXPECT_EQ(none["calibrated"], false);
}

TEST(CliTrust, PrecisionChangesMemoryTheSameWayInSummaryAndSweep) {
  const json amp = run_json("summary resnet50 --precision amp-bf16 --optimizer adam");
  EXPECT_EQ(amp["memory"]["param_bytes"], 102228128);
  EXPECT_EQ(amp["memory"]["grad_bytes"], 102228128);
  EXPECT_EQ(amp["memory"]["optimizer_bytes"], 204456256);
  const json pure = run_json("summary resnet50 --precision fp16 --optimizer adam");
  EXPECT_EQ(pure["memory"]["param_bytes"], 51114064);
  const json sweep = run_json("sweep resnet50 --batch 1 --precision fp16 --optimizer adam");
  const std::string text = sweep.dump();
  EXPECT_NE(text.find(std::to_string(pure["memory"]["training_peak_bytes"].get<long long>())), std::string::npos)
      << text.substr(0, 2000);
}

TEST(CliTrust, CalibrationFromAnotherDeviceIsRefusedUnlessForced) {
  const std::string file = ridge::test::temp_dir() + "/cpu-cal.json";
  std::ofstream(file) << R"({"format": "ridge-calibration", "device": "machine", "precision": "fp32",
                            "fallback": {"ppp": 0.5, "ppp_mem": 0.5, "samples": 20}})";
  const auto r = run_ridge("predict resnet50 --device a100 --calibration " + file);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("machine"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("a100-sxm4-40gb"), std::string::npos) << r.err;
  const auto forced = run_ridge("predict resnet50 --device a100 --calibration " + file + " --force");
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_NE(forced.out.find("forced:"), std::string::npos) << forced.out;
}

TEST(CliTrust, ReportRefusesProfilesOfDifferentModels) {
  RIDGE_REQUIRE_SHARED();
  const std::string p = ridge::test::shared_dir() + "/fixtures/profiles/";
  const std::string out = ridge::test::temp_dir() + "/r.html";
  const auto r = run_ridge("report resnet50 --batch 10 -o " + out + " --profile " + p +
                           "01_ncu_text_nyu_A100_resnet18_bs10_train_smsp_flops_dram.log --profile " + p +
                           "03_nsys_gputrace_csv_nyu_A100_resnet50_bs10_train.csv");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("resnet18"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("resnet50"), std::string::npos) << r.err;
}

// A report for one GPU refuses a profile captured on another; a model file's name up to its first dot names the
// model (resnet18.ext_emptybin.onnx is resnet18).
TEST(CliTrust, ReportAndIngestRefuseAProfileOfAnotherGpu) {
  RIDGE_REQUIRE_SHARED();
  const std::string a100 =
      ridge::test::shared_dir() + "/fixtures/profiles/01_ncu_text_nyu_A100_resnet18_bs10_train_smsp_flops_dram.log";
  const std::string out = ridge::test::temp_dir() + "/r.html";
  const auto r = run_ridge("report resnet18 --batch 10 --train --device v100 -o " + out + " --profile " + a100);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("measured device is a100, expected v100-sxm2"), std::string::npos) << r.err;
  const auto forced = run_ridge("report resnet18 --batch 10 --train --device v100 --force -o " + out + " --profile " + a100);
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  const auto same = run_ridge("ingest " + a100 + " --model " + ridge::test::shared_dir() +
                              "/fixtures/onnx/resnet18.ext_emptybin.onnx --batch 10 --train");
  EXPECT_EQ(same.exit_code, 0) << same.err;
}

}  // namespace
