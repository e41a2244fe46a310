// End to end: `ridge devices`, `roofline`, `predict`, `calibrate` through the built binary.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <set>

#include "support/test_support.hpp"

namespace ridge {
namespace {

using nlohmann::json;
using test::run_ridge;

// Every test here runs with an empty cache folder, so that a machine profile on the host changes nothing.
class CliModel : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { setenv("XDG_CACHE_HOME", (test::temp_dir() + "/cache").c_str(), 1); }
};

json run_json(const std::string& args) {
  const auto r = run_ridge(args + " --format json");
  EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
  return r.exit_code == 0 ? json::parse(r.out) : json::object();
}

void expect_one_line_error(const std::string& args, int code, const std::string& needle) {
  const auto r = run_ridge(args);
  EXPECT_EQ(r.exit_code, code) << args << "\n" << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << args << "\n" << r.err;
  EXPECT_EQ(r.err.find("terminate"), std::string::npos) << r.err;
}

TEST_F(CliModel, DevicesListsTheDatabaseWithPeaksAndBandwidths) {
  const json j = run_json("devices");
  ASSERT_TRUE(j["devices"].is_array());
  EXPECT_GE(j["devices"].size(), 21u);
  bool found = false;
  for (const auto& d : j["devices"])
    if (d["id"] == "h100-sxm") {
      found = true;
      EXPECT_DOUBLE_EQ(d["peak_flops"]["fp16"].get<double>(), 989.5e12);
      EXPECT_DOUBLE_EQ(d["bandwidth_bytes_per_s"]["dram"].get<double>(), 3350e9);
    }
  EXPECT_TRUE(found);
  const auto table = run_ridge("devices");
  EXPECT_EQ(table.exit_code, 0);
  EXPECT_NE(table.out.find("v100-sxm2"), std::string::npos);
}

TEST_F(CliModel, PredictReproducesSeed003WithFlopsOverride) {
  json j = run_json("predict vgg16 --device k80-board --flops 15503e6 --ppp 1");
  EXPECT_NEAR(j["total_time_s"].get<double>(), 0.0017758304696449026, 1e-15);
  EXPECT_NEAR(j["samples_per_s"].get<double>(), 563.1168161001096, 1e-9);
  ASSERT_EQ(j["layers"].size(), 1u);
  EXPECT_EQ(j["layers"][0]["bound"], "compute");
  j = run_json("predict resnet50 --device k80-board --flops 3922000000 --precision fp64");
  EXPECT_NEAR(j["total_time_s"].get<double>(), 0.001347766323024055, 1e-15);
  j = run_json("predict googlenet --device k80-board --flops 1606e6 --ppp 0.5");
  EXPECT_NEAR(j["total_time_s"].get<double>(), 2 * 0.00018396334478808707, 1e-15);
}

TEST_F(CliModel, PredictAndRooflineOnZooModels) {
  json j = run_json("predict resnet18 --device v100 --batch 8");
  ASSERT_TRUE(j["layers"].is_array());
  EXPECT_GT(j["layers"].size(), 10u);
  double sum = 0;
  for (const auto& l : j["layers"]) {
    EXPECT_TRUE(l.contains("name") && l.contains("time_s") && l.contains("bound"));
    if (l["time_s"].is_number()) sum += l["time_s"].get<double>();
  }
  EXPECT_NEAR(j["total_time_s"].get<double>(), sum, 1e-9);
  const json train = run_json("predict resnet18 --device v100 --batch 8 --train --devices-count 4 --interconnect nvlink");
  EXPECT_GT(train["total_time_s"].get<double>(), j["total_time_s"].get<double>());
  EXPECT_GT(train["data_parallel"]["efficiency"].get<double>(), 0);
  EXPECT_LE(train["data_parallel"]["efficiency"].get<double>(), 100);

  EXPECT_EQ(train["data_parallel"]["nodes"].get<int>(), 1);
  EXPECT_EQ(train["data_parallel"]["intra_node"].get<std::string>(), "nvlink");  // the device file's own link

  // A cluster: 64 A100s = 8 DGX nodes on 8 x HDR, against one node of 8.
  const std::string base = "predict resnet50 --device a100 --batch 64 --train";
  const json node = run_json(base + " --devices-count 8");
  const json nodes = run_json(base + " --devices-count 64 --inter-node ib-hdr");
  EXPECT_EQ(node["data_parallel"]["nodes"].get<int>(), 1);
  EXPECT_EQ(node["data_parallel"]["intra_node"].get<std::string>(), "nvlink3");
  EXPECT_EQ(nodes["data_parallel"]["nodes"].get<int>(), 8);
  EXPECT_EQ(nodes["data_parallel"]["gpus_per_node"].get<int>(), 8);
  EXPECT_EQ(nodes["data_parallel"]["inter_node"].get<std::string>(), "8 x ib-hdr");
  EXPECT_GT(nodes["data_parallel"]["exposed_s"].get<double>(), node["data_parallel"]["exposed_s"].get<double>());
  EXPECT_LT(nodes["data_parallel"]["efficiency"].get<double>(), node["data_parallel"]["efficiency"].get<double>());
  const json& dp = nodes["data_parallel"];
  ASSERT_EQ(nodes["buckets"].size(), dp["buckets"].get<size_t>());
  EXPECT_NEAR(nodes["buckets"].back()["end_s"].get<double>() - nodes["summary"]["backward_s"].get<double>(),
              dp["exposed_s"].get<double>(), 1e-9);
  EXPECT_NEAR(dp["iteration_s"].get<double>(), nodes["total_time_s"].get<double>() + dp["exposed_s"].get<double>(), 1e-12);
  EXPECT_NEAR(dp["efficiency"].get<double>(), 100 * nodes["total_time_s"].get<double>() / dp["iteration_s"].get<double>(),
              1e-9);
  const auto text = run_ridge(base + " --devices-count 64 --gpus-per-node 4 --nics-per-node 1 --inter-node eth-25g");
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("16 nodes x 4 GPUs, nvlink3 inside, 1 x eth-25g between"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("scaling efficiency"), std::string::npos);

  // Seed 002: two models on two devices in one command.
  const json r = run_json("roofline resnet18 resnet50 --device v100 --device a100 --summary");
  ASSERT_EQ(r["models"].size(), 4u);
  EXPECT_NEAR(r["devices"][0]["ridge_flop_per_byte"].get<double>(), 17.44, 0.01);
  EXPECT_NEAR(r["devices"][1]["ridge_flop_per_byte"].get<double>(), 12.54, 0.01);
  for (const auto& m : r["models"]) EXPECT_TRUE(m["bound"] == "compute" || m["bound"] == "memory");
  // Beside each peak, the device file's measured ceiling at that precision where it has one.
  const json h = run_json("roofline resnet18 --device h100 --device v100 --device a100 --precision fp16 --summary");
  ASSERT_EQ(h["devices"].size(), 3u);
  EXPECT_NEAR(h["devices"][0]["achieved_flop_per_s"].get<double>(), 7.945e14, 1e3);  // measured in bf16: same cores
  EXPECT_TRUE(h["devices"][1]["achieved_flop_per_s"].is_null());                      // v100: none measured
  EXPECT_NEAR(h["devices"][2]["achieved_flop_per_s"].get<double>(), 2.712e14, 1e3);
}

TEST_F(CliModel, RooflineShowsAchievedFractionFromAMeasurement) {
  RIDGE_REQUIRE_SHARED();
  const std::string dir = test::temp_dir();
  // Seed 002, trial 1: resnet18 on V100 measured 23,851,649,316 FLOPs, 1,086,870,000 bytes in 0.2029 s.
  std::ofstream(dir + "/r18.json") << R"({"model": "resnet18", "device": "v100", "kernels": [
      {"name": "all kernels", "time_s": 0.202907231, "flops": 23851649316, "dram_bytes": 1086870000}]})";
  const json r = run_json("roofline " + test::fixture("onnx/resnet18.ext_emptybin.onnx") + " --device v100 --summary --measured " +
                          dir + "/r18.json");
  ASSERT_EQ(r["models"].size(), 1u);
  const auto& m = r["models"][0];
  EXPECT_EQ(m["bytes_source"], "measured");
  EXPECT_NEAR(m["intensity_flop_per_byte"].get<double>(), 21.945, 0.001);
  EXPECT_NEAR(m["achieved_flop_per_s"].get<double>(), 117.5495284e9, 1e3);
  EXPECT_NEAR(m["roofline_percent"].get<double>(), 100 * 117.5495284e9 / 15.7e12, 1e-6);
}

