// The standard charts (roofline, sweep, per-layer shares, estimated vs measured) built from plain numbers.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <numeric>

#include "ridge/chart.hpp"

namespace ridge::chart {
namespace {

double decade_floor(double v) { return std::pow(10.0, std::floor(std::log10(v))); }
double decade_ceil(double v) { return std::pow(10.0, std::ceil(std::log10(v))); }

// An SI prefix joins a unit symbol ("4.2GFLOP"), a bare number takes a space ("512 FLOP"), and so does a unit that
// is a word or a count rate ("4.53k samples/s", never "4.53ksamples/s").
std::string with_unit(double v, const std::string& unit) {
  // Bytes and seconds as the tables print them: "180 MiB" (binary, as every memory figure), "1.07 ms".
  if (unit == "B") return report::format_bytes(v);
  if (unit == "s") return report::format_seconds(v);
  const std::string label = tick_label(v);
  if (unit.empty()) return label;
  const bool prefixed = !label.empty() && !std::isdigit(static_cast<unsigned char>(label.back()));
  const bool symbol = std::isupper(static_cast<unsigned char>(unit.front())) || unit == "s";
  return prefixed && symbol ? label + unit : label + " " + unit;
}

// Explicit ticks at the data's x values when there are few of them (batch sizes 1, 2, 4, ... 256).
std::vector<double> few_distinct(const std::vector<SweepSeries>& series, size_t max_count) {
  std::vector<double> xs;
  for (const auto& s : series)
    for (const auto& [x, y] : s.xy) xs.push_back(x);
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  return xs.size() <= max_count ? xs : std::vector<double>{};
}

}  // namespace

Chart roofline_chart(const std::string& title, const std::vector<RoofDevice>& devices,
                     const std::vector<RoofPoint>& points, int label_top) {
  Chart c;
  c.title = title;
  c.x = {"Arithmetic intensity", "FLOP/B", Scale::Log};
  c.y = {"Performance", "FLOP/s", Scale::Log};
  c.legend_ceilings = devices.size() > 1;  // one device: every ceiling is labelled on its line
  double x_lo = INFINITY, x_hi = -INFINITY, y_lo = INFINITY;
  const bool one_device = devices.size() == 1;
  for (size_t d = 0; d < devices.size(); ++d) {
    const RoofDevice& dev = devices[d];
    const std::string prefix = one_device ? "" : dev.name + " ";
    double peak = 0;
    // Precisions with the same peak (BF16 and FP16 on tensor cores) share one line and one label.
    std::vector<std::pair<std::string, double>> roofs;
    for (const auto& [name, rate] : dev.compute_flops_per_s) {
      auto same = std::find_if(roofs.begin(), roofs.end(), [&](const auto& r) { return r.second == rate; });
      if (same != roofs.end()) same->first += "/" + name;
      else roofs.push_back({name, rate});
    }
    for (size_t k = 0; k < roofs.size(); ++k) {
      const auto& [name, rate] = roofs[k];
      c.ceilings.push_back({fmt::format("{}{} {}", prefix, name, with_unit(rate, "FLOP/s")), rate, 0, std::nullopt,
                            static_cast<int>(d), static_cast<int>(k % 4)});
      peak = std::max(peak, rate);
      y_lo = std::min(y_lo, rate / 1000);
    }
    for (size_t k = 0; k < dev.memory_bytes_per_s.size(); ++k) {
      const auto& [name, bw] = dev.memory_bytes_per_s[k];
      c.ceilings.push_back({fmt::format("{}{} {}", prefix, name, with_unit(bw, "B/s")), 0, bw,
                            peak > 0 ? std::optional<double>(peak) : std::nullopt, static_cast<int>(d), static_cast<int>(k % 4)});
    }
    if (!dev.compute_flops_per_s.empty() && !dev.memory_bytes_per_s.empty() && dev.memory_bytes_per_s[0].second > 0) {
      double rate = dev.compute_flops_per_s[0].second, ridge = rate / dev.memory_bytes_per_s[0].second;
      c.markers.push_back({ridge, rate, fmt::format("ridge {} FLOP/B", tick_label(ridge)), static_cast<int>(d)});
      x_lo = std::min(x_lo, ridge / 10), x_hi = std::max(x_hi, ridge * 10);
    }
  }
  std::map<std::string, size_t> series_of;
  for (const RoofPoint& p : points) {
    auto [it, added] = series_of.try_emplace(p.series, c.series.size());
    if (added) {
      Series s{p.series, Mark::Points};
      s.colour = static_cast<int>(devices.size() + c.series.size());
      s.label_points = label_top;
      s.hollow = !p.achieved;
      c.series.push_back(std::move(s));
    }
    std::string tip = p.tip.empty() ? fmt::format("{}\nintensity: {} FLOP/B\nperformance: {} FLOP/s", p.label,
                                                  tick_label(p.intensity_flop_per_byte), tick_label(p.flops_per_s))
                                    : p.tip;
    c.series[it->second].points.push_back({p.intensity_flop_per_byte, p.flops_per_s, p.label, std::move(tip), p.row});
    if (p.intensity_flop_per_byte > 0 && p.flops_per_s > 0) {
      x_lo = std::min(x_lo, p.intensity_flop_per_byte), x_hi = std::max(x_hi, p.intensity_flop_per_byte);
      y_lo = std::min(y_lo, p.flops_per_s);
    }
  }
  // Show the slopes: at least from a tenth of the ridge point to ten times it, and three decades below the peak.
  if (std::isfinite(x_lo)) c.x.min = decade_floor(x_lo), c.x.max = decade_ceil(x_hi);
  if (std::isfinite(y_lo)) c.y.min = decade_floor(y_lo);
  return c;
}

void share_y_range(std::vector<Chart>& charts) {
  std::optional<double> lo, hi;
  for (const Chart& c : charts) {
    if (c.y.min) lo = lo ? std::min(*lo, *c.y.min) : *c.y.min;
    if (c.y.max) hi = hi ? std::max(*hi, *c.y.max) : *c.y.max;
    for (const auto& s : c.series)
      for (const auto& p : s.points)
        if (std::isfinite(p.y) && (p.y > 0 || c.y.scale == Scale::Linear)) {
          lo = lo ? std::min(*lo, p.y) : p.y;
          hi = hi ? std::max(*hi, p.y) : p.y;
        }
    for (const auto& ceiling : c.ceilings)
      if (ceiling.slope == 0) hi = hi ? std::max(*hi, ceiling.level) : ceiling.level;
  }
  if (!lo || !hi) return;
  for (Chart& c : charts) {
    c.y.min = c.y.scale == Scale::Log ? decade_floor(*lo) : *lo;
    c.y.max = c.y.scale == Scale::Log ? decade_ceil(*hi) : *hi;
  }
}

Chart sweep_chart(const std::string& title, const Axis& x, const Axis& y, const std::vector<SweepSeries>& series,
                  const std::vector<SweepLimit>& limits) {
  Chart c;
  c.title = title;
  c.x = x;
  c.y = y;
  double x_lo = INFINITY, x_hi = 0, y_lo = INFINITY, y_hi = 0;
  for (const auto& s : series)
    for (const auto& [vx, vy] : s.xy) {
      x_lo = std::min(x_lo, vx), x_hi = std::max(x_hi, vx);
      y_lo = std::min(y_lo, vy), y_hi = std::max(y_hi, vy);
    }
  if (x_lo > 0 && x_hi >= 10 * x_lo) {
    c.x.scale = Scale::Log;
    if (y_lo > 0) c.y.scale = Scale::Log;
  }
  if (c.x.ticks.empty()) c.x.ticks = few_distinct(series, 12);
  if (!c.x.ticks.empty() && c.x.scale == Scale::Log) {  // hug the data instead of rounding out to decades
    c.x.min = c.x.min.value_or(c.x.ticks.front() / 1.25);
    c.x.max = c.x.max.value_or(c.x.ticks.back() * 1.25);
  }
  for (const auto& s : series) {
    Series out{s.name, Mark::LinePoints};
    out.dashed = !s.measured;
    for (const auto& [vx, vy] : s.xy)
      out.points.push_back({vx, vy, "", fmt::format("{}\n{} {}: {}", s.name, x.title, tick_label(vx), with_unit(vy, y.unit))});
    c.series.push_back(std::move(out));
  }
  for (const auto& l : limits) c.ceilings.push_back({l.label, l.value, 0, std::nullopt, -1, 2});
  return c;
}

Chart layer_share_chart(const std::string& title, const LayerShares& shares, int top) {
  Chart c;
  c.title = title;
  c.kind = Kind::Bars;
  c.x = {"Share of the model's total", "%", Scale::Linear};
  const size_t n_layers = shares.layers.size();
  std::vector<double> totals;
  for (size_t m = 0; m < shares.metrics.size(); ++m) {
    double t = 0;
    for (size_t l = 0; l < n_layers && l < shares.values[m].size(); ++l)
      if (std::isfinite(shares.values[m][l])) t += shares.values[m][l];
    totals.push_back(t);
    if (t <= 0) c.notes.push_back(fmt::format("{}: no values to share out", shares.metrics[m]));
  }
  auto value = [&](size_t m, size_t l) { return l < shares.values[m].size() ? shares.values[m][l] : NAN; };
  std::vector<size_t> order(n_layers);
  std::iota(order.begin(), order.end(), 0);
  if (!shares.metrics.empty())
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      double va = value(0, a), vb = value(0, b);
      return (std::isfinite(va) ? va : -1) > (std::isfinite(vb) ? vb : -1);
    });
  const size_t shown = std::min(n_layers, static_cast<size_t>(std::max(top, 1)));
  const size_t rest = n_layers - shown;
  for (size_t i = 0; i < shown; ++i) c.categories.push_back(shares.layers[order[i]]);
  if (rest > 0) {
    c.categories.push_back(fmt::format("other ({} layers)", rest));
    c.notes.push_back(fmt::format("the {} largest layers by {} are shown; {} more are summed into 'other'", shown,
                                  shares.metrics.front(), rest));
  }
  for (size_t m = 0; m < shares.metrics.size(); ++m) {
    Series s{shares.metrics[m], Mark::Bars};
    auto add = [&](double category, const std::string& name, double v, int row) {
      double pct = totals[m] > 0 && std::isfinite(v) ? 100.0 * v / totals[m] : NAN;
      const std::string unit = m < shares.units.size() ? shares.units[m] : "";
      s.points.push_back({category, pct, name, fmt::format("{}\n{}: {:.1f}% ({})", name, shares.metrics[m], pct, with_unit(v, unit)), row});
    };
    for (size_t i = 0; i < shown; ++i) add(static_cast<double>(i), shares.layers[order[i]], value(m, order[i]), static_cast<int>(order[i]));
    if (rest > 0) {
      double sum = 0;
      bool any = false;
      for (size_t i = shown; i < n_layers; ++i)
        if (std::isfinite(value(m, order[i]))) sum += value(m, order[i]), any = true;
      add(static_cast<double>(shown), c.categories.back(), any ? sum : NAN, -1);
    }
    c.series.push_back(std::move(s));
  }
  return c;
}

