// The shipped H200 LLM calibration (data/calibrations/llm/h200-bf16.json, made by scripts/llm-calibrations.sh from
// tests/data/gpu/h200/h200_Meta-Llama-3-8B_graph_mlp.csv), its errors on the Llama-2-7B graph-timed file, and what `ridge serve --device h200` predicts for our own H200
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
  // Every class is fitted on the H200's own (graph-timed) measurements: nothing borrowed from another file.
  const auto j = nlohmann::json::parse(test::slurp(bf16->file));
  EXPECT_FALSE(j.contains("borrowed"));
  EXPECT_EQ(j.at("source"), nlohmann::json::array({"tests/data/gpu/h200/h200_Meta-Llama-3-8B_graph_mlp.csv"}));
  for (const char* cls : {"gemm", "elementwise", "normalization", "rotary", "Gather", "gated-activation"})
    EXPECT_GE(bf16->for_class(cls).samples, 76) << cls;  // one operator at 19 token counts x 4 TP degrees
  EXPECT_EQ(bf16->fallback.samples, 760);
  // The GEMMs, under the max model (loads overlap math), which fits them better than the sum: a physical
  // efficiency, that of the large GEMMs (0.68-0.80 of the peak), below the roof in both terms (the event-timed
  // file's host floor gave ppp 1.23 and 23 us; the sum model 1.05, above the roof).
  const Efficiency gemm = bf16->for_class("gemm");
  EXPECT_EQ(gemm.combine, Combine::Max);
  EXPECT_GT(gemm.ppp, 0.65);
  EXPECT_LT(gemm.ppp, 0.9);
  EXPECT_LT(gemm.ppp_mem, 1.0);
  EXPECT_LT(*gemm.overhead_s, 5e-6);
  EXPECT_EQ(serve("--prompt 128 --generate 2")["ttft_s_label"], "calibrated (h200-bf16.json)");
  EXPECT_EQ(serve("--prompt 128 --generate 2", "fp16")["ttft_s_label"], "calibrated (h200-bf16.json)");
  EXPECT_EQ(serve("--prompt 128 --generate 2", "fp32")["ttft_s_label"], "upper bound (uncalibrated)");
}

void expect_same_factors(const Efficiency& fit, const Efficiency& shipped, const std::string& what) {
  if (std::isinf(shipped.ppp))  // memory-bound classes: no compute term (null in the file)
    EXPECT_TRUE(std::isinf(fit.ppp)) << what;
  else
    EXPECT_NEAR(fit.ppp, shipped.ppp, 1e-9 * shipped.ppp) << what;
  EXPECT_NEAR(fit.ppp_mem, shipped.ppp_mem, 1e-9 * shipped.ppp_mem) << what;
  EXPECT_NEAR(*fit.overhead_s, *shipped.overhead_s, 1e-9 * *shipped.overhead_s) << what;
  EXPECT_EQ(fit.samples, shipped.samples) << what;
  EXPECT_EQ(fit.combine, shipped.combine) << what;
}

// The shipped file is a plain fit of the graph-timed Llama-3-8B file (what scripts/llm-calibrations.sh runs):
// every class and the fallback.
TEST(LlmH200, ShippedFileIsTheFitOfTheGraphTimedLlama3File) {
  const auto ms = read_vidur_op_csv(h200_file("h200_Meta-Llama-3-8B_graph_mlp.csv"));
  ASSERT_EQ(ms.size(), 760u);  // 19 token counts x TP 1, 2, 4, 8 x 10 operators
  const Device d = find_device(load_devices(), "h200");
  const Calibration fit = fit_llm_calibration(ms, d, Precision::BF16);
  const Calibration shipped = *builtin_llm_calibration("h200-sxm", Precision::BF16);
  ASSERT_EQ(fit.by_class.size(), shipped.by_class.size());
  for (const auto& [cls, e] : fit.by_class) {
    ASSERT_TRUE(shipped.by_class.count(cls)) << cls;
    expect_same_factors(e, shipped.by_class.at(cls), cls);
  }
  expect_same_factors(fit.fallback, shipped.fallback, "fallback");
}

