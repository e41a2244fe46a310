// Control flow and sequences whose shape is known, rewritten into plain tensor ops before ridge's rules run:
// a Loop with a known trip count and a condition that cannot stop it early is unrolled, an If with a known
// condition is replaced by its branch, and sequence values (SequenceEmpty, SequenceInsert, ... SequenceAt) whose
// positions are known become the tensors they hold. torch exports `Tensor.split` with computed sizes this way
// (torchvision's MViT pooling: a Loop that builds a sequence of slices, read back with SequenceAt).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "load/onnx/onnx_internal.hpp"

namespace ridge::onnx_in {
namespace {

constexpr int64_t kMaxIterations = 4096;       ///< a Loop with more iterations stays a Loop
constexpr int64_t kMaxUnrolledNodes = 50000;   ///< nor one that would take the model's unrolled nodes past this
constexpr int64_t kMaxNestedCopies = 256;      ///< nor one whose copies would add more control-flow nodes than this
constexpr int kMaxTraceDepth = 32;             ///< Identity/Cast hops followed to find a condition's value

using Names = std::unordered_map<std::string, std::string>;

bool is_standard(const onnx::NodeProto& n) { return n.domain().empty() || n.domain() == "ai.onnx"; }

const onnx::GraphProto* graph_attribute(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name && a.has_g()) return &a.g();
  return nullptr;
}

int64_t int_attribute(const onnx::NodeProto& n, const std::string& name, int64_t fallback) {
  for (const auto& a : n.attribute())
    if (a.name() == name && a.type() == onnx::AttributeProto::INT) return a.i();
  return fallback;
}

/// Every graph a node holds (If's branches, Loop's and Scan's bodies).
std::vector<const onnx::GraphProto*> subgraphs(const onnx::NodeProto& n) {
  std::vector<const onnx::GraphProto*> out;
  for (const auto& a : n.attribute()) {
    if (a.has_g()) out.push_back(&a.g());
    for (const auto& g : a.graphs()) out.push_back(&g);
  }
  return out;
}

/// Names a graph defines at any depth: node outputs, and the inputs and initializers of nested graphs.
void defined_names(const onnx::GraphProto& g, bool nested, std::unordered_set<std::string>& out) {
  if (nested) {
    for (const auto& in : g.input()) out.insert(in.name());
    for (const auto& t : g.initializer()) out.insert(t.name());
  }
  for (const auto& n : g.node()) {
    for (const auto& o : n.output())
      if (!o.empty()) out.insert(o);
    for (const auto* sub : subgraphs(n)) defined_names(*sub, true, out);
  }
}

/// Names a graph reads at any depth (node inputs and graph outputs).
void read_names(const onnx::GraphProto& g, std::unordered_set<std::string>& out) {
  for (const auto& n : g.node()) {
    for (const auto& in : n.input())
      if (!in.empty()) out.insert(in);
    for (const auto* sub : subgraphs(n)) read_names(*sub, out);
  }
  for (const auto& o : g.output()) out.insert(o.name());
}

void rename_graph(onnx::GraphProto& g, const Names& to);

void rename_node(onnx::NodeProto& n, const Names& to) {
  auto renamed = [&](const std::string& s) {
    auto it = to.find(s);
    return it == to.end() ? s : it->second;
  };
  for (auto& in : *n.mutable_input())
    if (!in.empty()) in = renamed(in);
  for (auto& o : *n.mutable_output())
    if (!o.empty()) o = renamed(o);
  for (auto& a : *n.mutable_attribute()) {
    if (a.has_g()) rename_graph(*a.mutable_g(), to);
    for (auto& g : *a.mutable_graphs()) rename_graph(g, to);
  }
}

void rename_graph(onnx::GraphProto& g, const Names& to) {
  auto rename = [&](auto& items) {
    for (auto& item : items)
      if (auto it = to.find(item.name()); it != to.end()) item.set_name(it->second);
  };
  rename(*g.mutable_input());
  rename(*g.mutable_output());
  rename(*g.mutable_initializer());
  g.clear_value_info();  // ONNX's inference recomputes what it needs
  for (auto& n : *g.mutable_node()) rename_node(n, to);
}

/// The integer values of a Constant node's output, when it holds a small integer or bool tensor.
std::optional<std::vector<int64_t>> constant_ints(const onnx::NodeProto& n) {
  for (const auto& a : n.attribute()) {
    if (a.name() == "value" && a.has_t()) return int_payload(a.t());
    if (a.name() == "value_int") return std::vector<int64_t>{a.i()};
    if (a.name() == "value_ints") return std::vector<int64_t>(a.ints().begin(), a.ints().end());
  }
  return std::nullopt;
}

/// An Identity, or a Cast to int64 or bool: what an integer payload passes through unchanged (bools as 0/1).
bool keeps_integers(const onnx::NodeProto& n) {
  if (n.op_type() == "Identity") return true;
  const int64_t to = int_attribute(n, "to", 0);
  return n.op_type() == "Cast" && (to == onnx::TensorProto::INT64 || to == onnx::TensorProto::BOOL);
}

/// What the nodes made from a control-flow node are named after: its name, else its first output, else its op.
std::string tag_of(const onnx::NodeProto& n) {
  if (!n.name().empty()) return n.name();
  return n.output_size() > 0 && !n.output(0).empty() ? n.output(0) : n.op_type();
}

/// One round of rewriting over the top-level graph of a model, against the shapes and payloads of `g` (the
/// Graph ridge's rules built from the model as it was before the round).
class Rewriter {
 public:
  Rewriter(onnx::ModelProto& m, int opset, const Graph& g, InlineLog& log) : m_(m), opset_(opset), g_(g), log_(log) {
    for (size_t v = 0; v < g.values.size(); ++v) values_[g.values[v].name] = static_cast<int>(v);
    defined_names(m.graph(), true, taken_);
    read_names(m.graph(), taken_);
  }

