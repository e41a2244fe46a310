// Precision modes, the op-class/kernel-family table, which calibration applies, refused mismatches and sanity
// flags (src/model/precision_mode.cpp, src/model/trust.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "ridge/error.hpp"
#include "ridge/llm_analysis.hpp"
#include "ridge/load.hpp"
#include "ridge/precision_mode.hpp"
#include "ridge/predict.hpp"
#include "support/test_support.hpp"

namespace ridge {
namespace {

constexpr Count kResnet50Params = 25557032;  // torchvision resnet50

MemoryEstimate resnet50_memory(const std::string& precision, Optimizer opt) {
  const PrecisionMode m = require_precision_mode(precision);
  LoadOptions lo;
  lo.batch = 2;
  lo.dtype = m.activation_dtype;
  return estimate_memory(load_model("resnet50", lo), opt, param_storage(m));
}

TEST(PrecisionModes, AmpKeepsFp32WeightsGradientsAndStatesWithHalfActivations) {
  for (const char* name : {"amp-bf16", "amp-fp16"}) {
    const PrecisionMode m = require_precision_mode(name);
    EXPECT_EQ(m.activation_bytes, 2) << name;
    EXPECT_EQ(m.weight_bytes, 4) << name;
    EXPECT_EQ(m.gradient_bytes, 4) << name;
    EXPECT_EQ(m.optimizer_state_bytes, 4) << name;
    EXPECT_EQ(m.master_bytes, 0) << name;  // the fp32 parameters are the master weights
    EXPECT_EQ(m.allreduce_bytes, 4) << name;
  }
  EXPECT_EQ(require_precision_mode("amp-bf16").compute, Precision::BF16);
  EXPECT_EQ(require_precision_mode("amp-fp16").compute, Precision::FP16);
  EXPECT_TRUE(require_precision_mode("amp-fp16").loss_scaling);
  EXPECT_FALSE(require_precision_mode("amp-bf16").loss_scaling);
  EXPECT_EQ(require_precision_mode("fp16").weight_bytes, 2);
  EXPECT_EQ(require_precision_mode("fp16").allreduce_bytes, 2);
  EXPECT_EQ(require_precision_mode("tf32").compute, Precision::TF32);
  EXPECT_EQ(require_precision_mode("tf32").activation_bytes, 4);
  EXPECT_EQ(require_precision_mode("half").name, "fp16");
  EXPECT_EQ(require_precision_mode("AMP_BF16").name, "amp-bf16");
  EXPECT_THROW(require_precision_mode("fp8"), UsageError);
}

TEST(PrecisionModes, Resnet50MemoryPerPrecisionIsExact) {
  const MemoryEstimate amp = resnet50_memory("amp-bf16", Optimizer::Adam);
  EXPECT_EQ(amp.param_bytes, 4 * kResnet50Params);
  EXPECT_EQ(amp.grad_bytes, 4 * kResnet50Params);
  EXPECT_EQ(amp.optimizer_bytes, 8 * kResnet50Params);
  EXPECT_EQ(amp.master_bytes, 0);
  const MemoryEstimate bf16 = resnet50_memory("bf16", Optimizer::Adam);
  EXPECT_EQ(bf16.param_bytes, 2 * kResnet50Params);
  EXPECT_EQ(bf16.grad_bytes, 2 * kResnet50Params);
  EXPECT_EQ(bf16.optimizer_bytes, 4 * kResnet50Params);
  EXPECT_EQ(bf16.buffer_bytes * 2, amp.buffer_bytes);
  const MemoryEstimate fp32 = resnet50_memory("fp32", Optimizer::Momentum);
  EXPECT_EQ(fp32.param_bytes, 4 * kResnet50Params);
  EXPECT_EQ(fp32.optimizer_bytes, 4 * kResnet50Params);
  // Activations follow the activation type: amp saves about half of what fp32 saves (fp32 BN statistics and
  // int64 pool indices stay), and the same as pure bf16.
  EXPECT_EQ(amp.saved_bytes, bf16.saved_bytes);
  EXPECT_LT(amp.saved_bytes, fp32.saved_bytes * 6 / 10);
  EXPECT_EQ(amp.training_peak_bytes,
            amp.param_bytes + amp.buffer_bytes + amp.grad_bytes + amp.optimizer_bytes + amp.saved_bytes);
}

TEST(PrecisionModes, PeakChosenPerPrecisionFromTheDeviceFiles) {
  const auto devices = load_devices();
  const Device a100 = find_device(devices, "a100");
  EXPECT_DOUBLE_EQ(a100.require_peak(require_precision_mode("amp-bf16").compute), 312e12);
  EXPECT_DOUBLE_EQ(a100.require_peak(require_precision_mode("amp-fp16").compute), 312e12);
  EXPECT_DOUBLE_EQ(a100.require_peak(require_precision_mode("tf32").compute), 156e12);
  EXPECT_DOUBLE_EQ(a100.require_peak(require_precision_mode("fp32").compute), 19.5e12);
  const Device v100 = find_device(devices, "v100");
  EXPECT_DOUBLE_EQ(v100.require_peak(require_precision_mode("amp-fp16").compute), 125e12);
  EXPECT_THROW(v100.require_peak(require_precision_mode("amp-bf16").compute), Error);  // no bf16 on Volta
}

TEST(OpClassTable, GpuKernelFamiliesMeetPredictionClasses) {
  EXPECT_EQ(calibration_class_of_kernel_family("conv-implicit-gemm"), "conv");
  EXPECT_EQ(calibration_class_of_kernel_family("conv-winograd"), "conv");
  EXPECT_EQ(calibration_class_of_kernel_family("gemm"), "gemm");
  EXPECT_EQ(kernel_family_of_op_class("Conv"), "conv");
  EXPECT_EQ(kernel_family_of_op_class("DepthwiseConv"), "conv");
  EXPECT_EQ(kernel_family_of_op_class("Linear"), "gemm");
  EXPECT_EQ(kernel_family_of_op_class("BatchNorm"), "normalization");
  EXPECT_EQ(kernel_family_of_op_class("NoSuchClass"), "");
  Calibration c;
  c.by_class["conv"] = Efficiency{0.5, 0.5, {}, 10, {}};
  c.fallback.samples = 10;
  ASSERT_NE(c.find("Conv"), nullptr);
  EXPECT_DOUBLE_EQ(c.find("Conv")->ppp, 0.5);
  EXPECT_EQ(c.find("Linear"), nullptr);
  // Predictions say per row which factors applied.
  LayerWork conv{"c", "Conv", 1000, 100}, fc{"f", "Linear", 1000, 100};
  PredictOptions opt;
  opt.peak_flop_per_s = 1e9;
  opt.bandwidth_bytes_per_s = 1e9;
  opt.calibration = c;
  const Prediction p = predict({conv, fc}, opt);
  EXPECT_TRUE(p.calibrated);
  EXPECT_EQ(p.layers[0].calibration, "Conv");
  EXPECT_EQ(p.layers[1].calibration, "fallback");
  opt.calibration = Calibration{};
  EXPECT_FALSE(predict({conv}, opt).calibrated);
  EXPECT_EQ(predict({conv}, opt).layers[0].calibration, "uncalibrated");
}

TEST(Trust, ShippedCalibrationsApplyByDeviceFamilyAndPrecision) {
  const auto v100 = builtin_calibration("v100-pcie", Precision::FP16);
  ASSERT_TRUE(v100.has_value());
  EXPECT_EQ(v100->device_family, "v100");
  EXPECT_GT(v100->fallback.samples, 700);
  EXPECT_FALSE(builtin_calibration("v100-sxm2", Precision::FP32).has_value());  // fitted at the fp16 peak only
  EXPECT_FALSE(builtin_calibration("h100-sxm", Precision::TF32).has_value());  // Vidur measured fp16 only
  // The A100 profile fit (a100-fp16.json, two attention micro-benchmarks) passes its leave-one-model-out check,
  // but a fit with a GEMM-shape table comes first: the Vidur fit applies, at fp16 and bf16 alike.
  for (Precision p : {Precision::FP16, Precision::BF16}) {
    const auto a100 = builtin_calibration("a100-sxm4-40gb", p);
    ASSERT_TRUE(a100.has_value());
    EXPECT_EQ(std::filesystem::path(a100->file).filename(), "a100-fp16-vidur.json");
  }
}

TEST(Trust, OneFolderScannerServesCnnAndLlmCalibrations) {
  const std::string dir = test::temp_dir() + "/scan";
  std::filesystem::create_directories(dir);
  // Name order decides between matches; other formats and broken files in the folder are skipped.
  std::ofstream(dir + "/0-allreduce.json") << R"({"format": "ridge-allreduce-calibration", "device": "a100"})";
  std::ofstream(dir + "/1-broken.json") << "{not json";
  std::ofstream(dir + "/2-a100.json") << R"({"format": "ridge-calibration", "device": "a100-sxm4-80gb",
      "precision": "fp16", "fallback": {"ppp": 0.5, "ppp_mem": 0.5, "samples": 9}})";
  std::ofstream(dir + "/3-a100-bf16.json") << R"({"format": "ridge-calibration", "device_family": "a100",
      "precision": "bf16", "fallback": {"ppp": 0.4, "ppp_mem": 0.4, "samples": 9}})";
  std::ofstream(dir + "/notes.txt") << "ignored";
  auto family_and = [](const std::string& precision) {
    return [precision](const Calibration& c) { return c.device_family == "a100" && c.precision == precision; };
  };
  const auto fp16 = find_calibration(dir, family_and("fp16"));
  ASSERT_TRUE(fp16.has_value());
  EXPECT_EQ(fp16->device_family, "a100");  // filled in from the device id
  EXPECT_EQ(std::filesystem::path(fp16->file).filename(), "2-a100.json");
  const auto bf16 = find_calibration(dir, family_and("bf16"));
  ASSERT_TRUE(bf16.has_value());
  EXPECT_DOUBLE_EQ(bf16->fallback.ppp, 0.4);
  EXPECT_FALSE(find_calibration(dir, family_and("tf32")).has_value());
  EXPECT_FALSE(find_calibration(dir + "/missing", family_and("fp16")).has_value());
  // Both shipped lookups go through it: both folders have H100 factors (the CNN one with a GEMM-shape table).
  EXPECT_TRUE(builtin_llm_calibration("h100-sxm", Precision::BF16).has_value());
  EXPECT_TRUE(builtin_llm_calibration("h100-sxm", Precision::BF16)->gemm_shapes.empty());
  EXPECT_FALSE(builtin_calibration("h100-sxm", Precision::FP16)->gemm_shapes.empty());
}

