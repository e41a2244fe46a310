// Memory as a function of batch size: weights, gradients, optimizer state, activations saved for backward,
// the inference peak from a liveness pass, and the memory lines torchinfo / torchsummary print.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "ridge/op_geometry.hpp"
#include "ridge/op_rules.hpp"
#include "ridge/cost.hpp"

namespace ridge {

namespace {

/// Storage root of each value: views (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout at inference)
/// alias their input's storage.
std::vector<int> storage_roots(const Graph& g) {
  std::vector<int> root(g.values.size());
  for (size_t i = 0; i < root.size(); ++i) root[i] = static_cast<int>(i);
  for (int ni : topo_order(g)) {
    const Node& n = g.nodes[ni];
    OpFamily f = op_family(n.op);
    if ((f == OpFamily::View || (f == OpFamily::Dropout && !ops::dropout_active(g, n))) && !n.inputs.empty() &&
        n.inputs[0] >= 0)
      for (int o : n.outputs) root[o] = root[n.inputs[0]];
  }
  return root;
}

bool is_activation(const Value& v) { return v.kind == ValueKind::Activation || v.kind == ValueKind::Input; }

/// Values a node saves for its backward pass, from its op record (activations only; weights are counted as
/// parameters), plus extra bytes for small per-channel/per-row statistics, indices and masks.
void saved_by(const Graph& g, const Node& n, std::vector<int>& values, Count& extra) {
  auto act = [&](int v) {
    if (v >= 0 && is_activation(g.value(v))) values.push_back(v);
  };
  const int x = n.inputs.empty() ? -1 : n.inputs[0];
  const Count out = ops::out_elems(g, n);
  auto rows = [&] {
    const Shape& s = g.value(x).shape;
    return s.elements() / std::max<int64_t>(1, s.rank() ? s[-1] : 1);
  };
  switch (op_record(n.op).saves) {
    case Saves::None: break;
    case Saves::Input: act(x); break;
    case Saves::Output: act(n.outputs.empty() ? -1 : n.outputs[0]); break;
    case Saves::Inputs:
      for (int v : n.inputs) act(v);
      break;
    case Saves::ChannelStats:
      act(x);
      extra += 2 * g.value(x).shape[1] * 4;  // saved mean and inverse std per channel (fp32)
      break;
    case Saves::RowStats:
      act(x);
      extra += 2 * rows() * 4;  // mean and rstd per row (fp32)
      break;
    case Saves::RowRms:
      act(x);
      extra += rows() * 4;  // rstd per row (fp32)
      break;
    case Saves::InputArgmax:
      act(x);
      extra += out * 8;  // int64 indices of the maxima
      break;
    case Saves::Mask:  // bool mask in training mode (none when the ratio is 0)
      if (!ops::dropout_drops_nothing(n)) extra += out;
      break;
    case Saves::Index:
      if (n.inputs.size() > 1) act(n.inputs[1]);
      break;
    case Saves::Condition: act(x); break;
  }
}

/// Fills the MB values (at `mb` bytes per MB) and the four lines both tools print.
ToolMemoryLines finish_lines(ToolMemoryLines t, double mb) {
  t.input_mb = to_double(t.input_bytes) / mb;
  t.forward_backward_mb = to_double(t.forward_backward_bytes) / mb;
  t.params_mb = to_double(t.params_bytes) / mb;
  t.total_mb = t.input_mb + t.forward_backward_mb + t.params_mb;
  t.text = fmt::format(
      "Input size (MB): {:.2f}\nForward/backward pass size (MB): {:.2f}\nParams size (MB): {:.2f}\n"
      "Estimated Total Size (MB): {:.2f}",
      t.input_mb, t.forward_backward_mb, t.params_mb, t.total_mb);
  return t;
}

}  // namespace

std::optional<Optimizer> parse_optimizer(std::string_view name) {
  if (name == "sgd") return Optimizer::SGD;
  if (name == "momentum") return Optimizer::Momentum;
  if (name == "adam" || name == "adamw") return Optimizer::Adam;
  return std::nullopt;
}

std::string_view optimizer_name(Optimizer o) {
  switch (o) {
    case Optimizer::SGD: return "sgd";
    case Optimizer::Momentum: return "momentum";
    case Optimizer::Adam: return "adam";
  }
  return "?";
}

OptimizerStep optimizer_step(Optimizer o) {
  switch (o) {
    case Optimizer::SGD: return {2, 1, 2};
    case Optimizer::Momentum: return {3, 2, 4};
    case Optimizer::Adam: return {4, 3, 12};
  }
  return {};
}

MemoryEstimate estimate_memory(const Graph& g, Optimizer opt) { return estimate_memory(g, opt, ParamStorage{}); }

MemoryEstimate estimate_memory(const Graph& g, Optimizer opt, const ParamStorage& storage) {
  MemoryEstimate m;
  const auto grad = requires_grad(g);
  const auto root = storage_roots(g);
  std::set<int> weights;
  for (const Node& n : g.nodes)
    for (int v : n.inputs)
      if (v >= 0 && g.value(v).is_weight() && g.value(v).shape.known()) weights.insert(v);
  // Bytes of `elems` elements at `size` bytes each, or at the value's own type when size is 0.
  auto at = [&](int v, int size) { return size > 0 ? Count(g.value(v).shape.elements()) * size : g.value(v).bytes(); };
  const int states = opt == Optimizer::SGD ? 0 : opt == Optimizer::Momentum ? 1 : 2;
  for (int v : weights) {
    if (g.value(v).kind != ValueKind::Param) {
      m.buffer_bytes += at(v, storage.weight_bytes);
      continue;
    }
    m.param_bytes += at(v, storage.weight_bytes);
    if (!grad[static_cast<size_t>(v)]) continue;  // a quantized (integer) weight: no gradient, no optimizer state
    m.grad_bytes += at(v, storage.gradient_bytes);
    if (storage.master_bytes > 0) m.master_bytes += at(v, storage.master_bytes);
    m.optimizer_bytes += states * at(v, storage.optimizer_state_bytes);
  }
  for (int v : g.inputs)
    if (g.value(v).shape.known()) m.input_bytes += g.value(v).bytes();

  // Saved activations, deduplicated by storage.
  std::set<int> saved_roots;
  m.saved_per_node.assign(g.nodes.size(), 0);
  m.output_bytes.assign(g.nodes.size(), 0);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    bool shapes = true;
    for (int v : n.inputs)
      if (v >= 0 && !g.value(v).shape.known()) shapes = false;
    for (int v : n.outputs)
      if (!g.value(v).shape.known()) shapes = false;
    if (!shapes) continue;
    if (!ops::is_view(g, n))
      for (int o : n.outputs) m.output_bytes[i] += g.value(o).bytes();
    m.activation_bytes += m.output_bytes[i];
    bool needs = false;
    for (int o : n.outputs) needs = needs || grad[o];
    if (!needs) continue;
    std::vector<int> vals;
    Count extra = 0;
    saved_by(g, n, vals, extra);
    for (int v : vals)  // a view's storage may have an unknown shape even when the view's is known
      if (g.value(root[v]).shape.known() && saved_roots.insert(root[v]).second)
        m.saved_per_node[i] += g.value(root[v]).bytes();
    m.saved_per_node[i] += extra;
    m.saved_bytes += m.saved_per_node[i];
  }

