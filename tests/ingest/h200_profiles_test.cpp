// The H200 (Hopper) profiles of tests/data/gpu/h200 (PROVENANCE.md there), read in place: exact tensor-core FLOPs
// from the tensor-path counters (sm__ops_path_tensor_src_*) instead of one factor per tensor-pipe instruction, the
// kernel families of cuBLAS 13 / cuDNN 9 kernels, the torch 2.11 key_averages table against the Chrome trace of the
// same step, a training step captured in two ncu processes, and every file's totals against sums taken here,
// independently, from the raw files.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "ridge/error.hpp"
#include "ridge/ingest.hpp"
#include "support/test_support.hpp"

namespace ridge::ingest::h200_test {  // named: the test sources are compiled as one unity file
namespace {

const std::string kDir = std::string(RIDGE_SOURCE_DIR) + "/tests/data/gpu/h200/";

Profile load(std::initializer_list<const char*> names) {
  std::vector<Profile> parts;
  for (const char* n : names) parts.push_back(read_file(kDir + n));
  Profile p = combine(std::move(parts));
  derive(p);
  return p;
}

std::vector<std::string> files_like(const std::string& prefix, const std::string& suffix) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(kDir)) {
    const std::string n = e.path().filename().string();
    if (n.rfind(prefix, 0) == 0 && n.size() >= suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Count tensor(const Derived& d, const std::string& prec) {
  auto it = d.tensor_by_precision.find(prec);
  return it == d.tensor_by_precision.end() ? -1 : it->second;
}

// ---- an independent reader of ncu CSV (details page and raw page) -------------------------------------------------

std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') out.back() += '"', ++i;
    else if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) out.emplace_back();
    else out.back() += c;
  }
  return out;
}

Count integer(std::string s) {  // "1,038,405,760" -> 1038405760 (every value of these files is a whole number)
  s.erase(std::remove(s.begin(), s.end(), ','), s.end());
  size_t used = 0;
  const long long v = std::stoll(s, &used);
  EXPECT_EQ(used, s.size()) << s;
  return Count(v);
}

struct Launch {
  std::string id, kernel, nvtx;
  std::map<std::string, Count> metrics;
};
struct NcuFile {
  std::vector<Launch> launches;
  std::map<std::string, std::string> units;  ///< metric -> unit as printed
};

