// estimate(): ridge's per-node costs and totals. Per-op arithmetic is in rules.cpp; this file adds the
// parts every op shares: parameters (each counted once, at first use), bytes moved, status and descriptors.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include "costs/geometry.hpp"
#include "costs/rules.hpp"
#include "ridge/cost.hpp"

namespace ridge {

Cost& Cost::operator+=(const Cost& o) {
  params += o.params;
  buffers += o.buffers;
  macs += o.macs;
  flops += o.flops;
  bwd_input_flops += o.bwd_input_flops;
  bwd_weight_flops += o.bwd_weight_flops;
  bytes_read += o.bytes_read;
  bytes_written += o.bytes_written;
  return *this;
}

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
  for (size_t i = 0; i < g.values.size(); ++i) grad[i] = g.values[i].kind == ValueKind::Param;
  for (int ni : topo_order(g)) {
    const Node& n = g.nodes[ni];
    bool any = false;
    for (int v : n.inputs) any = any || (v >= 0 && grad[v]);
    // Integer/bool outputs (Shape, ArgMax, Equal, ...) carry no gradient.
    for (int o : n.outputs) grad[o] = any && is_float(g.value(o).dtype) && op_family(n.op) != OpFamily::Source;
  }
  return grad;
}

std::string descriptor(const Graph& g, const Node& n) {
  auto shp = [&](int v) { return v >= 0 ? to_string(g.value(v).shape) : std::string("-"); };
  auto all_known = [&] {
    for (int v : n.inputs)
      if (v >= 0 && !g.value(v).shape.known()) return false;
    for (int v : n.outputs)
      if (!g.value(v).shape.known()) return false;
    return true;
  };
  if (!all_known()) return fmt::format("{}:?", op_name(n.op));
  switch (n.op) {
    case OpKind::Conv: {
      const Shape& x = g.value(n.inputs[0]).shape;
      const Shape& w = g.value(n.inputs[1]).shape;
      const Shape& y = g.value(n.outputs[0]).shape;
      if (x.rank() != 4) break;
      auto st = n.attrs.ints("strides", {1, 1});
      auto pd = n.attrs.ints("pads", {0, 0, 0, 0});
      auto dl = n.attrs.ints("dilations", {1, 1});
      bool bias = n.inputs.size() > 2 && n.inputs[2] >= 0;
      return fmt::format("conv:mb{}ic{}ih{}iw{}oc{}oh{}ow{}kh{}kw{}sh{}sw{}ph{}pw{}dh{}dw{}g{}b{}", x[0], x[1], x[2],
                         x[3], y[1], y[2], y[3], w[2], w[3], st.at(0), st.at(1), pd.at(0), pd.at(1), dl.at(0),
                         dl.at(1), n.attrs.i("group", 1), bias ? 1 : 0);
    }
    case OpKind::Gemm: {
      costs::LinearGeom l = costs::linear_geometry(g, n);
      return fmt::format("gemm:m{}k{}n{}b{}", to_string(l.rows), to_string(l.in), to_string(l.out), l.bias ? 1 : 0);
    }
    case OpKind::MatMul: {
      costs::MatMulGeom m = costs::matmul_geometry(g, n);
      return fmt::format("matmul:bs{}m{}k{}n{}", to_string(m.batch), to_string(m.m), to_string(m.k),
                         to_string(m.n));
    }
    default: break;
  }
  std::vector<std::string> ins;
  for (int v : g.data_inputs(n)) ins.push_back(shp(v));
  if (ins.empty() && !n.inputs.empty()) ins.push_back(shp(n.inputs[0]));
  std::string lower(op_name(n.op));
  for (auto& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  // Non-fp32 element types are appended (":int64") so that the descriptor re-creates the same problem.
  std::vector<int> data = g.data_inputs(n);
  DType dt = data.empty() ? DType::F32 : g.value(data[0]).dtype;
  if (dt != DType::F32) return fmt::format("{}:{}:{}", lower, fmt::join(ins, ","), dtype_name(dt));
  return fmt::format("{}:{}", lower, fmt::join(ins, ","));
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
    nc.descriptor = descriptor(g, n);
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
      nc.reason = "shapes not fully known";
      for (int v : n.inputs)
        if (v >= 0 && !g.value(v).shape.known()) {
          nc.reason = fmt::format("shape of '{}' unknown{}", g.value(v).name,
                                  g.value(v).shape_note.empty() ? "" : ": " + g.value(v).shape_note);
          break;
        }
    } else {
      std::string reason;
      if (!costs::apply_rule(g, n, grad, nc.cost, reason)) {
        nc.status = CostStatus::Unsupported;
        nc.reason = reason;
      } else if (!costs::is_view(n)) {
        for (size_t k = 0; k < n.inputs.size(); ++k) {
          int v = n.inputs[k];
          if (v < 0) continue;
          // An embedding lookup reads only the rows it gathers, not the whole table.
          if (n.op == OpKind::Gather && k == 0 && g.value(v).is_weight())
            nc.cost.bytes_read += costs::out_elems(g, n) * dtype_bytes(g.value(v).dtype);
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

}  // namespace ridge
