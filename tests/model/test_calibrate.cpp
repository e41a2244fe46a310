// Calibration: measurement files parse, known PPPs are recovered from synthetic data, errors are reported
// before/after and leave-one-model-out, and calibration files round-trip.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "ridge/error.hpp"
#include "ridge/predict.hpp"

namespace ridge {
namespace {

constexpr double kPeak = 1e11, kBw = 2e10;

// Synthetic layers whose times follow known factors per class (with optional multiplicative noise).
std::vector<Sample> synthetic(double noise, unsigned seed = 7) {
  struct Truth { const char* cls; double ppp, ppp_mem, overhead_s; };
  const Truth truths[] = {{"Conv", 0.6, 0.8, 2e-6}, {"Unary", 0.9, 0.5, 1e-6}, {"Linear", 0.4, 0.9, 0}};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> size(1, 100), jitter(1 - noise, 1 + noise);
  std::vector<Sample> out;
  for (const char* model : {"m1", "m2", "m3"})
    for (const auto& t : truths)
      for (int i = 0; i < 6; ++i) {
        Sample s{model, std::string(model) + "." + t.cls + std::to_string(i), t.cls, Count(size(rng) * 1e6), Count(size(rng) * 1e5), 0, {}};
        s.time_s = (to_double(s.flops) / (t.ppp * kPeak) + to_double(s.bytes) / (t.ppp_mem * kBw) + t.overhead_s) *
                   (noise > 0 ? jitter(rng) : 1.0);
        out.push_back(s);
      }
  return out;
}

PredictOptions hw() {
  PredictOptions o;
  o.peak_flop_per_s = kPeak;
  o.bandwidth_bytes_per_s = kBw;
  return o;
}

TEST(Calibrate, RecoversKnownPppsFromExactData) {
  const auto cal = calibrate(synthetic(0), kPeak, kBw);
  ASSERT_EQ(cal.by_class.size(), 3u);
  EXPECT_NEAR(cal.by_class.at("Conv").ppp, 0.6, 1e-6);
  EXPECT_NEAR(cal.by_class.at("Conv").ppp_mem, 0.8, 1e-6);
  EXPECT_NEAR(*cal.by_class.at("Conv").overhead_s, 2e-6, 1e-11);
  EXPECT_NEAR(cal.by_class.at("Unary").ppp, 0.9, 1e-6);
  EXPECT_NEAR(cal.by_class.at("Unary").ppp_mem, 0.5, 1e-6);
  EXPECT_NEAR(cal.by_class.at("Linear").ppp, 0.4, 1e-6);
  EXPECT_NEAR(cal.by_class.at("Linear").ppp_mem, 0.9, 1e-6);
  EXPECT_NEAR(*cal.by_class.at("Linear").overhead_s, 0.0, 1e-11);
  EXPECT_EQ(cal.by_class.at("Conv").samples, 18);
}

TEST(Calibrate, NoisyDataStillLandsCloseAndErrorsDrop) {
  const auto samples = synthetic(0.05);
  const auto cal = calibrate(samples, kPeak, kBw);
  EXPECT_NEAR(cal.by_class.at("Conv").ppp, 0.6, 0.06);
  const auto check = check_calibration(samples, hw(), Calibration{});
  EXPECT_GT(check.before.median, 0.3);   // PPP 1 with no overhead under-predicts everything
  EXPECT_LT(check.after.median, 0.05);
  EXPECT_LE(check.after.median, check.after.p90);
  ASSERT_EQ(check.leave_one_model_out.size(), 3u);
  for (const auto& m : check.leave_one_model_out) {
    EXPECT_LT(m.layer_error.median, 0.06) << m.model;
    EXPECT_LT(m.end_to_end_error, 0.05) << m.model;
  }
}

TEST(Calibrate, SmallClassesUseTheFallbackAndTermsCanFitToZero) {
  std::vector<Sample> samples;
  for (int i = 1; i <= 5; ++i)  // pure compute: time = flops / (0.5 peak); bytes that would take a visible share
    samples.push_back({"m", "l" + std::to_string(i), "Conv", Count(i) * 1000000, Count(i % 3 + 1) * 100000, i * 1e6 / (0.5 * kPeak)});
  samples.push_back({"m", "odd", "Softmax", 1000, 1000, 1e-3});
  const auto cal = calibrate(samples, kPeak, kBw);
  EXPECT_EQ(cal.by_class.count("Softmax"), 0u);
  EXPECT_EQ(&cal.for_class("Softmax"), &cal.fallback);
  EXPECT_NEAR(cal.by_class.at("Conv").ppp, 0.5, 1e-9);
  EXPECT_TRUE(std::isinf(cal.by_class.at("Conv").ppp_mem));
  EXPECT_THROW(calibrate({}, kPeak, kBw), Error);
}

TEST(Calibrate, TermsNoMeasurementShowsArePricedAtTheRoofline) {
  // Launch-bound kernels (4 us each) that move 128 DRAM bytes: at PPP 1 those bytes take 6.4 ns, 0.16 % of the
  // time, so the times say nothing about the memory rate. Fitting a factor to it anyway would explain the launch
  // cost by bytes (PPP_mem ~ 1e-5) and price a kernel moving 40 KB at milliseconds. The term stays at PPP 1.
  std::vector<Sample> rng;
  for (int i = 1; i <= 6; ++i) {
    const Count flops = Count(i) * 1000000;
    rng.push_back({"m", "rng" + std::to_string(i), "Unary", flops, 128, to_double(flops) / (0.05 * kPeak) + 4e-6});
  }
  const auto cal = calibrate(rng, kPeak, kBw);
  const Efficiency& e = cal.by_class.at("Unary");
  EXPECT_DOUBLE_EQ(e.ppp_mem, 1.0);
  EXPECT_NEAR(e.ppp, 0.05, 1e-3);
  EXPECT_NEAR(*e.overhead_s, 4e-6, 1e-8);
  const Sample bigger{"m", "add", "Unary", 10000, 40000, 0};
  EXPECT_LT(predict_sample(bigger, cal, hw()), 10e-6);  // launch + 40 KB at the full bandwidth, not milliseconds
}

TEST(Calibrate, CollinearFlopsAndBytesGoToTheRooflineLimit) {
  // Every ReLU moves 8 bytes per FLOP: the compute and the memory term explain the times equally well. The
  // roofline says such layers are memory-bound, so the fit must put the time on bytes; a Clip (2 FLOPs per
  // element, same bytes) then costs the same as a ReLU instead of twice as much.
  std::vector<Sample> relu;
  for (int i = 1; i <= 6; ++i) {
    const Count elems = Count(i) * 1000000;
    relu.push_back({"m", "relu" + std::to_string(i), "Unary", elems, 8 * elems, to_double(8 * elems) / (0.9 * kBw)});
  }
  const auto cal = calibrate(relu, kPeak, kBw);
  const Efficiency& e = cal.by_class.at("Unary");
  EXPECT_TRUE(std::isinf(e.ppp));
  EXPECT_NEAR(e.ppp_mem, 0.9, 1e-6);
  const Sample clip{"m", "clip", "Unary", 2000000, 8000000, 0};
  EXPECT_NEAR(predict_sample(clip, cal, hw()), 8e6 / (0.9 * kBw), 1e-12);
}

TEST(Calibrate, WritesGetTheirOwnFactorOnlyWhereTheSplitExplainsTheTimes) {
  // Writes at 0.3 of the bandwidth, reads at 0.9: layers with different write shares tell them apart.
  std::vector<Sample> split;
  for (int i = 1; i <= 8; ++i) {
    const Count read = Count(i) * 1000000, written = Count(i * i % 5 + 1) * 700000;
    Sample s{"m", "conv" + std::to_string(i), "Conv", Count(i * 5 % 7 + 1) * 50000000, read + written, 0, written};
    s.time_s = to_double(s.flops) / (0.7 * kPeak) + to_double(read) / (0.9 * kBw) + to_double(written) / (0.3 * kBw);
    split.push_back(s);
  }
  const Efficiency e = calibrate(split, kPeak, kBw).by_class.at("Conv");
  EXPECT_NEAR(e.ppp, 0.7, 1e-6);
  EXPECT_NEAR(e.ppp_mem, 0.9, 1e-6);
  ASSERT_TRUE(e.ppp_write.has_value());
  EXPECT_NEAR(*e.ppp_write, 0.3, 1e-6);
  // Reads and writes in lockstep (elementwise: written = read) cannot be told apart: one factor for both.
  std::vector<Sample> lockstep;
  for (int i = 1; i <= 6; ++i) {
    const Count half = Count(i) * 1000000;
    lockstep.push_back({"m", "add" + std::to_string(i), "Binary", half / 4, 2 * half, to_double(2 * half) / (0.8 * kBw), half});
  }
  const Efficiency l = calibrate(lockstep, kPeak, kBw).by_class.at("Binary");
  EXPECT_FALSE(l.ppp_write.has_value());
  EXPECT_NEAR(l.ppp_mem, 0.8, 1e-6);
}

TEST(Calibrate, NearlyCollinearTermsGoToTheRooflineLimitToo) {
  // GEMMs whose FLOPs and bytes grow almost in step (cosine > 0.995) and whose time is the FLOPs at 0.6 of the
  // peak with 2 % noise: noise alone must not hand their time to the bytes, which would make compute free.
  std::vector<Sample> gemms;
  const double jitter[] = {1.02, 0.98, 1.01, 0.99, 1.02, 0.98};
  for (int i = 1; i <= 6; ++i) {
    const Count flops = Count(i) * 2000000000;
    const Count bytes = flops / 100 + Count(i % 2) * 1000000;  // 100 FLOP/B (above this device's ridge of 5)
    gemms.push_back({"m", "gemm" + std::to_string(i), "gemm", flops, bytes, jitter[i - 1] * to_double(flops) / (0.6 * kPeak)});
  }
  const Efficiency& e = calibrate(gemms, kPeak, kBw).by_class.at("gemm");
  EXPECT_NEAR(e.ppp, 0.6, 0.02);
  EXPECT_TRUE(std::isinf(e.ppp_mem));
}

TEST(Calibrate, PipeFlopsAreTimedAtThePeakOfThePipeTheyRanOn) {
  // fp32 SGEMMs at 0.5 of the fp32 peak: fitted against the tensor peak (16x the fp32 one) as plain FLOPs they
  // give PPP 1/32, which would price tensor-core GEMMs 16x too slow; priced by pipe, the factor is 0.5 of the
  // pipe's peak and carries over.
  PipePeaks pipes{16 * kPeak, kPeak, kPeak / 2};
  const double tensor_peak = pipes.tensor;
  std::vector<Sample> sgemms;
  for (int i = 1; i <= 4; ++i) {
    Sample s{"m", "sgemm" + std::to_string(i), "gemm", Count(i) * 1000000000, 0, 0};
    s.pipe_flops = PipeFlops{0, s.flops, 0, 0};
    s.time_s = to_double(s.flops) / (0.5 * kPeak);
    sgemms.push_back(s);
  }
  const Calibration cal = calibrate(sgemms, tensor_peak, kBw, 3, pipes);
  EXPECT_NEAR(cal.by_class.at("gemm").ppp, 0.5, 1e-6);
  EXPECT_NEAR(calibrate(sgemms, tensor_peak, kBw).by_class.at("gemm").ppp, 0.5 / 16, 1e-6);  // without the split

  Sample hgemm{"m2", "hgemm", "gemm", 8000000000, 0, 0};
  hgemm.pipe_flops = PipeFlops{hgemm.flops, 0, 0, 0};
  PredictOptions opt = hw();
  opt.peak_flop_per_s = tensor_peak;
  opt.pipe_peaks = pipes;
  EXPECT_NEAR(predict_sample(hgemm, cal, opt), 8e9 / (0.5 * tensor_peak), 1e-12);

  // peak_equivalent_flops: each pipe scaled by peak / its peak; fp16 vector FLOPs at the fp32 rate; a pipe
  // without a known peak, or no split, leaves the FLOPs as counted.
  Sample mixed{"m", "k", "gemm", 100 + 10 + 4 + 2, 0, 1};
  mixed.pipe_flops = PipeFlops{100, 10, 4, 2};
  EXPECT_EQ(peak_equivalent_flops(mixed, tensor_peak, pipes), 100 + 14 * 16 + 2 * 32);
  EXPECT_EQ(peak_equivalent_flops(mixed, tensor_peak, PipePeaks{tensor_peak, kPeak, 0}), mixed.flops);
  mixed.pipe_flops.reset();
  EXPECT_EQ(peak_equivalent_flops(mixed, tensor_peak, pipes), mixed.flops);
}

TEST(Calibrate, AClassWhoseKernelsRanOnTheVectorPipeTimesLayersThere) {
  // BatchNorm-like kernels: their FLOPs on the fp32 pipe at 0.25 of its peak, 16x below the tensor peak the
  // prediction runs at. The class is marked vector (its PPP is of that pipe) and a model layer of it, whose FLOPs
  // are not split by pipe, is timed at the vector peak too: flops / (0.25 x fp32 peak), not / (0.25 x tensor peak).
  PipePeaks pipes{16 * kPeak, kPeak, kPeak / 2};
  std::vector<Sample> norms, gemms;
  for (int i = 1; i <= 4; ++i) {
    Sample n{"m", "bn" + std::to_string(i), "normalization", Count(i) * 100000000, 0, 0};
    n.pipe_flops = PipeFlops{0, n.flops, 0, 0};
    n.time_s = to_double(n.flops) / (0.25 * kPeak);
    norms.push_back(n);
    Sample g{"m", "gemm" + std::to_string(i), "gemm", Count(i) * 1000000000, 0, 0};
    g.pipe_flops = PipeFlops{g.flops, 0, 0, 0};
    g.time_s = to_double(g.flops) / (0.5 * pipes.tensor);
    gemms.push_back(g);
  }
  std::vector<Sample> all = norms;
  all.insert(all.end(), gemms.begin(), gemms.end());
  const Calibration cal = calibrate(all, pipes.tensor, kBw, 3, pipes);
  const Efficiency& norm = cal.by_class.at("normalization");
  EXPECT_TRUE(norm.vector_pipe);
  EXPECT_NEAR(norm.ppp, 0.25, 1e-6);
  EXPECT_FALSE(cal.by_class.at("gemm").vector_pipe);
  EXPECT_FALSE(cal.fallback.vector_pipe);  // the tensor FLOPs of all samples outweigh the vector ones
  // Without a split (or without a known fp32 peak) nothing says which pipe: the PPP stays of the precision's peak.
  std::vector<Sample> unsplit = norms;
  for (Sample& n : unsplit) n.pipe_flops.reset();
  EXPECT_FALSE(calibrate(unsplit, pipes.tensor, kBw, 3, pipes).by_class.at("normalization").vector_pipe);
  EXPECT_FALSE(calibrate(norms, pipes.tensor, kBw, 3, PipePeaks{pipes.tensor, 0, 0}).by_class.at("normalization").vector_pipe);

  PredictOptions opt = hw();
  opt.peak_flop_per_s = pipes.tensor;
  opt.pipe_peaks = pipes;
  opt.calibration = cal;
  LayerWork bn{"bn1", "normalization", 400000000, 0};
  const Prediction p = predict({bn}, opt);
  EXPECT_NEAR(p.layers[0].forward.compute_s, 4e8 / (0.25 * kPeak), 1e-12);
  // The measured samples themselves are already timed per pipe: not scaled twice.
  EXPECT_NEAR(predict_sample(norms[3], cal, opt), norms[3].time_s, 1e-12);
  opt.pipe_peaks.fp32 = 0;  // a device without a vector peak: the precision's peak
  EXPECT_NEAR(predict({bn}, opt).layers[0].forward.compute_s, 4e8 / (0.25 * pipes.tensor), 1e-12);

  // The file says which pipe; anything else there is refused.
  const auto j = calibration_to_json(cal);
  EXPECT_EQ(j["classes"]["normalization"]["flops_pipe"], "vector");
  EXPECT_FALSE(j["classes"]["gemm"].contains("flops_pipe"));
  EXPECT_TRUE(calibration_from_json(j, "cal.json").by_class.at("normalization").vector_pipe);
  auto bad = j;
  bad["classes"]["normalization"]["flops_pipe"] = "cuda cores";
  EXPECT_THROW(calibration_from_json(bad, "cal.json"), Error);
}

TEST(Calibrate, MeasurementRowsKeepTheirPipeSplitOnlyWhenItAddsUp) {
  const MeasuredRun m = parse_measurement(R"({"kernels": [
      {"name": "a", "time_s": 1e-5, "flops": 30, "flops_tensor": 20, "flops_fp32": 10, "flops_fp16": null, "flops_fp64": 0},
      {"name": "b", "time_s": 1e-5, "flops": 31, "flops_tensor": 20, "flops_fp32": 10, "flops_fp16": 0, "flops_fp64": 0},
      {"name": "c", "time_s": 1e-5, "flops": 30}]})", "k.json");
  ASSERT_EQ(m.layers.size(), 3u);
  ASSERT_TRUE(m.layers[0].pipe_flops.has_value());  // null: the profile did not count that pipe
  EXPECT_EQ(m.layers[0].pipe_flops->tensor, 20);
  EXPECT_EQ(m.layers[0].pipe_flops->fp16, 0);
  EXPECT_FALSE(m.layers[1].pipe_flops.has_value());  // 20 + 10 != 31: the split does not explain the FLOPs
  EXPECT_FALSE(m.layers[2].pipe_flops.has_value());
  EXPECT_TRUE(samples_from({m})[0].pipe_flops.has_value());
  EXPECT_THROW(parse_measurement(R"({"kernels": [{"name": "a", "time_s": 1e-5, "flops": 3, "flops_tensor": "x",
      "flops_fp32": 0, "flops_fp16": 0, "flops_fp64": 0}]})", "k.json"), Error);
}