// Its errors per operator (docs/llm.md, "Measured on an H200"; today's in brackets): in sample 11 % [8.5 %]; refitted
// without TP 8 and scored on it 14 % [11.0 %], without the odd token counts 11 % [8.7 %], without 1,025-4,096
// tokens 13 % [10.6 %; 24.2 % while the gemm class had the sum model, which extrapolated poorly to the large
// GEMMs]; the shipped file on the Llama-2-7B graph-timed file, a model it never saw, 11 % [8.6 %].
TEST(LlmH200, ErrorsInSampleHeldOutAndOnTheUnseenLlama2File) {
  const auto ms = read_vidur_op_csv(h200_file("h200_Meta-Llama-3-8B_graph_mlp.csv"));
  const Device d = find_device(load_devices(), "h200");
  const Calibration shipped = *builtin_llm_calibration("h200-sxm", Precision::BF16);
  EXPECT_LT(evaluate_llm_calibration(ms, shipped, d, Precision::BF16).all.median, 0.11);
  for (const auto& [rule, tolerance] : {std::pair{"tp=8", 0.14}, std::pair{"odd-tokens", 0.11},
                                        std::pair{"tokens>1024", 0.13}}) {
    const auto [fit, held] = LlmHoldOut{rule}.split(ms);
    const Calibration cal = fit_llm_calibration(fit, d, Precision::BF16);
    EXPECT_LT(evaluate_llm_calibration(held, cal, d, Precision::BF16).all.median, tolerance) << rule;
  }
  const auto llama2 = read_vidur_op_csv(h200_file("h200_Llama-2-7b-hf_graph_mlp.csv"));
  ASSERT_EQ(llama2.size(), 760u);
  const LlmEvaluation unseen = evaluate_llm_calibration(llama2, shipped, d, Precision::BF16);
  EXPECT_LT(unseen.all.median, 0.11);
  EXPECT_LT(unseen.all.p90, 0.30);
}

