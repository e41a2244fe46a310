// Hugging Face config.json reader and the LLM graphs: exact parameter counts, errors naming the key,
// unknown keys ignored, config files through load_model().
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ridge/cost.hpp"
#include "ridge/error.hpp"
#include "ridge/llm.hpp"
#include "ridge/load.hpp"
#include "support/test_support.hpp"

namespace ridge {
namespace {

using nlohmann::json;

Count graph_params(const LlmConfig& c, int64_t tokens = 8) {
  LlmShape s;
  s.tokens = tokens;
  return estimate(build_llm(c, s)).total.params;
}

std::string error_of(const json& j) {
  try {
    parse_llm_config(j, "cfg.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// A small config of `type` (vocabulary 64, hidden 32, MLP 48, 4 heads, 2 KV heads, 64 positions) with `layers`
// layers and `extra` JSON members appended (",\"key\":value..."), named after its type.
LlmConfig small_config(const char* type, int layers, const char* extra = "") {
  LlmConfig s = parse_llm_config(json::parse(fmt::format(R"({{"model_type":"{}","vocab_size":64,"hidden_size":32,
      "intermediate_size":48,"num_hidden_layers":{},"num_attention_heads":4,"num_key_value_heads":2,
      "max_position_embeddings":64{}}})", type, layers, extra)), type);
  s.name = type;
  return s;
}

// Each of `bad` (JSON members appended to a config of `type` with vocabulary 64, hidden 32, MLP 16, 4 layers and 4
// heads) is refused with a one-line error naming the file.
void expect_refused(const char* type, std::initializer_list<const char*> bad) {
  for (const char* members : bad) {
    const std::string text = fmt::format(R"({{"model_type":"{}","vocab_size":64,"hidden_size":32,
        "intermediate_size":16,"num_hidden_layers":4,"num_attention_heads":4{}}})", type, members);
    const std::string e = error_of(json::parse(text));
    EXPECT_NE(e.find("cfg"), std::string::npos) << type << members << ": " << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
}

// `c`'s graph at batch 2, 8 tokens (training shape), and a check that each of `nodes` is in it (or, with `present`
// false, is not).
Graph small_graph(const LlmConfig& c) {
  LlmShape shape;
  shape.batch = 2, shape.tokens = 8;
  return build_llm(c, shape);
}
void expect_nodes(const Graph& g, std::initializer_list<const char*> nodes, bool present = true) {
  for (const char* node : nodes) EXPECT_EQ(g.find_node(node) >= 0, present) << node;
}

json llama_json() { return json::parse(R"({"model_type":"llama","vocab_size":32000,"hidden_size":4096,
  "intermediate_size":11008,"num_hidden_layers":32,"num_attention_heads":32,"max_position_embeddings":4096})"); }

TEST(LlmConfig, PublishedParameterCountsOfTheIssue) {
  const std::pair<const char*, Count> expected[] = {{"llama-2-7b", 6738415616},
                                                    {"llama-3-8b", 8030261248},
                                                    {"mistral-7b", 7241732096},
                                                    {"mixtral-8x7b", 46702792704}};
  for (const auto& [name, params] : expected) {
    const LlmConfig* c = find_llm_config(name);
    ASSERT_NE(c, nullptr) << name;
    EXPECT_EQ(llm_params(*c).total, params) << name;
    EXPECT_EQ(graph_params(*c), params) << name;
  }
  // Mixtral: 2 of 8 experts per token: 46,702,792,704 - 32 layers x 6 experts x 3 x 4096 x 14336.
  EXPECT_EQ(llm_params(*find_llm_config("mixtral-8x7b")).active_per_token, Count{12879925248});
}

TEST(LlmConfig, EveryZooEntryGraphEqualsItsFormulaAndPublishedCount) {
  for (const auto& c : llm_zoo_configs()) {
    const Count formula = llm_params(c).total;
    EXPECT_EQ(graph_params(c, 4), formula) << c.name;
    if (Count pub = llm_published_params(c.name)) {
      EXPECT_EQ(formula, pub) << c.name;
    }
    const ZooEntry* e = find_zoo_entry(c.name);
    ASSERT_NE(e, nullptr) << c.name;
    EXPECT_EQ(e->published_params, formula) << c.name;
  }
}

// GPT-3 (Brown et al. 2020, Table 2.1) rounds: each entry's exact count rounds to the paper's figure, and
// equals V h + 2048 h + L (12 h^2 + 13 h) + 2 h.
TEST(LlmConfig, Gpt3FamilyFormulaAndRoundedPaperSizes) {
  const std::pair<const char*, double> paper[] = {{"gpt3-125m", 125e6}, {"gpt3-350m", 350e6}, {"gpt3-760m", 760e6},
                                                  {"gpt3-1.3b", 1.3e9}, {"gpt3-2.7b", 2.7e9}, {"gpt3-6.7b", 6.7e9},
                                                  {"gpt3-13b", 13e9},   {"gpt3-175b", 175e9}};
  for (const auto& [name, size] : paper) {
    const LlmConfig& c = *find_llm_config(name);
    const Count h = c.hidden_size, L = c.num_layers;
    const Count formula = 50257 * h + 2048 * h + L * (12 * h * h + 13 * h) + 2 * h;
    EXPECT_EQ(llm_params(c).total, formula) << name;
    EXPECT_NEAR(to_double(formula) / size, 1.0, 0.05) << name;
  }
}

// Megatron-LM (Narayanan et al. 2021) P = 12 l h^2 (1 + 13/(12h) + (V + s)/(12 l h)), V 51200, s 2048: the graph
// has the same count plus the final LayerNorm (2h), and Table 1's rounded sizes follow.
TEST(LlmConfig, MegatronTable1ParameterFormula) {
  const std::pair<const char*, double> table1[] = {
      {"megatron-1.7b", 1.7},   {"megatron-3.6b", 3.6},   {"megatron-7.5b", 7.5},   {"megatron-18b", 18.4},
      {"megatron-39b", 39.1},   {"megatron-76b", 76.1},   {"megatron-145b", 145.6}, {"megatron-310b", 310.1},
      {"megatron-530b", 529.6}, {"megatron-1t", 1008.0}};
  for (const auto& [name, billions] : table1) {
    const LlmConfig& c = *find_llm_config(name);
    const Count h = c.hidden_size, l = c.num_layers;
    const Count paper = 12 * l * h * h + 13 * l * h + (51200 + 2048) * h;
    EXPECT_EQ(llm_params(c).total, paper + 2 * h) << name;
    EXPECT_NEAR(to_double(paper) / 1e9, billions, 0.051) << name;
  }
}

TEST(LlmConfig, MissingKeyNamesTheKeyAndFile) {
  json j = llama_json();
  j.erase("intermediate_size");
  EXPECT_EQ(error_of(j), "cfg.json: missing required key 'intermediate_size'");
  j = llama_json();
  j.erase("model_type");
  EXPECT_EQ(error_of(j), "cfg.json: missing required key 'model_type'");
  json g = json::parse(R"({"model_type":"gpt2","vocab_size":50257,"n_layer":12,"n_head":12,"n_positions":1024})");
  EXPECT_EQ(error_of(g), "cfg.json: missing required key 'n_embd'");
}

TEST(LlmConfig, ADirectoryWithoutAConfigSaysSo) {
  const std::string dir = test::temp_dir() + "/no_config_here";
  std::filesystem::create_directories(dir);
  try {
    load_model(dir, LoadOptions{});
    FAIL() << "a directory without config.json loaded";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(dir + ": a directory without a config.json (MODEL is a zoo name", 0), 0)
        << e.what();
  }
  try {
    load_model(dir + "/absent.onnx", LoadOptions{});
    FAIL() << "a missing file loaded";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), dir + "/absent.onnx: no such file");
  }
}

TEST(LlmConfig, WrongTypesAndBadValuesAreOneLineErrors) {
  json j = llama_json();
  j["hidden_size"] = "4096";
  EXPECT_EQ(error_of(j), "cfg.json: key 'hidden_size' must be an integer, not \"4096\"");
  j = llama_json();
  j["vocab_size"] = uint64_t{1} << 63;  // was read as -2^63 and reported "must be positive, not -9223372036854775808"
  EXPECT_EQ(error_of(j), "cfg.json: key 'vocab_size' is 9223372036854775808, beyond what ridge reads (at most 2^63 - 1)");
  j = llama_json();
  j["vocab_size"] = 1e300;  // converting it to an integer was undefined behaviour
  EXPECT_EQ(error_of(j), "cfg.json: key 'vocab_size' must be an integer, not 1e+300");
  j = llama_json();
  j["num_key_value_heads"] = 5;
  EXPECT_NE(error_of(j).find("not a multiple of num_key_value_heads 5"), std::string::npos);
  j = llama_json();
  j["model_type"] = "t5";
  EXPECT_NE(error_of(j).find("model_type 't5' is not supported"), std::string::npos);
  j = llama_json();
  j["num_hidden_layers"] = 1000000000;
  EXPECT_NE(error_of(j).find("num_hidden_layers 1000000000 is beyond"), std::string::npos);
  j = llama_json();
  j["hidden_size"] = -4096;
  EXPECT_NE(error_of(j).find("hidden_size must be positive"), std::string::npos) << error_of(j);
  // An unknown activation names the file and the key; head_dim 0 is not "absent"; Gemma 3's pattern must be
  // positive (transformers takes the layer index modulo it).
  j = llama_json();
  j["hidden_act"] = "foo";
  EXPECT_EQ(error_of(j),
            "cfg.json: hidden_act 'foo' is not supported (silu, gelu, gelu_new, gelu_pytorch_tanh, relu, relu2)");
  j = llama_json();
  j["head_dim"] = 0;
  EXPECT_EQ(error_of(j), "cfg.json: head_dim must be positive, not 0");
  j = llama_json();
  j["head_dim"] = nullptr;  // null: hidden_size / num_attention_heads, as absent
  EXPECT_EQ(error_of(j), "");
  j = llama_json();
  j["model_type"] = "gemma3_text";
  j["sliding_window_pattern"] = 0;
  EXPECT_NE(error_of(j).find("cfg.json: sliding_window_pattern must be positive, not 0"), std::string::npos) << error_of(j);
  j = llama_json();
  j["tie_word_embeddings"] = 1;
  EXPECT_EQ(error_of(j), "cfg.json: key 'tie_word_embeddings' must be true or false, not 1");
}

TEST(LlmConfig, UnknownKeysAreIgnored) {
  json j = llama_json();
  j["architectures"] = {"LlamaForCausalLM"};
  j["torch_dtype"] = "float16";
  j["rope_scaling"] = {{"type", "linear"}, {"factor", 2.0}};
  j["some_future_key"] = {{"nested", true}};
  EXPECT_EQ(llm_params(parse_llm_config(j, "cfg.json")).total, Count{6738415616});
}

// Small configs of every family (published HF checkpoints' configs) against their published counts.
TEST(LlmConfig, FamiliesMatchPublishedCheckpoints) {
  const std::pair<const char*, Count> cases[] = {
      // openai-community/gpt2
      {R"({"model_type":"gpt2","vocab_size":50257,"n_embd":768,"n_layer":12,"n_head":12,"n_positions":1024})", 124439808},
      // EleutherAI/pythia-160m (gpt_neox, rotary_pct 0.25, parallel residual, untied)
      {R"({"model_type":"gpt_neox","vocab_size":50304,"hidden_size":768,"num_hidden_layers":12,"num_attention_heads":12,
          "intermediate_size":3072,"max_position_embeddings":2048,"rotary_pct":0.25,"use_parallel_residual":true})",
       162322944},
      // facebook/opt-125m (learned positions with offset 2, tied)
      {R"({"model_type":"opt","vocab_size":50272,"hidden_size":768,"num_hidden_layers":12,"num_attention_heads":12,
          "ffn_dim":3072,"max_position_embeddings":2048,"word_embed_proj_dim":768})",
       125239296},
      // microsoft/phi-2 (partial rotary 0.4, parallel attention + MLP, lm_head bias)
      {R"({"model_type":"phi","vocab_size":51200,"hidden_size":2560,"num_hidden_layers":32,"num_attention_heads":32,
          "intermediate_size":10240,"max_position_embeddings":2048,"partial_rotary_factor":0.4})",
       2779683840},
      // EleutherAI/gpt-neox-20b (paper: 20,554,567,680)
      {R"({"model_type":"gpt_neox","vocab_size":50432,"hidden_size":6144,"num_hidden_layers":44,"num_attention_heads":64,
          "intermediate_size":24576,"rotary_pct":0.25,"use_parallel_residual":true,"max_position_embeddings":2048})",
       20554567680},
      // tiiuae/falcon-7b (multi-query, parallel attention, tied)
      {R"({"model_type":"falcon","vocab_size":65024,"hidden_size":4544,"num_hidden_layers":32,"num_attention_heads":71,
          "multi_query":true,"parallel_attn":true,"bias":false,"alibi":false,"new_decoder_architecture":false})",
       6921720704},
      // bigscience/bloom-560m (ALiBi, LayerNorm on the embeddings, tied; hidden_size written n_embed there too)
      {R"({"model_type":"bloom","vocab_size":250880,"n_embed":1024,"n_layer":24,"num_attention_heads":16})", 559214592},
      // bigscience/bloom (Scao et al. 2022, arXiv 2211.05100, Table 3: 176,247M parameters)
      {R"({"model_type":"bloom","vocab_size":250880,"n_embed":14336,"n_layer":70,"num_attention_heads":112,
          "apply_residual_connection_post_layernorm":false,"pretraining_tp":4})", 176247271424},
  };
  for (const auto& [text, params] : cases) {
    LlmConfig c = parse_llm_config(json::parse(text), "case");
    c.name = c.family;
    EXPECT_EQ(llm_params(c).total, params) << c.family;
    EXPECT_EQ(graph_params(c), params) << c.family;
  }
}

// BLOOM: the embeddings' LayerNorm and, in every attention, the ALiBi bias added to the scaled scores (one
// B x H x T x S add), in the eager and the serving graph; HF's module names.
TEST(LlmConfig, BloomHasEmbeddingNormAndAlibiBias) {
  LlmConfig c = parse_llm_config(json::parse(R"({"model_type":"bloom","vocab_size":250880,"hidden_size":1024,
      "n_layer":24,"n_head":16})"), "bloom-560m");
  c.name = "bloom-560m";
  EXPECT_EQ(c.position, LlmPosition::Alibi);
  LlmShape s;
  s.tokens = 8;
  for (bool serving : {false, true}) {
    s.serving = serving, s.past = serving ? 4 : 0;
    const Graph g = build_llm(c, s);
    EXPECT_GE(g.find_node("transformer.word_embeddings_layernorm"), 0) << serving;
    EXPECT_GE(g.find_node("transformer.h.23.mlp.dense_4h_to_h"), 0) << serving;
    const int add = g.find_node("transformer.h.0.self_attention.add_alibi");
    ASSERT_GE(add, 0) << serving;
    const Count adds = estimate(g).nodes[static_cast<size_t>(add)].cost.flops;
    EXPECT_EQ(adds, Count{1} * 16 * 8 * (serving ? 12 : 8)) << serving;  // B H T S
  }
  EXPECT_NE(error_of(json::parse(R"({"model_type":"bloom","vocab_size":8,"n_embed":8,"n_layer":1,"n_head":2,
      "apply_residual_connection_post_layernorm":true})")).find("apply_residual_connection_post_layernorm"),
            std::string::npos);
  EXPECT_EQ(error_of(json::parse(R"({"model_type":"bloom","vocab_size":8,"n_layer":1,"n_head":2})")),
            "cfg.json: missing required key 'hidden_size' or 'n_embed'");
}