  bool run() {
    log_.kept.clear();
    std::vector<onnx::NodeProto> nodes;
    bool changed = false;
    for (const auto& n : m_.graph().node()) {
      if (is_standard(n) && n.op_type() == "Loop" && unroll(n, nodes)) changed = true;
      else if (is_standard(n) && n.op_type() == "If" && take_branch(n, nodes)) changed = true;
      else nodes.push_back(n);
    }
    changed |= resolve_sequences(nodes);
    if (changed) {
      forget_declarations_downstream(nodes);
      auto& list = *m_.mutable_graph()->mutable_node();
      list.Clear();
      for (auto& n : nodes) *list.Add() = std::move(n);
    }
    return changed;
  }

 private:
  onnx::ModelProto& m_;
  const int opset_;
  const Graph& g_;
  InlineLog& log_;
  std::unordered_map<std::string, int> values_;                  ///< g's values by name
  std::unordered_set<std::string> taken_;                        ///< every tensor name in the model
  std::unordered_map<std::string, std::vector<int64_t>> ints_;  ///< payloads of constants made this round
  std::unordered_set<std::string> replaced_;  ///< outputs of the nodes this round rewrote

  /// The file's declared shapes (value_info, graph outputs) of every tensor computed from a rewritten node's
  /// output: an exporter inferred them through the control flow without the values ridge now knows, and can be
  /// wrong (torch 1.13 declares `tensor_split`'s consumers with a made-up dim). ridge's rules recompute them.
  void forget_declarations_downstream(const std::vector<onnx::NodeProto>& nodes) {
    std::unordered_set<std::string> downstream = replaced_;
    for (bool grew = true; grew;) {  // one pass when the file is in topological order, as ONNX requires
      grew = false;
      for (const auto& n : nodes) {
        if (std::none_of(n.input().begin(), n.input().end(), [&](const auto& in) { return downstream.count(in); }))
          continue;
        for (const auto& o : n.output()) grew |= !o.empty() && downstream.insert(o).second;
      }
    }
    auto& graph = *m_.mutable_graph();
    auto& info = *graph.mutable_value_info();
    info.erase(std::remove_if(info.begin(), info.end(), [&](const auto& vi) { return downstream.count(vi.name()); }),
               info.end());
    for (auto& o : *graph.mutable_output())
      if (downstream.count(o.name()) && o.type().has_tensor_type())
        o.mutable_type()->mutable_tensor_type()->clear_shape();
  }