NcuFile read_ncu(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::vector<std::string> header;
  NcuFile f;
  std::vector<std::string> raw_units;
  auto col = [&](const char* name) {
    return static_cast<int>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  while (std::getline(in, line)) {
    if (line.rfind("\"ID\",", 0) == 0) {
      header = csv_cells(line);
      continue;
    }
    if (header.empty() || line.empty() || line[0] != '"') continue;
    auto cells = csv_cells(line);
    const bool details = col("Metric Name") < static_cast<int>(header.size());
    if (!details && cells[col("ID")].empty()) {
      raw_units = cells;
      continue;
    }
    if (f.launches.empty() || f.launches.back().id != cells[col("ID")]) {
      f.launches.push_back(Launch{cells[col("ID")], cells[col("Kernel Name")], cells[4], {}});
    }
    Launch& l = f.launches.back();
    if (details) {
      const std::string m = cells[col("Metric Name")];
      l.metrics[m] = integer(cells[col("Metric Value")]);
      f.units[m] = cells[col("Metric Unit")];
    } else {
      for (size_t c = col("CC") + 1; c < header.size(); ++c) {
        l.metrics[header[c]] = integer(cells[c]);
        f.units[header[c]] = raw_units[c];
      }
    }
  }
  return f;
}

Count sum(const NcuFile& f, const std::string& metric) {
  Count s = 0;
  for (const auto& l : f.launches)
    if (auto it = l.metrics.find(metric); it != l.metrics.end()) s += it->second;
  return s;
}

// ---- 1. exact tensor FLOPs on Hopper ----------------------------------------------------------------------------

// ncu_gemm.csv: eight cuBLAS GEMMs (cuBLAS 13, torch 2.11), each in an NVTX range "<name>_<dtype>_<M>x<N>x<K>".
// The tensor-path counters count what the tensor cores executed, 2 FLOPs per multiply-add, exactly: 2*M*N*K for
// the square GEMMs. cuBLAS computes torch's x @ W^T (x: M x K, W: N x K) as C^T = W x^T, so its tile's first
// dimension runs along N and its second along M, and a tile computes all of its rows and columns: the bf16
// 512x28672x4096 GEMM (tile 320x128) computes ceil(28672 / 320) = 90 tiles = 28,800 columns, and the M=1 GEMM (tile
// 128x8) computes 8 rows. The M=32 GEMM (tile 128x32) fills its tile: exactly 2*M*N*K. These FLOPs per tensor-pipe
// instruction differ by 16x (65,536 for bf16 4096^3, 4,096 for M=1): no single factor is right on Hopper.
TEST(H200Gemm, TensorFlopsComeFromTheTensorPathCountersPerPrecision) {
  const Profile p = load({"ncu_gemm.csv"});
  ASSERT_EQ(p.kernels.size(), 10u);
  EXPECT_EQ(p.architecture, "hopper");
  EXPECT_EQ(p.tensor_flops_per_inst, 0) << "no record took its tensor FLOPs from a factor";
  const std::regex shape(R"(_(bf16|fp16|tf32|fp32)_(\d+)x(\d+)x(\d+)$)");
  int gemms = 0, reduces = 0;
  for (const KernelRecord& k : p.kernels) {
    std::smatch m;
    ASSERT_TRUE(std::regex_search(k.nvtx, m, shape)) << k.nvtx;
    const std::string dtype = m[1];
    const Count M = std::stoll(m[2]), N = std::stoll(m[3]), K = std::stoll(m[4]);
    const Derived& d = k.derived;
    ASSERT_TRUE(d.flops_tensor.has_value()) << k.name;
    if (k.name.find("splitKreduce") != std::string::npos) {
      // the split-K reduction: 128 / 4,096 HFMA2.MMA instructions on the tensor pipe, no tensor-core math
      EXPECT_EQ(*d.flops_tensor, 0) << k.nvtx;
      EXPECT_GT(k.counters.at("sm__inst_executed_pipe_tensor.sum").exact.value(), 0);
      EXPECT_EQ(k.counters.at("sm__inst_executed_pipe_tensor.sum").exact,
                k.counters.at("sm__inst_executed_pipe_tensor_op_hmma_type_hfma2.sum").exact);
      ++reduces;
      continue;
    }
    ++gemms;
    const Count mnk2 = 2 * M * N * K;
    Count want = mnk2;
    if (k.nvtx.find("gate_up") != std::string::npos) want = 2 * M * (((N + 319) / 320) * 320) * K;  // 320-wide tile
    if (M == 1) want = 2 * 8 * N * K;                                                               // 8-row tile
    if (dtype == "fp32") {
      // the fp32 SGEMM runs on CUDA cores: FFMA = K per output (4096^3) + 1 per output for the epilogue
      // (alpha * acc + beta * C), and its 4,096 tensor-pipe instructions are HFMA2.MMA moves: no tensor FLOPs
      EXPECT_EQ(*d.flops_tensor, 0);
      EXPECT_EQ(*d.flops_fp32, 2 * Count(68736253952));
      EXPECT_EQ(Count(68736253952), M * N * K + M * N);
      EXPECT_EQ(k.counters.at("sm__inst_executed_pipe_tensor_op_hmma_type_hfma2.sum").exact, Count(4096));
      continue;
    }
    EXPECT_EQ(*d.flops_tensor, want) << k.nvtx;
    EXPECT_EQ(tensor(d, dtype), want) << k.nvtx << ": counted under its source precision";
    for (const auto& [prec, v] : d.tensor_by_precision)
      if (prec != dtype) {
        EXPECT_EQ(v, 0) << k.nvtx << " " << prec;
      }
    if (k.nvtx.rfind("square", 0) == 0 || M == 32) {
      EXPECT_EQ(*d.flops_tensor, mnk2) << k.nvtx;
    }
  }
  EXPECT_EQ(gemms, 8);
  EXPECT_EQ(reduces, 2);
  // FLOPs per tensor-pipe instruction: 65,536 (bf16 4096^3), 32,768 (1024^3, the 512-row GEMM), 4,096 (M=1)
  const std::map<std::string, Count> per_inst = {{"square4096_bf16_4096x4096x4096", 65536},
                                                 {"square1024_bf16_1024x1024x1024", 32768},
                                                 {"gate_up_llama3_8b_bf16_512x28672x4096", 32768},
                                                 {"down_llama3_8b_bf16_1x4096x14336", 4096}};
  for (const KernelRecord& k : p.kernels)
    for (const auto& [range, f] : per_inst)
      if (k.nvtx.find(range) != std::string::npos && k.name.find("nvjet") != std::string::npos) {
        EXPECT_EQ(*k.derived.flops_tensor, f * *k.counters.at("sm__inst_executed_pipe_tensor.sum").exact) << range;
      }
  const Totals t = totals(p);
  EXPECT_EQ(*t.sum.flops_tensor, Count(539957919744));
  EXPECT_EQ(t.sum.tensor_by_precision.at("bf16"), Count(265080012800));
  EXPECT_EQ(t.sum.tensor_by_precision.at("fp16"), Count(137438953472));
  EXPECT_EQ(t.sum.tensor_by_precision.at("tf32"), Count(137438953472));
  for (const char* zero : {"fp8", "int8", "int1", "fp64"}) EXPECT_EQ(t.sum.tensor_by_precision.at(zero), 0) << zero;
  EXPECT_EQ(*t.sum.flops(), Count(677465342464));  // was 180,558,283,264 with 4,096 x tensor-pipe instructions
  bool noted = false, hfma2 = false;
  for (const auto& n : p.notes) {
    noted |= n.find("sm__ops_path_tensor_src_bf16_dst_fp32.sum (bf16)") != std::string::npos;
    hfma2 |= n.find("HFMA2.MMA") != std::string::npos && n.find("3 kernel records") != std::string::npos;
  }
  EXPECT_TRUE(noted);
  EXPECT_TRUE(hfma2) << "the SGEMM and the two splitKreduce kernels are named as tensor-pipe work without math";
}

// Without the tensor-path counters (V100/A100 captures, the `tensor` group only) the factor is used as before.
// ncu's CSV names the GPU by its CUDA index ("0"): kept as printed, but no GPU name that calibrate or ingest --device
// could check against another GPU (names_a_gpu).
TEST(H200Gemm, NcuCsvDeviceIsAnIndexNotAName) {
  const Profile p = load({"ncu_gemm.csv"});
  ASSERT_FALSE(p.kernels.empty());
  EXPECT_EQ(p.kernels.front().device, "0");
  EXPECT_FALSE(names_a_gpu(p.kernels.front().device));
  EXPECT_FALSE(names_a_gpu(""));
  EXPECT_TRUE(names_a_gpu("NVIDIA H200 (0)"));
  EXPECT_TRUE(names_a_gpu("Tesla V100-SXM2-16GB"));
}

TEST(H200Gemm, WithoutTensorPathCountersTheFactorIsUsed) {
  Profile p = read_file(kDir + "ncu_gemm.csv");
  for (auto& k : p.kernels)
    for (auto it = k.counters.begin(); it != k.counters.end();)
      it = it->first.rfind("sm__ops_path_tensor", 0) == 0 ? k.counters.erase(it) : std::next(it);
  derive(p);
  EXPECT_EQ(p.tensor_flops_per_inst, 4096);
  const Totals t = totals(p);
  EXPECT_EQ(*t.sum.flops_tensor, Count(10510464) * 4096);  // the old 43,050,860,544
  EXPECT_TRUE(t.sum.tensor_by_precision.empty());
}

KernelRecord with_counters(std::initializer_list<std::pair<const char*, Count>> counters) {
  KernelRecord k;
  k.name = "nvjet_sm90_tst_128x64_64x8_1x2_h_bz_NNT";
  for (const auto& [m, v] : counters) k.counters[m] = Value{to_double(v), v, ""};
  return k;
}

// A parent counter is never added to its children, and a _sparsity_off/_on pair is summed when the parent is
// absent (the sets of data/gpu/architectures.json, first complete set wins).
TEST(H200Gemm, ParentCountersAreNeverAddedToTheirChildren) {
  Profile p;
  p.kernels.push_back(with_counters({{"sm__ops_path_tensor_src_fp16.sum", 100},
                                     {"sm__ops_path_tensor_src_fp16_dst_fp16.sum", 60},
                                     {"sm__ops_path_tensor_src_fp16_dst_fp32.sum", 40}}));
  p.kernels.push_back(with_counters({{"sm__ops_path_tensor_src_fp16_dst_fp16.sum", 60},
                                     {"sm__ops_path_tensor_src_fp16_dst_fp32.sum", 40}}));
  p.kernels.push_back(with_counters({{"sm__ops_path_tensor_src_fp8_sparsity_off.sum", 7},
                                     {"sm__ops_path_tensor_src_fp8_sparsity_on.sum", 5},
                                     {"sm__inst_executed_pipe_tensor.sum", 3}}));
  p.kernels.push_back(with_counters({{"sm__ops_path_tensor_src_fp8.sum", 12},
                                     {"sm__ops_path_tensor_src_fp8_sparsity_off.sum", 7},
                                     {"sm__ops_path_tensor_src_fp8_sparsity_on.sum", 5}}));
  derive(p);
  EXPECT_EQ(*p.kernels[0].derived.flops_tensor, 100);
  EXPECT_EQ(tensor(p.kernels[0].derived, "fp16"), 100);
  EXPECT_EQ(*p.kernels[1].derived.flops_tensor, 100);
  EXPECT_EQ(*p.kernels[2].derived.flops_tensor, 12) << "the tensor-path counters take precedence over the factor";
  EXPECT_EQ(tensor(p.kernels[2].derived, "fp8"), 12);
  EXPECT_EQ(*p.kernels[3].derived.flops_tensor, 12);
  EXPECT_EQ(p.tensor_flops_per_inst, 0);
}

// The counter -> precision table is data, and every counter profile-cmd collects is one ncu lists on the H200.
TEST(H200Gemm, TensorOpsTableIsDataAndNcuListsEveryCounter) {
  const TensorOps& ops = builtin_architectures().tensor_ops;
  std::vector<std::string> precisions;
  for (const auto& p : ops.precisions) precisions.push_back(p.precision);
  EXPECT_EQ(precisions, (std::vector<std::string>{"bf16", "fp16", "tf32", "fp8", "int8", "int1", "fp64"}));
  EXPECT_EQ(ops.flops_per_op, 1);
  EXPECT_FALSE(ops.source.empty());
  EXPECT_EQ(ops.not_math_metric, "sm__inst_executed_pipe_tensor_op_hmma_type_hfma2.sum");
  EXPECT_NE(ops.not_math_note.find("HFMA2.MMA"), std::string::npos);
  const std::string listed = test::slurp(kDir + "ncu_query_metrics_tensor.txt");
  const auto collect = ops.collect();
  EXPECT_EQ(collect.size(), 7u);
  for (const std::string& m : collect) {
    const std::string base = m.substr(0, m.size() - 4);  // without ".sum"
    EXPECT_TRUE(std::regex_search(listed, std::regex("\n" + base + " "))) << m;
  }
  EXPECT_EQ(collect_metrics("ncu", "tensor-ops"), collect);
}

TEST(H200Gemm, BadTensorOpsAreOneLineErrors) {
  const std::string head =
      R"({"format": "ridge-gpu-architectures", "counted_precision": "fp16", "architectures": [{"name": "volta", )"
      R"("tensor_flops_per_inst": {"fp16": 512}, "source": "s"}], "device_names": [], "kernel_prefixes": [], )";
  for (const auto& [ops, want] : std::vector<std::pair<std::string, std::string>>{
           {R"("tensor_ops": []})", "tensor_ops must be an object"},
           {R"("tensor_ops": {"source": "s", "flops_per_op": 0, "precisions": []}})", "'flops_per_op'"},
           {R"("tensor_ops": {"source": "s", "flops_per_op": 1, "precisions": []}})", "'precisions'"},
           {R"("tensor_ops": {"source": "s", "flops_per_op": 1, "precisions": [{"precision": "bf16", "metrics": [[]]}]}})",
            "precisions[0]: metrics[0]"},
           {R"("tensor_ops": {"source": "s", "flops_per_op": 1, "precisions": [{"precision": "bf16", "metrics": [["a"]]}, )"
            R"({"precision": "bf16", "metrics": [["b"]]}]}})",
            "precision 'bf16' listed twice"}}) {
    try {
      parse_architectures(head + ops, "arch.json");
      ADD_FAILURE() << "accepted " << ops;
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("arch.json"), std::string::npos) << m;
      EXPECT_NE(m.find(want), std::string::npos) << m;
      EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    }
  }
}

