// Roles of the attention-core nodes of graphs built by build_llm, for costing them as one fused kernel
// (FlashAttention-style: the score tensor never reaches DRAM). Shared by the serving and training analyses.
#pragma once
#include <string>

#include "ridge/graph.hpp"

namespace ridge::llm {

/// Scores: QK^T (reads Q and K, its output stays on chip); Elementwise: scaling, mask, softmax (no DRAM traffic
/// when fused); Output: SV (reads V and writes O, not the scores); None: any other node.
enum class AttnRole : uint8_t { None, Scores, Elementwise, Output };

inline AttnRole attention_role(const Node& n) {
  const std::string& m = n.module;
  auto ends = [](const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (!(ends(m, ".self_attn") || ends(m, ".attn") || ends(m, ".attention") || ends(m, ".self_attention")))
    return AttnRole::None;
  const std::string local = n.name.size() > m.size() ? n.name.substr(m.size() + 1) : "";
  if (local == "matmul") return AttnRole::Scores;
  if (local == "matmul_1") return AttnRole::Output;
  if (local == "mul" || local == "add_mask" || local == "softmax" || local.rfind("repeat_kv", 0) == 0 ||
      local.rfind("softcap_", 0) == 0 || local.rfind("sinks_", 0) == 0)
    return AttnRole::Elementwise;  // repeat_kv: a fused kernel indexes the shared K/V heads instead of copying;
                                   // soft-capping runs inside FlashAttention-2 (its softcap argument), and
                                   // attention sinks inside the kernels that serve gpt-oss
  return AttnRole::None;
}

/// The core's two matmuls (QK^T and SV): the FLOPs a fused attention kernel's utilization is quoted on.
inline bool attention_matmul(const Node& n) {
  const AttnRole r = attention_role(n);
  return r == AttnRole::Scores || r == AttnRole::Output;
}

}  // namespace ridge::llm
