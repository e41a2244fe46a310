// estimate(): ridge's per-node costs and totals. Per-op arithmetic is in the op rules (src/ops); this file adds the
// parts every op shares: parameters (each counted once, at first use), bytes moved, status and descriptors.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

#include "ridge/op_geometry.hpp"
#include "ridge/op_rules.hpp"
#include "ridge/cost.hpp"
#include "ridge/error.hpp"

namespace ridge {

std::string_view cost_status_name(CostStatus s) {
  switch (s) {
    case CostStatus::Ok: return "ok";
    case CostStatus::Unsupported: return "unsupported";
    case CostStatus::UnknownShape: return "unknown-shape";
  }
  return "?";
}

std::vector<bool> requires_grad(const Graph& g) {
  std::vector<bool> grad(g.values.size(), false);
  for (size_t i = 0; i < g.values.size(); ++i) {
    // An integer parameter (a quantized weight) takes no gradient.
    grad[i] = (g.values[i].kind == ValueKind::Param && !is_integral(g.values[i].dtype)) || g.values[i].needs_grad;
  }
  for (int ni : topo_order(g)) {
    const Node& n = g.nodes[ni];
    bool any = false;
    for (int v : n.inputs) any = any || (v >= 0 && grad[v]);
    // Integer/bool outputs (Shape, ArgMax, Equal, ...) carry no gradient.
    for (int o : n.outputs) grad[o] = any && is_float(g.value(o).dtype) && op_family(n.op) != OpFamily::Source;
  }
  return grad;
}

std::string op_class(const Graph& g, const Node& n) {
  const OpFamily family = op_family(n.op);
  if (family == OpFamily::Unknown) return n.op_type;
  if (n.op == OpKind::Conv && n.inputs.size() > 1 && g.value(n.inputs[0]).shape.known()) {
    const int64_t groups = n.attrs.i("group", 1);
    const Shape& x = g.value(n.inputs[0]).shape;
    if (groups > 1) return x.rank() >= 2 && x[1] == groups ? "DepthwiseConv" : "GroupedConv";
  }
  return std::string(family_name(family));
}

ModelCost estimate(const Graph& g) {
  ModelCost mc;
  const std::vector<bool> grad = requires_grad(g);
  std::set<int> seen_weights;
  mc.nodes.reserve(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    NodeCost nc;
    nc.node = static_cast<int>(i);
    nc.descriptor = ops::descriptor(g, n, grad);
    for (int v : n.inputs) {
      if (v < 0 || !g.value(v).is_weight() || !seen_weights.insert(v).second) continue;
      if (!g.value(v).shape.known()) continue;
      (g.value(v).kind == ValueKind::Param ? nc.cost.params : nc.cost.buffers) += g.value(v).shape.elements();
    }
    bool shapes_known = true;
    for (int v : n.inputs)
      if (v >= 0 && !g.value(v).shape.known()) shapes_known = false;
    for (int v : n.outputs)
      if (!g.value(v).shape.known()) shapes_known = false;
    if (op_family(n.op) == OpFamily::Unknown) {
      nc.status = CostStatus::Unsupported;
      nc.reason = fmt::format("op {} has no cost rule", n.op_type.empty() ? "?" : n.op_type);
    } else if (!shapes_known) {
      nc.status = CostStatus::UnknownShape;
      // The first unknown input names the cause; with every input known, the first unknown output's note does.
      std::vector<int> suspects(n.inputs);
      suspects.insert(suspects.end(), n.outputs.begin(), n.outputs.end());
      const auto unknown = std::find_if(suspects.begin(), suspects.end(),
                                        [&](int v) { return v >= 0 && !g.value(v).shape.known(); });
      const Value& u = g.value(*unknown);  // exists: shapes_known is false
      nc.reason = fmt::format("shape of '{}' unknown{}", u.name, u.shape_note.empty() ? "" : ": " + u.shape_note);
    } else {
      std::string reason;
      if (!ops::cost_node(g, n, grad, nc.cost, reason)) {
        nc.status = CostStatus::Unsupported;
        nc.reason = reason;
      } else if (!ops::is_view(g, n)) {
        for (size_t k = 0; k < n.inputs.size(); ++k) {
          int v = n.inputs[k];
          if (v < 0) continue;
          // An embedding lookup reads only the rows it gathers, not the whole table.
          if (n.op == OpKind::Gather && k == 0 && g.value(v).is_weight())
            nc.cost.bytes_read += ops::out_elems(g, n) * dtype_bytes(g.value(v).dtype);
          else
            nc.cost.bytes_read += g.value(v).bytes();
        }
        for (int v : n.outputs) nc.cost.bytes_written += g.value(v).bytes();
      }
    }
    if (nc.status == CostStatus::Ok) {
      mc.total += nc.cost;
    } else {
      // Parameters are known even when the op cannot be costed; keep them in the totals.
      mc.total.params += nc.cost.params;
      mc.total.buffers += nc.cost.buffers;
      mc.excluded_ops[n.op_type.empty() ? std::string(op_name(n.op)) : n.op_type]++;
    }
    mc.nodes.push_back(std::move(nc));
  }
  return mc;
}

Incompleteness incompleteness(const Graph& g, const ModelCost& mc) {
  Incompleteness inc;
  std::map<std::string, int> per_op;
  for (const NodeCost& nc : mc.nodes) {
    if (nc.status == CostStatus::Ok) continue;
    const Node& n = g.nodes[nc.node];
    const std::string op = n.op_type.empty() ? std::string(op_name(n.op)) : n.op_type;
    inc.nodes.push_back({nc.node, n.name, op, nc.reason, nc.status});
    ++per_op[op];
  }
  inc.ops.assign(per_op.begin(), per_op.end());
  std::stable_sort(inc.ops.begin(), inc.ops.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return inc;
}

std::string incomplete_line(const Incompleteness& inc) {
  if (inc.complete()) return "";
  constexpr size_t kShown = 4;  // the most frequent op types; the rest as "+N more"
  std::vector<std::string> ops;
  for (size_t i = 0; i < inc.ops.size() && i < kShown; ++i)
    ops.push_back(inc.ops[i].second > 1 ? fmt::format("{} x{}", inc.ops[i].first, inc.ops[i].second) : inc.ops[i].first);
  if (inc.ops.size() > kShown) ops.push_back(fmt::format("+{} more op types", inc.ops.size() - kShown));
  std::string line =
      fmt::format("INCOMPLETE: {} node{} not costed ({}) — totals are lower bounds (--strict makes this an error)",
                  inc.nodes.size(), inc.nodes.size() == 1 ? "" : "s", fmt::join(ops, ", "));
  const auto unknown_shape = [](const Incompleteness::Item& i) { return i.status == CostStatus::UnknownShape; };
  const auto first = std::find_if(inc.nodes.begin(), inc.nodes.end(), unknown_shape);
  if (first == inc.nodes.end()) return line;
  const auto count = std::count_if(inc.nodes.begin(), inc.nodes.end(), unknown_shape);
  const bool all = static_cast<size_t>(count) == inc.nodes.size();
  return fmt::format("{}; {} for unknown shapes, first node '{}': {}", line,
                     all ? (count == 1 ? std::string("it is") : fmt::format("all {}", count)) : fmt::format("{} of them", count),
                     first->name, first->reason);
}

void require_complete(const Incompleteness& inc, const std::string& model) {
  if (inc.complete()) return;
  const Incompleteness::Item& first = inc.nodes.front();
  throw Error(fmt::format("--strict: {}: node '{}' (op {}) cannot be costed: {}{}", model, first.name, first.op,
                          first.reason, inc.nodes.size() > 1 ? fmt::format(" (and {} more)", inc.nodes.size() - 1)
                                                             : std::string()));
}

}  // namespace ridge