LayerShares layer_shares_from_table(const report::Table& table, const std::string& name_key,
                                    const std::vector<std::pair<std::string, std::string>>& metrics) {
  LayerShares out;
  const int name_col = table.column(name_key);
  std::vector<int> cols;
  for (const auto& [key, title] : metrics) {
    cols.push_back(table.column(key));
    out.metrics.push_back(title);
    out.values.emplace_back();
    const report::Unit u = cols.back() >= 0 ? table.columns[static_cast<size_t>(cols.back())].unit : report::Unit::None;
    out.units.emplace_back(report::unit_symbol(u));
  }
  for (size_t r = 0; r < table.rows.size(); ++r) {
    if (std::find(table.total_rows.begin(), table.total_rows.end(), static_cast<int>(r)) != table.total_rows.end()) continue;
    const auto& row = table.rows[r];
    auto* name = name_col >= 0 ? std::get_if<std::string>(&row[name_col].value) : nullptr;
    out.layers.push_back(name ? *name : fmt::format("row {}", r));
    for (size_t m = 0; m < cols.size(); ++m) {
      double v = NAN;
      if (cols[m] >= 0) {
        const auto& cell = row[cols[m]].value;
        if (auto* n = std::get_if<Count>(&cell)) v = to_double(*n);
        else if (auto* d = std::get_if<double>(&cell)) v = *d;
      }
      out.values[m].push_back(v);
    }
  }
  return out;
}

