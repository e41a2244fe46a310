// Serving analysis: exact KV cache and weight bytes, affine decode sums, tensor parallelism, errors.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>

#include "ridge/error.hpp"
#include "model/llm_attention.hpp"
#include "ridge/llm_analysis.hpp"
#include "llm_test_support.hpp"

namespace ridge {
namespace {

using llm_test::opts;
using llm_test::test_gpu;

// FLOPs of `steps` one-token decode steps after `prompt` tokens, from one serving graph per step (views, layout
// moves and sources do not run): what analyze_serving's affine sum must equal. Generating G tokens takes G - 1
// steps: the prefill's last position yields the first.
Count explicit_decode_flops(const LlmConfig& c, int64_t batch, int64_t prompt, int64_t steps, bool latent = false) {
  Count flops = 0;
  for (int64_t t = 0; t < steps; ++t) {
    LlmShape s{batch, 1, prompt + t, DType::F16, true};
    s.latent_kv = latent;
    const Graph g = build_llm(c, s);
    for (const auto& nc : estimate(g).nodes) {
      const OpFamily f = op_family(g.nodes[nc.node].op);
      if (f != OpFamily::View && f != OpFamily::Move && f != OpFamily::Dropout && f != OpFamily::Source)
        flops += nc.cost.flops;
    }
  }
  return flops;
}

// analyze_serving counts the weights on its decode graph (one token per sequence): every expert's weights are in a
// graph whatever the routing, so they must equal those of a graph where every expert gets tokens.
TEST(LlmServe, WeightsDoNotDependOnTheTokens) {
  auto params = [](const LlmConfig& c, int64_t tokens) {
    std::vector<std::pair<std::string, std::string>> p;
    const Graph g = build_llm(c, LlmShape{1, tokens, 0, DType::F16, true});
    for (const Value& v : g.values)
      if (v.kind == ValueKind::Param) p.emplace_back(v.name, to_string(v.shape));
    return p;
  };
  int checked = 0;
  for (const LlmConfig& c : llm_zoo_configs()) {
    if (c.num_experts == 0 || c.num_experts > 128) continue;  // the 256- and 512-expert graphs take seconds each
    const auto one = params(c, 1), every = params(c, c.num_experts);
    EXPECT_EQ(one, every) << c.name;
    EXPECT_GT(one.size(), size_t(0)) << c.name;
    ++checked;
  }
  EXPECT_GE(checked, 5);  // mixtral, deepseek-v2-lite, gpt-oss, qwen3-30b-a3b, nemotron-3-nano, ...
}

TEST(LlmServe, KvCacheBytesForMhaGqaWindowAndMoe) {
  const NumberFormat fp16 = *parse_number_format("fp16"), fp8 = *parse_number_format("fp8");
  // Llama-2-7B (MHA): 2 x 32 layers x 32 heads x 128 x 2 bytes = 512 KiB per token.
  EXPECT_EQ(kv_cache_bytes(*find_llm_config("llama-2-7b"), 1, 4096, fp16), Count{524288} * 4096);
  // Llama-3-8B (GQA 8 KV heads): 128 KiB per token; fp8 halves it.
  EXPECT_EQ(kv_cache_bytes(*find_llm_config("llama-3-8b"), 2, 1000, fp16), Count{131072} * 2000);
  EXPECT_EQ(kv_cache_bytes(*find_llm_config("llama-3-8b"), 2, 1000, fp8), Count{65536} * 2000);
  // Mistral-7B: the 4096-token window caps the cache.
  EXPECT_EQ(kv_cache_bytes(*find_llm_config("mistral-7b"), 1, 32000, fp16), Count{131072} * 4096);
  // Mixtral: experts do not change the cache (attention is dense): same as Mistral without a window.
  EXPECT_EQ(kv_cache_bytes(*find_llm_config("mixtral-8x7b"), 1, 32000, fp16), Count{131072} * 32000);
  // Gemma-2-2B at 6,100 tokens: 13 local layers keep their 4,096-token window, 13 global ones everything; 4 KV heads
  // of 256: 4 KiB per layer and token.
  EXPECT_EQ(kv_cache_bytes(*find_llm_config("gemma-2-2b"), 1, 6100, fp16), Count{4096} * (13 * 4096 + 13 * 6100));
  // DeepSeek-V2-Lite (MLA) as HF caches it: 16 heads x (192-wide keys + 128-wide values) x 27 layers; the latent
  // (512 + 64 per layer) is what vLLM would hold.
  const LlmConfig& lite = *find_llm_config("deepseek-v2-lite");
  EXPECT_EQ(kv_cache_bytes(lite, 2, 640, fp16), Count{16} * 320 * 27 * 640 * 2 * 2);
  const ServeResult r = analyze_serving(lite, test_gpu(), opts(2, 512, 128));
  EXPECT_EQ(r.kv_cache_bytes, Count{16} * 320 * 27 * 640 * 2 * 2);
  EXPECT_EQ(r.latent_kv_cache_bytes, Count{576} * 27 * 640 * 2 * 2);
  EXPECT_EQ(r.decompressed_kv_cache_bytes, r.kv_cache_bytes);
}

// Qwen2 with use_sliding_window (the auditor's qwen2-swa-mwl*.json, Qwen2-0.5B's shapes: 24 layers, 2 KV heads of
// 64): layer i slides iff i >= max_window_layers, so at 1,000 + 24 tokens (1,024 cached positions, 512 bytes per
// layer and position in fp16) the window of 256 caps only the layers from max_window_layers on.
TEST(LlmServe, QwenWindowSlidesFromMaxWindowLayersOn) {
  nlohmann::json j = nlohmann::json::parse(R"({"model_type":"qwen2","vocab_size":151936,"hidden_size":896,
      "intermediate_size":4864,"num_hidden_layers":24,"num_attention_heads":14,"num_key_value_heads":2,
      "max_position_embeddings":32768,"tie_word_embeddings":true,"use_sliding_window":true,"sliding_window":256})");
  auto kv = [&](int64_t max_window_layers) {
    j["max_window_layers"] = max_window_layers;
    LlmConfig c = parse_llm_config(j, "qwen2-swa");
    c.name = "qwen2-swa";
    return analyze_serving(c, test_gpu(), opts(1, 1000, 24)).kv_cache_bytes;
  };
  EXPECT_EQ(kv(24), Count{12582912});  // 24 x 2 x 2 x 64 x 2 x 1024: no layer slides (was 3,145,728)
  EXPECT_EQ(kv(12), Count{7864320});   // 12 x 512 x 1024 + 12 x 512 x 256
  EXPECT_EQ(kv(0), Count{3145728});    // 24 x 512 x 256: every layer slides
}

// --mla latent: the cache is the latent (replicated on every tensor-parallel GPU), decode steps read it once for all
// heads, and the decode FLOPs are exactly those of per-step latent graphs.
TEST(LlmServe, LatentCacheOfMultiHeadLatentAttention) {
  const LlmConfig& lite = *find_llm_config("deepseek-v2-lite");
  ServeOptions o = opts(2, 7, 3);
  o.tp = 2;
  const ServeResult hf = analyze_serving(lite, test_gpu(), o);
  o.latent_kv = true;
  const ServeResult latent = analyze_serving(lite, test_gpu(), o);
  EXPECT_EQ(latent.kv_cache_bytes_per_gpu, Count{576} * 27 * 10 * 2 * 2);
  EXPECT_EQ(latent.kv_cache_bytes, 2 * latent.kv_cache_bytes_per_gpu);
  EXPECT_EQ(latent.decompressed_kv_cache_bytes, hf.kv_cache_bytes);
  EXPECT_GT(latent.max_batch, hf.max_batch);
  const Count expected = explicit_decode_flops(tensor_parallel_shard(lite, 2), 2, 7, 2, true);
  EXPECT_EQ(latent.decode_flops, expected);
  Count kv_read = 0;
  for (const auto& op : latent.ops)
    if (op.phase == "decode") kv_read += op.kv_read_bytes;
  // Each step reads every layer's latent for the scores (576 wide) and again for the output (its first 512)...
  EXPECT_EQ(kv_read, Count{2} * 27 * (8 + 9) * (576 + 512) * 2);
  // ... and once with a fused attention kernel (FlashMLA keeps the tile on chip for both).
  o.fused_attention = true;
  kv_read = 0;
  for (const auto& op : analyze_serving(lite, test_gpu(), o).ops)
    if (op.phase == "decode") kv_read += op.kv_read_bytes;
  EXPECT_EQ(kv_read, Count{2} * 27 * (8 + 9) * 576 * 2);
  // A model without latent attention has no latent to cache: refused, naming the flag.
  ServeOptions dense = opts(1, 8, 2);
  dense.latent_kv = true;
  try {
    analyze_serving(*find_llm_config("llama-2-7b"), test_gpu(), dense);
    ADD_FAILURE() << "--mla latent accepted for llama-2-7b";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--mla latent: llama-2-7b has no multi-head latent attention"), std::string::npos)
        << e.what();
  }
}

// Decode steps of a model with local and global layers: each layer's ops at its own cache length (a window of 4
// for the local ones), exactly as per-step graphs count them.
TEST(LlmServe, DecodeStepsOfLocalAndGlobalLayers) {
  LlmConfig c = parse_llm_config(nlohmann::json::parse(R"({"model_type":"gemma2","vocab_size":256,"hidden_size":64,
      "num_hidden_layers":4,"num_attention_heads":4,"num_key_value_heads":2,"head_dim":16,"intermediate_size":96,
      "sliding_window":4,"max_position_embeddings":512})"), "tiny-gemma2");
  c.name = "tiny-gemma2";
  const ServeResult r = analyze_serving(c, test_gpu(), opts(2, 3, 6));
  const Count expected = explicit_decode_flops(c, 2, 3, 5);
  EXPECT_EQ(r.decode_flops, expected);
  EXPECT_EQ(r.kv_cache_bytes, Count{2} * 2 * 2 * 16 * (2 * 4 + 2 * 9) * 2);  // batch, K+V, heads, hd, positions, fp16
}

TEST(LlmServe, QuantizedWeightBytesCountGroupScales) {
  const NumberFormat int4 = *parse_number_format("int4");
  EXPECT_EQ(int4.bytes(4096 * 4096), Count{4096} * 4096 / 2 + Count{4096} * 4096 / 128 * 2);
  const LlmConfig& c = *find_llm_config("llama-2-7b");
  ServeOptions o = opts(1, 16, 4);
  const ServeResult fp16 = analyze_serving(c, test_gpu(), o);
  EXPECT_EQ(fp16.weights_bytes, Count{6738415616} * 2);
  o.weights = int4;
  const ServeResult q = analyze_serving(c, test_gpu(), o);
  // Linear weights (everything but the embedding and the norms) at 4 bits + one fp16 scale per 128.
  const Count linear = Count{6738415616} - 131072000 - (2 * 32 + 1) * 4096;
  EXPECT_EQ(q.weights_bytes, int4.bytes(linear) + (131072000 + 65 * 4096) * 2);
}

TEST(LlmServe, DecodeSumEqualsExplicitSteps) {
  // The affine sum over steps equals the per-step graphs: check FLOPs of a 3-step decode by hand-built graphs.
  const LlmConfig& c = *find_llm_config("gpt3-125m");
  ServeOptions o = opts(2, 5, 3);
  const ServeResult r = analyze_serving(c, test_gpu(), o);
  const Count expected = explicit_decode_flops(c, 2, 5, 2);  // 3 tokens: the prefill's and 2 decode steps
  EXPECT_EQ(r.decode_flops, expected);
  EXPECT_GT(r.prefill_time_s, 0);
  EXPECT_NEAR(r.end_to_end_s, r.prefill_time_s + 2 * r.decode_time_per_token_s, 1e-12);
  EXPECT_NEAR(r.tokens_per_s, 6 / r.end_to_end_s, 1e-9);
  // One token is the prefill's alone: no decode step (it ran one before 2026-11-28, G + 1 tokens in all).
  const ServeResult one = analyze_serving(c, test_gpu(), opts(2, 5, 1));
  EXPECT_EQ(one.decode_flops, 0);
  EXPECT_EQ(one.decode_time_per_token_s, 0.0);
  EXPECT_DOUBLE_EQ(one.end_to_end_s, one.ttft_s);
}

// The config.json families GPT-J, CodeGen, GPTBigCode, StarCoder2 and StableLM serve like the others: the cache holds
// num_kv_heads x head_dim keys and values per layer and position (StarCoder's multi-query attention: one head of 128,
// 48 times smaller than its 48 query heads), and the decode steps' FLOPs equal per-step graphs.
TEST(LlmServe, ConfigFamiliesCacheTheirKeyValueHeads) {
  const NumberFormat fp16 = *parse_number_format("fp16");
  const LlmConfig starcoder = parse_llm_config(nlohmann::json::parse(R"({"model_type":"gpt_bigcode","vocab_size":49152,
      "n_embd":6144,"n_layer":40,"n_head":48,"n_positions":8192,"n_inner":24576,"multi_query":true})"), "starcoder");
  EXPECT_EQ(kv_cache_bytes(starcoder, 1, 8192, fp16), Count{2} * 1 * 128 * 40 * 2 * 8192);
  const ServeResult r = analyze_serving(starcoder, test_gpu(), opts(2, 64, 4));
  EXPECT_EQ(r.kv_cache_bytes, Count{2} * 128 * 40 * 2 * 2 * 68);
  EXPECT_EQ(r.total_params, llm_params(starcoder).total);
  const char* small[] = {
      R"({"model_type":"gptj","vocab_size":64,"n_embd":32,"n_layer":2,"n_head":4,"n_positions":64,"rotary_dim":4})",
      R"({"model_type":"codegen","vocab_size":64,"n_embd":32,"n_layer":2,"n_head":4,"n_positions":64,"rotary_dim":4})",
      R"({"model_type":"gpt_bigcode","vocab_size":64,"n_embd":32,"n_layer":2,"n_head":4,"n_positions":64})",
      R"({"model_type":"starcoder2","vocab_size":64,"hidden_size":32,"num_hidden_layers":2,"num_attention_heads":4,
          "num_key_value_heads":2,"intermediate_size":48,"sliding_window":6,"max_position_embeddings":64})",
      R"({"model_type":"stablelm","vocab_size":64,"hidden_size":32,"num_hidden_layers":2,"num_attention_heads":4,
          "num_key_value_heads":2,"intermediate_size":48,"use_parallel_residual":true,"max_position_embeddings":64})",
  };
  for (const char* text : small) {
    LlmConfig c = parse_llm_config(nlohmann::json::parse(text), "cfg.json");
    c.name = c.family;
    const ServeResult s = analyze_serving(c, test_gpu(), opts(2, 5, 4));
    EXPECT_EQ(s.decode_flops, explicit_decode_flops(c, 2, 5, 3)) << c.family;
    const int64_t positions = c.sliding_window > 0 ? std::min<int64_t>(9, c.sliding_window) : 9;
    EXPECT_EQ(s.kv_cache_bytes, Count{2} * c.num_kv_heads * c.head_dim * 2 * 2 * 2 * positions) << c.family;
  }
}

