// SVG drawing of XY charts (points, lines, ceilings, markers) and horizontal grouped bar charts.
// Layout: title on top, plot area, tick labels and axis titles around it, the legend outside on the right
// (so it never hides points), notes below.
#include "report/charts/svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "report/charts/axes.hpp"

namespace ridge::chart::detail {
namespace {

// Look: sizes in px, chosen to stay legible when the SVG is shown at its natural size or pasted in a paper.
struct Style {
  static constexpr const char* font = "DejaVu Sans, Helvetica, Arial, sans-serif";
  static constexpr double title_px = 16, axis_px = 13, tick_px = 12, legend_px = 12, label_px = 10.5;
  static constexpr double plot_w = 520, plot_h = 340, pad = 12, marker_r = 4;
  static constexpr double bar_h = 9, bar_gap = 7;
  static constexpr const char* grid = "#dddddd", *minor_grid = "#f0f0f0", *frame = "#444444", *ink = "#222222";
};

constexpr const char* kDash[] = {"", "7 4", "2 3", "8 3 2 3"};
// A white outline drawn under a label's glyphs, so that a label stays legible where a roof or grid line crosses it.
constexpr const char* kHalo = " stroke=\"white\" stroke-width=\"3\" stroke-linejoin=\"round\" paint-order=\"stroke\"";

double text_width(const std::string& s, double px) {
  size_t chars = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++chars;
  return static_cast<double>(chars) * px * 0.6;
}

std::string shorten(const std::string& s, size_t max_chars) {
  if (s.size() <= max_chars) return s;
  return s.substr(0, max_chars - 1) + "\u2026";
}

std::string colour_of(int index) {
  if (index < 0) return "#777777";
  return palette()[static_cast<size_t>(index) % palette().size()];
}

// Marker shapes, one per series, so that series differ without colour too.
std::string marker_path(int shape, double x, double y, double r) {
  switch (shape % 5) {
    case 0: return fmt::format("M{:.1f},{:.1f}m-{:.1f},0a{:.1f},{:.1f} 0 1,0 {:.1f},0a{:.1f},{:.1f} 0 1,0 -{:.1f},0", x, y, r, r, r, 2 * r, r, r, 2 * r);
    case 1: return fmt::format("M{:.1f},{:.1f}h{:.1f}v{:.1f}h-{:.1f}z", x - r, y - r, 2 * r, 2 * r, 2 * r);
    case 2: return fmt::format("M{:.1f},{:.1f}L{:.1f},{:.1f}L{:.1f},{:.1f}z", x, y - 1.2 * r, x + 1.1 * r, y + 0.8 * r, x - 1.1 * r, y + 0.8 * r);
    case 3: return fmt::format("M{:.1f},{:.1f}L{:.1f},{:.1f}L{:.1f},{:.1f}L{:.1f},{:.1f}z", x, y - 1.3 * r, x + 1.3 * r, y, x, y + 1.3 * r, x - 1.3 * r, y);
    default: return fmt::format("M{:.1f},{:.1f}L{:.1f},{:.1f}L{:.1f},{:.1f}z", x, y + 1.2 * r, x + 1.1 * r, y - 0.8 * r, x - 1.1 * r, y - 0.8 * r);
  }
}

struct Box {
  double x0, y0, x1, y1;
  bool overlaps(const Box& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
};

// An entry of the legend: a swatch (line and/or marker, or a filled block) and its text.
struct LegendEntry {
  std::string text;
  std::string colour;
  int dash = -1;    // line swatch with this dash style; -1: no line
  int shape = -1;   // marker swatch; -1: none
  bool block = false;
  bool hollow = false;
};

class Svg {
 public:
  std::string out;

  void text(double x, double y, const std::string& s, double px, const char* anchor = "start",
            const std::string& extra = "") {
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"{}\" text-anchor=\"{}\"{}>{}</text>\n", x, y, px,
                       anchor, extra, xml_escape(s));
  }
  void line(double x0, double y0, double x1, double y1, const std::string& stroke, double width, int dash = 0,
            const std::string& extra = "") {
    out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"{}\"{}{}/>\n",
                       x0, y0, x1, y1, stroke, width, dash > 0 ? fmt::format(" stroke-dasharray=\"{}\"", kDash[dash % 4]) : "",
                       extra);
  }