Chart scatter_chart(const std::string& title, const Axis& estimated_axis, const Axis& measured_axis,
                    const std::vector<EstimateVsMeasured>& points, int label_top) {
  Chart c;
  c.title = title;
  c.x = estimated_axis;
  c.y = measured_axis;
  c.x.scale = c.y.scale = Scale::Log;
  Series s{"layers", Mark::Points};
  s.label_points = label_top;
  double lo = INFINITY, hi = 0;
  for (const auto& p : points) {
    double ratio = p.estimated > 0 ? p.measured / p.estimated : NAN;
    s.points.push_back({p.estimated, p.measured, p.label,
                        fmt::format("{}\nestimated: {}\nmeasured: {}\nmeasured / estimated: {:.3g}", p.label,
                                    with_unit(p.estimated, c.x.unit), with_unit(p.measured, c.y.unit), ratio),
                        p.row});
    for (double v : {p.estimated, p.measured})
      if (v > 0 && std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  c.series.push_back(std::move(s));
  c.ceilings.push_back({"y = x (estimate exact)", 0, 1.0, std::nullopt, -1, 1});
  if (std::isfinite(lo)) {  // same range on both axes so that y = x is the diagonal
    c.x.min = c.y.min = decade_floor(lo);
    c.x.max = c.y.max = std::max(decade_ceil(hi), decade_floor(lo) * 10);
  }
  return c;
}

}  // namespace ridge::chart