TEST(LlmServe, DecodeIsMemoryBoundAndReadsTheWeights) {
  const ServeResult r = analyze_serving(*find_llm_config("llama-2-7b"), test_gpu(), opts(1, 128, 3));  // 2 steps
  Count weight_reads = 0;
  for (const auto& op : r.ops)
    if (op.phase == "decode") weight_reads += op.weight_bytes;
  // Every decode step reads every weight once, except the embedding table (only the looked-up rows).
  EXPECT_EQ(weight_reads, 2 * (Count{6738415616} - 131072000) * 2 + 2 * 4096 * 2);
  for (const auto& op : r.ops)
    if (op.phase == "decode" && op.name == "model.layers.0.mlp.down_proj") {
      EXPECT_EQ(op.bound, Bound::Memory);
    }
}

TEST(LlmServe, TensorParallelSplitsWeightsAndKvAndAddsAllReduces) {
  const LlmConfig& c = *find_llm_config("llama-2-70b");
  ServeOptions o = opts(1, 64, 2);
  o.tp = 8;
  const ServeResult r = analyze_serving(c, test_gpu(), o);
  EXPECT_EQ(r.kv_cache_bytes_per_gpu, kv_cache_bytes(c, 1, 66, o.kv) / 8);
  EXPECT_GT(r.allreduce_time_per_layer_decode_s, 0);
  EXPECT_LT(r.weights_bytes_per_gpu, Count{68976648192} * 2 / 8 + (Count{1} << 24));
  // Per layer: two ring all-reduces of the decode step's 16 KiB activation (8192 x 2 B) on NVLink, 2 (t-1) steps each.
  const double ring = 2.0 * 7 * 2e-6 + 2.0 * 7 / 8 * 16384 / 4e11;
  EXPECT_NEAR(r.allreduce_time_per_layer_decode_s, 2 * ring, 1e-12);
  // 16 GPUs are two nodes: the ring runs on the network link.
  o.tp = 16;
  const ServeResult two_nodes = analyze_serving(c, test_gpu(), o);
  EXPECT_NEAR(two_nodes.allreduce_time_per_layer_decode_s, 2 * (2.0 * 15 * 5e-6 + 2.0 * 15 / 16 * 16384 / 5e10), 1e-12);
  o.tp = 3;
  EXPECT_THROW(analyze_serving(c, test_gpu(), o), Error);
}

