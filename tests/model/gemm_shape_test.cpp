// GEMM-shape calibration (src/model/gemm_shape.cpp): convolutions mapped to their implicit-GEMM shape, the
// shape table's lookup and fit, and the shipped A100/H100 CNN calibrations fitted on Vidur's operator times.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "ridge/error.hpp"
#include "ridge/llm_analysis.hpp"
#include "ridge/load.hpp"
#include "ridge/precision_mode.hpp"
#include "ridge/predict.hpp"

namespace ridge {
namespace {

const LayerWork& layer(const std::vector<LayerWork>& ws, const std::string& name) {
  for (const LayerWork& w : ws)
    if (w.name == name) return w;
  throw Error("no layer " + name);
}

std::vector<LayerWork> work_of(const std::string& model, int64_t batch) {
  LoadOptions lo;
  lo.batch = batch;
  return load_model_work(model, lo).layers;
}

// A 2 x 2 grid: log2(M N) in {20, 22}, log2 K in {9, 10}.
GemmShapeTable small_table() {
  GemmShapeTable t;
  t.log2_mn = {20, 22};
  t.log2_k = {9, 10};
  t.ppp = {0.5, 0.6, 0.7, 0.8};
  t.samples = {3, 3, 3, 3};
  return t;
}

TEST(GemmShape, ConvolutionsMapToTheirImplicitGemmShapeAsDocumented) {
  const std::vector<LayerWork> r50 = work_of("resnet50", 2);
  // conv1: 3 -> 64 channels, 7x7, stride 2, 224 -> 112: M = N Ho Wo, N = Cout, K = Cin kh kw.
  const LayerWork& conv1 = layer(r50, "conv1");
  EXPECT_EQ(conv1.gemm_m, 2 * 112 * 112);
  EXPECT_EQ(conv1.gemm_n, 64);
  EXPECT_EQ(conv1.gemm_k, 3 * 7 * 7);
  EXPECT_FALSE(conv1.depthwise);
  // layer1.0.conv2: 64 -> 64, 3x3 at 56x56.
  const LayerWork& c2 = layer(r50, "layer1.0.conv2");
  EXPECT_EQ(c2.gemm_m, 2 * 56 * 56);
  EXPECT_EQ(c2.gemm_n, 64);
  EXPECT_EQ(c2.gemm_k, 64 * 9);
  // The FLOPs are the GEMM's: 2 M N K.
  EXPECT_EQ(c2.flops, Count{2} * c2.gemm_m * c2.gemm_n * c2.gemm_k);
  // fc: Linear 2048 -> 1000 over the batch rows.
  const LayerWork& fc = layer(r50, "fc");
  EXPECT_EQ(fc.gemm_m, 2);
  EXPECT_EQ(fc.gemm_n, 1000);
  EXPECT_EQ(fc.gemm_k, 2048);
  // BatchNorm and ReLU run no GEMM.
  EXPECT_EQ(layer(r50, "bn1").gemm_k, 0);
  // Depthwise: K = Cin / groups x taps = 9, flagged as depthwise.
  for (const LayerWork& w : work_of("mobilenet_v2", 1))
    if (w.op_class == "DepthwiseConv") {
      EXPECT_TRUE(w.depthwise) << w.name;
      EXPECT_EQ(w.gemm_k, 9) << w.name;
    }
}

TEST(GemmShape, LookupIsBilinearInLog2MNAndLog2KClampedAtTheEdges) {
  const GemmShapeTable t = small_table();
  EXPECT_DOUBLE_EQ(t.lookup(1024, 1024, 512), 0.5);       // (20, 9)
  EXPECT_DOUBLE_EQ(t.lookup(2048, 2048, 1024), 0.8);      // (22, 10)
  EXPECT_DOUBLE_EQ(t.lookup(2048, 1024, 512), 0.6);       // (21, 9): halfway along log2 M N
  EXPECT_NEAR(t.lookup(2048, 1024, 724), 0.65, 1e-3);     // (21, ~9.5)
  EXPECT_DOUBLE_EQ(t.lookup(1 << 20, 1 << 20, 64), 0.7);  // beyond both edges: clamped to (22, 9)
  EXPECT_DOUBLE_EQ(t.lookup(1, 1, 1 << 20), 0.6);         // clamped to (20, 10)
}

TEST(GemmShape, ConvLayersTakeTheTableAtTheirShapeDepthwiseAndTinyKTheMemoryFactors) {
  Calibration c;
  c.fallback = {0.3, 0.3, 1e-6, 10};
  c.by_class["conv"] = {0.9, 0.8, 2e-6, 10};
  c.by_class["elementwise"] = {0.4, 0.95, 1e-6, 10};
  c.gemm_shapes = small_table();
  LayerWork conv{"c", "Conv", 1000, 100};
  conv.gemm_m = 2048, conv.gemm_n = 1024, conv.gemm_k = 512;
  std::string label;
  Efficiency e = c.for_layer(conv, &label);
  EXPECT_DOUBLE_EQ(e.ppp, 0.6);  // the table at (21, 9), not the class's 0.9
  EXPECT_DOUBLE_EQ(e.ppp_mem, 0.8);
  EXPECT_EQ(e.combine, Combine::Max);  // GEMM kernels overlap loads with math
  EXPECT_EQ(label, "conv (GEMM shape)");
  LayerWork dw = conv;
  dw.op_class = "DepthwiseConv", dw.depthwise = true, dw.gemm_k = 9;
  e = c.for_layer(dw, &label);
  EXPECT_DOUBLE_EQ(e.ppp_mem, 0.95);
  EXPECT_DOUBLE_EQ(e.ppp, 1.0);
  EXPECT_EQ(label, "memory-bound conv (elementwise)");
  LayerWork tiny = conv;
  tiny.gemm_k = 16;  // K <= memory_bound_k
  EXPECT_DOUBLE_EQ(c.for_layer(tiny).ppp_mem, 0.95);
  LayerWork unknown = conv;
  unknown.gemm_k = 0;  // no shape: the class's factors
  EXPECT_DOUBLE_EQ(c.for_layer(unknown, &label).ppp, 0.9);
  EXPECT_EQ(label, "Conv");
  // predict() reports per row whose factors applied.
  PredictOptions opt;
  opt.peak_flop_per_s = 1e12, opt.bandwidth_bytes_per_s = 1e12, opt.calibration = c;
  EXPECT_EQ(predict({conv}, opt).layers[0].calibration, "conv (GEMM shape)");
  // The table survives the calibration file.
  const Calibration back = calibration_from_json(calibration_to_json(c), "t.json");
  EXPECT_EQ(back.gemm_shapes.ppp, c.gemm_shapes.ppp);
  EXPECT_EQ(back.gemm_shapes.log2_k, c.gemm_shapes.log2_k);
}

// Backward of a GEMM-shaped layer: the input gradient at M x K (inner N), the weight gradient at K x N with its
// long inner M split until it fits the grid; predict() times the two kernels one after the other.
TEST(GemmShape, BackwardGemmsTakeTheirOwnShapesTheWeightGradientSplitK) {
  const GemmShapeTable t = small_table();
  EXPECT_DOUBLE_EQ(t.lookup_split_k(1024, 1024, 512), t.lookup(1024, 1024, 512));  // within the grid: as is
  EXPECT_DOUBLE_EQ(t.lookup_split_k(256, 1024, 4096), t.lookup(1024, 1024, 1024));  // K 2^12 -> 2^10, M x 4
  EXPECT_DOUBLE_EQ(t.lookup_split_k(256, 1024, 3000), t.lookup(1024, 1024, 750));   // 2^11.55: split by 4

  Calibration c;
  c.by_class["conv"] = {0.9, 0.8, 2e-6, 10};
  c.gemm_shapes = small_table();
  LayerWork conv{"c", "Conv", Count{2} * 4096 * 1024 * 512, 1000000};
  conv.gemm_m = 4096, conv.gemm_n = 1024, conv.gemm_k = 512;
  conv.bwd_input_flops = conv.flops, conv.bwd_weight_flops = conv.flops, conv.needs_backward = true;
  const auto b = c.backward_gemms(conv);
  ASSERT_TRUE(b.has_value());
  EXPECT_DOUBLE_EQ(b->input_gradient.ppp, t.lookup(4096, 512, 1024));
  EXPECT_DOUBLE_EQ(b->weight_gradient.ppp, t.lookup_split_k(512, 1024, 4096));
  EXPECT_DOUBLE_EQ(b->weight_gradient.ppp_mem, 0.8);
  LayerWork dw = conv;
  dw.depthwise = true;
  EXPECT_FALSE(c.backward_gemms(dw).has_value());  // memory-bound: for_layer's factors
  EXPECT_FALSE(Calibration{}.backward_gemms(conv).has_value());  // no table

  PredictOptions opt;
  opt.peak_flop_per_s = 1e12, opt.bandwidth_bytes_per_s = 1e15, opt.calibration = c, opt.training = true;
  const LayerPrediction lp = predict({conv}, opt).layers[0];
  const double compute = to_double(conv.flops) / (b->input_gradient.ppp * 1e12) +
                         to_double(conv.flops) / (b->weight_gradient.ppp * 1e12);
  EXPECT_NEAR(lp.backward.compute_s, compute, 1e-12);
  EXPECT_EQ(lp.backward.bound, Bound::Compute);
}

TEST(GemmShape, FitRecoversTheEfficiencyOfSyntheticTimings) {
  const double peak = 1e14, bw = 1e12;
  Efficiency gemm{1.0, 0.5, 3e-6, 100};
  std::vector<GemmTiming> ts;
  for (int64_t m : {256, 1024, 4096})
    for (int64_t k : {512, 1024}) {
      const int64_t n = 4096;
      const Count flops = Count{2} * m * n * k, bytes = Count{2} * (m * k + k * n + m * n);
      const double ppp = m >= 1024 ? 0.75 : 0.4;
      // The max model: these GEMMs are compute-bound (memory term below 80 % of the time less overhead).
      const double t = std::max(to_double(flops) / (ppp * peak), to_double(bytes) / (0.5 * bw)) + 3e-6;
      for (int i = 0; i < 3; ++i) ts.push_back({m, n, k, flops, bytes, t});
    }
  // A memory-bound GEMM (one row) says nothing about the PPP and is left out of the fit.
  const Count skinny = Count{2} * 1 * 4096 * 4096, weights = Count{2} * 4096 * 4096;
  for (int i = 0; i < 3; ++i) ts.push_back({1, 4096, 4096, skinny, weights, to_double(weights) / (0.5 * bw) + 3e-6});
  const GemmShapeTable table = fit_gemm_shape_table(ts, gemm, peak, bw);
  EXPECT_DOUBLE_EQ(table.log2_mn.front(), 20);  // log2(256 x 4096): the skinny GEMM (log2 M N = 12) left no node
  EXPECT_NEAR(table.lookup(4096, 4096, 1024), 0.75, 1e-9);
  EXPECT_NEAR(table.lookup(256, 4096, 512), 0.4, 1e-9);
  EXPECT_NEAR(table.lookup(1024, 4096, 512), 0.75, 1e-9);
  EXPECT_THROW(fit_gemm_shape_table({}, gemm, peak, bw), Error);
}

Prediction predict_resnet50(const std::string& device, const std::string& precision) {
  const PrecisionMode mode = require_precision_mode(precision);
  LoadOptions lo;
  lo.batch = 64;
  lo.dtype = mode.activation_dtype;
  lo.training = true;
  PredictSettings s;
  s.precision = mode.compute;
  s.training = true;
  s.batch = 64;
  const PredictOptions opt = predict_options(find_device(load_devices(), device), s);
  return predict(load_model_work("resnet50", lo).layers, opt);
}

TEST(GemmShape, ShippedA100AndH100CnnCalibrationsApplyAtHalfPrecisionNotTf32) {
  for (const char* device : {"a100-sxm4-80gb", "a100", "h100-sxm", "h100"}) {
    for (const char* precision : {"amp-fp16", "amp-bf16", "fp16"}) {
      const Prediction p = predict_resnet50(device, precision);
      EXPECT_TRUE(p.calibrated) << device << " " << precision;
      for (const LayerPrediction& l : p.layers) {
        if (l.name == "layer1.0.conv2") {
          EXPECT_EQ(l.calibration, "conv (GEMM shape)") << device;
        } else if (l.name == "bn1") {
          EXPECT_EQ(l.calibration, "BatchNorm") << device;
        }
      }
    }
    // tf32 and fp32: no measured data at those peaks, so the times stay upper bounds.
    EXPECT_FALSE(predict_resnet50(device, "tf32").calibrated) << device;
    EXPECT_FALSE(predict_resnet50(device, "fp32").calibrated) << device;
  }
  const auto a100 = builtin_calibration("a100-sxm4-40gb", Precision::FP16);
  ASSERT_TRUE(a100.has_value());
  EXPECT_FALSE(a100->gemm_shapes.empty());
  EXPECT_EQ(a100->device, "a100-sxm4-80gb");  // Vidur's GPU
  EXPECT_FALSE(builtin_calibration("h100-sxm", Precision::TF32).has_value());
}

}  // namespace
}  // namespace ridge
