// Routed-expert nodes of graphs built by build_llm, for timing a layer's experts as one grouped kernel per op
// (vLLM's fused_moe, Megatron-LM --moe-grouped-gemm) instead of HF eager's kernel per expert. Shared by the
// serving and training analyses.
#pragma once
#include <cctype>
#include <string>

namespace ridge::llm {

/// For a node of one routed expert ("model.layers.3.mlp.experts.17.up_proj"), the name of its layer's grouped
/// kernel ("model.layers.3.mlp.experts.up_proj"); "" for any other node (shared experts included).
inline std::string grouped_expert_kernel(const std::string& name) {
  static const std::string kExperts = ".experts.";
  const size_t at = name.find(kExperts);
  if (at == std::string::npos) return "";
  const size_t digits = at + kExperts.size();
  size_t end = digits;
  while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end]))) ++end;
  if (end == digits || end >= name.size() || name[end] != '.') return "";
  return name.substr(0, digits) + name.substr(end + 1);
}

}  // namespace ridge::llm
