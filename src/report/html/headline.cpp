// The report's first screen from plain numbers (see ridge/headline.hpp).
#include "ridge/headline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace ridge::headline {
namespace {

using report::Cell;
using report::Unit;

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * kMiB;

// ridge::op_class (graph-stage family names) -> op group; anything else is "other".
struct GroupOf {
  std::string_view op_class, group;
};
constexpr GroupOf kGroups[] = {
    {"Conv", "conv"},           {"DepthwiseConv", "conv"},       {"GroupedConv", "conv"},
    {"ConvTranspose", "conv"},  {"Linear", "matmul"},            {"MatMul", "matmul"},
    {"Einsum", "matmul"},       {"Recurrent", "matmul"},         {"Attention", "attention"},
    {"BatchNorm", "norm"},      {"LayerNorm", "norm"},           {"Unary", "elementwise"},
    {"Binary", "elementwise"},  {"Select", "elementwise"},       {"Dropout", "elementwise"},
    {"Softmax", "elementwise"}, {"MaxPool", "pool/reduce"},      {"AvgPool", "pool/reduce"},
    {"AdaptiveAvgPool", "pool/reduce"}, {"GlobalAvgPool", "pool/reduce"}, {"Reduce", "pool/reduce"},
    {"Move", "data movement"},  {"Gather", "data movement"},     {"Resize", "data movement"},
    {"View", "data movement"},  {"Update", "data movement"},     {"Reorder", "data movement"},
    {"OptimizerStep", "weight update"},
};

size_t group_index(std::string_view op_class) {
  const std::string g = op_group(op_class);
  const auto& all = op_groups();
  return static_cast<size_t>(std::find(all.begin(), all.end(), g) - all.begin());
}

double total_time(const std::vector<LayerTime>& layers) {
  double t = 0;
  for (const auto& l : layers)
    if (std::isfinite(l.time_s)) t += l.time_s;
  return t;
}

}  // namespace

const std::vector<std::string>& op_groups() {
  static const std::vector<std::string> groups = {"conv", "matmul", "attention", "norm", "elementwise",
                                                  "pool/reduce", "data movement", "weight update", "other"};
  return groups;
}

std::string op_group(std::string_view op_class) {
  for (const auto& g : kGroups)
    if (g.op_class == op_class) return std::string(g.group);
  return "other";
}

std::vector<double> time_by_group(const std::vector<LayerTime>& layers) {
  std::vector<double> out(op_groups().size(), 0.0);
  for (const auto& l : layers)
    if (std::isfinite(l.time_s)) out[group_index(l.op_class)] += l.time_s;
  return out;
}

std::vector<size_t> top_layers(const std::vector<LayerTime>& layers, size_t n) {
  std::vector<size_t> order;
  for (size_t i = 0; i < layers.size(); ++i)
    if (std::isfinite(layers[i].time_s)) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return layers[a].time_s > layers[b].time_s; });
  if (order.size() > n) order.resize(n);
  return order;
}

std::string dominant_bound(const std::vector<LayerTime>& layers) {
  std::map<std::string, double> by;
  for (const auto& l : layers)
    if (!l.bound.empty() && l.bound != "none" && std::isfinite(l.time_s)) by[l.bound] += l.time_s;
  std::string best;
  double most = -1;
  for (const auto& [b, t] : by)
    if (t > most) best = b, most = t;
  return best;
}

std::string llm_op_class(const std::string& name, const std::string& op_class) {
  const size_t dot = name.rfind('.');
  const std::string last = dot == std::string::npos ? name : name.substr(dot + 1);
  auto has = [&](const char* part) { return name.find(part) != std::string::npos; };
  if (has("allreduce")) return "Communication";
  if (last.rfind("matmul", 0) == 0 || op_class == "attention") return "Attention";
  if (has("norm")) return "LayerNorm";
  if (!op_class.empty()) return op_class;
  if (last.find("proj") != std::string::npos || last == "lm_head") return "Linear";
  if (last == "softmax") return "Softmax";
  if (last == "embed_tokens") return "Gather";
  if (has("norm")) return "LayerNorm";
  return "Unary";
}

std::string module_of(const std::string& layer, int depth) {
  if (depth <= 0) return layer;
  size_t pos = 0;
  for (int d = 0; d < depth; ++d) {
    pos = layer.find('.', pos);
    if (pos == std::string::npos) return layer;
    if (d + 1 < depth) ++pos;
  }
  return layer.substr(0, pos);
}

std::string scenario(const std::string& model, int64_t batch, const std::string& precision, bool training) {
  return fmt::format("{}, batch {}, {}, {}", model, batch, precision, training ? "training" : "inference");
}