// Qwen3 (q_norm and k_norm: an RMSNorm over head_dim on every query and key head) and Phi-3 (one qkv_proj, one
// gate_up_proj chunked in two), op for op as transformers' modules; counts checked against the model cards.
TEST(LlmConfig, Qwen3NormsEachHeadAndPhi3FusesItsProjections) {
  // Qwen/Qwen3-0.6B: tied embeddings; its card says 0.6B parameters, 0.44B of them non-embedding.
  LlmConfig q = parse_llm_config(json::parse(R"({"model_type":"qwen3","vocab_size":151936,"hidden_size":1024,
      "intermediate_size":3072,"num_hidden_layers":28,"num_attention_heads":16,"num_key_value_heads":8,"head_dim":128,
      "max_position_embeddings":40960,"tie_word_embeddings":true})"), "qwen3-0.6b");
  q.name = "qwen3-0.6b";
  EXPECT_EQ(q.qk_norm, LlmConfig::QkNorm::PerHead);
  EXPECT_EQ(llm_params(q).total, Count{596049920});
  EXPECT_EQ(llm_params(q).total - Count{151936} * 1024, Count{440467456});
  EXPECT_EQ(graph_params(q), llm_params(q).total);
  LlmShape s;
  s.tokens = 8;
  for (bool serving : {false, true}) {
    s.serving = serving, s.past = serving ? 4 : 0;
    const Graph g = build_llm(q, s);
    // Each norm reads B x T x heads x head_dim and has head_dim weights.
    const int qn = g.find_node("model.layers.0.self_attn.q_norm.pow"), kn = g.find_node("model.layers.27.self_attn.k_norm.mul_1");
    ASSERT_GE(qn, 0) << serving;
    ASSERT_GE(kn, 0) << serving;
    EXPECT_EQ(estimate(g).nodes[static_cast<size_t>(qn)].cost.flops, Count{8} * 16 * 128) << serving;
    EXPECT_EQ(estimate(g).nodes[static_cast<size_t>(kn)].cost.params, Count{128}) << serving;
  }
  // Qwen/Qwen3-30B-A3B: 128 experts of width 768, 8 per token, no shared expert: "30.5B" total, "3.3B" activated.
  const LlmParams moe = llm_params(*find_llm_config("qwen3-30b-a3b"));
  EXPECT_EQ(moe.active_per_token, moe.total - Count{48} * 120 * 3 * 2048 * 768);
  EXPECT_EQ(moe.active_per_token, Count{3353032704});
  EXPECT_EQ(error_of(json::parse(R"({"model_type":"qwen3_moe","vocab_size":64,"hidden_size":32,"num_hidden_layers":2,
      "num_attention_heads":4,"moe_intermediate_size":16,"num_experts":4,"num_experts_per_tok":2,
      "mlp_only_layers":[1]})")), "cfg.json: mlp_only_layers [1] is not supported (only []: every layer sparse)");

  // microsoft/Phi-4-mini-instruct (phi3): partial rotary 0.75, tied embeddings; its card says 3.8B parameters.
  LlmConfig p = parse_llm_config(json::parse(R"({"model_type":"phi3","vocab_size":200064,"hidden_size":3072,
      "intermediate_size":8192,"num_hidden_layers":32,"num_attention_heads":24,"num_key_value_heads":8,
      "max_position_embeddings":131072,"partial_rotary_factor":0.75,"tie_word_embeddings":true,"sliding_window":262144})"),
      "phi-4-mini");
  p.name = "phi-4-mini";
  EXPECT_EQ(p.rotary_dim(), 96);
  EXPECT_EQ(llm_params(p).total, Count{3836021760});
  EXPECT_EQ(graph_params(p), llm_params(p).total);
  const Graph g = build_llm(p, s);
  EXPECT_GE(g.find_node("model.layers.0.self_attn.qkv_proj"), 0);
  EXPECT_GE(g.find_node("model.layers.31.mlp.gate_up_proj"), 0);
  EXPECT_LT(g.find_node("model.layers.0.mlp.gate_proj"), 0);
  const int gate_up = g.find_node("model.layers.0.mlp.gate_up_proj");
  EXPECT_EQ(estimate(g).nodes[static_cast<size_t>(gate_up)].cost.macs, Count{8} * 3072 * 2 * 8192);
}

// Gemma 2 and 3: local layers attend to a sliding window, every k-th layer to everything (serving graphs attend
// to caches of different lengths); four norms per layer; Gemma 2 soft-caps scores and logits, Gemma 3 normalizes
// each query and key head. transformers' layer_types say the same per layer.
TEST(LlmConfig, Gemma2And3HaveLocalAndGlobalLayers) {
  const LlmConfig& g2 = *find_llm_config("gemma-2-2b");
  EXPECT_EQ(g2.window_of(0), 4096);
  EXPECT_EQ(g2.window_of(1), 0);
  EXPECT_EQ(g2.attn_softcap, 50.0);
  EXPECT_EQ(g2.final_softcap, 30.0);
  LlmShape s{1, 1, 5000, DType::F16, true};
  const Graph g = build_llm(g2, s);
  auto cache = [&](const std::string& name) {
    for (const Value& v : g.values)
      if (v.name == name) return v.shape;
    return Shape{};
  };
  EXPECT_EQ(cache("past_key_values.0.key"), (Shape{{1, 4, 4096, 256}}));  // local: the window
  EXPECT_EQ(cache("past_key_values.1.key"), (Shape{{1, 4, 5001, 256}}));  // global: everything
  for (const char* node : {"model.layers.0.self_attn.softcap_tanh", "final_logit_softcap_tanh",
                           "model.layers.25.pre_feedforward_layernorm.mul_1",
                           "model.layers.25.post_feedforward_layernorm.mul_1", "model.layers.25.post_attention_layernorm.mul_1"})
    EXPECT_GE(g.find_node(node), 0) << node;
  // The soft-cap: one Div, Tanh and Mul over B x H x T x S scores.
  const int cap = g.find_node("model.layers.1.self_attn.softcap_div");
  ASSERT_GE(cap, 0);
  EXPECT_EQ(estimate(g).nodes[static_cast<size_t>(cap)].cost.flops, Count{8} * 5001);

  const LlmConfig& g3 = *find_llm_config("gemma-3-1b");
  EXPECT_EQ(g3.qk_norm, LlmConfig::QkNorm::PerHead);
  EXPECT_EQ(g3.attn_softcap, 0.0);
  for (int64_t l = 0; l < g3.num_layers; ++l) EXPECT_EQ(g3.window_of(l), (l + 1) % 6 == 0 ? 0 : 512) << l;
  EXPECT_EQ(llm_params(g3).total, Count{999885952});  // "1B"
  const Graph g3g = build_llm(g3, s);
  EXPECT_GE(g3g.find_node("model.layers.0.self_attn.q_norm.add_1"), 0);  // Gemma's RMSNorm: (1 + weight)
  EXPECT_LT(g3g.find_node("final_logit_softcap_tanh"), 0);

  json j = json::parse(R"({"model_type":"gemma3_text","vocab_size":64,"hidden_size":32,"num_hidden_layers":4,
      "num_attention_heads":2,"num_key_value_heads":1,"head_dim":16,"intermediate_size":48,"sliding_window":8})");
  j["layer_types"] = {"sliding_attention", "full_attention", "sliding_attention", "full_attention"};
  EXPECT_EQ(parse_llm_config(j, "cfg.json").global_every, 2);
  j["layer_types"] = {"full_attention", "full_attention", "full_attention", "full_attention"};
  EXPECT_EQ(parse_llm_config(j, "cfg.json").sliding_window, 0);
  j["layer_types"] = {"full_attention", "sliding_attention", "sliding_attention", "sliding_attention"};
  const LlmConfig first_full = parse_llm_config(j, "cfg.json");  // the first layers full, the rest sliding
  EXPECT_EQ(first_full.window_of(0), 0);
  for (int64_t l = 1; l < 4; ++l) EXPECT_EQ(first_full.window_of(l), 8) << l;
  j["layer_types"] = {"sliding_attention", "full_attention", "full_attention", "sliding_attention"};
  EXPECT_EQ(error_of(j), "cfg.json: layer_types: only patterns with every k-th layer full_attention, or the first "
                         "layers full_attention and the rest sliding_attention, are supported");
  j["layer_types"] = {"full_attention"};
  EXPECT_NE(error_of(j).find("layer_types must list one attention type per layer (4)"), std::string::npos);
  // The multimodal Gemma 3 config wraps the language model: the error says where it is.
  json mm = json::parse(R"({"model_type":"gemma3","text_config":{"model_type":"gemma3_text"},"vision_config":{}})");
  EXPECT_NE(error_of(mm).find("model_type 'gemma3' is a multimodal model; its language model is the config in "
                              "\"text_config\""), std::string::npos) << error_of(mm);
}

// Qwen2/Qwen3 with use_sliding_window: layer i slides iff i >= max_window_layers (transformers' Qwen2Attention;
// default 28); layer_types, when given, takes precedence; without use_sliding_window no layer slides.
TEST(LlmConfig, QwenSlidesOnlyFromMaxWindowLayers) {
  json j = json::parse(R"({"model_type":"qwen2","vocab_size":64,"hidden_size":32,"num_hidden_layers":24,
      "num_attention_heads":2,"num_key_value_heads":1,"intermediate_size":48,"use_sliding_window":true,
      "sliding_window":256})");
  auto windows = [](const LlmConfig& c) {
    std::vector<int64_t> w;
    for (int64_t l = 0; l < c.num_layers; ++l) w.push_back(c.window_of(l));
    return w;
  };
  const std::vector<int64_t> none(24, 0), all(24, 256);
  EXPECT_EQ(windows(parse_llm_config(j, "cfg.json")), none);  // default max_window_layers 28 >= 24 layers
  j["max_window_layers"] = 24;
  EXPECT_EQ(parse_llm_config(j, "cfg.json").sliding_window, 0);
  EXPECT_EQ(windows(parse_llm_config(j, "cfg.json")), none);
  j["max_window_layers"] = 0;
  EXPECT_EQ(windows(parse_llm_config(j, "cfg.json")), all);
  j["max_window_layers"] = 12;
  std::vector<int64_t> half(24, 0);
  std::fill(half.begin() + 12, half.end(), 256);
  EXPECT_EQ(windows(parse_llm_config(j, "cfg.json")), half);
  j["model_type"] = "qwen3";
  EXPECT_EQ(windows(parse_llm_config(j, "cfg.json")), half);
  j["max_window_layers"] = -1;
  EXPECT_EQ(error_of(j), "cfg.json: max_window_layers must not be negative, not -1");
  j["max_window_layers"] = 0;
  j["layer_types"] = std::vector<std::string>(24, "full_attention");  // precedence over max_window_layers
  EXPECT_EQ(windows(parse_llm_config(j, "cfg.json")), none);
  std::vector<std::string> types(24, "sliding_attention");
  std::fill(types.begin(), types.begin() + 12, "full_attention");
  j["layer_types"] = types;
  EXPECT_EQ(windows(parse_llm_config(j, "cfg.json")), half);
  j["use_sliding_window"] = false;  // sliding_window is None then, whatever layer_types say
  EXPECT_EQ(windows(parse_llm_config(j, "cfg.json")), none);
}

