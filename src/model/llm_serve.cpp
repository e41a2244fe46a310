// Serving analysis: per-op costs of the prefill graph and of decode steps over a KV cache, placed on the
// device's roofline. Decode costs are affine in the cache length, so two graphs (cache 1 and 2) give every
// step's exact integers; the window caps the cache length. Formulas: docs/llm.md.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "model/llm_attention.hpp"
#include "model/llm_moe.hpp"
#include "ridge/error.hpp"
#include "ridge/llm_analysis.hpp"

namespace ridge {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

/// Per-op integer costs of one serving graph, for ops that run a kernel (views and layout moves are fused
/// into their consumers and dropped, except the copies HF's eager forward makes in a graph built with
/// LlmShape::eager_copies: llm::eager_copy).
struct OpCosts {
  std::vector<ServeOp> ops;
};

/// The value a view (Reshape, Transpose: same elements; Slice: a part; all dropped from the op list) was taken of,
/// so that reads through a view are classified by what they read (a transposed K cache, or the latent part of an
/// MLA cache, is a KV read). `sliced` (optional) tells whether a Slice was crossed.
int source_of(const Graph& g, int v, bool* sliced = nullptr) {
  for (int p = g.value(v).producer; p >= 0; p = g.value(v).producer) {
    const Node& n = g.nodes[p];
    const bool slice = n.op == OpKind::Slice;
    if ((n.op != OpKind::Reshape && n.op != OpKind::Transpose && !slice) || n.inputs.empty()) break;
    if (slice && sliced) *sliced = true;
    v = n.inputs[0];
  }
  return v;
}

/// Bytes of a parameter: Linear weights (rank 2, not embedding tables) in the weight format, the rest at the
/// activation type.
Count param_bytes(const Value& v, const NumberFormat& wf) {
  const bool table = v.name.find("embed") != std::string::npos || v.name.find("wte") != std::string::npos ||
                     v.name.find("wpe") != std::string::npos || v.name.find("word_embeddings") != std::string::npos;
  return v.shape.rank() == 2 && !table ? wf.bytes(v.shape.elements()) : v.bytes();
}

// Adds x's costs and time to sum.
void add_to(ServeOp& sum, const ServeOp& x) {
  sum.flops += x.flops;
  sum.weight_bytes += x.weight_bytes;
  sum.activation_bytes += x.activation_bytes;
  sum.kv_read_bytes += x.kv_read_bytes;
  sum.kv_written_bytes += x.kv_written_bytes;
  sum.time_s += x.time_s;
}

// Each op of a layer's routed experts merged into one grouped kernel (costs summed, named by llm::grouped_part), in
// the order the first of them ran; the routing weight's multiply adds its FLOPs to the down projection's kernel and
// no traffic, the top-k sum's later adds one addend each (`routing_after`: see llm::grouped_part).
std::vector<ServeOp> grouped_experts(std::vector<ServeOp> ops, bool routing_after) {
  using Bytes = llm::GroupedPart::Bytes;
  std::vector<ServeOp> out;
  std::map<std::string, size_t> at;
  for (ServeOp& op : ops) {
    const llm::GroupedPart part = llm::grouped_part(op.name, routing_after);
    if (part.kernel.empty()) {
      out.push_back(std::move(op));
      continue;
    }
    const auto [it, first] = at.try_emplace(part.kernel, out.size());
    if (part.bytes == Bytes::None) op.weight_bytes = op.activation_bytes = op.kv_read_bytes = op.kv_written_bytes = 0;
    if (part.bytes == Bytes::Addend && !first) op.activation_bytes /= 3;  // a later add reads its addend only
    if (first) {
      op.name = part.kernel;
      out.push_back(std::move(op));
    } else {
      add_to(out[it->second], op);
    }
  }
  return out;
}

// `attention_class`: the fused core's matmuls take the class "attention" (a kernel with its own utilization).
// `grouped`: a layer's routed experts run one grouped kernel per op (grouped_experts). `s`: the graph's shape; a
// fused core executes the scores its layer's causal mask and window keep (fused_core_flops).
OpCosts op_costs(const Graph& g, const LlmConfig& c, const LlmShape& s, const NumberFormat& wf,
                 const NumberFormat& kvf, bool fused_attention, bool attention_class, bool grouped) {
  const ModelCost mc = estimate(g);
  // With HF's eager copies the cache a step attends to is the output of its torch.cat (a graph output: the whole
  // cache, written by the cat); reads of it are KV reads, as reads of the cache input are.
  std::vector<bool> is_cache(g.values.size(), false);
  if (s.eager_copies)
    for (size_t i = 1; i < g.outputs.size(); ++i) is_cache[g.outputs[i]] = true;
  auto kept = [&](const Node& n) { return s.eager_copies && llm::eager_copy(n); };
  OpCosts out;
  for (const auto& nc : mc.nodes) {
    const Node& n = g.nodes[nc.node];
    const OpFamily f = op_family(n.op);
    if ((f == OpFamily::View || f == OpFamily::Move || f == OpFamily::Dropout || f == OpFamily::Source) && !kept(n))
      continue;
    if (g.value(n.outputs[0]).shape.elements() == 0) continue;  // an expert no token is routed to: not run
    if (nc.status != CostStatus::Ok) throw Error(fmt::format("{}: {} ({})", g.name, n.name, nc.reason));
    ServeOp op;
    op.name = n.name;
    op.op_class = fused_attention && attention_class && llm::attention_matmul(n) ? "attention" : op_class(g, n);
    op.flops = fused_attention ? llm::fused_core_flops(g, n, nc.cost.flops, s.tokens, s.past, llm::window_at(c, n.name),
                                                       c.causal)
                               : nc.cost.flops;
    const llm::AttnRole role = fused_attention ? llm::attention_role(n) : llm::AttnRole::None;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const int v = n.inputs[i];
      if (v < 0 || role == llm::AttnRole::Elementwise || (role == llm::AttnRole::Output && i == 0)) continue;
      if (n.op == OpKind::Expand && i > 0) continue;  // repeat_kv's target shape: not data
      bool sliced = false;
      const int src = source_of(g, v, &sliced);
      const Value& val = g.value(src);
      if (is_cache[src]) {
        op.kv_read_bytes += kvf.bytes(g.value(v).shape.elements());
      } else if (val.kind == ValueKind::Param) {
        // Embedding lookups read only the gathered rows; Linear weights are stored in the weight format.
        op.weight_bytes += n.op == OpKind::Gather ? g.value(n.outputs[0]).bytes() : param_bytes(val, wf);
      } else if (val.kind == ValueKind::Input && llm::state_cache(g, src)) {
        op.kv_read_bytes += g.value(v).bytes();  // a recurrent layer's state, read at its own type
      } else if (val.kind == ValueKind::Input && val.name.rfind("past_key_values.", 0) == 0) {
        // The values read: the view's (a slice reads part of the cache). A fused kernel reads an MLA latent tile
        // once for the scores and the output (the output's values are a slice of the scores' keys).
        if (!(sliced && role == llm::AttnRole::Output)) op.kv_read_bytes += kvf.bytes(g.value(v).shape.elements());
      } else if (val.kind == ValueKind::Input || val.kind == ValueKind::Activation || val.kind == ValueKind::Constant) {
        op.activation_bytes += g.value(v).bytes();  // what is read: a slice's part, a view's whole
      }
    }
    if (role == llm::AttnRole::None || role == llm::AttnRole::Output)
      for (int v : n.outputs)
        // the cache's cat writes KV (below); a scan's final state is written once, as cache traffic (below)
        if (!is_cache[v] && !llm::state_cache(g, v)) op.activation_bytes += g.value(v).bytes();
    out.ops.push_back(std::move(op));
  }
  // New keys/values: written to the cache by the op producing them (through the layout ops in between); with HF's
  // eager copies, the whole cache by its torch.cat.
  for (int o : g.outputs) {
    if (o == g.outputs[0]) continue;
    int p = g.value(o).producer;
    while (p >= 0 && !g.nodes[p].inputs.empty() && !kept(g.nodes[p]) &&
           (op_family(g.nodes[p].op) == OpFamily::View || op_family(g.nodes[p].op) == OpFamily::Move))
      p = g.value(g.nodes[p].inputs[0]).producer;
    const bool state = llm::state_cache(g, o);
    for (auto& op : out.ops)
      if (p >= 0 && op.name == g.nodes[p].name)
        op.kv_written_bytes += state ? g.value(o).bytes() : kvf.bytes(g.value(o).shape.elements());
  }
  if (grouped) out.ops = grouped_experts(std::move(out.ops), !c.router_topk_sigmoid);
  return out;
}