// ---- 2. kernel families ---------------------------------------------------------------------------------------

// One row per pattern of families.cpp that these profiles needed, with a real kernel name.
TEST(H200Families, NewPatterns) {
  const std::vector<std::pair<const char*, const char*>> rows = {
      {"nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", "gemm"},  // "nvjet": cuBLAS 13 Hopper GEMM
      {"nvjet_sm90_tst_40x64_64x16_4x2_h_bz_bias_TNN", "gemm"},    // ... before "bias" (elementwise)
      {"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128_4x1x1_cga1x1x1_kernel0_0",
       "attention"},  // "sdpa": cuDNN SDPA, before "cudnn" (conv)
      {"void cudnn::lean_reduction_kernel<0, 0, 0>(void *, float *, float *, float *, float *, const float *, float *, "
       "float *, float *, float *, float *, unsigned int, unsigned int, unsigned int, unsigned int, float)",
       "attention"},  // "lean_reduction": cuDNN SDPA decode's split-KV combine, before "cudnn" and "reduction"
      {"void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int, long, long, long, long, bool)",
       "elementwise"},  // "gather_kernel"
  };
  for (const auto& [name, family] : rows) EXPECT_EQ(kernel_family(name, false), family) << name;
  EXPECT_TRUE(is_tensor_core_kernel(rows[2].first));  // "wgmma"
}