// A measurement matched only because it is the one file given must still record the model, device and batch
// placed: another is refused naming both sides, and --force makes it a note.
TEST_F(CliModel, RooflineAndCalibrateRefuseAMeasurementOfAnotherRun) {
  const std::string dir = test::temp_dir();
  std::ofstream(dir + "/mnist.json") << R"({"model": "mnist", "device": "cpu", "batch": 1, "layers": [
      {"name": "conv", "op": "Conv", "time_s": 0.001, "flops": 1000000, "bytes": 10000}]})";
  auto r = run_ridge("roofline resnet50 --device a100 --summary --measured " + dir + "/mnist.json");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("mnist.json: measured model is mnist, expected resnet50 (use --force"), std::string::npos) << r.err;
  r = run_ridge("roofline mnist --device a100 --summary --measured " + dir + "/mnist.json");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("measured device is cpu, expected a100"), std::string::npos) << r.err;
  std::ofstream(dir + "/mnist-a100.json") << R"({"model": "mnist", "device": "NVIDIA A100-SXM4-40GB", "batch": 1,
      "layers": [{"name": "conv", "op": "Conv", "time_s": 0.001, "flops": 1000000, "bytes": 10000}]})";
  r = run_ridge("roofline mnist --device a100 --batch 4 --summary --measured " + dir + "/mnist-a100.json");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("measured batch is 1, expected 4"), std::string::npos) << r.err;
  EXPECT_EQ(run_ridge("roofline mnist --device a100 --summary --measured " + dir + "/mnist-a100.json").exit_code, 0);
  const json forced = run_json("roofline resnet50 --device a100 --summary --force --measured " + dir + "/mnist.json");
  EXPECT_NE(forced.dump().find("forced: "), std::string::npos);

  // An ingested profile's source file names tell its GPU: an A100 profile does not calibrate a V100 or this CPU.
  std::ofstream(dir + "/ingested.json") << R"({"inputs": {"files": ["/x/09_ncu_A100_bert_fp16.csv"]}, "kernels": [
      {"name": "k", "family": "gemm", "time_s": 0.001, "flops": 1000000000, "dram_bytes": 1000000}]})";
  r = run_ridge("calibrate " + dir + "/ingested.json --device v100 -o " + dir + "/c.json");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("measured device is a100, expected v100"), std::string::npos) << r.err;
  // ncu's CSV has a CUDA device index ("0") where a name would be: it names no GPU, so nothing is refused.
  std::ofstream(dir + "/ncu-index.json") << R"({"kernels": [
      {"name": "k", "family": "gemm", "device": "0", "time_s": 0.001, "flops": 1000000000, "dram_bytes": 1000000}]})";
  r = run_ridge("calibrate " + dir + "/ncu-index.json --device h200 -o " + dir + "/c.json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = run_ridge("calibrate " + dir + "/mnist.json " + dir + "/mnist.json -o " + dir + "/c.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("mnist.json: given twice"), std::string::npos) << r.err;
}

