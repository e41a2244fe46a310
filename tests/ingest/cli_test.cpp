// `ridge ingest` and `ridge profile-cmd` end to end through the built binary.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "support/test_support.hpp"

namespace ridge::test {
namespace {

std::string profile(const std::string& prefix) {
  for (const auto& e : std::filesystem::directory_iterator(fixture("profiles")))
    if (e.path().filename().string().rfind(prefix, 0) == 0) return "'" + e.path().string() + "'";
  return "missing-" + prefix;
}

TEST(IngestCli, JsonTotalsForFile01) {
  RIDGE_REQUIRE_SHARED();
  auto r = run_ridge("ingest " + profile("01_") + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const auto& t = j["totals"];
  EXPECT_EQ(t["kernels"], 1113);
  EXPECT_EQ(t["flops"], 416294618393LL);
  EXPECT_EQ(t["flops_fp32"], 416294618393LL);
  EXPECT_TRUE(t["flops_fp64"].is_null());
  EXPECT_TRUE(t["flops_tensor"].is_null());
  EXPECT_EQ(t["dram_bytes"], 18423797248LL);
  EXPECT_TRUE(t["time_s"].is_null());
  EXPECT_EQ(t["counters"]["smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"], 196678002557LL);
  EXPECT_EQ(t["counters"]["dram__sectors_write.sum"], 204176272);
  EXPECT_EQ(j["kernels"].size(), 1113u);
  EXPECT_EQ(j["kernels"][0]["family"], "conv-implicit-gemm");
}

TEST(IngestCli, TableOutputAndGroups) {
  RIDGE_REQUIRE_SHARED();
  auto r = run_ridge("ingest " + profile("22_") + " --group nvtx");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("convLayer"), std::string::npos);
  EXPECT_NE(r.out.find("79.0 us"), std::string::npos) << r.out;  // 79,040 ns
}

TEST(IngestCli, NerscJoinAndLabelledRuns) {
  RIDGE_REQUIRE_SHARED();
  auto r = run_ridge("ingest " + profile("12_") + " " + profile("13_") + " --format json --top 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["totals"]["kernels"], 797);
  EXPECT_EQ(j["totals"]["dram_bytes"], 21827093984LL);
  auto runs = run_ridge("ingest --label bs=1 " + profile("09_") + " --label bs=2 " + profile("10_") + " --format json");
  ASSERT_EQ(runs.exit_code, 0) << runs.err;
  auto k = nlohmann::json::parse(runs.out);
  ASSERT_EQ(k["runs"].size(), 2u);
  EXPECT_EQ(k["runs"][0]["label"], "bs=1");
  EXPECT_TRUE(k["fit"]["flops_slope"].is_number());
}

TEST(IngestCli, BadInputExitCodes) {
  auto missing = run_ridge("ingest /nonexistent/file.log");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("/nonexistent/file.log"), std::string::npos);
  std::string dir = temp_dir();
  std::ofstream(dir + "/junk.txt") << "hello\nworld\n";
  auto junk = run_ridge("ingest " + dir + "/junk.txt");
  EXPECT_EQ(junk.exit_code, 1);
  EXPECT_NE(junk.err.find("unknown format"), std::string::npos) << junk.err;
  EXPECT_EQ(std::count(junk.err.begin(), junk.err.end(), '\n'), 1);
  auto usage = run_ridge("ingest --join sideways x.log");
  EXPECT_EQ(usage.exit_code, 2);
  if (have_shared()) {
    auto none = run_ridge("ingest " + profile("26_"));
    EXPECT_EQ(none.exit_code, 1);
    EXPECT_NE(none.err.find("no kernels were profiled"), std::string::npos) << none.err;
  }
}

TEST(IngestCli, TwoRunsInOneFileAndRunSelection) {
  RIDGE_REQUIRE_SHARED();
  std::string path = profile("09_");
  path = path.substr(1, path.size() - 2);  // unquote
  const std::string text = slurp(path), file = temp_dir() + "/twice.csv";
  std::ofstream(file) << text << text;
  auto r = run_ridge("ingest " + file + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["runs"].size(), 2u);
  EXPECT_EQ(j["runs"][0]["kernels"], 26);
  EXPECT_EQ(j["runs"][1]["kernels"], 26);
  EXPECT_EQ(j["runs"][0]["flops"], j["runs"][1]["flops"]);
  EXPECT_EQ(j["totals"]["kernels"], 52);
  bool note = false;
  for (const auto& n : j["notes"]) note |= n.get<std::string>().find("holds 2 profiling runs") != std::string::npos;
  EXPECT_TRUE(note) << r.out;
  auto second = run_ridge("ingest " + file + " --run 2 --format json");
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(nlohmann::json::parse(second.out)["totals"]["kernels"], 26);
  auto missing = run_ridge("ingest " + file + " --run 3");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("holds 2 runs"), std::string::npos) << missing.err;
  auto model = run_ridge("ingest " + file + " --model resnet18");
  EXPECT_EQ(model.exit_code, 2);
  EXPECT_NE(model.err.find("--run N"), std::string::npos) << model.err;
}

TEST(IngestCli, TorchChromeTrace) {
  const std::string trace = std::string(RIDGE_SOURCE_DIR) + "/tests/ingest/data/torch_trace_small.json";
  auto r = run_ridge("ingest " + trace + " --group op --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["totals"]["kernels"], 7);
  EXPECT_EQ(j["totals"]["flops_fp32"], 1857880064);
  bool conv = false;
  for (const auto& g : j["groups"]) conv |= g["group"] == "aten::conv2d";
  EXPECT_TRUE(conv) << r.out;
  auto table = run_ridge("ingest " + trace);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("torch-trace"), std::string::npos);
}

TEST(IngestCli, DeviceChartAndRefusedMismatch) {
  RIDGE_REQUIRE_SHARED();
  const std::string svg = temp_dir() + "/kernel-roofline.svg";
  auto r = run_ridge("ingest " + profile("09_") + " -d a100 -p fp16 --chart '" + svg + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string drawn = slurp(svg);
  EXPECT_NE(drawn.find("Kernel roofline on a100"), std::string::npos);
  EXPECT_NE(drawn.find("Hierarchical roofline on a100"), std::string::npos);
  r = run_ridge("ingest " + profile("09_") + " --chart '" + svg + "'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--device"), std::string::npos) << r.err;
  r = run_ridge("ingest " + profile("01_") + " --model resnet50 --batch 10 -d a100");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("resnet18"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("resnet50"), std::string::npos) << r.err;
  r = run_ridge("ingest " + profile("01_") + " --model resnet50 --batch 10 -d a100 --force");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("forced: "), std::string::npos);
  EXPECT_NE(r.out.find("Profiled vs predicted per kernel family"), std::string::npos);
}