ServeOp affine_at(const ServeOp& a1, const ServeOp& a2, int64_t len) {
  // a1 at cache length 1, a2 at 2: cost(len) = a1 + (a2 - a1) (len - 1), exact integers.
  ServeOp r = a1;
  const Count k = len - 1;
  r.flops = a1.flops + (a2.flops - a1.flops) * k;
  r.weight_bytes = a1.weight_bytes + (a2.weight_bytes - a1.weight_bytes) * k;
  r.activation_bytes = a1.activation_bytes + (a2.activation_bytes - a1.activation_bytes) * k;
  r.kv_read_bytes = a1.kv_read_bytes + (a2.kv_read_bytes - a1.kv_read_bytes) * k;
  r.kv_written_bytes = a1.kv_written_bytes + (a2.kv_written_bytes - a1.kv_written_bytes) * k;
  return r;
}

void place(ServeOp& op, double peak, double bw, const std::optional<Calibration>& cal, Count l2_bytes) {
  op.time_s = llm_op_time(op.flops, op.bytes(), op.op_class, 1, peak, bw, cal ? &*cal : nullptr, &op.bound, l2_bytes);
}

// Positions layer `layer` keeps in its cache at `context` (its sliding window caps them); -1: no layer (every
// position, as for the ops outside the layers, whose costs do not depend on it).
int64_t cache_len(const LlmConfig& c, int64_t layer, int64_t context) {
  const int64_t window = layer >= 0 ? c.window_of(layer) : 0;
  return window > 0 ? std::min(context, window) : context;
}