report::Table runs_table(const std::vector<Run>& runs, const std::string& rate_title) {
  const bool serving = std::any_of(runs.begin(), runs.end(), [](const Run& r) { return std::isfinite(r.ttft_s); });
  report::Table t{"headline", "", {{"run", "run"}, {"measured", "measured"}}, {}, {}};
  if (serving) {
    t.columns.push_back({"ttft_s", "time to first token", Unit::Second});
    t.columns.push_back({"per_token_s", "time per output token", Unit::Second});
  }
  t.columns.push_back({"time_s", serving ? "request latency" : "time per iteration", Unit::Second});
  t.columns.push_back({"rate_per_s", rate_title});
  t.columns.push_back({"bound", "bound"});
  t.columns.push_back({"time_kind", "these times are"});
  for (const Run& r : runs) {
    const std::string bound = r.bound.empty() ? dominant_bound(r.layers) : r.bound;
    std::vector<Cell> row = {Cell::text(r.name), Cell::flag(r.measured)};
    if (serving) {
      row.push_back(Cell::real(r.ttft_s, Unit::Second));
      row.push_back(Cell::real(r.per_token_s, Unit::Second));
    }
    row.push_back(Cell::real(r.time_s, Unit::Second));
    row.push_back(Cell::real(r.rate_per_s));
    row.push_back(bound.empty() ? Cell::empty() : Cell::text(bound));
    row.push_back(Cell::keyed(r.time_kind, r.time_kind_key));
    t.add_row(std::move(row));
  }
  return t;
}

report::Table top_layers_table(const std::vector<Run>& runs, size_t n) {
  report::Table t{"top_layers", "", {{"name", "layer"}, {"group", "op group"}}, {}, {}};
  if (runs.empty()) return t;
  t.columns.push_back({"percent", "share of " + runs[0].name, Unit::Percent});
  for (const Run& r : runs) t.columns.push_back({"time_s." + r.name, r.name, Unit::Second});
  std::vector<std::map<std::string, double>> time_of(runs.size());
  for (size_t i = 0; i < runs.size(); ++i)
    for (const auto& l : runs[i].layers) time_of[i][l.name] = l.time_s;
  const double total = total_time(runs[0].layers);
  for (size_t k : top_layers(runs[0].layers, n)) {
    const LayerTime& l = runs[0].layers[k];
    std::vector<Cell> row = {Cell::text(l.name), Cell::text(op_group(l.op_class)),
                             total > 0 ? Cell::real(100 * l.time_s / total, Unit::Percent) : Cell::empty(Unit::Percent)};
    for (size_t i = 0; i < runs.size(); ++i) {
      auto it = time_of[i].find(l.name);
      row.push_back(it != time_of[i].end() && std::isfinite(it->second) ? Cell::real(it->second, Unit::Second)
                                                                        : Cell::empty(Unit::Second));
    }
    t.add_row(std::move(row));
  }
  return t;
}

report::Table op_group_table(const std::vector<Run>& runs) {
  report::Table t{"op_groups", "", {{"group", "op group"}}, {}, {}};
  std::vector<std::vector<double>> by;
  std::vector<double> totals;
  for (const Run& r : runs) {
    t.columns.push_back({"time_s." + r.name, r.name, Unit::Second});
    t.columns.push_back({"percent." + r.name, "%", Unit::Percent});
    by.push_back(time_by_group(r.layers));
    totals.push_back(std::accumulate(by.back().begin(), by.back().end(), 0.0));
  }
  for (size_t g = 0; g < op_groups().size(); ++g) {
    if (std::all_of(by.begin(), by.end(), [&](const auto& v) { return v[g] <= 0; })) continue;
    std::vector<Cell> row = {Cell::text(op_groups()[g])};
    for (size_t i = 0; i < runs.size(); ++i) {
      row.push_back(Cell::real(by[i][g], Unit::Second));
      row.push_back(totals[i] > 0 ? Cell::real(100 * by[i][g] / totals[i], Unit::Percent) : Cell::empty(Unit::Percent));
    }
    t.add_row(std::move(row));
  }
  return t;
}

report::Fields memory_fields(const MemoryParts& m) {
  report::Fields f{"memory", "", {}};
  f.add("weights_bytes", "weights", Cell::count(m.weights, Unit::Byte));
  if (m.serving) {  // nothing to train; the serving model counts weights and KV cache only (docs/llm.md)
    f.add("activation_bytes", "activations (not counted when serving)", Cell::empty(Unit::Byte));
  } else {
    f.add("gradient_bytes", "gradients", Cell::count(m.gradients, Unit::Byte));
    f.add("optimizer_bytes", "optimizer state", Cell::count(m.optimizer, Unit::Byte));
    f.add("activation_bytes", "activations", Cell::count(m.activations, Unit::Byte));
  }
  f.add("kv_cache_bytes", "KV cache", Cell::count(m.kv_cache, Unit::Byte));
  if (m.state_cache > 0) f.add("state_cache_bytes", "recurrent state cache", Cell::count(m.state_cache, Unit::Byte));
  f.add("total_bytes", "total", Cell::count(m.total(), Unit::Byte));
  return f;
}

