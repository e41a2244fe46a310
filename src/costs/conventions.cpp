// Other tools' counting conventions (facts: ../shared/reference/counting-conventions.md, docs/counting.md).
// Each tool is one function from a node to the number that tool attributes to it. Hook-based tools see
// only module calls (Node::module_call + module_type); function-patching tools see functional calls too,
// except functions captured in attributes before patching (attr torch_fn = "captured").
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>

#include "ridge/op_geometry.hpp"
#include "ridge/op_rules.hpp"
#include "ridge/cost.hpp"

namespace ridge {

namespace {

const std::vector<ConventionInfo> kConventions = {
    {Convention::Ridge, "ridge", "ridge (this tool)", "FLOPs: 2 per MAC plus every elementwise, norm, pool and "
     "softmax operation", "FLOP", "the reference: counts all real arithmetic"},
    {Convention::Torchvision, "torchvision", "torchvision weights meta `_ops` (docs column GFLOPS)",
     "MACs of conv/linear/matmul only, no bias", "MAC", "MACs (not FLOPs) of GEMM-like ops only; bias, "
     "activations, norms and pooling are 0; published at batch 1 rounded to 3 decimals"},
    {Convention::Fvcore, "fvcore", "fvcore FlopCountAnalysis(model, x).total()",
     "MACs of conv/linear/matmul/einsum + batch norm + adaptive pooling", "MAC",
     "one fused multiply-add = 1 \"flop\"; adds norms (BN 2E eval, LN 5E) and adaptive pooling; ignores "
     "activations, adds, max-pool, softmax"},
    {Convention::Ptflops, "ptflops", "ptflops get_model_complexity_info (pytorch backend)",
     "MACs of module hooks + patched functionals", "MAC",
     "MACs with bias; activations and pooling as E, and counted twice for nn.ReLU/ELU/PReLU/GELU and pooling "
     "modules (module hook + patched functional)"},
    {Convention::Thop, "thop", "thop.profile (0.1.1)", "MACs of module hooks", "MAC",
     "module hooks only (functional calls invisible); BN 4E, avg-pool E(out), no bias, ReLU and max-pool 0"},
    {Convention::Torchinfo, "torchinfo", "torchinfo.summary (release 1.8.0, not the "
     "repository's HEAD) \"Total mult-adds\"",
     "params x output positions of parameterised leaf layers", "MAC",
     "parameter count times output positions of layers that own parameters: bias included, BN as N*2C, "
     "Linear ignores sequence dims, layers without parameters are 0"},
    {Convention::Pthflops, "pthflops", "pthflops count_ops (fx mode)", "per-op FLOPs as the fx interpreter sees "
     "them", "FLOP",
     "conv/linear as MACs + bias (linear bias once), ReLU 2E, max-pool (k-1)E, operator add/mul 2E, "
     "torch.nn containers (e.g. TransformerEncoder) and fx-wrapped functions (Swin's window attention) = 0"},
    {Convention::Deepspeed, "deepspeed", "DeepSpeed flops profiler / calflops (fwd FLOPs)",
     "2 x MACs + conv bias + patched functionals", "FLOP",
     "FLOPs = 2 MACs (+conv bias; linear bias ignored), activations/pooling/softmax E, norms 2E/5E"},
    {Convention::Calflops, "calflops", "calflops calculate_flops (fwd FLOPs)",
     "DeepSpeed's rules without the torch.bmm / torch.mm patches", "FLOP",
     "as deepspeed, but torch.bmm is not patched: the attention products of nn.MultiheadAttention count 0"},
    {Convention::Torch, "torch", "torch.utils.flop_counter.FlopCounterMode", "2 x MACs of GEMM/conv/attention",
     "FLOP", "2 x MACs of matmul/conv kernels only; bias, activations, norms, pooling are 0"},
};

bool has_attr(const Node& n, const char* key, const char* value) { return n.attrs.s(key, "") == value; }
bool captured(const Node& n) { return has_attr(n, "torch_fn", "captured"); }

Count E(const Graph& g, int v) { return ops::elements(g, v).value_or(0); }

/// Paths of the modules torch.fx treats as opaque leaves: torch.nn containers (MultiheadAttention, the Transformer
/// encoder/decoder classes) and torch.nn.Transformer, a module typed "Transformer" with a TransformerEncoder or
/// TransformerDecoder child (HF models have classes of that name too: DistilBERT's `Transformer` holds a `layer` list
/// of TransformerBlocks, which fx traces through). One pass over the modules, so that asking per node stays cheap on
/// graphs of 100,000 modules (an MoE LLM's experts).
std::set<std::string> fx_leaf_paths(const Graph& g) {
  static const std::array<std::string_view, 5> kLeaf = {"MultiheadAttention", "TransformerEncoder",
                                                        "TransformerEncoderLayer", "TransformerDecoder",
                                                        "TransformerDecoderLayer"};
  std::set<std::string> transformer_parents, leaves;
  for (const auto& m : g.modules)
    if (const size_t dot = m.path.rfind('.');
        dot != std::string::npos && (m.type == "TransformerEncoder" || m.type == "TransformerDecoder"))
      transformer_parents.insert(m.path.substr(0, dot));
  std::set<std::string> seen;  // the first module of a path decides its type, as a lookup by path does
  for (const auto& m : g.modules) {
    if (!seen.insert(m.path).second) continue;
    if (std::find(kLeaf.begin(), kLeaf.end(), std::string_view(m.type)) != kLeaf.end() ||
        (m.type == "Transformer" && transformer_parents.count(m.path)))
      leaves.insert(m.path);
  }
  return leaves;
}

/// True when an ancestor module of `n` is one of `fx_leaves` (fx_leaf_paths): one opaque call for torch.fx.
bool inside_fx_leaf(const std::set<std::string>& fx_leaves, const Node& n) {
  std::string path = n.module;
  while (!path.empty()) {
    if (fx_leaves.count(path) && !(n.module_call && path == n.module)) return true;
    const size_t dot = path.rfind('.');
    path = dot == std::string::npos ? "" : path.substr(0, dot);
  }
  return false;
}

/// Modules whose forward calls functional linears on two of their own parameters, `a` and `b` (the importer names
/// such a node after the parameter: "attn.qkv" for F.linear(x, self.qkv.weight) in module "attn").
std::set<std::string> modules_calling(const Graph& g, std::string_view a, std::string_view b) {
  std::set<std::string> first, paths;
  for (const Node& n : g.nodes)
    if (!n.module.empty() && n.name == n.module + "." + std::string(a)) first.insert(n.module);
  for (const Node& n : g.nodes)
    if (first.count(n.module) && n.name == n.module + "." + std::string(b)) paths.insert(n.module);
  return paths;
}

/// Paths of nn.MultiheadAttention modules: typed by the importer (inside transformer layers), or recognised by
/// their functional in_proj and out_proj linears (torch names them after the parameters).
std::set<std::string> mha_paths(const Graph& g) {
  std::set<std::string> paths = modules_calling(g, "in_proj", "out_proj");
  for (const auto& m : g.modules)
    if (m.type == "MultiheadAttention") paths.insert(m.path);
  return paths;
}

/// Modules that run torchvision's shifted_window_attention (Swin's ShiftedWindowAttention, v1 and v2): functional
/// qkv and proj linears. torchvision marks that function torch.fx.wrap, so fx records it as one call_function,
/// which pthflops counts 0 (attention, its linears and its bias adds alike).
std::set<std::string> fx_wrapped_attention_paths(const Graph& g) { return modules_calling(g, "qkv", "proj"); }

/// True when node `n` runs inside one of the modules `paths`.
bool inside_any(const Node& n, const std::set<std::string>& paths) {
  for (const auto& p : paths)
    if (n.module == p || n.module.rfind(p + ".", 0) == 0) return true;
  return false;
}

bool is_bn(const Node& n) { return n.op == OpKind::BatchNormalization; }
bool is_affine(const Graph& g, const Node& n) {
  return n.inputs.size() > 1 && n.inputs[1] >= 0 && g.value(n.inputs[1]).kind == ValueKind::Param;
}
// Resize and Upsample (OpFamily::Resize): torch's F.interpolate, which each tool counts its own way.
bool resizes(const Node& n) { return op_family(n.op) == OpFamily::Resize; }

bool gemm_like(const Node& n) {
  OpFamily f = op_family(n.op);
  return f == OpFamily::Conv || f == OpFamily::ConvTranspose || f == OpFamily::Linear || f == OpFamily::MatMul ||
         f == OpFamily::Einsum;
}
Count gemm_macs(const Graph& g, const Node& n) {
  switch (op_family(n.op)) {
    case OpFamily::Conv: case OpFamily::ConvTranspose: return ops::conv_geometry(g, n).macs;
    case OpFamily::Linear: return ops::linear_geometry(g, n).macs;
    case OpFamily::MatMul: return ops::matmul_geometry(g, n).macs;
    case OpFamily::Einsum: return ops::einsum_macs(g, n).value_or(0);
    default: return 0;
  }
}
/// MACs the way the hook tools write a convolution: output elements x Cin/groups x kernel taps. Equal to
/// conv_geometry().macs for a convolution; for a transposed one (whose real MACs run over input positions)
/// thop's and pthflops' shared formula over output positions (validation: convtranspose2d_dcgan).
Count macs_over_outputs(const Graph& g, const Node& n) {
  auto c = ops::conv_geometry(g, n);
  if (op_family(n.op) != OpFamily::ConvTranspose) return c.macs;
  return c.out_elems * (c.cin / std::max<int64_t>(c.groups, 1)) * c.kernel_taps;
}
bool is_pool(const Node& n) {
  OpFamily f = op_family(n.op);
  return f == OpFamily::MaxPool || f == OpFamily::AvgPool || f == OpFamily::AdaptiveAvgPool ||
         f == OpFamily::GlobalAvgPool;
}
bool is_relu_like_double(const std::string& t) { return t == "ReLU" || t == "PReLU" || t == "ELU" || t == "GELU"; }
Count softmax_rows_len(const Graph& g, const Node& n, Count& len) {
  const Shape& s = g.value(n.inputs[0]).shape;
  int64_t axis = n.attrs.i("axis", -1);
  if (axis < 0) axis += s.rank();
  len = s[static_cast<int>(axis)];
  return len > 0 ? s.elements() / len : 0;
}

/// One ONNX LSTM/GRU/RNN node (= one layer of an nn.LSTM/GRU/RNN module, both directions) as the tools' module
/// hooks see it. Every node of these ops is a module's layer, whether or not the importer marked it as the call.
struct Recurrent {
  Count tokens = 0;  ///< sequence x batch (the hooks multiply by input.shape[0] * input.shape[1])
  Count dirs = 1, gates = 1, hidden = 0, in = 0;
  bool bias = false;
  Count weights = 0;  ///< elements of W, R and B (the module's weight_ih/hh_l*, bias_ih/hh_l* of this layer)
};
std::optional<Recurrent> recurrent(const Graph& g, const Node& n) {
  // LSTM, GRU and RNN only: the scans (SelectiveScan, GatedDeltaRule, MambaScan; Recurrent too) are fused kernels no
  // module hook or FLOP counter sees
  const bool rnn = n.op == OpKind::LSTM || n.op == OpKind::GRU || n.op == OpKind::RNN;
  if (!rnn || n.inputs.size() < 3) return std::nullopt;
  const Shape& x = g.value(n.inputs[0]).shape;
  const Shape& w = g.value(n.inputs[1]).shape;
  const Shape& r = g.value(n.inputs[2]).shape;
  if (x.rank() != 3 || w.rank() != 3 || r.rank() != 3) return std::nullopt;
  Recurrent l;
  l.tokens = Count{x[0]} * x[1];
  l.dirs = w[0];
  l.gates = n.op == OpKind::LSTM ? 4 : n.op == OpKind::GRU ? 3 : 1;
  l.hidden = r[2];
  l.in = w[2];
  l.bias = n.inputs.size() > 3 && n.inputs[3] >= 0;
  l.weights = w.elements() + r.elements() + (l.bias ? g.value(n.inputs[3]).shape.elements() : 0);
  return l;
}
/// ptflops' and DeepSpeed's rnn_flops() gate terms per step and direction: RNN H, GRU 7H, LSTM 10H.
Count hook_gate_terms(const Node& n, Count H) { return n.op == OpKind::LSTM ? 10 * H : n.op == OpKind::GRU ? 7 * H : H; }
/// ptflops (rnn_flops_counter_hook): per step and direction W_ih and W_hh element counts, the gate terms and
/// both biases (2·G·H).
Count ptflops_recurrent(const Node& n, const Recurrent& l) {
  const Count GH = l.gates * l.hidden;
  return l.tokens * l.dirs * (GH * l.in + GH * l.hidden + hook_gate_terms(n, l.hidden) + (l.bias ? 2 * GH : 0));
}
/// DeepSpeed / calflops (_rnn_forward_hook): 2·rows·cols − rows for each weight matrix, the gate terms, biases.
Count deepspeed_recurrent(const Node& n, const Recurrent& l) {
  const Count GH = l.gates * l.hidden;
  return l.tokens * l.dirs *
         (2 * GH * l.in - GH + 2 * GH * l.hidden - GH + hook_gate_terms(n, l.hidden) + (l.bias ? 2 * GH : 0));
}
/// thop (count_lstm/gru/rnn): per gate (I + H)·H + H (+ 2H with bias); LSTM adds 4H (c' and h'), GRU 4H (r
/// hadamard and h').
Count thop_recurrent(const Node& n, const Recurrent& l) {
  const Count H = l.hidden, per_gate = (l.in + H) * H + H + (l.bias ? 2 * H : 0);
  return l.tokens * l.dirs * (l.gates * per_gate + (n.op == OpKind::RNN ? 0 : 4 * H));
}

// ---- one function per tool ----------------------------------------------------------------------------

Count torchvision_rule(const Graph& g, const Node& n) { return gemm_like(n) ? gemm_macs(g, n) : 0; }

Count torch_rule(const Graph& g, const Node& n) { return gemm_like(n) ? 2 * gemm_macs(g, n) : 0; }

Count fvcore_rule(const Graph& g, const Node& n, bool training) {
  const int x = n.inputs.empty() ? -1 : n.inputs[0];
  if (gemm_like(n)) return gemm_macs(g, n);
  if (is_bn(n)) return E(g, x) * (training ? (is_affine(g, n) ? 5 : 4) : (is_affine(g, n) ? 2 : 1));
  if (n.op == OpKind::LayerNormalization) return E(g, x) * (is_affine(g, n) ? 5 : 4);
  // fvcore has a handle for aten::adaptive_avg_pool2d only: 1-D and 3-D adaptive pooling count 0.
  if ((n.op == OpKind::AdaptiveAvgPool || n.op == OpKind::GlobalAveragePool) && g.value(x).shape.rank() == 4)
    return E(g, x);
  if (resizes(n))
    return ops::out_elems(g, n) * (n.attrs.s("mode", "nearest") == "nearest" ? 1 : 4);
  return 0;
}

Count ptflops_rule(const Graph& g, const Node& n) {
  if (auto l = recurrent(g, n)) return ptflops_recurrent(n, *l);
  if (captured(n)) return 0;  // e.g. Hugging Face's GELUActivation: not nn.GELU, F.gelu kept in an attribute
  const int x = n.inputs.empty() ? -1 : n.inputs[0];
  const Count out = ops::out_elems(g, n);
  const std::string& t = n.module_type;
  if (n.module_call) {
    if (t == "Conv2d" || t == "Conv1d" || t == "Conv3d") {
      auto c = ops::conv_geometry(g, n);
      return c.macs + (c.bias ? c.out_elems : 0);
    }
    if (t.rfind("ConvTranspose", 0) == 0) {
      auto c = ops::conv_geometry(g, n);
      return c.macs + (c.bias ? c.out_elems : 0);  // main term over input positions, bias over outputs
    }
    if (t == "Linear") {
      auto l = ops::linear_geometry(g, n);
      return l.rows * (l.in * l.out + (l.bias ? l.out : 0));
    }
    if (t == "Conv1D") {  // HF Conv1D: invisible module, but torch.addmm is patched: MACs + bias elements once
      auto l = ops::linear_geometry(g, n);
      return l.macs + (l.bias ? l.out : 0);
    }
    if (t.rfind("BatchNorm", 0) == 0) return E(g, x) * (is_affine(g, n) ? 2 : 1);
    if (t == "LayerNorm" || t == "GroupNorm" || t.rfind("InstanceNorm", 0) == 0) return E(g, x);
    if (is_relu_like_double(t)) return 2 * out;  // module hook + patched functional inside
    if (t == "ReLU6" || t == "LeakyReLU") return out;
    if (is_pool(n)) return 2 * E(g, x);
    if (t == "Upsample") return 2 * out;
    if (t == "Softmax") return out;  // nn.Softmax calls the patched F.softmax
    if (t == "SiLU") return out;     // no hook for nn.SiLU; it calls the patched F.silu
    return 0;
  }
  if (captured(n)) return 0;
  switch (n.op) {
    case OpKind::Relu: case OpKind::Gelu: case OpKind::Elu: case OpKind::Silu: return out;  // patched F.relu, ...
    case OpKind::Softmax: return out;
    case OpKind::MaxPool: case OpKind::AveragePool: case OpKind::AdaptiveAvgPool: case OpKind::GlobalAveragePool:
    case OpKind::GlobalMaxPool:
      return E(g, x);
    case OpKind::MatMul: return ops::matmul_geometry(g, n).macs;
    case OpKind::Resize: case OpKind::Upsample: return out;  // patched F.interpolate: N * C * prod(size)
    // F.linear is not patched (since October 2023): a functional linear (inside MultiheadAttention) counts 0.
    case OpKind::Add:
      if (has_attr(n, "torch_fn", "baddbmm") || has_attr(n, "torch_fn", "torch.add")) return E(g, n.inputs[1]);
      return 0;
    default: return 0;
  }
}

Count thop_rule(const Graph& g, const Node& n) {
  if (auto l = recurrent(g, n)) return thop_recurrent(n, *l);
  if (!n.module_call) return 0;
  const int x = n.inputs.empty() ? -1 : n.inputs[0];
  const Count out = ops::out_elems(g, n);
  const std::string& t = n.module_type;
  if (t.rfind("Conv", 0) == 0 && t != "Conv1D") return macs_over_outputs(g, n);
  if (t == "Linear") return ops::linear_geometry(g, n).macs;
  if (t.rfind("BatchNorm", 0) == 0 || t == "LayerNorm" || t == "GroupNorm" || t.rfind("InstanceNorm", 0) == 0)
    return E(g, x) * (is_affine(g, n) ? 4 : 2);
  if (t == "AvgPool2d" || t == "AvgPool1d" || t == "AvgPool3d") return out;
  if (t == "Upsample" && resizes(n)) {  // calculate_upsample(): output elements x a per-mode factor
    const std::string mode = n.attrs.s("mode", "nearest");
    const int spatial = g.value(n.outputs[0]).shape.rank() - 2;
    if (mode == "nearest") return out;
    if (mode == "linear") return out * (spatial == 1 ? 5 : spatial == 2 ? 11 : 31);
    if (mode == "cubic" && spatial == 2) return out * (224 + 35);
    return 0;
  }
  if (t.rfind("AdaptiveAvgPool", 0) == 0) {  // 1d, 2d and 3d: prod(in / out) over the spatial dims, + 1 divide
    const Shape& s = g.value(x).shape;
    const Shape& y = g.value(n.outputs[0]).shape;
    Count kernel = 1;
    for (int i = 2; i < y.rank(); ++i) kernel *= s[i] / y[i];
    return (kernel + 1) * out;
  }
  if (t == "Softmax") {
    Count len = 0;
    Count rows = softmax_rows_len(g, n, len);
    return rows * (3 * len - 1);
  }
  return 0;
}

Count torchinfo_rule(const Graph& g, const Node& n) {
  // RNN modules' inner weights (weight_ih_l0, ...) times output_size[:2] (sequence x batch).
  if (auto l = recurrent(g, n)) return l->weights * l->tokens;
  if (!n.module_call) return 0;
  const Shape& y = g.value(n.outputs[0]).shape;
  const bool conv = n.module_type.find("Conv") != std::string::npos;
  Count positions = y.rank() ? y[0] : 1;
  if (conv)
    for (int i = 2; i < y.rank(); ++i) positions *= y[i];
  Count total = 0;
  for (int v : n.inputs) {
    if (v < 0 || g.value(v).kind != ValueKind::Param) continue;
    // torchinfo matches the module's own parameter name: "weight" / "bias" (the last segment of "0.weight", or a
    // bare leaf module's "weight"), else an RNN's "weight_ih_l0".
    const std::string& name = g.value(v).name;
    const std::string local = name.substr(name.rfind('.') == std::string::npos ? 0 : name.rfind('.') + 1);
    const bool plain = local == "weight" || local == "bias";
    if (conv || plain) total += g.value(v).shape.elements() * positions;
    else total += g.value(v).shape.elements() * (y.rank() >= 2 ? Count{y[0]} * y[1] : positions);
  }
  return total;
}

Count pthflops_rule(const Graph& g, const Node& n, const std::set<std::string>& fx_leaves) {
  if (inside_fx_leaf(fx_leaves, n)) return 0;
  const int x = n.inputs.empty() ? -1 : n.inputs[0];
  const Count out = ops::out_elems(g, n);
  if (n.module_call) {
    const std::string& t = n.module_type;
    if (t.rfind("Conv", 0) == 0 && t != "Conv1D") {
      auto c = ops::conv_geometry(g, n);
      return macs_over_outputs(g, n) + (c.bias ? c.out_elems : 0);
    }
    if (t == "ReLU") return 2 * out;
    if (t.rfind("BatchNorm", 0) == 0) return 2 * out;
    if (t.rfind("MaxPool", 0) == 0) return (ops::pool_taps(g, n) - 1) * out;
    if (t.rfind("AvgPool", 0) == 0) return ops::pool_taps(g, n) * out;
    if (t.rfind("AdaptiveAvgPool", 0) == 0) {
      const Shape& s = g.value(x).shape;
      return s[-2] * s[-1] * out;
    }
    if (t == "Linear") {
      auto l = ops::linear_geometry(g, n);
      return E(g, x) * l.out + (l.bias ? l.out : 0);
    }
    return 0;
  }
  // call_function: operator add / mul count output elements x number of arguments; matmul as a linear.
  // `out += identity` is traced as operator.add too (fx proxies have no in-place add): seed 002's ResNet
  // numbers (3,653,586,920 and 8,286,749,672 at batch 2) include it.
  if ((n.op == OpKind::Add || n.op == OpKind::Mul) && !has_attr(n, "torch_fn", "baddbmm")) return out * 2;
  if (n.op == OpKind::MatMul) return E(g, x) * g.value(n.outputs[0]).shape[-1];
  return 0;
}

/// DeepSpeed's _conv_trans_flops_compute, as written: out_channels is weight.shape[1] (Cout / groups, then divided
/// by groups again), MACs run over input positions, and the bias term uses the output extent of a *direct*
/// convolution, (in + 2p - d(k-1) - 1) / s + 1, rather than the transposed one.
std::pair<Count, Count> deepspeed_conv_transpose(const Graph& g, const Node& n) {
  const Shape& x = g.value(n.inputs[0]).shape;
  const Shape& w = g.value(n.inputs[1]).shape;
  const int spatial = x.rank() - 2;
  const int64_t groups = std::max<int64_t>(n.attrs.i("group", 1), 1);
  const std::vector<int64_t> strides = n.attrs.ints("strides"), pads = n.attrs.ints("pads"),
                             dilations = n.attrs.ints("dilations");
  auto at = [](const std::vector<int64_t>& v, int i, int64_t def) { return i < static_cast<int>(v.size()) ? v[i] : def; };
  Count kernel = 1, in_positions = x[0], conv_positions = x[0];
  for (int i = 0; i < spatial; ++i) {
    kernel *= w[i + 2];
    in_positions *= x[i + 2];
    const int64_t d = at(dilations, i, 1), s = std::max<int64_t>(at(strides, i, 1), 1);
    conv_positions *= (x[i + 2] + 2 * at(pads, i, 0) - (d * (w[i + 2] - 1) + 1)) / s + 1;
  }
  const Count out_channels = w[1];
  const Count macs = kernel * x[1] * (out_channels / groups) * in_positions;
  const bool bias = n.inputs.size() > 2 && n.inputs[2] >= 0;
  return {macs, 2 * macs + (bias ? out_channels * conv_positions : 0)};
}

/// DeepSpeed's _upsample_flops_compute: prod(size) when a size was given; else input.numel() * scale **
/// len(input), where len(input) is the batch size (the tensor's first dim), not the number of spatial dims.
/// calflops' copy drops the product (`flops * ...` without assignment): input.numel().
Count deepspeed_upsample(const Graph& g, const Node& n, bool calflops) {
  const Shape& x = g.value(n.inputs[0]).shape;
  const Shape& y = g.value(n.outputs[0]).shape;
  if (n.inputs.size() > 3 && n.inputs[3] >= 0) {  // sizes
    Count size = 1;
    for (int i = 2; i < y.rank(); ++i) size *= y[i];
    return size;
  }
  if (calflops || x.rank() < 3 || x[2] <= 0 || y[2] % x[2] != 0) return x.elements();
  Count flops = x.elements();
  for (int64_t b = 0; b < x[0]; ++b) flops *= y[2] / x[2];
  return flops;
}

/// DeepSpeed flops profiler: returns {MACs, FLOPs} of one node.
std::pair<Count, Count> deepspeed_rule(const Graph& g, const Node& n, bool training) {
  if (auto l = recurrent(g, n)) return {0, deepspeed_recurrent(n, *l)};
  const int x = n.inputs.empty() ? -1 : n.inputs[0];
  const Count out = ops::out_elems(g, n);
  switch (op_family(n.op)) {
    case OpFamily::Conv: {
      auto c = ops::conv_geometry(g, n);
      return {c.macs, 2 * c.macs + (c.bias ? c.out_elems : 0)};
    }
    case OpFamily::ConvTranspose: return deepspeed_conv_transpose(g, n);
    case OpFamily::Linear: {
      auto l = ops::linear_geometry(g, n);
      if (n.module_type == "Conv1D") return {l.macs, 2 * l.macs + (l.bias ? l.out : 0)};  // torch.addmm
      return {l.macs, 2 * l.macs};  // F.linear: bias ignored
    }
    case OpFamily::MatMul: case OpFamily::Einsum: {
      Count m = gemm_macs(g, n);
      return {m, 2 * m};
    }
    default: break;
  }
  if (captured(n)) return {0, 0};
  switch (n.op) {
    case OpKind::Relu: case OpKind::Gelu: case OpKind::LeakyRelu: case OpKind::Elu: case OpKind::Silu:
    case OpKind::PRelu:
      return {0, out};
    case OpKind::Softmax: return {0, out};
    case OpKind::MaxPool: case OpKind::AveragePool: case OpKind::AdaptiveAvgPool: case OpKind::GlobalAveragePool:
    case OpKind::GlobalMaxPool:
      return {0, E(g, x)};
    case OpKind::BatchNormalization:
      return {0, E(g, x) * (training ? (is_affine(g, n) ? 5 : 4) : (is_affine(g, n) ? 2 : 1))};
    case OpKind::LayerNormalization: return {0, E(g, x) * (is_affine(g, n) ? 5 : 4)};
    case OpKind::Resize: case OpKind::Upsample: return {0, deepspeed_upsample(g, n, false)};
    case OpKind::Add:
      if (has_attr(n, "torch_fn", "baddbmm") || has_attr(n, "torch_fn", "torch.add")) return {0, E(g, n.inputs[1])};
      return {0, 0};
    default: return {0, 0};
  }
}

Count folded_conv_count(const Graph& g, const Node& n, Convention c, bool training,
                        const std::set<std::string>& fx_leaves) {
  Node conv = n;
  conv.inputs.resize(2);
  conv.attrs.items.erase("folded_batchnorm");
  const Count E = ops::out_elems(g, n);
  const Shape& y = g.value(n.outputs[0]).shape;
  switch (c) {
    case Convention::Ridge: return 2 * ops::conv_geometry(g, conv).macs + 2 * E;
    case Convention::Torchvision: return torchvision_rule(g, conv);
    case Convention::Torch: return torch_rule(g, conv);
    case Convention::Fvcore: return fvcore_rule(g, conv, training) + (training ? 5 : 2) * E;
    case Convention::Ptflops: return ptflops_rule(g, conv) + 2 * E;
    case Convention::Thop: return thop_rule(g, conv) + 4 * E;
    case Convention::Torchinfo: return torchinfo_rule(g, conv) + Count{y[0]} * 2 * y[1];
    case Convention::Pthflops: return pthflops_rule(g, conv, fx_leaves) + 2 * E;
    case Convention::Deepspeed: case Convention::Calflops:
      return deepspeed_rule(g, conv, training).second + (training ? 5 : 2) * E;
  }
  return 0;
}

std::string fixed(double v, int decimals) { return fmt::format("{:.{}f}", v, decimals); }

std::string torchinfo_scaled(Count v) {
  double d = to_double(v);
  if (d >= 1e12) return "Total mult-adds (T): " + fixed(d / 1e12, 2);
  if (d >= 1e9) return "Total mult-adds (G): " + fixed(d / 1e9, 2);
  return "Total mult-adds (M): " + fixed(d / 1e6, 2);
}

/// A conv with a BatchNorm folded in (eval-mode ONNX export) counts as the original pair: the conv without
/// bias plus an affine BatchNorm2d module over its output, under the tool's own rules.
Count folded_conv_count(const Graph& g, const Node& n, Convention c, bool training,
                        const std::set<std::string>& fx_leaves);

}  // namespace

const std::vector<ConventionInfo>& conventions() { return kConventions; }

const ConventionInfo& convention_info(Convention c) {
  for (const auto& i : kConventions)
    if (i.id == c) return i;
  return kConventions.front();
}

std::optional<Convention> parse_convention(std::string_view name) {
  for (const auto& i : kConventions)
    if (i.name == name) return i.id;
  if (name == "pytorch-estimate-flops") return Convention::Pthflops;
  if (name == "flop_counter" || name == "flopcountermode") return Convention::Torch;
  return std::nullopt;
}

ConventionCount count_under(const Graph& g, Convention c) {
  ConventionCount out;
  out.convention = c;
  out.per_node.assign(g.nodes.size(), 0);
  const bool training = false;  // zoo and ONNX graphs are analysed as eval-mode forward passes
  Count deepspeed_macs = 0;
  const std::set<std::string> mha = mha_paths(g);
  const std::set<std::string> fx_wrapped = c == Convention::Pthflops ? fx_wrapped_attention_paths(g)
                                                                     : std::set<std::string>{};
  const std::set<std::string> fx_leaves = c == Convention::Pthflops ? fx_leaf_paths(g) : std::set<std::string>{};
  if (c == Convention::Ridge) {
    ModelCost mc = estimate(g);
    for (size_t i = 0; i < g.nodes.size(); ++i) out.per_node[i] = mc.nodes[i].cost.flops;
    out.params = mc.total.params;
  } else {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& n = g.nodes[i];
      bool known = true;
      for (int v : n.inputs)
        if (v >= 0 && !g.value(v).shape.known()) known = false;
      for (int v : n.outputs)
        if (!g.value(v).shape.known()) known = false;
      if (!known || op_family(n.op) == OpFamily::Unknown) continue;
      if (ops::folded_batchnorm(n)) {
        out.per_node[i] = folded_conv_count(g, n, c, training, fx_leaves);
        if (c == Convention::Deepspeed || c == Convention::Calflops) deepspeed_macs += ops::conv_geometry(g, n).macs;
        continue;
      }
      Count v = 0;
      switch (c) {
        case Convention::Torchvision: v = torchvision_rule(g, n); break;
        case Convention::Fvcore: v = fvcore_rule(g, n, training); break;
        case Convention::Ptflops: v = ptflops_rule(g, n); break;
        case Convention::Thop: v = thop_rule(g, n); break;
        case Convention::Torchinfo: v = torchinfo_rule(g, n); break;
        case Convention::Pthflops:  // fx leaf modules and fx-wrapped functions: one opaque call, 0
          v = inside_any(n, mha) || inside_any(n, fx_wrapped) ? 0 : pthflops_rule(g, n, fx_leaves);
          break;
        case Convention::Deepspeed: case Convention::Calflops: {
          // calflops does not patch torch.bmm: nn.MultiheadAttention's two products (bmm in torch 1.13) count 0.
          if (c == Convention::Calflops && n.op == OpKind::MatMul && inside_any(n, mha)) break;
          auto [m, f] = deepspeed_rule(g, n, training);
          if (c == Convention::Calflops && resizes(n))
            f = deepspeed_upsample(g, n, true);
          deepspeed_macs += m;
          v = f;
          break;
        }
        case Convention::Torch: v = torch_rule(g, n); break;
        case Convention::Ridge: break;
      }
      out.per_node[i] = v;
    }
    out.params = estimate(g).total.params;
  }
  // ptflops and the MultiheadAttention hook (multihead_attention_counter_hook): its own formula per call, in
  // addition to the patched tensor ops (bmm, softmax). Query length from the in_proj input, key/value length from
  // the second input linear of a cross-attention (k is v: torch splits in_proj_weight into Q and KV linears),
  // else the query's. The head count from the [L, B*heads, head] view (the largest that fits).
  if (c == Convention::Ptflops) {
    for (const std::string& path : mha) {
      int anchor = -1, kv = -1;
      for (size_t i = 0; i < g.nodes.size(); ++i) {
        const Node& n = g.nodes[i];
        if (n.module != path || n.op != OpKind::Gemm || n.name == path + ".out_proj") continue;
        if (anchor < 0) anchor = static_cast<int>(i);
        else if (kv < 0) kv = static_cast<int>(i);
      }
      if (anchor < 0) continue;
      const Node& n = g.nodes[anchor];
      const Shape& q = g.value(n.inputs[0]).shape;  // [L, B, E] (batch_first = False)
      const Shape& k = kv >= 0 ? g.value(g.nodes[kv].inputs[0]).shape : q;
      int64_t heads = 1;
      for (const Node& r : g.nodes)
        if (r.module == path && r.op == OpKind::Reshape) {
          const Shape& rs = g.value(r.outputs[0]).shape;
          if (rs.rank() == 3 && rs[1] % q[1] == 0 && rs[2] * (rs[1] / q[1]) == q[2])
            heads = std::max<int64_t>(heads, rs[1] / q[1]);
        }
      const bool bias = n.inputs.size() > 2 && n.inputs[2] >= 0;
      const Count L = q[0], S = k[0], B = q[1], Em = q[2], hd = Em / heads;
      const Count f = L * Em + L * Em * Em + 2 * S * Em * Em + (bias ? (L + 2 * S) * Em : 0) +
                      heads * (L * S * hd + L * S + L * S * hd) + L * Em * (Em + 1);
      out.per_node[anchor] += f * B;
    }
  }
  for (Count v : out.per_node) out.total += v;
  const double t = to_double(out.total);
  switch (c) {
    case Convention::Ridge: out.headline_text = with_commas(out.total) + " FLOPs"; break;
    case Convention::Torchvision: out.headline_text = fixed(t / 1e9, 3) + " GFLOPS (torchvision _ops, really GMACs)"; break;
    case Convention::Fvcore: out.headline_text = to_string(out.total) + " (FlopCountAnalysis.total(), MACs)"; break;
    case Convention::Ptflops: out.headline_text = fixed(t / 1e9, 2) + " GMac"; break;
    case Convention::Thop: out.headline_text = fixed(t / 1e9, 3) + "G MACs (thop.clever_format)"; break;
    case Convention::Torchinfo: out.headline_text = torchinfo_scaled(out.total); break;
    case Convention::Pthflops:
      out.headline_text = with_commas(out.total) + " FLOPs or approx. " + fixed(t / 1e9, 2) + " GFLOPs";
      break;
    case Convention::Deepspeed: case Convention::Calflops:
      out.headline_text = fmt::format("fwd FLOPs {} ({} G), fwd MACs {} ({} G)", with_commas(out.total),
                                      fixed(t / 1e9, 2), with_commas(deepspeed_macs),
                                      fixed(to_double(deepspeed_macs) / 1e9, 2));
      break;
    case Convention::Torch: out.headline_text = with_commas(out.total) + " FLOPs (FlopCounterMode)"; break;
  }
  return out;
}

}  // namespace ridge
