// Training analysis of an LLM under a Megatron-style layout (tensor x pipeline x data parallel, ZeRO,
// activation recomputation): FLOPs from the graph's forward + backward, a roofline time per op of the
// tensor-parallel shard, 1F1B pipeline bubble, communication from the layout, and per-GPU memory with
// Korthikanti et al.'s activation formulas. Formulas and sources: docs/llm.md.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "model/llm_attention.hpp"
#include "model/llm_moe.hpp"
#include "ridge/error.hpp"
#include "ridge/llm_analysis.hpp"

namespace ridge {

namespace {

// Micro-batches per iteration on each data-parallel replica (m): global batch / (dp x micro-batch).
int64_t micro_batches(const TrainOptions& o) { return o.global_batch / (int64_t{o.dp} * o.micro_batch); }

// Selective recomputation (Korthikanti et al. 2022, sec. 4.2) recomputes the attention core: QK^T, scale,
// mask, softmax, attention over V.
bool attention_core(const Node& n) {
  return n.op == OpKind::MatMul || n.op == OpKind::Softmax || n.name.find("add_mask") != std::string::npos;
}

bool in_layers(const Node& n) {
  return n.name.find(".layers.") != std::string::npos || n.name.find(".h.") != std::string::npos ||
         n.name.find(".layer.") != std::string::npos;  // encoders: bert.encoder.layer.N, distilbert.transformer.layer.N
}

Count ceil_div(Count a, Count b) { return (a + b - 1) / b; }

// Extra forward passes of node `n` per micro-batch: full recomputation runs every layer's forward again; the
// attention core runs once more under selective recomputation, and under fused (Flash) attention, whose backward
// kernel recomputes the scores and softmax from Q, K and V (Dao et al. 2022, sec. 3.1) whatever else is recomputed
// (with both, once: FlashAttention is the selective recomputation of the core).
int recomputed_forwards(const Node& n, const TrainOptions& o) {
  if (!in_layers(n)) return 0;
  const int full = o.recompute == Recompute::Full ? 1 : 0;
  const int core = attention_core(n) && (o.fused_attention || o.recompute == Recompute::Selective) ? 1 : 0;
  return full + core;
}

// The activations kept per layer: fused attention keeps no score or softmax tensors (only Q, K, V and the output),
// i.e. what selective recomputation keeps (Korthikanti et al. 2022, eq. 6).
Recompute stored_activations(const TrainOptions& o) {
  return o.fused_attention && o.recompute == Recompute::None ? Recompute::Selective : o.recompute;
}

double p2p_time_s(Count bytes, const Interconnect& l) { return l.latency_s + to_double(bytes) / l.bandwidth_bytes_per_s; }

// Ring all-reduce of `bytes` over a data-parallel group on the cluster it spans (allreduce_time, the topology the
// rest of ridge uses): `ranks` members every `stride`-th data-parallel rank (the whole group: dp, 1; the replicas of
// one expert shard: dp / ep, ep). g of them share a node (the node's data-parallel ranks of one tp x pp replica,
// one in `stride` of them, g dividing the group), and the group gets its GPUs' share of the node's network
// adapters, so a ring leaving a node of 8 GPUs with 8 NICs crosses it on 8 links at once (NCCL's channels).
double dp_allreduce_time_s(Count bytes, const Device& d, const TrainOptions& o, int ranks, int stride = 1) {
  if (ranks <= 1 || bytes <= 0) return 0.0;
  const int per_node = std::max(1, o.gpus_per_node / std::max(1, o.tp * o.pp) / std::max(1, stride));
  ClusterTopology t;
  t.gpus_per_node = std::gcd(ranks, per_node);
  t.nodes = ranks / t.gpus_per_node;
  t.intra = gpu_link(d, true);
  if (t.nodes > 1) {
    t.inter = gpu_link(d, false);
    const int nics = d.node.nics_per_node > 0 ? d.node.nics_per_node : 1;
    t.nics_per_node = std::max(1, nics * t.gpus_per_node / std::max(1, o.gpus_per_node));
  }
  return allreduce_time(AllReduce::Ring, bytes, t).time_s;
}

// Bytes of a node when the attention core runs as one fused kernel: the score tensor never reaches DRAM.
Count fused_bytes(const Graph& g, const Node& n, const Cost& c) {
  switch (llm::attention_role(n)) {
    case llm::AttnRole::Scores: return c.bytes_read;
    case llm::AttnRole::Elementwise: return 0;
    case llm::AttnRole::Output: return c.bytes() - g.value(n.inputs[0]).bytes();
    case llm::AttnRole::None: break;
  }
  return c.bytes();
}

// `in` checked against `c` (one-line errors naming the flags), with dp and the global batch filled in.
TrainOptions checked_layout(const LlmConfig& c, const TrainOptions& in) {
  TrainOptions o = in;
  if (o.gpus < 1 || o.tp < 1 || o.pp < 1 || o.dp < 0 || o.cp < 1)
    throw Error("--gpus, --tp, --cp, --pp and --dp must be positive");
  const std::string cp_text = o.cp > 1 ? fmt::format(" x --cp {}", o.cp) : "";
  const int64_t model_parallel = int64_t{o.tp} * o.cp * o.pp;  // each factor is an int: no overflow in 64 bits
  if (o.dp == 0) {
    if (o.gpus % model_parallel != 0)
      throw Error(fmt::format("--gpus {} is not a multiple of --tp {}{} x --pp {}", o.gpus, o.tp, cp_text, o.pp));
    o.dp = static_cast<int>(o.gpus / model_parallel);
  }
  if (model_parallel * o.dp != o.gpus)
    throw Error(fmt::format("--tp {}{} x --pp {} x --dp {} = {} is not --gpus {}", o.tp, cp_text, o.pp, o.dp,
                            model_parallel * o.dp, o.gpus));
  if (o.cp > 1 && o.seq % o.cp != 0)
    throw Error(fmt::format("--cp {}: does not divide --seq {} (each context-parallel GPU holds seq / cp tokens)",
                            o.cp, o.seq));
  if (o.zero < 0 || o.zero > 3) throw Error(fmt::format("--zero {}: use 0, 1, 2 or 3", o.zero));
  if (o.micro_batch < 1) throw Error(fmt::format("--micro-batch {}: must be positive", o.micro_batch));
  if (!(o.token_budget >= 0) || !std::isfinite(o.token_budget))
    throw Error(fmt::format("--tokens {}: must be a positive, finite number of tokens", o.token_budget));
  if (o.global_batch < 0) throw Error(fmt::format("--global-batch {}: must be positive", o.global_batch));
  if (o.global_batch == 0) o.global_batch = int64_t{o.dp} * o.micro_batch;
  if (o.global_batch % (int64_t{o.dp} * o.micro_batch) != 0)
    throw Error(fmt::format("--global-batch {} is not a multiple of --dp {} x --micro-batch {}", o.global_batch, o.dp,
                            o.micro_batch));
  if (o.pp > c.num_layers)
    throw Error(fmt::format("--pp {}: more pipeline stages than the {} layers of {}", o.pp, c.num_layers, c.name));
  // Every virtual stage holds a layer: the smallest stage has L / p of them.
  if (o.interleave < 1 || (o.interleave > 1 && (o.pp < 2 || c.num_layers / o.pp < o.interleave)))
    throw Error(fmt::format("--interleave {}: needs --pp >= 2 and at least one layer per virtual stage ({} layers "
                            "over --pp {})", o.interleave, c.num_layers, o.pp));
  // The interleaved schedule runs micro-batches in groups of p (Megatron-LM requires their number to be a
  // multiple of pp); fewer than p in flight would also not hold the activations its memory penalty counts.
  if (const int64_t m = micro_batches(o); o.interleave > 1 && m % o.pp != 0)
    throw Error(fmt::format("--interleave {}: the interleaved schedule needs a number of micro-batches per iteration "
                            "that --pp {} divides (Megatron-LM's rule); --global-batch {} / (dp {} x micro-batch {}) "
                            "= {}", o.interleave, o.pp, o.global_batch, o.dp, o.micro_batch, m));
  if (o.seq < 1 || o.seq > c.max_positions)
    throw Error(fmt::format("--seq {} is out of range for {} (1..{})", o.seq, c.name, c.max_positions));
  if (o.ep < 1 || o.dp % o.ep != 0 || (o.ep > 1 && (!c.moe() || c.num_experts % o.ep != 0)))
    throw Error(fmt::format("--ep {}: needs a mixture-of-experts model whose experts and data-parallel size {} it "
                            "divides", o.ep, o.dp));
  return o;
}

// The decoder layers of pipeline stage k of p: L / p each; the L mod p extra layers of an uneven split go to the
// middle stages first (the first stage also holds the embedding, the last the head: Llama 3 405B's 126 layers over
// 16 stages leave the first and the last one layer short), then to the first.
int64_t layers_of_stage(int64_t L, int64_t p, int64_t k) {
  if (p == 1) return L;
  const int64_t q = L / p, r = L % p;
  if (k > 0 && k < p - 1) return q + (k <= r ? 1 : 0);
  return q + (k == 0 && r > p - 2 ? 1 : 0);
}

// One pipeline stage's parameters on one GPU (the tensor-parallel shard; 1/ep of every routed expert).
struct StageParams {
  int64_t first_layer = 0;
  int64_t layers = 0;
  int64_t sparse_layers = 0;  ///< of `layers`, those with routed experts
  Count dense = 0;    ///< everything but the routed experts
  Count experts = 0;  ///< the routed experts' part (1/ep of every expert)
  Count total() const { return dense + experts; }
};
// Every stage's parameters, the one place they are computed: its layers' share of the decoder layers, plus the
// embedding on the first stage and the final norm and output layer on the last (Megatron-LM's placement; with
// pp > 1 a tied output layer keeps its own copy of the word embedding on the last stage, as Megatron-LM does).
std::vector<StageParams> stage_params(const LlmConfig& c, const TrainOptions& o) {
  const LlmConfig shard = tensor_parallel_shard(c, o.tp);
  const LlmParams sp = llm_params(shard);
  const int64_t L = c.num_layers, p = o.pp;
  const Count head = sp.total - sp.embedding - sp.layers;  // final norm, output layer (and OPT's projections)
  const Count tied_copy =
      p > 1 && shard.tied_embeddings ? shard.vocab_size * (shard.embed_proj_dim > 0 ? shard.embed_proj_dim : shard.hidden_size) : 0;
  std::vector<StageParams> stages(static_cast<size_t>(p));
  for (int64_t k = 0; k < p; ++k) {
    StageParams& s = stages[static_cast<size_t>(k)];
    if (k > 0) s.first_layer = stages[static_cast<size_t>(k - 1)].first_layer + stages[static_cast<size_t>(k - 1)].layers;
    s.layers = layers_of_stage(L, p, k);
    // Its own layers, dense or sparse (DeepSeek's first dense layers sit on the first stage); expert parallelism
    // keeps 1/ep of every routed expert on a GPU.
    for (int64_t l = s.first_layer; l < s.first_layer + s.layers; ++l) {
      const LayerParams layer = llm_layer_params(shard, l);
      s.dense += layer.dense;
      s.experts += layer.experts / o.ep;
      s.sparse_layers += c.sparse_layer(l) ? 1 : 0;
    }
    s.dense += (k == 0 ? sp.embedding : 0) + (k == p - 1 ? head + tied_copy : 0);
  }
  return stages;
}

// Activations of one MoE layer and micro-batch (2-byte, as Korthikanti counts them): the GPT block's figure with its
// 4h MLP's tensor-parallel part (the GeLU input and the second linear's input, 16 s b h / t) replaced by what the
// routed tokens store: k copies of each token's expert input (2 s b k h), per copy the gate and up outputs, the
// activation and the down projection's input at the expert width I (8 s b k I / t; a plain MLP: fc1's output and
// fc2's input, 4 s b k I / t), and the router logits (2 s b E). With sequence parallelism the parts outside the
// tensor-parallel region are split by t too; full recomputation keeps the layer input only, as in a dense layer.
Count moe_activation_bytes_per_layer(const LlmConfig& c, const TrainOptions& o, Recompute stored) {
  const Count s = o.seq, b = o.micro_batch, h = c.hidden_size, a = c.num_heads, t = o.tp, k = c.experts_per_token;
  const Count E = c.num_experts, I = c.intermediate_size;
  if (stored == Recompute::Full)
    return korthikanti_activation_bytes_per_layer(o.seq, o.micro_batch, h, a, o.tp, stored, o.sequence_parallel);
  const Count scores = stored == Recompute::None ? 5 * a * s * s * b : 0;  // 5 a s^2 b, split by t
  const Count experts = (c.gated_mlp ? 8 : 4) * s * b * k * I;               // split by t
  const Count routed = 2 * s * b * k * h + 2 * s * b * E;                    // expert input copies + router logits
  if (o.sequence_parallel) return (18 * s * b * h + scores + experts + routed) / t;
  return (10 * t * s * b * h + 8 * s * b * h + scores + experts) / t + routed;
}

// Activations of hybrid layer `l` and one micro-batch, 2-byte units as Korthikanti's (docs/llm.md, "Training a
// hybrid"): R replicated over the tensor-parallel group, S split by it (with sequence parallelism both are split);
// full recomputation keeps the layer's input only. Every block stores its norm's input (2 s b h). A Mamba-2 mixer
// what mamba_ssm's training kernel (mamba_split_conv1d_scan_combined) saves: the in_proj input (2 s b h, R), its
// output z|x|B|C|dt (2 s b (I + conv_dim + H)) and the gated norm's float32 rstd per group (4 s b G). Attention as
// Korthikanti's block with GQA widths: the QKV input and the output dropout mask (3 s b h, R), Q, K, V and the output
// projection's input (2 s b (2 H hd + 2 kv hd)), with an output gate the gate and the ungated output (4 s b H hd),
// and, unless recomputed or fused, the scores (5 H s^2 b). A Gated DeltaNet what its layer and flash-linear-
// attention's chunk_gated_delta_rule save: the in_proj input (2 s b h, R), the projections' outputs q|k|v|z and b|a
// (2 s b (C + Vw + 2 Hv), C the conv width), the conv output q|k|v (2 s b C), g and beta in float32 (8 s b Hv), the
// chunks' triangular inverse (2 s b Hv x 64), the rule's output and the out_proj input (4 s b Vw) and the norm's
// float32 rstd (4 s b Hv). An MLP: its input and dropout mask (3 s b h, R) and its activation's input and the down
// projection's (4 s b I). An MoE block as moe_activation_bytes_per_layer's routed part plus its shared MLP
// (4 s b I_shared).
Count hybrid_activation_bytes(const LlmConfig& c, int64_t l, const TrainOptions& o, Recompute stored) {
  const Count s = o.seq, b = o.micro_batch, h = c.hidden_size, t = o.tp;
  const Count mlp_per_width = c.gated_mlp ? 8 : 4;  // gate and up outputs, the activation, the down input; or two
  if (stored == Recompute::Full) return o.sequence_parallel ? 2 * s * b * h / t : 2 * s * b * h;
  Count r = 0, split = 0;
  auto block = [&](LlmBlock kind) {
    r += 2 * s * b * h;  // its norm's input
    switch (kind) {
      case LlmBlock::Mamba:
        r += 2 * s * b * h;
        split += 2 * s * b * (c.ssm_inner() + c.conv_dim() + c.ssm_heads) + 4 * s * b * c.ssm_groups;
        break;
      case LlmBlock::Attention:
        r += 3 * s * b * h;
        split += 2 * s * b * (2 * c.num_heads * c.head_dim + 2 * c.num_kv_heads * c.head_dim) +
                 (c.attn_output_gate ? 4 * s * b * c.num_heads * c.head_dim : 0) +
                 (stored == Recompute::None ? 5 * c.num_heads * s * s * b : 0);
        break;
      case LlmBlock::Mamba1: {  // what mamba_inner_fn saves: xz, the conv output, x_proj's and dt_proj's, out_proj's input
        const Count I = c.mamba1_inner, ssm = c.dt_rank + 2 * c.ssm_state;
        r += 2 * s * b * h;
        split += 2 * s * b * (2 * I + I + ssm + I + I) +
                 (c.mamba1_norms == LlmConfig::Mamba1Norms::None ? 0 : 2 * s * b * ssm);  // the dt, B, C norms' outputs
        break;
      }
      case LlmBlock::DeltaNet: {
        const Count C = c.gdn_conv_dim(), Vw = c.gdn_value_width(), Hv = c.gdn_value_heads;
        r += 2 * s * b * h;
        split += 2 * s * b * (C + Vw + 2 * Hv) + 2 * s * b * C + 8 * s * b * Hv + 2 * s * b * Hv * c.gdn_chunk +
                 4 * s * b * Vw + 4 * s * b * Hv;
        break;
      }
      case LlmBlock::Mlp:
        r += 3 * s * b * h;
        split += mlp_per_width * s * b * c.dense_width();
        break;
      case LlmBlock::Moe:
        r += 3 * s * b * h + 2 * s * b * c.experts_per_token * h + 2 * s * b * c.num_experts;
        split += mlp_per_width * s * b * (c.experts_per_token * c.intermediate_size + c.shared_expert_intermediate_size);
        break;
    }
  };
  block(c.blocks[static_cast<size_t>(l)]);
  if (c.hybrid_decoder) block(c.sparse_layer(l) ? LlmBlock::Moe : LlmBlock::Mlp);  // a decoder layer's second half
  return o.sequence_parallel ? (r + split) / t : r + split / t;
}

// Memory per GPU under the checked layout `o`: the pipeline stage that needs the most (the first, with the embedding
// and the most micro-batches in flight, or the last, with the output layer), and the parameters of the stage that
// holds the most (the gradients the data-parallel all-reduce moves).
struct StageMemory {
  TrainMemory memory;
  Count psi = 0;         ///< parameters of the largest stage on one GPU
  Count expert_psi = 0;  ///< the routed experts' part of psi (1/ep of every expert)
};
StageMemory stage_memory(const LlmConfig& c, const TrainOptions& o) {
  const int64_t m = micro_batches(o), p = o.pp;
  // ZeRO shards dense states over the data-parallel group with its context-parallel ranks, and an expert shard's
  // states over the dp cp / ep ranks that hold that shard (DeepSpeed-MoE's expert data-parallel group).
  const Count dp = Count{o.dp} * o.cp;
  const TrainStateBytes bytes = train_state_bytes(o);
  // Every stored tensor is split by token over cp; the scores are (seq / cp) x seq.
  const Count per_layer =
      ceil_div(korthikanti_activation_bytes_per_layer(o.seq, o.micro_batch, c.hidden_size, c.num_heads, o.tp,
                                                      stored_activations(o), o.sequence_parallel),
               o.cp);
  const Count per_moe_layer = c.moe() ? ceil_div(moe_activation_bytes_per_layer(c, o, stored_activations(o)), o.cp) : 0;
  StageMemory best;
  int64_t stage = 0;
  for (const StageParams& sp : stage_params(c, o)) {
    const ZeroMemory dense =
        zero_model_state_bytes(sp.dense, o.zero, dp, bytes.optimizer, bytes.weights, bytes.gradients);
    const ZeroMemory expert =
        zero_model_state_bytes(sp.experts, o.zero, dp / o.ep, bytes.optimizer, bytes.weights, bytes.gradients);
    TrainMemory mem;
    mem.weights = dense.weights + expert.weights;
    mem.gradients = dense.gradients + expert.gradients;
    mem.optimizer = dense.optimizer + expert.optimizer;
    // 1F1B: stage s holds the activations of min(p - s, m) micro-batches (Korthikanti counts 2-byte activations);
    // its sparse layers store what their routed tokens do.
    // A hybrid's layers differ by kind: each counted on its own.
    Count stage_activations = 0;
    if (c.hybrid())
      for (int64_t l = sp.first_layer; l < sp.first_layer + sp.layers; ++l)
        stage_activations += hybrid_activation_bytes(c, l, o, stored_activations(o));
    else
      stage_activations = per_layer * (sp.layers - sp.sparse_layers) + per_moe_layer * sp.sparse_layers;
    mem.activations = stage_activations * std::min<int64_t>(p - stage, m) * dtype_bytes(bytes.activations) / 2;
    // The interleaved schedule's first stage holds activations for more micro-batches: x (1 + (p - 1) / (p v))
    // (Korthikanti et al. 2022, sec. 4.2.3; Megatron-LM's theoretical_memory_usage.py, its interleaved penalty).
    if (o.interleave > 1) {
      const Count pv = Count{p} * o.interleave;
      mem.activations = ceil_div(mem.activations * (pv + p - 1), pv);
    }
    if (stage == 0 || mem.total() > best.memory.total()) best.memory = mem;
    if (stage == 0 || sp.total() > best.psi) best.psi = sp.total(), best.expert_psi = sp.experts;
    ++stage;
  }
  return best;
}

// Whether `m` fits in one GPU of `d` (a device that states no memory takes anything).
bool fits_on(const TrainMemory& m, const Device& d) { return d.memory_bytes == 0 || m.total() <= d.memory_bytes; }

}  // namespace

std::optional<Recompute> parse_recompute(std::string_view name) {
  if (name == "none") return Recompute::None;
  if (name == "selective") return Recompute::Selective;
  if (name == "full") return Recompute::Full;
  return std::nullopt;
}

std::optional<int> parse_zero_stage(std::string_view text) {
  if (text == "fsdp") return 3;
  if (text.size() == 1 && text[0] >= '0' && text[0] <= '3') return text[0] - '0';
  return std::nullopt;
}

TrainResult analyze_training(const LlmConfig& c, const Device& d, const TrainOptions& in) {
  // Context parallelism splits a sequence over GPUs with ring attention; a Mamba-2 or Gated DeltaNet layer would
  // pass its state from rank to rank instead, which is not modelled.
  if (c.hybrid() && in.cp > 1)
    throw Error(fmt::format("--cp {}: context parallelism of the {} layers of {} is not modelled (ring attention "
                            "covers attention layers only); use --cp 1", in.cp,
                            c.gdn_value_heads > 0 ? "Gated DeltaNet" : c.mamba1_inner > 0 ? "Mamba-1" : "Mamba-2",
                            c.name));
  if (c.mamba1_inner > 0 && in.tp > 1)  // its x_proj all-reduce per layer and pass is not in the training model
    throw Error(fmt::format("--tp {}: tensor parallelism of the Mamba-1 mixers of {} is modelled for serving only; "
                            "use --tp 1 (data parallelism, ZeRO, pipeline stages)", in.tp, c.name));
  const TrainOptions o = checked_layout(c, in);
  const int64_t stage_layers = ceil_div(c.num_layers, int64_t{o.pp});  // the largest stage sets the pace
  const LlmConfig shard = tensor_parallel_shard(c, o.tp);
  const double peak = d.require_peak(o.compute, "--compute"), bw = d.dram_bandwidth();
  const TrainStateBytes kept = train_state_bytes(o);  // what --precision / --compute keep, and the activation type
  const DType act = kept.activations;
  const int64_t m = micro_batches(o), p = o.pp, L = c.num_layers;
  // Context parallelism: each of cp GPUs holds seq / cp tokens of a sequence. Every op but the attention core runs
  // on its own tokens; the core runs as a ring (Liu et al. 2023, Megatron-LM's context parallelism): cp blocks of
  // (seq / cp)^2 scores, one per K, V chunk passed around the ring, i.e. cp times the core of seq / cp tokens.
  const int64_t local_seq = o.seq / o.cp;

  TrainResult r;
  r.model = c.name;
  r.device = d.id;
  r.attention_layers = c.attention_layer_count();
  r.options = o;
  r.time_label = llm_time_label(o.calibration);
  r.micro_batches = m;
  r.layers_per_stage = stage_layers;

  // FLOPs: the whole model's graph at one micro-batch, forward + backward, times the micro-batches.
  LlmShape ms{o.micro_batch, o.seq, 0, act, false, true};
  {
    const Graph g = build_llm(c, ms);
    const ModelCost mc = estimate(g);
    Count recompute = 0;
    for (const auto& nc : mc.nodes) recompute += nc.cost.flops * recomputed_forwards(g.nodes[nc.node], o);
    const Count per_mb = mc.total.flops + mc.total.bwd_flops();
    const Count mbs = Count{o.global_batch / o.micro_batch};
    r.model_flops = per_mb * mbs;
    r.hardware_flops = (per_mb + recompute) * mbs;
  }
  // Time of one micro-batch through the whole shard: roofline per op, backward at its FLOPs and twice the bytes;
  // also by part (0: before the layers, the embedding; 1: the layers; 2: after them, final norm and output layer).
  double t_core_fwd = 0, t_core_bwd = 0;
  double t_part[3] = {0, 0, 0}, t_bwd_part[3] = {0, 0, 0};
  {
    LlmShape local = ms;
    local.tokens = local_seq;
    const Graph g = build_llm(shard, local);
    const ModelCost mc = estimate(g);
    // A fused kernel with a published utilization (--attention flash2) times the core's matmuls at it.
    const bool kernel = attention_kernel_applies(o);
    const std::optional<Calibration> timing = timing_calibration(o);
    // One entry per kernel: a node, or (--moe grouped) one op of a layer's routed experts summed (llm::grouped_part).
    struct Kernel {
      std::string name, cls;
      Count flops = 0, bwd_flops = 0, bytes = 0;
      int launches = 0, recomputed = 0;
      bool core = false;
      int part = 1;  // t_part's index
    };
    std::vector<Kernel> kernels;
    std::map<std::string, size_t> grouped_at;
    bool after_a_layer = false;
    for (const auto& nc : mc.nodes) {
      const Node& n = g.nodes[nc.node];
      const bool layer = in_layers(n);
      after_a_layer = after_a_layer || layer;
      const Count bytes = o.fused_attention ? fused_bytes(g, n, nc.cost) : nc.cost.bytes();
      // Views move nothing and launch nothing; every other node is one kernel forward and one backward.
      const OpFamily fam = op_family(n.op);
      const int launches = fam == OpFamily::View || fam == OpFamily::Source ? 0 : 1;
      // A fused core executes the scores the causal mask and the layer's window keep (under context parallelism:
      // as in the diagonal block, about half of the ring's blocks are masked whole); an encoder's, every score.
      auto executed = [&](Count flops) {
        return o.fused_attention ? llm::fused_core_flops(g, n, flops, local_seq, 0, llm::window_at(c, n.name), c.causal)
                                 : flops;
      };
      Kernel k{n.name, kernel && llm::attention_matmul(n) ? "attention" : op_class(g, n), executed(nc.cost.flops),
               executed(nc.cost.bwd_flops()), bytes, launches, recomputed_forwards(n, o),
               llm::attention_role(n) != llm::AttnRole::None, layer ? 1 : after_a_layer ? 2 : 0};
      if (const llm::GroupedPart part = o.grouped_experts ? llm::grouped_part(n.name, !c.router_topk_sigmoid)
                                                          : llm::GroupedPart{};
          !part.kernel.empty()) {
        using Bytes = llm::GroupedPart::Bytes;
        const auto [it, first] = grouped_at.try_emplace(part.kernel, kernels.size());
        if (part.bytes == Bytes::None) k.bytes = 0;                // an epilogue moves nothing of its own
        if (part.bytes == Bytes::Addend && !first) k.bytes /= 3;  // a later add reads its addend only
        if (!first) {
          Kernel& sum = kernels[it->second];
          sum.flops += k.flops, sum.bwd_flops += k.bwd_flops, sum.bytes += k.bytes;
          sum.launches = std::max(sum.launches, k.launches);
          continue;
        }
        k.name = part.kernel;
      }
      kernels.push_back(std::move(k));
    }
    const Calibration* cal = timing ? &*timing : nullptr;
    for (const Kernel& k : kernels) {
      const int ring = k.core ? o.cp : 1;  // the core runs once per ring block
      const double f = ring * llm_op_time(k.flops, k.bytes, k.cls, k.launches, peak, bw, cal, nullptr, d.l2_bytes);
      // Backward: twice the forward bytes when calibrated (the fitted model); the uncalibrated bound charges what
      // a backward must move at least, the forward's bytes, and nothing for a pass-through (no backward FLOPs).
      const Count bwd_bytes = cal ? 2 * k.bytes : k.bwd_flops > 0 ? k.bytes : 0;
      const double b = k.bwd_flops > 0 || bwd_bytes > 0
                           ? ring * llm_op_time(k.bwd_flops, bwd_bytes, k.cls, k.launches, peak, bw, cal, nullptr,
                                                d.l2_bytes)
                           : 0.0;
      const TrainOp op{k.name, k.cls, k.flops * ring, k.bwd_flops * ring, k.bytes * ring, f, b, k.recomputed * f};
      if (k.core) {
        t_core_fwd += f;
        t_core_bwd += b;
      }
      t_part[k.part] += op.time_s();
      t_bwd_part[k.part] += b;
      if (k.launches > 0 || k.flops > 0 || k.bytes > 0) r.ops.push_back(op);
    }
  }
  // The largest stage's share of the layers (1 / p when the stages are even).
  const double stage_share = static_cast<double>(stage_layers) / static_cast<double>(L);
  // The slowest stage sets the pace: its layers, plus the embedding on the first and the head on the last.
  const std::vector<StageParams> stages = stage_params(c, o);
  double t_stage = 0, t_stage_bwd = 0;
  for (int64_t k = 0; k < p; ++k) {
    const double layers = static_cast<double>(stages[static_cast<size_t>(k)].layers) / static_cast<double>(L);
    auto of = [&](const double* part) { return layers * part[1] + (k == 0 ? part[0] : 0) + (k == p - 1 ? part[2] : 0); };
    if (of(t_part) > t_stage) t_stage = of(t_part), t_stage_bwd = of(t_bwd_part);
  }
  // 1F1B: (m + p - 1) stage slots; interleaved over v virtual stages the bubble shrinks to (p - 1) / v slots
  // (Narayanan et al. 2021, sec. 2.2.2) and every micro-batch crosses v times as many stage boundaries.
  const double v = o.interleave, slots = static_cast<double>(m) + static_cast<double>(p - 1) / v;
  r.compute_time_s = slots * t_stage;
  r.bubble_fraction = (static_cast<double>(p - 1) / v) / slots;

  const Count act_bytes = Count{o.micro_batch} * local_seq * c.hidden_size * dtype_bytes(act);
  // Communication inside a stage's work (TP, CP, EP) runs in each of the critical path's slots, which are stage
  // compute slots: m + (p - 1) / v of them, like the compute. Interleaved, a slot holds v virtual stages' work, so
  // it sends v activations forward and v gradients backward.
  if (o.tp > 1) {  // Megatron TP: 2 all-reduces per layer forward, 2 backward (+2 when the forward is recomputed);
                   // a hybrid layer's one mixer: 1, 1 (+1)
    const int per_layer = (o.recompute == Recompute::Full ? 6 : 4) / (c.single_block_layers() ? 2 : 1);
    const double t = o.tp_allreduce && o.tp <= o.gpus_per_node
                         ? allreduce_fit_time_s(*o.tp_allreduce, act_bytes)
                         : ring_allreduce_time_s(act_bytes, o.tp, gpu_link(d, o.tp <= o.gpus_per_node));
    r.tp_comm_s = slots * static_cast<double>(stage_layers) * per_layer * t;
  }
  if (p > 1) {  // one activation forward and one gradient backward per (virtual) stage boundary crossed in a slot
    const double t_p2p = p2p_time_s(act_bytes, gpu_link(d, o.tp * p <= o.gpus_per_node));
    // Megatron-LM overlaps these transfers with the next chunk's compute under the interleaved schedule (its
    // --overlap-p2p-communication, on by default there and forced off for plain 1F1B, which waits for its sends):
    // a send is exposed only where it outlasts one virtual stage's forward (activations) or backward (gradients).
    const bool overlap = o.interleave > 1;
    const double fwd_hidden = overlap ? (t_stage - t_stage_bwd) / v : 0.0;
    const double bwd_hidden = overlap ? t_stage_bwd / v : 0.0;
    r.pp_comm_s = v * slots * (std::max(0.0, t_p2p - fwd_hidden) + std::max(0.0, t_p2p - bwd_hidden));
  }
  if (o.cp > 1) {
    // Ring attention, per layer and micro-batch: cp - 1 steps each pass this GPU's K and V chunk to the next GPU
    // (forward and each recomputed forward) and K, V with dK, dV (backward); a step's transfer overlaps the
    // attention block of the chunk already held, so only the part longer than that block is exposed.
    const Count kv_chunk = 2 * Count{o.micro_batch} * local_seq * shard.num_kv_heads * c.head_dim * dtype_bytes(act);
    const Interconnect& l = gpu_link(d, int64_t{o.tp} * o.cp <= o.gpus_per_node);
    const double steps = o.cp - 1, layers = static_cast<double>(L), cp = o.cp;
    const double fwd = steps * std::max(0.0, p2p_time_s(kv_chunk, l) - t_core_fwd / layers / cp);
    const double bwd = steps * std::max(0.0, p2p_time_s(2 * kv_chunk, l) - t_core_bwd / layers / cp);
    const int forwards = o.recompute == Recompute::Full ? 2 : 1;
    r.cp_comm_s = slots * static_cast<double>(stage_layers) * (forwards * fwd + bwd);
  }

  const StageMemory sm = stage_memory(c, o);
  r.memory = sm.memory;
  const Count psi = sm.psi;
  r.device_memory_bytes = d.memory_bytes;
  r.fits = fits_on(r.memory, d);

  if (o.dp * o.cp > 1) {
    // Dense gradients over all of dp x cp (context-parallel ranks hold the same weights and see other tokens);
    // with --ep, each expert shard's over the dp cp / ep ranks that hold it.
    const Count expert_psi = o.ep > 1 ? sm.expert_psi : 0;
    double t = dp_allreduce_time_s(kept.allreduce * (psi - expert_psi), d, o, o.dp * o.cp) +
               dp_allreduce_time_s(kept.allreduce * expert_psi, d, o, o.dp * o.cp / o.ep, o.ep);
    if (o.zero >= 3) {
      // ZeRO-3 / FSDP full shard: every micro-batch all-gathers the stage's parameters for its forward and again for
      // its backward and reduce-scatters its gradients (1.5 all-reduces' traffic; Rajbhandari et al. 2020), each
      // prefetched behind that micro-batch's own compute; only what outlasts it is exposed, once per micro-batch.
      r.dp_comm_exposed_s = static_cast<double>(m) * std::max(0.0, 1.5 * t - t_stage);
    } else {
      r.dp_comm_exposed_s = std::max(0.0, t - t_stage_bwd);  // overlapped with the last backward
    }
  }
  if (o.ep > 1) {  // per sparse layer and micro-batch: dispatch + combine, forward and backward, of b s k h activations
    // (+2 when the forward is recomputed: full recomputation re-runs the MoE layer's dispatch and combine)
    const int per_layer = o.recompute == Recompute::Full ? 6 : 4;
    const double all_to_all = all_to_all_time_s(to_double(act_bytes * c.experts_per_token), o.ep,
                                                gpu_link(d, int64_t{o.ep} * o.tp <= o.gpus_per_node));
    r.ep_comm_s = slots * static_cast<double>(c.sparse_layer_count()) * stage_share * per_layer * all_to_all;
  }
  r.iteration_time_s = r.compute_time_s + r.tp_comm_s + r.pp_comm_s + r.dp_comm_exposed_s + r.ep_comm_s + r.cp_comm_s;
  const double capacity = r.iteration_time_s * o.gpus * peak;
  r.mfu = to_double(r.model_flops) / capacity;
  r.hfu = to_double(r.hardware_flops) / capacity;
  r.tokens_per_s = to_double(Count{o.global_batch} * o.seq) / r.iteration_time_s;  // 128-bit: no wrap
  r.days_for_budget = o.token_budget > 0 ? o.token_budget / r.tokens_per_s / 86400.0 : 0;
  return r;
}

std::optional<std::string> memory_savers_that_fit(const LlmConfig& c, const Device& d, const TrainOptions& o) {
  auto fits = [&](int zero, Recompute rc) {  // memory only: no graph to build per candidate
    TrainOptions t = o;
    t.zero = zero;
    t.recompute = rc;
    return fits_on(stage_memory(c, checked_layout(c, t)).memory, d);
  };
  if (fits(o.zero, o.recompute)) return std::nullopt;
  const int dp = o.dp > 0 ? o.dp : o.gpus / std::max(1, o.tp * o.pp);
  const int max_zero = dp > 1 ? 3 : o.zero;  // ZeRO shards over data-parallel ranks: nothing to shard over alone
  auto flags = [&](int zero, Recompute rc) {
    std::string f;
    if (zero != o.zero) f += fmt::format("--zero {}", zero);
    if (rc != o.recompute) f += fmt::format("{}--recompute {}", f.empty() ? "" : " ", rc == Recompute::Full ? "full" : "selective");
    return f;
  };
  for (int zero = o.zero + 1; zero <= max_zero; ++zero)
    if (fits(zero, o.recompute)) return flags(zero, o.recompute);
  for (Recompute rc : {Recompute::Selective, Recompute::Full}) {
    if (rc <= o.recompute) continue;
    for (int zero = o.zero; zero <= max_zero; ++zero)
      if (fits(zero, rc)) return flags(zero, rc);
  }
  return std::nullopt;
}

}  // namespace ridge
