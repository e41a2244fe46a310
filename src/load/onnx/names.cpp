// Node names and module hierarchy from exporter scope names: torch.onnx.export writes
// "/layer1/layer1.0/conv1/Conv" (each scope segment is a module name relative to the last segment it
// extends), tf2onnx writes "model/conv2d/Conv2D". Nodes without scopes keep sanitized names.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "load/onnx/onnx_internal.hpp"
#include "ridge/text.hpp"

namespace ridge::onnx_in {
namespace {

std::string sanitize(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ? c : '_';
  return out;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      if (i > start) parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  return parts;
}

/// "relu_1" -> "relu" when the suffix is a repeat-call counter.
std::string strip_call_counter(const std::string& seg) {
  const size_t us = seg.rfind('_');
  if (us == std::string::npos || us == 0 || us + 1 == seg.size()) return seg;
  if (!all_digits(std::string_view(seg).substr(us + 1))) return seg;
  return seg.substr(0, us);
}

/// Full module paths of every scope segment: "/features/features.1/conv/conv.0" ->
/// features, features.1, features.1.conv, features.1.conv.0.
std::vector<std::string> module_paths(const std::vector<std::string>& scopes, const std::set<std::string>& seen) {
  std::vector<std::string> full;
  std::string anchor;  // the path the current segment's name is relative to
  for (size_t i = 0; i < scopes.size(); ++i) {
    std::string seg = scopes[i];
    const std::string parent = full.empty() ? "" : full.back();
    if (i > 0 && seg.rfind(scopes[i - 1] + ".", 0) == 0) {
      full.push_back(anchor + seg);
      continue;
    }
    anchor = parent.empty() ? "" : parent + ".";
    // A module called twice appears as "relu" then "relu_1": both are the same module.
    if (const std::string base = strip_call_counter(seg); base != seg && seen.count(anchor + base)) seg = base;
    full.push_back(anchor + seg);
  }
  return full;
}

bool has_param_input(const Graph& g, const Node& n) {
  return std::any_of(n.inputs.begin(), n.inputs.end(),
                     [&](int v) { return v >= 0 && g.value(v).kind == ValueKind::Param; });
}

int spatial_rank(const Graph& g, const Node& n) {
  if (n.inputs.empty() || n.inputs[0] < 0) return 2;
  return std::max(1, g.value(n.inputs[0]).shape.rank() - 2);
}

std::optional<double> scalar_input(const Work& w, const Node& n, int i) {
  if (static_cast<int>(n.inputs.size()) <= i || n.inputs[i] < 0) return std::nullopt;
  const auto& f = w.env.float_data[n.inputs[i]];
  if (f && f->size() == 1) return (*f)[0];
  return std::nullopt;
}

/// The torch module a node is the whole forward of, when its op is some module's natural op (the module column
/// of the op's record; a Clip to [0, 6] is a ReLU6).
std::string natural_module(const Work& w, const Node& n) {
  if (n.op == OpKind::AdaptiveAvgPool) return "";  // ridge-internal kind, made after modules are assigned
  std::string type = torch_module(n.op, spatial_rank(w.g, n), has_param_input(w.g, n));
  if (n.op == OpKind::Clip) {
    const double lo = scalar_input(w, n, 1).value_or(n.attrs.f("min", -1));
    const double hi = scalar_input(w, n, 2).value_or(n.attrs.f("max", -1));
    if (lo == 0 && hi == 6) type = "ReLU6";
  }
  return type;
}

/// Within one scope, the node that is the leaf module's call: the only node with a natural module type,
/// accompanied only by Constant nodes and a bias Add/Sub on its output (torch's Linear on 3-D inputs).
int leaf_call(const Work& w, const std::vector<int>& members) {
  int call = -1;
  for (int i : members)
    if (!natural_module(w, w.g.nodes[i]).empty()) {
      if (call >= 0) return -1;
      call = i;
    }
  if (call < 0) return -1;
  for (int i : members) {
    const Node& n = w.g.nodes[i];
    if (i == call || n.op == OpKind::Constant) continue;
    const bool bias = (n.op == OpKind::Add || n.op == OpKind::Sub) && has_param_input(w.g, n) &&
                      std::find(n.inputs.begin(), n.inputs.end(), w.g.nodes[call].outputs[0]) != n.inputs.end();
    if (!bias) return -1;
  }
  return call;
}

/// torchvision's and timm's LayerNorm2d (an nn.LayerNorm subclass over NCHW): its whole forward in one scope is
/// permute, F.layer_norm, permute, exported as Transpose -> LayerNormalization -> Transpose. Returns the
/// LayerNormalization node, or -1.
int layer_norm_2d(const Work& w, const std::vector<int>& members) {
  std::vector<int> ops;
  for (int i : members)
    if (w.g.nodes[i].op != OpKind::Constant) ops.push_back(i);
  if (ops.size() != 3) return -1;
  const Node &a = w.g.nodes[ops[0]], &ln = w.g.nodes[ops[1]], &b = w.g.nodes[ops[2]];
  const bool chain = a.op == OpKind::Transpose && ln.op == OpKind::LayerNormalization && b.op == OpKind::Transpose &&
                     !ln.inputs.empty() && ln.inputs[0] == a.outputs[0] && !b.inputs.empty() &&
                     b.inputs[0] == ln.outputs[0];
  return chain ? ops[1] : -1;
}

/// A functional linear inside a module is named after its parameter, as torch names it: F.linear with
/// `self_attn.in_proj_bias` or `self_attn.out_proj.weight` -> "in_proj", "out_proj".
std::string parameter_stem(const Graph& g, const Node& n) {
  if (n.op != OpKind::Gemm && n.op != OpKind::MatMul) return "";
  const std::string prefix = n.module + ".";
  for (int v : n.inputs) {
    if (v < 0 || g.value(v).kind != ValueKind::Param) continue;
    const std::string& name = g.value(v).name;
    if (n.module.empty() || name.rfind(prefix, 0) != 0) continue;
    for (const char* suffix : {".weight", "_weight", ".bias", "_bias"}) {
      const std::string_view sfx(suffix);
      if (name.size() <= prefix.size() + sfx.size() || !name.ends_with(sfx)) continue;
      const std::string stem = name.substr(prefix.size(), name.size() - prefix.size() - sfx.size());
      if (stem.find('.') == std::string::npos) return stem;
    }
  }
  return "";
}

/// Names given so far, and per base the last counter tried: the k-th "relu" costs one probe, not k (a model of
/// 100,000 unscoped nodes, an unrolled loop's, took minutes).
struct UniqueNames {
  std::unordered_set<std::string> used;
  std::unordered_map<std::string, int> last;

