#include "ridge/graph.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <queue>
#include <set>
#include <unordered_map>

#include "ridge/error.hpp"

namespace ridge {

bool Shape::known() const {
  return std::all_of(dims.begin(), dims.end(), [](int64_t d) { return d >= 0; });
}

Count Shape::elements() const {
  RIDGE_ASSERT(known(), "elements() of a shape with unknown dims");
  Count n = 1;
  for (int64_t d : dims) n = checked_mul(n, d, "tensor elements");
  return n;
}

std::string to_string(const Shape& s) {
  if (s.dims.empty()) return "scalar";
  std::string out;
  for (size_t i = 0; i < s.dims.size(); ++i) {
    if (i) out += 'x';
    out += s.dims[i] < 0 ? std::string("?") : std::to_string(s.dims[i]);
  }
  return out;
}

Shape parse_shape(const std::string& text, const std::string& what) {
  Shape s;
  if (text.empty()) throw Error(fmt::format("{}: empty shape (expected e.g. 1x3x224x224)", what));
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find_first_of("x,X", start);
    std::string tok = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (tok.empty() || tok.find_first_not_of("0123456789") != std::string::npos)
      throw Error(fmt::format("{}: '{}' is not a shape (expected positive integers joined by 'x', e.g. 1x3x224x224)",
                              what, text));
    if (tok.size() > 12) throw Error(fmt::format("{}: dim '{}' in '{}' is absurdly large", what, tok, text));
    int64_t d = std::stoll(tok);
    if (d <= 0) throw Error(fmt::format("{}: dim {} in '{}' must be positive", what, d, text));
    s.dims.push_back(d);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return s;
}

std::string_view value_kind_name(ValueKind k) {
  switch (k) {
    case ValueKind::Input: return "input";
    case ValueKind::Param: return "param";
    case ValueKind::Buffer: return "buffer";
    case ValueKind::Constant: return "constant";
    case ValueKind::Activation: return "activation";
  }
  return "?";
}

Attrs conv2d_attrs(const Conv2dGeometry& c) {
  Attrs a;
  a.set("kernel_shape", std::vector<int64_t>{c.kh, c.kw})
      .set("strides", std::vector<int64_t>{c.sh, c.sw})
      .set("pads", std::vector<int64_t>{c.ph, c.pw, c.ph, c.pw})
      .set("dilations", std::vector<int64_t>{c.dh, c.dw})
      .set("group", c.group);
  return a;
}

int64_t Attrs::i(const std::string& k, int64_t def) const {
  auto it = items.find(k);
  if (it == items.end()) return def;
  if (auto p = std::get_if<int64_t>(&it->second)) return *p;
  if (auto p = std::get_if<double>(&it->second)) return static_cast<int64_t>(*p);
  return def;
}

double Attrs::f(const std::string& k, double def) const {
  auto it = items.find(k);
  if (it == items.end()) return def;
  if (auto p = std::get_if<double>(&it->second)) return *p;
  if (auto p = std::get_if<int64_t>(&it->second)) return static_cast<double>(*p);
  return def;
}

std::string Attrs::s(const std::string& k, const std::string& def) const {
  auto it = items.find(k);
  if (it == items.end()) return def;
  if (auto p = std::get_if<std::string>(&it->second)) return *p;
  return def;
}

std::vector<int64_t> Attrs::ints(const std::string& k, std::vector<int64_t> def) const {
  auto it = items.find(k);
  if (it == items.end()) return def;
  if (auto p = std::get_if<std::vector<int64_t>>(&it->second)) return *p;
  if (auto p = std::get_if<int64_t>(&it->second)) return {*p};
  return def;
}

int Graph::add_value(Value v) {
  values.push_back(std::move(v));
  return static_cast<int>(values.size()) - 1;
}

int Graph::add_node(Node n) {
  int id = static_cast<int>(nodes.size());
  for (int o : n.outputs) values.at(o).producer = id;
  nodes.push_back(std::move(n));
  return id;
}

std::vector<int> Graph::data_inputs(const Node& n) const {
  std::vector<int> out;
  for (int v : n.inputs)
    if (v >= 0 && (values[v].kind == ValueKind::Input || values[v].kind == ValueKind::Activation)) out.push_back(v);
  return out;
}

std::vector<int> Graph::weight_inputs(const Node& n) const {
  std::vector<int> out;
  for (int v : n.inputs)
    if (v >= 0 && values[v].is_weight()) out.push_back(v);
  return out;
}

int Graph::find_node(const std::string& nm) const {
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].name == nm) return static_cast<int>(i);
  return -1;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const std::string& where) {
  Shape out;
  int r = std::max(a.rank(), b.rank());
  out.dims.resize(r);
  for (int i = 0; i < r; ++i) {
    int ia = a.rank() - r + i, ib = b.rank() - r + i;
    int64_t da = ia >= 0 ? a.dims[ia] : 1, db = ib >= 0 ? b.dims[ib] : 1;
    if (da == db || db == 1) out.dims[i] = da;
    else if (da == 1) out.dims[i] = db;
    else if (da < 0 || db < 0) out.dims[i] = -1;
    else
      throw Error(fmt::format("{}: shapes {} and {} do not broadcast", where, to_string(a), to_string(b)));
  }
  return out;
}

