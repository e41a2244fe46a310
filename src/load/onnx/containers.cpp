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

/// Child names of every module path, including paths without a forward of their own (ModuleLists: the
/// export names `encoder/layers.0`, never `encoder/layers`).
std::map<std::string, std::set<std::string>> children_of(const Graph& g) {
  std::map<std::string, std::set<std::string>> children;
  for (const auto& m : g.modules)
    for (size_t start = 0, dot = 0; !m.path.empty() && start <= m.path.size(); start = dot + 1) {
      dot = m.path.find('.', start);
      if (dot == std::string::npos) dot = m.path.size();
      children[start == 0 ? "" : m.path.substr(0, start - 1)].insert(m.path.substr(start, dot - start));
    }
  return children;
}

/// Sets the type of module `path`, adding the module before its first descendant when the export has no
/// scope of its own for it.
void set_type(Graph& g, const std::string& path, const std::string& type) {
  for (auto& m : g.modules)
    if (m.path == path) {
      m.type = type;
      return;
    }
  auto it = std::find_if(g.modules.begin(), g.modules.end(),
                         [&](const ModuleInfo& m) { return m.path.rfind(path + ".", 0) == 0; });
  g.modules.insert(it, ModuleInfo{path, type, {}});
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
  for (const auto& [path, t] : type) set_type(g, path, t);

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