TEST(Calibrate, ErrorStatsInterpolate) {
  const auto st = error_stats({0.1, 0.3, 0.2, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0});
  EXPECT_NEAR(st.median, 0.55, 1e-12);
  EXPECT_NEAR(st.p90, 0.91, 1e-12);
  EXPECT_EQ(st.count, 10u);
  EXPECT_EQ(error_stats({}).count, 0u);
}

TEST(Calibrate, FilesRoundTripWithInfiniteFactorsAsNull) {
  Calibration c;
  c.device = "machine";
  c.fallback = {0.7, 0.8, 1e-6, 40};
  c.by_class["Conv"] = {0.5, std::numeric_limits<double>::infinity(), std::nullopt, 12};
  const auto j = calibration_to_json(c);
  EXPECT_TRUE(j["classes"]["Conv"]["ppp_mem"].is_null());
  const auto back = calibration_from_json(j, "cal.json");
  EXPECT_EQ(back.device, "machine");
  EXPECT_DOUBLE_EQ(back.fallback.ppp, 0.7);
  EXPECT_DOUBLE_EQ(*back.fallback.overhead_s, 1e-6);
  EXPECT_TRUE(std::isinf(back.by_class.at("Conv").ppp_mem));
  EXPECT_FALSE(back.by_class.at("Conv").overhead_s.has_value());
  EXPECT_FALSE(j["classes"]["Conv"].contains("ppp_write"));
  c.by_class["Conv"].ppp_write = 0.25;
  c.by_class["Unary"] = {1.0, 0.9, 0.0, 6, std::numeric_limits<double>::infinity()};
  const auto with_writes = calibration_from_json(calibration_to_json(c), "cal.json");
  EXPECT_DOUBLE_EQ(*with_writes.by_class.at("Conv").ppp_write, 0.25);
  EXPECT_TRUE(std::isinf(*with_writes.by_class.at("Unary").ppp_write));
  EXPECT_FALSE(with_writes.fallback.ppp_write.has_value());
  EXPECT_THROW(calibration_from_json(nlohmann::json::object(), "cal.json"), Error);
  auto bad = j;
  bad["fallback"]["ppp"] = -1;
  EXPECT_THROW(calibration_from_json(bad, "cal.json"), Error);
}