  // The legend at (x, y); returns its height.
  double legend(double x, double y, const std::vector<LegendEntry>& entries) {
    const double row = Style::legend_px + 8;
    for (size_t i = 0; i < entries.size(); ++i) {
      const LegendEntry& e = entries[i];
      double cy = y + row * static_cast<double>(i) + row / 2;
      if (e.block)
        out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"22\" height=\"10\" fill=\"{}\"/>\n", x, cy - 5, e.colour);
      if (e.dash >= 0) line(x, cy, x + 22, cy, e.colour, 2, e.dash);
      if (e.shape >= 0)
        out += fmt::format("<path d=\"{}\" fill=\"{}\" stroke=\"{}\" stroke-width=\"1.2\"/>\n",
                           marker_path(e.shape, x + 11, cy, Style::marker_r), e.hollow ? "white" : e.colour, e.colour);
      text(x + 28, cy + Style::legend_px * 0.35, shorten(e.text, 48), Style::legend_px);
    }
    return row * static_cast<double>(entries.size());
  }
};

double legend_width(const std::vector<LegendEntry>& entries) {
  double w = 0;
  for (const auto& e : entries) w = std::max(w, 28 + text_width(shorten(e.text, 48), Style::legend_px));
  return w;
}

// Everything around a plot area: frame, grid, ticks, axis titles, title, legend, notes. Returns the size.
struct Frame {
  double left, top, plot_w, plot_h;
};

void draw_title_and_notes(Svg& svg, const Chart& chart, const Frame& f, double width, double bottom_y,
                          const std::vector<std::string>& notes) {
  if (!chart.title.empty()) {  // centred over the plot, moved left as far as needed to stay inside the chart
    const double half = text_width(chart.title, Style::title_px) / 2;
    const double x = std::max(Style::pad + half, std::min(f.left + f.plot_w / 2, width - Style::pad - half));
    svg.text(x, Style::pad + Style::title_px, chart.title, Style::title_px, "middle", " font-weight=\"bold\"");
  }
  for (size_t i = 0; i < notes.size(); ++i)
    svg.text(Style::pad, bottom_y + 14 + 16 * static_cast<double>(i), shorten(notes[i], static_cast<size_t>(width / 6.5)),
             Style::tick_px - 1, "start", " fill=\"#555555\" class=\"note\"");
}

void draw_y_ticks(Svg& svg, const AxisMap& map, const std::vector<Tick>& ticks, const Frame& f) {
  for (const Tick& t : ticks) {
    double y = map(t.value);
    svg.line(f.left, y, f.left + f.plot_w, y, t.major ? Style::grid : Style::minor_grid, 1);
    if (t.label.empty()) continue;
    svg.line(f.left - 5, y, f.left, y, Style::frame, 1);
    svg.text(f.left - 8, y + Style::tick_px * 0.35, t.label, Style::tick_px, "end", " class=\"tick\"");
  }
}

void draw_x_ticks(Svg& svg, const AxisMap& map, const std::vector<Tick>& ticks, const Frame& f) {
  double bottom = f.top + f.plot_h;
  // Labels that would touch a neighbour are left out (their grid line stays): batch ticks 1, 33, ..., 257 on a log
  // axis crowd at the right. The last label is always kept, then labels from the left that clear it and each other.
  auto span = [&](const Tick& t) {
    const double x = map(t.value), half = text_width(t.label, Style::tick_px) / 2 + 3;
    return std::pair{x - half, x + half};
  };
  size_t last = ticks.size();
  for (size_t i = 0; i < ticks.size(); ++i)
    if (!ticks[i].label.empty()) last = i;
  double right_of_kept = -1e300;
  for (size_t i = 0; i < ticks.size(); ++i) {
    const Tick& t = ticks[i];
    double x = map(t.value);
    svg.line(x, f.top, x, bottom, t.major ? Style::grid : Style::minor_grid, 1);
    if (t.label.empty()) continue;
    const auto [x0, x1] = span(t);
    if (i != last && (x0 < right_of_kept || x1 > span(ticks[last]).first)) continue;
    right_of_kept = x1;
    svg.line(x, bottom, x, bottom + 5, Style::frame, 1);
    svg.text(x, bottom + 8 + Style::tick_px, t.label, Style::tick_px, "middle", " class=\"tick\"");
  }
}

