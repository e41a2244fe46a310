// Layouts not in the fixture corpus (written here from profiler-formats.md), bad input, grouping, fits,
// explanations and collect commands. Every crash input found by scripts/fuzz-ingest.sh is replayed.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ridge/error.hpp"
#include "ridge/ingest.hpp"
#include "support/test_support.hpp"

namespace ridge::ingest {
namespace {

Profile parsed(const std::string& text) {
  Profile p = parse_text(text, "input.txt");
  derive(p);
  return p;
}

// One kernel's launch line and the head of its Speed Of Light section in ncu's text layout (2023+).
const std::string kNcuKernelHead =
      "==PROF== Profiling \"fused\" - 0 (1/1): 0%....50%....100% - 9 passes\n"
      "[1234] app@127.0.0.1\n"
      "  void fused<float, 256>(const T1 *, T1 *, int, float) (3, 1, 1)x(256, 1, 1), Context 1, Stream 7, Device 0, CC 7.5\n"
      "    Section: GPU Speed Of Light Throughput\n"
      "    ----------------------- ----------- ------------\n"
      "    Metric Name             Metric Unit Metric Value\n"
      "    ----------------------- ----------- ------------\n";

// Whether a warning of `p` says `what`.
bool warns(const Profile& p, std::string_view what) {
  return std::any_of(p.warnings.begin(), p.warnings.end(),
                     [&](const auto& w) { return w.message.find(what) != std::string::npos; });
}

TEST(IngestFormats, NcuTextNewLayout) {
  const std::string text = kNcuKernelHead +
      "    DRAM Frequency                  Ghz         4.88\n"
      "    SM Frequency                    Mhz       576.84\n"
      "    Elapsed Cycles                cycle        3,268\n"
      "    Duration                         us         5.66\n"
      "\n"
      "    OPT   Est. Speedup: 92.5%\n"
      "          The grid for this launch is configured to execute only 3 blocks.\n";
  Profile p = parsed(text);
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.kernels[0].name, "void fused<float, 256>(const T1 *, T1 *, int, float)");
  EXPECT_EQ(p.kernels[0].device, "0");
  EXPECT_EQ(p.kernels[0].pid, 1234);
  EXPECT_EQ(p.kernels[0].counters.at("Elapsed Cycles").exact, Count(3268));
  EXPECT_NEAR(*p.kernels[0].derived.time_s, 5.66e-6, 1e-15);
}

TEST(IngestFormats, AValueCutAtTheFilesEndIsSkippedWithAWarning) {
  // ncu text cut mid-number: "3,268" became "3" (a kernel 1,000x too short) with no word said.
  const std::string ncu = kNcuKernelHead +
      "    SM Frequency                    Mhz       576.84\n"
      "    Elapsed Cycles                cycle        3";
  Profile p = parsed(ncu);
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.kernels[0].counters.count("Elapsed Cycles"), 0u);
  EXPECT_FALSE(p.kernels[0].derived.time_s.has_value());
  EXPECT_TRUE(warns(p, "ends mid-line"));
  // nsys CSV: a row cut short is skipped and named, not read with empty cells.
  const std::string nsys =
      "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),Bytes (MB),"
      "Thruput (MBps),SrcMemKd,DstMemKd,Device,Ctx,Strm,Name\n"
      "100,2000,1,1,1,1,128,1,1,32,0,0,,,,,NVIDIA A100 (0),1,7,void k1()\n"
      "5000,3000,2,1,1,1,128,1,1,32,0,0,,,,,NVIDIA A100 (0),1,7,\"void k2(";
  Profile q = parsed(nsys);
  EXPECT_EQ(q.kernels.size(), 1u);
  EXPECT_TRUE(warns(q, "truncated nsys CSV row"));
}