// The calflops column of serve: Llama-2-7B prefill of (1, 128) is calflops' printed 1700.06 GFLOPs.
TEST(LlmServe, CalflopsColumnOfThePrefill) {
  EXPECT_EQ(analyze_serving(*find_llm_config("llama-2-7b"), test_gpu(), opts(1, 128, 1)).calflops_prefill_flops,
            Count{1700063608832});
}

// Fused attention: the scores never reach memory; QK^T reads Q and K only, SV reads V and writes O, the
// elementwise ops between them move nothing. FLOPs are the same as eager.
TEST(LlmServe, FusedAttentionDropsScoreTraffic) {
  ServeOptions o = opts(1, 64, 1);
  const ServeResult eager = analyze_serving(*find_llm_config("llama-2-7b"), test_gpu(), o);
  o.fused_attention = true;
  const ServeResult fused = analyze_serving(*find_llm_config("llama-2-7b"), test_gpu(), o);
  // The fused kernel skips the scores the causal mask hides: of 64 x 64 per head, 64 x 63 / 2, in QK^T and SV
  // (2 x 32 heads x 128 FLOPs per score and matmul) of 32 layers.
  EXPECT_EQ(eager.prefill_flops - fused.prefill_flops, Count{32} * 2 * 2 * 32 * 128 * (64 * 63 / 2));
  for (const auto& op : fused.ops) {
    if (op.phase != "prefill") continue;
    if (op.name == "model.layers.0.self_attn.softmax") { EXPECT_EQ(op.bytes(), 0); }
    // QK^T: Q (64 x 4096 x 2 bytes) and the K cache (64 positions x 4096 x 2 bytes), nothing written.
    if (op.name == "model.layers.0.self_attn.matmul") {
      EXPECT_EQ(op.activation_bytes, Count{64} * 4096 * 2);
      EXPECT_EQ(op.kv_read_bytes, Count{64} * 4096 * 2);
    }
  }
  EXPECT_LT(fused.prefill_time_s, eager.prefill_time_s);
}