// DeepSeek's multi-head latent attention and MoE as transformers builds them: queries through a low-rank q_a_proj
// (V3) or one q_proj (V2-Lite), keys and values from a 512-wide latent, 192-wide query/key heads and 128-wide value
// heads; dense first layers, routed experts plus shared ones, V3's sigmoid router with its selection bias.
TEST(LlmConfig, DeepseekLatentAttentionAndExperts) {
  // deepseek-ai/DeepSeek-V3 (config.json of the hub; the multi-token-prediction layer is not part of the model):
  // "671B total parameters, 37B activated".
  const LlmConfig v3 = parse_llm_config(json::parse(R"({"model_type":"deepseek_v3","vocab_size":129280,
      "hidden_size":7168,"intermediate_size":18432,"moe_intermediate_size":2048,"num_hidden_layers":61,
      "num_nextn_predict_layers":1,"num_attention_heads":128,"num_key_value_heads":128,"n_shared_experts":1,
      "n_routed_experts":256,"routed_scaling_factor":2.5,"kv_lora_rank":512,"q_lora_rank":1536,"qk_rope_head_dim":64,
      "v_head_dim":128,"qk_nope_head_dim":128,"topk_method":"noaux_tc","n_group":8,"topk_group":4,
      "num_experts_per_tok":8,"moe_layer_freq":1,"first_k_dense_replace":3,"norm_topk_prob":true,
      "scoring_func":"sigmoid","max_position_embeddings":163840,"tie_word_embeddings":false})"), "v3");
  EXPECT_TRUE(v3.mla() && v3.router_sigmoid && !v3.shared_expert_gate);
  EXPECT_EQ(v3.head_dim, 192);
  EXPECT_EQ(v3.rotary_dim(), 64);
  EXPECT_FALSE(v3.sparse_layer(2));
  EXPECT_TRUE(v3.sparse_layer(3));
  const LlmParams p3 = llm_params(v3);
  EXPECT_EQ(p3.total, Count{671026419200});
  EXPECT_EQ(p3.active_per_token, Count{37552297472});
  // DeepSeek-V2-Lite (zoo): "15.7B total, 2.4B activated" (2.45B without the lm_head); graph = formula.
  const LlmConfig& lite = *find_llm_config("deepseek-v2-lite");
  EXPECT_EQ(llm_params(lite).total, Count{15706484224});
  EXPECT_EQ(llm_params(lite).active_per_token - Count{102400} * 2048, Count{2451435008});
  LlmShape s{1, 4, 6, DType::F16, true};
  const Graph g = build_llm(lite, s);
  EXPECT_EQ(estimate(g).total.params, llm_params(lite).total);
  for (const char* node : {"model.layers.0.mlp.down_proj", "model.layers.1.mlp.shared_experts.down_proj",
                           "model.layers.26.mlp.experts.63.down_proj", "model.layers.1.self_attn.kv_b_proj",
                           "model.layers.1.self_attn.q_proj", "model.layers.1.self_attn.expand"})
    EXPECT_GE(g.find_node(node), 0) << node;
  EXPECT_LT(g.find_node("model.layers.0.mlp.experts.0.down_proj"), 0);  // the first layer is dense
  // The cache holds every head's decompressed key (192) and value (128) for past + new positions.
  for (const Value& v : g.values) {
    if (v.name == "past_key_values.5.key") {
      EXPECT_EQ(v.shape, (Shape{{1, 16, 10, 192}}));
    } else if (v.name == "past_key_values.5.value") {
      EXPECT_EQ(v.shape, (Shape{{1, 16, 10, 128}}));
    }
  }
  // With a latent cache (vLLM, SGLang): one [B, 1, S, 512 + 64] entry per layer; a one-token step absorbs kv_b_proj
  // (W_UK into the query, W_UV after the output: the same parameters) and attends all 16 heads to the shared latent.
  LlmShape one{1, 1, 9, DType::F16, true};
  one.latent_kv = true;
  const Graph lg = build_llm(lite, one);
  EXPECT_EQ(estimate(lg).total.params, llm_params(lite).total);
  bool latent_seen = false;
  for (const Value& v : lg.values) {
    EXPECT_NE(v.name, "past_key_values.5.key");
    if (v.name == "past_key_values.5.latent") {
      latent_seen = true;
      EXPECT_EQ(v.shape, (Shape{{1, 1, 10, 576}}));
    }
  }
  EXPECT_TRUE(latent_seen);
  const auto lc = estimate(lg);
  auto flops_of = [&](const std::string& name) {
    const int n = lg.find_node(name);
    return n < 0 ? Count{-1} : lc.nodes[static_cast<size_t>(n)].cost.flops;
  };
  EXPECT_EQ(flops_of("model.layers.5.self_attn.absorb_uk"), Count{2} * 16 * 128 * 512);  // per head: 128 -> 512
  EXPECT_EQ(flops_of("model.layers.5.self_attn.matmul"), Count{2} * 16 * 10 * 576);      // scores over 10 positions
  EXPECT_EQ(flops_of("model.layers.5.self_attn.matmul_1"), Count{2} * 16 * 10 * 512);    // output in the latent
  EXPECT_EQ(flops_of("model.layers.5.self_attn.absorb_uv"), Count{2} * 16 * 512 * 128);
  // A prompt from an empty cache decompresses its latent as HF does, and writes the latent.
  LlmShape prompt{1, 8, 0, DType::F16, true};
  prompt.latent_kv = true;
  const Graph pg = build_llm(lite, prompt);
  EXPECT_GE(pg.find_node("model.layers.5.self_attn.kv_b_proj"), 0);
  EXPECT_EQ(pg.outputs.size(), 1u + 27u);  // logits + one latent entry per layer
  // A small V3: the router's selection bias and the low-rank queries, graph = formula.
  LlmConfig tiny = parse_llm_config(json::parse(R"({"model_type":"deepseek_v3","vocab_size":128,"hidden_size":64,
      "intermediate_size":96,"moe_intermediate_size":16,"num_hidden_layers":3,"num_attention_heads":4,
      "n_shared_experts":2,"n_routed_experts":8,"kv_lora_rank":32,"q_lora_rank":48,"qk_rope_head_dim":8,
      "v_head_dim":12,"qk_nope_head_dim":16,"num_experts_per_tok":2,"first_k_dense_replace":1})"), "tiny-v3");
  tiny.name = "tiny-v3";
  EXPECT_EQ(graph_params(tiny), llm_params(tiny).total);
  const Graph t = build_llm(tiny, LlmShape{});
  EXPECT_GE(t.find_node("model.layers.2.mlp.gate.add_correction_bias"), 0);
  EXPECT_GE(t.find_node("model.layers.2.self_attn.q_a_layernorm.mul_1"), 0);
  EXPECT_NE(error_of(json::parse(R"({"model_type":"deepseek_v3","vocab_size":128,"hidden_size":64,
      "intermediate_size":96,"num_hidden_layers":3,"num_attention_heads":4,"kv_lora_rank":32,"qk_rope_head_dim":8,
      "v_head_dim":12,"qk_nope_head_dim":0})")).find("must be positive"), std::string::npos);
}

// gpt-oss as transformers' GptOss modules compute it: biased attention with one learned sink logit per head in every
// softmax, 128-token windows in every other layer, and MoE layers of biased experts (fused gate_up_proj, clamped
// SwiGLU) behind a biased router that softmaxes each token's top-k logits.
TEST(LlmConfig, GptOssSinksWindowsAndClampedExperts) {
  const LlmConfig& c = *find_llm_config("gpt-oss-20b");
  EXPECT_TRUE(c.attention_sinks && c.router_bias && c.router_topk_softmax && c.clamped_swiglu);
  EXPECT_EQ(c.window_of(0), 128);
  EXPECT_EQ(c.window_of(1), 0);
  // Active per token: 4 of 32 experts of 3 x 2880 x 2880 + biases (2 x 2880 + 2880).
  EXPECT_EQ(llm_params(c).active_per_token,
            llm_params(c).total - Count{24} * 28 * (3 * 2880 * 2880 + 3 * 2880));
  LlmShape s{1, 8, 0, DType::F16, false};
  const Graph g = build_llm(c, s);
  const auto cost = estimate(g);
  auto node = [&](const std::string& name) -> const NodeCost& {
    const int n = g.find_node(name);
    EXPECT_GE(n, 0) << name;
    return cost.nodes[static_cast<size_t>(std::max(n, 0))];
  };
  EXPECT_EQ(node("model.layers.0.self_attn.sinks_sub").cost.flops, Count{64} * 8 * 9);  // H x T x (S + 1)
  EXPECT_EQ(g.value(g.nodes[static_cast<size_t>(g.find_node("model.layers.0.self_attn.softmax"))].outputs[0]).shape,
            (Shape{{1, 64, 8, 9}}));
  EXPECT_EQ(node("model.layers.0.mlp.router").cost.params, Count{2880} * 32 + 32);
  EXPECT_EQ(g.value(g.nodes[static_cast<size_t>(g.find_node("model.layers.0.mlp.softmax"))].outputs[0]).shape,
            (Shape{{8, 4}}));  // the top-4 logits of each token
  EXPECT_EQ(node("model.layers.0.mlp.experts.0.gate_up_proj").cost.params, Count{2880} * 5760 + 5760);
  EXPECT_EQ(node("model.layers.0.mlp.experts.0.down_proj").cost.params, Count{2880} * 2880 + 2880);
  for (const char* op : {"clamp", "clamp_1", "sigmoid", "add", "mul_2"})
    EXPECT_GE(g.find_node(std::string("model.layers.23.mlp.experts.31.") + op), 0) << op;
  EXPECT_EQ(llm_params(*find_llm_config("gpt-oss-120b")).total, Count{116829156672});
}

// GPT-J and CodeGen as transformers' GPTJ / CodeGen modules build them: one shared ln_1 feeding attention and the
// MLP in parallel, q/k/v/out_proj (CodeGen: one qkv_proj) without biases, fc_in/fc_out with biases, rotary_dim rotated
// dims per head (an integer, never a truncated fraction of head_dim), an untied lm_head with a bias.
TEST(LlmConfig, GptjAndCodegenShareLn1AndRotateRotaryDimDims) {
  // EleutherAI/gpt-j-6b (config.json of the hub): V 50400, h 4096, 28 layers, 16 heads, rotary_dim 64, n_inner null.
  LlmConfig c = parse_llm_config(json::parse(R"({"model_type":"gptj","vocab_size":50400,"n_embd":4096,"n_layer":28,
      "n_head":16,"n_positions":2048,"rotary_dim":64,"n_inner":null,"activation_function":"gelu_new",
      "tie_word_embeddings":false,"layer_norm_epsilon":1e-05})"), "gpt-j-6b");
  c.name = "gpt-j-6b";
  const Count V = 50400, h = 4096, L = 28, I = 4 * h;
  EXPECT_EQ(c.head_dim, 256);
  EXPECT_EQ(c.rotary_dim(), 64);
  // wte + per layer (ln_1, q/k/v/out_proj, fc_in and fc_out with biases) + ln_f + lm_head with its bias.
  const Count expected = V * h + L * (2 * h + 4 * h * h + 2 * h * I + I + h) + 2 * h + V * h + V;
  EXPECT_EQ(expected, Count{6050882784});  // the checkpoint's 6,050,882,784
  EXPECT_EQ(llm_params(c).total, expected);
  EXPECT_EQ(graph_params(c), expected);
  LlmShape s;
  s.tokens = 8;
  for (bool serving : {false, true}) {
    s.serving = serving, s.past = serving ? 4 : 0;
    const Graph g = build_llm(c, s);
    for (const char* node : {"transformer.h.0.ln_1", "transformer.h.0.attn.q_proj", "transformer.h.0.attn.out_proj",
                             "transformer.h.27.mlp.fc_in", "transformer.h.27.mlp.fc_out", "transformer.ln_f", "lm_head"})
      EXPECT_GE(g.find_node(node), 0) << node;
    EXPECT_LT(g.find_node("transformer.h.0.ln_2"), 0);
    const auto cost = estimate(g);
    auto params_of = [&](const char* name) { return cost.nodes[static_cast<size_t>(g.find_node(name))].cost.params; };
    EXPECT_EQ(params_of("transformer.h.0.attn.q_proj"), h * h);  // no bias
    EXPECT_EQ(params_of("transformer.h.0.mlp.fc_in"), h * I + I);
    EXPECT_EQ(params_of("lm_head"), V * h + V);
    // The rotary part: the first 64 of 256 dims of each of 16 query heads, x cos + rotate(x) sin.
    const int mul_cos = g.find_node("transformer.h.0.attn.mul_cos");
    ASSERT_GE(mul_cos, 0);
    EXPECT_EQ(cost.nodes[static_cast<size_t>(mul_cos)].cost.flops, Count{16} * 8 * 64);
  }
  // rotary_dim is an integer: 32 of 96 dims (a fraction 1/3 would truncate 96 x 0.333... to 31); null: all of them.
  json j = json::parse(R"({"model_type":"gptj","vocab_size":64,"n_embd":768,"n_layer":1,"n_head":8,"rotary_dim":32})");
  EXPECT_EQ(parse_llm_config(j, "cfg.json").rotary_dim(), 32);
  j["rotary_dim"] = nullptr;
  EXPECT_EQ(parse_llm_config(j, "cfg.json").rotary_dim(), 96);
  j.erase("rotary_dim");
  EXPECT_EQ(parse_llm_config(j, "cfg.json").rotary_dim(), 64);  // GPTJConfig's default
  j["rotary_dim"] = 0;
  EXPECT_EQ(error_of(j), "cfg.json: rotary_dim must be positive and even, not 0");
  j["rotary_dim"] = 200;
  EXPECT_NE(error_of(j).find("rotary dimension 200"), std::string::npos) << error_of(j);
  j["rotary_dim"] = 32;
  j["tie_word_embeddings"] = true;
  EXPECT_EQ(error_of(j), "cfg.json: tie_word_embeddings true is not supported (the lm_head has a bias)");
  j.erase("n_embd");
  EXPECT_EQ(error_of(j), "cfg.json: missing required key 'n_embd'");

  // Salesforce/codegen-350M-mono: one qkv_proj of 3h outputs, rotary_dim 32 of 64.
  LlmConfig cg = parse_llm_config(json::parse(R"({"model_type":"codegen","vocab_size":51200,"n_embd":1024,
      "n_layer":20,"n_head":16,"n_positions":2048,"n_ctx":2048,"rotary_dim":32,"n_inner":null,
      "activation_function":"gelu_new","tie_word_embeddings":false})"), "codegen-350m-mono");
  cg.name = "codegen-350m-mono";
  const Count Vc = 51200, hc = 1024, Ic = 4 * hc;
  const Count cg_expected = Vc * hc + 20 * (2 * hc + 4 * hc * hc + 2 * hc * Ic + Ic + hc) + 2 * hc + Vc * hc + Vc;
  EXPECT_EQ(cg_expected, Count{356712448});
  EXPECT_EQ(llm_params(cg).total, cg_expected);
  EXPECT_EQ(graph_params(cg), cg_expected);
  EXPECT_EQ(cg.rotary_dim(), 32);
  const Graph g = build_llm(cg, s);
  const int qkv = g.find_node("transformer.h.19.attn.qkv_proj");
  ASSERT_GE(qkv, 0);
  EXPECT_EQ(estimate(g).nodes[static_cast<size_t>(qkv)].cost.params, 3 * hc * hc);
  EXPECT_GE(g.find_node("transformer.h.0.attn.out_proj"), 0);
  EXPECT_EQ(error_of(json::parse(R"({"model_type":"codegen","vocab_size":64,"n_embd":48,"n_layer":1,"n_head":6,
      "rotary_dim":4})")), "cfg.json: n_head 6 is not a multiple of 4 (CodeGen splits qkv_proj in 4 groups of heads)");
}

// GPTBigCode (SantaCoder, StarCoder) as transformers builds it: gpt2's module names with nn.Linear layers, learned
// positions, a tied head, and multi-query attention: one key/value head shared by every query head (c_attn of
// h + 2 head_dim outputs, a one-head KV cache, no repeat_kv copies).
TEST(LlmConfig, GptBigcodeIsMultiQueryWithLearnedPositions) {
  // StarCoder's shapes (bigcode/starcoder): n_embd 6144, 40 layers, 48 heads of 128, 8192 positions, vocab 49152.
  LlmConfig c = parse_llm_config(json::parse(R"({"model_type":"gpt_bigcode","vocab_size":49152,"n_embd":6144,
      "n_layer":40,"n_head":48,"n_positions":8192,"n_inner":24576,"multi_query":true,
      "activation_function":"gelu_pytorch_tanh"})"), "starcoder");
  c.name = "starcoder";
  EXPECT_EQ(c.num_kv_heads, 1);
  const Count V = 49152, P = 8192, h = 6144, hd = 128, I = 24576, L = 40;
  // wte + wpe + per layer (ln_1, c_attn h -> h + 2 hd, c_proj, ln_2, c_fc, c_proj, all biased) + ln_f; tied.
  const Count expected =
      V * h + P * h + L * (2 * h + (h * (h + 2 * hd) + h + 2 * hd) + (h * h + h) + 2 * h + (h * I + I) + (I * h + h)) +
      2 * h;
  EXPECT_EQ(expected, Count{15517456384});  // "15.5B"
  EXPECT_EQ(llm_params(c).total, expected);
  EXPECT_EQ(graph_params(c), expected);
  LlmShape s;
  s.tokens = 8;
  for (bool serving : {false, true}) {
    s.serving = serving, s.past = serving ? 4 : 0;
    const Graph g = build_llm(c, s);
    for (const char* node : {"transformer.wte", "transformer.wpe", "transformer.h.0.ln_1", "transformer.h.0.attn.c_attn",
                             "transformer.h.0.attn.c_proj", "transformer.h.39.ln_2", "transformer.h.39.mlp.c_fc",
                             "transformer.h.39.mlp.c_proj", "transformer.ln_f", "lm_head"})
      EXPECT_GE(g.find_node(node), 0) << node;
    const auto cost = estimate(g);
    const int c_attn = g.find_node("transformer.h.0.attn.c_attn");
    EXPECT_EQ(cost.nodes[static_cast<size_t>(c_attn)].cost.params, h * (h + 2 * hd) + h + 2 * hd);
    EXPECT_EQ(g.nodes[static_cast<size_t>(c_attn)].module_type, "Linear");  // nn.Linear, not GPT-2's Conv1D
    // The queries of all 48 heads against the one key: no copies of it.
    for (const Node& n : g.nodes) EXPECT_EQ(n.name.find("repeat_kv"), std::string::npos) << n.name;
    const int scores = g.find_node("transformer.h.0.attn.matmul");
    ASSERT_GE(scores, 0);
    EXPECT_EQ(cost.nodes[static_cast<size_t>(scores)].cost.flops, Count{2} * 48 * 8 * (serving ? 12 : 8) * hd);
    for (const Value& v : g.values)
      if (v.name == "past_key_values.0.key") {
        EXPECT_EQ(v.shape, (Shape{{1, 1, 12, 128}}));
      }
  }
  // multi_query false: every head has its own key and value (c_attn of 3h).
  LlmConfig mha = parse_llm_config(json::parse(R"({"model_type":"gpt_bigcode","vocab_size":64,"n_embd":32,"n_layer":2,
      "n_head":4,"n_positions":64,"multi_query":false})"), "mha");
  mha.name = "mha";
  EXPECT_EQ(mha.num_kv_heads, 4);
  EXPECT_EQ(graph_params(mha), llm_params(mha).total);
  EXPECT_EQ(llm_params(mha).total, Count{64} * 32 + 64 * 32 + 2 * (4 * 32 + 3 * 32 * 32 + 3 * 32 + 32 * 32 + 32 +
                                                                        2 * 32 * 128 + 128 + 32) + 2 * 32);
  EXPECT_EQ(error_of(json::parse(R"({"model_type":"gpt_bigcode","vocab_size":64,"n_embd":32,"n_layer":2,"n_head":4,
      "n_positions":64,"add_cross_attention":true})")),
            "cfg.json: add_cross_attention true is not supported (decoder-only models)");
  EXPECT_EQ(error_of(json::parse(R"({"model_type":"gpt_bigcode","vocab_size":64,"n_embd":32,"n_layer":2,"n_head":4})")),
            "cfg.json: missing required key 'n_positions'");
}

// StarCoder2 (mistral's attention with use_bias, LayerNorms, a plain c_fc/c_proj MLP, tied by default) and StableLM
// (LayerNorms, partial rotary 0.25, q/k/v biases with use_qkv_bias, a SiLU-gated MLP, one shared norm with
// use_parallel_residual).
TEST(LlmConfig, Starcoder2AndStablelmAsTransformersBuildThem) {
  // bigcode/starcoder2-3b's shapes: 24 heads of 128, 2 KV heads, a 4096-token window.
  LlmConfig sc = parse_llm_config(json::parse(R"({"model_type":"starcoder2","vocab_size":49152,"hidden_size":3072,
      "intermediate_size":12288,"num_hidden_layers":30,"num_attention_heads":24,"num_key_value_heads":2,
      "max_position_embeddings":16384,"sliding_window":4096,"use_bias":true,"norm_epsilon":1e-05,
      "hidden_act":"gelu_pytorch_tanh"})"), "starcoder2-3b");
  sc.name = "starcoder2-3b";
  EXPECT_TRUE(sc.tied_embeddings);  // Starcoder2Config leaves tie_word_embeddings at PretrainedConfig's true
  const Count V = 49152, h = 3072, kvd = 2 * 128, I = 12288;
  const Count sc_layer = 2 * 2 * h + (h * h + h) + 2 * (h * kvd + kvd) + (h * h + h) + (h * I + I) + (I * h + h);
  EXPECT_EQ(llm_params(sc).total, V * h + 30 * sc_layer + 2 * h);
  EXPECT_EQ(graph_params(sc), llm_params(sc).total);
  LlmShape s{1, 1, 5000, DType::F16, true};
  const Graph g = build_llm(sc, s);
  for (const char* node : {"model.layers.0.input_layernorm", "model.layers.0.self_attn.q_proj",
                           "model.layers.0.self_attn.o_proj", "model.layers.29.post_attention_layernorm",
                           "model.layers.29.mlp.c_fc", "model.layers.29.mlp.c_proj", "model.norm"})
    EXPECT_GE(g.find_node(node), 0) << node;
  EXPECT_EQ(estimate(g).nodes[static_cast<size_t>(g.find_node("model.layers.0.self_attn.k_proj"))].cost.params,
            h * kvd + kvd);
  for (const Value& v : g.values)
    if (v.name == "past_key_values.0.key") {
      EXPECT_EQ(v.shape, (Shape{{1, 2, 4096, 128}}));  // the window caps the cache
    }
  json nb = json::parse(R"({"model_type":"starcoder2","vocab_size":64,"hidden_size":32,"intermediate_size":48,
      "num_hidden_layers":2,"num_attention_heads":4,"use_bias":false,"tie_word_embeddings":false})");
  LlmConfig unbiased = parse_llm_config(nb, "cfg.json");
  unbiased.name = "unbiased";
  EXPECT_EQ(unbiased.num_kv_heads, 2);  // Starcoder2Config's default
  EXPECT_EQ(llm_params(unbiased).total, Count{2} * 64 * 32 + 2 * (4 * 32 + 32 * 32 * 2 + 2 * 32 * 16 + 2 * 32 * 48) + 64);
  EXPECT_EQ(graph_params(unbiased), llm_params(unbiased).total);

  // stabilityai/stablelm-2-1_6b: 24 layers, 32 heads of 64 (16 of them rotated), q/k/v biases, untied.
  LlmConfig st = parse_llm_config(json::parse(R"({"model_type":"stablelm","vocab_size":100352,"hidden_size":2048,
      "intermediate_size":5632,"num_hidden_layers":24,"num_attention_heads":32,"num_key_value_heads":32,
      "max_position_embeddings":4096,"partial_rotary_factor":0.25,"use_qkv_bias":true,"qk_layernorm":false,
      "use_parallel_residual":false,"tie_word_embeddings":false,"hidden_act":"silu","layer_norm_eps":1e-05})"),
      "stablelm-2-1_6b");
  st.name = "stablelm-2-1_6b";
  EXPECT_EQ(st.rotary_dim(), 16);
  const Count Vs = 100352, hs = 2048, Is = 5632;
  const Count st_expected = 2 * Vs * hs + 24 * (2 * 2 * hs + 3 * (hs * hs + hs) + hs * hs + 3 * hs * Is) + 2 * hs;
  EXPECT_EQ(st_expected, Count{1644515328});
  EXPECT_EQ(llm_params(st).total, st_expected);
  EXPECT_EQ(graph_params(st), st_expected);
  LlmShape p;
  p.tokens = 8;
  const Graph sg = build_llm(st, p);
  for (const char* node : {"model.layers.0.input_layernorm", "model.layers.0.post_attention_layernorm",
                           "model.layers.0.self_attn.q_proj", "model.layers.0.mlp.gate_proj",
                           "model.layers.23.mlp.down_proj", "model.norm", "lm_head"})
    EXPECT_GE(sg.find_node(node), 0) << node;
  EXPECT_EQ(estimate(sg).nodes[static_cast<size_t>(sg.find_node("model.layers.0.self_attn.o_proj"))].cost.params,
            hs * hs);  // o_proj has no bias
  // use_parallel_residual: x + attn(ln(x)) + mlp(ln(x)), one input_layernorm per layer.
  json par = json::parse(R"({"model_type":"stablelm","vocab_size":64,"hidden_size":32,"intermediate_size":48,
      "num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,"use_parallel_residual":true})");
  LlmConfig pc = parse_llm_config(par, "cfg.json");
  pc.name = "parallel";
  EXPECT_EQ(pc.rotary_dim(), 2);
  EXPECT_EQ(llm_params(pc).total, Count{2} * 64 * 32 + 2 * (2 * 32 + 32 * 32 * 2 + 2 * 32 * 16 + 3 * 32 * 48) + 64);
  EXPECT_EQ(graph_params(pc), llm_params(pc).total);
  EXPECT_LT(build_llm(pc, p).find_node("model.layers.0.post_attention_layernorm"), 0);
  par["qk_layernorm"] = true;
  EXPECT_EQ(error_of(par), "cfg.json: qk_layernorm true is not supported (per-head LayerNorms without bias)");
  par.erase("qk_layernorm");
  par.erase("num_key_value_heads");  // StableLmConfig's default is 32, not num_attention_heads
  EXPECT_NE(error_of(par).find("num_attention_heads 4 is not a multiple of num_key_value_heads 32"), std::string::npos)
      << error_of(par);
}