TEST(Trust, MismatchedCalibrationsAreRefusedUnlessForced) {
  Calibration cpu;
  cpu.device = "machine";
  cpu.precision = "fp32";
  cpu.file = "cpu.json";
  try {
    check_calibration_applies(cpu, "a100-sxm4-40gb", Precision::FP32, false);
    FAIL() << "expected a refusal";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("machine"), std::string::npos) << m;
    EXPECT_NE(m.find("a100-sxm4-40gb"), std::string::npos) << m;
    EXPECT_NE(m.find("--force"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
  EXPECT_EQ(check_calibration_applies(cpu, "a100-sxm4-40gb", Precision::FP32, true).size(), 1u);
  Calibration v100 = cpu;
  v100.device = "v100-sxm2";
  v100.precision = "fp16";
  EXPECT_TRUE(check_calibration_applies(v100, "v100-pcie", Precision::FP16, false).empty());
  EXPECT_THROW(check_calibration_applies(v100, "v100-pcie", Precision::FP32, false), Error);
  EXPECT_TRUE(check_calibration_applies(Calibration{}, "a100", Precision::FP32, false).empty());  // hand-set
}

TEST(Trust, MeasurementsOfAnotherModelBatchDeviceOrPrecisionAreRefused) {
  const RunIdentity want{"resnet50", "a100-sxm4-40gb", 10, "fp32"};
  EXPECT_TRUE(check_run_matches("m.json", {"resnet50", "NVIDIA A100-SXM4-40GB (0)", 10, "fp32"}, want, false).empty());
  EXPECT_THROW(check_run_matches("m.json", {"resnet18", "", 0, ""}, want, false), Error);
  EXPECT_THROW(check_run_matches("m.json", {"", "cpu", 0, ""}, want, false), Error);
  EXPECT_THROW(check_run_matches("m.json", {"", "", 4, ""}, want, false), Error);
  EXPECT_THROW(check_run_matches("m.json", {"", "", 0, "fp16"}, want, false), Error);
  EXPECT_EQ(check_run_matches("m.json", {"resnet18", "cpu", 4, "fp16"}, want, true).size(), 4u);
  try {
    check_run_matches("m.json", {"", "", 4, ""}, want, false);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("batch is 4, expected 10"), std::string::npos) << e.what();
  }
}

TEST(Trust, ProfileFileNamesSayModelGpuAndBatch) {
  const RunIdentity r18 = identity_from_file_name("x/01_ncu_text_nyu_A100_resnet18_bs10_train_smsp_flops_dram.log");
  EXPECT_EQ(r18.model, "resnet18");
  EXPECT_EQ(r18.device, "a100");
  EXPECT_EQ(r18.batch, 10);
  const RunIdentity r50 = identity_from_file_name("03_nsys_gputrace_csv_nyu_A100_resnet50_bs10_train.csv");
  EXPECT_EQ(r50.model, "resnet50");
  EXPECT_THROW(check_run_matches("03.csv", r50, r18, false), Error);
  EXPECT_EQ(identity_from_file_name("profile.csv").model, "");
}

TEST(Trust, SanityFlags) {
  // 2 TFLOP in 1 s on a 1 TFLOP/s roof.
  EXPECT_EQ(roof_flags(Count(2'000'000'000'000), 1'000'000, 1.0, 1e12, 1e12), std::vector<std::string>{"above-roof"});
  EXPECT_TRUE(roof_flags(Count(500'000'000'000), 1'000'000, 1.0, 1e12, 1e12).empty());
  EXPECT_EQ(timing_flags(1.0, 0.6, 1.4), std::vector<std::string>{"busy-machine"});
  EXPECT_TRUE(timing_flags(1.0, 0.95, 1.05).empty());
  EXPECT_EQ(thread_peak_flags(100, 90), std::vector<std::string>{"2-thread-peak-below-1-thread"});
  EXPECT_TRUE(thread_peak_flags(100, 190).empty());
  Calibration c;
  c.leave_one_out_error = 0.8;
  c.by_class["gemm"] = Efficiency{2.6, 0.5, {}, 8, {}};
  const auto flags = calibration_flags(c);
  ASSERT_EQ(flags.size(), 2u);
  EXPECT_EQ(flags[0], "calibration-loo-error>50%");
  EXPECT_EQ(flags[1], "above-roof:gemm");
  c.leave_one_out_error = 0.2;
  c.by_class.clear();
  EXPECT_TRUE(calibration_flags(c).empty());
}

}  // namespace
}  // namespace ridge

namespace ridge {
namespace {

TEST(Trust, MeasuredRowsWithWideTimingSpreadAreFlaggedBusy) {
  const MeasuredRun m = parse_measurement(
      R"({"model": "m", "layers": [{"name": "a", "time_s": 1.0, "min_s": 0.5, "max_s": 2.0, "flops": 10},
                                   {"name": "b", "time_s": 1.0, "min_s": 0.98, "max_s": 1.02, "flops": 10},
                                   {"name": "c", "time_s": 1.0, "spread_percent": 80, "flops": 10}],
          "batch": 4, "precision": "fp32", "device": "cpu"})",
      "m.json");
  ASSERT_EQ(m.layers.size(), 3u);
  EXPECT_EQ(m.layers[0].flags, std::vector<std::string>{"busy-machine"});
  EXPECT_TRUE(m.layers[1].flags.empty());
  EXPECT_EQ(m.layers[2].flags, std::vector<std::string>{"busy-machine"});
  EXPECT_EQ(m.batch, 4);
  EXPECT_EQ(m.precision, "fp32");
  // CPU measurements at batch 4 are not A100 measurements at batch 10.
  EXPECT_THROW(check_run_matches(m.file, {m.model, m.device, m.batch, m.precision}, {"", "a100", 10, ""}, false), Error);
}

}  // namespace
}  // namespace ridge