// HF's eager copies (serve --attention eager, LlmShape::eager_copies), byte for byte on a tiny Llama (4 query heads
// sharing 2 KV heads of 8, hidden 32, one layer), batch 2, prompt 3, 2 tokens: one decode step at cache length 4.
// fp16 activations and cache: 2 bytes, float32 4.
const ServeOp& op_named(const ServeResult& r, const std::string& phase, const std::string& name) {
  for (const auto& op : r.ops)
    if (op.phase == phase && op.name == name) return op;
  throw std::runtime_error("no op " + name + " in " + phase);
}

LlmConfig tiny_gqa_llama() {
  LlmConfig c = parse_llm_config(nlohmann::json::parse(R"({"model_type":"llama","vocab_size":64,"hidden_size":32,
      "num_hidden_layers":1,"num_attention_heads":4,"num_key_value_heads":2,"intermediate_size":48,
      "max_position_embeddings":64})"), "tiny-llama");
  c.name = "tiny-llama";
  return c;
}

TEST(LlmServe, EagerModeCostsHfCopiesExactly) {
  const LlmConfig c = tiny_gqa_llama();
  ASSERT_EQ(c.head_dim, 8);
  const ServeResult r = analyze_serving(c, test_gpu(), opts(2, 3, 2));
  const std::string attn = "model.layers.0.self_attn.";
  // DynamicCache.update: torch.cat(past [2, 2, 3, 8], new [2, 2, 1, 8]) -> [2, 2, 4, 8]: reads the past (KV) and the
  // new key (activation), writes the whole cache (KV written). No FLOPs.
  for (const char* cat : {"cat_key_cache", "cat_value_cache"}) {
    const ServeOp& d = op_named(r, "decode", attn + cat);
    EXPECT_EQ(d.kv_read_bytes, 2 * 2 * 3 * 8 * 2) << cat;
    EXPECT_EQ(d.activation_bytes, 2 * 2 * 1 * 8 * 2) << cat;
    EXPECT_EQ(d.kv_written_bytes, 2 * 2 * 4 * 8 * 2) << cat;
    EXPECT_EQ(d.flops, 0) << cat;
    // The prompt's cat (from an empty cache) copies its 3 positions.
    const ServeOp& p = op_named(r, "prefill", attn + cat);
    EXPECT_EQ(p.kv_read_bytes, 0) << cat;
    EXPECT_EQ(p.activation_bytes, 2 * 2 * 3 * 8 * 2) << cat;
    EXPECT_EQ(p.kv_written_bytes, 2 * 2 * 3 * 8 * 2) << cat;
  }
  // repeat_kv: reads the cache (2 KV heads x 4 positions) once, writes it for each of the 4 query heads.
  for (const char* rep : {"repeat_kv", "repeat_kv_1"}) {
    const ServeOp& d = op_named(r, "decode", attn + rep);
    EXPECT_EQ(d.kv_read_bytes, 2 * 2 * 4 * 8 * 2) << rep;
    EXPECT_EQ(d.activation_bytes, 2 * 4 * 4 * 8 * 2) << rep;
    EXPECT_EQ(d.kv_written_bytes, 0) << rep;
    EXPECT_EQ(d.flops, 0) << rep;
  }
  // QK^T reads Q [2, 4, 1, 8] and the copied keys [2, 4, 4, 8], writes the scores [2, 4, 1, 4]; SV reads the scores
  // and the copied values, writes [2, 4, 1, 8]. Neither reads the cache itself.
  for (const char* mm : {"matmul", "matmul_1"}) {
    const ServeOp& d = op_named(r, "decode", attn + mm);
    EXPECT_EQ(d.activation_bytes, 128 + 512 + 64) << mm;
    EXPECT_EQ(d.kv_read_bytes, 0) << mm;
    EXPECT_EQ(d.flops, Count{2} * 2 * 4 * 1 * 4 * 8) << mm;  // 2 x B x H x T x S x hd
  }
  // RMSNorm in float32: x.to(float32) reads [2, 1, 32] at 2 bytes, writes it at 4; pow reads and writes float32
  // (and the scalar exponent); .to(fp16) back; the weight multiply at fp16 (+ the 32 weights).
  const std::string norm = "model.layers.0.input_layernorm.";
  EXPECT_EQ(op_named(r, "decode", norm + "to_float32").activation_bytes, 64 * 2 + 64 * 4);
  EXPECT_EQ(op_named(r, "decode", norm + "pow").activation_bytes, 64 * 4 + 4 + 64 * 4);
  EXPECT_EQ(op_named(r, "decode", norm + "mean").activation_bytes, 64 * 4 + 2 * 4);
  EXPECT_EQ(op_named(r, "decode", norm + "mul").activation_bytes, 64 * 4 + 2 * 4 + 64 * 4);
  EXPECT_EQ(op_named(r, "decode", norm + "to_input_dtype").activation_bytes, 64 * 4 + 64 * 2);
  EXPECT_EQ(op_named(r, "decode", norm + "to_float32").flops, 0);
  EXPECT_EQ(op_named(r, "decode", "model.norm.to_input_dtype").activation_bytes, 64 * 4 + 64 * 2);
  // rotate_half's cat(-x2, x1): two halves read, the whole written (q: 4 heads, k: 2).
  EXPECT_EQ(op_named(r, "decode", attn + "cat_rotate_half").activation_bytes, 2 * 4 * 4 * 2 * 2 + 2 * 4 * 8 * 2);
  EXPECT_EQ(op_named(r, "decode", attn + "cat_rotate_half_1").activation_bytes, 2 * 2 * 4 * 2 * 2 + 2 * 2 * 8 * 2);
  // The copies add bytes, never FLOPs: the decode FLOPs are those of the graphs without them.
  EXPECT_EQ(r.decode_flops, explicit_decode_flops(c, 2, 3, 1));
}