TEST(IngestCli, ProfileCmd) {
  auto r = run_ridge("profile-cmd --metrics flops,time -- python train.py -b 10");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("ncu --target-processes all", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("python train.py -b 10"), std::string::npos);
  auto s = run_ridge("profile-cmd --slurm --partition gpu --account acct --batch-sizes 1,2 -- python train.py -b {bs}");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_NE(s.out.find("#SBATCH --partition=gpu"), std::string::npos);
  EXPECT_NE(s.out.find("for bs in 1 2; do"), std::string::npos);
  auto bad = run_ridge("profile-cmd --metrics watts -- app");
  EXPECT_EQ(bad.exit_code, 2);
  // the default command line is unchanged; a note points Ampere and later GPUs to the tensor-ops group
  auto d = run_ridge("profile-cmd -- python train.py");
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_NE(d.out.find("--metrics sm__sass_thread_inst_executed_op_dadd_pred_on.sum,"), std::string::npos) << d.out;
  EXPECT_EQ(d.out.substr(0, d.out.find('\n')).find("sm__ops_path"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("# on Ampere and later, --metrics flops,tensor-ops,dram,time gives exact tensor-core FLOPs"),
            std::string::npos) << d.out;
  EXPECT_NE(d.out.find("no single FLOPs factor on Hopper"), std::string::npos) << d.out;
}

// --metrics tensor-ops collects the tensor-path counters of data/gpu/architectures.json, which ingest reads back.
TEST(IngestCli, ProfileCmdTensorOps) {
  auto r = run_ridge("profile-cmd --metrics flops,tensor-ops,dram,time -- python train.py");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string first = r.out.substr(0, r.out.find('\n'));
  for (const char* m : {"sm__ops_path_tensor_src_bf16_dst_fp32.sum", "sm__ops_path_tensor_src_fp16.sum",
                        "sm__ops_path_tensor_src_tf32_dst_fp32.sum", "sm__ops_path_tensor_src_fp8.sum",
                        "sm__ops_path_tensor_src_int8.sum", "sm__ops_path_tensor_src_int1.sum",
                        "sm__ops_path_tensor_src_fp64.sum", "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
                        "gpu__time_duration.sum"})
    EXPECT_NE(first.find(m), std::string::npos) << m << " in " << first;
  EXPECT_EQ(first.find("sparsity"), std::string::npos) << "children are never collected beside their parent";
  EXPECT_NE(r.out.find("# tensor-ops: "), std::string::npos) << r.out;
  auto nvprof = run_ridge("profile-cmd --tool nvprof --metrics flops,tensor-ops -- app");
  ASSERT_EQ(nvprof.exit_code, 0) << nvprof.err;
  EXPECT_NE(nvprof.out.find("nvprof has no counter for 'tensor-ops'"), std::string::npos) << nvprof.out;
  auto help = run_ridge("profile-cmd --help");
  EXPECT_NE(help.out.find("tensor-ops"), std::string::npos);
}

// The H200 GEMM profile: tensor FLOPs per source precision in the JSON totals.
TEST(IngestCli, TensorFlopsPerPrecisionInJson) {
  auto r = run_ridge("ingest '" + std::string(RIDGE_SOURCE_DIR) + "/tests/data/gpu/h200/ncu_gemm.csv' --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto t = nlohmann::json::parse(r.out)["totals"];
  EXPECT_EQ(t["flops_tensor"], 539957919744LL);
  EXPECT_EQ(t["flops_tensor_bf16"], 265080012800LL);
  EXPECT_EQ(t["flops_tensor_fp16"], 137438953472LL);
  EXPECT_EQ(t["flops_tensor_tf32"], 137438953472LL);
  EXPECT_EQ(t["flops_tensor_fp8"], 0);
  EXPECT_EQ(t["flops"], 677465342464LL);
  EXPECT_TRUE(t["tensor_flops_per_inst"].is_null()) << "no factor was applied";
}

}  // namespace
// The two ncu files of one H200 training step (the second from ncu --launch-skip 585) are one capture with
// --join sequence: one run, so --model compares it with resnet50's estimate; without it they are two runs.
TEST(IngestCli, JoinSequenceReadsSlicesOfOneCaptureAsOneRun) {
  const std::string h200 = std::string(RIDGE_SOURCE_DIR) + "/tests/data/gpu/h200/";
  const std::string files = h200 + "ncu_resnet50_train_bs64.csv " + h200 + "ncu_resnet50_train_bs64_rest.csv";
  auto r = run_ridge("ingest " + files + " --model resnet50 --batch 64 --train --precision amp-bf16");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("holds 2 runs"), std::string::npos) << r.err;
  r = run_ridge("ingest " + files + " --join sequence --model resnet50 --batch 64 --train --precision amp-bf16 "
                "--format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["totals"]["kernels"], 585 + 294);
  EXPECT_EQ(j["model"], "resnet50");
  EXPECT_NE(j.dump().find("--join sequence: 2 files read as consecutive slices of one capture: 879 launches"),
            std::string::npos);
  // The per-family prediction beside it: the shipped H200 calibration, or the roofline bound on request.
  r = run_ridge("ingest " + files + " --join sequence --model resnet50 --batch 64 --train --precision amp-bf16 "
                "--device h200");
  EXPECT_NE(r.out.find("Profiled vs predicted per kernel family (resnet50 on h200-sxm, amp-bf16, calibrated)"),
            std::string::npos) << r.out;
  r = run_ridge("ingest " + files + " --join sequence --model resnet50 --batch 64 --train --precision amp-bf16 "
                "--device h200 --calibration none");
  EXPECT_NE(r.out.find("(resnet50 on h200-sxm, amp-bf16, upper bound (uncalibrated))"), std::string::npos) << r.out;
  // A file of several runs is not a slice.
  const std::string dir = temp_dir();
  std::ofstream(dir + "/two_runs.csv") << slurp(h200 + "ncu_gemm.csv") << slurp(h200 + "ncu_gemm.csv");
  r = run_ridge("ingest " + dir + "/two_runs.csv " + h200 + "ncu_gemm.csv --join sequence");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("two_runs.csv holds 2 runs, not a slice of one capture"), std::string::npos) << r.err;
}

}  // namespace ridge::test
