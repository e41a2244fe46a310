// Sampling family: GridSample, RoiAlign and MaxRoiPool, which read their input at positions computed from
// another input (a grid, boxes) — shape inference and cost.
#include <fmt/ranges.h>

#include "ops/family.hpp"

namespace ridge::ops {

namespace {

/// GridSample (X [N, C, D1..Dr], grid [N, O1..Or, r]) -> [N, C, O1..Or]; opset 16's 2-D case and opset 20's N-D.
bool grid_sample_infer(RuleContext& c) {
  const Shape* x = c.shape(0);
  const Shape* grid = c.shape(1);
  if (!x || !grid) return false;
  const std::string mode = c.n.attrs.s("mode", "bilinear"), padding = c.n.attrs.s("padding_mode", "zeros");
  if (mode != "bilinear" && mode != "linear" && mode != "nearest" && mode != "bicubic" && mode != "cubic")
    throw RuleError(fmt::format("GridSample mode '{}' is not linear, nearest or cubic", mode));
  if (padding != "zeros" && padding != "border" && padding != "reflection")
    throw RuleError(fmt::format("GridSample padding_mode '{}' is not zeros, border or reflection", padding));
  if (x->rank() < 3)
    throw RuleError(fmt::format("GridSample needs an input [N, C, spatial...], not {}", to_string(*x)));
  const int r = x->rank() - 2;
  if (grid->rank() != x->rank() || (grid->dims.back() >= 0 && grid->dims.back() != r))
    throw RuleError(fmt::format("GridSample grid {} is not [N, out spatial..., {}] for the input {}", to_string(*grid),
                                r, to_string(*x)));
  if (x->dims[0] >= 0 && grid->dims[0] >= 0 && x->dims[0] != grid->dims[0])
    throw RuleError(fmt::format("GridSample input batch {} differs from the grid's {}", x->dims[0], grid->dims[0]));
  Shape out{{x->dims[0] >= 0 ? x->dims[0] : grid->dims[0], x->dims[1]}};
  out.dims.insert(out.dims.end(), grid->dims.begin() + 1, grid->dims.end() - 1);
  c.out(0, out);
  return true;
}

// Per output position (N x prod(O)), each of the r grid coordinates is unnormalised: ((g + 1) * size - 1) / 2 or
// (g + 1) * (size - 1) / 2, 3 FLOPs; padding modes clamp or reflect indices (selection, 0). Per output element
// the interpolation is Resize's: nearest 0, linear 3 (2^r - 1); cubic is not costed (as Resize's). Backward: X
// gets the interpolation's count (the same weights), the grid the interpolation's count and the coordinates'
// again (linear; nearest is piecewise constant: 0).
bool grid_sample_cost(const CostContext& c, Cost& cost, std::string& reason) {
  const std::string mode = c.n.attrs.s("mode", "bilinear");
  if (mode == "bicubic" || mode == "cubic") {
    reason = fmt::format("GridSample mode '{}' has no cost rule (as Resize's cubic)", mode);
    return false;
  }
  const Shape& y = c.out_shape(0);
  const int r = y.rank() - 2;
  const Count positions = y[1] > 0 ? c.out_elems() / y[1] : 0;
  const Count coords = positions * 3 * r;
  const Count interp = mode == "nearest" ? 0 : c.out_elems() * 3 * ((Count{1} << r) - 1);
  cost.flops = coords + interp;
  c.add_grad(c.n.inputs[0], interp, cost);
  c.add_grad(c.n.inputs[1], mode == "nearest" ? 0 : interp + coords, cost);
  return true;
}

/// The boxes of RoiAlign ([R, 4] and batch indices [R]) and MaxRoiPool ([R, 5]): R, or -1.
int64_t box_count(const RuleContext& c, int width) {
  const Shape* rois = c.shape(1);
  if (!rois) return -1;
  if (rois->rank() != 2 || (rois->dims[1] >= 0 && rois->dims[1] != width))
    throw RuleError(fmt::format("{} rois {} are not [num_rois, {}]", c.n.op_type.empty() ? "RoI" : c.n.op_type,
                                to_string(*rois), width));
  return rois->dims[0];
}

/// RoiAlign (X [N, C, H, W], rois [R, 4], batch_indices [R]) -> [R, C, output_height, output_width].
bool roi_align_infer(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  if (x->rank() != 4) throw RuleError(fmt::format("RoiAlign needs an input [N, C, H, W], not {}", to_string(*x)));
  const std::string mode = c.n.attrs.s("mode", "avg");
  if (mode != "avg" && mode != "max") throw RuleError(fmt::format("RoiAlign mode '{}' is neither avg nor max", mode));
  const std::string ctm = c.n.attrs.s("coordinate_transformation_mode", "half_pixel");
  if (ctm != "half_pixel" && ctm != "output_half_pixel")
    throw RuleError(fmt::format("RoiAlign coordinate_transformation_mode '{}' is unknown", ctm));
  const int64_t oh = c.n.attrs.i("output_height", 1), ow = c.n.attrs.i("output_width", 1);
  const int64_t ratio = c.n.attrs.i("sampling_ratio", 0);
  if (oh < 1 || ow < 1 || oh > kMaxDim || ow > kMaxDim || ratio < 0 || ratio > kMaxDim)
    throw RuleError(
        fmt::format("RoiAlign output {}x{} must be positive and sampling_ratio {} not negative", oh, ow, ratio));
  int64_t boxes = box_count(c, 4);
  if (const Shape* b = c.shape(2)) {
    if (b->rank() != 1) throw RuleError(fmt::format("RoiAlign batch_indices {} are not [num_rois]", to_string(*b)));
    if (boxes >= 0 && b->dims[0] >= 0 && boxes != b->dims[0])
      throw RuleError(fmt::format("RoiAlign has {} rois but {} batch indices", boxes, b->dims[0]));
    if (boxes < 0) boxes = b->dims[0];
  }
  c.out(0, Shape{{boxes, x->dims[1], oh, ow}});
  return true;
}

// sampling_ratio s > 0: s x s bilinear samples per output bin (Resize's linear 9 each), then their average
// (s^2 - 1 adds and a divide) or maximum (s^2 - 1 comparisons); the box and bin coordinates per box (not per
// channel) are not counted. s = 0 samples ceil(box size / output size) points, which the box values decide: not
// costed. Backward: X gets the forward's count (each gradient spread with the same weights).
bool roi_align_cost(const CostContext& c, Cost& cost, std::string& reason) {
  const Count s = c.n.attrs.i("sampling_ratio", 0);
  if (s == 0) {
    reason = "RoiAlign with sampling_ratio 0 samples ceil(box size / output size) points per bin: the count "
             "depends on the box values";
    return false;
  }
  const bool avg = c.n.attrs.s("mode", "avg") == "avg";
  cost.flops = c.out_elems() * (9 * s * s + (avg ? s * s : s * s - 1));
  c.add_grad(c.n.inputs[0], cost.flops, cost);
  return true;
}

/// MaxRoiPool (X [N, C, H, W], rois [R, 5]) -> [R, C, pooled_shape].
bool max_roi_pool_infer(RuleContext& c) {
  const Shape* x = c.shape(0);
  if (!x) return false;
  if (x->rank() != 4) throw RuleError(fmt::format("MaxRoiPool needs an input [N, C, H, W], not {}", to_string(*x)));
  const auto pooled = c.n.attrs.ints("pooled_shape");
  if (pooled.size() != 2 || pooled[0] < 1 || pooled[1] < 1 || pooled[0] > kMaxDim || pooled[1] > kMaxDim)
    throw RuleError(fmt::format("MaxRoiPool pooled_shape [{}] is not two positive extents", fmt::join(pooled, ", ")));
  c.out(0, Shape{{box_count(c, 5), x->dims[1], pooled[0], pooled[1]}});
  return true;
}

// Each bin's maximum runs over the part of the box it covers: the box coordinates, which are data, decide the
// comparisons.
bool max_roi_pool_cost(const CostContext&, Cost&, std::string& reason) {
  reason = "MaxRoiPool compares over windows that the box coordinates decide: the count depends on the box values";
  return false;
}

}  // namespace

const OpRule rule_grid_sample{grid_sample_infer, grid_sample_cost};
const OpRule rule_roi_align{roi_align_infer, roi_align_cost};
const OpRule rule_max_roi_pool{max_roi_pool_infer, max_roi_pool_cost};

}  // namespace ridge::ops
