// Published LLM FLOPs/parameter formulas of other sources, as exact integers (docs/llm.md cites each).
#include <fmt/format.h>

#include <cmath>
#include <string_view>

#include "ridge/error.hpp"
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

ZeroMemory zero_model_state_bytes(Count params, int stage, int64_t dp, int64_t k, int64_t weight_bytes,
                                  int64_t gradient_bytes) {
  // Rajbhandari et al. 2020: (2 + 2 + K) Psi, with stage 1 / 2 / 3 dividing the K Psi / + 2 Psi / + 2 Psi by Nd.
  auto shard = [&](Count bytes, bool sharded) { return sharded ? (bytes + dp - 1) / dp : bytes; };
  return {shard(Count{weight_bytes} * params, stage >= 3), shard(Count{gradient_bytes} * params, stage >= 2),
          shard(Count{k} * params, stage >= 1)};
}

TrainOptions with_training_precision(TrainOptions o, std::string_view name, bool compute_given) {
  refuse_precision_with_compute(name, compute_given);
  const PrecisionMode& mode = require_training_mode(require_precision_mode(name));
  o.precision = mode;
  o.compute = mode.compute;
  return o;
}

TrainStateBytes train_state_bytes(const TrainOptions& o) {
  TrainStateBytes b;
  if (o.precision) {
    const PrecisionMode& m = *o.precision;
    b.weights = m.weight_bytes, b.gradients = m.gradient_bytes, b.allreduce = m.allreduce_bytes;
    b.optimizer = m.master_bytes + 2 * m.optimizer_state_bytes;  // Adam: two states
    b.activations = m.activation_dtype;
    auto type = [](int bytes, DType half) { return std::string(dtype_name(bytes >= 4 ? DType::F32 : half)); };
    b.weights_type = type(m.weight_bytes, m.activation_dtype);
    b.gradients_type = type(m.gradient_bytes, m.activation_dtype);
    const std::string state = type(m.optimizer_state_bytes, m.activation_dtype);
    b.optimizer_label = m.master_bytes > 0 ? fmt::format("Adam: fp32 master + 2 {} moments", state)
                                           : fmt::format("Adam: 2 {} moments (the weights are the master)", state);
    return b;
  }
  const DType act = precision_info(o.compute).dtype;
  const int64_t e = dtype_bytes(act);
  b.weights = b.gradients = b.allreduce = e;
  b.activations = act;
  b.optimizer = e >= 4 ? 8 : 12;
  b.weights_type = b.gradients_type = std::string(dtype_name(act));
  b.optimizer_label = e >= 4 ? "Adam: 2 fp32 moments" : "Adam: fp32 master + 2 moments";
  return b;
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

Count llm_analysis_forward_flops(const LlmConfig& c, int64_t batch, int64_t seq) {
  // analysis.py: attn 4Bsh^2 + 4Bsh^2 / (H / kv) + 4Bs^2h, mlp (6 | 4) B s h^2 x (I / h), logits 2BshV.
  const Count B = batch, s = seq, h = c.hidden_size, I = c.intermediate_size;
  const Count attn = 4 * B * s * h * h + 4 * B * s * h * h * c.num_kv_heads / c.num_heads + 4 * B * s * s * h;
  const Count mlp = (c.gated_mlp ? 6 : 4) * B * s * h * I;
  return (attn + mlp) * c.num_layers + 2 * B * s * h * c.vocab_size;
}

Count megatron_code_iteration_flops(const LlmConfig& c, int64_t batch, int64_t seq, int64_t vocab_multiple) {
  const Count B = batch, s = seq, h = c.hidden_size, f = c.gated_mlp ? 3 : 2;
  const Count q = Count{c.num_heads} * c.head_dim, kv = Count{c.num_kv_heads} * c.head_dim;
  const Count vocab = (c.vocab_size + vocab_multiple - 1) / vocab_multiple * vocab_multiple;
  const Count moe_layers = c.sparse_layer_count();
  const Count dense_layers = c.num_layers - moe_layers;
  const Count mlp = 6 * h * (Count{c.intermediate_size} * f * dense_layers +
                             (Count{c.intermediate_size} * c.experts_per_token + c.shared_expert_intermediate_size) * f *
                                 moe_layers);
  const Count attn = 6 * (h * (q + 2 * kv) + q * h) * c.num_layers;
  // QK^T and SV: 2 x 2 B s^2 q forward, x 3 with the backward, halved for the causal mask (an encoder: whole).
  return B * s * (mlp + attn + 6 * h * vocab) + B * s * s * (c.causal ? 6 : 12) * q * c.num_layers;
}

std::vector<LlmViewerLayer> llm_viewer_layers(const LlmConfig& c, const std::string& stage, int64_t batch, int64_t seq,
                                              int w_bits, int a_bits, int kv_bits) {
  const bool prefill = stage == "prefill";
  if (!prefill && stage != "decode") throw Error(fmt::format("LLM-Viewer stage '{}': expected prefill or decode", stage));
  const Count B = batch, s = seq, t = prefill ? s : 1, h = c.hidden_size, H = c.num_heads, kv = c.num_kv_heads;
  const Count d = h / H, I = c.intermediate_size;
  auto w = [&](Count n) { return n * w_bits / 8; };
  auto a = [&](Count n) { return n * a_bits / 8; };
  auto k = [&](Count n) { return n * kv_bits / 8; };
  std::vector<LlmViewerLayer> rows;
  const std::pair<const char*, std::pair<Count, Count>> linears[] = {
      {"q_proj", {h, h}}, {"k_proj", {h, h * kv / H}}, {"v_proj", {h, h * kv / H}}, {"out_proj", {h, h}},
      {"gate_proj", {h, I}}, {"up_proj", {h, I}}, {"down_proj", {I, h}}};
  for (const auto& [name, io] : linears) {
    const auto [ic, oc] = io;
    const bool kv_proj = std::string_view(name) == "k_proj" || std::string_view(name) == "v_proj";
    rows.push_back({name, ic * oc * B * t * 2, w(ic * oc), a(ic * B * t), kv_proj ? 0 : a(oc * B * t), 0,
                    kv_proj ? k(oc * B * t) : 0});
  }
  // Attention: decode queries one token against s cached ones; prefill s x s (no FlashAttention).
  const Count scores = B * H * t * s;
  rows.push_back({"qk_matmul", 2 * scores * d, 0, a(prefill ? s * d * B * kv : d * B * H), a(scores), k(s * d * B * kv), 0});
  rows.push_back({"sv_matmul", 2 * scores * d, 0, a(scores), a(t * d * B * H), k(s * d * B * kv), 0});
  rows.push_back({"softmax", 5 * scores, 0, a(scores), a(scores), 0, 0});
  for (const char* name : {"attn_norm", "mlp_norm"}) rows.push_back({name, 7 * B * h * t, 0, a(B * h * t), a(B * h * t), 0, 0});
  for (const char* name : {"attn_add", "mlp_add"}) rows.push_back({name, B * h * t, 0, a(B * h * t), a(B * h * t), 0, 0});
  rows.push_back({"mlp_act", 2 * B * h * t, 0, a(2 * B * h * t), a(B * h * t), 0, 0});
  const Count V = c.vocab_size;
  rows.push_back({"lm_head", B * h * V, w(h * V), a(h), a(V), 0, 0});
  return rows;
}

LlmViewerLayer llm_viewer_total(const LlmConfig& c, const std::string& stage, int64_t batch, int64_t seq, int w_bits,
                                int a_bits, int kv_bits) {
  const auto rows = llm_viewer_layers(c, stage, batch, seq, w_bits, a_bits, kv_bits);
  LlmViewerLayer total{"total"};
  for (size_t i = 0; i < rows.size(); ++i) {
    const Count times = i + 1 == rows.size() ? 1 : c.num_layers;  // lm_head once, the layer rows x layers
    total.ops += rows[i].ops * times;
    total.load_weight += rows[i].load_weight * times;
    total.load_act += rows[i].load_act * times;
    total.store_act += rows[i].store_act * times;
    total.load_kv_cache += rows[i].load_kv_cache * times;
    total.store_kv_cache += rows[i].store_kv_cache * times;
  }
  return total;
}

namespace {

// Python's str(round(x, 2)): two decimals with trailing zeros dropped, at least one kept (llm-analysis' numbers).
std::string python_round2(double x) {
  std::string t = fmt::format("{:.2f}", x);
  while (t.back() == '0' && t[t.size() - 2] != '.') t.pop_back();
  return t;
}

}  // namespace

std::string llm_analysis_number(Count v) {
  const char* const units[] = {" T", " G", " M", " K"};
  for (int i = 0; i < 4; ++i) {
    const double div = std::pow(1000.0, 4 - i);
    if (to_double(v) >= div) return python_round2(to_double(v) / div) + units[i];
  }
  return fmt::format("{}", static_cast<long long>(v));
}

std::string llm_viewer_number(Count v) {
  const double n = to_double(v);
  if (n > 1e14) return fmt::format("{:.0f}T", n / 1e12);
  if (n > 1e12) return fmt::format("{:.1f}T", n / 1e12);
  if (n > 1e11) return fmt::format("{:.0f}G", n / 1e9);
  if (n > 1e9) return fmt::format("{:.1f}G", n / 1e9);
  if (n > 1e8) return fmt::format("{:.0f}M", n / 1e6);
  if (n > 1e6) return fmt::format("{:.1f}M", n / 1e6);
  if (n > 1e5) return fmt::format("{:.0f}K", n / 1e3);
  if (n > 1e3) return fmt::format("{:.1f}K", n / 1e3);
  if (n >= 1) return fmt::format("{:.1f}", n);
  return fmt::format("{:.2f}", n);  // str_number's last branch: 0 prints "0.00"
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
  const Count mcode = megatron_code_iteration_flops(c, batch, seq);
  rows.push_back({"megatron-code", mcode, "FLOP", fmt::format("{:.4g} FLOPs per iteration", to_double(mcode)),
                  fmt::format("Megatron-LM training.py num_floating_point_operations: forward + backward (3 x 2 MACs) "
                              "of the GEMMs only, GQA, SwiGLU and top-k experts aware, QK^T and SV {}, vocabulary "
                              "padded to 128; no recomputation, norms and softmax 0",
                              c.causal ? "halved for the causal mask" : "whole (an encoder: no causal mask)")});
  // N: the parameters a token uses (an MoE model's active ones; the formula is for dense models).
  const Count palm = palm_flops_per_token(llm_params(c).active_per_token, c.num_layers, c.num_heads, c.head_dim, seq) * tokens;
  rows.push_back({"palm", palm, "FLOP", fmt::format("{:.4g} model FLOPs per iteration", to_double(palm)),
                  "Chowdhery et al. 2022 App. B: (6 N + 12 L H Q T) per token, training (forward + backward), "
                  "embedding parameters included (N: the active parameters of an MoE model), attention not halved for "
                  "causality"});
  const Count la = llm_analysis_forward_flops(c, batch, seq);
  rows.push_back({"llm-analysis", la, "FLOP", "prefill_num_flops_fwd_total: " + llm_analysis_number(la),
                  "cli99/llm-analysis: GEMMs at 2 per MAC with k/v scaled by kv/H (head_dim = h/H), QK^T and SV "
                  "not halved, one expert per token, logits; norms, softmax, activations and embeddings 0"});
  for (const char* stage : {"prefill", "decode"}) {
    const LlmViewerLayer v = llm_viewer_total(c, stage, batch, seq);
    rows.push_back({fmt::format("llm-viewer ({})", stage), v.ops, "OP",
                    fmt::format("OPs {}, memory access {}B", llm_viewer_number(v.ops), llm_viewer_number(v.memory_access())),
                    std::string_view(stage) == "prefill"
                        ? "hahnyuan/LLM-Viewer (Llama rule): linears 2 per MAC, QK^T/SV full s x s, softmax 5, norm 7, "
                          "add 1, act 2 (of the hidden size) per element, lm_head one token at 1 per MAC"
                        : "one decode token attending to seq cached tokens (the row's OPs per step)"});
  }
  // P: the parameters a token uses (an MoE model's active ones), as for PaLM's N.
  const Count active = llm_params(c).active_per_token;
  rows.push_back({"transformer-math-101 (2PD)", 2 * active * tokens, "FLOP",
                  fmt::format("C_forward = 2PD = {:.4g}", to_double(2 * active * tokens)),
                  "EleutherAI 2023: forward = 2 x parameters x tokens (no attention-score term; P: the active "
                  "parameters of an MoE model); training 6PD"});
  rows.push_back({"transformer-math-101 (6PD)", 6 * active * tokens, "FLOP",
                  fmt::format("C = 6PD = {:.4g}", to_double(6 * active * tokens)), "forward 2PD + backward 4PD"});
  const std::pair<const char*, Recompute> recomputes[] = {
      {"none", Recompute::None}, {"selective", Recompute::Selective}, {"full", Recompute::Full}};
  for (const auto& [name, r] : recomputes) {
    const Count act = korthikanti_activation_bytes_per_layer(seq, batch, c.hidden_size, c.num_heads, 1, r) * c.num_layers;
    rows.push_back({fmt::format("korthikanti-2022 ({})", name), act, "byte",
                    fmt::format("{:.2f} GB of activations", to_double(act) / 1e9),
                    "Korthikanti et al. 2022 eqs. 2-4 x layers at t = 1: 34 sbh + 5as^2b per GPT layer (selective "
                    "34 sbh, full 2 sbh), 2-byte activations, MHA with a 4h MLP assumed; embeddings and logits not counted"});
  }
  for (int stage = 0; stage <= 3; ++stage) {
    const Count b = zero_model_state_bytes(params, stage, 64).total();
    rows.push_back({fmt::format("zero-{} (Nd 64)", stage), b, "byte", fmt::format("{:.1f} GB", to_double(b) / 1e9),
                    "Rajbhandari et al. 2020: model states per GPU with mixed-precision Adam, (2 + 2 + 12) Psi, "
                    "stage 1/2/3 shard optimizer / + gradients / + weights over Nd = 64 GPUs; activations not counted"});
  }
  // A hybrid model's layers are not GPT layers (attention + MLP in every one): the formulas written for those
  // (Megatron, PaLM's attention term, llm-analysis, LLM-Viewer, Korthikanti) do not describe it and are left out.
  if (c.hybrid())
    std::erase_if(rows, [](const LlmConventionRow& r) {
      for (const char* gpt : {"megatron", "palm", "llm-analysis", "llm-viewer", "korthikanti"})
        if (r.name.rfind(gpt, 0) == 0) return true;
      return false;
    });
  return rows;
}

}  // namespace ridge