// The fused (vLLM-like) mode has none of the copies: the kernels read the cache in place, the new key/value is what
// is written, and its graphs are those without eager_copies (no Cast or Expand; the only Concat is rotate_half's).
TEST(LlmServe, FusedModeHasNoEagerCopies) {
  const LlmConfig c = tiny_gqa_llama();
  ServeOptions o = opts(2, 3, 2);
  o.fused_attention = true;
  const ServeResult r = analyze_serving(c, test_gpu(), o);
  Count kv_read = 0, kv_written = 0;
  for (const auto& op : r.ops) {
    for (const char* copy : {"cat_key_cache", "cat_value_cache", "repeat_kv", "to_float32", "to_input_dtype", "cat_rotate_half"})
      EXPECT_EQ(op.name.find(copy), std::string::npos) << op.name;
    if (op.phase == "decode") kv_read += op.kv_read_bytes, kv_written += op.kv_written_bytes;
  }
  EXPECT_EQ(kv_read, 2 * (2 * 2 * 4 * 8 * 2));     // K and V caches, each read once
  EXPECT_EQ(kv_written, 2 * (2 * 2 * 1 * 8 * 2));  // the new position's K and V
  const Graph g = build_llm(c, LlmShape{2, 1, 3, DType::F16, true});
  for (const Node& n : g.nodes) {
    EXPECT_NE(n.op, OpKind::Cast) << n.name;
    EXPECT_NE(n.op, OpKind::Expand) << n.name;
    if (n.op == OpKind::Concat) {
      EXPECT_NE(n.name.find("cat_rotate_half"), std::string::npos) << n.name;
    }
  }
  // Eager copies change no parameter: the same weights in both graphs.
  LlmShape eager{2, 1, 3, DType::F16, true};
  eager.eager_copies = true;
  EXPECT_EQ(estimate(build_llm(c, eager)).total.params, estimate(g).total.params);
  EXPECT_EQ(estimate(g).total.params, llm_params(c).total);
}