TEST(IngestFormats, NcuCsvRawPageWithUnitsRow) {
  const std::string text =
      "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\","
      "\"Grid Size\",\"Device\",\"CC\",\"dram__bytes_read.sum\",\"gpu__time_duration.sum\","
      "\"sm__sass_thread_inst_executed_op_ffma_pred_on.sum\"\n"
      "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"Mbyte\",\"usecond\",\"inst\"\n"
      "\"0\",\"1234\",\"python3\",\"host\",\"ampere_fp16_gemm\",\"1\",\"7\",\"(128, 1, 1)\",\"(80, 1, 1)\",\"0\",\"8.0\","
      "\"2,000\",\"2,000\",\"1,000\"\n"
      "\"1\",\"1234\",\"python3\",\"host\",\"vectorized_elementwise_kernel\",\"1\",\"7\",\"(128, 1, 1)\",\"(80, 1, 1)\","
      "\"0\",\"8.0\",\"1\",\"3\",\"0\"\n";
  Profile p = parsed(text);
  ASSERT_EQ(p.kernels.size(), 2u);
  Totals t = totals(p);
  EXPECT_EQ(t.counters.at("dram__bytes_read.sum").exact, Count(2001000000));
  EXPECT_NEAR(*t.sum.time_s, 2003e-6, 1e-12);
  EXPECT_EQ(*t.sum.flops_fp32, 2000);
  EXPECT_EQ(p.kernels[0].device, "0");
}

TEST(IngestFormats, NvprofMetricsCsv) {
  const std::string text =
      "==1== Metric result:\n"
      "\"Device\",\"Kernel\",\"Invocations\",\"Metric Name\",\"Metric Description\",\"Min\",\"Max\",\"Avg\"\n"
      "\"Tesla K20c (0)\",\"kern(float*, int)\",3,\"flop_count_sp\",\"Floating Point Operations(Single Precision)\","
      "80937000,80937000,80937000\n"
      "\"Tesla K20c (0)\",\"kern(float*, int)\",3,\"dram_utilization\",\"Device Memory Utilization\",\"Low (1)\","
      "\"Low (2)\",\"Low (1)\"\n";
  Profile p = parsed(text);
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.kernels[0].invocations, 3);
  EXPECT_EQ(*totals(p).sum.flops_fp32, Count(3) * 80937000);
  EXPECT_EQ(p.architecture, "");  // Kepler K20c: no hint in the table, and no tensor metric needed
}

TEST(IngestFormats, NsysStatsCsvKernelSummary) {
  const std::string text =
      "Processing [/data/run.sqlite] with [/opt/nvidia/nsight-systems/2025.1.1/reports/cuda_gpu_kern_sum.py]...\n"
      "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"
      "88.3,2991054425,900,3323393.8,1448436.0,1446691,7121681,2145299.1,ampere_sgemm_128x64_tn\n"
      "11.7,396000000,100,3960000.0,3960000.0,3960000,3960000,0.0,\"void reduce_kernel<1, 2>(float*, int)\"\n"
      "\n"
      "Processing [/data/run.sqlite] with [/opt/nvidia/nsight-systems/2025.1.1/reports/cuda_gpu_mem_size_sum.py]...\n"
      "SKIPPED: /data/run.sqlite does not contain CUDA memory transfers data.\n";
  Profile p = parsed(text);
  ASSERT_EQ(p.kernels.size(), 2u);
  Totals t = totals(p);
  EXPECT_EQ(t.kernels, 1000);
  EXPECT_EQ(t.counters.at("Total Time").exact, Count(3387054425));
  EXPECT_EQ(kernel_family(p.kernels[1].name, false), "reduction");
}