// No kernel, memcpy or memset of these profiles is left in "other".
TEST(H200Families, NoFixtureKernelIsOther) {
  std::vector<std::string> files = files_like("ncu_", ".csv");
  for (const auto& suffix : {"_table.txt", "_trace.json"})
    for (const auto& f : files_like("torch_", suffix)) files.push_back(f);
  ASSERT_EQ(files.size(), 20u);
  std::set<std::string> other;
  for (const auto& f : files) {
    Profile p = read_file(kDir + f);
    EXPECT_TRUE(p.warnings.empty()) << f << ": " << (p.warnings.empty() ? "" : p.warnings[0].text());
    for (const auto& k : p.kernels)
      if (kernel_family(k.name, k.memop) == "other") other.insert(f + ": " + k.name);
  }
  for (const auto& o : other) ADD_FAILURE() << "family 'other': " << o;
}

// ---- 3. torch key_averages table against the Chrome trace of the same step -----------------------------------

// torch's table truncates names of 117 characters or more to their first 117 and "..." (max_name_column_width 120).
std::string table_name(const std::string& n) { return n.size() >= 117 ? n.substr(0, 117) + "..." : n; }

// Half the last printed digit of a table time: "1.234us" (< 1 ms), "1.234ms" (< 1 s), "1.234s".
double half_ulp(double s) { return s < 1e-3 ? 0.5e-9 : s < 1 ? 0.5e-6 : 0.5e-3; }