// Granite: llama's modules and parameters, plus GraniteModel's scalar multiplies as ops: the embeddings, each residual
// branch (attention and MLP outputs) and the logits, one FLOP per element each, so the graph's FLOPs exceed the same
// shapes as llama by exactly B T h (1 + 2 L) + B T V.
TEST(LlmConfig, GraniteCountsItsMultipliers) {
  // ibm-granite/granite-3.0-2b-base's shapes.
  json j = json::parse(R"({"model_type":"granite","vocab_size":49155,"hidden_size":2048,"intermediate_size":8192,
      "num_hidden_layers":40,"num_attention_heads":32,"num_key_value_heads":8,"max_position_embeddings":4096,
      "tie_word_embeddings":true,"embedding_multiplier":12.0,"logits_scaling":8.0,"residual_multiplier":0.22,
      "attention_multiplier":0.015625,"attention_bias":false,"mlp_bias":false})");
  LlmConfig g = parse_llm_config(j, "granite");
  g.name = "granite";
  j["model_type"] = "llama";
  LlmConfig l = parse_llm_config(j, "llama");
  l.name = "llama";
  EXPECT_EQ(llm_params(g).total, llm_params(l).total);
  EXPECT_EQ(graph_params(g), llm_params(g).total);
  LlmShape s;
  s.batch = 2, s.tokens = 8;
  const Graph gg = build_llm(g, s);
  const Count extra = Count{2} * 8 * 2048 * (1 + 2 * 40) + Count{2} * 8 * 49155;
  EXPECT_EQ(estimate(gg).total.flops, estimate(build_llm(l, s)).total.flops + extra);
  for (const char* node : {"model.mul", "model.layers.0.mul_residual_multiplier", "model.layers.39.mul_residual_multiplier_1",
                           "div_logits_scaling"})
    EXPECT_GE(gg.find_node(node), 0) << node;
}

// Cohere (Command R): LayerNorms with a weight and no bias (h parameters each, 6E + 2R), one norm per layer feeding
// attention and the MLP in parallel, tied head, logits x logit_scale; OLMo 1: non-parametric LayerNorms (no
// parameters, 5E + 2R) and q, k, v clamped with clip_qkv.
TEST(LlmConfig, CohereAndOlmoNormsWithoutBiasOrWeight) {
  // CohereForAI/c4ai-command-r-v01's shapes: embeddings + 40 x (4 h^2 attention + 3 h I MLP + one norm's h) + final norm.
  LlmConfig c = parse_llm_config(json::parse(R"({"model_type":"cohere","vocab_size":256000,"hidden_size":8192,
      "intermediate_size":22528,"num_hidden_layers":40,"num_attention_heads":64,"num_key_value_heads":64,
      "max_position_embeddings":8192,"logit_scale":0.0625,"use_qk_norm":false})"), "cohere");
  c.name = "cohere";
  const Count h = 8192, I = 22528, V = 256000;
  const Count cohere = V * h + 40 * (4 * h * h + 3 * h * I + h) + h;
  EXPECT_EQ(cohere, Count{34980831232});
  EXPECT_EQ(llm_params(c).total, cohere);
  // OLMo-1B-hf: no norm parameters at all; tied: 1,176,764,416 as published for OLMo-1B.
  LlmConfig o = parse_llm_config(json::parse(R"({"model_type":"olmo","vocab_size":50304,"hidden_size":2048,
      "intermediate_size":8192,"num_hidden_layers":16,"num_attention_heads":16,"max_position_embeddings":2048,
      "tie_word_embeddings":true,"clip_qkv":null})"), "olmo");
  o.name = "olmo";
  EXPECT_EQ(llm_params(o).total, Count{1176764416});
  // Graphs at small shapes: parameters as the formula, and OLMo's are llama's less its RMSNorm weights.
  const LlmConfig sc = small_config("cohere", 2), so = small_config("olmo", 2, R"(,"clip_qkv":8.0)"),
                  sl = small_config("llama", 2);
  EXPECT_EQ(graph_params(sc), llm_params(sc).total);
  EXPECT_EQ(graph_params(so), llm_params(so).total);
  EXPECT_EQ(llm_params(so).total, llm_params(sl).total - (2 * 2 + 1) * 32);  // llama's RMSNorm weights, gone
  LlmShape shape;
  shape.batch = 2, shape.tokens = 8;
  const Count E = 2 * 8 * 32, R = 2 * 8;
  // OLMo's norms and clamps, op by op (Clip: 2 FLOPs per element; k and v have 2 of the 4 heads).
  const Graph og = build_llm(so, shape);
  Count norms = 0, clamps = 0;
  for (const auto& nc : estimate(og).nodes) {
    const Node& n = og.nodes[static_cast<size_t>(nc.node)];
    if (n.op == OpKind::LayerNormalization) norms += nc.cost.flops;
    if (n.op == OpKind::Clip) clamps += nc.cost.flops;
  }
  EXPECT_EQ(norms, 5 * (5 * E + 2 * R));                  // 2 per layer + the final one, 5E + 2R each
  EXPECT_EQ(clamps, 2 * 2 * (E + E / 2 + E / 2));         // per layer: clamp q (E), k and v (E / 2 each), 2 FLOPs each
  const Graph cg = build_llm(sc, shape);
  Count cohere_norms = 0;
  for (const auto& nc : estimate(cg).nodes) {
    const Node& n = cg.nodes[static_cast<size_t>(nc.node)];
    if (n.op == OpKind::LayerNormalization) cohere_norms += nc.cost.flops;
  }
  EXPECT_EQ(cohere_norms, 3 * (6 * E + 2 * R));  // one per layer (parallel) + the final one, 6E + 2R each
  EXPECT_GE(cg.find_node("mul_logit_scale"), 0);
  EXPECT_LT(cg.find_node("model.layers.0.post_attention_layernorm"), 0);
  EXPECT_NE(error_of(json::parse(R"({"model_type":"cohere","vocab_size":64,"hidden_size":32,"intermediate_size":48,
      "num_hidden_layers":2,"num_attention_heads":4,"use_qk_norm":true})")).find("use_qk_norm"), std::string::npos);
}

// OLMo 2 and 3: RMSNorms after attention and after the MLP only (Olmo2DecoderLayer), q_norm / k_norm over the whole
// q and k projections (H x hd and kv x hd weights), an untied head; OLMo 3 slides a window in three layers of four.
TEST(LlmConfig, Olmo2NormsAfterEachBlockAndOverWholeProjections) {
  // allenai/OLMo-2-1124-7B's config: embeddings and head (untied) + 32 x (4 h^2 + 3 h I + q_norm h + k_norm h +
  // 2 norms of h) + the final norm. The model card says 7B ("7.3B" on the hub); these are the shapes it lists.
  LlmConfig o = parse_llm_config(json::parse(R"({"model_type":"olmo2","vocab_size":100352,"hidden_size":4096,
      "intermediate_size":11008,"num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":32,
      "max_position_embeddings":4096,"rms_norm_eps":1e-06,"tie_word_embeddings":false,"attention_bias":false})"),
      "olmo2");
  o.name = "olmo2";
  const Count h = 4096, I = 11008, V = 100352;
  const Count olmo2 = 2 * V * h + 32 * (4 * h * h + 3 * h * I + 4 * h) + h;
  EXPECT_EQ(olmo2, Count{7298617344});
  EXPECT_EQ(llm_params(o).total, olmo2);
  EXPECT_TRUE(o.qk_norm == LlmConfig::QkNorm::Whole && o.output_norms);
  EXPECT_EQ(o.sliding_window, 0);
  // Small shapes with grouped KV heads: the k_norm is kv x hd wide; the graph has the formula's parameters.
  const LlmConfig s2 = small_config("olmo2", 4), sl = small_config("llama", 4);
  EXPECT_EQ(graph_params(s2), llm_params(s2).total);
  EXPECT_EQ(llm_params(s2).total, llm_params(sl).total + 4 * (32 + 16));  // + q_norm (32) and k_norm (2 x 8) per layer
  LlmShape shape;
  shape.batch = 2, shape.tokens = 8;
  const Graph g = build_llm(s2, shape);
  EXPECT_LT(g.find_node("model.layers.0.input_layernorm.pow"), 0);   // no norm before attention
  for (const char* node : {"model.layers.0.post_attention_layernorm.pow", "model.layers.3.post_feedforward_layernorm.mul_1",
                           "model.layers.0.self_attn.q_norm.mul_1", "model.layers.0.self_attn.k_norm.mul_1"})
    EXPECT_GE(g.find_node(node), 0) << node;
  // The k_norm reduces over kv x hd = 16 values per token, not over each head's 8.
  const Node& k_mean = g.nodes[static_cast<size_t>(g.find_node("model.layers.0.self_attn.k_norm.mean"))];
  EXPECT_EQ(g.value(k_mean.inputs[0]).shape, (Shape{{2, 8, 16}}));
  // llama's FLOPs plus q_norm and k_norm: both have 2 RMSNorms of h per layer, only placed elsewhere. An RMSNorm of
  // width w over R rows costs 4 w R + 3 R (pow, mean, mul, weight mul per element; add, sqrt, reciprocal per row).
  const Count R = 2 * 8, q_norm = 4 * 32 * R + 3 * R, k_norm = 4 * 16 * R + 3 * R;
  EXPECT_EQ(estimate(g).total.flops, estimate(build_llm(sl, shape)).total.flops + 4 * (q_norm + k_norm));
  // OLMo 3: every fourth layer attends to all positions, the other three slide a window of sliding_window.
  const LlmConfig s3 = small_config("olmo3", 4, R"(,"sliding_window":8)");
  EXPECT_EQ(s3.sliding_window, 8);
  EXPECT_EQ(s3.window_of(0), 8);
  EXPECT_EQ(s3.window_of(2), 8);
  EXPECT_EQ(s3.window_of(3), 0);
  EXPECT_EQ(small_config("olmo3", 4).sliding_window, 4096);  // Olmo3Config's default
  EXPECT_EQ(small_config("olmo3", 4, R"(,"sliding_window":null)").sliding_window, 0);
  const LlmConfig listed = small_config("olmo3", 4, R"(,"sliding_window":8,"layer_types":["full_attention",
      "sliding_attention","sliding_attention","sliding_attention"])");
  EXPECT_EQ(listed.window_of(0), 0);
  EXPECT_EQ(listed.window_of(3), 8);
  EXPECT_EQ(graph_params(s3), llm_params(s3).total);
  EXPECT_EQ(llm_params(s3).total, llm_params(s2).total);
}