  /// `base` when no tensor has that name yet, else `base~2`, `base~3`, ...
  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int k = 2; taken_.count(name); ++k) name = fmt::format("{}~{}", base, k);
    taken_.insert(name);
    return name;
  }

  /// Integer payload of a tensor: made this round, or known to ridge's rules.
  std::optional<std::vector<int64_t>> ints_of(const std::string& name) const {
    if (auto it = ints_.find(name); it != ints_.end()) return it->second;
    if (auto it = values_.find(name); it != values_.end() && g_.value(it->second).has_int_data)
      return g_.value(it->second).int_data;
    return std::nullopt;
  }
  std::optional<int64_t> scalar_of(const std::string& name) const {
    auto v = ints_of(name);
    if (!v || v->size() != 1) return std::nullopt;
    return (*v)[0];
  }

  /// Whether a boolean tensor is known to be all true (or known to be false somewhere), following Identity and
  /// Cast; inside `body`, its condition input counts as true (the loop runs only while it is).
  std::optional<bool> truth(const std::string& name, const onnx::GraphProto* body, int depth = 0) const {
    if (depth > kMaxTraceDepth) return std::nullopt;
    if (auto v = ints_of(name))
      return !v->empty() && std::all_of(v->begin(), v->end(), [](int64_t x) { return x != 0; });
    if (body) {
      if (body->input_size() > 1 && name == body->input(1).name()) return true;
      for (const auto& n : body->node()) {
        if (std::find(n.output().begin(), n.output().end(), name) == n.output().end()) continue;
        if (n.op_type() == "Constant")
          if (auto v = constant_ints(n))
            return !v->empty() && std::all_of(v->begin(), v->end(), [](int64_t x) { return x != 0; });
        if ((n.op_type() == "Identity" || n.op_type() == "Cast") && n.input_size() == 1)
          return truth(n.input(0), body, depth + 1);
        return std::nullopt;
      }
    }
    auto it = values_.find(name);
    if (it == values_.end() || g_.value(it->second).producer < 0) return std::nullopt;
    const Node& p = g_.nodes[static_cast<size_t>(g_.value(it->second).producer)];
    if ((p.op_type == "Identity" || p.op_type == "Cast") && !p.inputs.empty() && p.inputs[0] >= 0)
      return truth(g_.value(p.inputs[0]).name, nullptr, depth + 1);
    return std::nullopt;
  }

  bool keep(const onnx::NodeProto& n, const std::string& why) {
    const std::string name = !n.name().empty() || n.output_size() == 0 ? n.name() : "output " + n.output(0);
    log_.kept.push_back(fmt::format("{} '{}': {}", n.op_type(), name, why));
    return false;
  }

  /// Records that tensor `copy` holds the payload the file stores as `original` (itself perhaps a copy).
  void remember_source(const std::string& copy, const std::string& original) {
    if (copy == original) return;
    auto it = log_.source_of.find(original);
    log_.source_of[copy] = it == log_.source_of.end() ? original : it->second;
  }

  /// Appends a copy of `n` with names from `to`, remembering the payloads of constants.
  void copy_node(const onnx::NodeProto& n, const Names& to, const std::string& suffix,
                 std::vector<onnx::NodeProto>& out) {
    onnx::NodeProto copy = n;
    rename_node(copy, to);
    if (!copy.name().empty()) copy.set_name(copy.name() + suffix);
    if (copy.op_type() == "Constant" && copy.output_size() == 1) {
      remember_source(copy.output(0), n.output(0));
      if (auto v = constant_ints(copy)) ints_[copy.output(0)] = *v;
    } else if (copy.input_size() == 1 && copy.output_size() == 1 && keeps_integers(copy)) {
      if (auto v = ints_of(copy.input(0))) {
        if (int_attribute(copy, "to", 0) == onnx::TensorProto::BOOL)
          for (int64_t& x : *v) x = x != 0;
        ints_[copy.output(0)] = *v;
      }
    }
    out.push_back(std::move(copy));
  }

  onnx::NodeProto& add(std::vector<onnx::NodeProto>& out, const std::string& op, std::vector<std::string> inputs,
                       std::vector<std::string> outputs, const std::string& name) {
    onnx::NodeProto n;
    n.set_op_type(op);
    n.set_name(name);
    for (auto& i : inputs) n.add_input(i);
    for (auto& o : outputs) n.add_output(o);
    out.push_back(std::move(n));
    return out.back();
  }
  static void set_ints(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& values) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : values) a->add_ints(v);
  }
  static void set_int(onnx::NodeProto& n, const std::string& name, int64_t value) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(value);
  }

  /// A Constant node holding `values` (a scalar or a 1-D tensor) of `elem`, under a fresh name from `base`.
  std::string constant(std::vector<onnx::NodeProto>& out, const std::string& base, const std::vector<int64_t>& values,
                       bool scalar, int elem = onnx::TensorProto::INT64) {
    const std::string name = fresh(base);
    constant_named(out, name, name, values, scalar, elem);
    return name;
  }
  /// The same, writing tensor `name` (a node's own output) from a node called `node_name`.
  void constant_named(std::vector<onnx::NodeProto>& out, const std::string& name, const std::string& node_name,
                      const std::vector<int64_t>& values, bool scalar, int elem = onnx::TensorProto::INT64) {
    auto& n = add(out, "Constant", {}, {name}, node_name);
    auto* a = n.add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    auto* t = a->mutable_t();
    t->set_data_type(elem);
    if (!scalar) t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) {
      if (elem == onnx::TensorProto::INT64) t->add_int64_data(v);
      else t->add_int32_data(static_cast<int32_t>(v));  // bool
    }
    ints_[name] = values;
  }

  /// Unsqueeze or Squeeze along one axis, as the model's opset writes it.
  void squeeze_op(std::vector<onnx::NodeProto>& out, const std::string& op, const std::string& in, int64_t axis,
                  const std::string& result, const std::string& name) {
    if (opset_ >= 13) {
      const std::string axes = constant(out, name + "_axes", {axis}, false);
      add(out, op, {in, axes}, {result}, name);
    } else {
      set_ints(add(out, op, {in}, {result}, name), "axes", {axis});
    }
  }

  /// Concat of `parts` along `axis`, each first given a new axis there when `new_axis`.
  void concat(std::vector<onnx::NodeProto>& out, const std::vector<std::string>& parts, int64_t axis, bool new_axis,
              const std::string& result, const std::string& name) {
    std::vector<std::string> inputs;
    for (size_t k = 0; k < parts.size(); ++k) {
      if (!new_axis) {
        inputs.push_back(parts[k]);
        continue;
      }
      inputs.push_back(fresh(fmt::format("{}_unsqueezed{}", result, k)));
      squeeze_op(out, "Unsqueeze", parts[k], axis, inputs.back(), fmt::format("{}_unsqueeze{}", name, k));
    }
    set_int(add(out, "Concat", inputs, {result}, name), "axis", axis);
  }

  /// Copies of a body's initializers in the outer graph, under names of their own.
  Names hoist_initializers(const onnx::GraphProto& body) {
    Names to;
    for (const auto& t : body.initializer()) {
      onnx::TensorProto copy = t;
      copy.set_name(fresh(t.name()));
      to[t.name()] = copy.name();
      remember_source(copy.name(), t.name());
      if (auto v = int_payload(copy)) ints_[copy.name()] = *v;
      *m_.mutable_graph()->add_initializer() = std::move(copy);
    }
    return to;
  }

  bool unroll(const onnx::NodeProto& loop, std::vector<onnx::NodeProto>& out) {
    const onnx::GraphProto* body = graph_attribute(loop, "body");
    const int carried = loop.input_size() - 2;
    if (!body || carried < 0 || body->input_size() != carried + 2 || body->output_size() < carried + 1 ||
        loop.output_size() != body->output_size() - 1)
      return keep(loop, "its body's inputs and outputs do not match the node's");
    const int scans = body->output_size() - 1 - carried;
    const std::optional<int64_t> trips = loop.input(0).empty() ? std::nullopt : scalar_of(loop.input(0));
    if (!trips || *trips < 0) return keep(loop, "its trip count is not known");
    if (!loop.input(1).empty() && truth(loop.input(1), nullptr) != true)
      return keep(loop, "its starting condition is not known to be true");
    if (truth(body->output(0).name(), body) != true) return keep(loop, "its body's condition may end it early");
    if (*trips == 0 && scans > 0) return keep(loop, "it runs no iteration and has scan outputs");
    if (*trips > kMaxIterations) return keep(loop, fmt::format("it runs {} iterations, more than ridge unrolls", *trips));
    const int64_t nodes = *trips * std::max(1, body->node_size());
    if (log_.unrolled_nodes + nodes > kMaxUnrolledNodes)
      return keep(loop, fmt::format("unrolling it would take the model past {} unrolled nodes", kMaxUnrolledNodes));
    // Copies of nested control flow that stay (their trip counts unknown) cost ONNX's inference the whole outer
    // scope each: thousands of them take minutes.
    const int64_t nested = *trips * std::count_if(body->node().begin(), body->node().end(),
                                                  [](const onnx::NodeProto& n) { return !subgraphs(n).empty(); });
    if (log_.nested_copies + nested > kMaxNestedCopies)
      return keep(loop, fmt::format("unrolling it would copy its nested control flow {} times", nested));
    log_.unrolled_nodes += nodes;
    log_.nested_copies += nested;

    const Names hoisted = hoist_initializers(*body);
    std::unordered_set<std::string> defined, read;
    defined_names(*body, false, defined);
    read_names(*body, read);
    std::vector<std::string> current(loop.input().begin() + 2, loop.input().end());
    std::vector<std::vector<std::string>> scanned(static_cast<size_t>(scans));
    const std::string tag = tag_of(loop);
    for (int64_t k = 0; k < *trips; ++k) {
      const std::string suffix = fmt::format("@iter{}", k);
      Names to = hoisted;
      if (read.count(body->input(0).name()))
        to[body->input(0).name()] = constant(out, tag + "_iteration" + suffix, {k}, true);
      if (read.count(body->input(1).name()))
        to[body->input(1).name()] = constant(out, tag + "_condition" + suffix, {1}, true, onnx::TensorProto::BOOL);
      for (int i = 0; i < carried; ++i) to[body->input(2 + i).name()] = current[static_cast<size_t>(i)];
      for (const auto& name : defined) to[name] = fresh(name + suffix);
      for (const auto& n : body->node()) copy_node(n, to, suffix, out);
      auto mapped = [&](const std::string& s) {
        auto it = to.find(s);
        return it == to.end() ? s : it->second;
      };
      for (int i = 0; i < carried; ++i) current[static_cast<size_t>(i)] = mapped(body->output(1 + i).name());
      for (int j = 0; j < scans; ++j)
        scanned[static_cast<size_t>(j)].push_back(mapped(body->output(1 + carried + j).name()));
    }
    for (int i = 0; i < carried; ++i)
      if (!loop.output(i).empty())
        add(out, "Identity", {current[static_cast<size_t>(i)]}, {loop.output(i)}, tag + "_final" + std::to_string(i));
    for (int j = 0; j < scans; ++j)
      if (!loop.output(carried + j).empty())
        concat(out, scanned[static_cast<size_t>(j)], 0, true, loop.output(carried + j),
               tag + "_scan" + std::to_string(j));
    replaced_.insert(loop.output().begin(), loop.output().end());
    ++log_.loops_unrolled;
    log_.iterations += *trips;
    return true;
  }

  bool take_branch(const onnx::NodeProto& n, std::vector<onnx::NodeProto>& out) {
    const std::optional<bool> cond = n.input_size() == 1 ? truth(n.input(0), nullptr) : std::nullopt;
    if (!cond) return keep(n, "its condition is not known");
    const onnx::GraphProto* branch = graph_attribute(n, *cond ? "then_branch" : "else_branch");
    if (!branch || branch->output_size() != n.output_size())
      return keep(n, "its branch's outputs do not match the node's");
    Names to = hoist_initializers(*branch);
    std::unordered_set<std::string> defined;
    defined_names(*branch, false, defined);
    for (const auto& name : defined) to[name] = fresh(name);
    for (const auto& bn : branch->node()) copy_node(bn, to, "", out);
    const std::string tag = tag_of(n);
    for (int i = 0; i < n.output_size(); ++i) {
      if (n.output(i).empty()) continue;
      auto it = to.find(branch->output(i).name());
      add(out, "Identity", {it == to.end() ? branch->output(i).name() : it->second}, {n.output(i)},
          tag + (*cond ? "_then" : "_else") + std::to_string(i));
    }
    replaced_.insert(n.output().begin(), n.output().end());
    ++log_.ifs_taken;
    return true;
  }

  /// Sequence values whose elements and positions are known become their tensors: SequenceAt an Identity of the
  /// element, SequenceLength a Constant, ConcatFromSequence a Concat, SplitToSequence a Split. The nodes that
  /// only built sequences are dropped once nothing reads them.
  bool resolve_sequences(std::vector<onnx::NodeProto>& nodes) {
    std::unordered_map<std::string, std::vector<std::string>> seqs;
    std::vector<onnx::NodeProto> out;
    std::vector<char> builds_sequence;
    int rewritten = 0;
    auto position = [&](const onnx::NodeProto& n, int k, int64_t fallback) -> std::optional<int64_t> {
      if (n.input_size() <= k || n.input(k).empty()) return fallback;
      return scalar_of(n.input(k));
    };
    for (auto& n : nodes) {
      const std::vector<std::string>* s = nullptr;
      if (is_standard(n) && n.input_size() > 0)
        if (auto it = seqs.find(n.input(0)); it != seqs.end()) s = &it->second;
      const std::string& op = n.op_type();
      const int64_t size = s ? static_cast<int64_t>(s->size()) : 0;
      const bool one_out = n.output_size() == 1 && !n.output(0).empty();
      bool builder = false;
      if (!is_standard(n) || !one_out) {
      } else if (op == "SequenceEmpty") {
        seqs[n.output(0)] = {};
        builder = true;
      } else if (op == "SequenceConstruct" &&
                 std::none_of(n.input().begin(), n.input().end(), [](const auto& in) { return in.empty(); })) {
        seqs[n.output(0)] = std::vector<std::string>(n.input().begin(), n.input().end());
        builder = true;
      } else if (s && (op == "SequenceInsert" || op == "SequenceErase" || op == "Identity")) {
        std::vector<std::string> next = *s;
        const auto at = position(n, op == "SequenceInsert" ? 2 : 1, op == "SequenceInsert" ? size : size - 1);
        const int64_t p = at && *at < 0 ? *at + size : at.value_or(-1);
        if (op == "Identity") {
          seqs[n.output(0)] = next;
          builder = true;
        } else if (op == "SequenceInsert" && n.input_size() > 1 && !n.input(1).empty() && at && p >= 0 && p <= size) {
          next.insert(next.begin() + p, n.input(1));
          seqs[n.output(0)] = next;
          builder = true;
        } else if (op == "SequenceErase" && at && p >= 0 && p < size) {
          next.erase(next.begin() + p);
          seqs[n.output(0)] = next;
          builder = true;
        }
      } else if (s && op == "SequenceAt") {
        const auto at = position(n, 1, -1 - size);
        const int64_t p = at && *at < 0 ? *at + size : at.value_or(-1);
        if (at && p >= 0 && p < size) {
          add(out, "Identity", {(*s)[static_cast<size_t>(p)]}, {n.output(0)}, n.name());
          replaced_.insert(n.output(0));
          builds_sequence.push_back(0);
          ++rewritten;
          continue;
        }
      } else if (s && op == "SequenceLength") {
        constant_named(out, n.output(0), n.name(), {size}, true);
        replaced_.insert(n.output(0));
        builds_sequence.push_back(0);
        ++rewritten;
        continue;
      } else if (s && op == "ConcatFromSequence" && size > 0) {
        const size_t before = out.size();
        concat(out, *s, int_attribute(n, "axis", 0), int_attribute(n, "new_axis", 0) != 0, n.output(0), n.name());
        replaced_.insert(n.output(0));
        builds_sequence.resize(builds_sequence.size() + (out.size() - before), 0);
        ++rewritten;
        continue;
      } else if (op == "SplitToSequence") {
        if (auto parts = split_to_sequence(n, out, builds_sequence)) {
          seqs[n.output(0)] = *parts;
          builder = true;
        }
      }
      out.push_back(std::move(n));
      builds_sequence.push_back(builder ? 1 : 0);
    }
    rewritten += drop_unread_builders(out, builds_sequence);
    nodes = std::move(out);
    log_.sequence_ops += rewritten;
    return rewritten > 0;
  }

  /// Drops the nodes marked in `builds_sequence` whose outputs nothing reads any more (graph outputs and bodies
  /// count), last first: a chain of inserts goes in one pass. Returns how many it dropped.
  int drop_unread_builders(std::vector<onnx::NodeProto>& nodes, const std::vector<char>& builds_sequence) const {
    std::unordered_set<std::string> read;
    for (const auto& o : m_.graph().output()) read.insert(o.name());
    for (size_t i = 0; i < nodes.size(); ++i)
      if (!builds_sequence[i]) {
        for (const auto& in : nodes[i].input()) read.insert(in);
        for (const auto* sub : subgraphs(nodes[i])) read_names(*sub, read);
      }
    std::vector<char> dropped(nodes.size(), 0);
    int count = 0;
    for (size_t i = nodes.size(); i-- > 0;) {
      if (!builds_sequence[i]) continue;
      if (std::none_of(nodes[i].output().begin(), nodes[i].output().end(), [&](const auto& o) { return read.count(o); })) {
        dropped[i] = 1;
        ++count;
      } else {
        for (const auto& in : nodes[i].input()) read.insert(in);
      }
    }
    std::vector<onnx::NodeProto> kept;
    for (size_t i = 0; i < nodes.size(); ++i)
      if (!dropped[i]) kept.push_back(std::move(nodes[i]));
    nodes = std::move(kept);
    return count;
  }

  /// SplitToSequence of a tensor whose split dim is known: a Split (and Squeezes without keepdims) ahead of the
  /// node; returns the parts, or nothing when the dim or the sizes are not known.
  std::optional<std::vector<std::string>> split_to_sequence(const onnx::NodeProto& n, std::vector<onnx::NodeProto>& out,
                                                            std::vector<char>& builds_sequence) {
    auto it = values_.find(n.input(0));
    if (it == values_.end()) return std::nullopt;
    const Shape& shape = g_.value(it->second).shape;
    int64_t axis = int_attribute(n, "axis", 0);
    if (axis < 0) axis += shape.rank();
    if (axis < 0 || axis >= shape.rank() || shape.dims[static_cast<size_t>(axis)] < 0) return std::nullopt;
    const int64_t dim = shape.dims[static_cast<size_t>(axis)];
    std::vector<int64_t> sizes;
    bool squeeze = false;
    if (n.input_size() < 2 || n.input(1).empty()) {
      sizes.assign(static_cast<size_t>(dim), 1);
      squeeze = int_attribute(n, "keepdims", 1) == 0;
    } else {
      auto split = values_.find(n.input(1));
      auto v = ints_of(n.input(1));
      if (split == values_.end() || !v) return std::nullopt;
      if (g_.value(split->second).shape.rank() == 0 && v->size() == 1) {
        if ((*v)[0] <= 0) return std::nullopt;
        for (int64_t done = 0; done < dim; done += (*v)[0]) sizes.push_back(std::min((*v)[0], dim - done));
      } else {
        sizes = *v;
      }
    }
    int64_t total = 0;
    for (int64_t s : sizes) total += s < 0 ? dim + 1 : s;
    if (sizes.empty() || total != dim || static_cast<int64_t>(sizes.size()) > kMaxIterations) return std::nullopt;
    const size_t before = out.size();
    std::vector<std::string> parts;
    for (size_t k = 0; k < sizes.size(); ++k) parts.push_back(fresh(fmt::format("{}_part{}", n.output(0), k)));
    std::vector<std::string> split_outputs = parts;
    if (squeeze)
      for (auto& p : split_outputs) p = fresh(p + "_kept");
    if (opset_ >= 13) {
      const std::string sizes_name = constant(out, n.output(0) + "_sizes", sizes, false);
      set_int(add(out, "Split", {n.input(0), sizes_name}, split_outputs, n.name() + "_split"), "axis", axis);
    } else {
      auto& split = add(out, "Split", {n.input(0)}, split_outputs, n.name() + "_split");
      set_int(split, "axis", axis);
      set_ints(split, "split", sizes);
    }
    if (squeeze)
      for (size_t k = 0; k < parts.size(); ++k)
        squeeze_op(out, "Squeeze", split_outputs[k], axis, parts[k], fmt::format("{}_squeeze{}", n.name(), k));
    builds_sequence.resize(builds_sequence.size() + (out.size() - before), 0);
    return parts;
  }
};

}  // namespace