// Scores a causal kernel keeps, closed form against a count of every (query, key) pair.
TEST(LlmServe, CausalScoresEqualABruteForceCount) {
  for (int64_t tokens : {1, 2, 7, 64})
    for (int64_t past : {0, 1, 5, 100})
      for (int64_t window : {0, 1, 3, 8, 64, 1000}) {
        Count brute = 0, chunked = 0;  // a sliding window; chunks of `window` (llama4_text)
        for (int64_t q = past; q < past + tokens; ++q)
          for (int64_t k = 0; k <= q; ++k) {
            brute += window == 0 || q - k < window ? 1 : 0;
            chunked += window == 0 || q / window == k / window ? 1 : 0;
          }
        EXPECT_EQ(llm::causal_scores(tokens, past, {window, false}), brute) << tokens << " " << past << " " << window;
        EXPECT_EQ(llm::causal_scores(tokens, past, {window, true}), chunked) << tokens << " " << past << " " << window;
      }
}

// A fused kernel executes the scores a layer's window keeps: at a 16-token window and a 64-token prompt, a local
// layer's QK^T and SV run 16 x 64 - 16 x 15 / 2 scores per head, a global one 64 x 65 / 2. Eager (HF) computes
// every score of the 64 x 64 matrix and masks them.
TEST(LlmServe, FusedKernelsSkipTheScoresTheWindowHides) {
  LlmConfig c = parse_llm_config(nlohmann::json::parse(R"({"model_type":"gemma2","vocab_size":256,"hidden_size":64,
      "num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,"head_dim":16,"intermediate_size":128,
      "sliding_window":16,"max_position_embeddings":512})"), "tiny-gemma2");
  ServeOptions o = opts(1, 64, 1);
  const ServeResult eager = analyze_serving(c, test_gpu(), o);
  o.fused_attention = true;
  const ServeResult fused = analyze_serving(c, test_gpu(), o);
  const Count per_score = 2 * 4 * 16;  // 4 query heads of 16 dims, a multiply and an add per score and matmul
  const Count local = 16 * 64 - 16 * 15 / 2, global = 64 * 65 / 2;
  Count core_eager = 0, core_fused = 0;
  for (const auto& [r, sum] : {std::pair{&eager, &core_eager}, std::pair{&fused, &core_fused}})
    for (const auto& op : r->ops)
      if (op.phase == "prefill" && (op.name.ends_with("self_attn.matmul") || op.name.ends_with("self_attn.matmul_1")))
        *sum += op.flops;
  EXPECT_EQ(core_eager, 2 * 2 * per_score * 64 * 64);
  EXPECT_EQ(core_fused, 2 * per_score * (local + global));
  EXPECT_EQ(eager.prefill_flops - fused.prefill_flops, core_eager - core_fused);
  // One decode token sees the whole cache (at most the window): nothing is skipped.
  EXPECT_EQ(fused.decode_flops, eager.decode_flops);
}