// Positions a decode token at `context` attends to in op `op`: HF's eager forward, its layer's cache (cache_len); a
// fused kernel, what the op's window keeps (llm::window_at: a sliding window's last positions, a chunked layer's own
// chunk up to the token, DeepSeek Sparse Attention's top index_topk, while its indexer scores the whole cache).
int64_t attended_len(const LlmConfig& c, int64_t context, bool fused_attention, const std::string& op) {
  if (!fused_attention) return cache_len(c, llm::layer_of(op), context);
  const llm::AttendWindow w = llm::window_at(c, op);
  if (w.size <= 0) return context;
  return w.chunked ? (context - 1) % w.size + 1 : std::min(context, w.size);
}

}  // namespace

Count NumberFormat::bytes(Count elements) const {
  Count b = (elements * bits + 7) / 8;
  if (group > 0) b += (elements + group - 1) / group * scale_bytes;
  return b;
}

std::optional<NumberFormat> parse_number_format(std::string_view name) {
  static const NumberFormat kFormats[] = {{"int4", 4, 128, 2}, {"int8", 8, 128, 2}, {"fp8", 8, 0, 0},
                                          {"fp16", 16, 0, 0},  {"bf16", 16, 0, 0},  {"fp32", 32, 0, 0}};
  for (const auto& f : kFormats)
    if (f.name == name) return f;
  return std::nullopt;
}

ServeOptions with_serving_precision(ServeOptions o, std::string_view name, bool weights_given, bool kv_given,
                                   bool compute_given) {
  refuse_precision_with_compute(name, compute_given);
  const PrecisionMode& mode = require_precision_mode(name);
  if (mode.compute == Precision::INT8 || mode.compute == Precision::FP64)
    throw UsageError(fmt::format("--precision {}: serving computes in fp32, tf32, bf16 or fp16 (amp-* too); weight-only "
                                 "quantization is --weights int8 or int4", mode.name));
  const std::string half(dtype_name(mode.activation_dtype));  // "bf16", "fp16" or "fp32"
  o.compute = mode.compute;
  if (!weights_given) o.weights = *parse_number_format(mode.weight_bytes >= 4 ? "fp32" : half);
  if (!kv_given) o.kv = *parse_number_format(half);
  return o;
}

namespace {

// What tensor parallelism has to split: a mamba2 model has no attention and no MLP (their sizes are placeholders).
struct SplitParts {
  bool attention = false, mlp = false;
};
SplitParts split_parts(const LlmConfig& c) {
  SplitParts p{c.attention_layer_count() > 0, !c.hybrid() || c.hybrid_decoder};
  for (int64_t l = 0; l < c.num_layers; ++l)
    p.mlp = p.mlp || (c.hybrid() && (c.blocks[static_cast<size_t>(l)] == LlmBlock::Mlp || c.sparse_layer(l)));
  return p;
}

// Why `tp` GPUs cannot split `c` (heads, widths or key/value heads that do not divide), or "" when they can.
std::string tensor_parallel_problem(const LlmConfig& c, int64_t tp) {
  auto divides = [&](int64_t v, const char* what) {
    return v % tp == 0 ? std::string{} : fmt::format("--tp: {} does not divide the {} {} of {}", tp, v, what, c.name);
  };
  const auto [attention, mlp] = split_parts(c);
  for (std::string p : {attention ? divides(c.num_heads, "attention heads") : std::string{},
                        mlp ? divides(c.intermediate_size, "MLP width") : std::string{},
                        c.dense_intermediate_size ? divides(c.dense_intermediate_size, "dense MLP width") : std::string{},
                        c.shared_expert_intermediate_size ? divides(c.shared_expert_intermediate_size, "shared-expert width")
                                                          : std::string{}})
    if (!p.empty()) return p;
  if (attention && c.num_kv_heads % tp != 0 && tp % c.num_kv_heads != 0)
    return fmt::format("--tp: {} and the {} key/value heads of {} divide neither way", tp, c.num_kv_heads, c.name);
  if (c.ssm_heads > 0)  // Mamba-2 mixers split by head and by group of B and C, as Megatron and vLLM split them
    for (std::string p : {divides(c.ssm_heads, "Mamba heads"), divides(c.ssm_groups, "Mamba groups (n_groups)")})
      if (!p.empty()) return p;
  if (c.mamba1_inner > 0)  // Mamba-1 mixers split by channel (x_proj's partial sums all-reduced), as vLLM splits them
    if (std::string p = divides(c.mamba1_inner, "Mamba-1 channels (expand x hidden_size)"); !p.empty()) return p;
  if (c.gdn_value_heads > 0)  // Gated DeltaNets split by key head (with its value heads), as vLLM splits them
    for (std::string p : {divides(c.gdn_key_heads, "Gated DeltaNet key heads (linear_num_key_heads)"),
                          divides(c.gdn_value_heads, "Gated DeltaNet value heads (linear_num_value_heads)")})
      if (!p.empty()) return p;
  return {};
}

}  // namespace

