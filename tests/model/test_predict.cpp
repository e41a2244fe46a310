// Roofline math, PALEO-style prediction (seed 003's K80 numbers) and batch scaling (communication: test_comm.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "ridge/error.hpp"
#include "ridge/predict.hpp"
#include "support/test_support.hpp"

namespace ridge {
namespace {

LayerWork layer(std::string name, Count flops, Count bytes, std::string op_class = "Conv") {
  LayerWork w;
  w.name = std::move(name);
  w.op_class = std::move(op_class);
  w.flops = flops;
  w.bytes = bytes;
  return w;
}

PredictOptions hardware(double peak, double bw, double launch = 0) {
  PredictOptions o;
  o.peak_flop_per_s = peak;
  o.bandwidth_bytes_per_s = bw;
  o.kernel_launch_s = launch;
  return o;
}

TEST(Roofline, PlacesWorkBelowAndAboveTheRidgePoint) {
  // V100 fp32: ridge at 15.7e12 / 900e9 = 17.44 FLOP/byte.
  const auto mem = roofline_point(1000, 100, 15.7e12, 900e9);
  EXPECT_DOUBLE_EQ(mem.intensity_flop_per_byte, 10.0);
  EXPECT_DOUBLE_EQ(mem.attainable_flop_per_s, 10.0 * 900e9);
  EXPECT_NEAR(mem.ridge_flop_per_byte, 17.444, 1e-3);
  EXPECT_EQ(mem.bound, Bound::Memory);
  EXPECT_DOUBLE_EQ(mem.time_lower_bound_s, 100 / 900e9);

  const auto cmp = roofline_point(100000, 1000, 15.7e12, 900e9);
  EXPECT_EQ(cmp.bound, Bound::Compute);
  EXPECT_DOUBLE_EQ(cmp.attainable_flop_per_s, 15.7e12);
  EXPECT_DOUBLE_EQ(cmp.time_lower_bound_s, 100000 / 15.7e12);

  EXPECT_EQ(roofline_point(10, 0, 1e12, 1e9).bound, Bound::Compute);
  EXPECT_EQ(roofline_point(0, 0, 1e12, 1e9).bound, Bound::None);
  // Seed 002's measured ResNet-50 on V100 sits at AI 19.68 > 17.44: compute side of the ridge.
  EXPECT_EQ(roofline_point(71858381540, 3651000000, 15.7e12, 900e9).bound, Bound::Compute);
}

TEST(Predict, ReproducesSeed003K80Numbers) {
  // Lu et al. FLOPs per model on the K80 board at PPP 1 (8.73 TFLOPS fp32, 2.91 TFLOPS fp64), no memory term.
  struct Case { Count flops; double single_s, single_per_s, double_s, double_per_s; };
  const Case cases[] = {
      {15503000000, 0.0017758304696449026, 563.1168161001096, 0.005327491408934708, 187.7056053667032},  // VGG16
      {1606000000, 0.00018396334478808707, 5435.865504358655, 0.0005518900343642612, 1811.9551681195517}, // GoogLeNet
      {3922000000, 0.0004492554410080183, 2225.9051504334525, 0.001347766323024055, 741.9683834778174},   // ResNet50
  };
  for (const auto& c : cases) {
    const auto single = predict({layer("model", c.flops, 0)}, hardware(8.73e12, 480e9));
    EXPECT_NEAR(single.total_time_s, c.single_s, 1e-15);
    EXPECT_NEAR(single.samples_per_s, c.single_per_s, 1e-9);
    const auto dbl = predict({layer("model", c.flops, 0)}, hardware(2.91e12, 480e9));
    EXPECT_NEAR(dbl.total_time_s, c.double_s, 1e-15);
    EXPECT_NEAR(dbl.samples_per_s, c.double_per_s, 1e-9);
  }
}

TEST(Predict, PaleoSumsTermsRooflineOverlapsThem) {
  auto opt = hardware(1e12, 1e11);
  const std::vector<LayerWork> work = {layer("conv", 2000000, 100000), layer("relu", 1000, 800000, "Unary")};
  // conv: 2 us compute, 1 us memory; relu: 1 ns compute, 8 us memory.
  opt.combine = Combine::Sum;
  const auto sum = predict(work, opt);
  EXPECT_NEAR(sum.layers[0].time_s, 3e-6, 1e-15);
  EXPECT_NEAR(sum.layers[1].time_s, 8.001e-6, 1e-15);
  EXPECT_EQ(sum.layers[0].bound, Bound::Compute);
  EXPECT_EQ(sum.layers[1].bound, Bound::Memory);
  opt.combine = Combine::Max;
  const auto max = predict(work, opt);
  EXPECT_NEAR(max.layers[0].time_s, 2e-6, 1e-15);
  EXPECT_NEAR(max.total_time_s, 10e-6, 1e-15);
}

TEST(Predict, PppScalesTermsAndLaunchOverheadAddsPerKernel) {
  auto opt = hardware(1e12, 1e11, 5e-6);
  opt.calibration.fallback.ppp = 0.5;
  opt.calibration.fallback.ppp_mem = 0.25;
  const auto p = predict({layer("conv", 1000000, 100000)}, opt);
  EXPECT_NEAR(p.layers[0].forward.compute_s, 2e-6, 1e-15);
  EXPECT_NEAR(p.layers[0].forward.memory_s, 4e-6, 1e-15);
  EXPECT_NEAR(p.total_time_s, 11e-6, 1e-15);
  EXPECT_EQ(p.layers[0].bound, Bound::Overhead);
  // A per-class calibration wins over the fallback, including its own overhead.
  opt.calibration.by_class["Conv"] = Efficiency{1.0, 1.0, 0.0, 3};
  EXPECT_NEAR(predict({layer("conv", 1000000, 100000)}, opt).total_time_s, 1e-6 + 1e-6, 1e-15);
}

TEST(Predict, WritesUseTheirOwnFactorWhenCalibrated) {
  auto opt = hardware(1e12, 1e11);
  LayerWork w = layer("conv", 0, 1000000);
  w.bytes_written = 400000;
  opt.calibration.fallback = Efficiency{1.0, 0.5, 0.0, 0};
  EXPECT_NEAR(predict({w}, opt).layers[0].forward.memory_s, 1e6 / 0.5e11, 1e-15);  // unset: writes at ppp_mem
  opt.calibration.fallback.ppp_write = 0.2;
  EXPECT_NEAR(predict({w}, opt).layers[0].forward.memory_s, 6e5 / 0.5e11 + 4e5 / 0.2e11, 1e-15);
}

TEST(Predict, LayerWorkClassesDepthwiseConvolutionsApart) {
  LoadOptions lo;
  const ModelWork m = load_model_work("mobilenet_v2", lo);
  auto cls = [&](const std::string& name) {
    for (const auto& l : m.layers)
      if (l.name == name) return l.op_class;
    return std::string("(missing)");
  };
  EXPECT_EQ(cls("features.0.0"), "Conv");
  EXPECT_EQ(cls("features.1.conv.0.0"), "DepthwiseConv");
  EXPECT_EQ(cls("features.1.conv.1"), "Conv");
  EXPECT_EQ(cls("features.0.1"), "BatchNorm");
  for (const auto& l : m.layers) EXPECT_LE(l.bytes_written, l.bytes) << l.name;
}

TEST(Predict, TrainingAddsBackwardAndWeightUpdate) {
  auto opt = hardware(1e12, 1e11);
  opt.training = true;
  opt.batch = 8;
  LayerWork w = layer("fc", 1000000, 100000, "Linear");
  w.bwd_input_flops = 1000000;
  w.bwd_weight_flops = 1000000;
  w.params = 1000;
  LayerWork first = layer("relu0", 1000, 1000, "Unary");  // no gradient needed upstream of params
  const auto p = predict({first, w}, opt);
  EXPECT_NEAR(p.layers[1].backward.compute_s, 2e-6, 1e-15);
  EXPECT_NEAR(p.layers[1].backward.memory_s, 2e-6, 1e-15);  // twice the forward bytes
  EXPECT_DOUBLE_EQ(p.layers[0].backward.time_s, 0.0);
  // Update: 2 FLOPs and 12 bytes per fp32 parameter.
  EXPECT_NEAR(p.update_s, 2000 / 1e12 + 12000 / 1e11, 1e-15);
  EXPECT_NEAR(p.total_time_s, p.forward_s + p.backward_s + p.update_s, 1e-18);
  EXPECT_NEAR(p.samples_per_s, 8 / p.total_time_s, 1e-6);
}

TEST(Predict, UncostedLayersAreCountedNeverSilentlyZero) {
  LayerWork bad = layer("nms", 0, 0, "NonMaxSuppression");
  bad.costed = false;
  bad.reason = "op NonMaxSuppression has no cost rule";
  const auto p = predict({layer("conv", 1000, 10), bad}, hardware(1e12, 1e11));
  EXPECT_EQ(p.uncosted_layers, 1);
  EXPECT_FALSE(p.layers[1].costed);
  EXPECT_EQ(p.layers[1].reason, "op NonMaxSuppression has no cost rule");
}

TEST(Scaling, LargestBatchThatFitsIsExact) {
  // 1 GB fixed + 30 MB per sample in 16 GB: (16e9 - 1e9) / 30e6 = 500.
  auto memory = [](int64_t b) { return Count(1000000000) + Count(30000000) * b; };
  EXPECT_EQ(largest_batch_that_fits(memory, 16000000000), 500);
  EXPECT_EQ(largest_batch_that_fits(memory, 16000000000 - 1), 499);
  EXPECT_EQ(largest_batch_that_fits(memory, 500000000), 0);
  EXPECT_EQ(largest_batch_that_fits(memory, Count(1) << 80, 1000), 1000);
  int calls = 0;
  largest_batch_that_fits([&](int64_t b) { ++calls; return memory(b); }, 16000000000);
  EXPECT_LT(calls, 25);
}

TEST(Scaling, ThroughputAgainstBatch) {
  auto work_at = [](int64_t b) { return std::vector<LayerWork>{layer("conv", 1000000 * b, 1000)}; };
  auto opt = hardware(1e12, 1e11, 1e-5);
  const auto points = predict_vs_batch({1, 10, 100}, work_at, opt);
  ASSERT_EQ(points.size(), 3u);
  EXPECT_NEAR(points[0].time_s, 1e-6 + 1e-8 + 1e-5, 1e-15);
  EXPECT_GT(points[2].samples_per_s, points[0].samples_per_s);  // launch overhead amortised
  EXPECT_NEAR(points[2].samples_per_s, 100 / points[2].time_s, 1e-6);
}

}  // namespace
}  // namespace ridge