  // Inference peak: storages live from their producer to their last consumer (outputs to the end).
  const auto order = topo_order(g);
  std::vector<int> position(g.nodes.size());
  for (size_t k = 0; k < order.size(); ++k) position[order[k]] = static_cast<int>(k);
  std::map<int, int> last_use;  // storage root -> last step that reads it
  for (size_t k = 0; k < order.size(); ++k)
    for (int v : g.nodes[order[k]].inputs)
      if (v >= 0 && is_activation(g.value(v))) last_use[root[v]] = static_cast<int>(k);
  for (int v : g.outputs) last_use[root[v]] = static_cast<int>(order.size());
  Count live = 0;
  for (int v : g.inputs)
    if (g.value(v).shape.known()) live += g.value(v).bytes();
  m.inference_peak_bytes = live;
  for (size_t k = 0; k < order.size(); ++k) {
    const Node& n = g.nodes[order[k]];
    for (int o : n.outputs)
      if (root[o] == o && g.value(o).shape.known() && last_use.count(o)) live += g.value(o).bytes();
    // Outputs that nobody reads are transient: count them at this step, then drop them.
    Count transient = 0;
    for (int o : n.outputs)
      if (root[o] == o && g.value(o).shape.known() && !last_use.count(o)) transient += g.value(o).bytes();
    m.inference_peak_bytes = std::max(m.inference_peak_bytes, live + transient);
    std::set<int> freed;
    for (int v : n.inputs)
      if (v >= 0 && is_activation(g.value(v)) && last_use[root[v]] == static_cast<int>(k) && freed.insert(root[v]).second &&
          g.value(root[v]).shape.known())
        live -= g.value(root[v]).bytes();
  }
  m.training_peak_bytes =
      m.param_bytes + m.buffer_bytes + m.grad_bytes + m.master_bytes + m.optimizer_bytes + m.saved_bytes;
  return m;
}