TEST_F(CliModel, CalibrateWritesAFilePredictUses) {
  const std::string dir = test::temp_dir();
  // Two synthetic "models" measured on v100 where every Conv runs at PPP 0.5 and memory at PPP_mem 0.8.
  for (int m = 0; m < 2; ++m) {
    json doc = {{"model", "synthetic" + std::to_string(m)}, {"layers", json::array()}};
    for (int i = 1; i <= 6; ++i) {
      const double flops = 1e9 * (i + m), bytes = 1e7 * ((3 * i + m) % 7 + 1);
      doc["layers"].push_back({{"name", "conv" + std::to_string(i)}, {"op", "Conv"}, {"flops", flops}, {"bytes", bytes},
                               {"time_s", flops / (0.5 * 15.7e12) + bytes / (0.8 * 900e9)}});
    }
    std::ofstream(dir + "/m" + std::to_string(m) + ".json") << doc.dump();
  }
  const json c = run_json("calibrate " + dir + "/m0.json " + dir + "/m1.json --device v100 -o " + dir + "/cal.json");
  EXPECT_LT(c["summary"]["after"]["median"].get<double>(), 0.1);     // percent
  EXPECT_GT(c["summary"]["before"]["median"].get<double>(), 30.0);
  ASSERT_EQ(c["leave_one_model_out"].size(), 2u);
  EXPECT_LT(c["leave_one_model_out"][0]["end_to_end_error"].get<double>(), 0.1);
  const json cal = json::parse(std::ifstream(dir + "/cal.json"));
  EXPECT_NEAR(cal["classes"]["Conv"]["ppp"].get<double>(), 0.5, 1e-6);
  EXPECT_NEAR(cal["classes"]["Conv"]["ppp_mem"].get<double>(), 0.8, 1e-6);
  // The fallback (all layers are Conv here) applies to the --flops layer: time doubles at PPP 0.5.
  const json p = run_json("predict x --device v100 --flops 15700000000 --calibration " + dir + "/cal.json");
  EXPECT_NEAR(p["total_time_s"].get<double>(), 2e-3, 1e-9);
}

