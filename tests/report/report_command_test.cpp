// `ridge report` and `--plot` end to end through the built binary.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "report/xml_check.hpp"
#include "support/test_support.hpp"

namespace ridge::test {
namespace {

TEST(ReportCommand, WritesEverySectionForAZooModel) {
  const std::string out = temp_dir() + "/r.html";
  RunResult r = run_ridge("report resnet18 --device a100-sxm4-40gb --device v100-sxm2 --sweep 1,4 -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("report written to " + out), std::string::npos) << r.err;
  const std::string html = slurp(out);
  for (const char* id : {"headline", "roofline", "sweep", "summary", "layers", "prediction", "notes"})
    EXPECT_NE(html.find(std::string("<section id=\"") + id + "\""), std::string::npos) << id;
  // The headline comes first; then one roofline per device.
  EXPECT_LT(html.find("<section id=\"headline\""), html.find("<section id=\"roofline\""));
  auto svgs = svg_fragments(html);
  EXPECT_GE(svgs.size(), 8u);  // op groups, memory, the rooflines (one SVG row), 4 sweeps, shares
  for (const auto& s : svgs) EXPECT_TRUE(check_xml(s).ok) << check_xml(s).error;
  EXPECT_NE(html.find("data-row="), std::string::npos);
}

TEST(ReportCommand, JsonCarriesTheHeadlineOfTrainingAtAPrecision) {
  const std::string dir = temp_dir();
  RunResult r = run_ridge("report resnet18 -d a100 -d h100 --train --precision amp-bf16 --optimizer adam --sweep 1,2 -o " +
                          dir + "/r.html --json " + dir + "/r.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(slurp(dir + "/r.json"));
  ASSERT_EQ(j["headline"].size(), 2u);
  EXPECT_EQ(j["headline"][0]["run"], "a100-sxm4-40gb");
  EXPECT_EQ(j["headline"][1]["run"], "h100-sxm");
  EXPECT_GT(j["headline"][0]["time_s"].get<double>(), j["headline"][1]["time_s"].get<double>());
  EXPECT_EQ(j["scenario"]["precision"], "amp-bf16");
  EXPECT_EQ(j["scenario"]["training"], true);
  EXPECT_GT(j["memory"]["optimizer_bytes"].get<int64_t>(), 0);  // Adam state, fp32 under AMP
  EXPECT_EQ(j["memory"]["total_bytes"].get<int64_t>(),
            j["memory"]["weights_bytes"].get<int64_t>() + j["memory"]["gradient_bytes"].get<int64_t>() +
                j["memory"]["optimizer_bytes"].get<int64_t>() + j["memory"]["activation_bytes"].get<int64_t>());
  EXPECT_EQ(j["top_layers"].size(), 5u);
  // The shipped A100 half-precision calibration carries a sanity flag (a memory factor above the roof): the report
  // shows it, as `predict` does.
  // The op groups add up to the iteration: the optimizer step is one of them.
  for (size_t run = 0; run < 2; ++run) {
    const std::string dev = j["headline"][run]["run"];
    double sum = 0;
    for (const auto& g : j["op_groups"]) sum += g["time_s." + dev].get<double>();
    EXPECT_NEAR(sum, j["headline"][run]["time_s"].get<double>(), 1e-9) << dev;
  }
  const std::string notes = j["notes"].dump();
  EXPECT_NE(notes.find("a100-sxm4-40gb: flags above-roof"), std::string::npos) << notes;
  const std::string html = slurp(dir + "/r.html");
  EXPECT_NE(html.find("resnet18, batch 1, amp-bf16, training"), std::string::npos);
  EXPECT_NE(html.find("<details class=\"module\" data-module=\"layer1\">"), std::string::npos);
  for (const auto& svg : svg_fragments(html)) EXPECT_TRUE(check_xml(svg).ok);
}

TEST(ReportCommand, MeasureEndToEndShowsBothProgramsInHtmlAndJson) {
  const std::string dir = temp_dir();
  RunResult r = run_ridge("report mnist --measure --end-to-end --sweep 1 -o " + dir + "/r.html --json " + dir + "/r.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(slurp(dir + "/r.json"));
  EXPECT_GT(j["end_to_end"]["end_to_end_time_s"].get<double>(), 0);
  EXPECT_GT(j["end_to_end"]["per_layer_time_s"].get<double>(), 0);
  EXPECT_GT(j["end_to_end"]["layers_sum_s"].get<double>(), 0);
  EXPECT_TRUE(j["end_to_end"].contains("fusion_gain_percent"));
  ASSERT_FALSE(j["fusion_groups"].empty());  // conv + relu, gemm + relu, ...
  for (const auto& grp : j["fusion_groups"]) EXPECT_NE(grp["nodes"].get<std::string>().find('+'), std::string::npos);
  const std::string html = slurp(dir + "/r.html");
  EXPECT_NE(html.find("End-to-end program"), std::string::npos);
  EXPECT_NE(html.find("Fused steps"), std::string::npos);
  EXPECT_EQ(run_ridge("report mnist --end-to-end -o " + dir + "/x.html").exit_code, 2);  // needs --measure
}

TEST(ReportCommand, ServingReportOfAnLlm) {
  const std::string dir = temp_dir();
  RunResult r = run_ridge("report llama-3-8b --serve -d h100 --batch 4 --prompt 256 --generate 32 -o " + dir +
                          "/s.html --json " + dir + "/s.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(slurp(dir + "/s.json"));
  ASSERT_EQ(j["headline"].size(), 1u);
  EXPECT_GT(j["headline"][0]["ttft_s"].get<double>(), 0);
  EXPECT_GT(j["headline"][0]["per_token_s"].get<double>(), 0);
  EXPECT_GT(j["memory"]["kv_cache_bytes"].get<int64_t>(), 0);
  // Serving has no gradients or optimizer state, and its activations are not counted: not shown as 0.
  EXPECT_FALSE(j["memory"].contains("gradient_bytes"));
  EXPECT_TRUE(j["memory"]["activation_bytes"].is_null());
  EXPECT_EQ(j["memory"]["total_bytes"], j["memory"]["weights_bytes"].get<int64_t>() + j["memory"]["kv_cache_bytes"].get<int64_t>());
  EXPECT_EQ(j["scenario"]["serving"], true);
  EXPECT_NE(slurp(dir + "/s.html").find("KV cache"), std::string::npos);
  RunResult stray = run_ridge("report resnet18 --prompt 64 -o " + dir + "/x.html");
  EXPECT_EQ(stray.exit_code, 2);
  EXPECT_NE(stray.err.find("--prompt needs --serve"), std::string::npos) << stray.err;
  stray = run_ridge("report resnet18 --moe grouped -o " + dir + "/x.html");
  EXPECT_EQ(stray.exit_code, 2);
  EXPECT_NE(stray.err.find("--moe needs --serve"), std::string::npos) << stray.err;
}

// The serving report takes serve's --attention and --moe, says so in its scenario and notes them on the page.
TEST(ReportCommand, ServingReportTimesAttentionAndExpertsAsServe) {
  const std::string dir = temp_dir();
  RunResult r = run_ridge("report mixtral-8x7b --serve -d h100 --tp 2 --attention flash2 --moe grouped -o " + dir +
                          "/m.html --json " + dir + "/m.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(slurp(dir + "/m.json"));
  EXPECT_EQ(j["scenario"]["attention"], "flash-attention-2");
  EXPECT_EQ(j["scenario"]["moe"], "grouped");
  RunResult serve = run_ridge("serve mixtral-8x7b --device h100 --tp 2 --attention flash2 --moe grouped --format json");
  ASSERT_EQ(serve.exit_code, 0) << serve.err;
  const auto s = nlohmann::json::parse(serve.out);
  EXPECT_NEAR(j["headline"][0]["per_token_s"].get<double>(), s["serve"]["decode_time_per_token_s"].get<double>(), 1e-12);
  const std::string html = slurp(dir + "/m.html");
  EXPECT_NE(html.find("--moe grouped"), std::string::npos);
  EXPECT_NE(html.find("flash-attention-2"), std::string::npos);
}

// A MoE layer's experts are one row of the layer table, one roofline point and one of the slowest layers each: one
// row per node made a 37 MB page of Qwen3-30B-A3B.
TEST(ReportCommand, ExpertsAreOneRowPerLayerAndProjection) {
  const std::string dir = temp_dir();
  std::ofstream(dir + "/config.json")
      << R"({"model_type":"qwen3_moe","vocab_size":128,"hidden_size":64,"intermediate_size":128,)"
      << R"("moe_intermediate_size":32,"num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,)"
      << R"("head_dim":16,"num_experts":64,"num_experts_per_tok":4,"max_position_embeddings":256,)"
      << R"("decoder_sparse_step":1,"mlp_only_layers":[],"tie_word_embeddings":false})";
  RunResult r = run_ridge("report " + dir + "/config.json -d h100 --sweep 1 --seq-len 64 --top 3 -o " + dir +
                          "/m.html --json " + dir + "/m.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string html = slurp(dir + "/m.html");
  for (const char* row : {"model.layers.0.mlp.experts.*.gate_proj (×64)", "model.layers.1.mlp.experts.*.down_proj (×64)"})
    EXPECT_NE(html.find(row), std::string::npos) << row;
  EXPECT_EQ(html.find("experts.17."), std::string::npos);
  EXPECT_NE(html.find("Repeated instances"), std::string::npos);
  // 64 experts x 10 ops x 2 layers would be 1,280 rows; the page holds 20 expert rows.
  size_t rows = 0;
  for (size_t at = html.find("experts.*."); at != std::string::npos; at = html.find("experts.*.", at + 1)) ++rows;
  EXPECT_LT(rows, 200u);
  // The headline's slowest layers are merged too, and the time they add up to is the prediction's.
  const auto j = nlohmann::json::parse(slurp(dir + "/m.json"));
  RunResult p = run_ridge("predict " + dir + "/config.json --device h100 --seq-len 64 --format json");
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const double total_s = nlohmann::json::parse(p.out)["total_time_s"].get<double>();
  EXPECT_NEAR(j["headline"][0]["time_s"].get<double>(), total_s, 1e-15);
  double groups_s = 0;
  for (const auto& g : j["op_groups"]) groups_s += g["time_s.h100-sxm"].get<double>();
  EXPECT_NEAR(groups_s, total_s, 1e-12 * total_s);
  ASSERT_EQ(j["top_layers"].size(), 3u);
  EXPECT_NE(j["top_layers"][0]["name"].get<std::string>().find("experts.*."), std::string::npos) << j["top_layers"];
}

TEST(CompareCommand, ModelsSideBySideInEveryFormatWithCsvEqualToJson) {
  const std::string dir = temp_dir();
  RunResult r = run_ridge("compare resnet18 resnet50 -d a100 --json " + dir + "/c.json --csv " + dir + "/c.csv --md " +
                          dir + "/c.md");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("resnet50"), std::string::npos);
  const auto j = nlohmann::json::parse(slurp(dir + "/c.json"));
  ASSERT_EQ(j["compare"].size(), 2u);
  EXPECT_EQ(j["compare"][0]["params"], 11689512);
  EXPECT_EQ(j["compare"][1]["params"], 25557032);
  EXPECT_GT(j["compare"][1]["time_s.a100-sxm4-40gb"].get<double>(), 0);
  // fp32: nothing fitted. JSON and CSV carry predict's machine key; the table and markdown its label.
  EXPECT_EQ(j["compare"][1]["time_kind.a100-sxm4-40gb"], "upper_bound");
  EXPECT_NE(r.out.find("upper bound (uncalibrated)"), std::string::npos) << r.out;
  EXPECT_NE(slurp(dir + "/c.md").find("upper bound (uncalibrated)"), std::string::npos);
  // fp16 rows are calibrated and fp32 rows are bounds: each row says which (fp16 looked slower than fp32 unlabelled).
  RunResult mixed = run_ridge("compare resnet18 -d a100 -p fp32 -p fp16 --format json");
  ASSERT_EQ(mixed.exit_code, 0) << mixed.err;
  const auto m = nlohmann::json::parse(mixed.out);
  EXPECT_EQ(m["compare"][0]["time_kind.a100-sxm4-40gb"], "upper_bound");
  EXPECT_EQ(m["compare"][1]["time_kind.a100-sxm4-40gb"], "calibrated");
  // The CSV has one header and one line per model, with the JSON's exact values.
  std::istringstream csv(slurp(dir + "/c.csv"));
  std::string header, line;
  std::getline(csv, header);
  EXPECT_EQ(header.rfind("model,batch,precision,params,flops,", 0), 0u) << header;
  for (int row = 0; std::getline(csv, line); ++row) {
    ASSERT_LT(row, 2);
    EXPECT_NE(line.find("," + std::to_string(j["compare"][row]["flops"].get<int64_t>()) + ","), std::string::npos) << line;
    EXPECT_NE(line.find(",upper_bound"), std::string::npos) << line;
  }
  EXPECT_NE(slurp(dir + "/c.md").find("| resnet18"), std::string::npos);
  RunResult precisions = run_ridge("compare resnet18 -b 1 -b 8 -p fp32 -p amp-bf16 --train --format json");
  ASSERT_EQ(precisions.exit_code, 0) << precisions.err;
  EXPECT_EQ(nlohmann::json::parse(precisions.out)["compare"].size(), 4u);
  RunResult one = run_ridge("compare resnet18");
  EXPECT_EQ(one.exit_code, 2);
  EXPECT_NE(one.err.find("two or more"), std::string::npos) << one.err;
  // --seq-len sets every language model's sequence: Llama-2-7B's exact forward FLOPs at 128 tokens.
  RunResult llms = run_ridge("compare llama-2-7b gpt3-125m --seq-len 128 --format json");
  ASSERT_EQ(llms.exit_code, 0) << llms.err;
  EXPECT_EQ(nlohmann::json::parse(llms.out)["compare"][0]["flops"].get<int64_t>(), 1700631699840);
  RunResult cnn = run_ridge("compare resnet18 resnet50 --seq-len 128");
  EXPECT_EQ(cnn.exit_code, 1);
  EXPECT_NE(cnn.err.find("not a sequence model"), std::string::npos) << cnn.err;
}

TEST(ReportCommand, BadInputGivesOneLineErrors) {
  RunResult missing_o = run_ridge("report resnet18");
  EXPECT_EQ(missing_o.exit_code, 2);
  RunResult bad_device = run_ridge("report resnet18 --device no-such-gpu -o " + temp_dir() + "/x.html");
  EXPECT_EQ(bad_device.exit_code, 1);
  EXPECT_NE(bad_device.err.find("no-such-gpu"), std::string::npos) << bad_device.err;
  RunResult unwritable = run_ridge("report resnet18 --sweep 1 -o /nonexistent-dir/r.html");
  EXPECT_EQ(unwritable.exit_code, 1);
  EXPECT_NE(unwritable.err.find("/nonexistent-dir/r.html"), std::string::npos) << unwritable.err;
}

TEST(PlotOption, SummaryDrawsSvgAndRejectsOtherExtensions) {
  const std::string dir = temp_dir();
  RunResult s = run_ridge("summary resnet18 --plot " + dir + "/shares.svg");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  XmlInfo shares = check_xml(slurp(dir + "/shares.svg"));
  ASSERT_TRUE(shares.ok) << shares.error;
  EXPECT_GT(shares.classes["bar"], 10);
  RunResult bad = run_ridge("summary resnet18 --plot " + dir + "/x.jpg");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("x.jpg"), std::string::npos);
}

}  // namespace
}  // namespace ridge::test