// Calibrated predictions against the profiled steps' GPU kernel time (measured numbers are read from the fixtures,
// never written here). Tolerances, a few points above what the plain fit of the graph-timed file gives (docs/llm.md,
// "Measured on an H200"; errors today in brackets):
//  - prefill, fused attention against SDPA's kernels: 512 tokens 25 % [-20.4 %], 2,048 tokens 25 % [-21.1 %]; the
//    2,048-token prefill's projections 6 % [+2.0 %]: the gemm class's max model prices the large GEMMs right (the
//    sum model's one ppp, 1.05, set mostly by the few- to 512-token GEMMs, made them 12 % fast, and the prefills
//    -15.2 / -30.6 %); what is missing is HF's float32 RMSNorm, rotary concatenations and dtype copies, kernels
//    ridge's fused graph does not have, and the L2-resident elementwise factor;
//  - a decode step: eager at batch 1 13 % [-9.1 %], fused at batch 1 9 % [-4.9 %] and at batch 32 30 % [-25.2 %]:
//    the projections' GEMVs are within 5 %; HF launches more small kernels than ridge has ops;
//  - each calibrated figure closer than the uncalibrated roofline bound;
//  - eager decode at batch 32 60 % [-52.0 %]: ridge costs HF's copies (repeat_kv, the cache's torch.cat, RMSNorm's
//    float32 casts, rotate_half's cat) at their bytes, but PyTorch copies repeat_kv's broadcast view at 1.2 TB/s and
//    runs the bmm on the copies at 2.0 TB/s; the step must be closer than the same step costed without the copies
//    (fused); the cache's torch.cat, a contiguous copy, within 50 % [-46.8 %] of its kernels: the elementwise class
//    is fitted on graph replays of the residual add, whose operands stay in the 60 MiB L2 (8.7 TB/s effective),
//    while the cat streams the cache from DRAM.
// A step costed by `serve ARGS` (field `key`) within `tolerance` of `measured` seconds, and closer to it than the
// same step's uncalibrated bound.
void expect_calibrated_within(const std::string& args, const char* key, double measured, double tolerance) {
  const double after = serve(args)[key], before = serve(args + " --calibration none")[key];
  EXPECT_LT(std::abs(rel(after, measured)), tolerance) << args << ": " << after << " vs " << measured;
  EXPECT_LT(std::abs(rel(after, measured)), std::abs(rel(before, measured))) << args;
}

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
  EXPECT_LT(std::abs(rel(p_after, prefill)), 0.25) << p_after << " vs " << prefill;
  EXPECT_LT(std::abs(rel(p_after, prefill)), std::abs(rel(p_before, prefill)));
  EXPECT_LT(std::abs(rel(projections_s(after, "prefill"), prefill_mm)), 0.06)
      << projections_s(after, "prefill") << " vs " << prefill_mm;

  // Prefill of 512 tokens, SDPA: its table (and trace).
  const double prefill512 = table_kernel_s(h200_file("torch_llama3_8b_prefill512_table.txt"));
  EXPECT_NEAR(prefill512, trace_kernel_s(h200_file("torch_llama3_8b_prefill512_trace.json")), 0.01 * prefill512);
  expect_calibrated_within("--attention fused --prompt 512 --generate 2", "prefill_time_s", prefill512, 0.25);

  // One eager decode step at batch 1, KV length 553 (the profiled step): the Chrome trace, equal to its table.
  const double decode1 = trace_kernel_s(h200_file("torch_llama3_8b_decode_eager_bs1_trace.json"));
  EXPECT_NEAR(decode1, table_kernel_s(h200_file("torch_llama3_8b_decode_eager_bs1_table.txt")), 0.01 * decode1);
  expect_calibrated_within("--prompt 552 --generate 2", "decode_time_per_token_s", decode1, 0.13);

  // One decode step at batch 1 with SDPA's fused (cuDNN) attention, against ridge's fused attention.
  const double fused1 = table_kernel_s(h200_file("torch_llama3_8b_decode_bs1_table.txt"));
  expect_calibrated_within("--attention fused --prompt 552 --generate 2", "decode_time_per_token_s", fused1, 0.09);

  // One decode step at batch 32 with SDPA's fused (cuDNN) attention, against ridge's fused attention.
  const double decode32 = table_kernel_s(h200_file("torch_llama3_8b_decode_bs32_table.txt"));
  expect_calibrated_within("--attention fused --batch 32 --prompt 552 --generate 2", "decode_time_per_token_s",
                           decode32, 0.30);
  const double d32_after = serve("--attention fused --batch 32 --prompt 552 --generate 2")["decode_time_per_token_s"];

  // One eager decode step at batch 32 against HF eager's kernels: the copies are ops of ridge's eager graph.
  const std::string eager32_table = h200_file("torch_llama3_8b_decode_eager_bs32_table.txt");
  const double eager32 = table_kernel_s(eager32_table);
  const auto e32 = serve("--batch 32 --prompt 552 --generate 2");
  const double e32_after = e32["decode_time_per_token_s"];
  const double e32_before = serve("--batch 32 --prompt 552 --generate 2 --calibration none")["decode_time_per_token_s"];
  EXPECT_LT(std::abs(rel(e32_after, eager32)), 0.60) << e32_after << " vs " << eager32;
  EXPECT_LT(std::abs(rel(e32_after, eager32)), std::abs(rel(e32_before, eager32)));
  EXPECT_LT(std::abs(rel(e32_after, eager32)), std::abs(rel(d32_after, eager32)));  // without the copies: -72 %
  // DynamicCache's torch.cat of K and V in every layer: CatArrayBatchedCopy_vectorized, 64 launches.
  const double cache_cat = table_kernels_named_s(eager32_table, "CatArrayBatchedCopy_vectorized");
  const double cache_cat_ridge = ops_named_s(e32, "_cache");
  EXPECT_GT(cache_cat, 0.001);
  EXPECT_LT(std::abs(rel(cache_cat_ridge, cache_cat)), 0.50) << cache_cat_ridge << " vs " << cache_cat;
}

}  // namespace
}  // namespace ridge