struct ByName {
  Count launches = 0;
  double time_s = 0, bound_s = 0;
};

std::map<std::string, ByName> by_name(const Profile& p, bool from_table) {
  std::map<std::string, ByName> out;
  for (const auto& k : p.kernels) {
    ByName& b = out[from_table ? k.name : table_name(k.name)];
    b.launches += k.invocations;
    b.time_s += k.derived.time_s.value_or(0);
    if (from_table) b.bound_s += half_ulp(k.derived.time_s.value_or(0));
  }
  return out;
}

TEST(H200TorchTable, KernelRowsAgreeWithTheTraceOfTheSameStep) {
  const std::vector<std::tuple<const char*, const char*, Count, Count>> pairs = {
      {"torch_resnet50_train_bs64_table.txt", "torch_resnet50_train_bs64_trace.json", 903, 67},
      {"torch_resnet50_infer_bs256_table.txt", "torch_resnet50_infer_bs256_trace.json", 285, 101},
      {"torch_llama3_8b_prefill512_table.txt", "torch_llama3_8b_prefill512_trace.json", 1301, 33},
      {"torch_llama3_8b_decode_eager_bs1_table.txt", "torch_llama3_8b_decode_eager_bs1_trace.json", 1726, 2}};
  for (const auto& [table_file, trace_file, kernels, memops] : pairs) {
    SCOPED_TRACE(table_file);
    const Profile table = load({table_file});
    const Profile trace = load({trace_file});
    const Totals a = totals(table), b = totals(trace);
    EXPECT_EQ(a.kernels, kernels);  // before: 1,609 for resnet50 train bs64 (operator rows counted as kernels)
    EXPECT_EQ(b.kernels, kernels);
    EXPECT_EQ(a.memops, memops);
    EXPECT_EQ(b.memops, memops);
    // the table is an aggregate: one row per kernel signature with '# of Calls' launches, times rounded to 3 digits
    const auto ta = by_name(table, true), tb = by_name(trace, false);
    double bound = 0;
    for (const auto& [name, x] : ta) bound += x.bound_s;
    ASSERT_EQ(ta.size(), tb.size());
    for (const auto& [name, x] : ta) {
      auto it = tb.find(name);
      ASSERT_NE(it, tb.end()) << name;
      EXPECT_EQ(x.launches, it->second.launches) << name;
      EXPECT_NEAR(x.time_s, it->second.time_s, x.bound_s + 1e-12) << name;
    }
    EXPECT_NEAR(*a.kernel_time_s, *b.kernel_time_s, bound);
    EXPECT_NEAR(*a.sum.time_s, *b.sum.time_s, bound);
    EXPECT_LT(bound, 50e-6);
  }
}