double widest_label(const std::vector<Tick>& ticks) {
  double w = 0;
  for (const Tick& t : ticks) w = std::max(w, text_width(t.label, Style::tick_px));
  return w;
}

std::string point_title(const Point& p, const Chart& chart) {
  if (!p.tip.empty()) return p.tip;
  std::string head = p.label.empty() ? "" : p.label + ": ";
  return head + axis_title(chart.x) + " " + tick_label(p.x) + ", " + axis_title(chart.y) + " " + tick_label(p.y);
}

std::string row_attr(int row) { return row >= 0 ? fmt::format(" data-row=\"{}\"", row) : ""; }

// Colours: series and ceilings with colour -1 take the next palette entry not explicitly used.
std::vector<int> assign_colours(const std::vector<Series>& series) {
  std::vector<int> out;
  std::vector<bool> used(palette().size(), false);
  for (const auto& s : series)
    if (s.colour >= 0) used[static_cast<size_t>(s.colour) % used.size()] = true;
  size_t next = 0;
  for (const auto& s : series) {
    if (s.colour >= 0) {
      out.push_back(s.colour);
      continue;
    }
    while (next < used.size() - 1 && used[next]) ++next;
    out.push_back(static_cast<int>(next));
    used[next] = true;
  }
  return out;
}