  /// `base`, or `base_1`, `base_2`, ... the first not given yet.
  std::string operator()(const std::string& base) {
    std::string name = base;
    for (int& k = last[base]; !used.insert(name).second;) name = base + "_" + std::to_string(++k);
    return name;
  }
};

bool inside(const std::string& module, const std::string& path) {
  return path.empty() || module == path || module.rfind(path + ".", 0) == 0;
}

/// What a forward hook would see: a leaf's output per call; a container's last value used outside it.
void record_call_outputs(Graph& g) {
  std::vector<std::vector<int>> users(g.values.size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int v : g.nodes[i].inputs)
      if (v >= 0) users[v].push_back(static_cast<int>(i));
  for (int o : g.outputs) users[o].push_back(-1);  // the graph's output is used outside every module
  for (auto& m : g.modules) {
    for (const Node& n : g.nodes)
      if (n.module_call && n.module == m.path && !n.outputs.empty()) m.call_outputs.push_back(n.outputs[0]);
    if (!m.call_outputs.empty()) continue;
    int last = -1;
    for (const Node& n : g.nodes) {
      if (!inside(n.module, m.path)) continue;
      for (int o : n.outputs)
        for (int u : users[o])
          if (u < 0 || !inside(g.nodes[u].module, m.path)) last = o;
    }
    if (last >= 0) m.call_outputs.push_back(last);
  }
}

}  // namespace

void assign_names_and_modules(Work& w) {
  Graph& g = w.g;
  std::set<std::string> seen_modules;
  std::map<std::string, std::vector<int>> scope_members;
  std::vector<std::vector<std::string>> paths(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const std::string& raw = w.onnx_names[i];
    if (raw.find('/') == std::string::npos) continue;
    std::vector<std::string> segs = split(raw, '/');
    if (segs.size() < 2) continue;
    segs.pop_back();  // the op part: "Conv", "Add_1"
    paths[i] = module_paths(segs, seen_modules);
    for (const auto& p : paths[i]) seen_modules.insert(p);
    g.nodes[i].module = paths[i].back();
    scope_members[raw.substr(0, raw.rfind('/'))].push_back(static_cast<int>(i));
  }
  // A bare leaf module exported on its own (torch.onnx.export(nn.Conv2d(...))): every node sits in the root scope
  // ("/Conv"), and the root module is the leaf whose call the tools' hooks see.
  if (scope_members.empty()) {
    std::vector<int> root;
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (w.onnx_names[i].rfind('/') == 0) root.push_back(static_cast<int>(i));
    if (!root.empty() && root.size() == g.nodes.size()) scope_members[""] = root;
  }
  // A scope with scopes under it is a module with submodules, never a leaf: its own nodes are functional calls in
  // its forward (torchvision's BasicConv2d: conv, bn, then F.relu in the container's scope).
  std::set<std::string> containers;
  for (const auto& [scope, members] : scope_members)
    for (size_t cut = scope.find('/', 1); cut != std::string::npos; cut = scope.find('/', cut + 1))
      containers.insert(scope.substr(0, cut));
  for (const auto& [scope, members] : scope_members) {
    if (containers.count(scope)) continue;
    if (const int ln = layer_norm_2d(w, members); ln >= 0) {
      g.nodes[ln].module_call = true;
      g.nodes[ln].module_type = "LayerNorm2d";  // not nn.LayerNorm: tools that match exact types skip it
      continue;
    }
    const int call = leaf_call(w, members);
    if (call < 0) continue;
    g.nodes[call].module_call = true;
    g.nodes[call].module_type = natural_module(w, g.nodes[call]);
  }
  UniqueNames unique_name;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    std::string op = n.op_type.substr(n.op_type.rfind('.') == std::string::npos ? 0 : n.op_type.rfind('.') + 1);
    std::string base;
    if (n.module_call) base = n.module.empty() ? ascii_lower(op) : n.module;  // a bare leaf: "conv"
    else if (const std::string stem = parameter_stem(g, n); !stem.empty()) base = n.module + "." + stem;
    else if (!paths[i].empty()) base = n.module + "." + ascii_lower(op);
    else if (!w.onnx_names[i].empty() && w.onnx_names[i].find('/') == std::string::npos) base = sanitize(w.onnx_names[i]);
    else base = ascii_lower(op);
    n.name = unique_name(base);
  }

  // Modules in first-call order: every ancestor path of every node's module.
  std::map<std::string, std::string> leaf_type;
  for (const Node& n : g.nodes)
    if (n.module_call) leaf_type.emplace(n.module, n.module_type);
  std::set<std::string> listed;
  if (!seen_modules.empty()) {
    g.modules.push_back({"", "Model", {}});
    listed.insert("");
  }
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const auto& p : paths[i])
      if (listed.insert(p).second) {
        auto it = leaf_type.find(p);
        g.modules.push_back({p, it != leaf_type.end() ? it->second : "", {}});
      }
  record_call_outputs(g);
  // Containers: torch's Sequential when every child is numbered, otherwise a generic module.
  for (auto& m : g.modules) {
    if (!m.type.empty()) continue;
    bool any = false, numbered = true;
    for (const auto& c : g.modules) {
      if (c.path.size() <= m.path.size() + 1 || c.path.rfind(m.path + ".", 0) != 0) continue;
      const std::string rest = c.path.substr(m.path.size() + 1);
      if (rest.find('.') != std::string::npos) continue;
      any = true;
      numbered = numbered && all_digits(rest);
    }
    m.type = any && numbered ? "Sequential" : "Module";
  }
}

}  // namespace ridge::onnx_in