TEST(IngestFormats, TorchProfilerTable) {
  const std::string rule =
      "-------------------------  ------------  ------------  ------------  ------------  ------------\n";
  const std::string text =
      "STAGE:2024-01-01 profiler started\n" + rule +
      "                     Name    Self CPU %      Self CPU     Self CUDA   Self CUDA %    # of Calls\n" + rule +
      "          model_inference        50.00%       2.541ms       0.000us         0.00%             1\n"
      "             aten::conv2d         1.00%      45.000us       8.000ms        70.00%            20\n"
      "              aten::addmm         1.00%      45.000us       3.392ms        30.00%             1\n" +
      rule + "Self CPU time total: 45.443ms\nSelf CUDA time total: 11.392ms\n";
  Profile p = parsed(text);
  ASSERT_EQ(p.formats.size(), 1u);
  EXPECT_EQ(p.formats[0], Format::TorchTable);
  ASSERT_EQ(p.kernels.size(), 2u);  // model_inference has no GPU time
  Totals t = totals(p);
  EXPECT_NEAR(*t.sum.time_s, 11.392e-3, 1e-12);
  EXPECT_EQ(t.kernels, 21);
  EXPECT_EQ(kernel_family(p.kernels[0].name, false), "conv-implicit-gemm");
  EXPECT_EQ(kernel_family(p.kernels[1].name, false), "gemm");
}

TEST(IngestRuns, IdRestartAndRepeatedProcessResults) {
  // ncu CSV rows whose launch IDs go back to 0 without a second header (two --csv outputs, one header cut away)
  const std::string header =
      "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Kernel Time\",\"Context\",\"Stream\","
      "\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n";
  auto row = [](int id, const char* kernel, const char* value) {
    return fmt::format("\"{}\",\"7\",\"app\",\"h\",\"{}\",\"t\",\"1\",\"7\",\"s\",\"dram__bytes.sum\",\"byte\",\"{}\"\n", id,
                       kernel, value);
  };
  const std::string rows = row(0, "k_a", "100") + row(1, "k_b", "200");
  Profile csv = parsed(header + rows + rows);
  ASSERT_EQ(csv.runs.size(), 2u);
  EXPECT_EQ(csv.runs[1].boundary, "launch IDs restart at 0");
  EXPECT_EQ(csv.runs[1].line, 4);
  EXPECT_EQ(*totals(csv, run_records(csv, 1)).sum.dram_bytes, 300);
  EXPECT_EQ(parsed(header + rows).runs.size(), 1u);
  // ncu text written with -q (no ==PROF== lines): the same process printing its results again starts a new run
  const std::string text =
      "[1234] app@127.0.0.1\n"
      "  k(float*), 2021-Nov-10 20:08:01, Context 1, Stream 7\n"
      "    Section: Command line profiler metrics\n"
      "    ---------------------------------------------------------------------- --------------- "
      "------------------------------\n"
      "    dram__bytes_read.sum                                                              byte                            64\n"
      "    ---------------------------------------------------------------------- --------------- "
      "------------------------------\n"
      "\n";
  Profile twice = parsed(text + text);
  ASSERT_EQ(twice.runs.size(), 2u);
  EXPECT_EQ(twice.runs[1].boundary, "results of process 1234 again");
  EXPECT_EQ(twice.kernels[1].launch_id, 0);
  EXPECT_EQ(group(twice, GroupBy::Run).size(), 2u);
}

TEST(IngestBadInput, NeverThrowsAndSaysWhy) {
  const std::vector<std::string> inputs = {
      "",
      "just some text\nnothing to see\n",
      "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\"\n",
      "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Kernel Time\",\"Context\",\"Stream\","
      "\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n\"0\",\"1\",\"p\",\"h\",\"k(int\n",
      "==PROF== Connected to process 1 (/bin/app)\n==PROF== Profiling \"k\" - 0: 0%....50%",  // killed mid-run
      "[1] app@host\n  k(), 2021-Nov-10 20:08:01, Context 1, Stream 7\n    Section: x\n    ----- -----\n",
      "==1== NVPROF is profiling process 1\nNo kernels were profiled.\n======== Error: Application received signal 9\n",
      "Invocations  Metric Name  Metric Description  Min  Max  Avg\n    Kernel: k\n  x\n",
      "Start (ns),Duration (ns),Name\n1,abc,k\n2,",
  };
  for (const auto& in : inputs) {
    Profile p;
    EXPECT_NO_THROW(p = parse_text(in, "bad.log")) << in;
    derive(p);
    totals(p);
    EXPECT_FALSE(p.warnings.empty()) << "no warning for:\n" << in;
    for (const auto& w : p.warnings) EXPECT_EQ(w.file, "bad.log");
  }
}