// Every table's kernel rows add up to its own "Self CUDA time total" line; operator rows and the GPU-side copy of
// the record_function range (Self CUDA 1940% of the total in resnet50 train bs64) are not records.
TEST(H200TorchTable, KernelRowsAddUpToSelfCudaTimeTotal) {
  const auto files = files_like("torch_", "_table.txt");
  ASSERT_EQ(files.size(), 10u);
  const std::regex total_line(R"(Self CUDA time total: ([0-9.]+)(us|ms|s)\b)");
  for (const auto& f : files) {
    SCOPED_TRACE(f);
    const std::string text = test::slurp(kDir + f);
    std::smatch m;
    ASSERT_TRUE(std::regex_search(text, m, total_line));
    const double scale = m[2] == "us" ? 1e-6 : m[2] == "ms" ? 1e-3 : 1.0;
    const double printed = std::stod(m[1]) * scale;
    const Profile p = load({f.c_str()});
    const Totals t = totals(p);
    double bound = 0.5 * scale * 1e-3;  // the total's own last digit
    for (const auto& k : p.kernels) {
      bound += half_ulp(*k.derived.time_s);
      EXPECT_EQ(k.name.find("aten::"), std::string::npos) << k.name << ": operator rows are not records";
      EXPECT_EQ(k.name.find("Optimizer.step"), std::string::npos) << "a record_function range is no record";
    }
    EXPECT_NEAR(*t.sum.time_s, printed, bound);
    bool noted = false;
    for (const auto& n : p.notes) noted |= n.find("record_function") != std::string::npos;
    EXPECT_TRUE(noted);
  }
  const Totals t = totals(load({"torch_resnet50_train_bs64_table.txt"}));
  EXPECT_EQ(t.kernels, 903);  // was 1,609
  EXPECT_EQ(t.memops, 67);
  EXPECT_NEAR(*t.sum.time_s, 15.453992e-3, 1e-12);  // was 58.6 ms
}

// A table in the kineto layout, written here: an operator launching a kernel, a memset, a record_function range
// twice (CPU side and its GPU-side copy) and a runtime row with CPU time.
TEST(H200TorchTable, KinetoLayoutCountsKernelRowsOnly) {
  auto row = [](const char* name, const char* self_cpu, const char* cpu_total, const char* self_cuda,
                const char* cuda_total, const char* calls) {
    return fmt::format("{:>22}  {:>10}  {:>10}  {:>10}  {:>10}  {:>10}  {:>10}\n", name, "0.00%", self_cpu, cpu_total,
                       self_cuda, cuda_total, calls);
  };
  const std::string rule = fmt::format("{:->22}  {:->10}  {:->10}  {:->10}  {:->10}  {:->10}  {:->10}\n", "", "", "", "",
                                       "", "", "");
  const std::string text =
      rule +
      fmt::format("{:>22}  {:>10}  {:>10}  {:>10}  {:>10}  {:>10}  {:>10}\n", "Name", "Self CPU %", "Self CPU",
                  "CPU total", "Self CUDA", "CUDA total", "# of Calls") +
      rule + row("step", "0.000us", "0.000us", "3.000ms", "3.000ms", "1") +  // the range's GPU-side copy
      row("step", "1.000ms", "2.000ms", "0.000us", "900.000us", "1") +         // the range, CPU side
      row("aten::mm", "10.000us", "20.000us", "800.000us", "800.000us", "2") +  // repeats its kernel's time
      row("gemm_kernel_x", "0.000us", "0.000us", "800.000us", "800.000us", "2") +
      row("Memset (Device)", "0.000us", "0.000us", "100.000us", "100.000us", "3") +
      row("Lazy Function Loading", "5.000us", "5.000us", "100.000us", "100.000us", "1") +  // runtime, CPU time
      row("aten::add", "1.000us", "1.000us", "0.000us", "0.000us", "1") + rule +
      "Self CPU time total: 1.016ms\nSelf CUDA time total: 900.000us\n";
  Profile p = parse_text(text, "t.txt");
  derive(p);
  ASSERT_EQ(p.kernels.size(), 2u);
  EXPECT_EQ(p.kernels[0].name, "gemm_kernel_x");
  EXPECT_FALSE(p.kernels[0].memop);
  EXPECT_TRUE(p.kernels[1].memop);
  EXPECT_EQ(kernel_family(p.kernels[1].name, p.kernels[1].memop), "memset");
  const Totals t = totals(p);
  EXPECT_EQ(t.kernels, 2);
  EXPECT_EQ(t.memops, 3);
  EXPECT_NEAR(*t.sum.time_s, 900e-6, 1e-15);
}

// ---- 4. one training step in two ncu processes ------------------------------------------------------------------

// "void at::native::(anonymous namespace)::foo<...>(...)" (torch's demangling) and "void at::<unnamed>::foo<...>"
// (ncu's) -> "foo".
std::string base_name(std::string n) {
  if (n.rfind("void ", 0) == 0) n = n.substr(5);
  for (const std::string anon : {"(anonymous namespace)", "<unnamed>"})
    for (size_t p; (p = n.find(anon)) != std::string::npos;) n.replace(p, anon.size(), "anon");
  n = n.substr(0, n.find_first_of("<("));
  const size_t colon = n.rfind("::");
  return colon == std::string::npos ? n : n.substr(colon + 2);
}