TEST_F(CliModel, CalibrateOnIngestedProfilesTimesFlopsAtTheirPipesPeak) {
  RIDGE_REQUIRE_SHARED();
  // The A100 BERT profile ran fp32 SGEMMs on the CUDA cores, FlashAttention's GEMMs ran on the tensor cores: fitted
  // against one peak, each predicted the other 16x off (324 % end to end); timed per pipe, within 10 %.
  const std::string dir = test::temp_dir();
  for (const char* name : {"09_ncu_csv_details_leleucas_A100_bert_mha_fp16_with_rules.csv",
                           "10_ncu_csv_details_leleucas_A100_gpt2_flashattn_fp16_with_rules.csv"}) {
    const auto r = run_ridge("ingest " + test::fixture(std::string("profiles/") + name) + " --format json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::ofstream(dir + "/" + std::string(name).substr(0, 2) + ".json") << r.out;
  }
  const json c = run_json("calibrate " + dir + "/09.json " + dir + "/10.json --device a100 --precision fp16 -o " + dir +
                          "/a100.json");
  ASSERT_EQ(c["leave_one_model_out"].size(), 2u);
  int checked = 0;
  for (const auto& m : c["leave_one_model_out"]) {
    if (m["model"] != "10") continue;
    EXPECT_LT(m["end_to_end_error"].get<double>(), 10.0) << m;  // percent
    ++checked;
  }
  EXPECT_EQ(checked, 1);
  EXPECT_NE(c["notes"].dump().find("FLOPs of 36 of 36 layer(s) timed at the peak of the pipe they ran on: tensor 312 "
                                   "TFLOP/s, fp32 and fp16 vector 19.5 TFLOP/s"),
            std::string::npos) << c["notes"];
}

TEST_F(CliModel, BadInputGivesOneLineErrors) {
  expect_one_line_error("predict x --device v10 --flops 1", 1, "unknown device (did you mean ");
  // No name is close: no empty suggestion list.
  expect_one_line_error("predict x --device zzzzzzzzzzzz --flops 1", 1,
                        "--device 'zzzzzzzzzzzz': unknown device; `ridge devices` lists all");
  expect_one_line_error("predict x --device k80 --flops 1 --precision fp16", 1, "has no fp16 peak");
  // The message names the flag that chose the precision.
  expect_one_line_error("serve llama-2-7b --device v100 --compute bf16", 1,
                        "--compute bf16: device 'v100-sxm2' has no bf16 peak");
  expect_one_line_error("train llama-2-7b --device v100 --gpus 8 --compute bf16", 1, "--compute bf16: device");
  expect_one_line_error("flops resnet18 --convention nope", 2, "unknown convention 'nope' (use ridge|torchvision|");
  expect_one_line_error("predict x --device v100 --flops 1 --precision fp7", 2, "--precision fp7");
  expect_one_line_error("predict x --device v100 --flops lots", 2, "--flops lots");
  expect_one_line_error("predict x --device v100 --flops 1 --combine avg", 2, "--combine avg");
  expect_one_line_error("predict x --device v100 --flops 1 --train --devices-count 2 --interconnect carrier-pigeon", 1,
                        "no such link");
  expect_one_line_error("predict x --device a100 --flops 1 --train --devices-count 8 --gpus-per-node 3", 2,
                        "--gpus-per-node 3 does not divide --devices-count 8");
  expect_one_line_error("predict x --device a100 --flops 1 --train --devices-count 8 --gpus-per-node 16", 2,
                        "--gpus-per-node 16 is larger than --devices-count 8");
  expect_one_line_error("predict x --device a100 --flops 1 --train --devices-count 12", 2, "--gpus-per-node");
  expect_one_line_error("predict x --device a100 --flops 1 --train --devices-count 16 --inter-node carrier-pigeon", 1,
                        "no such link");
  expect_one_line_error("predict x --device a100 --flops 1 --train --devices-count 16 --inter-node nvlink3", 1,
                        "not inter-node");
  expect_one_line_error("predict x --device v100 --flops 1 --calibration /nonexistent.json", 1, "/nonexistent.json");
  expect_one_line_error("calibrate /nonexistent.json --device v100", 1, "/nonexistent.json");
  expect_one_line_error("devices --devices /nonexistent-dir", 1, "/nonexistent-dir");
}

}  // namespace
}  // namespace ridge

