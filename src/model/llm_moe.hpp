// Routed-expert nodes of graphs built by build_llm, for timing a layer's experts as one grouped kernel per op
// (vLLM's fused_moe, Megatron-LM --moe-grouped-gemm) instead of HF eager's kernel per expert, with the routing
// weight in the down projection's epilogue and the top-k sum one kernel. Shared by the serving and training analyses.
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

/// What a fused MoE runtime makes of a node under --moe grouped (vLLM's fused_moe; Megatron-LM's grouped GEMMs and
/// its unpermute): the kernel the node runs in and how much of the node's own traffic that kernel still moves.
struct GroupedPart {
  enum class Bytes { All, None, Addend };
  std::string kernel;       ///< "" : not part of a grouped kernel
  Bytes bytes = Bytes::All; ///< All; None (an epilogue: the routing weight applied as the down projection writes);
                            ///< Addend (a later add of the top-k sum: only its new addend is read, a third)
};

/// The grouped kernel of a node: an op of one routed expert joins its layer's kernel of that op
/// (grouped_expert_kernel); the routing weight's multiply of an expert's output (`routing_after`: not llama4_text,
/// which scales the inputs) joins the down projection's kernel as its epilogue; the adds summing each token's k
/// expert outputs (index_add_1 .. index_add_{k-1}) are one moe_sum kernel reading the k outputs once.
inline GroupedPart grouped_part(const std::string& name, bool routing_after) {
  GroupedPart p;
  p.kernel = grouped_expert_kernel(name);
  if (!p.kernel.empty()) {
    static const std::string kRouting = ".mul_routing";
    if (routing_after && p.kernel.ends_with(kRouting)) {
      p.kernel = p.kernel.substr(0, p.kernel.size() - kRouting.size()) + ".down_proj";
      p.bytes = GroupedPart::Bytes::None;
    }
    return p;
  }
  static const std::string kAdd = ".index_add_";
  const size_t at = name.rfind(kAdd);
  if (at == std::string::npos || at + kAdd.size() >= name.size()) return p;
  for (size_t i = at + kAdd.size(); i < name.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return p;
  p.kernel = name.substr(0, at) + ".moe_sum";
  p.bytes = GroupedPart::Bytes::Addend;
  return p;
}

}  // namespace ridge::llm