namespace ridge {
namespace {

Device test_device() {
  Device d;
  d.id = "test-gpu";
  d.peak_flops[Precision::FP32] = 10e12;
  d.peak_flops[Precision::FP16] = 40e12;
  d.bandwidth_bytes_per_s["dram"] = 1e12;
  d.bandwidth_bytes_per_s["l2"] = 4e12;
  d.kernel_launch_s = 5e-6;
  return d;
}

TEST(PredictOptionsFromDevice, UncalibratedIsTheRooflineBoundAtTheDevicesPeakAndBandwidth) {
  PredictSettings s;
  s.precision = Precision::FP16;
  s.level = "l2";
  s.training = true;
  s.bytes_per_param = 2;
  s.batch = 32;
  const PredictOptions o = predict_options(test_device(), s);
  EXPECT_DOUBLE_EQ(o.peak_flop_per_s, 40e12);
  EXPECT_DOUBLE_EQ(o.bandwidth_bytes_per_s, 4e12);
  // No fitted factors: the bound on speed overlaps compute and memory and charges no launch overhead.
  EXPECT_DOUBLE_EQ(o.kernel_launch_s, 0);
  EXPECT_EQ(o.combine, Combine::Max);
  EXPECT_EQ(time_kind(o), TimeKind::UpperBound);
  EXPECT_TRUE(o.training);
  EXPECT_EQ(o.bytes_per_param, 2);
  EXPECT_EQ(o.batch, 32);
  EXPECT_FALSE(o.calibration.fitted());

  // Each layer's time is then exactly max(FLOPs / peak, bytes / bandwidth): never above a kernel that runs at
  // the peak rates, however it overlaps its loads with its math.
  s.training = false;
  const std::vector<LayerWork> work = {layer("gemm", 8'000'000'000, 100'000'000), layer("relu", 1'000'000, 400'000'000)};
  const Prediction p = predict(work, predict_options(test_device(), s));
  EXPECT_EQ(p.kind, TimeKind::UpperBound);
  EXPECT_EQ(time_kind_label(p.kind), "upper bound (uncalibrated)");
  EXPECT_DOUBLE_EQ(p.layers[0].time_s, 8e9 / 40e12);
  EXPECT_DOUBLE_EQ(p.layers[1].time_s, 4e8 / 4e12);
  EXPECT_DOUBLE_EQ(p.total_time_s, 8e9 / 40e12 + 4e8 / 4e12);
}

TEST(PredictOptionsFromDevice, TheTrainingBoundChargesTheBackwardNoMoreThanItMustMove) {
  // A ReLU moves x and y forward (2 units); its backward reads dy and y and writes dx (3 units) and must move at
  // least dy and dx (2): the bound charges the forward's bytes, not PALEO's twice (4 units, above what runs).
  LayerWork relu = layer("relu", 1'000'000, 8'000'000, "Unary");
  relu.bytes_written = 4'000'000;
  relu.bwd_input_flops = 1'000'000;
  relu.needs_backward = true;
  LayerWork add = layer("add", 1'000'000, 12'000'000, "Binary");  // its gradient passes through: nothing to move
  add.bytes_written = 4'000'000;
  add.needs_backward = true;
  PredictSettings s;
  s.training = true;
  const Prediction bound = predict({relu, add}, predict_options(test_device(), s));
  EXPECT_EQ(bound.kind, TimeKind::UpperBound);
  EXPECT_DOUBLE_EQ(bound.layers[0].backward.time_s, 8e6 / 1e12);
  EXPECT_DOUBLE_EQ(bound.layers[1].backward.time_s, 0.0);
  s.combine = Combine::Sum;  // an estimate (hand-set) keeps PALEO's approximation: twice the forward bytes
  const Prediction estimate = predict({relu, add}, predict_options(test_device(), s));
  EXPECT_DOUBLE_EQ(estimate.layers[0].backward.memory_s, 16e6 / 1e12);
}

TEST(PredictOptionsFromDevice, TheWeightUpdateMovesWhatItsOptimizerReadsAndWrites) {
  LayerWork fc = layer("fc", 2'000'000, 4'000'000, "Linear");
  fc.params = 1'000'000;
  PredictSettings s;
  s.training = true;  // fp32: 4-byte parameters; the bound at 10 TFLOP/s and 1 TB/s
  auto update_s = [&](Optimizer o) {
    s.optimizer = o;
    return predict({fc}, predict_options(test_device(), s)).update_s;
  };
  EXPECT_DOUBLE_EQ(update_s(Optimizer::SGD), 3 * 4e6 / 1e12);       // reads p, g; writes p
  EXPECT_DOUBLE_EQ(update_s(Optimizer::Momentum), 5 * 4e6 / 1e12);  // + reads and writes v
  EXPECT_DOUBLE_EQ(update_s(Optimizer::Adam), 7 * 4e6 / 1e12);      // + m and v
}

TEST(PredictOptionsFromDevice, FittedFactorsKeepTheirCombineAndTheDevicesLaunchOverhead) {
  Calibration cal;
  cal.device = "test-gpu";
  cal.precision = "fp32";
  cal.combine = Combine::Sum;
  cal.fallback.ppp = 0.5;
  cal.fallback.samples = 12;
  const std::string path = test::temp_dir() + "/test-gpu.json";
  std::ofstream(path) << calibration_to_json(cal).dump(2);
  PredictSettings s;
  s.calibration = path;
  const PredictOptions o = predict_options(test_device(), s);
  EXPECT_EQ(time_kind(o), TimeKind::Calibrated);
  EXPECT_EQ(o.combine, Combine::Sum);
  EXPECT_DOUBLE_EQ(o.kernel_launch_s, 5e-6);
}

TEST(PredictOptionsFromDevice, FactorsSetByHandWithoutACalibrationAreAnEstimateNotABound) {
  const std::vector<LayerWork> work = {layer("gemm", 8'000'000'000, 100'000'000)};
  auto kind_with = [&](auto set) {
    PredictSettings s;
    set(s);
    return predict(work, predict_options(test_device(), s)).kind;
  };
  EXPECT_EQ(kind_with([](PredictSettings&) {}), TimeKind::UpperBound);
  EXPECT_EQ(kind_with([](PredictSettings& s) { s.ppp = 0.5; }), TimeKind::HandSet);
  EXPECT_EQ(kind_with([](PredictSettings& s) { s.ppp_mem = 0.5; }), TimeKind::HandSet);
  EXPECT_EQ(kind_with([](PredictSettings& s) { s.combine = Combine::Sum; }), TimeKind::HandSet);
  EXPECT_EQ(kind_with([](PredictSettings& s) { s.kernel_launch_s = 5e-6; }), TimeKind::HandSet);
  // Setting by hand what the bound already uses keeps it the bound.
  EXPECT_EQ(kind_with([](PredictSettings& s) { s.combine = Combine::Max, s.kernel_launch_s = 0, s.ppp = 1; }),
            TimeKind::UpperBound);
  EXPECT_EQ(time_kind_label(TimeKind::HandSet), "estimate (hand-set factors, uncalibrated)");
  EXPECT_EQ(time_kind_key(TimeKind::HandSet), "hand_set");
}

TEST(PredictOptionsFromDevice, OverridesReplaceTheDevicesAndTheCalibrationsFactors) {
  PredictSettings s;
  s.kernel_launch_s = 0;
  s.ppp = 0.5;
  s.ppp_mem = 0.25;
  s.combine = Combine::Max;
  const PredictOptions o = predict_options(test_device(), s);
  EXPECT_DOUBLE_EQ(o.kernel_launch_s, 0);
  EXPECT_DOUBLE_EQ(o.calibration.fallback.ppp, 0.5);
  EXPECT_DOUBLE_EQ(o.calibration.fallback.ppp_mem, 0.25);
  EXPECT_EQ(o.combine, Combine::Max);
}

TEST(PredictOptionsFromDevice, MissingPrecisionOrLevelIsAnError) {
  PredictSettings s;
  s.precision = Precision::INT8;
  EXPECT_THROW(predict_options(test_device(), s), Error);
  s.precision = Precision::FP32;
  s.level = "l3";
  EXPECT_THROW(predict_options(test_device(), s), Error);
}

}  // namespace
}  // namespace ridge

namespace ridge {
namespace {

MeasuredRun run_of(std::string model, std::string device, std::vector<MeasuredRow> rows) {
  MeasuredRun r;
  r.file = model + ".json";
  r.model = std::move(model);
  r.device = std::move(device);
  r.layers = std::move(rows);
  return r;
}

TEST(MeasuredTotals, SumsOnlyWhatEveryRowHas) {
  MeasuredRow a{"conv1", "Conv", 1e-3, Count(100), std::nullopt, std::nullopt, "", {}};
  MeasuredRow b{"fc", "Gemm", 2e-3, Count(50), Count(10), std::nullopt, "", {}};
  const MeasuredRun r = run_of("m", "", {a, b});
  const MeasuredTotals t = measured_totals(r);
  ASSERT_TRUE(t.time_s.has_value());
  EXPECT_DOUBLE_EQ(*t.time_s, 3e-3);
  EXPECT_EQ(t.flops, Count(150));
  EXPECT_FALSE(t.bytes.has_value());
  EXPECT_EQ(t.by_layer.at("fc"), &r.layers[1]);
  EXPECT_FALSE(measured_totals(run_of("m", "", {})).time_s.has_value());
}

TEST(MatchMeasurement, ByModelNameOrSpecAndByDevice) {
  Device a100;
  a100.id = "a100-sxm4-40gb";
  a100.aliases = {"a100"};
  const std::vector<MeasuredRun> runs = {run_of("resnet50", "v100", {}), run_of("resnet50", "a100", {}),
                                         run_of("model.onnx", "", {})};
  EXPECT_EQ(match_measurement(runs, "resnet50", "resnet50", false, a100, false), 1u);
  EXPECT_EQ(match_measurement(runs, "resnet50", "resnet50", false, a100, true), 0u);
  EXPECT_EQ(match_measurement(runs, "model", "model.onnx", false, a100, false), 2u);
  EXPECT_EQ(match_measurement(runs, "bert", "bert", false, a100, false), std::nullopt);
  EXPECT_EQ(match_measurement(runs, "bert", "bert", true, a100, false), 1u);
}

TEST(BatchCapacity, LargestBatchesThatFitGrowWithMemory) {
  const ParamStorage fp32{4, 4, 0, 4};
  const BatchCapacity small = batch_capacity("resnet18", LoadOptions{}, Optimizer::SGD, fp32, Count(1) << 30);
  const BatchCapacity big = batch_capacity("resnet18", LoadOptions{}, Optimizer::SGD, fp32, Count(16) << 30);
  EXPECT_GT(small.inference, 0);
  EXPECT_GE(small.inference, small.training);
  EXPECT_GT(big.training, small.training);
  EXPECT_EQ(batch_capacity("resnet18", LoadOptions{}, Optimizer::SGD, fp32, 1000).inference, 0);
}

}  // namespace
}  // namespace ridge

namespace ridge {
namespace {

TEST(PredictOptionsFromDevice, ACalibrationOfAnotherDeviceNeedsForceAndSaysSo) {
  Calibration cal;
  cal.device = "v100-sxm2";
  cal.fallback.ppp = 0.4;
  const std::string path = test::temp_dir() + "/v100.json";
  std::ofstream(path) << calibration_to_json(cal).dump(2);
  PredictSettings s;
  s.calibration = path;
  EXPECT_THROW(predict_options(test_device(), s), Error);
  s.force = true;
  std::vector<std::string> forced;
  const PredictOptions o = predict_options(test_device(), s, &forced);
  EXPECT_FALSE(forced.empty());
  EXPECT_DOUBLE_EQ(o.calibration.fallback.ppp, 0.4);
  s.calibration = "none";
  EXPECT_DOUBLE_EQ(predict_options(test_device(), s).calibration.fallback.ppp, 1.0);
}

}  // namespace
}  // namespace ridge

namespace ridge {
namespace {

// A fitted memory efficiency above 1 (the fit's kernels kept their operands in the L2) does not apply to traffic a
// GPU's L2 cannot hold: a phase is timed at least at (bytes - L2) / DRAM bandwidth.
TEST(PredictOptionsFromDevice, CalibratedPhasesSpillingPastTheL2TakeAtLeastTheirDramTime) {
  Device gpu;
  gpu.id = "gpu";
  gpu.kind = "gpu";
  gpu.peak_flops[Precision::FP16] = 100e12;
  gpu.bandwidth_bytes_per_s["dram"] = 1e12;
  gpu.l2_bytes = 50'000'000;
  const std::string dir = test::temp_dir(), file = dir + "/cal.json";
  std::ofstream(file) << R"({"format": "ridge-calibration", "version": 1, "device": "gpu", "precision": "fp16",
    "combine": "sum", "fallback": {"ppp": 0.8, "ppp_mem": 2.0, "overhead_s": 0, "samples": 10}})";
  PredictSettings s;
  s.precision = Precision::FP16;
  s.calibration = file;
  const PredictOptions o = predict_options(gpu, s);
  EXPECT_EQ(o.cache_bytes, 50'000'000);
  const std::vector<LayerWork> work = {layer("small", 0, 40'000'000, "Relu"), layer("big", 0, 400'000'000, "Relu")};
  const Prediction p = predict(work, o);
  EXPECT_DOUBLE_EQ(p.layers[0].time_s, 40e6 / 2e12);   // inside the L2: the fitted 2x stands
  EXPECT_DOUBLE_EQ(p.layers[1].time_s, 350e6 / 1e12);  // 350 MB past the L2 at the DRAM's 1 TB/s (the fit: 200 us)
  EXPECT_EQ(p.layers[1].forward.bound, Bound::Memory);
  // A CPU's L2 is not its last level; the uncalibrated bound (ppp_mem 1) needs no floor.
  Device cpu = gpu;
  cpu.kind = "cpu";
  EXPECT_EQ(predict_options(cpu, s).cache_bytes, 0);
  s.calibration = "none";
  EXPECT_EQ(predict_options(gpu, s).cache_bytes, 0);
}

}  // namespace
}  // namespace ridge