ToolMemoryLines torchinfo_memory(const Graph& g) {
  ToolMemoryLines t;
  for (const Node& n : g.nodes) {
    if (!n.module_call) continue;
    bool has_param = false;
    for (int v : n.inputs) has_param = has_param || (v >= 0 && g.value(v).kind == ValueKind::Param);
    if (!has_param) continue;
    for (int o : n.outputs)
      if (g.value(o).shape.known()) t.forward_backward_bytes += 2 * g.value(o).bytes();
  }
  for (int v : g.inputs)
    if (g.value(v).shape.known()) t.input_bytes += g.value(v).bytes();
  MemoryEstimate m = estimate_memory(g);
  t.params_bytes = m.param_bytes;
  return finish_lines(t, 1e6);
}

ToolMemoryLines torchsummary_memory(const Graph& g) {
  // torchsummary hooks every module except Sequential/ModuleList (and their subclasses) and the model itself;
  // each call records its output shape and the module's own weight + bias sizes; 4 bytes per element, MB = 2^20.
  static const std::set<std::string> kSkipped = {"Sequential", "ModuleList", "ModuleDict", "Conv2dNormActivation",
                                                 "_Transition"};
  ToolMemoryLines t;
  Count outputs = 0, params = 0;
  std::map<std::string, Count> own_params;  // module path -> weight + bias elements
  for (const Node& n : g.nodes) {
    if (!n.module_call || own_params.count(n.module)) continue;
    Count p = 0;
    for (int v : n.inputs)
      if (v >= 0 && g.value(v).kind == ValueKind::Param) {
        const std::string& name = g.value(v).name;
        if (name.ends_with(".weight") || name.ends_with(".bias")) p += g.value(v).shape.elements();
      }
    own_params[n.module] = p;
  }
  for (const auto& mod : g.modules) {
    if (kSkipped.count(mod.type) || mod.path.empty()) continue;
    for (int o : mod.call_outputs) {
      if (g.value(o).shape.known()) outputs += g.value(o).shape.elements();
      auto it = own_params.find(mod.path);
      if (it != own_params.end()) params += it->second;
    }
  }
  Count in_elems = 0;
  for (int v : g.inputs)
    if (g.value(v).shape.known()) in_elems += g.value(v).shape.elements();
  t.input_bytes = in_elems * 4;
  t.forward_backward_bytes = 2 * outputs * 4;
  t.params_bytes = params * 4;
  return finish_lines(t, 1024.0 * 1024.0);
}

}  // namespace ridge
