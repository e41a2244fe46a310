// Exporter artefacts, recognised and written into Graph::notes so that every output explains them:
// BatchNorm folded into Conv by eval-mode exports, multiplications by the constant 1, tied embeddings,
// torchvision's adaptive average pool exported as a fixed pool, and ops ridge does not know.
#include <fmt/format.h>

#include <map>
#include <optional>

#include "load/onnx/onnx_internal.hpp"

namespace ridge::onnx_in {
namespace {

bool ends_with_segment(const std::string& module, const std::string& seg) {
  return module == seg || (module.size() > seg.size() && module.compare(module.size() - seg.size() - 1, std::string::npos, "." + seg) == 0);
}

/// torchvision's `avgpool` (nn.AdaptiveAvgPool2d) exports as AveragePool or GlobalAveragePool: give it back
/// its torch identity so that conventions see the same layer as in the zoo.
void restore_adaptive_pools(Work& w) {
  for (Node& n : w.g.nodes) {
    if (n.op != OpKind::AveragePool && n.op != OpKind::GlobalAveragePool) continue;
    if (!ends_with_segment(n.module, "avgpool") || n.outputs.empty()) continue;
    const Shape& out = w.g.value(n.outputs[0]).shape;
    if (out.rank() < 3 || !out.known()) continue;
    n.op = OpKind::AdaptiveAvgPool;
    n.attrs.set("output_size", std::vector<int64_t>(out.dims.begin() + 2, out.dims.end()));
    if (n.module_call) n.module_type = "AdaptiveAvgPool" + std::to_string(out.rank() - 2) + "d";
  }
}

/// An exporter-computed tensor has no parameter name: torch names it after its consumer ("onnx::Conv_193").
bool anonymous(const Value& v) { return v.name.rfind("onnx::", 0) == 0; }

/// Eval-mode exports fold each BatchNorm into the preceding Conv: no BatchNormalization nodes remain and
/// those convolutions get a computed weight and bias (anonymous "onnx::Conv_N" initializers) where
/// torchvision's conv had a named weight and no bias. Marks exactly those Conv nodes `folded_batchnorm`
/// so that they are costed as conv + BatchNorm, like the model they came from. BatchNormalization nodes may remain
/// where no conv precedes the norm (DenseNet's norm -> relu -> conv); a conv whose output feeds a remaining
/// BatchNormalization was not folded.
void mark_folded_batchnorm(Work& w) {
  std::vector<char> feeds_bn(w.g.values.size(), 0);
  for (const Node& n : w.g.nodes)
    if (n.op == OpKind::BatchNormalization && !n.inputs.empty() && n.inputs[0] >= 0) feeds_bn[n.inputs[0]] = 1;
  int convs = 0;
  Count channels = 0;
  for (Node& n : w.g.nodes) {
    if (n.op != OpKind::Conv || n.inputs.size() < 3 || n.inputs[1] < 0 || n.inputs[2] < 0) continue;
    if (n.outputs.empty() || feeds_bn[n.outputs[0]]) continue;
    const Value& weight = w.g.value(n.inputs[1]);
    const Value& bias = w.g.value(n.inputs[2]);
    if (!anonymous(weight) || !anonymous(bias) || bias.kind != ValueKind::Param || !bias.shape.known()) continue;
    n.attrs.set("folded_batchnorm", int64_t{1});
    ++convs;
    channels += bias.shape.elements();
  }
  if (convs == 0) return;
  w.g.notes.push_back(fmt::format(
      "BatchNorm folded into {} Conv node(s) by an eval-mode export: this file has {} fewer parameters than "
      "the model it came from (each BatchNorm's weight and bias, 2 per channel, became 1 Conv bias per channel; "
      "running mean and variance are gone); FLOPs of those Conv nodes are counted as conv without bias + "
      "BatchNorm, as in the original model",
      convs, with_commas(channels)));
}

/// The one element of a constant tensor when it holds exactly one number.
std::optional<double> constant_scalar(const Work& w, int v) {
  if (v < 0 || w.g.value(v).kind != ValueKind::Constant) return std::nullopt;
  const Value& val = w.g.value(v);
  if (val.has_int_data && val.int_data.size() == 1) return static_cast<double>(val.int_data[0]);
  if (w.env.float_data[v] && w.env.float_data[v]->size() == 1) return (*w.env.float_data[v])[0];
  return std::nullopt;
}

/// torch exports baddbmm's alpha and beta as explicit Mul nodes, also when they are 1: a Mul (either side)
/// or Div (divisor) of a floating-point tensor by a constant scalar equal to exactly 1, whose output has the
/// tensor's shape, is a computation the model does not perform. It becomes an Identity over that tensor
/// (op_type stays "Mul"/"Div").
void drop_multiplications_by_one(Work& w) {
  int dropped = 0;
  for (Node& n : w.g.nodes) {
    if ((n.op != OpKind::Mul && n.op != OpKind::Div) || n.inputs.size() != 2 || n.outputs.size() != 1) continue;
    for (int side : n.op == OpKind::Mul ? std::vector<int>{1, 0} : std::vector<int>{1}) {
      const int data = n.inputs[1 - side];
      if (data < 0 || constant_scalar(w, n.inputs[side]) != 1.0) continue;
      const Value& x = w.g.value(data);
      const Value& y = w.g.value(n.outputs[0]);
      if (!is_float(x.dtype) || x.dtype != y.dtype || !x.shape.known() || x.shape != y.shape) continue;
      n.op = OpKind::Identity;
      n.inputs = {data};
      ++dropped;
      break;
    }
  }
  if (dropped)
    w.g.notes.push_back(fmt::format(
        "{} Mul/Div node(s) by the constant 1 (exporter artefacts, e.g. torch's baddbmm alpha) are costed as "
        "Identity: the model does not perform them",
        dropped));
}

/// An embedding table that the output projection reuses (weight tying) appears once and is counted once.
void note_tied_embeddings(Work& w) {
  std::map<int, std::vector<std::string>> users;
  for (const Node& n : w.g.nodes)
    for (size_t k = 0; k < n.inputs.size(); ++k)
      if (n.inputs[k] >= 0 && w.g.value(n.inputs[k]).kind == ValueKind::Param) users[n.inputs[k]].push_back(n.name);
  for (const auto& [v, nodes] : users) {
    if (nodes.size() < 2) continue;
    bool gathered = false, projected = false;
    for (const Node& n : w.g.nodes)
      for (size_t k = 0; k < n.inputs.size(); ++k) {
        if (n.inputs[k] != v) continue;
        gathered |= n.op == OpKind::Gather && k == 0;
        projected |= n.op == OpKind::MatMul || n.op == OpKind::Gemm;
      }
    if (gathered && projected)
      w.g.notes.push_back(fmt::format("tied embedding: '{}' is used by {} ({}); its {} parameters are counted once",
                                      w.g.value(v).name, nodes.size(), fmt::join(nodes, ", "),
                                      with_commas(w.g.value(v).shape.elements())));
  }
}

void note_unknown_ops(Work& w) {
  std::map<std::string, int> unknown;
  for (const Node& n : w.g.nodes)
    if (n.op == OpKind::Unknown) ++unknown[n.op_type];
  if (unknown.empty()) return;
  std::vector<std::string> parts;
  for (const auto& [op, count] : unknown) parts.push_back(fmt::format("{} x{}", op, count));
  w.g.notes.push_back(fmt::format("ops ridge does not know (kept in the graph, excluded from cost totals): {}",
                                  fmt::join(parts, ", ")));
}

/// Dropout's ratio as the attribute `ratio` (opset 12 moved it from an attribute to input 1) when input 1 is a
/// constant scalar: torch exports F.dropout(p=0.0, training=True) with training_mode true and ratio 0, which drops
/// nothing (ops::dropout_active reads the attribute).
void record_dropout_ratios(Work& w) {
  for (Node& n : w.g.nodes)
    if (n.op == OpKind::Dropout && n.inputs.size() > 1)
      if (auto ratio = constant_scalar(w, n.inputs[1])) n.attrs.set("ratio", *ratio);
}

}  // namespace

void recognise_artefacts(Work& w) {
  record_dropout_ratios(w);
  restore_adaptive_pools(w);
  mark_folded_batchnorm(w);
  drop_multiplications_by_one(w);
  note_tied_embeddings(w);
  note_unknown_ops(w);
}

}  // namespace ridge::onnx_in