std::vector<int> topo_order(const Graph& g) {
  const int n = static_cast<int>(g.nodes.size());
  std::vector<int> indeg(n, 0);
  std::vector<std::vector<int>> users(n);
  std::vector<int> preds;  // the distinct producers of node i's inputs
  for (int i = 0; i < n; ++i) {
    preds.clear();
    for (int v : g.nodes[i].inputs)
      if (v >= 0 && v < static_cast<int>(g.values.size()) && g.values[v].producer >= 0) preds.push_back(g.values[v].producer);
    std::sort(preds.begin(), preds.end());
    preds.erase(std::unique(preds.begin(), preds.end()), preds.end());
    for (int p : preds) {
      if (p == i) throw CycleError(fmt::format("node '{}' consumes its own output (cycle)", g.nodes[i].name), i);
      users[p].push_back(i);
      ++indeg[i];
    }
  }
  // Kahn's algorithm with a min-heap on the original index keeps the given order when it is already valid.
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i)
    if (indeg[i] == 0) ready.push(i);
  std::vector<int> order;
  order.reserve(n);
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int u : users[i])
      if (--indeg[u] == 0) ready.push(u);
  }
  if (static_cast<int>(order.size()) != n) {
    for (int i = 0; i < n; ++i)
      if (indeg[i] > 0) throw CycleError(fmt::format("graph has a cycle through node '{}'", g.nodes[i].name), i);
  }
  return order;
}

