// Published LLM FLOPs/parameter formulas of other sources, as exact integers (docs/llm.md cites each).
#include <fmt/format.h>

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

ZeroMemory zero_model_state_bytes(Count params, int stage, int64_t dp, int64_t k) {
  // Rajbhandari et al. 2020: (2 + 2 + K) Psi, with stage 1 / 2 / 3 dividing the K Psi / + 2 Psi / + 2 Psi by Nd.
  auto shard = [&](Count bytes, bool sharded) { return sharded ? (bytes + dp - 1) / dp : bytes; };
  return {shard(2 * params, stage >= 3), shard(2 * params, stage >= 2), shard(Count{k} * params, stage >= 1)};
}

Count korthikanti_activation_bytes_per_layer(int64_t seq, int64_t micro_batch, int64_t hidden, int64_t heads, int64_t tp,
                                             Recompute recompute, bool sequence_parallel) {
  const Count s = seq, b = micro_batch, h = hidden, a = heads, t = tp;
  if (sequence_parallel) switch (recompute) {
      case Recompute::None: return s * b * (34 * h + 5 * a * s) / t;
      case Recompute::Selective: return s * b * h * 34 / t;
      case Recompute::Full: return 2 * s * b * h / t;
    }
  switch (recompute) {
    case Recompute::None: return s * b * (h * (10 * t + 24) + 5 * a * s) / t;
    case Recompute::Selective: return s * b * h * (10 * t + 24) / t;
    case Recompute::Full: return 2 * s * b * h;
  }
  return 0;
}

std::vector<LlmConventionRow> llm_convention_rows(const LlmConfig& c, const Graph& g, int64_t batch, int64_t seq) {
  const Count params = llm_params(c).total, tokens = Count{batch} * seq;
  auto giga = [](Count v) { return to_double(v) / 1e9; };
  std::vector<LlmConventionRow> rows;
  const Count cal = calflops_forward_flops(g);
  rows.push_back({"calflops", cal, "FLOP", fmt::format("{:.2f} GFLOPS", giga(cal)),
                  "F.linear and torch.matmul 2 MACs, softmax/silu/gelu one per input, layer_norm 5; Python "
                  "operators (*, +), pow, rsqrt, mean not patched (0)"});
  rows.push_back({"megatron-paper", megatron_iteration_flops(batch, seq, c.num_layers, c.hidden_size, c.vocab_size),
                  "FLOP", "", "Narayanan et al. 2021 eq. 3: forward + backward + full recomputation of a GPT block "
                  "(4h MLP, MHA), 96 B s l h^2 (1 + s/6h + V/16lh); ignores GQA, gated MLPs and norms"});
  rows.back().as_printed = fmt::format("{:.4g} FLOPs per iteration", to_double(rows.back().total));
  const Count palm = palm_flops_per_token(params, c.num_layers, c.num_heads, c.head_dim, seq) * tokens;
  rows.push_back({"palm", palm, "FLOP", fmt::format("{:.4g} model FLOPs per iteration", to_double(palm)),
                  "Chowdhery et al. 2022 App. B: (6 N + 12 L H Q T) per token, training (forward + backward), "
                  "embedding parameters included, attention not halved for causality"});
  rows.push_back({"transformer-math-101 (2PD)", 2 * params * tokens, "FLOP",
                  fmt::format("C_forward = 2PD = {:.4g}", to_double(2 * params * tokens)),
                  "EleutherAI 2023: forward = 2 x parameters x tokens (no attention-score term); training 6PD"});
  rows.push_back({"transformer-math-101 (6PD)", 6 * params * tokens, "FLOP",
                  fmt::format("C = 6PD = {:.4g}", to_double(6 * params * tokens)), "forward 2PD + backward 4PD"});
  for (int stage = 0; stage <= 3; ++stage) {
    const Count b = zero_model_state_bytes(params, stage, 64).total();
    rows.push_back({fmt::format("zero-{} (Nd 64)", stage), b, "byte", fmt::format("{:.1f} GB", to_double(b) / 1e9),
                    "Rajbhandari et al. 2020: model states per GPU with mixed-precision Adam, (2 + 2 + 12) Psi, "
                    "stage 1/2/3 shard optimizer / + gradients / + weights over Nd = 64 GPUs; activations not counted"});
  }
  return rows;
}

}  // namespace ridge