// OLMoE: llama's pre-norm layers with OLMo 2's whole-projection q_norm / k_norm, and 64 experts (top 8) in every layer.
TEST(LlmConfig, OlmoeExpertsWithWholeProjectionNorms) {
  // allenai/OLMoE-1B-7B-0924's shapes: untied embeddings and head + 16 x (4 h^2 + q_norm h + k_norm h + 2 norms of h
  // + router h x 64 + 64 experts of 3 h I) + the final norm; the paper's "6.9B total, 1.3B active" parameters.
  LlmConfig o = parse_llm_config(json::parse(R"({"model_type":"olmoe","vocab_size":50304,"hidden_size":2048,
      "intermediate_size":1024,"num_hidden_layers":16,"num_attention_heads":16,"num_key_value_heads":16,
      "num_experts":64,"num_experts_per_tok":8,"norm_topk_prob":false,"clip_qkv":null,
      "max_position_embeddings":4096,"tie_word_embeddings":false})"), "olmoe");
  o.name = "olmoe";
  const Count h = 2048, I = 1024, V = 50304, E = 64, K = 8;
  const Count shared = 4 * h * h + 4 * h + h * E;
  EXPECT_EQ(llm_params(o).total, 2 * V * h + 16 * (shared + E * 3 * h * I) + h);
  EXPECT_EQ(llm_params(o).total, Count{6919161856});
  EXPECT_EQ(llm_params(o).active_per_token, 2 * V * h + 16 * (shared + K * 3 * h * I) + h);
  EXPECT_EQ(llm_params(o).active_per_token, Count{1282017280});
  EXPECT_EQ(o.clip_qkv, 0);
  // Small shapes: the graph has the formula's parameters; pre-norm layers with the projection norms and a router.
  LlmConfig s = parse_llm_config(json::parse(R"({"model_type":"olmoe","vocab_size":64,"hidden_size":32,
      "intermediate_size":16,"num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,"num_experts":4,
      "num_experts_per_tok":2,"clip_qkv":8.0,"max_position_embeddings":64})"), "olmoe");
  s.name = "olmoe";
  EXPECT_EQ(graph_params(s), llm_params(s).total);
  LlmShape shape;
  shape.batch = 2, shape.tokens = 8;
  const Graph g = build_llm(s, shape);
  for (const char* node : {"model.layers.0.input_layernorm.pow", "model.layers.0.self_attn.q_norm.mul_1",
                           "model.layers.1.self_attn.clamp_v", "model.layers.1.mlp.gate", "model.layers.1.mlp.experts.3.down_proj"})
    EXPECT_GE(g.find_node(node), 0) << node;
  const Node& k_mean = g.nodes[static_cast<size_t>(g.find_node("model.layers.0.self_attn.k_norm.mean"))];
  EXPECT_EQ(g.value(k_mean.inputs[0]).shape, (Shape{{2, 8, 16}}));  // kv x hd = 2 x 8, over the whole projection
  EXPECT_NE(error_of(json::parse(R"({"model_type":"olmoe","vocab_size":64,"hidden_size":32,"intermediate_size":16,
      "num_hidden_layers":2,"num_attention_heads":4,"num_experts":0})")).find("num_experts"), std::string::npos);
}

// GLM-4 (glm) and GLM-4-0414 (glm4): q/k/v biases without an o_proj bias, half of each head rotated, Phi-3's fused
// gate_up_proj; glm4 adds a norm after attention and after the MLP (post_self_attn_layernorm, post_mlp_layernorm).
TEST(LlmConfig, GlmFusedGateUpHalfRotaryAndGlm4PostNorms) {
  // THUDM/GLM-4-9B-0414's shapes: untied embeddings and head + 40 x (q h x h + bias, k and v h x 256 + bias each,
  // o h x h, MLP 3 h I, 4 norms of h) + the final norm ("9.4B" on the hub).
  const char* shapes = R"("vocab_size":151552,"hidden_size":4096,"intermediate_size":13696,"num_hidden_layers":40,
      "num_attention_heads":32,"num_key_value_heads":2,"head_dim":128,"attention_bias":true,"partial_rotary_factor":0.5,
      "max_position_embeddings":32768,"tie_word_embeddings":false)";
  LlmConfig g4 = parse_llm_config(json::parse(fmt::format(R"({{"model_type":"glm4",{}}})", shapes)), "glm4");
  LlmConfig g1 = parse_llm_config(json::parse(fmt::format(R"({{"model_type":"glm",{}}})", shapes)), "glm");
  g4.name = "glm4", g1.name = "glm";
  const Count h = 4096, I = 13696, V = 151552, kv = 2 * 128;
  const Count layer = (h * h + h) + 2 * (h * kv + kv) + h * h + 3 * h * I;
  EXPECT_EQ(llm_params(g4).total, 2 * V * h + 40 * (layer + 4 * h) + h);
  EXPECT_EQ(llm_params(g4).total, Count{9400279040});
  EXPECT_EQ(llm_params(g1).total, 2 * V * h + 40 * (layer + 2 * h) + h);
  EXPECT_EQ(g4.rotary_dim(), 64);
  EXPECT_TRUE(g4.qkv_bias && !g4.o_bias && g4.fused_gate_up && g4.sandwich_norms && !g1.sandwich_norms);
  // GlmConfig's defaults: head_dim 128 (not hidden / heads), attention biases on, half rotary.
  const LlmConfig d = parse_llm_config(json::parse(R"({"model_type":"glm","vocab_size":64,"hidden_size":32,
      "intermediate_size":48,"num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2})"), "glm");
  EXPECT_EQ(d.head_dim, 128);
  EXPECT_TRUE(d.qkv_bias);
  EXPECT_EQ(d.rotary_dim(), 64);
  // Small shapes: the graph has the formula's parameters; glm4's norms sit where Glm4DecoderLayer names them.
  const LlmConfig s4 = small_config("glm4", 2, R"(,"head_dim":8)"), s1 = small_config("glm", 2, R"(,"head_dim":8)");
  EXPECT_EQ(graph_params(s4), llm_params(s4).total);
  EXPECT_EQ(graph_params(s1), llm_params(s1).total);
  EXPECT_EQ(llm_params(s4).total, llm_params(s1).total + 2 * 2 * 32);
  LlmShape shape;
  shape.batch = 2, shape.tokens = 8;
  const Graph g = build_llm(s4, shape);
  for (const char* node : {"model.layers.0.input_layernorm.pow", "model.layers.0.post_self_attn_layernorm.pow",
                           "model.layers.0.post_attention_layernorm.pow", "model.layers.1.post_mlp_layernorm.mul_1",
                           "model.layers.0.mlp.gate_up_proj", "model.layers.0.mlp.down_proj"})
    EXPECT_GE(g.find_node(node), 0) << node;
  // glm4 = glm + two RMSNorms of h per layer, 4 E + 3 R each (R = 16 rows, E = 16 x 32).
  const Count R = 2 * 8, E = R * 32;
  EXPECT_EQ(estimate(g).total.flops, estimate(build_llm(s1, shape)).total.flops + 2 * 2 * (4 * E + 3 * R));
}

// GLM-4.5 (glm4_moe): GLM's attention (q/k/v biases, half rotary, per-head q/k norms with use_qk_norm) in llama's
// pre-norm layers, dense first layers, then DeepSeek-V3's MoE (sigmoid router with its selection bias, shared experts).
TEST(LlmConfig, Glm4MoeGlmAttentionWithDeepseekExperts) {
  // zai-org/GLM-4.5 and GLM-4.5-Air (config.json of the hub): "355 billion total parameters with 32 billion active"
  // and "106 billion total ... 12 billion active", without the multi-token-prediction layer transformers leaves out.
  const char* glm45 = R"({"model_type":"glm4_moe","vocab_size":151552,"hidden_size":5120,"intermediate_size":12288,
      "moe_intermediate_size":1536,"num_hidden_layers":92,"num_attention_heads":96,"num_key_value_heads":8,
      "head_dim":128,"attention_bias":true,"partial_rotary_factor":0.5,"n_routed_experts":160,"n_shared_experts":1,
      "num_experts_per_tok":8,"first_k_dense_replace":3,"routed_scaling_factor":2.5,"n_group":1,"topk_group":1,
      "norm_topk_prob":true,"num_nextn_predict_layers":1,"use_qk_norm":true,"max_position_embeddings":131072,
      "tie_word_embeddings":false})";
  const char* air = R"({"model_type":"glm4_moe","vocab_size":151552,"hidden_size":4096,"intermediate_size":10944,
      "moe_intermediate_size":1408,"num_hidden_layers":46,"num_attention_heads":96,"num_key_value_heads":8,
      "head_dim":128,"attention_bias":true,"partial_rotary_factor":0.5,"n_routed_experts":128,"n_shared_experts":1,
      "num_experts_per_tok":8,"first_k_dense_replace":1,"use_qk_norm":false,"tie_word_embeddings":false})";
  LlmConfig big = parse_llm_config(json::parse(glm45), "glm-4.5"), small = parse_llm_config(json::parse(air), "air");
  big.name = "glm-4.5", small.name = "glm-4.5-air";
  // Per layer: q (h x 12,288 + bias), k and v (h x 1,024 + bias each), o (12,288 x h), q_norm and k_norm (128
  // each, GLM-4.5 only), 2 norms of h; dense MLP 3 h I; MoE: E experts and one shared of 3 h I_e, router E h + E.
  auto total = [](Count h, Count I, Count Ie, Count E, Count L, Count dense, Count qk, Count active) {
    const Count V = 151552, q = 96 * 128, kv = 8 * 128;
    const Count attn = h * q + q + 2 * (h * kv + kv) + q * h + qk + 2 * h;
    const Count moe = (active + 1) * 3 * h * Ie + E * h + E;
    return 2 * V * h + h + dense * (attn + 3 * h * I) + (L - dense) * (attn + moe);
  };
  EXPECT_EQ(llm_params(big).total, total(5120, 12288, 1536, 160, 92, 3, 256, 160));
  EXPECT_EQ(llm_params(big).total, Count{352797829024});
  EXPECT_EQ(llm_params(big).active_per_token, total(5120, 12288, 1536, 160, 92, 3, 256, 8));
  EXPECT_EQ(llm_params(big).active_per_token, Count{33632266144});  // 32.9B without the input embedding
  EXPECT_EQ(llm_params(small).total, total(4096, 10944, 1408, 128, 46, 1, 0, 128));
  EXPECT_EQ(llm_params(small).total, Count{106852251264});
  EXPECT_EQ(llm_params(small).active_per_token, total(4096, 10944, 1408, 128, 46, 1, 0, 8));
  EXPECT_TRUE(big.router_sigmoid && !big.shared_expert_gate && big.qkv_bias && !big.o_bias && !big.fused_gate_up);
  EXPECT_EQ(big.qk_norm, LlmConfig::QkNorm::PerHead);
  EXPECT_EQ(small.qk_norm, LlmConfig::QkNorm::None);
  EXPECT_EQ(big.rotary_dim(), 64);
  EXPECT_FALSE(big.sparse_layer(2));
  EXPECT_TRUE(big.sparse_layer(3));
  // Glm4MoeConfig's defaults: 8 KV heads, no attention bias, 128 experts of 1408, top 8, 1 shared, 1 dense layer.
  const LlmConfig d = parse_llm_config(json::parse(R"({"model_type":"glm4_moe","vocab_size":64,"hidden_size":32,
      "intermediate_size":48,"num_hidden_layers":2,"num_attention_heads":8})"), "glm4_moe");
  EXPECT_EQ(d.num_kv_heads, 8);
  EXPECT_FALSE(d.qkv_bias);
  EXPECT_EQ(d.num_experts, 128);
  EXPECT_EQ(d.intermediate_size, 1408);
  EXPECT_EQ(d.experts_per_token, 8);
  EXPECT_EQ(d.shared_expert_intermediate_size, 1408);
  EXPECT_EQ(d.first_dense_layers, 1);
  // Small shapes: graph = formula; modules where transformers names them.
  const LlmConfig s = small_config("glm4_moe", 3, R"(,"head_dim":8,"moe_intermediate_size":16,"n_routed_experts":4,
      "num_experts_per_tok":2,"n_shared_experts":2,"use_qk_norm":true,"attention_bias":true)");
  EXPECT_EQ(graph_params(s), llm_params(s).total);
  const Graph g = small_graph(s);
  expect_nodes(g, {"model.layers.0.mlp.gate_proj", "model.layers.1.mlp.gate.add_correction_bias",
                   "model.layers.1.mlp.shared_experts.down_proj", "model.layers.2.mlp.experts.3.up_proj",
                   "model.layers.1.self_attn.q_norm.mul_1", "model.layers.2.post_attention_layernorm.pow"});
  expect_nodes(g, {"model.layers.0.mlp.experts.0.up_proj"}, false);  // first_k_dense_replace 1: layer 0 is dense
  expect_refused("glm4_moe", {R"(,"n_routed_experts":0)", R"(,"n_shared_experts":-1)", R"(,"first_k_dense_replace":-2)",
                              R"(,"num_experts_per_tok":200)", R"(,"use_qk_norm":"yes")"});
}

