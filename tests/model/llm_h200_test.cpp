// The shipped H200 LLM calibration (data/calibrations/llm/h200-bf16.json, made by scripts/llm-calibrations.sh from
// tests/data/gpu/h200/h200_Meta-Llama-3-8B_mlp.csv) and what `ridge serve --device h200` predicts for our own H200
// runs of a Llama-3-8B-shaped model, against the GPU kernel time of the profiled steps read from the fixtures in
// place (torch.profiler tables and traces; tests/data/gpu/h200/PROVENANCE.md). docs/llm.md, "Measured on an H200".
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "ridge/device.hpp"
#include "ridge/llm_analysis.hpp"
#include "support/test_support.hpp"

namespace ridge {
namespace {

std::string h200_file(const std::string& name) { return std::string(RIDGE_SOURCE_DIR) + "/tests/data/gpu/h200/" + name; }

// "4.572ms", "415.553us", "0.000us" -> seconds.
double profiler_time_s(const std::string& s) {
  static const std::regex re("([0-9.]+)(us|ms|s)");
  std::smatch m;
  if (!std::regex_match(s, m, re)) throw std::runtime_error("not a profiler time: " + s);
  return std::stod(m[1]) * (m[2] == "us" ? 1e-6 : m[2] == "ms" ? 1e-3 : 1.0);
}

// One row of a key_averages table: the name and the columns named in its header.
struct ProfilerRow {
  std::string name;
  std::map<std::string, std::string> cells;
};
std::vector<ProfilerRow> profiler_table(const std::string& path) {
  std::istringstream in(test::slurp(path));
  static const std::regex gap("\\s{2,}");
  auto fields = [](std::string line) {
    line = std::regex_replace(line, std::regex("^\\s+|\\s+$"), "");
    std::vector<std::string> f(std::sregex_token_iterator(line.begin(), line.end(), gap, -1), std::sregex_token_iterator());
    return f;
  };
  std::vector<std::string> header;
  std::vector<ProfilerRow> rows;
  for (std::string line; std::getline(in, line);) {
    if (line.find_first_not_of("- ") == std::string::npos) continue;
    const auto f = fields(line);
    if (header.empty()) {
      if (!f.empty() && f[0] == "Name") header = f;
      continue;
    }
    if (f.size() < header.size()) continue;  // the totals under the table
    ProfilerRow r;
    const size_t first = f.size() - (header.size() - 1);  // names may hold runs of spaces: the columns are at the end
    for (size_t i = 0; i < first; ++i) r.name += (i ? " " : "") + f[i];
    for (size_t i = 1; i < header.size(); ++i) r.cells[header[i]] = f[first + i - 1];
    rows.push_back(std::move(r));
  }
  EXPECT_FALSE(rows.empty()) << path;
  return rows;
}

// GPU kernel time of the profiled step: the kernel rows (no CPU time of their own; the first row is the
// profiled region's GPU annotation, the whole step's span, and is not a kernel).
double table_kernel_s(const std::string& path) {
  const auto rows = profiler_table(path);
  double s = 0;
  for (const auto& r : rows)
    if (r.name != rows.front().name && profiler_time_s(r.cells.at("Self CPU")) == 0 &&
        profiler_time_s(r.cells.at("CPU total")) == 0)
      s += profiler_time_s(r.cells.at("Self CUDA"));
  return s;
}

// GPU time of the kernels whose name contains `part` (kernel rows: no CPU time of their own).
double table_kernels_named_s(const std::string& path, const std::string& part) {
  double s = 0;
  for (const auto& r : profiler_table(path))
    if (r.name.find(part) != std::string::npos && profiler_time_s(r.cells.at("Self CPU")) == 0 &&
        profiler_time_s(r.cells.at("CPU total")) == 0)
      s += profiler_time_s(r.cells.at("Self CUDA"));
  return s;
}

// ridge's time of the decode ops whose name contains `part`, per step.
double ops_named_s(const nlohmann::json& j, const std::string& part) {
  double s = 0;
  for (const auto& o : j.at("ops"))
    if (o.at("phase") == "decode" && o.at("name").get<std::string>().find(part) != std::string::npos)
      s += o.at("time_s").get<double>();
  return s / (j.at("inputs").at("generate").get<int>() - 1);
}

// The CUDA time aten ops `names` launched themselves (their kernels), summed over the step.
double table_op_s(const std::string& path, const std::set<std::string>& names) {
  double s = 0;
  for (const auto& r : profiler_table(path))
    if (names.count(r.name)) s += profiler_time_s(r.cells.at("Self CUDA"));
  return s;
}

// GPU time in a Chrome trace: its kernels, memcpys and memsets.
double trace_kernel_s(const std::string& path) {
  const auto j = nlohmann::json::parse(test::slurp(path));
  double us = 0;
  for (const auto& e : j.at("traceEvents")) {
    const std::string cat = e.value("cat", "");
    if (e.value("ph", "") == "X" && (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset"))
      us += e.at("dur").get<double>();
  }
  return us * 1e-6;
}

nlohmann::json serve(const std::string& args, const std::string& compute = "bf16") {
  auto r = test::run_ridge("serve " + h200_file("llama3_8b_config.json") + " --device h200 --compute " + compute +
                           " --weights bf16 --kv bf16 --format json " + args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

// ridge's time of the projections (q/k/v/o, gate/up/down, lm_head) of one phase, per step.
double projections_s(const nlohmann::json& j, const std::string& phase) {
  double s = 0;
  for (const auto& o : j.at("ops")) {
    const std::string name = o.at("name");
    const bool proj = name.size() > 5 && (name.compare(name.size() - 5, 5, "_proj") == 0 || name == "lm_head");
    if (o.at("phase") == phase && proj) s += o.at("time_s").get<double>();
  }
  return phase == "decode" ? s / (j.at("inputs").at("generate").get<int>() - 1) : s;
}

double rel(double predicted, double measured) { return (predicted - measured) / measured; }

TEST(LlmH200, ShippedFitAppliesToH200AtHalfPrecisionAndH100KeepsItsOwn) {
  const auto bf16 = builtin_llm_calibration("h200-sxm", Precision::BF16);
  ASSERT_TRUE(bf16.has_value());
  EXPECT_EQ(bf16->device_family, "h200");
  EXPECT_EQ(bf16->precision, "bf16");
  EXPECT_NE(bf16->file.find("h200-bf16.json"), std::string::npos) << bf16->file;
  const auto fp16 = builtin_llm_calibration("h200-sxm", Precision::FP16);  // same tensor-core peak: applies too
  ASSERT_TRUE(fp16.has_value());
  EXPECT_EQ(fp16->file, bf16->file);
  EXPECT_FALSE(builtin_llm_calibration("h200-sxm", Precision::FP32).has_value());
  const auto h100 = builtin_llm_calibration("h100-sxm", Precision::FP16);
  ASSERT_TRUE(h100.has_value());
  EXPECT_NE(h100->file.find("h100-fp16.json"), std::string::npos) << h100->file;
  // The GEMMs are fitted on the H200's own GPU-bound measurements: a physical efficiency (the fit on every
  // measurement, host-bound ones included, gives ppp 1.23 and 23 us per GEMM), near the H100's.
  const Efficiency gemm = bf16->for_class("gemm");
  EXPECT_GT(gemm.samples, 50);
  EXPECT_GT(gemm.ppp, 0.7);
  EXPECT_LE(gemm.ppp, 1.0);
  EXPECT_LT(*gemm.overhead_s, 5e-6);
  // What the H200 file cannot time (host-bound: docs/llm.md) is the H100's, and the file says so.
  const auto j = nlohmann::json::parse(test::slurp(bf16->file));
  EXPECT_EQ(j.at("borrowed").at("from"), "data/calibrations/llm/h100-fp16.json");
  for (const char* cls : {"elementwise", "softmax", "reduction", "normalization", "Gather"}) {
    EXPECT_DOUBLE_EQ(bf16->for_class(cls).ppp_mem, h100->for_class(cls).ppp_mem) << cls;
    EXPECT_DOUBLE_EQ(*bf16->for_class(cls).overhead_s, *h100->for_class(cls).overhead_s) << cls;
  }
  EXPECT_EQ(serve("--prompt 128 --generate 2")["ttft_s_label"], "calibrated (h200-bf16.json)");
  EXPECT_EQ(serve("--prompt 128 --generate 2", "fp16")["ttft_s_label"], "calibrated (h200-bf16.json)");
  EXPECT_EQ(serve("--prompt 128 --generate 2", "fp32")["ttft_s_label"], "upper bound (uncalibrated)");
}

// The shipped GEMM factors are the fit on the fixture's measurements at >= 2x their operator's host-bound floor
// (what scripts/llm-calibrations.sh writes to build/h200-llm/ and fits).
TEST(LlmH200, GemmFactorsAreTheFitOnTheFixturesGpuBoundMeasurements) {
  const auto all = read_vidur_op_csv(h200_file("h200_Meta-Llama-3-8B_mlp.csv"));
  ASSERT_EQ(all.size(), 760u);  // 19 token counts x TP 1, 2, 4, 8 x 10 operators
  std::map<std::string, double> floor;
  for (const auto& m : all) floor[m.op] = floor.count(m.op) ? std::min(floor[m.op], m.time_s) : m.time_s;
  std::vector<LlmOpMeasurement> gpu_bound;
  for (const auto& m : all)
    if (m.op_class == "gemm" && m.time_s >= 2 * floor[m.op]) gpu_bound.push_back(m);
  EXPECT_EQ(gpu_bound.size(), 79u);
  const Device d = find_device(load_devices(), "h200");
  const Calibration fit = fit_llm_calibration(gpu_bound, d, Precision::BF16);
  const Efficiency shipped = builtin_llm_calibration("h200-sxm", Precision::BF16)->for_class("gemm");
  EXPECT_NEAR(fit.for_class("gemm").ppp, shipped.ppp, 1e-6 * shipped.ppp);
  EXPECT_NEAR(fit.for_class("gemm").ppp_mem, shipped.ppp_mem, 1e-6 * shipped.ppp_mem);
  EXPECT_NEAR(*fit.for_class("gemm").overhead_s, *shipped.overhead_s, 1e-3 * *shipped.overhead_s + 1e-12);
  EXPECT_EQ(fit.for_class("gemm").samples, shipped.samples);
}

// Calibrated predictions against the profiled steps' GPU kernel time (measured numbers are read from the fixtures,
// never written here). Tolerances, from what was found (docs/llm.md, "Measured on an H200"; errors today in
// brackets): the prefill's projections 10 % [-4.7 %]: the GEMM fit; the whole prefill of 2,048 tokens with fused
// attention against SDPA's kernels 30 % [-23 %]: HF's float32 RMSNorm, rotary concatenations and dtype copies are
// kernels ridge's graph does not have; a decode step 45 % [-40 % eager batch 1, -39 % fused batch 32]: the
// projections are matrix-vector products that run at 2.6-3.7 TB/s where the fitted sum model gives 4.9 TB/s, and HF
// launches twice as many small kernels as ridge has ops. Each calibrated figure must also be closer than the
// uncalibrated roofline bound. Eager decode at batch 32 60 % [-55 %]: ridge now costs HF's copies (repeat_kv, the
// cache's torch.cat, RMSNorm's float32 casts, rotate_half's cat) at their bytes, but PyTorch runs repeat_kv's copy of
// a broadcast view at 1.2 TB/s (9.7 ms for 64 x 181 MB) and the bmm on the copies at 2.0 TB/s, where the borrowed
// elementwise and the fitted gemm factors give about 5 TB/s: those two kernels' efficiency is 10.2 of the 12.7 ms
// still missing (docs/llm.md); the step must be closer than the same step costed without the copies (fused), and the
// cache's torch.cat, a contiguous copy, within 30 % [-23 %] of its kernels.
TEST(LlmH200, CalibratedPredictionsAreWithinTheStatedToleranceOfTheMeasuredKernelTimes) {
  // Prefill of 2,048 tokens, SDPA (cuDNN flash attention): the key_averages table (no trace was kept).
  const std::string prefill_table = h200_file("torch_llama3_8b_prefill2048_table.txt");
  const double prefill = table_kernel_s(prefill_table);
  const double prefill_mm = table_op_s(prefill_table, {"aten::mm", "aten::addmm"});
  EXPECT_GT(prefill, 0.03);
  EXPECT_LT(prefill_mm, prefill);
  EXPECT_GT(prefill_mm, 0.5 * prefill);  // the GEMMs are most of a prefill
  const auto after = serve("--attention fused --prompt 2048 --generate 2");
  const auto before = serve("--attention fused --prompt 2048 --generate 2 --calibration none");
  const double p_after = after["prefill_time_s"], p_before = before["prefill_time_s"];
  EXPECT_LT(std::abs(rel(p_after, prefill)), 0.30) << p_after << " vs " << prefill;
  EXPECT_LT(std::abs(rel(p_after, prefill)), std::abs(rel(p_before, prefill)));
  EXPECT_LT(std::abs(rel(projections_s(after, "prefill"), prefill_mm)), 0.10)
      << projections_s(after, "prefill") << " vs " << prefill_mm;

  // One eager decode step at batch 1, KV length 553 (the profiled step): the Chrome trace, equal to its table.
  const double decode1 = trace_kernel_s(h200_file("torch_llama3_8b_decode_eager_bs1_trace.json"));
  EXPECT_NEAR(decode1, table_kernel_s(h200_file("torch_llama3_8b_decode_eager_bs1_table.txt")), 0.01 * decode1);
  const double d1_after = serve("--prompt 552 --generate 2")["decode_time_per_token_s"];
  const double d1_before = serve("--prompt 552 --generate 2 --calibration none")["decode_time_per_token_s"];
  EXPECT_LT(std::abs(rel(d1_after, decode1)), 0.45) << d1_after << " vs " << decode1;
  EXPECT_LT(std::abs(rel(d1_after, decode1)), std::abs(rel(d1_before, decode1)));

  // One decode step at batch 32 with SDPA's fused (cuDNN) attention, against ridge's fused attention.
  const double decode32 = table_kernel_s(h200_file("torch_llama3_8b_decode_bs32_table.txt"));
  const double d32_after = serve("--attention fused --batch 32 --prompt 552 --generate 2")["decode_time_per_token_s"];
  const double d32_before =
      serve("--attention fused --batch 32 --prompt 552 --generate 2 --calibration none")["decode_time_per_token_s"];
  EXPECT_LT(std::abs(rel(d32_after, decode32)), 0.45) << d32_after << " vs " << decode32;
  EXPECT_LT(std::abs(rel(d32_after, decode32)), std::abs(rel(d32_before, decode32)));

  // One eager decode step at batch 32 against HF eager's kernels: the copies are ops of ridge's eager graph.
  const std::string eager32_table = h200_file("torch_llama3_8b_decode_eager_bs32_table.txt");
  const double eager32 = table_kernel_s(eager32_table);
  const auto e32 = serve("--batch 32 --prompt 552 --generate 2");
  const double e32_after = e32["decode_time_per_token_s"];
  const double e32_before = serve("--batch 32 --prompt 552 --generate 2 --calibration none")["decode_time_per_token_s"];
  EXPECT_LT(std::abs(rel(e32_after, eager32)), 0.60) << e32_after << " vs " << eager32;
  EXPECT_LT(std::abs(rel(e32_after, eager32)), std::abs(rel(e32_before, eager32)));
  EXPECT_LT(std::abs(rel(e32_after, eager32)), std::abs(rel(d32_after, eager32)));  // without the copies: -76 %
  // DynamicCache's torch.cat of K and V in every layer: CatArrayBatchedCopy_vectorized, 64 launches.
  const double cache_cat = table_kernels_named_s(eager32_table, "CatArrayBatchedCopy_vectorized");
  const double cache_cat_ridge = ops_named_s(e32, "_cache");
  EXPECT_GT(cache_cat, 0.001);
  EXPECT_LT(std::abs(rel(cache_cat_ridge, cache_cat)), 0.30) << cache_cat_ridge << " vs " << cache_cat;
}

}  // namespace
}  // namespace ridge