TEST(IngestBadInput, WarningsNameTheLine) {
  Profile p = parsed(
      "[1] app@host\n  k(), 2021-Nov-10 20:08:01, Context 1, Stream 7\n    Section: Command line profiler metrics\n"
      "    ---------------------------------------------------------------------- --------------- "
      "------------------------------\n"
      "    dram__bytes_read.sum                                                             Kbyte                        (!) n/a\n"
      "    ---------------------------------------------------------------------- --------------- "
      "------------------------------\n");
  ASSERT_EQ(p.kernels.size(), 1u);
  ASSERT_FALSE(p.warnings.empty());
  EXPECT_EQ(p.warnings[0].line, 5);
  EXPECT_NE(p.warnings[0].text().find("bad"), 0u);
  EXPECT_FALSE(p.kernels[0].derived.dram_bytes.has_value());  // not a silent zero
}

TEST(IngestBadInput, MissingFileIsAnError) {
  EXPECT_THROW(read_file("/nonexistent/ridge/profile.log"), Error);
}

TEST(IngestBadInput, FuzzRegressionsReplay) {
  const std::string dir = std::string(RIDGE_SOURCE_DIR) + "/tests/ingest/regressions";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "no regressions saved yet";
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (!e.is_regular_file() || e.path().extension() == ".md") continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    for (Format f : all_formats()) {
      ReadOptions o;
      o.format = f;
      EXPECT_NO_THROW({
        Profile p = parse_text(ss.str(), e.path().string(), o);
        derive(p);
        totals(p);
      }) << e.path();
    }
  }
}

TEST(IngestAnalysis, FamiliesGroupsAndFit) {
  EXPECT_EQ(kernel_family("volta_scudnn_winograd_128x128_ldg1_ldg4_tile148n_nt", false), "conv-winograd");
  EXPECT_EQ(kernel_family("void fft2d_r2c_32x32<float>(float2*)", false), "conv-fft");
  EXPECT_EQ(kernel_family("implicit_convolve_sgemm<float, float, 128>", false), "conv-implicit-gemm");
  EXPECT_EQ(kernel_family("ampere_sgemm_64x32_sliced1x4_tn", false), "gemm");
  EXPECT_EQ(kernel_family("void at::native::vectorized_layer_norm_kernel<c10::Half>", false), "normalization");
  EXPECT_EQ(kernel_family("[CUDA memset]", true), "memset");
  EXPECT_EQ(kernel_family("[CUDA memcpy HtoD]", true), "memcpy");
  // Fused attention is its own family, although its signatures name conv/GEMM words ("fprop", "cutlass", "gemm").
  for (const char* name : {
           "fmha_fwd_loop_kernel<FMHA_kernel_traits<(int)128, (int)64, (int)16, (int)1, (int)4, (unsigned int)8, "
           "__half>, (bool)0, (bool)0, (bool)0>(Fused_multihead_attention_fprop_params)",
           "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::half_t>, false>"
           "(Flash_fwd_params)",
           "void flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<64, 128, 128, 8>>(Flash_bwd_params)",
           "void pytorch_flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<64, 64, 256, 4>>(pytorch_flash::Flash_fwd_params)",
           "void fmha_cutlassF_f16_aligned_64x64_rf_sm80(AttentionKernel<cutlass::half_t, cutlass::arch::Sm80>::Params)",
           "void at::native::(anonymous namespace)::flash_attn_fwd_gemm_kernel<float>",
           "void xformers::efficient_attention_forward_cutlass<float>"})
    EXPECT_EQ(kernel_family(name, false), "attention") << name;
  EXPECT_EQ(kernel_family("sm80_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc", false), "conv-implicit-gemm");
  EXPECT_EQ(kernel_family("cutlass_80_tensorop_h16816gemm_128x128_32x3_nn_align8", false), "gemm");
  EXPECT_TRUE(is_tensor_core_kernel("volta_fp16_s884cudnn_fp16_128x128_ldg8_relu_f2f_exp_small_nhwc_tn_v1"));
  EXPECT_FALSE(is_tensor_core_kernel("ampere_sgemm_64x32_sliced1x4_tn"));
  auto f = fit_line({1, 2, 4}, {12, 22, 42});
  ASSERT_TRUE(f);
  EXPECT_NEAR(f->slope, 10, 1e-9);
  EXPECT_NEAR(f->intercept, 2, 1e-9);
  EXPECT_NEAR(f->r2, 1, 1e-12);
  EXPECT_FALSE(fit_line({3, 3}, {1, 2}).has_value());
  EXPECT_EQ(label_number("bs=51"), 51.0);
  EXPECT_FALSE(label_number("fast").has_value());
}