LlmConfig tensor_parallel_shard(const LlmConfig& c, int tp) {
  if (tp < 1) throw Error(fmt::format("--tp: {} is not a positive number of GPUs", tp));
  if (tp == 1) return c;
  if (const std::string problem = tensor_parallel_problem(c, tp); !problem.empty()) {
    std::vector<int64_t> fit;
    // the widest dimension any degree must divide bounds the search (a mamba model's attention sizes are placeholders)
    const int64_t widest = std::max({c.num_heads, c.ssm_heads, c.gdn_key_heads, c.mamba1_inner});
    for (int64_t t = 1; t <= std::min<int64_t>(widest, 128); ++t)
      if (tensor_parallel_problem(c, t).empty()) fit.push_back(t);
    throw Error(fmt::format("{} (degrees that fit: {})", problem, fmt::join(fit, ", ")));
  }
  LlmConfig s = c;
  const SplitParts parts = split_parts(c);
  if (parts.attention) {
    s.num_heads /= tp;
    s.num_kv_heads = std::max<int64_t>(1, c.num_kv_heads / tp);  // fewer KV heads than GPUs: replicated
  }
  if (parts.mlp) s.intermediate_size /= tp;
  s.shared_expert_intermediate_size /= tp;
  s.dense_intermediate_size /= tp;
  s.ssm_heads /= tp;
  s.ssm_groups = std::max<int64_t>(1, c.ssm_groups / tp);
  s.gdn_key_heads /= tp;
  s.gdn_value_heads /= tp;
  s.mamba1_inner /= tp;
  s.vocab_size = (c.vocab_size + tp - 1) / tp;  // vocabulary-parallel embedding and lm_head (padded)
  return s;
}

namespace {
// DeepSeek Sparse Attention's indexer keeps one index_head_dim key per position and layer, beside the attention's
// cache (the same on every tensor-parallel GPU: the indexer is not split).
Count index_key_cache_bytes(const LlmConfig& c, int64_t batch, int64_t context, const NumberFormat& kv) {
  return c.dsa() ? kv.bytes(Count{c.index_head_dim} * c.num_layers * context * batch) : 0;
}
}  // namespace

Count latent_kv_cache_bytes(const LlmConfig& c, int64_t batch, int64_t context, const NumberFormat& kv) {
  if (!c.mla()) return 0;
  return kv.bytes(Count{c.kv_lora_rank + c.qk_rope_head_dim} * c.num_layers * context * batch) +
         index_key_cache_bytes(c, batch, context, kv);
}

Count kv_cache_bytes(const LlmConfig& c, int64_t batch, int64_t context, const NumberFormat& kv) {
  Count positions = 0;  // summed over the layers: local (sliding) layers keep at most their window
  for (int64_t l = 0; l < c.num_layers; ++l)
    if (c.attends(l)) positions += cache_len(c, l, context);
  return kv.bytes(Count{c.num_kv_heads} * (c.head_dim + c.value_dim()) * positions * batch) +
         index_key_cache_bytes(c, batch, context, kv);
}