std::vector<std::string> InlineLog::notes() const {
  std::vector<std::string> out;
  std::vector<std::string> did;
  if (loops_unrolled)
    did.push_back(fmt::format("{} Loop(s) unrolled ({} iteration{} in all)", loops_unrolled, iterations,
                             iterations == 1 ? "" : "s"));
  if (ifs_taken) did.push_back(fmt::format("{} If(s) replaced by the branch their known condition takes", ifs_taken));
  if (sequence_ops) did.push_back(fmt::format("{} sequence op(s) turned into the tensors they hold", sequence_ops));
  if (!did.empty())
    out.push_back(fmt::format("control flow of known shape inlined: {}", fmt::join(did, "; ")));
  if (!kept.empty())
    out.push_back(fmt::format("{} control-flow node(s) kept as ops ridge does not cost (first: {})", kept.size(),
                              kept.front()));
  return out;
}

bool has_inlinable_ops(const onnx::GraphProto& graph) {
  static const std::unordered_set<std::string> kOps = {
      "Loop", "If", "SequenceEmpty", "SequenceConstruct", "SequenceInsert", "SequenceErase", "SequenceAt",
      "SequenceLength", "ConcatFromSequence", "SplitToSequence"};
  return std::any_of(graph.node().begin(), graph.node().end(),
                     [](const onnx::NodeProto& n) { return is_standard(n) && kOps.count(n.op_type()); });
}

bool inline_round(onnx::ModelProto& m, int opset, const Graph& g, InlineLog& log) {
  return Rewriter(m, opset, g, log).run();
}

}  // namespace ridge::onnx_in
