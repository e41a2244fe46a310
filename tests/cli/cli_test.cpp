// The ridge binary end to end: help, exit codes, one-line errors, JSON shapes of the foundation commands.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "ridge/load.hpp"
#include "support/test_support.hpp"

namespace {

using ridge::test::run_ridge;

TEST(Cli, HelpExplainsEveryCommand) {
  auto r = run_ridge("--help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* c : {"list", "summary", "flops", "sweep"}) EXPECT_NE(r.out.find(c), std::string::npos) << c;
  auto s = run_ridge("summary --help");
  EXPECT_EQ(s.exit_code, 0);
  for (const char* o : {"--batch", "--input-size", "--dtype", "--depth", "--format", "--convention", "--json"})
    EXPECT_NE(s.out.find(o), std::string::npos) << o;
}

TEST(Cli, SummaryJsonHasTheDocumentedFields) {
  auto r = run_ridge("summary resnet50 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["totals"]["params"].get<int64_t>(), 25557032);
  EXPECT_EQ(j["totals"]["macs"].get<int64_t>(), 4089184256);
  EXPECT_EQ(j["totals"]["headline"], j["totals"]["flops"]);
  EXPECT_GT(j["totals"]["backward_flops"].get<int64_t>(), j["totals"]["flops"].get<int64_t>());
  ASSERT_TRUE(j["layers"].is_array());
  const auto& first = j["layers"][0];
  for (const char* k : {"name", "op", "output_shape", "params", "macs", "flops"}) EXPECT_TRUE(first.contains(k)) << k;
  EXPECT_EQ(first["name"], "conv1");
  EXPECT_EQ(first["output_shape"], "1x64x112x112");
}

TEST(Cli, SummaryUnderAConventionSetsHeadline) {
  auto r = run_ridge("summary vgg16 --convention pthflops --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["totals"]["headline"].get<int64_t>(), 15516752872);
}

TEST(Cli, DepthGroupsByModulePath) {
  auto r = run_ridge("summary resnet18 --depth 1 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  std::vector<std::string> names;
  for (const auto& l : j["layers"]) names.push_back(l["name"]);
  EXPECT_NE(std::find(names.begin(), names.end(), "layer1"), names.end());
  EXPECT_EQ(std::find(names.begin(), names.end(), "layer1.0.conv1"), names.end());
  int64_t params = 0;
  for (const auto& l : j["layers"]) params += l["params"].get<int64_t>();
  EXPECT_EQ(params, 11689512);
}

TEST(Cli, CsvAndJsonAtOnce) {
  std::string dir = ridge::test::temp_dir();
  auto r = run_ridge("summary mnist --format csv --json " + dir + "/s.json --md " + dir + "/s.md");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("name,op,output_shape,params,macs,flops"), std::string::npos);
  auto j = run_ridge("summary mnist --format json");
  std::ifstream f(dir + "/s.json");
  nlohmann::json from_file = nlohmann::json::parse(f);
  EXPECT_EQ(from_file, nlohmann::json::parse(j.out));
}

TEST(Cli, FlopsAllConventions) {
  auto r = run_ridge("flops resnet18 --batch 2 --all-conventions --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["conventions"].size(), 10u);  // calflops is its own convention
  bool found = false;
  for (const auto& c : j["conventions"])
    if (c["convention"] == "pthflops") {
      EXPECT_EQ(c["headline"].get<int64_t>(), 3653586920);
      found = true;
    }
  EXPECT_TRUE(found);
  auto t = run_ridge("flops resnet18 --all-conventions");
  EXPECT_NE(t.out.find("what differs"), std::string::npos);
  EXPECT_EQ(t.out.find("other tools' headlines"), std::string::npos);  // they are all in the table
}

TEST(Cli, FlopsWithOnlyRidgesCountSaysHowFarTheOtherToolsSpread) {
  // The command exists to show why tools disagree: without -a the reader still learns that they do.
  const auto r = run_ridge("flops resnet50");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("other tools' headlines for this model run from torchvision 4,089,184,256 MAC (0.498x ridge's "
                       "FLOPs) to calflops 8,211,108,352 FLOP (0.999x ridge's FLOPs); --all-conventions (-a) lists "
                       "all 9"),
            std::string::npos)
      << r.out;
}

TEST(Cli, SweepHasPointsAndFits) {
  auto r = run_ridge("sweep mnist --batch 1:501:50 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["points"].size(), 11u);
  EXPECT_EQ(j["points"][10]["batch"], 501);
  EXPECT_EQ(j["points"][10]["flops"].get<int64_t>(), 501 * j["points"][0]["flops"].get<int64_t>());
  for (const auto& f : j["fits"])
    if (f["quantity"] == "flops") {
      EXPECT_NEAR(f["slope_per_sample"].get<double>(), j["points"][0]["flops"].get<double>(), 1.0);
      EXPECT_NEAR(f["intercept"].get<double>(), 0.0, 1e-3 * j["points"][0]["flops"].get<double>());
    }
}

TEST(Cli, ListShowsTheZoo) {
  auto r = run_ridge("list --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["models"].size(), ridge::zoo_entries().size());
  EXPECT_GE(j["models"].size(), 54u);  // 26 CNNs and transformers + 28 LLMs
  EXPECT_EQ(j["models"][0]["name"], "mnist");
  EXPECT_EQ(j["models"][0]["params"], 1199882);
}

TEST(Cli, ErrorsAreOneLineWithExitCodes) {
  auto unknown = run_ridge("summary resnet5");
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("did you mean resnet50"), std::string::npos) << unknown.err;
  EXPECT_EQ(std::count(unknown.err.begin(), unknown.err.end(), '\n'), 1);
  auto batch = run_ridge("summary mnist --batch 0");
  EXPECT_EQ(batch.exit_code, 2);
  EXPECT_NE(batch.err.find("--batch"), std::string::npos);
  auto notnum = run_ridge("summary mnist --batch abc");
  EXPECT_EQ(notnum.exit_code, 2);
  auto dtype = run_ridge("summary mnist --dtype int4");
  EXPECT_EQ(dtype.exit_code, 2);
  EXPECT_NE(dtype.err.find("--dtype"), std::string::npos);
  for (const char* args : {"summary gpt2 --seq-len 0", "summary gpt2 --seq-len -1", "train llama-2-7b -d a100-80gb "
                           "--gpus 8 --global-batch 0", "train llama-2-7b -d a100-80gb --gpus 8 --dp 0",
                           // a bad value of serve's and train's counting flags is a usage error, as predict's --batch 0
                           "train llama-2-7b -d a100 --gpus 0", "train llama-2-7b -d a100 --gpus 8 --tp 0",
                           "train llama-2-7b -d a100 --gpus 8 --micro-batch -1", "train llama-2-7b -d a100 --gpus 8 --seq 0",
                           "serve llama-2-7b -d a100 --batch 0", "serve llama-2-7b -d a100 --prompt 0",
                           "serve llama-2-7b -d a100 --generate -3", "serve llama-2-7b -d a100 --tp 0"}) {
    const auto r = run_ridge(args);  // 0 was taken silently as "the default"
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
  }
  // A zoo graph without a Hugging Face twin, not an LLM config: said so, not "unknown" (gpt2 has one: it serves).
  const auto not_llm = run_ridge("serve transformer-lm -d a100");
  EXPECT_EQ(not_llm.exit_code, 1);
  EXPECT_NE(not_llm.err.find("transformer-lm: a transformer zoo model, not one of the LLM zoo entries"), std::string::npos)
      << not_llm.err;
  auto size = run_ridge("summary resnet18 --input-size 3x0x5");
  EXPECT_EQ(size.exit_code, 2);
  EXPECT_NE(size.err.find("--input-size"), std::string::npos);
  // An ONNX file takes its shapes from --input; --input-size (zoo models), a --seq-len with no symbolic
  // sequence dim to bind and a --batch its fixed 1x8 input cannot take are refused, not ignored.
  const std::string onnx = std::string(RIDGE_SOURCE_DIR) + "/tests/load/data/incomplete_custom_op.onnx";
  for (const char* unused : {"--input-size 3x64x64", "--seq-len 7", "--batch 3"}) {
    auto r = run_ridge("flops " + onnx + " " + unused);
    EXPECT_EQ(r.exit_code, 1) << unused;
    EXPECT_NE(r.err.find(std::string(unused).substr(0, 10)), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--input NAME=DIMS"), std::string::npos) << r.err;
  }
  // A sweep of a file that fixes its batch sweeps that batch only, and seeks no largest batch.
  auto fixed = run_ridge("sweep " + onnx + " -b 1,2 -d a100");
  EXPECT_EQ(fixed.exit_code, 1);
  EXPECT_NE(fixed.err.find("the file fixes its batch at 1"), std::string::npos) << fixed.err;
  auto one = run_ridge("sweep " + onnx + " -b 1 -d a100");
  EXPECT_EQ(one.exit_code, 0) << one.err;
  auto fmt = run_ridge("summary mnist --format xml");
  EXPECT_EQ(fmt.exit_code, 2);
  auto missing = run_ridge("summary /nonexistent/model.onnx");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("/nonexistent/model.onnx"), std::string::npos);
  auto nocmd = run_ridge("");
  EXPECT_EQ(nocmd.exit_code, 2);
  for (const auto& r : {unknown, batch, dtype, size, missing})
    EXPECT_EQ(r.err.find("terminate"), std::string::npos) << r.err;
}

// An output file whose folder does not exist is a usage error before anything is computed, not "cannot write"
// at the end of a long run; --csv DIR/ creates its folder, so it is not refused.
// Options that only mean something with another one say so (exit 2) instead of changing nothing.
TEST(Cli, OptionsThatNeedAnotherOneAreRefusedAlone) {
  for (const std::string cmd : {"predict resnet18 -d a100 --train --bucket-mib 50",
                                "predict resnet18 -d a100 --train --inter-node ib-hdr",
                                "predict resnet18 -d a100 --train --gpus-per-node 4",
                                "profile-cmd --batch-sizes 1,2 -- python train.py",
                                "profile-cmd --script s.sh -- python train.py"}) {
    const auto r = run_ridge(cmd);
    EXPECT_EQ(r.exit_code, 2) << cmd;
    EXPECT_NE(r.err.find(" requires --"), std::string::npos) << cmd << ": " << r.err;
  }
  // Values the command cannot use.
  EXPECT_EQ(run_ridge("predict vgg16 --device a100 --flops 0").exit_code, 2);
  const auto int8 = run_ridge("predict resnet18 --device a100 --train --precision int8");
  EXPECT_EQ(int8.exit_code, 2);
  EXPECT_NE(int8.err.find("--precision int8 is an inference mode"), std::string::npos) << int8.err;
  const auto missing = run_ridge("measure mnist --machine /nonexistent/machine.json");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("/nonexistent/machine.json: cannot use this machine profile"), std::string::npos)
      << missing.err;
  const auto dir = run_ridge("ingest " + ridge::test::temp_dir());
  EXPECT_EQ(dir.exit_code, 1);
  EXPECT_NE(dir.err.find("is a directory, not a profile"), std::string::npos) << dir.err;
}

TEST(Cli, OutputFilesAreCheckedBeforeTheRun) {
  const std::string nowhere = "/nonexistent-ridge-folder/";
  for (const std::string& args : {"summary mnist --json " + nowhere + "x.json", "summary mnist --md " + nowhere + "x.md",
                                 "summary mnist --csv-totals " + nowhere + "t.csv",
                                 "report mnist -o " + nowhere + "r.html", "summary mnist --plot " + nowhere + "p.svg"}) {
    const auto r = run_ridge(args);
    EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.err;
    EXPECT_NE(r.err.find("cannot write there: folder '/nonexistent-ridge-folder' does not exist"), std::string::npos)
        << args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.find("report:"), std::string::npos) << "ran before refusing: " << r.err;
  }
  const auto folder = run_ridge("summary mnist --json /tmp");
  EXPECT_EQ(folder.exit_code, 1);
  EXPECT_NE(folder.err.find("--json /tmp: cannot write there: is a folder"), std::string::npos) << folder.err;
  const std::string dir = ridge::test::temp_dir() + "/csv-new/";
  const auto csv = run_ridge("summary mnist --csv " + dir);
  EXPECT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_TRUE(std::filesystem::is_directory(dir));
}

}  // namespace

namespace {

TEST(Cli, PlotOnEveryCommandThatShowsData) {
  const std::string dir = ridge::test::temp_dir();
  const std::string shared = ridge::test::shared_dir();
  std::vector<std::pair<std::string, std::string>> runs = {
      {"summary", "summary mnist --plot " + dir + "/summary.svg"},
      {"sweep", "sweep mnist --batch 1,8,64 --plot " + dir + "/sweep.svg"},
      {"roofline", "roofline resnet18 --device v100 --plot " + dir + "/roofline.svg"},
      {"predict", "predict resnet18 --device a100 --plot " + dir + "/predict.svg"},
      {"measure", "measure mnist --batch 2 --repeat 2 --machine none --plot " + dir + "/measure.svg"}};
  if (ridge::test::have_shared())
    runs.push_back({"ingest", "ingest " + ridge::test::fixture("profiles/03_nsys_gputrace_csv_nyu_A100_resnet50_bs10_train.csv") +
                                  " --plot " + dir + "/ingest.svg"});
  for (const auto& [name, args] : runs) {
    auto r = ridge::test::run_ridge(args);
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
    std::ifstream f(dir + "/" + name + ".svg");
    std::string svg((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    EXPECT_NE(svg.find("<svg"), std::string::npos) << name;
    EXPECT_NE(svg.find("</svg>"), std::string::npos) << name;
  }
  auto bad = ridge::test::run_ridge("roofline resnet18 --device v100 --plot " + dir + "/x.jpg");
  EXPECT_EQ(bad.exit_code, 2);
}

}  // namespace

// Training a recurrent model from a file that fixes its shapes (12x1x32, sequence first): the progress line and the
// table name the batch the measurement runs at (the file's, not --batch's default 1), and every LSTM step has a
// backward (the tool said "runs forward only" before).
TEST(Cli, MeasureTrainsARecurrentModelAtTheFilesBatch) {
  const auto r = run_ridge("measure " + std::string(RIDGE_SOURCE_DIR) +
                           "/tests/data/validation/nn_lstm_bi2.ext_emptybin.onnx --train --repeat 2 --machine none");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("at batch 12 "), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("(training step, batch 12,"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("no backward"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("forward only"), std::string::npos) << r.out;
}
