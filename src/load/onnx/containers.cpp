// torch.nn container classes recognised by the names of their children, since exports keep module names but
// not classes: nn.TransformerEncoderLayer is the module with children self_attn, linear1, linear2, norm1,
// norm2 (and dropouts in training exports). What those classes do that other tools' conventions see is
// recorded on the nodes as the zoo builders record it: the activation the layer keeps in an attribute
// (F.relu, invisible to function patching) and the attention mask added by torch.baddbmm.
#include <algorithm>
#include <map>
#include <set>

#include "load/onnx/onnx_internal.hpp"

namespace ridge::onnx_in {
namespace {

/// A torch.nn class and the child modules every instance has (dropouts aside, eval exports drop them).
struct Signature {
  const char* type;
  std::set<std::string> children;
};

const Signature kLayers[] = {
    {"TransformerDecoderLayer", {"self_attn", "multihead_attn", "linear1", "linear2", "norm1", "norm2", "norm3"}},
    {"TransformerEncoderLayer", {"self_attn", "linear1", "linear2", "norm1", "norm2"}},
};
/// Stack classes: a `layers` ModuleList of one layer class, optionally a final `norm`.
const std::map<std::string, std::string> kStackOf = {{"TransformerEncoderLayer", "TransformerEncoder"},
                                                     {"TransformerDecoderLayer", "TransformerDecoder"}};
const std::set<std::string> kDropouts = {"dropout", "dropout1", "dropout2", "dropout3"};

std::map<std::string, std::set<std::string>> children_of(const Graph& g) {
  std::map<std::string, std::set<std::string>> children;
  for (const auto& m : g.modules) {
    if (m.path.empty()) continue;
    const size_t dot = m.path.rfind('.');
    children[dot == std::string::npos ? "" : m.path.substr(0, dot)].insert(
        dot == std::string::npos ? m.path : m.path.substr(dot + 1));
  }
  return children;
}

std::string layer_class(const std::set<std::string>& children) {
  for (const auto& s : kLayers) {
    const bool all = std::includes(children.begin(), children.end(), s.children.begin(), s.children.end());
    const bool only = std::all_of(children.begin(), children.end(),
                                  [&](const std::string& c) { return s.children.count(c) || kDropouts.count(c); });
    if (all && only) return s.type;
  }
  return "";
}

}  // namespace

void type_torch_containers(Work& w) {
  Graph& g = w.g;
  const auto children = children_of(g);
  std::map<std::string, std::string> type;  // path -> recognised class
  for (const auto& [path, kids] : children)
    if (const std::string t = layer_class(kids); !t.empty()) {
      type[path] = t;
      for (const char* attn : {"self_attn", "multihead_attn"})
        if (kids.count(attn)) type[path + "." + attn] = "MultiheadAttention";
    }
  for (const auto& [path, kids] : children) {
    if (!kids.count("layers") || !std::all_of(kids.begin(), kids.end(), [](const std::string& c) {
          return c == "layers" || c == "norm";
        }))
      continue;
    const std::string layers = path.empty() ? "layers" : path + ".layers";
    auto it = children.find(layers);
    if (it == children.end()) continue;
    std::set<std::string> classes;
    for (const auto& k : it->second) classes.insert(type.count(layers + "." + k) ? type[layers + "." + k] : "");
    if (classes.size() != 1 || !kStackOf.count(*classes.begin())) continue;
    type[path] = kStackOf.at(*classes.begin());
    type[layers] = "ModuleList";
  }
  if (type.empty()) return;
  for (auto& m : g.modules)
    if (auto it = type.find(m.path); it != type.end()) m.type = it->second;

  std::vector<std::vector<int>> users(g.values.size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int v : g.nodes[i].inputs)
      if (v >= 0) users[v].push_back(static_cast<int>(i));
  for (Node& n : g.nodes) {
    if (n.module_call) continue;
    auto it = type.find(n.module);
    if (it == type.end()) continue;
    // The layer's self.activation = F.relu / F.gelu, stored before any tool patches torch.nn.functional.
    if (it->second.ends_with("Layer") && (n.op == OpKind::Relu || n.op == OpKind::Gelu))
      n.attrs.set("torch_fn", std::string("captured"));
    // MultiheadAttention adds the attention mask to the scores with torch.baddbmm.
    if (it->second == "MultiheadAttention" && n.op == OpKind::Add && n.outputs.size() == 1) {
      const auto& u = users[n.outputs[0]];
      if (u.size() == 1 && g.nodes[u[0]].op == OpKind::Softmax) n.attrs.set("torch_fn", std::string("baddbmm"));
    }
  }
}

}  // namespace ridge::onnx_in
