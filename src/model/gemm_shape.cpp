// GEMM-shape calibration: tensor-core GEMM efficiency as a function of the GEMM shape, fitted on measured GEMM
// times (Vidur's A100/H100 operator profiles) and applied to convolutions by their implicit-GEMM shape and to
// Linear/MatMul layers by theirs. See docs/model.md, "GEMM-shape calibration".
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "ridge/error.hpp"
#include "ridge/llm_analysis.hpp"
#include "ridge/op_geometry.hpp"
#include "ridge/predict.hpp"

namespace ridge {

void set_gemm_shape(LayerWork& w, const Graph& g, const Node& n) {
  const OpFamily family = op_family(n.op);
  if (family == OpFamily::Conv) {
    const ops::ConvGeom c = ops::conv_geometry(g, n);
    if (c.cout <= 0 || c.out_elems <= 0 || c.per_output <= 0) return;
    w.gemm_m = static_cast<int64_t>(c.out_elems / c.cout);  // N x Ho x Wo
    w.gemm_n = c.cout;
    w.gemm_k = static_cast<int64_t>(c.per_output);         // Cin / groups x kernel taps
    w.depthwise = c.groups > 1 && c.groups == c.cin;
  } else if (family == OpFamily::Linear) {
    const ops::LinearGeom l = ops::linear_geometry(g, n);
    w.gemm_m = static_cast<int64_t>(l.rows), w.gemm_n = static_cast<int64_t>(l.out), w.gemm_k = static_cast<int64_t>(l.in);
  } else if (family == OpFamily::MatMul) {
    const ops::MatMulGeom mm = ops::matmul_geometry(g, n);
    w.gemm_m = static_cast<int64_t>(mm.batch * mm.m), w.gemm_n = static_cast<int64_t>(mm.n);
    w.gemm_k = static_cast<int64_t>(mm.k);
  }
  if (w.gemm_m <= 0 || w.gemm_n <= 0 || w.gemm_k <= 0) w.gemm_m = w.gemm_n = w.gemm_k = 0;
}

namespace {

// The grid cell of a coordinate: index i with nodes[i] <= x <= nodes[i + 1] and the weight of nodes[i + 1],
// clamped at the ends.
std::pair<size_t, double> locate(const std::vector<double>& nodes, double x) {
  if (nodes.size() == 1 || x <= nodes.front()) return {0, 0.0};
  if (x >= nodes.back()) return {nodes.size() - 2, 1.0};
  const size_t i = static_cast<size_t>(std::upper_bound(nodes.begin(), nodes.end(), x) - nodes.begin()) - 1;
  return {i, (x - nodes[i]) / (nodes[i + 1] - nodes[i])};
}

}  // namespace

double GemmShapeTable::lookup(int64_t m, int64_t n, int64_t k) const {
  RIDGE_ASSERT(!empty() && m > 0 && n > 0 && k > 0, "GEMM-shape lookup needs a fitted table and a shape");
  const double x = std::log2(static_cast<double>(m) * static_cast<double>(n)), y = std::log2(static_cast<double>(k));
  const size_t ny = log2_k.size();
  const auto [i, fx] = locate(log2_mn, x);
  const auto [j, fy] = locate(log2_k, y);
  auto at = [&](size_t a, size_t b) {
    return ppp[std::min(a, log2_mn.size() - 1) * ny + std::min(b, ny - 1)];
  };
  return (1 - fx) * ((1 - fy) * at(i, j) + fy * at(i, j + 1)) + fx * ((1 - fy) * at(i + 1, j) + fy * at(i + 1, j + 1));
}

namespace {

// How a layer stands under a GEMM-shape table: not covered, a memory-bound conv, or a GEMM at its shape.
enum class GemmCover { None, MemoryBoundConv, Shaped };

GemmCover gemm_cover(const Calibration& c, const LayerWork& w, const Efficiency* own, std::string_view family) {
  if (c.gemm_shapes.empty() || !own || (family != "conv" && family != "gemm") || w.gemm_k <= 0) return GemmCover::None;
  if (family == "conv" && (w.depthwise || w.gemm_k <= c.gemm_shapes.memory_bound_k)) return GemmCover::MemoryBoundConv;
  return GemmCover::Shaped;
}

std::string_view family_of(const LayerWork& w) {
  std::string_view family = kernel_family_of_op_class(w.op_class);
  return family.empty() ? std::string_view(w.op_class) : family;  // already a kernel family ("gemm": Vidur's)
}

// `own` with the table's PPP at shape m x n x k (split-K beyond the grid with `split_k`).
Efficiency shaped(const Calibration& c, const Efficiency& own, int64_t m, int64_t n, int64_t k, bool split_k = false) {
  Efficiency e = own;
  e.ppp = split_k ? c.gemm_shapes.lookup_split_k(m, n, k) : c.gemm_shapes.lookup(m, n, k);
  e.combine = c.gemm_shapes.combine;
  return e;
}

}  // namespace

double GemmShapeTable::lookup_split_k(int64_t m, int64_t n, int64_t k) const {
  RIDGE_ASSERT(!empty() && m > 0 && n > 0 && k > 0, "GEMM-shape lookup needs a fitted table and a shape");
  const double excess = std::log2(static_cast<double>(k)) - log2_k.back();
  const int64_t split = excess > 0 ? int64_t{1} << std::min(30, static_cast<int>(std::ceil(excess))) : 1;
  return lookup(m * split, n, std::max<int64_t>(1, k / split));
}

Efficiency Calibration::for_layer(const LayerWork& w, std::string* label) const {
  const Efficiency* own = find(w.op_class);
  const std::string_view family = family_of(w);
  switch (gemm_cover(*this, w, own, family)) {
    case GemmCover::MemoryBoundConv: {
      // Depthwise and tiny-K convolutions are memory-bound kernels: the memory class's factors, compute at peak.
      Efficiency e = for_class(gemm_shapes.memory_class);
      e.ppp = 1.0;
      if (label) *label = "memory-bound conv (" + gemm_shapes.memory_class + ")";
      return e;
    }
    case GemmCover::Shaped:
      if (label) *label = std::string(family) + " (GEMM shape)";
      return shaped(*this, *own, w.gemm_m, w.gemm_n, w.gemm_k);
    case GemmCover::None:
      break;
  }
  if (label) *label = !fitted() ? "uncalibrated" : own ? w.op_class : "fallback";
  return own ? *own : fallback;
}

std::optional<Calibration::BackwardGemms> Calibration::backward_gemms(const LayerWork& w) const {
  const Efficiency* own = find(w.op_class);
  if (gemm_cover(*this, w, own, family_of(w)) != GemmCover::Shaped) return std::nullopt;
  return BackwardGemms{shaped(*this, *own, w.gemm_m, w.gemm_k, w.gemm_n), shaped(*this, *own, w.gemm_k, w.gemm_n, w.gemm_m, true)};
}

GemmShapeTable fit_gemm_shape_table(const std::vector<GemmTiming>& gemms, const Efficiency& gemm, double peak,
                                    double bandwidth) {
  RIDGE_ASSERT(peak > 0 && bandwidth > 0, "GEMM-shape fit needs a peak and a bandwidth");
  struct Node {
    double num = 0, den = 0;
    int samples = 0;
  };
  std::map<std::pair<int, int>, Node> cells;
  for (const GemmTiming& t : gemms) {
    if (t.m <= 0 || t.n <= 0 || t.k <= 0 || t.flops <= 0 || !(t.time_s > 0)) continue;
    const int x = static_cast<int>(std::lround(std::log2(static_cast<double>(t.m) * static_cast<double>(t.n))));
    const int y = static_cast<int>(std::lround(std::log2(static_cast<double>(t.k))));
    const double c = to_double(t.flops) / peak;  // compute time at PPP 1
    const double memory = std::isinf(gemm.ppp_mem) ? 0.0 : to_double(t.bytes) / (gemm.ppp_mem * bandwidth);
    const double work = t.time_s - gemm.overhead_s.value_or(0);  // what max(compute, memory) must explain
    if (!(work > 0) || memory >= 0.8 * work) continue;             // memory-bound: says nothing about the PPP
    // Least squares of (c / ppp - work) / work: 1 / ppp = sum(c / work) / sum((c / work)^2).
    Node& cell = cells[{x, y}];
    cell.num += (c / work) * (c / work);
    cell.den += c / work;
    ++cell.samples;
  }
  GemmShapeTable table;
  std::vector<std::pair<int, int>> fitted;
  for (const auto& [xy, cell] : cells)
    if (cell.samples >= 3 && cell.den > 0) fitted.push_back(xy);
  if (fitted.empty()) throw Error("GEMM-shape fit: no GEMM shape has 3 or more compute-bound measurements");
  std::vector<int> xs, ys;
  for (const auto& [x, y] : fitted) xs.push_back(x), ys.push_back(y);
  std::sort(xs.begin(), xs.end());
  std::sort(ys.begin(), ys.end());
  for (int x = xs.front(); x <= xs.back(); ++x) table.log2_mn.push_back(x);
  for (int y = ys.front(); y <= ys.back(); ++y) table.log2_k.push_back(y);
  for (double x : table.log2_mn) {
    for (double y : table.log2_k) {
      // A node without its own fit takes the nearest fitted node (log2 M N counting before log2 K, then smaller).
      const std::pair<int, int> key{static_cast<int>(x), static_cast<int>(y)};
      std::pair<int, int> best = fitted.front();
      auto distance = [&](const std::pair<int, int>& p) {
        return std::pair{std::abs(p.first - key.first) + std::abs(p.second - key.second), std::abs(p.second - key.second)};
      };
      for (const auto& p : fitted)
        if (distance(p) < distance(best)) best = p;
      const Node& cell = cells.at(best);
      table.ppp.push_back(cell.num / cell.den);
      table.samples.push_back(best == key ? cell.samples : 0);
    }
  }
  return table;
}

std::vector<LlmOpMeasurement> cnn_view_of_operators(const std::vector<LlmOpMeasurement>& ms) {
  std::vector<LlmOpMeasurement> out;
  for (LlmOpMeasurement m : ms) {
    if (m.op_class == "Gather") continue;  // an embedding lookup: no CNN kernel is like it
    // The residual add streams like a CNN's ReLU/Add (elementwise), RMSNorm reduces and scales like BatchNorm
    // (normalization); rotary and SiLU x up have no CNN counterpart: the pooled "memory" class.
    if (m.op_class != "gemm" && m.op_class != "normalization" && m.op_class != "elementwise") m.op_class = "memory";
    out.push_back(std::move(m));
  }
  return out;
}

Calibration fit_cnn_calibration(const std::vector<LlmOpMeasurement>& ms, const Device& d, Precision p) {
  const std::vector<LlmOpMeasurement> ops = cnn_view_of_operators(ms);
  Calibration c = fit_operator_classes(ops, d, p);
  // The one memory efficiency for memory-bound kernels with no counterpart (pooling, depthwise convs, ...): every
  // memory-bound operator pooled.
  std::vector<LlmOpMeasurement> pooled = ops;
  for (LlmOpMeasurement& m : pooled)
    if (m.op_class != "gemm") m.op_class = "memory";
  const Calibration all = fit_operator_classes(pooled, d, p);
  const auto gemm = c.by_class.find("gemm");
  const auto memory = all.by_class.find("memory");
  if (gemm == c.by_class.end() || memory == all.by_class.end())
    throw Error("CNN calibration: the operator profiles need both GEMMs and memory-bound operators");
  std::vector<GemmTiming> gemms;
  for (const auto& m : ops)
    if (m.op_class == "gemm") gemms.push_back({m.m, m.n, m.k, m.flops, m.bytes, m.time_s});
  c.gemm_shapes = fit_gemm_shape_table(gemms, gemm->second, d.require_peak(p), d.dram_bandwidth());
  c.gemm_shapes.memory_class = "memory";
  // The CNN classes (kernel families of op_class_kernel_families()): convolutions and matmuls run as GEMMs,
  // ReLU/Add at the residual add's factors, BatchNorm at RMSNorm's, the other memory-bound classes pooled.
  c.by_class["conv"] = gemm->second;
  for (const char* cls : {"memory", "pooling", "softmax", "reduction"}) c.by_class[cls] = memory->second;
  return c;
}

}  // namespace ridge
