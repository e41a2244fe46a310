// Roofline placement and the conversion of cost-model output into per-layer work.
#include <cmath>
#include <limits>

#include "ridge/error.hpp"
#include "ridge/ops.hpp"
#include "ridge/predict.hpp"

namespace ridge {

std::string_view bound_name(Bound b) {
  switch (b) {
    case Bound::Compute: return "compute";
    case Bound::Memory: return "memory";
    case Bound::Overhead: return "overhead";
    case Bound::None: return "none";
  }
  return "none";
}

double ridge_point(double peak_flop_per_s, double bandwidth_bytes_per_s) {
  RIDGE_ASSERT(bandwidth_bytes_per_s > 0, "bandwidth must be positive");
  return peak_flop_per_s / bandwidth_bytes_per_s;
}

RooflinePoint roofline_point(Count flops, Count bytes, double peak_flop_per_s, double bandwidth_bytes_per_s) {
  RIDGE_ASSERT(peak_flop_per_s > 0 && bandwidth_bytes_per_s > 0, "roofline needs positive peak and bandwidth");
  RooflinePoint p;
  p.ridge_flop_per_byte = ridge_point(peak_flop_per_s, bandwidth_bytes_per_s);
  const double f = to_double(flops), b = to_double(bytes);
  p.intensity_flop_per_byte = b > 0 ? f / b : (f > 0 ? std::numeric_limits<double>::infinity() : 0.0);
  p.attainable_flop_per_s = std::min(peak_flop_per_s, p.intensity_flop_per_byte * bandwidth_bytes_per_s);
  p.time_lower_bound_s = std::max(f / peak_flop_per_s, b / bandwidth_bytes_per_s);
  if (f <= 0 && b <= 0) p.bound = Bound::None;
  else p.bound = p.intensity_flop_per_byte >= p.ridge_flop_per_byte ? Bound::Compute : Bound::Memory;
  return p;
}

std::vector<LayerWork> layer_work(const Graph& g, const ModelCost& costs) {
  RIDGE_ASSERT(costs.nodes.size() == g.nodes.size(), "costs must come from estimate() of the same graph");
  const std::vector<bool> grad = requires_grad(g);
  std::vector<LayerWork> out;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    const NodeCost& nc = costs.nodes[i];
    const OpFamily family = op_family(n.op);
    const bool ok = nc.status == CostStatus::Ok;
    if (ok && (family == OpFamily::View || family == OpFamily::Source)) continue;  // metadata only
    LayerWork w;
    w.name = n.name;
    w.op_class = op_class(g, n);
    w.costed = ok;
    if (ok) {
      w.flops = nc.cost.flops;
      w.bytes = nc.cost.bytes();
      w.bytes_written = nc.cost.bytes_written;
      w.bwd_input_flops = nc.cost.bwd_input_flops;
      w.bwd_weight_flops = nc.cost.bwd_weight_flops;
      w.params = nc.cost.params;
      w.kernels = (w.flops > 0 || w.bytes > 0) ? 1 : 0;
      for (int v : n.outputs) w.needs_backward = w.needs_backward || grad[v];
      set_gemm_shape(w, g, n);
    } else {
      w.kernels = 0;
      w.reason = nc.reason.empty() ? std::string(cost_status_name(nc.status)) : nc.reason;
    }
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace ridge