// Kernels whose sequence does not depend on the convolution and GEMM algorithms each process picked
// (cudnn.benchmark and cuBLAS heuristics choose per process: the trace's step runs dgrad + wgrad + splitK
// where the ncu processes ran other kernels, 903 against 585 + 294 launches).
std::vector<std::string> framework_sequence(const Profile& p) {
  std::vector<const KernelRecord*> ks;
  for (const auto& k : p.kernels)
    if (!k.memop) ks.push_back(&k);
  std::stable_sort(ks.begin(), ks.end(), [](auto* a, auto* b) { return a->launch_id < b->launch_id; });
  std::vector<std::string> out;
  for (const KernelRecord* k : ks) {
    const std::string f(kernel_family(k->name, false));
    if (f == "gemm" || f == "attention" || f.rfind("conv", 0) == 0) continue;
    out.push_back(f + " " + base_name(k->name));
  }
  return out;
}

TEST(H200TrainingStep, TwoProcessesMakeTheWholeStep) {
  const Profile a = load({"ncu_resnet50_train_bs64.csv"});
  const Profile b = load({"ncu_resnet50_train_bs64_rest.csv"});
  const Profile both = load({"ncu_resnet50_train_bs64.csv", "ncu_resnet50_train_bs64_rest.csv"});
  const Profile trace = load({"torch_resnet50_train_bs64_trace.json"});
  EXPECT_EQ(a.kernels.size(), 585u);
  EXPECT_EQ(b.kernels.size(), 294u);
  // two captures of different lengths are listed one after another (no launch-by-launch join): two runs
  ASSERT_EQ(both.runs.size(), 2u);
  EXPECT_EQ(both.kernels.size(), 879u);
  const Totals ta = totals(a), tb = totals(b), t = totals(both);
  EXPECT_EQ(t.kernels, ta.kernels + tb.kernels);
  EXPECT_EQ(*t.sum.flops(), *ta.sum.flops() + *tb.sum.flops());
  EXPECT_EQ(*t.sum.flops_tensor, *ta.sum.flops_tensor + *tb.sum.flops_tensor);
  EXPECT_EQ(t.sum.tensor_by_precision.at("bf16"),
            ta.sum.tensor_by_precision.at("bf16") + tb.sum.tensor_by_precision.at("bf16"));
  EXPECT_EQ(*t.sum.flops_tensor, Count(1766350389248));  // was 630,168,551,424 with 4,096 x instructions
  EXPECT_EQ(*t.sum.dram_bytes, *ta.sum.dram_bytes + *tb.sum.dram_bytes);
  EXPECT_EQ(t.counters.at("gpu__time_duration.sum").exact,
            *ta.counters.at("gpu__time_duration.sum").exact + *tb.counters.at("gpu__time_duration.sum").exact);
  // --launch-skip 585 cut at the right place: the framework kernels of both files, in order, are those of the
  // step's trace (693 of them), none lost or repeated at the cut
  const auto seq_a = framework_sequence(a), seq_b = framework_sequence(b), seq_t = framework_sequence(trace);
  std::vector<std::string> seq_ab = seq_a;
  seq_ab.insert(seq_ab.end(), seq_b.begin(), seq_b.end());
  EXPECT_EQ(seq_t.size(), 693u);
  EXPECT_EQ(seq_a.size(), 493u);
  EXPECT_EQ(seq_ab, seq_t);
  Totals tt = totals(trace);
  EXPECT_EQ(tt.kernels, 903);
}

// ---- 6. every file's totals against sums taken here from the raw files -------------------------------------------

