// The LLM presets taken from other tools' code: llm-analysis, Megatron-LM's code, LLM-Viewer, and Korthikanti et
// al.'s activation bytes as rows of `ridge flops --all-conventions`. Expected numbers are the tools' own outputs:
// published ones (llm-analysis' examples) or printed by validation/llm_presets.py, which runs each tool's code from
// its repository (commits in docs/llm.md).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "ridge/llm_analysis.hpp"
#include "support/test_support.hpp"

namespace ridge {
namespace {

const LlmConfig& zoo(const char* name) {
  const LlmConfig* c = find_llm_config(name);
  EXPECT_NE(c, nullptr) << name;
  return *c;
}

// llm-analysis' published example (examples/llama/outputs_infer_ideal/decapoda-research_llama-7b-hf-...-summary.json,
// release b60b392, 2023-05-02): LLaMA-7B at batch 1, seq_len 512, 32 tokens generated prints
// prefill_num_flops_fwd_total 6868726448128 ("6.87 T"), decode_num_flops_fwd_total 13147570176 ("13.15 G") and
// kv_cache_memory_per_gpu 285212672 ("285.21 MB"). That release counted every MLP as 16 B s h^2 (4h wide, not
// gated) and every attention as MHA; the rule today (d841e40) is the same with the MLP's own width and gating, so
// the release is the rule at I = 4h, ungated. LLaMA-7B and Llama-2-7B have the same shapes.
TEST(LlmPresets, LlmAnalysisPublishedLlama7bExample) {
  LlmConfig release = zoo("llama-2-7b");
  release.intermediate_size = 4 * release.hidden_size;
  release.gated_mlp = false;
  const Count prefill = llm_analysis_forward_flops(release, 1, 512);
  const Count decode = llm_analysis_forward_flops(release, 1, 1);
  EXPECT_EQ(prefill, Count{6868726448128});
  EXPECT_EQ(decode, Count{13147570176});
  EXPECT_EQ(llm_analysis_number(prefill), "6.87 T");
  EXPECT_EQ(llm_analysis_number(decode), "13.15 G");
  // Its KV cache, 2 B (s + generated) h layers x 2 bytes, is ridge serve's kv_cache_bytes.
  EXPECT_EQ(llm_analysis_number(285212672), "285.21 M");
  auto r = test::run_ridge("serve llama-2-7b --device a100-sxm4-80gb --batch 1 --prompt 512 --generate 32 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["kv_cache_bytes"], 285212672);
}

// llm-analysis at d841e40 (GQA and gated MLPs), as validation/llm_presets.py prints it, B 1, s 128.
TEST(LlmPresets, LlmAnalysisCurrentRule) {
  EXPECT_EQ(llm_analysis_forward_flops(zoo("llama-2-7b"), 1, 128), Count{1700001742848});
  EXPECT_EQ(llm_analysis_forward_flops(zoo("llama-2-70b"), 1, 128), Count{17633525104640});
  // One expert per token: llm-analysis' FLOPs do not multiply the MLP by top-k.
  EXPECT_EQ(llm_analysis_forward_flops(zoo("mixtral-8x7b"), 1, 128), Count{1828850761728});
}

// Megatron-LM's num_floating_point_operations (training.py at d98e8a6) run by validation/llm_presets.py with
// --swiglu, --group-query-attention, vocabulary padded to 128, B 1, s 128.
TEST(LlmPresets, MegatronCodeFlops) {
  EXPECT_EQ(megatron_code_iteration_flops(zoo("llama-2-7b"), 1, 128), Count{5087120326656});
  EXPECT_EQ(megatron_code_iteration_flops(zoo("llama-2-70b"), 1, 128), Count{52836150804480});
  EXPECT_EQ(megatron_code_iteration_flops(zoo("mixtral-8x7b"), 1, 128), Count{9802994417664});
  // A GPT block (MHA, 4h plain MLP): 72 B s l h^2 + 6 B s^2 l h + 6 B s h V, i.e. the paper's eq. 3 without the
  // recomputed forward (96 -> 72) and with the causal halving of QK^T and SV (16 -> 6 after the 3/4).
  LlmConfig gpt = zoo("llama-2-7b");
  gpt.gated_mlp = false;
  gpt.intermediate_size = 4 * gpt.hidden_size;
  const Count B = 2, s = 2048, l = 32, h = 4096, V = 32000;
  EXPECT_EQ(megatron_code_iteration_flops(gpt, 2, 2048), 72 * B * s * l * h * h + 6 * B * s * s * l * h + 6 * B * s * h * V);
}

// LLM-Viewer's ModelAnalyzer.analyze (472f71f, configs/Llama.py, no FlashAttention) run by
// validation/llm_presets.py: totals over the layers and lm_head, B 1, s 128.
TEST(LlmPresets, LlmViewerTotals) {
  LlmViewerLayer p = llm_viewer_total(zoo("llama-2-7b"), "prefill", 1, 128);
  EXPECT_EQ(p.ops, Count{1666964258816});
  EXPECT_EQ(p.memory_access(), Count{14491392512});
  LlmViewerLayer d = llm_viewer_total(zoo("llama-2-7b"), "decode", 1, 128);
  EXPECT_EQ(d.ops, Count{13153206272});
  EXPECT_EQ(d.memory_access(), Count{13290789376});
  p = llm_viewer_total(zoo("llama-2-70b"), "prefill", 1, 128);
  EXPECT_EQ(p.ops, Count{17568607764480});
  EXPECT_EQ(p.memory_access(), Count{143487220224});
  d = llm_viewer_total(zoo("llama-2-70b"), "decode", 1, 128);
  EXPECT_EQ(d.ops, Count{137514844160});
  EXPECT_EQ(d.memory_access(), Count{137516562944});
  // One layer row: q_proj at prefill = 2 s h^2 OPs; weights h^2 x 2 bytes + s h x 2 in + s h x 2 out.
  const auto rows = llm_viewer_layers(zoo("llama-2-7b"), "prefill", 1, 128);
  ASSERT_EQ(rows.front().name, "q_proj");
  EXPECT_EQ(rows.front().ops, Count{4294967296});
  EXPECT_EQ(rows.front().memory_access(), Count{35651584});
  EXPECT_EQ(rows.back().name, "lm_head");
  EXPECT_EQ(llm_viewer_number(rows.front().ops), "4.3G");
  // utils.str_number: "{:.1f}" from 1 up, "{:.2f}" below 1 (so a zero count prints "0.00").
  EXPECT_EQ(llm_viewer_number(0), "0.00");
  EXPECT_EQ(llm_viewer_number(7), "7.0");
  EXPECT_THROW(llm_viewer_layers(zoo("llama-2-7b"), "train", 1, 128), Error);
}

// The published worked example: Yuan et al., "LLM Inference Unveiled: Survey and Roofline Model Insights"
// (arXiv:2402.16363), Sec. 2.2, Table 1 "Analysis for layers in Llama-2-7b using the Roofline model of Nvidia A6000
// GPU. In this example, the sequence length is 2048 and the batch size is 1." (FP16: Fig. 5 "The computation is in
// FP16"; the A6000 at "155 TOP/s" FP16, Sec. 3.1.1). Digits read from the table as typeset (image copied in
// HarleysZhang/dl_note@9d02cbc, images/llm_inference_unveiled_paper/table1.png; the arXiv version was not at hand).
// Max performance and bound are LLM-Viewer's roofline_model.roofline_analyze with hardware_params' nvidia_A6000
// (768e9 B/s, 309.677e12 / 2 OP/s FP16; unchanged since 0e78452, 2024-01-28): memory-bound below the turning point
// peak / bandwidth (201.6), performance = intensity x bandwidth there, else the peak. The decode rows are one token
// attending to the 2048 cached ones. The table lists one norm and one add (the two of each per layer are equal) and
// neither mlp_act nor lm_head. Its rounding is by hand, not str_number's: a count to the nearest whole T, G, M or K
// (68.7G prints "69G"), an intensity to an integer from 100 up and to two decimals below. Every printed digit of
// the 24 rows matches. (The prefill QK^T's 302M is the same before LLM-Viewer's 40139d9 fix, which moved 16.8M of
// it from the K-cache load to the Q load.)
std::string paper_count(double v) {
  const std::pair<double, const char*> units[] = {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "K"}};
  for (const auto& [unit, suffix] : units)
    if (v >= unit) return fmt::format("{:.0f}{}", v / unit, suffix);
  return fmt::format("{:.0f}", v);
}
std::string paper_intensity(double v) {
  if (v >= 100) return fmt::format("{:.0f}", v);
  std::string t = fmt::format("{:.2f}", v);
  while (t.back() == '0') t.pop_back();
  if (t.back() == '.') t.pop_back();
  return t;
}

TEST(LlmPresets, LlmViewerPaperTable) {
  struct Printed {
    const char* paper_name;  // the table's layer name
    const char* row;         // llm_viewer_layers' row
    const char *ops, *memory, *intensity, *performance, *bound;
  };
  const Printed prefill[] = {
      {"q_proj", "q_proj", "69G", "67M", "1024", "155T", "compute"},
      {"k_proj", "k_proj", "69G", "67M", "1024", "155T", "compute"},
      {"v_proj", "v_proj", "69G", "67M", "1024", "155T", "compute"},
      {"o_proj", "out_proj", "69G", "67M", "1024", "155T", "compute"},
      {"gate_proj", "gate_proj", "185G", "152M", "1215", "155T", "compute"},
      {"up_proj", "up_proj", "185G", "152M", "1215", "155T", "compute"},
      {"down_proj", "down_proj", "185G", "152M", "1215", "155T", "compute"},
      {"qk_matmul", "qk_matmul", "34G", "302M", "114", "87T", "memory"},
      {"sv_matmul", "sv_matmul", "34G", "302M", "114", "87T", "memory"},
      {"softmax", "softmax", "671M", "537M", "1.25", "960G", "memory"},
      {"norm", "attn_norm", "59M", "34M", "1.75", "1T", "memory"},
      {"add", "attn_add", "8M", "34M", "0.25", "192G", "memory"},
  };
  const Printed decode[] = {
      {"q_proj", "q_proj", "34M", "34M", "1", "768G", "memory"},
      {"k_proj", "k_proj", "34M", "34M", "1", "768G", "memory"},
      {"v_proj", "v_proj", "34M", "34M", "1", "768G", "memory"},
      {"o_proj", "out_proj", "34M", "34M", "1", "768G", "memory"},
      {"gate_proj", "gate_proj", "90M", "90M", "1", "768G", "memory"},
      {"up_proj", "up_proj", "90M", "90M", "1", "768G", "memory"},
      {"down_proj", "down_proj", "90M", "90M", "1", "768G", "memory"},
      {"qk_matmul", "qk_matmul", "17M", "17M", "0.99", "762G", "memory"},
      {"sv_matmul", "sv_matmul", "17M", "17M", "0.99", "762G", "memory"},
      {"softmax", "softmax", "328K", "262K", "1.25", "960G", "memory"},
      {"norm", "attn_norm", "29K", "16K", "1.75", "1T", "memory"},
      {"add", "attn_add", "4K", "16K", "0.25", "192G", "memory"},
  };
  const double bandwidth = 768e9, peak = 309.677e12 / 2, turning_point = peak / bandwidth;
  EXPECT_EQ(paper_count(peak), "155T");
  auto check = [&](const char* stage, const auto& printed) {
    std::map<std::string, LlmViewerLayer> rows;
    for (const auto& r : llm_viewer_layers(zoo("llama-2-7b"), stage, 1, 2048)) rows[r.name] = r;
    EXPECT_EQ(rows.at("mlp_norm").memory_access(), rows.at("attn_norm").memory_access());
    EXPECT_EQ(rows.at("mlp_add").ops, rows.at("attn_add").ops);
    for (const auto& p : printed) {
      SCOPED_TRACE(fmt::format("{} {}", stage, p.paper_name));
      const LlmViewerLayer& r = rows.at(p.row);
      const double intensity = to_double(r.ops) / to_double(r.memory_access());
      const bool memory_bound = intensity < turning_point;
      EXPECT_EQ(paper_count(to_double(r.ops)), p.ops);
      EXPECT_EQ(paper_count(to_double(r.memory_access())), p.memory);
      EXPECT_EQ(paper_intensity(intensity), p.intensity);
      EXPECT_EQ(paper_count(memory_bound ? intensity * bandwidth : peak), p.performance);
      EXPECT_EQ(memory_bound ? "memory" : "compute", std::string(p.bound));
    }
  };
  check("prefill", prefill);
  check("decode", decode);
  // Exact behind two rows: prefill q_proj 2 s h^2 OPs over (h^2 + 2 s h) x 2 bytes = 1024 exactly; decode QK^T
  // 2 x 32 x 2048 x 128 OPs over the K cache (2048 x 128 x 32 x 2) + Q (4096 x 2) + scores (32 x 2048 x 2).
  const auto p = llm_viewer_layers(zoo("llama-2-7b"), "prefill", 1, 2048);
  EXPECT_EQ(p[0].ops, Count{68719476736});
  EXPECT_EQ(p[0].memory_access(), Count{67108864});
  const auto d = llm_viewer_layers(zoo("llama-2-7b"), "decode", 1, 2048);
  EXPECT_EQ(d[7].name, "qk_matmul");
  EXPECT_EQ(d[7].ops, Count{16777216});
  EXPECT_EQ(d[7].memory_access(), Count{16777216 + 8192 + 131072});
}

// The new rows sit in the same table as calflops, Megatron eq. 3, PaLM, Transformer Math 101 and ZeRO.
TEST(LlmPresets, AllConventionsListsTheToolPresets) {
  auto r = test::run_ridge("flops llama-2-7b --seq-len 128 --all-conventions --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, nlohmann::json> rows;
  const auto j = nlohmann::json::parse(r.out);
  for (const auto& row : j["llm_conventions"]) rows[row["convention"]] = row;
  EXPECT_EQ(rows.at("llm-analysis")["headline"], 1700001742848);
  EXPECT_EQ(rows.at("llm-analysis")["as_printed"], "prefill_num_flops_fwd_total: 1.7 T");
  EXPECT_EQ(rows.at("megatron-code")["headline"], 5087120326656);
  EXPECT_EQ(rows.at("llm-viewer (prefill)")["headline"], 1666964258816);
  EXPECT_EQ(rows.at("llm-viewer (decode)")["headline"], 13153206272);
  // Korthikanti et al. x 32 layers at s 128, b 1, h 4096, a 32, t 1: (34 s h + 5 a s^2) x 32 bytes.
  const long long s = 128, h = 4096, a = 32;
  EXPECT_EQ(rows.at("korthikanti-2022 (none)")["headline"], (34 * s * h + 5 * a * s * s) * 32);
  EXPECT_EQ(rows.at("korthikanti-2022 (selective)")["headline"], 34 * s * h * 32);
  EXPECT_EQ(rows.at("korthikanti-2022 (full)")["headline"], 2 * s * h * 32);
}

}  // namespace
}  // namespace ridge

namespace ridge {
namespace {

// EleutherAI's cookbook (calc/calc_transformer_mem.py at 827ee3b, by the authors of "Transformer Math 101", which
// it implements): its README's three example commands print "Per-GPU Activation Memory" 34.00 GiB (Pythia 6.9B: 32
// layers, s 2048, a 32, h 4096, b 8, --checkpoint-activations --partition-activations, tp 2), 23.91 GiB (Pythia 12B:
// 36 layers, a 40, h 5120, b 8, same flags, tp 4) and 17.53 GiB (the default 20B: 44 layers, a 64, h 6144, b 1,
// tp 1); the 20B command without --checkpoint-activations prints 72.53 GiB. Its formula is Korthikanti et al.'s at
// t = 1: sbhL x 34 with its "checkpoint activations" (= selective recomputation, the attention core recomputed),
// sbhL (34 + 5as/h) without; --partition-activations (ZeRO-R) divides by tp, which is Korthikanti's sequence
// parallel form (34/t). The digits above are the script's own output (no other worked example with printed digits
// was found: the blog post and the paper state the formulas only).
std::string gib2(Count bytes) { return fmt::format("{:.2f}", to_double(bytes) / (1024.0 * 1024 * 1024)); }
Count cookbook_activation(int64_t layers, int64_t s, int64_t a, int64_t h, int64_t b, int64_t tp, Recompute r) {
  return korthikanti_activation_bytes_per_layer(s, b, h, a, tp, r, tp > 1) * layers;
}

TEST(LlmPresets, TransformerMath101CookbookExamples) {
  EXPECT_EQ(gib2(cookbook_activation(32, 2048, 32, 4096, 8, 2, Recompute::Selective)), "34.00");
  EXPECT_EQ(gib2(cookbook_activation(36, 2048, 40, 5120, 8, 4, Recompute::Selective)), "23.91");
  EXPECT_EQ(gib2(cookbook_activation(44, 2048, 64, 6144, 1, 1, Recompute::Selective)), "17.53");
  EXPECT_EQ(gib2(cookbook_activation(44, 2048, 64, 6144, 1, 1, Recompute::None)), "72.53");
  // Exact: 2048 x 8 x 4096 x 32 x 34 / 2 bytes.
  EXPECT_EQ(cookbook_activation(32, 2048, 32, 4096, 8, 2, Recompute::Selective), Count{2048} * 8 * 4096 * 32 * 17);
}

}  // namespace
}  // namespace ridge