Drawn draw_xy(const Chart& chart, const std::string& id) {
  // Data ranges over everything drawable; values a log axis cannot show are counted, never silently dropped.
  AxisMap xm{chart.x.scale}, ym{chart.y.scale};
  double x_lo = INFINITY, x_hi = -INFINITY, y_lo = INFINITY, y_hi = -INFINITY;
  int hidden = 0;
  auto take = [&](double x, double y) {
    if (!xm.drawable(x) || !ym.drawable(y)) return false;
    x_lo = std::min(x_lo, x), x_hi = std::max(x_hi, x), y_lo = std::min(y_lo, y), y_hi = std::max(y_hi, y);
    return true;
  };
  for (const auto& s : chart.series)
    for (const auto& p : s.points) hidden += take(p.x, p.y) ? 0 : 1;
  for (const auto& m : chart.markers) take(m.x, m.y);
  for (const auto& c : chart.ceilings)
    if (c.slope == 0 && ym.drawable(c.level)) y_lo = std::min(y_lo, c.level), y_hi = std::max(y_hi, c.level);
  std::tie(xm.lo, xm.hi) = axis_range(chart.x, x_lo, x_hi);
  std::tie(ym.lo, ym.hi) = axis_range(chart.y, y_lo, y_hi);
  const std::vector<Tick> xt = axis_ticks(chart.x, xm.lo, xm.hi), yt = axis_ticks(chart.y, ym.lo, ym.hi);

  std::vector<std::string> notes = chart.notes;
  if (hidden > 0)
    notes.push_back(fmt::format("{} point{} with a value a log axis cannot show (zero, negative or unknown) not drawn",
                                hidden, hidden == 1 ? "" : "s"));

  const std::vector<int> colours = assign_colours(chart.series);
  std::vector<LegendEntry> legend;
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const Series& s = chart.series[i];
    bool has_line = s.mark == Mark::Line || s.mark == Mark::LinePoints;
    bool has_marker = s.mark != Mark::Line;
    legend.push_back({s.name, colour_of(colours[i]), has_line ? (s.dashed ? 1 : 0) : -1,
                      has_marker ? static_cast<int>(i) : -1, false, s.hollow});
  }
  if (chart.legend_ceilings)
    for (const auto& c : chart.ceilings) legend.push_back({c.label, colour_of(c.colour), c.dash, -1});
  if (!chart.markers.empty()) legend.push_back({"ridge point", "#444444", -1, 3, false, true});

  Frame f{Style::pad + Style::axis_px + 10 + widest_label(yt) + 10, Style::pad + (chart.title.empty() ? 4 : Style::title_px + 14),
          Style::plot_w, Style::plot_h};
  xm.from = f.left, xm.to = f.left + f.plot_w;
  ym.from = f.top + f.plot_h, ym.to = f.top;
  const double legend_x = f.left + f.plot_w + 20;
  const double width = std::max(legend_x + legend_width(legend), text_width(chart.title, Style::title_px) + Style::pad) + Style::pad;
  const double axes_bottom = f.top + f.plot_h + 8 + Style::tick_px + 10 + Style::axis_px;

  Svg svg;
  draw_y_ticks(svg, ym, yt, f);
  draw_x_ticks(svg, xm, xt, f);
  svg.out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"{}\"/>\n", f.left,
                         f.top, f.plot_w, f.plot_h, Style::frame);
  svg.text(f.left + f.plot_w / 2, axes_bottom, axis_title(chart.x), Style::axis_px, "middle", " class=\"axis-title\"");
  double ty = f.top + f.plot_h / 2;
  svg.text(Style::pad + Style::axis_px, ty, axis_title(chart.y), Style::axis_px, "middle",
           fmt::format(" class=\"axis-title\" transform=\"rotate(-90 {:.1f} {:.1f})\"", Style::pad + Style::axis_px, ty));

  svg.out += fmt::format("<clipPath id=\"{}-plot\"><rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{}\" height=\"{}\"/></clipPath>\n", id,
                         f.left, f.top, f.plot_w, f.plot_h);
  svg.out += fmt::format("<g clip-path=\"url(#{}-plot)\">\n", id);
  std::vector<Box> taken;
  std::string ceiling_labels;
  struct SlopedLabel {
    double x, y, w;
  };
  std::vector<SlopedLabel> sloped;  // anchors of the sloped labels placed so far
  for (const Ceiling& c : chart.ceilings) {
    std::string colour = colour_of(c.colour);
    if (c.slope == 0) {
      if (!ym.drawable(c.level)) continue;
      double y = ym(c.level);
      svg.line(f.left, y, f.left + f.plot_w, y, colour, 1.8, c.dash, " class=\"ceiling\"");
      // Above the line at the right, else (a close ceiling's label is there) below it, else above it at the left
      // (clear of the sloped memory roofs only when the line is high), else unlabelled.
      const double w = text_width(c.label, Style::label_px), right = f.left + f.plot_w - 6;
      for (auto [base, x1] : {std::pair{y - 4, right}, std::pair{y + 4 + Style::label_px, right},
                             std::pair{y - 4, f.left + 6 + w}}) {
        Box b{x1 - w, base - Style::label_px, x1, base + 2};
        if (std::any_of(taken.begin(), taken.end(), [&](const Box& o) { return o.overlaps(b); })) continue;
        taken.push_back(b);
        ceiling_labels += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"{}\" text-anchor=\"end\" fill=\"{}\"{}>{}</text>\n",
                                      x1, base, Style::label_px, colour, kHalo, xml_escape(c.label));
        break;
      }
      continue;
    }
    // y = slope * x between the left edge (or where it enters from below) and the cap (or the right edge).
    double x0 = xm.lo, x1 = xm.hi;
    if (c.cap) x1 = std::min(x1, *c.cap / c.slope);
    if (ym.drawable(ym.lo)) x0 = std::max(x0, ym.lo / c.slope);
    if (!(x1 > x0) || !xm.drawable(x0)) continue;
    double sx0 = xm(x0), sy0 = ym(c.slope * x0), sx1 = xm(x1), sy1 = ym(c.slope * x1);
    svg.line(sx0, sy0, sx1, sy1, colour, 1.8, c.dash, " class=\"ceiling\"");
    double angle = std::atan2(sy1 - sy0, sx1 - sx0) * 180 / M_PI;
    // Each further sloped label sits further along its line, at the first of six places clear of every earlier
    // label: close bandwidths (DRAM and DRAM measured) run almost on top of each other, so their labels must not
    // share a stretch of the diagonal.
    const double w = text_width(c.label, Style::label_px);
    auto anchor = [&](size_t k) {
      const double along = 0.06 + 0.16 * static_cast<double>((sloped.size() + k) % 6);
      return std::pair{sx0 + (sx1 - sx0) * along, sy0 + (sy1 - sy0) * along};
    };
    // Memory roofs are parallel on log-log axes: a label is clear of another when it sits a text line away across
    // the diagonal, or past both labels' length along it.
    const double ux = std::cos(angle * M_PI / 180), uy = std::sin(angle * M_PI / 180);
    auto clear = [&](std::pair<double, double> a) {
      return std::all_of(sloped.begin(), sloped.end(), [&](const SlopedLabel& o) {
        const double dx = a.first - o.x, dy = a.second - o.y;
        return std::fabs(dx * uy - dy * ux) > Style::label_px + 4 || std::fabs(dx * ux + dy * uy) > std::max(w, o.w) + 8;
      });
    };
    size_t k = 0;
    while (k < 6 && !clear(anchor(k))) ++k;
    const auto [lx, ly] = anchor(k < 6 ? k : 0);
    sloped.push_back({lx, ly, w});
    ceiling_labels += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"{}\" fill=\"{}\"{} transform=\"rotate({:.1f} {:.1f} {:.1f})\" dy=\"-5\">{}</text>\n",
        lx, ly, Style::label_px, colour, kHalo, angle, lx, ly, xml_escape(c.label));
  }
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const Series& s = chart.series[i];
    if (s.mark != Mark::Line && s.mark != Mark::LinePoints) continue;
    std::string pts;
    for (const auto& p : s.points)
      if (xm.drawable(p.x) && ym.drawable(p.y)) pts += fmt::format("{:.1f},{:.1f} ", xm(p.x), ym(p.y));
    svg.out += fmt::format("<polyline class=\"series-line\" points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{}/>\n", pts,
                           colour_of(colours[i]), s.dashed ? " stroke-dasharray=\"7 4\"" : "");
  }
  std::string labels;
  for (const Marker& m : chart.markers) {  // ridge point labels first: they win over point labels
    if (!xm.drawable(m.x) || !ym.drawable(m.y)) continue;
    double mx = xm(m.x), my = ym(m.y);
    Box b{mx + 8, my + 4, mx + 8 + text_width(m.label, Style::label_px), my + 6 + Style::label_px};
    if (b.x1 > f.left + f.plot_w || std::any_of(taken.begin(), taken.end(), [&](const Box& o) { return o.overlaps(b); })) continue;
    taken.push_back(b);
    labels += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"{}\" fill=\"{}\"{}>{}</text>\n", b.x0, b.y1 - 2,
                          Style::label_px, colour_of(m.colour), kHalo, xml_escape(m.label));
  }
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const Series& s = chart.series[i];
    std::string colour = colour_of(colours[i]);
    if (s.mark != Mark::Line)
      for (const auto& p : s.points) {
        if (!xm.drawable(p.x) || !ym.drawable(p.y)) continue;
        svg.out += fmt::format("<path class=\"pt\"{} d=\"{}\" fill=\"{}\" fill-opacity=\"{}\" stroke=\"{}\" stroke-width=\"{}\"{}><title>{}</title></path>\n",
                               s.hollow ? " data-mark=\"hollow\"" : " data-mark=\"filled\"", marker_path(static_cast<int>(i), xm(p.x), ym(p.y), Style::marker_r),
                               s.hollow ? "white" : colour, s.hollow ? "0.6" : "0.85", s.hollow ? colour : "white",
                               s.hollow ? "1.4" : "0.8", row_attr(p.row), xml_escape(point_title(p, chart)));
      }
    if (s.label_points <= 0) continue;
    std::vector<const Point*> order;
    for (const auto& p : s.points)
      if (!p.label.empty() && xm.drawable(p.x) && ym.drawable(p.y)) order.push_back(&p);
    std::stable_sort(order.begin(), order.end(), [](const Point* a, const Point* b) { return a->y > b->y; });
    int drawn = 0;
    for (const Point* p : order) {
      if (drawn >= s.label_points) break;
      std::string text = shorten(p->label, 28);
      double w = text_width(text, Style::label_px), px = xm(p->x), py = ym(p->y);
      bool right = px + 7 + w < f.left + f.plot_w;
      Box b{right ? px + 6 : px - 6 - w, py - 5 - Style::label_px, right ? px + 6 + w : px - 6, py - 3};
      if (b.y0 < f.top || std::any_of(taken.begin(), taken.end(), [&](const Box& o) { return o.overlaps(b); })) continue;
      taken.push_back(b);
      ++drawn;
      labels += fmt::format("<text class=\"pt-label\" x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"{}\" fill=\"{}\"{}>{}</text>\n",
                            b.x0, py - 5, Style::label_px, Style::ink, kHalo, xml_escape(text));
    }
  }
  for (const Marker& m : chart.markers) {
    if (!xm.drawable(m.x) || !ym.drawable(m.y)) continue;
    svg.out += fmt::format("<path class=\"marker\" d=\"{}\" fill=\"white\" stroke=\"{}\" stroke-width=\"2\"><title>{}</title></path>\n",
                           marker_path(3, xm(m.x), ym(m.y), 5.5), colour_of(m.colour), xml_escape(m.label));
  }
  svg.out += "</g>\n" + ceiling_labels + labels;
  double legend_h = svg.legend(legend_x, f.top, legend);
  const double bottom = std::max(axes_bottom + 6, f.top + legend_h);
  draw_title_and_notes(svg, chart, f, width, bottom, notes);
  return {std::move(svg.out), width, bottom + 16 * static_cast<double>(notes.size()) + Style::pad};
}