Count state_cache_bytes(const LlmConfig& c, int64_t batch, DType act) {
  const Count mamba = c.blocks_of(LlmBlock::Mamba), delta = c.blocks_of(LlmBlock::DeltaNet),
              mamba1 = c.blocks_of(LlmBlock::Mamba1);
  const Count conv = Count{c.conv_dim()} * (c.conv_kernel - 1) * dtype_bytes(act);
  const Count ssm = Count{c.ssm_heads} * c.ssm_head_dim * c.ssm_state * (c.ssm_state_fp32 ? 4 : dtype_bytes(act));
  // a Gated DeltaNet: the conv state of q|k|v and a float32 key x value state per value head
  const Count delta_conv = Count{c.gdn_conv_dim()} * (c.conv_kernel - 1) * dtype_bytes(act);
  const Count delta_state = Count{c.gdn_value_heads} * c.gdn_key_dim * c.gdn_value_dim * 4;
  // a Mamba-1 mixer: the conv state of x and the inner x state recurrent state, both at the activation type
  const Count mamba1_state = Count{c.mamba1_inner} * (c.conv_kernel - 1 + c.ssm_state) * dtype_bytes(act);
  return batch * (mamba * (conv + ssm) + delta * (delta_conv + delta_state) + mamba1 * mamba1_state);
}

std::string data_parallel_note(const ServeResult& r) {
  const ServeOptions& o = r.options;
  if (o.dp <= 1) return "";
  return fmt::format(
      "--dp {}: each GPU attends for {} of the {} sequences with every head (data-parallel attention) and holds {} of "
      "the {} experts of every MoE layer, whose tokens reach them by an all-to-all (dispatch, then combine), as "
      "SGLang's --enable-dp-attention with expert parallelism and vLLM's --data-parallel-size with "
      "--enable-expert-parallel serve DeepSeek-style models; the experts are taken as evenly loaded, and the dense "
      "layers, embeddings and attention weights are on every GPU",
      o.dp, (o.batch + o.dp - 1) / o.dp, o.batch, r.experts_per_gpu, r.experts_per_gpu * o.dp);
}

std::string sparse_attention_note(int64_t index_topk, bool fused_attention, int tp, bool serving) {
  if (index_topk <= 0) return "";
  return fmt::format(
      "DeepSeek Sparse Attention: {}; the indexer scores every {} position (its q.k timed at the --compute peak, "
      "not fp8){}{}",
      fused_attention ? fmt::format("the sparse kernel attends to the indexer's top {} positions per query", index_topk)
                      : "HF's eager forward computes every score and masks all but the indexer's top positions "
                        "(--attention fused for a sparse kernel)",
      serving ? "cached" : "earlier",
      tp > 1 ? fmt::format(" and is replicated on the {} tensor-parallel GPUs, where the attention splits by head{}", tp,
                           serving ? " (--dp runs it as DeepSeek serves it: data-parallel attention, each GPU indexing "
                                     "its own sequences)"
                                   : "")
             : "",
      serving ? "" : "; its backward is costed as any op's (DeepSeek trains it on its own loss, its input detached)");
}

