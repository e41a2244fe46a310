// torch modules that exporters decompose, put back together so that ONNX graphs and zoo graphs have the
// same layers: avg_pool with padding (Pad, AveragePool), GELU (Div, Erf, Add, Mul, Mul), SiLU (Sigmoid, Mul), LayerNorm (opsets before 17 have no LayerNormalization: torch writes ReduceMean, Sub, Pow,
// ReduceMean, Add, Sqrt, Div, Mul, Add) and Linear on inputs of rank > 2 (MatMul by the transposed weight,
// then Add of the bias). The fused nodes cost what their parts cost under ridge's rules; other tools'
// conventions see the module they hook.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "load/onnx/onnx_internal.hpp"

namespace ridge::onnx_in {
namespace {

/// Users of each value (node indices); graph outputs count as a user -1.
std::vector<std::vector<int>> users_of(const Graph& g) {
  std::vector<std::vector<int>> users(g.values.size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int v : g.nodes[i].inputs)
      if (v >= 0) users[v].push_back(static_cast<int>(i));
  for (int o : g.outputs) users[o].push_back(-1);
  return users;
}

struct Matcher {
  const Work& w;
  const std::vector<std::vector<int>>& users;
  const std::vector<bool>& dead;

  /// The only node that uses value `v` when it has op `op`, one output (and is still alive), else -1.
  int sole_user(int v, OpKind op) const {
    if (v < 0 || users[v].size() != 1 || users[v][0] < 0) return -1;
    const int u = users[v][0];
    return !dead[u] && w.g.nodes[u].op == op && w.g.nodes[u].outputs.size() == 1 ? u : -1;
  }
  const Node& node(int i) const { return w.g.nodes[i]; }
  int out(int i) const { return node(i).outputs.empty() ? -1 : node(i).outputs[0]; }
  /// The input of binary node `i` other than `v` (-1 when `v` is not one of exactly two inputs).
  int other(int i, int v) const {
    const Node& n = node(i);
    if (n.inputs.size() != 2) return -1;
    return n.inputs[0] == v ? n.inputs[1] : n.inputs[1] == v ? n.inputs[0] : -1;
  }
  std::optional<double> scalar(int v) const {
    if (v < 0 || w.g.value(v).kind != ValueKind::Constant) return std::nullopt;
    if (w.env.float_data[v] && w.env.float_data[v]->size() == 1) return (*w.env.float_data[v])[0];
    if (w.g.value(v).has_int_data && w.g.value(v).int_data.size() == 1) return double(w.g.value(v).int_data[0]);
    return std::nullopt;
  }
  bool is_param(int v) const { return v >= 0 && w.g.value(v).kind == ValueKind::Param; }
  /// Normalized axes of a ReduceMean (attribute, or input from opset 18), as negative numbers.
  std::optional<std::vector<int64_t>> reduce_axes(int i) const {
    const Node& n = node(i);
    const int rank = w.g.value(n.inputs[0]).shape.rank();
    std::vector<int64_t> axes = n.attrs.ints("axes");
    if (n.inputs.size() > 1 && n.inputs[1] >= 0) {
      if (!w.g.value(n.inputs[1]).has_int_data) return std::nullopt;
      axes = w.g.value(n.inputs[1]).int_data;
    }
    if (axes.empty() || n.attrs.i("keepdims", 1) == 0) return std::nullopt;
    for (int64_t& a : axes) a = a >= 0 ? a - rank : a;
    std::sort(axes.begin(), axes.end());
    return axes;
  }
};

/// Axes that are the last dims, in order (-k .. -1): what LayerNorm's normalized_shape covers.
bool trailing(const std::vector<int64_t>& axes) {
  for (size_t k = 0; k < axes.size(); ++k)
    if (axes[k] != -static_cast<int64_t>(axes.size() - k)) return false;
  return true;
}

/// A fused node: what it becomes and which nodes it replaces.
struct Fusion {
  int keep;                 ///< node index rewritten in place (the pattern's last node: order stays valid)
  std::vector<int> erased;  ///< the pattern's other nodes
};

/// LayerNorm from x: mean = ReduceMean(x); d = x - mean; var = ReduceMean(d ^ 2); y = d / sqrt(var + eps),
/// then optionally * weight and + bias (parameters).
std::optional<Fusion> layer_norm_at(Work& w, const Matcher& m, int mean) {
  const Node& rm = m.node(mean);
  if (rm.inputs.empty() || rm.inputs[0] < 0 || rm.outputs.size() != 1) return std::nullopt;
  const int x = rm.inputs[0];
  const auto axes = m.reduce_axes(mean);
  if (!axes || !trailing(*axes)) return std::nullopt;
  const int sub = m.sole_user(m.out(mean), OpKind::Sub);
  if (sub < 0 || m.node(sub).inputs != std::vector<int>{x, m.out(mean)}) return std::nullopt;
  const int d = m.out(sub);
  if (m.users[d].size() != 2) return std::nullopt;
  int pow = -1, div = -1;
  for (int u : m.users[d]) {
    if (u < 0 || m.dead[u] || m.node(u).inputs.size() != 2 || m.node(u).outputs.size() != 1) return std::nullopt;
    if (m.node(u).op == OpKind::Pow && m.node(u).inputs[0] == d) pow = u;
    if (m.node(u).op == OpKind::Div && m.node(u).inputs[0] == d) div = u;
  }
  if (pow < 0 || div < 0 || m.scalar(m.node(pow).inputs[1]) != 2.0) return std::nullopt;
  const int var = m.sole_user(m.out(pow), OpKind::ReduceMean);
  if (var < 0 || m.reduce_axes(var) != axes) return std::nullopt;
  const int add_eps = m.sole_user(m.out(var), OpKind::Add);
  if (add_eps < 0) return std::nullopt;
  const auto eps = m.scalar(m.other(add_eps, m.out(var)));
  if (!eps) return std::nullopt;
  const int sqrt = m.sole_user(m.out(add_eps), OpKind::Sqrt);
  if (sqrt < 0 || m.node(div).inputs[1] != m.out(sqrt) || m.users[m.out(sqrt)].size() != 1) return std::nullopt;

  Fusion f{div, {mean, sub, pow, var, add_eps, sqrt}};
  int weight = -1, bias = -1;
  if (const int mul = m.sole_user(m.out(div), OpKind::Mul); mul >= 0 && m.is_param(m.other(mul, m.out(div)))) {
    weight = m.other(mul, m.out(div));
    f.erased.push_back(f.keep);
    f.keep = mul;
    if (const int add = m.sole_user(m.out(mul), OpKind::Add); add >= 0 && m.is_param(m.other(add, m.out(mul)))) {
      bias = m.other(add, m.out(mul));
      f.erased.push_back(f.keep);
      f.keep = add;
    }
  }
  Node& n = w.g.nodes[f.keep];
  n.op = OpKind::LayerNormalization;
  n.op_type = "LayerNormalization";
  n.inputs = {x};
  if (weight >= 0) n.inputs.push_back(weight);
  if (bias >= 0) n.inputs.push_back(bias);
  n.attrs = Attrs{};
  n.attrs.set("axis", axes->front()).set("epsilon", *eps);
  const std::string& scope = w.onnx_names[mean];
  w.onnx_names[f.keep] = scope.substr(0, scope.rfind('/') + 1) + "LayerNormalization";
  return f;
}

/// Linear on an input of rank > 2: y = MatMul(x, W) + b with W a [in, out] parameter and b its [out] bias.
std::optional<Fusion> linear_at(Work& w, const Matcher& m, int matmul) {
  const Node& mm = m.node(matmul);
  if (mm.inputs.size() != 2 || mm.inputs[0] < 0 || mm.outputs.size() != 1 || !m.is_param(mm.inputs[1]))
    return std::nullopt;
  const Shape& weight = w.g.value(mm.inputs[1]).shape;
  if (weight.rank() != 2) return std::nullopt;
  const int add = m.sole_user(m.out(matmul), OpKind::Add);
  if (add < 0) return std::nullopt;
  const int bias = m.other(add, m.out(matmul));
  if (!m.is_param(bias) || w.g.value(bias).shape != Shape{{weight[1]}}) return std::nullopt;
  if (w.g.value(m.out(add)).shape != w.g.value(m.out(matmul)).shape) return std::nullopt;
  Node& n = w.g.nodes[add];
  n.op = OpKind::Gemm;
  n.op_type = "Gemm";
  n.inputs = {mm.inputs[0], mm.inputs[1], bias};
  n.attrs = Attrs{};
  w.onnx_names[add] = w.onnx_names[matmul];
  return Fusion{add, {matmul}};
}

/// GELU as torch writes it without a Gelu op: y = (x * (erf(x / sqrt 2) + 1)) * 0.5 (Div, Erf, Add, Mul, Mul).
std::optional<Fusion> gelu_at(Work& w, const Matcher& m, int div) {
  const Node& d = m.node(div);
  if (d.inputs.size() != 2 || d.inputs[0] < 0 || d.outputs.size() != 1) return std::nullopt;
  const int x = d.inputs[0];
  const auto root2 = m.scalar(d.inputs[1]);
  if (!root2 || std::abs(*root2 - 1.4142135) > 1e-4) return std::nullopt;
  const int erf = m.sole_user(m.out(div), OpKind::Erf);
  if (erf < 0) return std::nullopt;
  const int add = m.sole_user(m.out(erf), OpKind::Add);
  if (add < 0 || m.scalar(m.other(add, m.out(erf))) != 1.0) return std::nullopt;
  const int mul = m.sole_user(m.out(add), OpKind::Mul);
  if (mul < 0 || m.other(mul, m.out(add)) != x) return std::nullopt;
  const int half = m.sole_user(m.out(mul), OpKind::Mul);
  if (half < 0 || m.scalar(m.other(half, m.out(mul))) != 0.5) return std::nullopt;
  Node& n = w.g.nodes[half];
  n.op = OpKind::Gelu;
  n.op_type = "Gelu";
  n.inputs = {x};
  n.attrs = Attrs{};
  // Hugging Face's activation modules (`ffn/activation`, `intermediate_act_fn`, `mlp/act`) keep F.gelu in an
  // attribute: function patching never sees it, unlike nn.GELU's forward.
  const std::string& scope = w.onnx_names[div];
  const size_t end = scope.rfind('/'), start = end == std::string::npos ? end : scope.rfind('/', end - 1);
  const std::string module = start == std::string::npos ? "" : scope.substr(start + 1, end - start - 1);
  if (module == "activation" || module == "act" || module.ends_with("act_fn")) n.attrs.set("torch_fn", std::string("captured"));
  return Fusion{half, {div, erf, add, mul}};
}

/// SiLU as torch writes it: y = x * sigmoid(x) (Sigmoid, Mul).
std::optional<Fusion> silu_at(Work& w, const Matcher& m, int sigmoid) {
  const Node& s = m.node(sigmoid);
  if (s.inputs.size() != 1 || s.inputs[0] < 0 || s.outputs.size() != 1) return std::nullopt;
  const int mul = m.sole_user(m.out(sigmoid), OpKind::Mul);
  if (mul < 0 || m.other(mul, m.out(sigmoid)) != s.inputs[0]) return std::nullopt;
  Node& n = w.g.nodes[mul];
  n.op = OpKind::Silu;
  n.op_type = "Silu";
  n.inputs = {s.inputs[0]};
  n.attrs = Attrs{};
  return Fusion{mul, {sigmoid}};
}

/// avg_pool with padding: torch writes a zero Pad of the spatial dims and then an AveragePool without pads (the
/// padding counted in every window). Fused back: AveragePool with those pads and count_include_pad = 1.
std::optional<Fusion> avg_pool_at(Work& w, const Matcher& m, int pad) {
  const Node& p = m.node(pad);
  if (p.inputs.empty() || p.inputs[0] < 0 || p.outputs.size() != 1 || p.attrs.s("mode", "constant") != "constant")
    return std::nullopt;
  if (p.inputs.size() > 3 && p.inputs[3] >= 0) return std::nullopt;  // opset 18 axes
  if (p.inputs.size() > 2 && p.inputs[2] >= 0 && m.scalar(p.inputs[2]) != 0.0) return std::nullopt;
  std::vector<int64_t> pads = p.attrs.ints("pads");
  if (p.inputs.size() > 1 && p.inputs[1] >= 0) {
    if (!w.g.value(p.inputs[1]).has_int_data) return std::nullopt;
    pads = w.g.value(p.inputs[1]).int_data;
  }
  const int rank = w.g.value(p.inputs[0]).shape.rank();
  if (rank < 3 || static_cast<int>(pads.size()) != 2 * rank) return std::nullopt;
  if (pads[0] != 0 || pads[1] != 0 || pads[rank] != 0 || pads[rank + 1] != 0) return std::nullopt;
  if (std::any_of(pads.begin(), pads.end(), [](int64_t v) { return v < 0; })) return std::nullopt;
  const int pool = m.sole_user(m.out(pad), OpKind::AveragePool);
  if (pool < 0 || m.node(pool).inputs.size() != 1) return std::nullopt;
  const std::vector<int64_t> own = m.node(pool).attrs.ints("pads");
  if (std::any_of(own.begin(), own.end(), [](int64_t v) { return v != 0; })) return std::nullopt;
  std::vector<int64_t> spatial(pads.begin() + 2, pads.begin() + rank);
  spatial.insert(spatial.end(), pads.begin() + rank + 2, pads.end());
  Node& n = w.g.nodes[pool];
  n.inputs = {p.inputs[0]};
  n.attrs.set("pads", spatial).set("count_include_pad", int64_t{1});
  return Fusion{pool, {pad}};
}

/// Removes the nodes marked dead, the values only they produced, and Constant nodes left without users;
/// renumbers values everywhere.
void erase_nodes(Work& w, std::vector<bool> dead) {
  Graph& g = w.g;
  for (bool changed = true; changed;) {  // constants that fed only erased nodes
    changed = false;
    std::vector<int> live_uses(g.values.size());
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (!dead[i])
        for (int v : g.nodes[i].inputs)
          if (v >= 0) ++live_uses[v];
    for (int o : g.outputs) ++live_uses[o];
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (!dead[i] && g.nodes[i].op == OpKind::Constant && g.nodes[i].outputs.size() == 1 &&
          live_uses[g.nodes[i].outputs[0]] == 0) {
        dead[i] = true;
        changed = true;
      }
  }
  std::vector<bool> drop(g.values.size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (dead[i])
      for (int o : g.nodes[i].outputs) drop[o] = true;
  std::vector<int> new_id(g.values.size(), -1);
  std::vector<Value> values;
  std::vector<char> rank_known;
  std::vector<std::optional<std::vector<double>>> float_data;
  for (size_t v = 0; v < g.values.size(); ++v) {
    if (drop[v]) continue;
    new_id[v] = static_cast<int>(values.size());
    values.push_back(std::move(g.values[v]));
    rank_known.push_back(w.env.rank_known[v]);
    float_data.push_back(std::move(w.env.float_data[v]));
  }
  std::vector<Node> nodes;
  std::vector<std::string> names, domains;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (dead[i]) continue;
    Node n = std::move(g.nodes[i]);
    for (int& v : n.inputs)
      if (v >= 0) v = new_id[v];
    for (int& v : n.outputs) v = new_id[v];
    for (int v : n.outputs) values[v].producer = static_cast<int>(nodes.size());
    nodes.push_back(std::move(n));
    names.push_back(std::move(w.onnx_names[i]));
    domains.push_back(std::move(w.node_domain[i]));
  }
  for (int& v : g.inputs) v = new_id[v];
  for (int& v : g.outputs) v = new_id[v];
  g.values = std::move(values);
  g.nodes = std::move(nodes);
  w.env.rank_known = std::move(rank_known);
  w.env.float_data = std::move(float_data);
  w.onnx_names = std::move(names);
  w.node_domain = std::move(domains);
}

}  // namespace

void recover_torch_modules(Work& w) {
  const auto users = users_of(w.g);
  std::vector<bool> dead(w.g.nodes.size());
  const Matcher m{w, users, dead};
  int layer_norms = 0, linears = 0, avg_pools = 0, activations = 0;
  for (size_t i = 0; i < w.g.nodes.size(); ++i) {
    if (dead[i]) continue;
    std::optional<Fusion> f;
    if (w.g.nodes[i].op == OpKind::ReduceMean && (f = layer_norm_at(w, m, static_cast<int>(i)))) ++layer_norms;
    else if (w.g.nodes[i].op == OpKind::MatMul && (f = linear_at(w, m, static_cast<int>(i)))) ++linears;
    else if (w.g.nodes[i].op == OpKind::Pad && (f = avg_pool_at(w, m, static_cast<int>(i)))) ++avg_pools;
    else if (w.g.nodes[i].op == OpKind::Div && (f = gelu_at(w, m, static_cast<int>(i)))) ++activations;
    else if (w.g.nodes[i].op == OpKind::Sigmoid && (f = silu_at(w, m, static_cast<int>(i)))) ++activations;
    if (f)
      for (int e : f->erased) dead[e] = true;
  }
  if (layer_norms + linears + avg_pools + activations == 0) return;
  erase_nodes(w, dead);
  std::vector<std::string> parts;
  if (layer_norms) parts.push_back(fmt::format("{} decomposed LayerNorm(s) (ReduceMean, Sub, Pow, ReduceMean, Add, "
                                               "Sqrt, Div, Mul, Add) fused into LayerNormalization", layer_norms));
  if (linears) parts.push_back(fmt::format("{} MatMul + bias Add pair(s) fused into Linear (Gemm)", linears));
  if (activations) parts.push_back(fmt::format("{} decomposed GELU (Div, Erf, Add, Mul, Mul) or SiLU (Sigmoid, Mul) "
                                               "fused into Gelu / Silu", activations));
  if (avg_pools) parts.push_back(fmt::format("{} zero Pad + AveragePool pair(s) fused into a padded AveragePool", avg_pools));
  w.g.notes.push_back("torch modules put back together: " + fmt::format("{}", fmt::join(parts, "; ")) +
                      " (same FLOPs as their parts; other tools' conventions see the module)");
}

}  // namespace ridge::onnx_in

namespace ridge::onnx_in {

void name_linear_weights(Work& w) {
  std::set<std::string> names;
  std::vector<int> uses(w.g.values.size());
  for (const Value& v : w.g.values) names.insert(v.name);
  for (const Node& n : w.g.nodes)
    for (int v : n.inputs)
      if (v >= 0) ++uses[v];
  for (const Node& n : w.g.nodes) {
    if (!n.module_call || n.module_type != "Linear" || n.inputs.size() < 2 || n.inputs[1] < 0) continue;
    Value& weight = w.g.value(n.inputs[1]);
    const std::string name = n.module + ".weight";
    if (weight.name.rfind("onnx::", 0) != 0 || uses[n.inputs[1]] != 1 || names.count(name)) continue;
    if (weight.source_name.empty()) weight.source_name = weight.name;  // the file's weights stay bound to it
    weight.name = name;
    names.insert(name);
  }
}

}  // namespace ridge::onnx_in