// MiniMax-M2 (minimax_m2): bias-free attention with RMSNorms over the whole q and k projections, part of each head
// rotated, and a Mixtral-layout MoE in every layer routed by sigmoid scores plus a selection bias; no shared expert.
TEST(LlmConfig, MinimaxM2WholeProjectionNormsAndSigmoidRoutedExperts) {
  // MiniMaxAI/MiniMax-M2's shapes (config.json of the hub): "230B total parameters with 10B active parameters".
  LlmConfig m = parse_llm_config(json::parse(R"({"model_type":"minimax_m2","vocab_size":200064,"hidden_size":3072,
      "intermediate_size":1536,"num_hidden_layers":62,"num_attention_heads":48,"num_key_value_heads":8,"head_dim":128,
      "rotary_dim":64,"num_local_experts":256,"num_experts_per_tok":8,"use_qk_norm":true,"qk_norm_type":"per_layer",
      "scoring_func":"sigmoid","use_routing_bias":true,"shared_intermediate_size":0,"num_mtp_modules":3,
      "max_position_embeddings":196608,"tie_word_embeddings":false})"), "minimax-m2");
  m.name = "minimax-m2";
  // Per layer: q and o (h x 6,144), k and v (h x 1,024), q_norm 6,144 + k_norm 1,024, 2 norms; 256 experts of
  // 3 h I, router 256 h + the 256 selection biases.
  const Count h = 3072, V = 200064, I = 1536, E = 256;
  const Count attn = 2 * h * 6144 + 2 * h * 1024 + 6144 + 1024 + 2 * h;
  EXPECT_EQ(llm_params(m).total, 2 * V * h + h + 62 * (attn + E * 3 * h * I + E * h + E));
  EXPECT_EQ(llm_params(m).total, Count{228689764864});
  EXPECT_EQ(llm_params(m).active_per_token, 2 * V * h + h + 62 * (attn + 8 * 3 * h * I + E * h + E));
  EXPECT_EQ(llm_params(m).active_per_token, Count{11030553088});  // 10.4B without the input embedding
  EXPECT_EQ(m.qk_norm, LlmConfig::QkNorm::Whole);
  EXPECT_EQ(m.rotary_dim(), 64);
  EXPECT_TRUE(m.router_sigmoid && m.shared_expert_intermediate_size == 0 && !m.qkv_bias && !m.o_bias);
  // MiniMaxM2Config's defaults: 8 KV heads, head_dim 128, 256 experts, top 8; every dim rotates without rotary_dim.
  const LlmConfig d = parse_llm_config(json::parse(R"({"model_type":"minimax_m2","vocab_size":64,"hidden_size":32,
      "intermediate_size":16,"num_hidden_layers":2,"num_attention_heads":8})"), "minimax_m2");
  EXPECT_EQ(d.num_kv_heads, 8);
  EXPECT_EQ(d.head_dim, 128);
  EXPECT_EQ(d.num_experts, 256);
  EXPECT_EQ(d.experts_per_token, 8);
  EXPECT_EQ(d.rotary_dim(), 128);
  // Small shapes: graph = formula; the norms cover the whole projections, the MoE keeps Mixtral's names.
  const LlmConfig s = small_config("minimax_m2", 2, R"(,"head_dim":8,"rotary_dim":4,"num_local_experts":4,
      "num_experts_per_tok":2)");
  EXPECT_EQ(graph_params(s), llm_params(s).total);
  const Graph g = small_graph(s);
  expect_nodes(g, {"model.layers.0.block_sparse_moe.gate.add_correction_bias",
                   "model.layers.1.block_sparse_moe.experts.3.w2", "model.layers.0.self_attn.k_norm.mean"});
  const Node& k_mean = g.nodes[static_cast<size_t>(g.find_node("model.layers.0.self_attn.k_norm.mean"))];
  EXPECT_EQ(g.value(k_mean.inputs[0]).shape, (Shape{{2, 8, 16}}));  // 2 KV heads x 8, over the whole projection
  expect_refused("minimax_m2", {R"(,"num_local_experts":0)", R"(,"rotary_dim":3)", R"(,"num_experts_per_tok":300)"});
}

// Llama 4 (llama4_text): NoPE layers that attend to everything (queries scaled by a temperature), chunked rotary
// layers with weightless L2 norms of q and k, MoE layers whose top-k sigmoid scores scale the experts' inputs, a
// shared expert, and (Maverick) dense layers in between.
TEST(LlmConfig, Llama4ChunkedRotaryLayersNopeLayersAndSigmoidScaledExperts) {
  // meta-llama/Llama-4-Scout-17B-16E and Llama-4-Maverick-17B-128E (text_config of the hub's config.json): "17B
  // active, 109B total" and "17B active, 400B total", the vision encoder included in the totals.
  const std::string shapes = R"("model_type":"llama4_text","vocab_size":202048,"hidden_size":5120,
      "intermediate_size":8192,"intermediate_size_mlp":16384,"num_hidden_layers":48,"num_attention_heads":40,
      "num_key_value_heads":8,"head_dim":128,"num_experts_per_tok":1,"no_rope_layers":[],"attention_chunk_size":8192,
      "attn_temperature_tuning":true,"floor_scale":8192,"attn_scale":0.1,"tie_word_embeddings":false)";
  LlmConfig scout = parse_llm_config(json::parse("{" + shapes + R"(,"num_local_experts":16,
      "interleave_moe_layer_step":1,"use_qk_norm":true,"max_position_embeddings":10485760})"), "scout");
  LlmConfig maverick = parse_llm_config(json::parse("{" + shapes + R"(,"num_local_experts":128,
      "interleave_moe_layer_step":2,"use_qk_norm":false,"max_position_embeddings":1048576})"), "maverick");
  scout.name = "llama-4-scout", maverick.name = "llama-4-maverick";
  // Per layer: q and o h x h, k and v h x 1,024, 2 norms; MoE: E + 1 (shared) experts of 3 h I and a router E h;
  // dense (Maverick's even layers): 3 h I_mlp.
  const Count h = 5120, V = 202048, I = 8192, attn = 2 * h * h + 2 * h * 1024 + 2 * h;
  auto moe = [&](Count routed, Count active) { return attn + (active + 1) * 3 * h * I + routed * h; };
  EXPECT_EQ(llm_params(scout).total, 2 * V * h + h + 48 * moe(16, 16));
  EXPECT_EQ(llm_params(scout).total, Count{107769861120});
  EXPECT_EQ(llm_params(scout).active_per_token, 2 * V * h + h + 48 * moe(16, 1));
  EXPECT_EQ(llm_params(scout).active_per_token, Count{17172894720});
  EXPECT_EQ(llm_params(maverick).total, 2 * V * h + h + 24 * moe(128, 128) + 24 * (attn + 3 * h * 16384));
  EXPECT_EQ(llm_params(maverick).total, Count{400711848960});
  EXPECT_EQ(llm_params(maverick).active_per_token, Count{17184691200});
  // Every 4th layer NoPE and global; the others rotary, chunked, L2-normed (Scout).
  EXPECT_EQ(scout.nope_layers.size(), 12u);
  EXPECT_TRUE(scout.chunked_attention && scout.attn_temperature_tuning && scout.router_topk_sigmoid);
  EXPECT_EQ(scout.window_of(0), 8192);
  EXPECT_EQ(scout.window_of(3), 0);
  EXPECT_FALSE(scout.rotary_in(3));
  EXPECT_EQ(scout.qk_norm, LlmConfig::QkNorm::L2PerHead);
  EXPECT_EQ(maverick.qk_norm, LlmConfig::QkNorm::None);
  EXPECT_FALSE(maverick.sparse_layer(0));
  EXPECT_TRUE(maverick.sparse_layer(1));
  // Small shapes: graph = formula; modules where Llama4TextDecoderLayer has them.
  const LlmConfig s = small_config("llama4_text", 4, R"(,"head_dim":8,"intermediate_size_mlp":64,
      "num_local_experts":4,"num_experts_per_tok":2,"interleave_moe_layer_step":2,"attention_chunk_size":4)");
  EXPECT_EQ(graph_params(s), llm_params(s).total);
  const Graph g = small_graph(s);
  expect_nodes(g, {"model.layers.0.feed_forward.down_proj", "model.layers.1.feed_forward.router",
                   "model.layers.1.feed_forward.shared_expert.down_proj",
                   "model.layers.3.feed_forward.experts.3.down_proj", "model.layers.1.self_attn.qk_norm.pow",
                   "model.layers.3.self_attn.mul_attn_scales", "model.layers.1.feed_forward.experts.0.mul_routing"});
  expect_nodes(g, {"model.layers.3.self_attn.qk_norm.pow", "model.layers.3.self_attn.mul_cos",
                   "model.layers.0.feed_forward.router", "model.layers.1.self_attn.mul_attn_scales"}, false);
  // The L2 norms have no weight: the graph's parameters are the formula's (above); their FLOPs are an RMSNorm's less
  // the weight multiply: q (16 rows x 4 heads x 8) and k (16 x 2 x 8) elements in each of 3 rotary layers.
  const LlmConfig no_norm = small_config("llama4_text", 4, R"(,"head_dim":8,"intermediate_size_mlp":64,
      "num_local_experts":4,"num_experts_per_tok":2,"interleave_moe_layer_step":2,"attention_chunk_size":4,
      "use_qk_norm":false)");
  const Count q = 16 * 4 * 8, k = 16 * 2 * 8, rows = 16 * (4 + 2);
  EXPECT_EQ(estimate(g).total.flops - estimate(small_graph(no_norm)).total.flops, 3 * (3 * (q + k) + 3 * rows));
  expect_refused("llama4_text", {R"(,"interleave_moe_layer_step":0)", R"(,"moe_layers":[0,1])",
                                 R"(,"num_local_experts":0)", R"(,"no_rope_layers":[1,0,0,1])",
                                 R"(,"layer_types":["full_attention","x","y","z"])"});
}

// EXAONE 4.0 (exaone4): OLMo 2's output norms, per-head q/k norms, and every 4th layer global without a rotary
// embedding (the others slide a window and rotate).
TEST(LlmConfig, Exaone4OutputNormsAndGlobalNopeLayers) {
  // LGAI-EXAONE/EXAONE-4.0-32B's shapes (config.json of the hub; "32B"): untied embeddings + 64 x (q, o h x h; k, v
  // h x 1,024; q_norm, k_norm 128 each; 2 norms; MLP 3 h I) + the final norm.
  LlmConfig e = parse_llm_config(json::parse(R"({"model_type":"exaone4","vocab_size":102400,"hidden_size":5120,
      "intermediate_size":27392,"num_hidden_layers":64,"num_attention_heads":40,"num_key_value_heads":8,
      "head_dim":128,"sliding_window":4096,"sliding_window_pattern":"LLLG","max_position_embeddings":131072,
      "tie_word_embeddings":false})"), "exaone-4.0-32b");
  e.name = "exaone-4.0-32b";
  const Count h = 5120, V = 102400, I = 27392;
  EXPECT_EQ(llm_params(e).total, 2 * V * h + h + 64 * (2 * h * h + 2 * h * 1024 + 256 + 2 * h + 3 * h * I));
  EXPECT_EQ(llm_params(e).total, Count{32003216384});
  EXPECT_TRUE(e.output_norms);
  EXPECT_EQ(e.qk_norm, LlmConfig::QkNorm::PerHead);
  EXPECT_EQ(e.window_of(0), 4096);
  EXPECT_EQ(e.window_of(3), 0);
  EXPECT_EQ(e.nope_layers.size(), 16u);
  EXPECT_TRUE(e.rotary_in(2) && !e.rotary_in(3) && !e.rotary_in(63));
  // The integer pattern reads the same; without a window every layer is global and rotates.
  const LlmConfig as_int = small_config("exaone4", 4, R"(,"head_dim":8,"sliding_window":4,"sliding_window_pattern":2)");
  EXPECT_EQ(as_int.nope_layers, (std::vector<int64_t>{1, 3}));
  const LlmConfig none = small_config("exaone4", 4, R"(,"head_dim":8,"sliding_window":null)");
  EXPECT_TRUE(none.nope_layers.empty() && none.window_of(1) == 0);
  // Small shapes: graph = formula; OLMo 2's norm names, per-head q/k norms, no rotation in the global layer.
  const LlmConfig s = small_config("exaone4", 4, R"(,"head_dim":8,"sliding_window":4,"sliding_window_pattern":"LLLG")");
  EXPECT_EQ(graph_params(s), llm_params(s).total);
  const Graph g = small_graph(s);
  expect_nodes(g, {"model.layers.0.post_attention_layernorm.pow", "model.layers.0.post_feedforward_layernorm.pow",
                   "model.layers.0.self_attn.q_norm.pow", "model.layers.2.self_attn.mul_cos"});
  expect_nodes(g, {"model.layers.3.self_attn.mul_cos", "model.layers.0.input_layernorm.pow"}, false);
  expect_refused("exaone4", {R"(,"sliding_window_pattern":"LGLG")", R"(,"sliding_window_pattern":0)",
                             R"(,"sliding_window_pattern":"")", R"(,"sliding_window_pattern":[1])"});
}