TEST(Measurements, ReadsMeasureAndIngestJson) {
  const auto m = parse_measurement(R"({"model": "resnet18", "layers": [
      {"name": "conv1", "op": "Conv", "time_s": 0.002, "flops": 236027904, "bytes": "3813376"},
      {"name": "dw", "op": "Conv", "op_class": "DepthwiseConv", "time_s": 1e-4, "flops": 1000, "bytes": 800, "bytes_written": 300},
      {"name": "relu", "op": "Relu", "forward": {"median_s": 1e-4}, "flops": 802816, "bytes_read": 3211264, "bytes_written": 3211264},
      {"name": "reorder", "op": "reorder", "time_s": 1e-5},
      {"name": "skipped", "op": "Conv", "time_s": null},
      {"name": "unknown", "op": "Foo", "time_s": 1e-5, "flops": 5, "cost_known": false}]})", "r18.json");
  EXPECT_EQ(m.model, "resnet18");
  ASSERT_EQ(m.layers.size(), 6u);
  EXPECT_FALSE(m.layers[4].time_s.has_value());
  EXPECT_EQ(*m.layers[0].bytes, 3813376);
  EXPECT_FALSE(m.layers[0].bytes_written.has_value());
  EXPECT_EQ(*m.layers[2].bytes, 6422528);
  EXPECT_EQ(*m.layers[2].bytes_written, 3211264);
  EXPECT_DOUBLE_EQ(*m.layers[2].time_s, 1e-4);
  int skipped = 0;
  const auto samples = samples_from({m}, &skipped);
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_EQ(samples[0].op_class, "Conv");
  EXPECT_EQ(samples[1].op_class, "DepthwiseConv");  // the file's op_class wins over the op's family
  EXPECT_EQ(*samples[1].bytes_written, 300);
  EXPECT_EQ(samples[2].op_class, "Unary");  // Relu -> its family
  EXPECT_EQ(skipped, 3);

  const auto k = parse_measurement(R"({"kernels": [{"name": "sgemm", "duration_s": 1e-3, "flops": 1e9, "dram_bytes": 1e6}]})",
                                   "/tmp/vgg16.json");
  EXPECT_EQ(k.model, "vgg16");
  EXPECT_EQ(*k.layers[0].flops, 1000000000);

  EXPECT_THROW(parse_measurement("{}", "x.json"), Error);
  EXPECT_THROW(parse_measurement("nope", "x.json"), Error);
  EXPECT_THROW(parse_measurement(R"({"layers": [{"name": "a", "time_s": "fast"}]})", "x.json"), Error);
  EXPECT_THROW(parse_measurement(R"({"layers": [{"name": "a", "time_s": 1, "flops": "many"}]})", "x.json"), Error);
  EXPECT_THROW(parse_measurement(R"({"layers": [{"name": "a", "time_s": 1, "flops": 1, "bytes": 4, "bytes_written": 5}]})",
                                 "x.json"), Error);
}

}  // namespace
}  // namespace ridge