namespace ridge {
namespace {

// A GPU with a 1,000 TFLOP/s bf16/fp16 peak whose best matmul sustains 800 (its achieved.flops), and an fp32 peak.
Device ceiling_gpu() {
  Device d;
  d.id = "gpu-x";
  d.kind = "gpu";
  d.peak_flops = {{Precision::FP16, 1e15}, {Precision::BF16, 1e15}, {Precision::TF32, 5e14}, {Precision::FP32, 6e13}};
  d.achieved_flops = {{Precision::BF16, 8e14}};
  d.bandwidth_bytes_per_s = {{"dram", 3e12}};
  return d;
}

// Fitted factors from measurements whose best ran at `best` FLOP/s: a tensor class, a vector-pipe class, a class
// whose compute term was fitted to zero, a fallback and a two-node GEMM-shape table.
Calibration fitted_at(double best) {
  Calibration c;
  c.file = "/data/fit.json";
  c.best_measured_flop_per_s = best;
  c.best_measured_of_peak = best / 1e15;  // fitted against ceiling_gpu's 1,000 TFLOP/s
  c.fallback = {0.9, 0.6, 2e-6, 10};
  c.by_class["gemm"] = {0.88, 1.0, 5e-6, 40};
  c.by_class["normalization"] = {0.5, 0.4, 2e-6, 8};
  c.by_class["normalization"].vector_pipe = true;
  c.by_class["elementwise"] = {std::numeric_limits<double>::infinity(), 0.9, 1e-6, 8};
  c.gemm_shapes.log2_mn = {10, 20};
  c.gemm_shapes.log2_k = {10};
  c.gemm_shapes.ppp = {0.5, 0.9};
  return c;
}

TEST(MeasuredCeiling, AchievedFractionIsPerPrecisionAndHalvesStandInForEachOther) {
  const Device d = ceiling_gpu();
  EXPECT_DOUBLE_EQ(*d.achieved_fraction(Precision::BF16), 0.8);
  EXPECT_DOUBLE_EQ(*d.achieved_fraction(Precision::FP16), 0.8);  // only bf16 measured: same tensor cores
  EXPECT_FALSE(d.achieved_fraction(Precision::TF32));
  EXPECT_FALSE(d.achieved_fraction(Precision::FP64));  // no peak either
}

TEST(MeasuredCeiling, FitsAboveTheCeilingAreScaledByTheRatioOfTheBestMatmuls) {
  Calibration c = fitted_at(1e15);  // measured at 1,000 TFLOP/s, the GPU sustains 800: scale 0.8
  const std::string note = cap_at_achieved_flops(c, ceiling_gpu(), Precision::FP16);
  EXPECT_DOUBLE_EQ(c.by_class["gemm"].ppp, 0.88 * 0.8);
  EXPECT_DOUBLE_EQ(c.fallback.ppp, 0.9 * 0.8);
  EXPECT_DOUBLE_EQ(c.gemm_shapes.ppp[0], 0.5 * 0.8);
  EXPECT_DOUBLE_EQ(c.gemm_shapes.ppp[1], 0.9 * 0.8);
  EXPECT_DOUBLE_EQ(c.by_class["normalization"].ppp, 0.5);  // vector pipe: not the tensor cores' ceiling
  EXPECT_TRUE(std::isinf(c.by_class["elementwise"].ppp));  // no compute term stays none
  EXPECT_DOUBLE_EQ(c.by_class["gemm"].ppp_mem, 1.0);       // memory and overhead untouched
  EXPECT_DOUBLE_EQ(*c.by_class["gemm"].overhead_s, 5e-6);
  EXPECT_EQ(note, c.ceiling_note);
  for (const char* part : {"fit.json", "100.0 % of their peak (1000.0 TFLOP/s)", "80.0 % (800.0 TFLOP/s)", "gpu-x", "0.800",
                           "faster than this GPU sustains"})
    EXPECT_NE(note.find(part), std::string::npos) << part << " in: " << note;
}

TEST(MeasuredCeiling, NothingChangesBelowTheCeilingWithoutOneOrForUnfittedFactors) {
  const Calibration below = fitted_at(7.9e14);
  Calibration c = below;
  EXPECT_EQ(cap_at_achieved_flops(c, ceiling_gpu(), Precision::BF16), "");
  EXPECT_DOUBLE_EQ(c.by_class["gemm"].ppp, 0.88);
  EXPECT_EQ(c.ceiling_note, "");
  c = fitted_at(1e15);
  EXPECT_EQ(cap_at_achieved_flops(c, ceiling_gpu(), Precision::TF32), "");  // no tf32 ceiling measured
  c.best_measured_of_peak.reset();  // a file fitted before the best rate was recorded
  EXPECT_EQ(cap_at_achieved_flops(c, ceiling_gpu(), Precision::BF16), "");
  Calibration bound;  // the roofline bound (ppp 1) and hand-set factors are what they say
  bound.best_measured_of_peak = 1.0;
  EXPECT_EQ(cap_at_achieved_flops(bound, ceiling_gpu(), Precision::BF16), "");
  EXPECT_DOUBLE_EQ(bound.fallback.ppp, 1.0);
}

TEST(MeasuredCeiling, AnUpperBoundSaysHowFarBelowThePeakTheBestMeasuredMatmulRuns) {
  const std::string note = measured_ceiling_note(ceiling_gpu(), Precision::FP16);
  for (const char* part : {"gpu-x", "fp16 peak (1000.0 TFLOP/s)", "80.0 %", "800.0 TFLOP/s"})
    EXPECT_NE(note.find(part), std::string::npos) << part << " in: " << note;
  EXPECT_EQ(measured_ceiling_note(ceiling_gpu(), Precision::TF32), "");  // none measured at tf32
}

TEST(MeasuredCeiling, BestMeasuredRateIsRecordedByTheFitAndRoundTrips) {
  std::vector<Sample> samples;
  for (int i = 1; i <= 4; ++i)
    samples.push_back({"m", "l" + std::to_string(i), "gemm", Count(i) * 1000000000, 1000000, 1e-5 * i * i});
  const Calibration c = calibrate(samples, 1e15, 3e12);
  ASSERT_TRUE(c.best_measured_flop_per_s);
  EXPECT_DOUBLE_EQ(*c.best_measured_flop_per_s, 1e9 / 1e-5);  // the first: 1 GFLOP in 10 us
  EXPECT_DOUBLE_EQ(*c.best_measured_of_peak, 1e14 / 1e15);    // of the peak it was fitted against
  const Calibration back = calibration_from_json(calibration_to_json(c), "c.json");
  EXPECT_DOUBLE_EQ(*back.best_measured_flop_per_s, *c.best_measured_flop_per_s);
  EXPECT_DOUBLE_EQ(*back.best_measured_of_peak, *c.best_measured_of_peak);
  nlohmann::json bad = calibration_to_json(c);
  bad["best_measured_flop_per_s"] = -1;
  test::expect_one_line_error([&] { calibration_from_json(bad, "c.json"); }, "c.json", "best_measured_flop_per_s: expected a positive number",
                              "negative best rate");
}

TEST(MeasuredCeiling, ShippedH100FitIsBroughtToTheH100sBestMatmulAndTheA100sIsNot) {
  const auto devices = load_devices();
  // Vidur's H100 GEMMs ran at up to 867 TFLOP/s; the best matmul published for an H100 SXM sustains 794.5.
  const auto h100 = llm_calibration(find_device(devices, "h100-sxm"), Precision::BF16, "builtin");
  ASSERT_TRUE(h100);
  EXPECT_NE(h100->ceiling_note.find("794.5 TFLOP/s"), std::string::npos) << h100->ceiling_note;
  const auto raw = builtin_llm_calibration("h100-sxm", Precision::BF16);
  ASSERT_TRUE(raw && raw->best_measured_flop_per_s && raw->best_measured_of_peak);
  EXPECT_NEAR(h100->by_class.at("gemm").ppp / raw->by_class.at("gemm").ppp, 7.945e14 / *raw->best_measured_flop_per_s,
              1e-12);  // the fit's device is the H100's: its peak cancels
  // Another board of the family with another peak compares fractions: 80 % of a 756 TFLOP/s peak measured.
  Device pcie = find_device(devices, "h100-pcie");
  pcie.achieved_flops[Precision::BF16] = 0.8 * *pcie.peak(Precision::BF16);
  Calibration on_pcie = *raw;
  cap_at_achieved_flops(on_pcie, pcie, Precision::BF16);
  EXPECT_NEAR(on_pcie.by_class.at("gemm").ppp / raw->by_class.at("gemm").ppp, 0.8 / *raw->best_measured_of_peak, 1e-12);
  // The A100's measured operators stayed below its 271.2 TFLOP/s: nothing changes.
  const auto a100 = llm_calibration(find_device(devices, "a100-sxm4-80gb"), Precision::FP16, "builtin");
  ASSERT_TRUE(a100);
  EXPECT_EQ(a100->ceiling_note, "");
  EXPECT_DOUBLE_EQ(a100->by_class.at("gemm").ppp, builtin_llm_calibration("a100", Precision::FP16)->by_class.at("gemm").ppp);
}

}  // namespace
}  // namespace ridge