// ERNIE 4.5 (ernie4_5_moe): llama's layers with MoE layers from moe_layer_start_index to moe_layer_end_index, the
// top-k of the softmax scores chosen with a selection bias (moe_statics), and shared experts; use_bias everywhere.
TEST(LlmConfig, Ernie45MoeLayerRangeSelectionBiasAndSharedExperts) {
  // baidu/ERNIE-4.5-21B-A3B-PT (config.json of the hub): "21B total parameters, 3B activated".
  LlmConfig e = parse_llm_config(json::parse(R"({"model_type":"ernie4_5_moe","vocab_size":103424,"hidden_size":2560,
      "intermediate_size":12288,"num_hidden_layers":28,"num_attention_heads":20,"num_key_value_heads":4,"head_dim":128,
      "moe_intermediate_size":1536,"moe_k":6,"moe_num_experts":64,"moe_num_shared_experts":2,
      "moe_layer_start_index":1,"moe_layer_end_index":27,"moe_layer_interval":1,"use_bias":false,
      "max_position_embeddings":131072,"tie_word_embeddings":true})"), "ernie-4.5-21b-a3b");
  e.name = "ernie-4.5-21b-a3b";
  // Tied embeddings; per layer q, o h x h, k, v h x 512, 2 norms; layer 0 dense (3 h I), the others 64 + 2 shared
  // experts of 3 h 1,536, the router 64 h and the 64 selection biases.
  const Count h = 2560, V = 103424, Ie = 3 * h * 1536, attn = 2 * h * h + 2 * h * 512 + 2 * h;
  EXPECT_EQ(llm_params(e).total, V * h + h + (attn + 3 * h * 12288) + 27 * (attn + 66 * Ie + 64 * h + 64));
  EXPECT_EQ(llm_params(e).total, Count{21825437888});
  EXPECT_EQ(llm_params(e).active_per_token, Count{21825437888} - 27 * 58 * Ie);
  EXPECT_EQ(llm_params(e).active_per_token, Count{3352150208});
  EXPECT_TRUE(e.softmax_selection_bias && !e.router_sigmoid && e.tied_embeddings);
  EXPECT_FALSE(e.sparse_layer(0));
  EXPECT_TRUE(e.sparse_layer(1) && e.sparse_layer(27));
  // An end index before the last layer leaves the layers after it dense; use_bias puts biases on every projection.
  const LlmConfig s = small_config("ernie4_5_moe", 4, R"(,"head_dim":8,"moe_intermediate_size":8,"moe_num_experts":4,
      "moe_k":2,"moe_num_shared_experts":1,"moe_layer_end_index":2,"use_bias":true,"tie_word_embeddings":false)");
  EXPECT_FALSE(s.sparse_layer(3));
  EXPECT_TRUE(s.qkv_bias && s.o_bias && s.mlp_bias && s.lm_head_bias);
  EXPECT_EQ(graph_params(s), llm_params(s).total);
  const Graph g = small_graph(s);
  expect_nodes(g, {"model.layers.0.mlp.down_proj", "model.layers.1.mlp.moe_statics.add_correction_bias",
                   "model.layers.2.mlp.shared_experts.down_proj", "model.layers.2.mlp.experts.3.up_proj",
                   "model.layers.3.mlp.down_proj"});
  expect_nodes(g, {"model.layers.3.mlp.experts.0.up_proj", "model.layers.0.mlp.gate"}, false);
  // The dense model: the same layers without experts.
  const LlmConfig dense = small_config("ernie4_5", 2, R"(,"head_dim":8)");
  EXPECT_FALSE(dense.moe());
  EXPECT_EQ(graph_params(dense), llm_params(dense).total);
  expect_refused("ernie4_5_moe", {R"(,"moe_num_experts":0)", R"(,"moe_k":9,"moe_num_experts":8)",
                                  R"(,"moe_layer_interval":0)", R"(,"moe_layer_start_index":-1)",
                                  R"(,"moe_num_shared_experts":-2)", R"(,"moe_layer_end_index":-3)"});
}

// Seed-OSS (seed_oss): llama's layers with q/k/v biases, an o_proj bias only with attention_out_bias, and
// SeedOssConfig's defaults (8 KV heads, head_dim 128).
TEST(LlmConfig, SeedOssBiasedQkvAndItsDefaults) {
  // ByteDance-Seed/Seed-OSS-36B-Instruct (config.json of the hub; "36B"): untied embeddings + 64 x (q h x 10,240 and
  // o 10,240 x h, k and v h x 1,024, q/k/v biases, 2 norms, MLP 3 h I) + the final norm.
  LlmConfig o = parse_llm_config(json::parse(R"({"model_type":"seed_oss","vocab_size":155136,"hidden_size":5120,
      "intermediate_size":27648,"num_hidden_layers":64,"num_attention_heads":80,"num_key_value_heads":8,"head_dim":128,
      "attention_bias":true,"attention_out_bias":false,"mlp_bias":false,"max_position_embeddings":524288,
      "tie_word_embeddings":false})"), "seed-oss-36b");
  o.name = "seed-oss-36b";
  const Count h = 5120, V = 155136, I = 27648;
  const Count layer = 2 * h * 10240 + 10240 + 2 * (h * 1024 + 1024) + 2 * h + 3 * h * I;
  EXPECT_EQ(llm_params(o).total, 2 * V * h + h + 64 * layer);
  EXPECT_EQ(llm_params(o).total, Count{36151104512});
  EXPECT_TRUE(o.qkv_bias && !o.o_bias);
  const LlmConfig d = parse_llm_config(json::parse(R"({"model_type":"seed_oss","vocab_size":64,"hidden_size":32,
      "intermediate_size":48,"num_hidden_layers":2,"num_attention_heads":8})"), "seed_oss");
  EXPECT_EQ(d.num_kv_heads, 8);
  EXPECT_EQ(d.head_dim, 128);
  EXPECT_TRUE(d.qkv_bias && !d.o_bias);
  const LlmConfig s = small_config("seed_oss", 2, R"(,"head_dim":8,"attention_out_bias":true)");
  EXPECT_TRUE(s.o_bias);
  EXPECT_EQ(graph_params(s), llm_params(s).total);
  expect_refused("seed_oss", {R"(,"head_dim":0)", R"(,"attention_out_bias":1)", R"(,"num_key_value_heads":3)"});
}

// SmolLM3: llama's layers with NoPE layers (no rotary embedding) listed by no_rope_layers or every
// no_rope_layer_interval-th layer; SmolLM3Config's defaults (4 KV heads, tied head).
TEST(LlmConfig, Smollm3NopeLayersSkipTheRotaryEmbedding) {
  // HuggingFaceTB/SmolLM3-3B's shapes: tied embeddings + 36 x (q, o h x h; k, v h x 512; MLP 3 h I; 2 norms) + norm
  // ("3.08B" on the hub).
  LlmConfig o = parse_llm_config(json::parse(R"({"model_type":"smollm3","vocab_size":128256,"hidden_size":2048,
      "intermediate_size":11008,"num_hidden_layers":36,"num_attention_heads":16,"num_key_value_heads":4,
      "max_position_embeddings":65536,"tie_word_embeddings":true,"use_sliding_window":false,"sliding_window":null})"),
      "smollm3");
  o.name = "smollm3";
  const Count h = 2048, I = 11008, V = 128256;
  EXPECT_EQ(llm_params(o).total, V * h + 36 * (2 * h * h + 2 * h * 512 + 3 * h * I + 2 * h) + h);
  EXPECT_EQ(llm_params(o).total, Count{3075098624});
  EXPECT_EQ(o.nope_layers, (std::vector<int64_t>{3, 7, 11, 15, 19, 23, 27, 31, 35}));  // every 4th layer
  EXPECT_TRUE(o.rotary_in(0) && !o.rotary_in(3) && !o.rotary_in(35));
  const LlmConfig listed = small_config("smollm3", 4, R"(,"no_rope_layers":[0,1,1,0])");
  EXPECT_EQ(listed.nope_layers, (std::vector<int64_t>{0, 3}));
  const LlmConfig s3 = small_config("smollm3", 4), sl = small_config("llama", 4, R"(,"tie_word_embeddings":true)");
  EXPECT_EQ(graph_params(s3), llm_params(s3).total);
  EXPECT_EQ(llm_params(s3).total, llm_params(sl).total);
  LlmShape shape;
  shape.batch = 2, shape.tokens = 8;
  const Graph g = build_llm(s3, shape);
  EXPECT_GE(g.find_node("model.layers.2.self_attn.mul_cos"), 0);
  EXPECT_LT(g.find_node("model.layers.3.self_attn.mul_cos"), 0);
  // One layer without rotary: llama's FLOPs less one layer's rotation of q (16 rows x 32) and k (16 x 16), 3.5
  // FLOPs per element (x cos, rotate_half's negation of half, x sin, add).
  const Count q = 16 * 32, k = 16 * 16;
  EXPECT_EQ(estimate(g).total.flops, estimate(build_llm(sl, shape)).total.flops - (7 * q / 2 + 7 * k / 2));
  expect_refused("smollm3", {R"(,"no_rope_layers":[1,1,0])", R"(,"no_rope_layers":[1,2,1,1])",
                             R"(,"no_rope_layer_interval":0)", R"(,"use_sliding_window":true,"sliding_window":8)"});
}

