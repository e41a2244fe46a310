// Roles of the attention-core nodes of graphs built by build_llm, for costing them as one fused kernel
// (FlashAttention-style: the score tensor never reaches DRAM). Shared by the serving and training analyses.
#pragma once
#include <algorithm>
#include <cctype>
#include <string>

#include "ridge/graph.hpp"
#include "ridge/llm.hpp"

namespace ridge::llm {

/// Scores: QK^T (reads Q and K, its output stays on chip); Elementwise: scaling, mask, softmax (no DRAM traffic
/// when fused); Output: SV (reads V and writes O, not the scores); None: any other node.
enum class AttnRole : uint8_t { None, Scores, Elementwise, Output };

/// DeepSeek Sparse Attention's indexer (module `...self_attn.indexer`) as its fused kernel runs it (DeepGEMM's
/// fp8_mqa_logits): the per-head scores (`matmul`, the Scores) stay on chip through the ReLU and head weights, and
/// their sum over the heads (`sum_heads`, the Output) is the logits row the top-k selection reads.
inline AttnRole indexer_role(const std::string& local) {
  if (local == "matmul") return AttnRole::Scores;
  if (local == "sum_heads") return AttnRole::Output;
  if (local == "relu" || local == "mul" || local == "add_mask") return AttnRole::Elementwise;
  return AttnRole::None;
}

/// True for a node of DeepSeek Sparse Attention's indexer: it scores every cached position, where the attention
/// core attends to the top index_topk only.
inline bool indexer_op(const std::string& op_name) { return op_name.find(".indexer.") != std::string::npos; }

inline AttnRole attention_role(const Node& n) {
  const std::string& m = n.module;
  auto ends = [](const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends(m, ".indexer")) return indexer_role(n.name.size() > m.size() ? n.name.substr(m.size() + 1) : "");
  if (!(ends(m, ".self_attn") || ends(m, ".attn") || ends(m, ".attention") || ends(m, ".self_attention") ||
        ends(m, ".attention.self") ||  // BertSelfAttention
        ends(m, ".mixer")))  // a hybrid layer's mixer (nemotron_h); its Mamba, MLP and MoE mixers have no such ops
    return AttnRole::None;
  const std::string local = n.name.size() > m.size() ? n.name.substr(m.size() + 1) : "";
  if (local == "matmul") return AttnRole::Scores;
  if (local == "matmul_1") return AttnRole::Output;
  if (local == "mul" || local == "add_mask" || local == "softmax" || local == "add_index_mask" ||
      local.rfind("repeat_kv", 0) == 0 ||
      local.rfind("softcap_", 0) == 0 || local.rfind("sinks_", 0) == 0)
    return AttnRole::Elementwise;  // repeat_kv: a fused kernel indexes the shared K/V heads instead of copying;
                                   // soft-capping runs inside FlashAttention-2 (its softcap argument), and
                                   // attention sinks inside the kernels that serve gpt-oss
  return AttnRole::None;  // (add_index_mask: a sparse kernel takes the indexer's top-k as indices, no mask)
}

/// A copy Hugging Face's eager forward materialises, in a serving graph built with LlmShape::eager_copies: the KV
/// cache's torch.cat (`cat_key_cache`, `cat_value_cache`), repeat_kv's expand (`repeat_kv`), RMSNorm's float32 casts
/// (`to_float32`, `to_input_dtype`) and rotate_half's torch.cat (`cat_rotate_half`, and the partial rotary's
/// `cat_pass`). These are layout ops (Concat, Expand, Cast) that serve costs as kernels of their own (what they read
/// and write) instead of dropping them as views.
inline bool eager_copy(const Node& n) {
  if (n.op != OpKind::Concat && n.op != OpKind::Expand && n.op != OpKind::Cast) return false;
  if (n.name.size() <= n.module.size() + 1 || n.name.compare(0, n.module.size(), n.module) != 0) return false;
  const std::string local = n.module.empty() ? n.name : n.name.substr(n.module.size() + 1);
  for (const char* p : {"cat_key_cache", "cat_value_cache", "repeat_kv", "to_float32", "to_input_dtype",
                        "cat_rotate_half", "cat_pass"})
    if (local.rfind(p, 0) == 0) return true;
  return false;
}

/// True for a recurrent layer's cached state in a serving graph (Mamba-2, Gated DeltaNet): the conv state and the
/// recurrent state it reads (inputs `past_key_values.L.conv_state` / `.ssm_state` / `.recurrent_state`) and writes
/// (the `conv_state` slice, the scan's final state). They are cache traffic at their own element type (the
/// recurrent state is float32 by default).
inline bool state_cache(const Graph& g, int v) {
  const Value& val = g.value(v);
  if (val.name.ends_with(".conv_state") || val.name.ends_with(".ssm_state") || val.name.ends_with(".recurrent_state"))
    return true;
  if (val.producer < 0) return false;
  const Node& n = g.nodes[val.producer];
  return (n.op == OpKind::SelectiveScan || n.op == OpKind::GatedDeltaRule) && n.outputs.size() > 1 && n.outputs[1] == v;
}

/// The core's two matmuls (QK^T and SV): the FLOPs a fused attention kernel's utilization is quoted on.
inline bool attention_matmul(const Node& n) {
  const AttnRole r = attention_role(n);
  return r == AttnRole::Scores || r == AttnRole::Output;
}

/// The layer a node of a build_llm graph belongs to ("model.layers.12.mlp.up_proj" -> 12; an encoder's
/// "bert.encoder.layer.3.output.dense" -> 3), or -1.
inline int64_t layer_of(const std::string& op_name) {
  static const std::string kLayers = ".layers.", kLayer = ".layer.";
  size_t at = op_name.find(kLayers), skip = kLayers.size();
  if (at == std::string::npos) at = op_name.find(kLayer), skip = kLayer.size();
  if (at == std::string::npos) return -1;
  int64_t l = 0;
  size_t i = at + skip;
  if (i >= op_name.size() || !std::isdigit(static_cast<unsigned char>(op_name[i]))) return -1;
  for (; i < op_name.size() && std::isdigit(static_cast<unsigned char>(op_name[i])) && l < (int64_t{1} << 40); ++i)
    l = 10 * l + (op_name[i] - '0');
  return l;
}

/// What a layer's queries see besides the causal mask: the last `size` positions (a sliding window), or with
/// `chunked` the positions of their own chunk of `size` (llama4_text); size 0: every position.
struct AttendWindow {
  int64_t size = 0;
  bool chunked = false;
};

/// The window of the layer a node belongs to (LlmConfig::window_of; size 0: none, or not in a layer). Under DeepSeek
/// Sparse Attention the core's queries each see min(positions, index_topk) keys, as a window of index_topk would
/// (other keys, the same count); the indexer itself scores every position.
inline AttendWindow window_at(const LlmConfig& c, const std::string& op_name) {
  const int64_t layer = layer_of(op_name);
  if (layer < 0) return AttendWindow{};
  if (c.dsa() && c.window_of(layer) == 0) return indexer_op(op_name) ? AttendWindow{} : AttendWindow{c.index_topk, false};
  return AttendWindow{c.window_of(layer), c.chunked_attention};
}

/// Scores a causal attention kernel computes for `tokens` queries after `past` cached positions: query t sees
/// min(past + t + 1, w.size) keys under a sliding window, (past + t) mod w.size + 1 in chunks of w.size.
inline Count causal_scores(int64_t tokens, int64_t past, AttendWindow w) {
  if (w.chunked && w.size > 0) {
    // Queries at positions 0 .. n - 1 see sum (p mod size + 1) keys: whole chunks, then the last partial one.
    const Count size = w.size;
    auto upto = [size](Count n) { return n / size * (size * (size + 1) / 2) + (n % size) * (n % size + 1) / 2; };
    return upto(Count{past} + tokens) - upto(Count{past});
  }
  // Queries t < t0 see past + t + 1 keys (fewer than the window), the others the window.
  const int64_t t0 = w.size > 0 ? std::clamp<int64_t>(w.size - past - 1, 0, tokens) : tokens;
  return Count{t0} * past + Count{t0} * (t0 + 1) / 2 + Count{tokens - t0} * w.size;
}

/// FLOPs (forward or backward: `flops`) of a core matmul (QK^T or SV) that a fused kernel executes: FlashAttention
/// skips the key blocks the causal mask or the window (or chunk) hides, and its published utilization is quoted on
/// these FLOPs (Dao 2023: "FLOPs halved when causal"). The matmul's rows are `tokens` queries (times the query heads
/// sharing a KV head); its columns the keys of the graph (past + tokens, or the union of the windows). Graph FLOPs
/// unchanged for any other node, or when the shapes do not divide as expected.
/// An encoder's kernel (`causal` false) executes every score: the graph's FLOPs.
inline Count fused_core_flops(const Graph& g, const Node& n, Count flops, int64_t tokens, int64_t past,
                              AttendWindow window, bool causal) {
  if (!causal || !attention_matmul(n) || tokens < 1 || flops <= 0) return flops;
  // The scores' tile: QK^T's output, SV's first input ([..., rows, keys]).
  const Shape& s = attention_role(n) == AttnRole::Scores ? g.value(n.outputs.at(0)).shape : g.value(n.inputs.at(0)).shape;
  if (s.rank() < 2) return flops;
  const int64_t rows = s.dims[s.rank() - 2], keys = s.dims[s.rank() - 1];
  const Count tile = Count{rows} * keys;
  // The most keys a query sees.
  const int64_t seen = window.size > 0 ? std::min(past + tokens, window.size) : past + tokens;
  if (rows < 1 || keys < 1 || rows % tokens != 0 || flops % tile != 0 || keys < seen)
    return flops;
  return flops / tile * (rows / tokens) * causal_scores(tokens, past, window);
}

}  // namespace ridge::llm