namespace ridge {
namespace {

// `ridge ingest --model M --batch B` writes what the capture is of into its JSON, and `ridge calibrate` groups its
// leave-one-model-out check by that model (the H200 fixtures of tests/data/gpu/h200, read in place).
TEST(IngestIdentity, IngestJsonNamesItsModelAndCalibrateGroupsByIt) {
  const std::string h200 = std::string(RIDGE_SOURCE_DIR) + "/tests/data/gpu/h200/";
  const std::string dir = test::temp_dir();
  auto r = test::run_ridge("ingest " + h200 + "ncu_resnet50_infer_bs256.csv --model resnet50 --batch 256 --precision bf16 "
                           "--json " + dir + "/a.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(test::slurp(dir + "/a.json"));
  EXPECT_EQ(j["model"], "resnet50");
  EXPECT_EQ(j["batch"], 256);
  EXPECT_EQ(j["train"], false);
  r = test::run_ridge("ingest " + h200 + "ncu_llama_prefill512.csv --json " + dir + "/llama.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = test::run_ridge("calibrate " + dir + "/a.json " + dir + "/llama.json --device h200 --precision bf16 --format json -o " +
                      dir + "/c.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto fit = nlohmann::json::parse(r.out);
  std::set<std::string> models;
  for (const auto& row : fit["leave_one_model_out"]) models.insert(row["model"].get<std::string>());
  EXPECT_EQ(models, (std::set<std::string>{"resnet50", "llama"}));
}

}  // namespace
}  // namespace ridge