// Llama 4's chunked layers: with 16-token chunks and a 64-token prompt a rotary layer's fused core runs 4 x 16 x 17 / 2
// scores per head (each query sees its own chunk up to itself), the NoPE layer 64 x 65 / 2; one decode token at
// position 64 sees its chunk's first position only, and the global layer all 65.
TEST(LlmServe, FusedKernelsSkipTheScoresOutsideTheirChunk) {
  LlmConfig c = parse_llm_config(nlohmann::json::parse(R"({"model_type":"llama4_text","vocab_size":256,
      "hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,"head_dim":16,
      "intermediate_size":32,"intermediate_size_mlp":128,"num_local_experts":4,"attention_chunk_size":16,
      "no_rope_layer_interval":2,"max_position_embeddings":512})"), "tiny-llama4");
  c.name = "tiny-llama4";
  ServeOptions o = opts(1, 64, 2);
  o.fused_attention = true;
  const ServeResult fused = analyze_serving(c, test_gpu(), o);
  const Count per_score = 2 * 4 * 16;
  Count prefill = 0, decode = 0;
  for (const auto& op : fused.ops)
    if (op.name.ends_with("self_attn.matmul") || op.name.ends_with("self_attn.matmul_1"))
      (op.phase == "prefill" ? prefill : decode) += op.flops;
  EXPECT_EQ(prefill, 2 * per_score * (4 * 16 * 17 / 2 + 64 * 65 / 2));
  EXPECT_EQ(decode, 2 * per_score * (1 + 65));
  EXPECT_EQ(fused.kv_len_cap, 16);
}

// A small Qwen3-MoE: 8 experts of width 32, 2 per token, 2 layers; at batch 4 each decode step routes 8
// (token, expert) pairs, one per expert.
LlmConfig tiny_moe() {
  LlmConfig c = parse_llm_config(nlohmann::json::parse(R"({"model_type":"qwen3_moe","vocab_size":256,"hidden_size":64,
      "num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,"head_dim":16,"moe_intermediate_size":32,
      "num_experts":8,"num_experts_per_tok":2,"max_position_embeddings":512})"), "tiny-moe");
  c.name = "tiny-moe";
  return c;
}

// --moe grouped: each op of a layer's routed experts is one kernel with the experts' summed FLOPs and bytes, as
// vLLM's fused_moe runs them: the routing weight's multiply is the down projection's epilogue (its FLOPs, none of
// its traffic), and the top-k sum one kernel reading the k expert outputs once.
TEST(LlmServe, GroupedExpertsAreOneKernelPerOpOfALayer) {
  ServeOptions o = opts(4, 16, 4);
  Calibration cal;
  Efficiency e;
  e.overhead_s = 1e-5;
  cal.fallback = e;
  o.calibration = cal;
  const ServeResult eager = analyze_serving(tiny_moe(), test_gpu(), o);
  o.grouped_experts = true;
  const ServeResult grouped = analyze_serving(tiny_moe(), test_gpu(), o);
  EXPECT_EQ(grouped.prefill_flops, eager.prefill_flops);
  EXPECT_EQ(grouped.decode_flops, eager.decode_flops);
  auto find = [](const ServeResult& r, const std::string& phase, const std::string& name) -> const ServeOp* {
    for (const auto& op : r.ops)
      if (op.phase == phase && op.name == name) return &op;
    return nullptr;
  };
  for (const char* phase : {"prefill", "decode"}) {
    Count up_bytes = 0, up_flops = 0, down_bytes = 0, down_flops = 0, routing_bytes = 0;
    for (int ex = 0; ex < 8; ++ex) {
      const std::string expert = fmt::format("model.layers.1.mlp.experts.{}.", ex);
      const ServeOp* up = find(eager, phase, expert + "up_proj");
      const ServeOp* down = find(eager, phase, expert + "down_proj");
      const ServeOp* routing = find(eager, phase, expert + "mul_routing");
      ASSERT_TRUE(up && down && routing) << phase << " " << ex;
      up_bytes += up->bytes(), up_flops += up->flops;
      down_bytes += down->bytes(), down_flops += down->flops + routing->flops;
      routing_bytes += routing->bytes();
    }
    const ServeOp* up = find(grouped, phase, "model.layers.1.mlp.experts.up_proj");
    const ServeOp* down = find(grouped, phase, "model.layers.1.mlp.experts.down_proj");
    ASSERT_TRUE(up && down) << phase;
    EXPECT_EQ(up->bytes(), up_bytes) << phase;
    EXPECT_EQ(up->flops, up_flops) << phase;
    EXPECT_EQ(down->bytes(), down_bytes) << phase;  // the epilogue's product is the projection's own output
    EXPECT_EQ(down->flops, down_flops) << phase;
    EXPECT_EQ(find(grouped, phase, "model.layers.1.mlp.experts.0.up_proj"), nullptr) << phase;
    EXPECT_EQ(find(grouped, phase, "model.layers.1.mlp.experts.mul_routing"), nullptr) << phase;
    Count total_eager = 0, total_grouped = 0;
    for (const auto& op : eager.ops) total_eager += op.phase == phase ? op.bytes() : 0;
    for (const auto& op : grouped.ops) total_grouped += op.phase == phase ? op.bytes() : 0;
    EXPECT_EQ(total_grouped, total_eager - 2 * routing_bytes) << phase;  // both layers' routing traffic goes
  }
  // Per layer and phase the 8 experts' 7 ops (gate_proj, SiLU's sigmoid and mul, the gating mul, up_proj,
  // down_proj, the routing mul) are 6 kernels: 50 launches saved x 2 layers, once for the prefill and once per
  // decode step; the routing traffic saved makes the difference larger still.
  const double saved = 50.0 * 2 * 1e-5;
  EXPECT_LT(grouped.prefill_time_s, eager.prefill_time_s - saved + 1e-12);
  EXPECT_LT(grouped.decode_time_s, eager.decode_time_s - 3 * saved + 1e-12);  // 4 tokens: 3 decode steps
}