namespace {

void check_node_shapes(const Graph& g, const Node& n) {
  auto shape_of = [&](size_t i) -> const Shape* {
    if (i >= n.inputs.size() || n.inputs[i] < 0) return nullptr;
    const Shape& s = g.values[n.inputs[i]].shape;
    return s.known() ? &s : nullptr;
  };
  auto where = [&] { return fmt::format("node '{}' ({})", n.name, op_name(n.op)); };  // only on an error
  switch (n.op) {
    case OpKind::Conv: {
      const Shape *x = shape_of(0), *w = shape_of(1);
      if (!x || !w) return;
      if (x->rank() < 3 || w->rank() != x->rank())
        throw Error(fmt::format("{}: input {} and weight {} ranks disagree", where(), to_string(*x), to_string(*w)));
      int64_t groups = n.attrs.i("group", 1);
      if ((*w)[1] * groups != (*x)[1])
        throw Error(fmt::format("{}: input has {} channels but weight {} with group {} expects {}", where(), (*x)[1],
                                to_string(*w), groups, (*w)[1] * groups));
      break;
    }
    case OpKind::Gemm: {
      const Shape *a = shape_of(0), *b = shape_of(1);
      if (!a || !b || a->rank() < 1 || b->rank() != 2) return;
      int64_t k_a = n.attrs.i("transA", 0) ? (*a)[0] : (*a)[-1];
      int64_t k_b = n.attrs.i("transB", 0) ? (*b)[1] : (*b)[0];
      if (k_a != k_b)
        throw Error(fmt::format("{}: inner dims disagree: input {} vs weight {}", where(), to_string(*a), to_string(*b)));
      break;
    }
    case OpKind::MatMul: {
      const Shape *a = shape_of(0), *b = shape_of(1);
      if (!a || !b || a->rank() < 1 || b->rank() < 1) return;
      int64_t k_a = (*a)[-1];
      int64_t k_b = b->rank() == 1 ? (*b)[0] : (*b)[-2];
      if (k_a != k_b)
        throw Error(fmt::format("{}: inner dims disagree: {} @ {}", where(), to_string(*a), to_string(*b)));
      break;
    }
    case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div: {
      const Shape *a = shape_of(0), *b = shape_of(1);
      if (a && b) try {
          broadcast_shapes(*a, *b, "");
        } catch (const Error& e) {
          throw Error(where() + e.what());  // e.what(): ": shapes ... do not broadcast"
        }
      break;
    }
    case OpKind::Concat: {
      const Shape* first = shape_of(0);
      if (!first) return;
      int64_t axis = n.attrs.i("axis", 0);
      if (axis < 0) axis += first->rank();
      for (size_t i = 1; i < n.inputs.size(); ++i) {
        const Shape* s = shape_of(i);
        if (!s) continue;
        if (s->rank() != first->rank())
          throw Error(fmt::format("{}: inputs {} and {} differ in rank", where(), to_string(*first), to_string(*s)));
        for (int d = 0; d < s->rank(); ++d)
          if (d != axis && (*s)[d] != (*first)[d])
            throw Error(fmt::format("{}: inputs {} and {} differ outside axis {}", where(), to_string(*first),
                                    to_string(*s), axis));
      }
      break;
    }
    default: break;
  }
}

}  // namespace

void validate(const Graph& g) {
  const int nv = static_cast<int>(g.values.size());
  std::unordered_map<std::string_view, int> names;  // views of the nodes' own names
  names.reserve(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.name.empty()) throw Error(fmt::format("node #{} ({}) has no name", i, op_name(n.op)));
    if (!names.emplace(n.name, static_cast<int>(i)).second)
      throw Error(fmt::format("two nodes are named '{}'", n.name));
    for (int v : n.inputs) {
      if (v < -1 || v >= nv) throw Error(fmt::format("node '{}' has a dangling input (value #{})", n.name, v));
      if (v < 0) continue;
      const Value& val = g.values[v];
      if (val.kind == ValueKind::Activation && val.producer < 0)
        throw Error(fmt::format("node '{}': input '{}' is produced by no node and is not a graph input", n.name,
                                val.name));
    }
    for (int v : n.outputs) {
      if (v < 0 || v >= nv) throw Error(fmt::format("node '{}' has a dangling output (value #{})", n.name, v));
      if (g.values[v].producer != static_cast<int>(i))
        throw Error(fmt::format("node '{}': output '{}' is also produced by node '{}'", n.name, g.values[v].name,
                                g.values[v].producer >= 0 ? g.nodes[g.values[v].producer].name : "?"));
    }
  }
  for (int v : g.outputs)
    if (v < 0 || v >= nv) throw Error(fmt::format("graph output #{} does not exist", v));
  for (int v : g.inputs)
    if (v < 0 || v >= nv || g.values[v].kind != ValueKind::Input)
      throw Error(fmt::format("graph input #{} is not an input value", v));
  topo_order(g);
  for (const Node& n : g.nodes) check_node_shapes(g, n);
}

}  // namespace ridge