Drawn draw_bars(const Chart& chart, const std::string& id) {
  (void)id;
  const size_t n_series = chart.series.size();
  const bool stacked = chart.stacked;
  const double bar_h = stacked ? 2.4 * Style::bar_h : Style::bar_h;
  const double group_h = bar_h * static_cast<double>(stacked ? 1 : std::max<size_t>(n_series, 1)) + Style::bar_gap;
  // Stacked: each point starts where the previous series' point of its category ended.
  std::vector<double> start_of_point;
  std::vector<double> end_of(chart.categories.size() + 1, 0.0);
  double hi = 0;
  for (const auto& s : chart.series)
    for (const auto& p : s.points) {
      if (!std::isfinite(p.y)) continue;
      if (stacked && p.x >= 0 && static_cast<size_t>(p.x) < end_of.size()) {
        start_of_point.push_back(end_of[static_cast<size_t>(p.x)]);
        hi = std::max(hi, end_of[static_cast<size_t>(p.x)] += p.y);
      }
      hi = std::max(hi, p.y);
    }
  if (stacked)  // a little room past a limit line, which would otherwise sit on the frame at a round value
    for (const auto& m : chart.markers) hi = std::max(hi, m.x * 1.02);
  AxisMap xm{Scale::Linear};
  std::tie(xm.lo, xm.hi) = axis_range(chart.x, 0, hi);
  const std::vector<Tick> xt = axis_ticks(chart.x, xm.lo, xm.hi);
  double label_w = 0;
  for (const auto& c : chart.categories) label_w = std::max(label_w, text_width(shorten(c, 32), Style::tick_px));

  std::vector<LegendEntry> legend;
  const std::vector<int> colours = assign_colours(chart.series);
  for (size_t i = 0; i < n_series; ++i) legend.push_back({chart.series[i].name, colour_of(colours[i]), -1, -1, true});
  Frame f{Style::pad + label_w + 10, Style::pad + (chart.title.empty() ? 4 : Style::title_px + 14),
          stacked ? Style::plot_w - 160 : Style::plot_w - 60,
          group_h * static_cast<double>(chart.categories.size()) + Style::bar_gap +
              (stacked && !chart.markers.empty() ? Style::label_px + 8 : 0)};
  xm.from = f.left, xm.to = f.left + f.plot_w;
  const double legend_x = f.left + f.plot_w + 20;
  const double width = std::max(legend_x + legend_width(legend), text_width(chart.title, Style::title_px) + Style::pad) + Style::pad;
  const double axes_bottom = f.top + f.plot_h + 8 + Style::tick_px + 10 + Style::axis_px;

  Svg svg;
  draw_x_ticks(svg, xm, xt, f);
  for (size_t c = 0; c < chart.categories.size(); ++c) {
    double gy = f.top + Style::bar_gap + group_h * static_cast<double>(c);
    svg.text(f.left - 8, gy + (group_h - Style::bar_gap) / 2 + Style::tick_px * 0.35, shorten(chart.categories[c], 32),
             Style::tick_px, "end", " class=\"category\"");
  }
  int unknown = 0;
  size_t stacked_point = 0;
  for (size_t i = 0; i < n_series; ++i)
    for (const auto& p : chart.series[i].points) {
      if (!std::isfinite(p.y)) {
        ++unknown;
        continue;
      }
      const double x0 = stacked && stacked_point < start_of_point.size() ? start_of_point[stacked_point++] : 0.0;
      double gy = f.top + Style::bar_gap + group_h * p.x + (stacked ? 0.0 : bar_h * static_cast<double>(i));
      std::string tip = p.tip.empty() ? fmt::format("{}: {} {}", p.label, tick_label(p.y), chart.x.unit) : p.tip;
      const double sx0 = stacked ? xm(x0) : f.left, width_px = std::max(0.0, xm(x0 + p.y) - sx0);
      svg.out += fmt::format("<rect class=\"bar\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"{}{}><title>{}</title></rect>\n",
                             sx0, gy, width_px, bar_h - 1, colour_of(colours[i]), stacked ? " stroke=\"white\"" : "",
                             row_attr(p.row), xml_escape(tip));
      // Segments wide enough carry their share as text.
      if (stacked && width_px > 34)
        svg.text(sx0 + width_px / 2, gy + bar_h / 2 + Style::label_px * 0.35, tick_label(p.y) + (chart.x.unit == "%" ? "%" : ""),
                 Style::label_px, "middle", " fill=\"white\" pointer-events=\"none\"");
    }
  if (stacked)  // limits (device memory) as labelled vertical lines
    for (const auto& m : chart.markers) {
      const double x = xm(m.x);
      svg.line(x, f.top - 4, x, f.top + f.plot_h, colour_of(m.colour), 2, 1, " class=\"limit\"");
      svg.text(x - 4, f.top + f.plot_h - 4, m.label, Style::label_px, "end", fmt::format(" fill=\"{}\"", colour_of(m.colour)));
    }
  svg.out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{}\" height=\"{:.1f}\" fill=\"none\" stroke=\"{}\"/>\n", f.left, f.top,
                         f.plot_w, f.plot_h, Style::frame);
  svg.text(f.left + f.plot_w / 2, axes_bottom, axis_title(chart.x), Style::axis_px, "middle", " class=\"axis-title\"");
  std::vector<std::string> notes = chart.notes;
  if (unknown > 0) notes.push_back(fmt::format("{} bar{} with unknown values not drawn", unknown, unknown == 1 ? "" : "s"));
  double legend_h = svg.legend(legend_x, f.top, legend);
  const double bottom = std::max(axes_bottom + 6, f.top + legend_h);
  draw_title_and_notes(svg, chart, f, width, bottom, notes);
  return {std::move(svg.out), width, bottom + 16 * static_cast<double>(notes.size()) + Style::pad};
}

}  // namespace