// Arcee (AFM): llama's attention with a plain MLP, up_proj -> relu(x)^2 -> down_proj.
TEST(LlmConfig, ArceePlainMlpWithSquaredRelu) {
  const LlmConfig a = small_config("arcee", 2), l = small_config("llama", 2);
  EXPECT_FALSE(a.gated_mlp);
  EXPECT_EQ(a.activation, "relu2");
  EXPECT_EQ(a.max_positions, 64);
  EXPECT_EQ(graph_params(a), llm_params(a).total);
  EXPECT_EQ(llm_params(a).total, llm_params(l).total - 2 * 32 * 48);  // no gate_proj in either layer
  LlmShape shape;
  shape.batch = 2, shape.tokens = 8;
  const Graph g = build_llm(a, shape);
  for (const char* node : {"model.layers.0.mlp.up_proj", "model.layers.0.mlp.act.relu", "model.layers.0.mlp.act.square",
                           "model.layers.1.mlp.down_proj"})
    EXPECT_GE(g.find_node(node), 0) << node;
  EXPECT_LT(g.find_node("model.layers.0.mlp.gate_proj"), 0);
  // llama's FLOPs less, per layer, the gate projection (2 x 16 x 32 x 48) and SiLU x up (sigmoid 3, mul, mul: 5 per
  // element of 16 x 48, docs/counting.md), plus relu and square (2 per element).
  const Count E = 16 * 48, gate = 2 * 16 * 32 * 48;
  EXPECT_EQ(estimate(g).total.flops, estimate(build_llm(l, shape)).total.flops - 2 * (gate + 5 * E) + 2 * 2 * E);
  EXPECT_NE(error_of(json::parse(R"({"model_type":"arcee","vocab_size":64,"hidden_size":32,"intermediate_size":48,
      "num_hidden_layers":2,"num_attention_heads":4,"hidden_act":"relu3"})")).find("relu2"), std::string::npos);
}

// Mangled config.json files (a deterministic complement to libFuzzer): parse_llm_config answers with a value or a
// one-line ridge::Error, never another exception; what it accepts builds a graph whose parameter count equals the
// formula's (small shapes only, so the test stays fast).
TEST(LlmConfig, MangledConfigsAreOneLineErrorsOrConsistentGraphs) {
  const char* seeds[] = {
      R"({"model_type":"llama","vocab_size":64,"hidden_size":32,"num_hidden_layers":2,"num_attention_heads":4,
          "num_key_value_heads":2,"intermediate_size":48,"max_position_embeddings":64})",
      R"({"model_type":"bloom","vocab_size":64,"n_embed":32,"n_layer":2,"num_attention_heads":4})",
      R"({"model_type":"mixtral","vocab_size":64,"hidden_size":32,"num_hidden_layers":2,"num_attention_heads":4,
          "num_key_value_heads":1,"intermediate_size":16,"num_local_experts":4,"num_experts_per_tok":2,
          "sliding_window":8,"max_position_embeddings":64})",
      R"({"model_type":"falcon","vocab_size":64,"hidden_size":32,"num_hidden_layers":2,"num_attention_heads":4,
          "new_decoder_architecture":true,"num_kv_heads":2,"alibi":true,"bias":true})",
      R"({"model_type":"gpt2","vocab_size":64,"n_embd":32,"n_layer":2,"n_head":4,"n_positions":64})",
      R"({"model_type":"qwen3_moe","vocab_size":64,"hidden_size":32,"num_hidden_layers":2,"num_attention_heads":4,
          "num_key_value_heads":2,"head_dim":16,"moe_intermediate_size":16,"num_experts":4,"num_experts_per_tok":2,
          "max_position_embeddings":64})",
      R"({"model_type":"gemma2","vocab_size":64,"hidden_size":32,"num_hidden_layers":3,"num_attention_heads":4,
          "num_key_value_heads":2,"head_dim":8,"intermediate_size":48,"sliding_window":8,
          "max_position_embeddings":64})",
      R"({"model_type":"deepseek_v3","vocab_size":64,"hidden_size":32,"intermediate_size":48,
          "moe_intermediate_size":8,"num_hidden_layers":3,"num_attention_heads":4,"n_shared_experts":1,
          "n_routed_experts":4,"kv_lora_rank":16,"q_lora_rank":24,"qk_rope_head_dim":4,"v_head_dim":8,
          "qk_nope_head_dim":8,"num_experts_per_tok":2,"first_k_dense_replace":1,"max_position_embeddings":64})",
      R"({"model_type":"gpt_oss","vocab_size":64,"hidden_size":32,"intermediate_size":16,"num_hidden_layers":2,
          "num_attention_heads":4,"num_key_value_heads":2,"head_dim":8,"num_local_experts":4,"num_experts_per_tok":2,
          "sliding_window":8,"max_position_embeddings":64})",
      R"({"model_type":"phi3","vocab_size":64,"hidden_size":32,"num_hidden_layers":2,"num_attention_heads":4,
          "num_key_value_heads":2,"intermediate_size":48,"partial_rotary_factor":0.5,"sliding_window":8,
          "max_position_embeddings":64})",
      R"({"model_type":"gptj","vocab_size":64,"n_embd":32,"n_layer":2,"n_head":4,"n_positions":64,"rotary_dim":4})",
      R"({"model_type":"gpt_bigcode","vocab_size":64,"n_embd":32,"n_layer":2,"n_head":4,"n_positions":64,
          "multi_query":true})",
      R"({"model_type":"starcoder2","vocab_size":64,"hidden_size":32,"num_hidden_layers":2,"num_attention_heads":4,
          "num_key_value_heads":2,"intermediate_size":48,"sliding_window":8,"max_position_embeddings":64})",
      R"({"model_type":"stablelm","vocab_size":64,"hidden_size":32,"num_hidden_layers":2,"num_attention_heads":4,
          "num_key_value_heads":2,"intermediate_size":48,"use_qkv_bias":true,"use_parallel_residual":true,
          "max_position_embeddings":64})",
      R"({"model_type":"cohere","vocab_size":64,"hidden_size":32,"num_hidden_layers":2,"num_attention_heads":4,
          "num_key_value_heads":2,"intermediate_size":48,"logit_scale":0.0625,"max_position_embeddings":64})",
      R"({"model_type":"olmo","vocab_size":64,"hidden_size":32,"num_hidden_layers":2,"num_attention_heads":4,
          "num_key_value_heads":2,"intermediate_size":48,"clip_qkv":8.0,"max_position_embeddings":64})",
      R"({"model_type":"olmo3","vocab_size":64,"hidden_size":32,"num_hidden_layers":4,"num_attention_heads":4,
          "num_key_value_heads":2,"intermediate_size":48,"sliding_window":8,"max_position_embeddings":64})",
      R"({"model_type":"olmoe","vocab_size":64,"hidden_size":32,"num_hidden_layers":2,"num_attention_heads":4,
          "num_key_value_heads":2,"intermediate_size":16,"num_experts":4,"num_experts_per_tok":2,"clip_qkv":8.0,
          "max_position_embeddings":64})",
      R"({"model_type":"glm4","vocab_size":64,"hidden_size":32,"num_hidden_layers":2,"num_attention_heads":4,
          "num_key_value_heads":2,"head_dim":8,"intermediate_size":48,"max_position_embeddings":64})",
      R"({"model_type":"smollm3","vocab_size":64,"hidden_size":32,"num_hidden_layers":4,"num_attention_heads":4,
          "num_key_value_heads":2,"intermediate_size":48,"no_rope_layers":[1,1,1,0],"max_position_embeddings":64})",
      R"({"model_type":"arcee","vocab_size":64,"hidden_size":32,"num_hidden_layers":2,"num_attention_heads":4,
          "num_key_value_heads":2,"intermediate_size":48,"max_position_embeddings":64})",
      R"({"model_type":"nemotron_h","vocab_size":64,"hidden_size":32,"hybrid_override_pattern":"M*-E",
          "num_attention_heads":4,"num_key_value_heads":2,"head_dim":8,"intermediate_size":48,"mamba_num_heads":4,
          "mamba_head_dim":8,"n_groups":2,"ssm_state_size":8,"conv_kernel":4,"chunk_size":4,"n_routed_experts":4,
          "num_experts_per_tok":2,"moe_intermediate_size":8,"moe_shared_expert_intermediate_size":16,
          "max_position_embeddings":64})",
      R"({"model_type":"mamba2","vocab_size":64,"hidden_size":16,"num_hidden_layers":2,"num_heads":4,"head_dim":8,
          "expand":2,"state_size":8,"n_groups":2,"conv_kernel":4,"chunk_size":4})",
      R"({"model_type":"granitemoehybrid","vocab_size":64,"hidden_size":16,"num_hidden_layers":2,
          "num_attention_heads":4,"num_key_value_heads":2,"num_local_experts":4,"num_experts_per_tok":2,
          "intermediate_size":8,"shared_intermediate_size":12,"mamba_n_heads":4,"mamba_n_groups":2,"mamba_d_state":8,
          "mamba_expand":2,"layer_types":["mamba","attention"],"position_embedding_type":"rope"})",
      R"({"model_type":"qwen3_next","vocab_size":64,"hidden_size":16,"num_hidden_layers":2,"num_attention_heads":4,
          "num_key_value_heads":2,"head_dim":8,"full_attention_interval":2,"linear_num_key_heads":2,
          "linear_num_value_heads":4,"linear_key_head_dim":4,"linear_value_head_dim":4,"linear_conv_kernel_dim":4,
          "num_experts":4,"num_experts_per_tok":2,"moe_intermediate_size":8,"shared_expert_intermediate_size":12,
          "intermediate_size":24,"max_position_embeddings":64})",
      R"({"model_type":"qwen3_5_moe_text","vocab_size":64,"hidden_size":16,"num_hidden_layers":2,
          "num_attention_heads":4,"num_key_value_heads":2,"head_dim":8,"layer_types":["linear_attention",
          "full_attention"],"linear_num_key_heads":2,"linear_num_value_heads":2,"linear_key_head_dim":4,
          "linear_value_head_dim":4,"num_experts":4,"num_experts_per_tok":2,"moe_intermediate_size":8,
          "shared_expert_intermediate_size":12,"max_position_embeddings":64})",
      R"({"model_type":"falcon_mamba","vocab_size":64,"hidden_size":16,"num_hidden_layers":2,"state_size":4,
          "expand":2,"conv_kernel":4,"time_step_rank":"auto","use_bias":true})",
      R"({"model_type":"jamba","vocab_size":64,"hidden_size":16,"num_hidden_layers":2,"num_attention_heads":4,
          "num_key_value_heads":2,"intermediate_size":24,"attn_layer_period":2,"attn_layer_offset":1,"num_experts":4,
          "num_experts_per_tok":2,"mamba_d_state":4,"max_position_embeddings":64})",
  };
  int accepted = 0, built = 0;
  for (const char* seed : seeds)
    test::survive_mutations(seed, [&](const std::string& text) {
      const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
      if (j.is_discarded()) throw Error("not JSON");
      LlmConfig c = parse_llm_config(j, "cfg.json");
      ++accepted;
      c.name = "mangled";
      if (c.num_layers > 4 || c.hidden_size > 256 || c.vocab_size > 4096 || c.num_experts > 8 ||
          c.intermediate_size > 1024 || c.num_heads > 64 || c.dense_width() > 1024 || c.ssm_inner() > 1024 ||
          c.ssm_state > 256 || c.conv_kernel > 64 || c.gdn_conv_dim() + c.gdn_value_width() > 1024 ||
          c.mamba1_inner > 1024 || c.dt_rank > 1024)
        return;
      EXPECT_EQ(graph_params(c, 2), llm_params(c).total) << text;
      ++built;
    }, 1000);
  EXPECT_GT(accepted, 100) << built;
  EXPECT_GT(built, 50) << accepted;
}

TEST(LlmConfig, AMixtureOfExpertsTypeWithNoExpertsIsRefusedNotMadeDense) {
  // These parsed as dense models (Llama-2-7B's parameter count for a Mixtral with -8 experts).
  const std::pair<const char*, const char*> cases[] = {
      {R"({"model_type":"mixtral","vocab_size":64,"hidden_size":32,"num_hidden_layers":2,"num_attention_heads":4,
          "num_key_value_heads":1,"intermediate_size":16,"num_local_experts":-8,"num_experts_per_tok":2})",
       "num_local_experts -8: a mixtral model needs at least one expert"},
      {R"({"model_type":"qwen2_moe","vocab_size":64,"hidden_size":32,"num_hidden_layers":2,"num_attention_heads":4,
          "num_key_value_heads":2,"moe_intermediate_size":16,"num_experts":0,"num_experts_per_tok":2})",
       "num_experts 0: a qwen2_moe model needs at least one expert"},
      {R"({"model_type":"deepseek_v3","vocab_size":64,"hidden_size":32,"intermediate_size":48,
          "moe_intermediate_size":8,"num_hidden_layers":3,"num_attention_heads":4,"n_routed_experts":-64,
          "kv_lora_rank":16,"q_lora_rank":24,"qk_rope_head_dim":4,"v_head_dim":8,"qk_nope_head_dim":8,
          "num_experts_per_tok":2})",
       "n_routed_experts -64: a deepseek_v3 model needs at least one expert"},
      // Too many experts: the error names the key the file used (it said 'num_experts' for Mixtral's
      // num_local_experts).
      {R"({"model_type":"mixtral","vocab_size":32000,"hidden_size":4096,"intermediate_size":11008,
          "num_hidden_layers":2,"num_attention_heads":32,"num_local_experts":100000,"num_experts_per_tok":2})",
       "cfg.json: num_local_experts 100000 is beyond what ridge builds (at most 4096)"},
      {R"({"model_type":"qwen2_moe","vocab_size":64,"hidden_size":32,"num_hidden_layers":2,"num_attention_heads":4,
          "num_key_value_heads":2,"moe_intermediate_size":16,"num_experts":5000,"num_experts_per_tok":2})",
       "cfg.json: num_experts 5000 is beyond what ridge builds (at most 4096)"},
      {R"({"model_type":"deepseek_v3","vocab_size":64,"hidden_size":32,"intermediate_size":48,
          "moe_intermediate_size":8,"num_hidden_layers":3,"num_attention_heads":4,"n_routed_experts":5000,
          "kv_lora_rank":16,"q_lora_rank":24,"qk_rope_head_dim":4,"v_head_dim":8,"qk_nope_head_dim":8,
          "num_experts_per_tok":2})",
       "cfg.json: n_routed_experts 5000 is beyond what ridge builds (at most 4096)"},
  };
  for (const auto& [text, message] : cases) {
    try {
      parse_llm_config(json::parse(text), "cfg.json");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
}

// Inputs the config.json fuzzer (scripts/fuzz-llm-config.sh) found crashing, and its seeds: each parses or fails
// with a one-line ridge::Error, and a small accepted one builds.
TEST(LlmConfig, FuzzerSeedsAndRegressionsParseOrFailCleanly) {
  namespace fs = std::filesystem;
  int replayed = 0;
  for (const char* folder : {"tests/load/llm_config_seeds", "tests/load/llm_config_regressions"}) {
    const fs::path dir = fs::path(RIDGE_SOURCE_DIR) / folder;
    if (!fs::exists(dir)) continue;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (!entry.is_regular_file() || entry.path().extension() == ".py" || entry.path().extension() == ".md") continue;
      const std::string text = test::slurp(entry.path().string());
      const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
      if (j.is_discarded()) continue;
      try {
        LlmConfig c = parse_llm_config(j, entry.path().filename().string());
        c.name = "replayed";
        if (c.num_layers <= 4 && c.hidden_size <= 256 && c.num_experts <= 8) {
          EXPECT_EQ(graph_params(c, 2), llm_params(c).total) << entry.path();
        }
      } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << entry.path();
      }
      ++replayed;
    }
  }
  EXPECT_GE(replayed, 12);  // the seeds, one per family
}

// Qwen/Qwen1.5-MoE-A2.7B: 60 experts (top 4) of width 1408 plus a shared expert of 5632 with its sigmoid gate;
// "14.3B" total and "A2.7B" active as its name says.
TEST(LlmConfig, Qwen2MoeSharedExpertsAndActiveParameters) {
  LlmConfig c = parse_llm_config(json::parse(R"({"model_type":"qwen2_moe","vocab_size":151936,"hidden_size":2048,
      "intermediate_size":5632,"moe_intermediate_size":1408,"shared_expert_intermediate_size":5632,
      "num_hidden_layers":24,"num_attention_heads":16,"num_key_value_heads":16,"num_experts":60,
      "num_experts_per_tok":4,"max_position_embeddings":8192,"tie_word_embeddings":false})"), "qwen-moe");
  c.name = "qwen-moe";
  const LlmParams p = llm_params(c);
  EXPECT_EQ(p.total, Count{14315784192});
  EXPECT_EQ(graph_params(c), p.total);
  EXPECT_EQ(p.active_per_token, p.total - Count{24} * 56 * 3 * 2048 * 1408);
  EXPECT_NEAR(to_double(p.active_per_token) / 1e9, 2.7, 0.05);
}

TEST(LlmConfig, ConfigFileAndDirectoryLoadThroughLoadModel) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(test::temp_dir()) / "Llama-2-7b-hf";
  fs::create_directories(dir);
  std::ofstream(dir / "config.json") << llama_json().dump();
  LoadOptions o;
  o.seq_len = 16;
  for (const std::string& m : {(dir / "config.json").string(), dir.string()}) {
    Graph g = load_model(m, o);
    EXPECT_EQ(g.name, "Llama-2-7b-hf");
    EXPECT_EQ(estimate(g).total.params, Count{6738415616});
    EXPECT_GE(g.find_node("model.layers.31.mlp.down_proj"), 0);
    EXPECT_GE(g.find_node("model.layers.0.input_layernorm.rsqrt"), 0);
    // A config is a model file but not an ONNX file: nothing reads weights or constants from it.
    EXPECT_TRUE(is_model_file(m));
    EXPECT_FALSE(is_onnx_file(m));
  }
  EXPECT_TRUE(is_onnx_file("models/resnet50.onnx"));
  EXPECT_FALSE(is_onnx_file("resnet50"));
  std::ofstream(dir / "bad.json") << "{";
  EXPECT_THROW(load_model((dir / "bad.json").string(), o), Error);
  EXPECT_THROW(load_model((dir / "missing.json").string(), o), Error);
}

TEST(LlmConfig, MoeExpertFlopsEqualTopKExperts) {
  const LlmConfig& c = *find_llm_config("mixtral-8x7b");
  LlmShape s;
  s.tokens = 5;  // 10 assignments over 8 experts: 2 experts get 2 tokens, 6 get 1
  Graph g = build_llm(c, s);
  ModelCost mc = estimate(g);
  Count expert_macs = 0;
  for (const auto& nc : mc.nodes)
    if (g.nodes[nc.node].name.find(".experts.") != std::string::npos && g.nodes[nc.node].op == OpKind::Gemm)
      expert_macs += nc.cost.macs;
  EXPECT_EQ(expert_macs, Count{32} * 5 * 2 * 3 * 4096 * 14336);
}

TEST(LlmConfig, ServingGraphAttendsTheCacheCappedByTheWindow) {
  const LlmConfig& c = *find_llm_config("mistral-7b");
  LlmShape s;
  s.tokens = 1;
  s.past = 9000;
  s.serving = true;
  Graph g = build_llm(c, s);
  // 1 logits output + key and value per layer; the cache holds min(9001, 4096) positions.
  EXPECT_EQ(g.outputs.size(), 1u + 2 * 32);
  for (const Value& v : g.values)
    if (v.name == "past_key_values.0.key") {
      EXPECT_EQ(to_string(v.shape), "1x8x4096x128");
    }
}

// Several new tokens attend to the union of their windows: min(past + T, W + T - 1) positions.
TEST(LlmConfig, SlidingWindowPrefillAttendsTheUnionOfWindows) {
  const LlmConfig& c = *find_llm_config("mistral-7b");
  auto cache_shape = [&](int64_t tokens, int64_t past) {
    Graph g = build_llm(c, LlmShape{1, tokens, past, DType::F16, true});
    for (const Value& v : g.values)
      if (v.name == "past_key_values.0.key") return to_string(v.shape);
    return std::string();
  };
  EXPECT_EQ(cache_shape(5000, 0), "1x8x5000x128");
  EXPECT_EQ(cache_shape(100, 9000), "1x8x4195x128");
}

TEST(LlmConfig, ZooSequenceLengthIsBoundedByTheContext) {
  LoadOptions o;
  o.seq_len = 4097;
  EXPECT_THROW(load_model("llama-2-7b", o), Error);
  o.seq_len = 4096;
  EXPECT_EQ(estimate(load_model("llama-2-7b", o)).total.params, Count{6738415616});
}

}  // namespace
}  // namespace ridge