ServeResult analyze_serving(const LlmConfig& c, const Device& d, const ServeOptions& o) {
  if (!c.causal)
    throw Error(fmt::format("{}: {} is an encoder (bidirectional attention, no token-by-token decoding with a KV "
                            "cache): serve does not apply; use summary, flops, predict or train", c.name, c.family));
  if (o.batch < 1) throw Error(fmt::format("--batch: {} is not a positive batch", o.batch));
  if (o.prompt < 1) throw Error(fmt::format("--prompt: {} is not a positive number of tokens", o.prompt));
  if (o.generate < 1) throw Error(fmt::format("--generate: {} is not a positive number of tokens", o.generate));
  if (o.prompt > c.max_positions || o.generate > c.max_positions - o.prompt)  // no int64 wrap: --generate 2^63-1
    throw DoesNotFit(fmt::format("--prompt {} + --generate {} exceeds the {} positions of {}", o.prompt, o.generate,
                            c.max_positions, c.name));
  if (o.dp < 1) throw Error(fmt::format("--dp: {} is not a positive number of GPUs", o.dp));
  if (o.dp > 1 && o.tp > 1)
    throw Error(fmt::format("--dp {} with --tp {}: tensor parallelism inside data-parallel attention ranks is not "
                            "modelled; use one of them", o.dp, o.tp));
  if (o.dp > 1 && (!c.moe() || c.num_experts % o.dp != 0))
    throw Error(fmt::format("--dp {}: data-parallel attention splits a mixture-of-experts model's experts over the "
                            "GPUs; {} {}", o.dp, c.name,
                            c.moe() ? fmt::format("has {} experts, which {} GPUs do not divide", c.num_experts, o.dp)
                                    : std::string("has no experts (serve one replica with --batch / N instead)")));
  // --dp: every GPU attends for its own sequences with every head and holds 1/dp of the experts (expert parallelism);
  // the most loaded rank (ceil(batch / dp) sequences) sets the pace.
  LlmConfig shard = o.dp > 1 ? c : tensor_parallel_shard(c, o.tp);
  shard.expert_parallel = o.dp;
  const int64_t gpus = int64_t{o.tp} * o.dp, lb = (o.batch + o.dp - 1) / o.dp;
  const double peak = d.require_peak(o.compute, "--compute"), bw = d.dram_bandwidth();
  const DType act = precision_info(o.compute).dtype;
  ServeResult r;
  r.model = c.name;
  r.device = d.id;
  r.options = o;
  r.time_label = llm_time_label(o.calibration);
  r.kv_len_cap = c.sliding_window;
  const LlmParams params = llm_params(c);
  r.total_params = params.total;
  r.active_params = params.active_per_token;

  if (o.latent_kv && !c.mla())
    throw Error(fmt::format("--mla latent: {} has no multi-head latent attention (DeepSeek-V2 and V3 have; use --mla hf)",
                            c.name));
  // The decode graphs at cache lengths 0 and 1 (below): built here because the first one also gives the weights.
  LlmShape d1{lb, 1, 0, act, true}, d2{lb, 1, 1, act, true};
  d1.latent_kv = d2.latent_kv = o.latent_kv;
  d1.eager_copies = d2.eager_copies = !o.fused_attention;
  const Graph decode1 = build_llm(shard, d1);

  // Memory: weights + KV cache at the final context, per GPU. Every weight once, whatever the routing: a graph holds
  // every expert's weights even when an expert gets no token (LlmServe.WeightsDoNotDependOnTheTokens).
  const int64_t context = o.prompt + o.generate;
  auto weight_bytes = [&](const Graph& g) {
    Count wb = 0;
    for (const Value& v : g.values)
      if (v.kind == ValueKind::Param) wb += param_bytes(v, o.weights);
    return wb;
  };
  auto weights_per_gpu = [&](const LlmConfig& sharded) {
    return weight_bytes(build_llm(sharded, LlmShape{1, 1, 0, act, /*serving=*/true}));
  };
  r.weights_bytes_per_gpu = weight_bytes(decode1);
  r.weights_bytes = r.weights_bytes_per_gpu * gpus;
  // A latent cache is the same on every tensor-parallel GPU (the latent is not split by head).
  auto kv_per_gpu = [&](const LlmConfig& sharded, int64_t batch) {
    return o.latent_kv ? latent_kv_cache_bytes(sharded, batch, context, o.kv) : kv_cache_bytes(sharded, batch, context, o.kv);
  };
  auto cache_per_gpu = [&](const LlmConfig& sharded, int64_t batch) {
    return kv_per_gpu(sharded, batch) + state_cache_bytes(sharded, batch, act);
  };
  r.kv_cache_bytes_per_gpu = kv_per_gpu(shard, lb);
  r.kv_cache_bytes = r.kv_cache_bytes_per_gpu * gpus;
  r.state_cache_bytes_per_gpu = state_cache_bytes(shard, lb, act);
  r.state_cache_bytes = r.state_cache_bytes_per_gpu * gpus;
  if (c.mla()) {
    r.latent_kv_cache_bytes = latent_kv_cache_bytes(shard, lb, context, o.kv) * gpus;
    r.decompressed_kv_cache_bytes = kv_cache_bytes(shard, lb, context, o.kv) * gpus;
  }
  r.memory_per_gpu_bytes = r.weights_bytes_per_gpu + r.kv_cache_bytes_per_gpu + r.state_cache_bytes_per_gpu;
  // The KV cache is a formula in the batch: the search can go as far as any memory reaches.
  r.max_batch = largest_batch_that_fits(
      [&](int64_t b) { return r.weights_bytes_per_gpu + cache_per_gpu(shard, b); }, d.memory_bytes, int64_t{1} << 40) * o.dp;
  if (d.memory_bytes > 0 && r.memory_per_gpu_bytes > d.memory_bytes) {
    // What would fit: a smaller batch, else the smallest larger tensor-parallel degree (up to 64 GPUs) at this batch.
    std::string hint = r.max_batch > 0 ? fmt::format("largest batch that fits: {}", r.max_batch) : "";
    if (r.max_batch == 0 && o.dp > 1) {
      // The smallest larger --dp that divides the experts and fits one sequence per GPU (fewer experts per GPU).
      for (int t = o.dp + 1; t <= c.num_experts && hint.empty(); ++t) {
        if (c.num_experts % t != 0) continue;
        LlmConfig wider = c;
        wider.expert_parallel = t;
        if (weights_per_gpu(wider) + cache_per_gpu(wider, 1) <= d.memory_bytes)
          hint = fmt::format("not even one sequence per GPU fits at --dp {}; --dp {} fits, or use smaller --weights",
                             o.dp, t);
      }
      if (hint.empty())
        hint = fmt::format("not even one sequence per GPU fits at --dp {}, nor at any larger --dp that divides the {} "
                           "experts; use smaller --weights or a device with more memory", o.dp, c.num_experts);
    }
    if (r.max_batch == 0 && o.dp == 1) {
      for (int t = o.tp + 1; t <= 64 && hint.empty(); ++t) {
        LlmConfig wider;
        try {
          wider = tensor_parallel_shard(c, t);
        } catch (const Error&) {
          continue;  // t does not divide the model's heads or widths
        }
        if (weights_per_gpu(wider) + cache_per_gpu(wider, o.batch) <= d.memory_bytes)
          hint = fmt::format("not even batch 1 fits at --tp {}; --tp {} fits, or use smaller --weights", o.tp, t);
      }
      if (hint.empty())
        hint = fmt::format("not even batch 1 fits at --tp {}, nor at any --tp up to 64 that splits it; use smaller "
                           "--weights (int8, fp8, int4) or a device with more memory", o.tp);
    }
    const std::string state = r.state_cache_bytes_per_gpu > 0
                                  ? fmt::format(" + recurrent state {:.2f}", to_double(r.state_cache_bytes_per_gpu) / kGiB)
                                  : "";
    throw DoesNotFit(fmt::format("does not fit: needs {:.2f} GiB per GPU (weights {:.2f} + KV cache {:.2f}{}), device {} "
                                 "has {:.2f} GiB ({})",
                                 to_double(r.memory_per_gpu_bytes) / kGiB, to_double(r.weights_bytes_per_gpu) / kGiB,
                                 to_double(r.kv_cache_bytes_per_gpu) / kGiB, state, d.id,
                                 to_double(d.memory_bytes) / kGiB, hint));
  }

  // Tensor parallelism: all-reduces of batch x tokens x hidden per layer (a decoder layer's 2: attention output, MLP
  // output; a hybrid layer's 1), on the
  // node's GPU link while tp fits a node (the device file's node size, else 8), else on the network between nodes.
  const int node_gpus = d.node.gpus_per_node > 0 ? d.node.gpus_per_node : 8;
  const bool inside_node = o.tp <= node_gpus;
  const Interconnect* link = o.tp > 1 ? &gpu_link(d, inside_node) : nullptr;
  auto allreduce = [&](int64_t tokens, int64_t width) {  // one all-reduce of `width` values per token
    if (!link) return 0.0;
    const Count bytes = Count{o.batch} * tokens * width * dtype_bytes(act);
    if (o.tp_allreduce && inside_node) return allreduce_fit_time_s(*o.tp_allreduce, bytes);  // fitted inside a node
    return ring_allreduce_time_s(bytes, o.tp, *link);
  };
  // A decoder layer all-reduces its attention and MLP outputs; a hybrid layer its one mixer's.
  r.allreduces_per_layer = c.single_block_layers() ? 1 : 2;
  r.attention_layers = c.attention_layer_count();
  r.index_topk = c.index_topk;
  r.experts_per_gpu = c.num_experts / o.dp;
  r.allreduce_time_per_layer_prefill_s = r.allreduces_per_layer * allreduce(o.prompt, c.hidden_size);
  r.allreduce_time_per_layer_decode_s = r.allreduces_per_layer * allreduce(1, c.hidden_size);
  // A Mamba-1 mixer split by channel also all-reduces x_proj's partial sums (dt_rank + 2 x state per token) before
  // dt_proj and the scan: one more, small all-reduce per Mamba-1 layer.
  const int64_t mamba1_layers = c.blocks_of(LlmBlock::Mamba1), x_proj_width = c.dt_rank + 2 * c.ssm_state;

  // A fused kernel with a published utilization (--attention flash2) times the core's matmuls at it.
  const bool kernel = attention_kernel_applies(o);
  const std::optional<Calibration> timing = timing_calibration(o);

  // Prefill: one graph of the prompt.
  LlmShape pre{lb, o.prompt, 0, act, true};
  pre.latent_kv = o.latent_kv;
  pre.eager_copies = !o.fused_attention;  // HF's eager forward: its copies are kernels (docs/llm.md)
  const Graph prefill = build_llm(shard, pre);
  r.calflops_prefill_flops = calflops_forward_flops(prefill);
  for (ServeOp op : op_costs(prefill, shard, pre, o.weights, o.kv, o.fused_attention, kernel, o.grouped_experts).ops) {
    op.phase = "prefill";
    place(op, peak, bw, timing, d.l2_bytes);
    r.prefill_time_s += op.time_s;
    r.prefill_flops += op.flops;
    r.ops.push_back(std::move(op));
  }
  // Decode: the prefill's last position already yields the first generated token, so G tokens take G - 1 decode
  // steps (as Hugging Face's generate, vLLM and TensorRT-LLM run them); step t feeds token t + 1 over the prompt and
  // the t tokens before it. Graphs at cache lengths 1 and 2 give the affine cost of every step.
  const int64_t decode_steps = o.generate - 1;
  const auto c1 = op_costs(decode1, shard, d1, o.weights, o.kv, o.fused_attention, kernel, o.grouped_experts).ops;
  const auto c2 = op_costs(build_llm(shard, d2), shard, d2, o.weights, o.kv, o.fused_attention, kernel, o.grouped_experts).ops;
  RIDGE_ASSERT(c1.size() == c2.size(), "decode graphs differ in structure");
  for (size_t i = 0; i < c1.size(); ++i) {
    ServeOp sum = c1[i];
    sum.phase = "decode";
    sum.flops = sum.weight_bytes = sum.activation_bytes = sum.kv_read_bytes = sum.kv_written_bytes = 0;
    sum.time_s = 0;
    for (int64_t t = 0; t < decode_steps; ++t) {
      ServeOp step = affine_at(c1[i], c2[i], attended_len(c, o.prompt + t + 1, o.fused_attention, c1[i].name));
      place(step, peak, bw, timing, d.l2_bytes);
      if (t == 0) sum.bound = step.bound;
      add_to(sum, step);
    }
    r.decode_time_s += sum.time_s;
    r.decode_flops += sum.flops;
    r.ops.push_back(std::move(sum));
  }
  if (o.tp > 1) {
    const double layers = static_cast<double>(c.num_layers);
    const std::string name = fmt::format("allreduce ({} per layer)", r.allreduces_per_layer);
    ServeOp ar{"prefill", name, ""};
    ar.time_s = layers * r.allreduce_time_per_layer_prefill_s;
    ServeOp ad{"decode", name, ""};
    ad.time_s = layers * r.allreduce_time_per_layer_decode_s * static_cast<double>(decode_steps);
    r.prefill_time_s += ar.time_s;
    r.decode_time_s += ad.time_s;
    r.ops.push_back(ar);
    r.ops.push_back(ad);
    if (mamba1_layers > 0) {
      const double m1 = static_cast<double>(mamba1_layers);
      ServeOp xp{"prefill", "allreduce x_proj (1 per Mamba-1 layer)", ""};
      xp.time_s = m1 * allreduce(o.prompt, x_proj_width);
      ServeOp xd{"decode", xp.name, ""};
      xd.time_s = m1 * allreduce(1, x_proj_width) * static_cast<double>(decode_steps);
      r.prefill_time_s += xp.time_s;
      r.decode_time_s += xd.time_s;
      r.ops.push_back(xp);
      r.ops.push_back(xd);
    }
  }
  if (o.dp > 1) {
    // Expert parallelism: per MoE layer an all-to-all sends each token's hidden state to its k experts' GPUs
    // (dispatch) and brings the results back (combine); (dp - 1) / dp of a rank's rows leave it, over the node's GPU
    // link while dp fits a node, else the network (the pairwise exchange of Megatron-LM's and DeepEP's all-to-all).
    const Interconnect& l = gpu_link(d, o.dp <= node_gpus);
    auto all_to_all = [&](int64_t tokens) {
      return all_to_all_time_s(to_double(Count{lb} * tokens * c.experts_per_token * c.hidden_size * dtype_bytes(act)),
                               o.dp, l);
    };
    const int64_t sparse = c.sparse_layer_count();
    r.alltoall_time_per_layer_prefill_s = 2 * all_to_all(o.prompt);
    r.alltoall_time_per_layer_decode_s = 2 * all_to_all(1);
    const std::string name = "all-to-all (dispatch and combine per MoE layer)";
    ServeOp ap{"prefill", name, ""}, ad{"decode", name, ""};
    ap.time_s = static_cast<double>(sparse) * r.alltoall_time_per_layer_prefill_s;
    ad.time_s = static_cast<double>(sparse) * r.alltoall_time_per_layer_decode_s * static_cast<double>(decode_steps);
    r.prefill_time_s += ap.time_s;
    r.decode_time_s += ad.time_s;
    r.ops.push_back(ap);
    r.ops.push_back(ad);
  }
  r.ttft_s = r.prefill_time_s;
  // Time per output token after the first (vLLM's TPOT): 0 when only the prefill's token is generated.
  r.decode_time_per_token_s = decode_steps > 0 ? r.decode_time_s / static_cast<double>(decode_steps) : 0.0;
  r.end_to_end_s = r.prefill_time_s + r.decode_time_s;
  r.tokens_per_s = static_cast<double>(o.batch * o.generate) / r.end_to_end_s;
  return r;
}

}  // namespace ridge
