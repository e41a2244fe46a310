// Published LLM FLOPs/parameter formulas of other sources, as exact integers (docs/llm.md cites each).
#include "ridge/llm_analysis.hpp"

namespace ridge {

Count megatron_iteration_flops(int64_t batch, int64_t seq, int64_t layers, int64_t hidden, int64_t vocab) {
  // 96 B s l h^2 (1 + s/6h + V/16lh) = 96 B s l h^2 + 16 B s^2 l h + 6 B s h V: an integer.
  const Count B = batch, s = seq, l = layers, h = hidden, V = vocab;
  return 96 * B * s * l * h * h + 16 * B * s * s * l * h + 6 * B * s * h * V;
}

Count megatron_params(int64_t layers, int64_t hidden, int64_t vocab, int64_t seq) {
  const Count l = layers, h = hidden;
  return 12 * l * h * h + 13 * l * h + (Count{vocab} + seq) * h;
}

Count palm_flops_per_token(Count params, int64_t layers, int64_t heads, int64_t head_dim, int64_t seq) {
  return 6 * params + Count{12} * layers * heads * head_dim * seq;
}

Count calflops_forward_flops(const Graph& g) {
  const ModelCost mc = estimate(g);
  Count total = 0;
  for (const auto& nc : mc.nodes) {
    const Node& n = g.nodes[nc.node];
    const Count in = n.inputs.empty() || n.inputs[0] < 0 ? 0 : g.value(n.inputs[0]).shape.elements();
    switch (n.op) {
      case OpKind::Gemm:
      case OpKind::MatMul: total += 2 * nc.cost.macs; break;  // F.linear (bias not added), torch.matmul
      case OpKind::Softmax: total += in; break;               // F.softmax
      case OpKind::Gelu:
      case OpKind::Relu: total += in; break;                  // F.gelu, F.relu
      case OpKind::LayerNormalization: total += 5 * in; break;  // F.layer_norm with affine
      case OpKind::Sigmoid:                                   // nn.SiLU -> F.silu (x * sigmoid(x) here)
        if (n.module.size() >= 6 && n.module.compare(n.module.size() - 6, 6, "act_fn") == 0) total += in;
        break;
      default: break;  // tensor operators (*, +, pow, rsqrt, mean, cat, neg) are not patched by calflops
    }
  }
  return total;
}

}  // namespace ridge