report::Table compare_table(const std::vector<Variant>& variants, const std::vector<std::string>& devices) {
  report::Table t{"compare", "", {{"model", "model"}, {"batch", "batch", Unit::Count}, {"precision", "precision"},
                                  {"params", "params", Unit::Param}, {"flops", "FLOPs", Unit::Flop},
                                  {"flops_vs_first", "FLOPs vs first", Unit::Ratio},
                                  {"memory_bytes", "memory peak", Unit::Byte}}, {}, {}};
  for (const auto& d : devices) {
    t.columns.push_back({"time_s." + d, "time on " + d, Unit::Second});
    t.columns.push_back({"samples_per_s." + d, "samples/s on " + d});
    t.columns.push_back({"time_kind." + d, "times on " + d + " are"});
  }
  for (const Variant& v : variants) {
    const Count first = variants.front().flops;
    std::vector<Cell> row = {Cell::text(v.model), Cell::count(v.batch), Cell::text(v.precision),
                             Cell::count(v.params, Unit::Param), Cell::count(v.flops, Unit::Flop),
                             first > 0 ? Cell::real(to_double(v.flops) / to_double(first), Unit::Ratio) : Cell::empty(Unit::Ratio),
                             Cell::count(v.memory_bytes, Unit::Byte)};
    for (size_t d = 0; d < devices.size(); ++d) {
      const double time = d < v.time_s.size() ? v.time_s[d] : NAN;
      const double rate = d < v.samples_per_s.size() ? v.samples_per_s[d] : NAN;
      row.push_back(std::isfinite(time) ? Cell::real(time, Unit::Second) : Cell::empty(Unit::Second));
      row.push_back(std::isfinite(rate) ? Cell::real(rate) : Cell::empty());
      row.push_back(d < v.time_kind.size() ? Cell::keyed(v.time_kind[d], v.time_kind_key[d]) : Cell::empty());
    }
    t.add_row(std::move(row));
  }
  return t;
}

chart::Chart op_group_chart(const std::string& title, const std::vector<Run>& runs) {
  chart::Chart c;
  c.title = title;
  c.kind = chart::Kind::Bars;
  c.stacked = true;
  c.x = {"Share of time", "%", chart::Scale::Linear, 0.0, 100.0};
  for (const Run& r : runs) c.categories.push_back(r.name + (r.measured ? " (measured)" : " (predicted)"));
  std::vector<std::vector<double>> by;
  std::vector<double> totals;
  for (const Run& r : runs) {
    by.push_back(time_by_group(r.layers));
    totals.push_back(std::accumulate(by.back().begin(), by.back().end(), 0.0));
  }
  for (size_t g = 0; g < op_groups().size(); ++g) {
    if (std::all_of(by.begin(), by.end(), [&](const auto& v) { return v[g] <= 0; })) continue;
    chart::Series s{op_groups()[g], chart::Mark::Bars};
    s.colour = static_cast<int>(g);
    for (size_t i = 0; i < runs.size(); ++i) {
      const double pct = totals[i] > 0 ? 100 * by[i][g] / totals[i] : NAN;
      s.points.push_back({static_cast<double>(i), pct, op_groups()[g],
                          fmt::format("{}: {}\n{:.1f}% of the time ({})", c.categories[i], op_groups()[g], pct,
                                      report::format_seconds(by[i][g]))});
    }
    c.series.push_back(std::move(s));
  }
  return c;
}

chart::Chart memory_chart(const std::string& title, const MemoryParts& m, const std::vector<MemoryLimit>& limits) {
  chart::Chart c;
  c.title = title;
  c.kind = chart::Kind::Bars;
  c.stacked = true;
  // GiB from 1 GiB up, MiB below (tick labels never carry an SI prefix on a binary unit).
  const bool gib = to_double(m.total()) >= kGiB;
  const double scale = gib ? kGiB : kMiB;
  c.x = {"Memory", gib ? "GiB" : "MiB", chart::Scale::Linear};
  c.x.min = 0.0;
  const std::pair<const char*, Count> parts[] = {{"weights", m.weights},        {"gradients", m.gradients},
                                                 {"optimizer state", m.optimizer}, {"activations", m.activations},
                                                 {"KV cache", m.kv_cache},       {"recurrent state cache", m.state_cache}};
  int colour = 0;
  for (const auto& [name, bytes] : parts) {
    ++colour;
    if (bytes <= 0) continue;
    chart::Series s{name, chart::Mark::Bars};
    s.colour = colour - 1;
    s.points.push_back({0.0, to_double(bytes) / scale, name,
                        fmt::format("{}: {} ({:.1f}% of {})", name, report::format_bytes(to_double(bytes)),
                                    100 * to_double(bytes) / std::max(1.0, to_double(m.total())),
                                    report::format_bytes(to_double(m.total())))});
    c.series.push_back(std::move(s));
  }
  c.categories = {report::format_bytes(to_double(m.total()))};
  // A capacity far above the total would squash the bar to a sliver: it becomes a note instead of a line.
  for (size_t i = 0; i < limits.size(); ++i) {
    if (limits[i].bytes <= 0) continue;
    const double used = to_double(m.total()) / to_double(limits[i].bytes);
    const std::string text = fmt::format("{} {}", limits[i].device, report::format_bytes(to_double(limits[i].bytes)));
    if (used >= 0.4)
      c.markers.push_back({to_double(limits[i].bytes) / scale, 0, text, static_cast<int>(i)});
    else
      c.notes.push_back(fmt::format("{}: {:.1f}% used", text, 100 * used));
  }
  return c;
}

}  // namespace ridge::headline