std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') out += ' ';  // not allowed in XML 1.0
        else out += c;
    }
  }
  return out;
}

namespace {

/// Rescales an axis whose unit is bytes ("B") to the binary unit of its largest value, as the tables print every
/// memory figure ("12.6 GiB"): SI ticks on raw bytes read "13.5G" beside the table's 12.6 GiB. `values` are the
/// coordinates drawn on that axis; `largest` is at least their largest magnitude (a stack's sum may exceed it).
void to_binary_bytes(Axis& axis, const std::vector<double*>& values, double largest = 0) {
  if (axis.unit != "B") return;
  for (const double* v : values) largest = std::max(largest, std::fabs(*v));
  if (axis.max) largest = std::max(largest, *axis.max);
  const auto [size, unit] = report::binary_byte_unit(largest);
  if (size == 1) return;
  for (double* v : values) *v /= size;
  for (double& t : axis.ticks) t /= size;
  if (axis.min) *axis.min /= size;
  if (axis.max) *axis.max /= size;
  axis.unit = unit;
}

/// The chart with its byte axes in binary units. Horizontal bars keep their values in y and draw them on x.
Chart with_binary_byte_axes(Chart c) {
  const bool bars = c.kind == Kind::Bars;
  std::vector<double*> xs, ys;
  for (auto& s : c.series)
    for (auto& p : s.points) {
      xs.push_back(bars ? &p.y : &p.x);
      if (!bars) ys.push_back(&p.y);
    }
  for (auto& m : c.markers) {
    xs.push_back(&m.x);
    if (!bars) ys.push_back(&m.y);
  }
  for (auto& ceiling : c.ceilings)
    if (ceiling.slope == 0) ys.push_back(&ceiling.level);
  double tallest_stack = 0;
  if (bars && c.stacked) {
    std::vector<double> sums(c.categories.size());
    for (const auto& s : c.series)
      for (const auto& p : s.points)
        if (p.x >= 0 && static_cast<size_t>(p.x) < sums.size()) sums[static_cast<size_t>(p.x)] += p.y;
    for (double v : sums) tallest_stack = std::max(tallest_stack, v);
  }
  to_binary_bytes(c.x, xs, tallest_stack);
  to_binary_bytes(c.y, ys);
  return c;
}

}  // namespace