TEST(H200Exact, NcuCountersAndFlopsEqualIndependentSums) {
  const auto files = files_like("ncu_", ".csv");
  ASSERT_EQ(files.size(), 6u);
  for (const auto& f : files) {
    SCOPED_TRACE(f);
    const NcuFile raw = read_ncu(kDir + f);
    const Profile p = load({f.c_str()});
    const Totals t = totals(p);
    ASSERT_EQ(p.kernels.size(), raw.launches.size());
    EXPECT_EQ(t.kernels, Count(raw.launches.size()));
    for (size_t i = 0; i < raw.launches.size(); ++i) EXPECT_EQ(p.kernels[i].name, raw.launches[i].kernel);
    std::set<std::string> metrics;
    for (const auto& l : raw.launches)
      for (const auto& [m, v] : l.metrics) metrics.insert(m);
    EXPECT_EQ(t.counters.size(), metrics.size());
    for (const auto& m : metrics) {
      auto it = t.counters.find(m);
      ASSERT_NE(it, t.counters.end()) << m;
      ASSERT_TRUE(it->second.exact.has_value()) << m;
      EXPECT_EQ(*it->second.exact, sum(raw, m)) << m;
      const std::string unit = raw.units.at(m);
      EXPECT_EQ(it->second.unit, unit == "ns" ? "nsecond" : unit) << m;  // bytes stay bytes, ns are nanoseconds
    }
    auto flops = [&](const char* fma, const char* add, const char* mul) {
      const std::string p = "sm__sass_thread_inst_executed_op_";
      return 2 * sum(raw, p + fma + "_pred_on.sum") + sum(raw, p + add + "_pred_on.sum") + sum(raw, p + mul + "_pred_on.sum");
    };
    EXPECT_EQ(*t.sum.flops_fp32, flops("ffma", "fadd", "fmul"));
    EXPECT_EQ(*t.sum.flops_fp64, flops("dfma", "dadd", "dmul"));
    EXPECT_EQ(*t.sum.flops_fp16, flops("hfma", "hadd", "hmul"));
    const std::map<std::string, std::string> precision = {
        {"bf16", "sm__ops_path_tensor_src_bf16_dst_fp32.sum"}, {"fp16", "sm__ops_path_tensor_src_fp16.sum"},
        {"tf32", "sm__ops_path_tensor_src_tf32_dst_fp32.sum"}, {"fp8", "sm__ops_path_tensor_src_fp8.sum"},
        {"int8", "sm__ops_path_tensor_src_int8.sum"},          {"int1", "sm__ops_path_tensor_src_int1.sum"},
        {"fp64", "sm__ops_path_tensor_src_fp64.sum"}};
    Count tensor_sum = 0;
    for (const auto& [prec, metric] : precision) {
      if (!metrics.count(metric)) {
        EXPECT_EQ(t.sum.tensor_by_precision.count(prec), 0u) << prec << " was not collected";
        continue;
      }
      EXPECT_EQ(t.sum.tensor_by_precision.at(prec), sum(raw, metric)) << prec;
      tensor_sum += sum(raw, metric);
    }
    EXPECT_EQ(*t.sum.flops_tensor, tensor_sum);
    EXPECT_EQ(*t.sum.flops(), *t.sum.flops_fp32 + *t.sum.flops_fp64 + *t.sum.flops_fp16 + tensor_sum);
    EXPECT_EQ(*t.sum.dram_bytes, sum(raw, "dram__bytes_read.sum") + sum(raw, "dram__bytes_write.sum"));
    EXPECT_EQ(*t.sum.l2_bytes, sum(raw, "lts__t_bytes.sum"));
    EXPECT_EQ(*t.sum.l1_bytes, sum(raw, "l1tex__t_bytes.sum"));
    EXPECT_NEAR(*t.kernel_time_s, to_double(sum(raw, "gpu__time_duration.sum")) * 1e-9, 1e-15);
  }
}

TEST(H200Exact, TraceKernelCountsAndTimesEqualTheEvents) {
  const auto files = files_like("torch_", "_trace.json");
  ASSERT_EQ(files.size(), 4u);
  for (const auto& f : files) {
    SCOPED_TRACE(f);
    const auto j = nlohmann::json::parse(test::slurp(kDir + f));
    Count kernels = 0, memops = 0, kernel_ns = 0, all_ns = 0;
    for (const auto& e : j.at("traceEvents")) {
      if (e.value("ph", "") != "X" || !e.contains("dur")) continue;
      const std::string cat = e.value("cat", "");
      const bool kernel = cat == "kernel", memop = cat == "gpu_memcpy" || cat == "gpu_memset";
      if (!kernel && !memop) continue;
      const Count ns = std::llround(e.at("dur").get<double>() * 1000);  // kineto prints <us>.<ns:03>
      (kernel ? kernels : memops) += 1;
      (kernel ? kernel_ns : all_ns) += ns;
    }
    all_ns += kernel_ns;
    const Profile p = load({f.c_str()});
    const Totals t = totals(p);
    EXPECT_EQ(t.kernels, kernels);
    EXPECT_EQ(t.memops, memops);
    EXPECT_EQ(*t.counters.at("Duration").exact, all_ns);
    std::vector<size_t> only;
    for (size_t i = 0; i < p.kernels.size(); ++i)
      if (!p.kernels[i].memop) only.push_back(i);
    EXPECT_EQ(*totals(p, only).counters.at("Duration").exact, kernel_ns);
    EXPECT_NEAR(*t.kernel_time_s, to_double(kernel_ns) * 1e-9, 1e-12);
  }
}

}  // namespace
}  // namespace ridge::ingest::h200_test