TEST(IngestAnalysis, ExplainNamesKernels) {
  Profile p = parsed(
      "Start (ns),Duration (ns),CorrId,GrdX,Name\n"
      "1,1000,1,8,volta_fp16_s884gemm_fp16_128x128_nt\n");
  // pretend FFMA counts were collected for the GEMM: zero FP instructions, no tensor metric
  p.kernels[0].counters["sm__sass_thread_inst_executed_op_ffma_pred_on.sum"] = Value{0, Count(0), "inst"};
  derive(p);
  Totals t = totals(p);
  Expected e{"test", 1000000, 1000};
  auto ex = explain(p, t, e);
  ASSERT_EQ(ex.size(), 2u);
  ASSERT_TRUE(ex[0].ratio.has_value());
  EXPECT_EQ(*ex[0].ratio, 0.0);
  ASSERT_FALSE(ex[0].reasons.empty());
  EXPECT_NE(ex[0].reasons[0].find("volta_fp16_s884gemm"), std::string::npos) << ex[0].reasons[0];
}

TEST(IngestCollect, CommandsAndSlurm) {
  CollectRequest r;
  r.command = {"python", "train.py", "--batch-size", "{bs}"};
  auto c = collect_command(r);
  EXPECT_NE(c.command.find("ncu --target-processes all"), std::string::npos);
  EXPECT_NE(c.command.find("sm__sass_thread_inst_executed_op_ffma_pred_on.sum"), std::string::npos);
  EXPECT_NE(c.command.find("dram__bytes_read.sum"), std::string::npos);
  EXPECT_NE(c.command.find("gpu__time_duration.sum"), std::string::npos);
  EXPECT_NE(c.command.find("--print-units base"), std::string::npos);
  bool clock_note = false;
  for (const auto& n : c.notes) clock_note |= n.find("clock-control") != std::string::npos;
  EXPECT_TRUE(clock_note);
  r.tool = "nsys";
  EXPECT_NE(collect_command(r).command.find("cuda_gpu_trace"), std::string::npos);
  r.tool = "nvprof";
  EXPECT_NE(collect_command(r).command.find("flop_count_sp"), std::string::npos);
  r.tool = "ncu";
  SlurmOptions s;
  s.partition = "gpu";
  s.account = "proj";
  s.batch_sizes = {1, 51};
  std::string script = slurm_script(r, s);
  EXPECT_NE(script.find("#SBATCH --partition=gpu"), std::string::npos);
  EXPECT_NE(script.find("#SBATCH --account=proj"), std::string::npos);
  EXPECT_NE(script.find("#SBATCH --gres=gpu:1"), std::string::npos);
  EXPECT_NE(script.find("for bs in 1 51; do"), std::string::npos);
  EXPECT_NE(script.find("--batch-size ${bs}"), std::string::npos);
  EXPECT_NE(script.find("ridge ingest --label bs=1 ridge-profile-bs1.csv --label bs=51 ridge-profile-bs51.csv"),
            std::string::npos);
  r.command = {"python", "train.py"};
  EXPECT_THROW(slurm_script(r, s), UsageError);
  r.tool = "perf";
  EXPECT_THROW(collect_command(r), UsageError);
}

}  // namespace
}  // namespace ridge::ingest