Drawn draw_chart(const Chart& original, const std::string& id) {
  const Chart chart = with_binary_byte_axes(original);
  return chart.kind == Kind::Bars ? draw_bars(chart, id) : draw_xy(chart, id);
}

std::string svg_document(const std::vector<Drawn>& charts, bool inline_svg) {
  // One row for one or two charts; more wrap into a grid of ceil(sqrt(n)) columns (four panels as 2 x 2, not one
  // strip eight times wider than tall). Each row is as tall as its tallest chart.
  const size_t columns = std::max<size_t>(1, static_cast<size_t>(std::ceil(std::sqrt(static_cast<double>(charts.size())))));
  std::string body;
  double width = 0, height = 0;
  for (size_t row = 0; row * columns < charts.size(); ++row) {
    double x = 0, row_height = 0;
    for (size_t i = row * columns; i < std::min(charts.size(), (row + 1) * columns); ++i) {
      body += fmt::format("<g transform=\"translate({:.0f},{:.0f})\">\n", x, height) + charts[i].body + "</g>\n";
      x += charts[i].width;
      row_height = std::max(row_height, charts[i].height);
    }
    width = std::max(width, x);
    height += row_height;
  }
  std::string out = inline_svg ? "" : "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"{:.0f}\" height=\"{:.0f}\" viewBox=\"0 0 {:.0f} {:.0f}\" "
      "font-family=\"{}\" fill=\"{}\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      width, height, width, height, Style::font, Style::ink);
  return out + body + "</svg>\n";
}

}  // namespace ridge::chart::detail
