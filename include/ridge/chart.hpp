// Charts and the HTML report, from plain values. A Chart is a description (axes, series of points, ceilings);
// render_svg() draws it; write_chart() writes SVG or PNG by the file's extension. Builders turn the usual
// questions (roofline, batch sweep, per-layer shares, estimated vs measured) into Charts, so that commands
// only gather numbers. render_html() lays a ReportData (document blocks + charts) out as one self-contained page.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "ridge/report.hpp"

namespace ridge::chart {

/// How an axis maps values to positions.
enum class Scale : uint8_t { Linear, Log };

/// One axis: its title and unit (shown as "Title (unit)"), scale and optional fixed range and ticks.
struct Axis {
  std::string title{};            ///< "Arithmetic intensity"
  std::string unit{};             ///< "FLOP/B"; tick labels carry SI prefixes (1k, 10M, 1G)
  Scale scale = Scale::Linear;
  std::optional<double> min{};    ///< fixed lower bound (default: from the data)
  std::optional<double> max{};    ///< fixed upper bound
  std::vector<double> ticks{};    ///< explicit tick positions (default: log decades or 1-2-5 steps)
};

/// One data point. `label` is drawn beside the point when its series labels points; `tip` is the text shown
/// on hover (an SVG <title>); `row` links the point to a table row in the HTML report (-1: none).
struct Point {
  double x = 0;
  double y = 0;
  std::string label{};
  std::string tip{};
  int row = -1;
};

/// How a series is drawn.
enum class Mark : uint8_t { Points, Line, LinePoints, Bars };

/// A named set of points drawn in one colour and marker shape (the legend shows `name`).
struct Series {
  std::string name{};
  Mark mark = Mark::Points;
  std::vector<Point> points{};
  int colour = -1;          ///< index into the palette (-1: next free colour)
  bool dashed = false;      ///< dashed line (e.g. estimated next to measured)
  int label_points = 0;     ///< draw at most this many point labels (largest y first), skipping overlaps
  bool hollow = false;      ///< markers drawn as outlines (estimates), filled otherwise (measurements)
};

/// A reference line: y = level (horizontal, slope == 0) or y = slope * x (through the origin of a log-log
/// plot's diagonal), optionally capped at y <= cap. Roofline compute and memory ceilings, the y = x line.
struct Ceiling {
  std::string label{};       ///< drawn along the line ("A100 FP16 312 TFLOP/s")
  double level = 0;        ///< y of a horizontal line
  double slope = 0;        ///< y per x of a sloped line (0: horizontal)
  std::optional<double> cap{};  ///< a sloped line stops rising at this y (the roofline's ridge)
  int colour = -1;         ///< palette index (-1: grey)
  int dash = 0;            ///< dash style: 0 solid, 1 dashed, 2 dotted, 3 dash-dot
};

/// A marked position with a label, e.g. the ridge point where a memory ceiling meets the compute ceiling.
struct Marker {
  double x = 0;
  double y = 0;
  std::string label{};
  int colour = -1;
};

/// Whether points sit on numeric x positions or on named categories (bars, one group per category).
enum class Kind : uint8_t { XY, Bars };

/// A complete chart. For Kind::Bars, `categories` name the bars (drawn horizontally, top to bottom) and each
/// series gives one value per category as points with x = category index and y = value.
struct Chart {
  std::string title{};
  Kind kind = Kind::XY;
  Axis x{};
  Axis y{};
  std::vector<Series> series{};
  std::vector<Ceiling> ceilings{};
  std::vector<Marker> markers{};
  std::vector<std::string> categories{};
  std::vector<std::string> notes{};  ///< shown under the plot ("3 layers without time are not drawn")
  bool legend_ceilings = true;  ///< list the ceilings in the legend too (off where their labels on the lines suffice)
  bool stacked = false;  ///< Kind::Bars: one bar per category with the series stacked end to end; markers are
                         ///< drawn as labelled vertical lines at their x (a capacity limit)
};

/// The colour-blind-safe palette (Okabe & Ito), most distinct first, as "#rrggbb".
const std::vector<std::string>& palette();

/// Tick label for an axis value with an SI prefix: 1e9 -> "1G", 0.001 -> "1m", 2500 -> "2.5k".
std::string tick_label(double v);

/// Draws a chart as a standalone SVG document (or an inline <svg> element when `inline_svg`).
std::string render_svg(const Chart& chart, bool inline_svg = false);
/// Draws several charts side by side (e.g. one roofline per device) in one SVG.
std::string render_svg_row(const std::vector<Chart>& charts, bool inline_svg = false);

/// Writes charts to `path`: ".svg" as SVG; ".png" through rsvg-convert (Debian package librsvg2-bin).
/// Several charts are drawn side by side. Throws ridge::Error naming the file (unknown extension, missing
/// converter, unwritable path).
void write_chart(const Chart& chart, const std::string& path);
/// Throws ridge::UsageError naming `path` unless it ends in .svg or .png (call it before slow work).
void check_chart_path(const std::string& path);
void write_charts(const std::vector<Chart>& charts, const std::string& path);

// ---- builders: the standard charts from plain numbers ----------------------------------------------------

/// One device's roofs for a roofline chart. The first compute and first memory ceiling define the ridge
/// point (list the headline precision and DRAM first).
struct RoofDevice {
  std::string name{};                                            ///< "A100-SXM4-40GB"
  std::vector<std::pair<std::string, double>> compute_flops_per_s{};  ///< ("FP32", 19.5e12), ("FP16 tensor", 312e12)
  std::vector<std::pair<std::string, double>> memory_bytes_per_s{};   ///< ("HBM2", 1.555e12), ("L2", 5e12)
};

/// A point on a roofline: a layer or a whole model at its arithmetic intensity and achieved (or predicted)
/// rate, grouped into series by `series` (e.g. "estimated", "measured", or the device name).
struct RoofPoint {
  std::string series{};
  std::string label{};       ///< layer or model name
  double intensity_flop_per_byte = 0;
  double flops_per_s = 0;
  std::string tip{};         ///< hover text (defaults to label, intensity and rate)
  int row = -1;            ///< table row in the HTML report
  bool achieved = false;   ///< measured (filled marker) rather than estimated (hollow marker)
};

/// Log-log roofline: compute ceilings per precision (one dash style each), memory ceilings per level, the
/// ridge point of each device marked, points labelled (the `label_top` highest). Devices share one chart.
Chart roofline_chart(const std::string& title, const std::vector<RoofDevice>& devices,
                     const std::vector<RoofPoint>& points, int label_top = 12);

/// Gives every chart the union of their y ranges (side-by-side rooflines read against one scale).
void share_y_range(std::vector<Chart>& charts);

/// One series of a sweep: values against batch size (or any x).
struct SweepSeries {
  std::string name{};                                 ///< "FLOPs (estimated)"
  std::vector<std::pair<double, double>> xy{};        ///< (batch, value)
  bool measured = false;                            ///< measured series are solid with markers; estimates dashed
};
/// A horizontal limit line on a sweep chart ("a100-sxm4-40gb memory 40 GiB").
struct SweepLimit {
  std::string label{};
  double value = 0;
};

/// A sweep chart (log-log when the x values span more than a decade): one line per series.
Chart sweep_chart(const std::string& title, const Axis& x, const Axis& y, const std::vector<SweepSeries>& series,
                  const std::vector<SweepLimit>& limits = {});

/// Per-layer shares: for each layer its values of several metrics (FLOPs, params, memory, time), drawn as
/// grouped horizontal bars of percent of each metric's total. Keeps the `top` layers by the first metric and
/// sums the rest into one "other (N layers)" bar.
struct LayerShares {
  std::vector<std::string> layers{};
  std::vector<std::string> metrics{};                 ///< "FLOPs", "params", "memory", "time"
  std::vector<std::vector<double>> values{};          ///< values[metric][layer]; NaN = unknown (not drawn)
  std::vector<std::string> units{};                   ///< units[metric] for the tooltips ("s", "B", "FLOP"; "": none)
};
Chart layer_share_chart(const std::string& title, const LayerShares& shares, int top = 15);
/// Shares from a per-layer report table: layer names from column `name_key`, one metric per (column key, title);
/// total rows are skipped and empty or text cells become NaN (unknown).
LayerShares layer_shares_from_table(const report::Table& table, const std::string& name_key,
                                    const std::vector<std::pair<std::string, std::string>>& metrics);

/// Estimated against measured values (one point per layer) with the y = x line; log-log.
struct EstimateVsMeasured {
  std::string label{};
  double estimated = 0;
  double measured = 0;
  int row = -1;
};
Chart scatter_chart(const std::string& title, const Axis& estimated_axis, const Axis& measured_axis,
                    const std::vector<EstimateVsMeasured>& points, int label_top = 8);

// ---- html report -------------------------------------------------------------------------------------------

/// One section of the report: text paragraphs, document blocks (tables become sortable HTML tables) and
/// charts. The id is the anchor ("summary", "layers", ...).
struct ReportSection {
  std::string id{};
  std::string title{};
  std::vector<std::string> paragraphs{};
  std::vector<report::Block> blocks{};
  std::vector<Chart> charts{};
  bool charts_side_by_side = false;  ///< draw all charts as one row (e.g. one roofline per device)
  bool charts_in_grid = false;       ///< draw charts two to a row, each scaled to half the width (sweeps)
  /// Layer tables (those with this column) are drawn as one collapsible <details> group per value of the column,
  /// in order of first appearance, each summary showing the sums of `group_totals` (column keys).
  std::string group_by{};
  std::vector<std::string> group_totals{};
  bool headline = false;  ///< the first screen: tables and fields drawn large, charts in a row under them
};

/// Everything the HTML report shows, in order. Notes are listed at the end ("not costed: 2 NonMaxSuppression").
struct ReportData {
  std::string title{};
  std::vector<std::string> subtitle{};  ///< lines under the title (model, batch, devices, ridge version)
  std::vector<ReportSection> sections{};
  std::vector<std::string> notes{};
};

/// The whole report as one self-contained HTML page (inline CSS, SVG and a small script; no network).
std::string render_html(const ReportData& data);
/// Writes render_html() to `path` atomically. Throws ridge::Error naming the file.
void write_html(const ReportData& data, const std::string& path);

}  // namespace ridge::chart