// The top-k sum under --moe grouped: one moe_sum kernel reading each token's k expert outputs and writing the sum,
// (k + 1) x tokens x hidden values, where the eager adds move 3 x (k - 1).
TEST(LlmServe, GroupedTopKSumReadsEachExpertOutputOnce) {
  LlmConfig c = tiny_moe();
  c.experts_per_token = 4;
  ServeOptions o = opts(4, 16, 2);
  o.grouped_experts = true;
  const ServeResult r = analyze_serving(c, test_gpu(), o);
  const ServeOp* sum = nullptr;
  int adds = 0;
  for (const auto& op : r.ops) {
    if (op.phase != "prefill") continue;
    if (op.name == "model.layers.0.mlp.moe_sum") sum = &op;
    adds += op.name.find(".index_add_") != std::string::npos ? 1 : 0;
  }
  ASSERT_NE(sum, nullptr);
  EXPECT_EQ(adds, 0);
  const Count tokens = 4 * 16, hidden = 64;
  EXPECT_EQ(sum->activation_bytes, (4 + 1) * tokens * hidden * 2);  // fp16
  EXPECT_EQ(sum->flops, 3 * tokens * hidden);                       // k - 1 adds per output element
}

// gpt-oss's sinks run inside a fused attention kernel: no score-sized traffic for the concat, max, subtract and
// slice around the softmax, as for the rest of the core.
TEST(LlmServe, FusedAttentionAbsorbsTheSinks) {
  ServeOptions o = opts(1, 64, 1);
  o.fused_attention = true;
  const ServeResult r = analyze_serving(*find_llm_config("gpt-oss-20b"), test_gpu(), o);
  size_t sinks = 0;
  for (const auto& op : r.ops)
    if (op.phase == "prefill" && op.name.find("self_attn.sinks_") != std::string::npos) {
      ++sinks;
      EXPECT_EQ(op.bytes(), 0) << op.name;
    }
  EXPECT_EQ(sinks, size_t{24} * 2);  // sinks_max and sinks_sub per layer (cat, expand and slice are layout ops)
}

TEST(LlmServe, DoesNotFitIsAClearError) {
  try {
    analyze_serving(*find_llm_config("llama-2-70b"), test_gpu(), opts(1, 128, 16));
    FAIL() << "70B in fp16 on 80 GiB must not fit";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not fit: needs 128."), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("has 80.00 GiB"), std::string::npos) << e.what();
    // 128.5 GiB of weights: two GPUs of 80 GiB hold them (64 heads, widths divisible by 2).
    EXPECT_NE(std::string(e.what()).find("not even batch 1 fits at --tp 1; --tp 2 fits"), std::string::npos)
        << e.what();
  }
  // A batch too large for the KV cache names the largest batch that fits instead.
  const LlmConfig& c = *find_llm_config("llama-2-7b");
  const ServeResult fits = analyze_serving(c, test_gpu(), opts(1, 128, 16));
  try {
    analyze_serving(c, test_gpu(), opts(fits.max_batch + 1, 128, 16));
    FAIL() << "one more than the largest batch must not fit";
  } catch (const DoesNotFit& e) {
    EXPECT_NE(std::string(e.what()).find(fmt::format("(largest batch that fits: {})", fits.max_batch)),
              std::string::npos) << e.what();
  }
}

TEST(LlmServe, OnlyCapacityRefusalsAreDoesNotFit) {
  const LlmConfig& c = *find_llm_config("llama-2-7b");
  // Memory and positions are capacities (the serving charts stop a curve there); a bad value is not.
  EXPECT_THROW(analyze_serving(*find_llm_config("llama-2-70b"), test_gpu(), opts(1, 128, 16)), DoesNotFit);
  EXPECT_THROW(analyze_serving(c, test_gpu(), opts(1, c.max_positions, 16)), DoesNotFit);
  // prompt + generate would wrap to a negative int64 and then decode for ever: refused before any addition.
  EXPECT_THROW(analyze_serving(c, test_gpu(), opts(1, 512, INT64_MAX)), DoesNotFit);
  EXPECT_THROW(analyze_serving(c, test_gpu(), opts(1, INT64_MAX, INT64_MAX)), DoesNotFit);
  try {
    analyze_serving(c, test_gpu(), opts(0, 128, 16));
    FAIL() << "batch 0 must be refused";
  } catch (const DoesNotFit& e) {
    FAIL() << "batch 0 is a bad value, not a capacity: " << e.what();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--batch: 0"), std::string::npos) << e.what();
  }
}

TEST(LlmServe, MaxBatchIsTheLargestThatFits) {
  const LlmConfig& c = *find_llm_config("llama-2-7b");
  const ServeResult r = analyze_serving(c, test_gpu(), opts(1, 1024, 1024));
  const Count cap = Count{80} << 30, per_seq = kv_cache_bytes(c, 1, 2048, *parse_number_format("fp16"));
  EXPECT_EQ(Count{r.max_batch}, (cap - r.weights_bytes_per_gpu) / per_seq);
}

}  // namespace
}  // namespace ridge
