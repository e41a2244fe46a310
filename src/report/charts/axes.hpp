// Internal to the chart renderer: value-to-pixel mapping and tick placement for one axis.
#pragma once
#include <string>
#include <vector>

#include "ridge/chart.hpp"

namespace ridge::chart::detail {

/// Maps data values on one axis to pixels: [lo, hi] (data) -> [from, to] (pixels), linear or log10.
struct AxisMap {
  Scale scale = Scale::Linear;
  double lo = 0, hi = 1;      ///< data range drawn
  double from = 0, to = 1;    ///< pixel range (to < from for a y axis)

  double operator()(double v) const;
  /// False for values a log axis cannot show (<= 0) and for NaN/inf.
  bool drawable(double v) const;
};

/// A tick: its value, its label and whether it is a major (labelled) tick or a minor grid line.
struct Tick {
  double value;
  std::string label;
  bool major;
};

/// The data range an axis shows for values in [data_lo, data_hi]: log axes round out to decades, linear
/// axes to 1-2-5 steps and include 0 when the data is positive and near it. Fixed min/max win.
std::pair<double, double> axis_range(const Axis& axis, double data_lo, double data_hi);
/// Ticks for an axis over [lo, hi]: explicit ticks, or decades (every k-th decade when many; 2 and 5 between
/// when fewer than three), or linear 1-2-5 steps.
std::vector<Tick> axis_ticks(const Axis& axis, double lo, double hi);
/// "Title (unit)", or the title alone.
std::string axis_title(const Axis& axis);

}  // namespace ridge::chart::detail
