// Axis ranges, ticks and SI tick labels.
#include "report/charts/axes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace ridge::chart {

const std::vector<std::string>& palette() {
  // Okabe & Ito (2008), ordered for contrast on white: blue, vermillion, bluish green, orange, reddish purple,
  // sky blue, black, yellow (last: faint on white).
  static const std::vector<std::string> kPalette = {"#0072B2", "#D55E00", "#009E73", "#E69F00",
                                                    "#CC79A7", "#56B4E9", "#000000", "#F0E442"};
  return kPalette;
}

std::string tick_label(double v) {
  if (v == 0 || !std::isfinite(v)) return v == 0 ? "0" : fmt::format("{}", v);
  struct Prefix {
    double scale;
    const char* symbol;
  };
  static const Prefix kPrefixes[] = {{1e24, "Y"}, {1e21, "Z"}, {1e18, "E"}, {1e15, "P"}, {1e12, "T"},
                                     {1e9, "G"},  {1e6, "M"},  {1e3, "k"},  {1, ""},     {1e-3, "m"},
                                     {1e-6, "\u00b5"}, {1e-9, "n"}, {1e-12, "p"}, {1e-15, "f"}};
  const double a = std::fabs(v);
  // Between 0.001 and 1 a plain decimal reads better than a milli prefix: "0.1 FLOP/B", not "100m" (and an axis in
  // seconds would read "50m" as minutes).
  if (a < 0.9995 && a >= 0.9995e-3) return fmt::format("{:.3g}", v);
  const Prefix* p = &kPrefixes[std::size(kPrefixes) - 1];
  for (const Prefix& candidate : kPrefixes)
    if (a >= candidate.scale * 0.9995) {
      p = &candidate;
      break;
    }
  std::string digits = fmt::format("{:.3g}", v / p->scale);
  return digits + p->symbol;
}

namespace detail {

double AxisMap::operator()(double v) const {
  double t = scale == Scale::Log ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo))
                                 : (v - lo) / (hi - lo);
  return from + t * (to - from);
}

bool AxisMap::drawable(double v) const { return std::isfinite(v) && (scale == Scale::Linear || v > 0); }

namespace {

// The smallest 1-2-5 step giving at most `max_ticks` intervals over `span`.
double nice_step(double span, int max_ticks) {
  double raw = span / max_ticks;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * mag >= raw) return m * mag;
  return 10 * mag;
}

}  // namespace

std::pair<double, double> axis_range(const Axis& axis, double lo, double hi) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = hi = axis.scale == Scale::Log ? 1 : 0;
  if (axis.scale == Scale::Log) {
    if (lo <= 0) lo = hi > 0 ? hi / 10 : 1;
    if (hi <= 0) hi = lo * 10;
    double a = std::pow(10.0, std::floor(std::log10(lo) + 1e-9));
    double b = std::pow(10.0, std::ceil(std::log10(hi) - 1e-9));
    if (b <= a) b = a * 10;
    return {axis.min.value_or(a), axis.max.value_or(b)};
  }
  if (lo > 0 && lo < hi * 0.6) lo = 0;  // a positive quantity reads best from zero
  if (hi < 0 && hi > lo * 0.6) hi = 0;
  if (hi <= lo) {
    hi = lo == 0 ? 1 : lo + std::fabs(lo) * 0.5;
    lo = lo == 0 ? 0 : lo - std::fabs(lo) * 0.5;
  }
  double step = nice_step(hi - lo, 5);
  return {axis.min.value_or(std::floor(lo / step + 1e-9) * step), axis.max.value_or(std::ceil(hi / step - 1e-9) * step)};
}

std::vector<Tick> axis_ticks(const Axis& axis, double lo, double hi) {
  std::vector<Tick> ticks;
  if (!axis.ticks.empty()) {
    for (double v : axis.ticks)
      if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) ticks.push_back({v, tick_label(v), true});
    return ticks;
  }
  if (axis.scale == Scale::Log) {
    const int first = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
    const int last = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
    const int decades = last - first;
    const int every = decades > 16 ? 4 : decades > 8 ? 2 : 1;
    for (int e = first; e <= last; ++e) {
      double base = std::pow(10.0, e);
      bool labelled = (e - first) % every == 0;
      if (base >= lo * (1 - 1e-9) && base <= hi * (1 + 1e-9)) ticks.push_back({base, labelled ? tick_label(base) : "", true});
      for (int m = 2; m <= 9 && decades <= 8; ++m) {
        double v = base * m;
        if (v <= lo || v >= hi) continue;
        bool label_minor = decades < 3 && (m == 2 || m == 5);
        ticks.push_back({v, label_minor ? tick_label(v) : "", label_minor});
      }
    }
    return ticks;
  }
  double step = nice_step(hi - lo, 5);
  for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step)
    ticks.push_back({std::fabs(v) < step * 1e-9 ? 0.0 : v, tick_label(std::fabs(v) < step * 1e-9 ? 0.0 : v), true});
  return ticks;
}

std::string axis_title(const Axis& axis) {
  if (axis.unit.empty()) return axis.title;
  if (axis.title.empty()) return axis.unit;
  return axis.title + " (" + axis.unit + ")";
}

}  // namespace detail
}  // namespace ridge::chart
