// The report's first screen from plain numbers (see ridge/headline.hpp).
#include "ridge/headline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

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

namespace {

// The components of a module path, split at '.' and '/' (torch's "layers.0.mlp", an ONNX export's
// "/model/layers.0/mlp"), as views into `name`.
std::vector<std::string_view> path_parts(std::string_view name) {
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    const size_t sep = name.find_first_of("./", start);
    parts.push_back(name.substr(start, sep == std::string_view::npos ? std::string_view::npos : sep - start));
    if (sep == std::string_view::npos) return parts;
    start = sep + 1;
  }
}

bool is_index(std::string_view part) {
  return !part.empty() && std::all_of(part.begin(), part.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
}

// Calls f(parent, i) for each index parts[i] after the name's first one; parent = the name up to that index.
template <class F>
void for_each_inner_index(std::string_view name, const std::vector<std::string_view>& parts, F&& f) {
  bool first = true;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!is_index(parts[i])) continue;
    if (!first) f(name.substr(0, static_cast<size_t>(parts[i].data() - name.data())), i);
    first = false;
  }
}

bool additive(report::Unit u) {
  using report::Unit;
  return u == Unit::Count || u == Unit::Param || u == Unit::Flop || u == Unit::Mac || u == Unit::Byte ||
         u == Unit::Second || u == Unit::Percent;
}

// One cell for the members `rows` of a merged row in column `col`.
report::Cell merged_cell(const report::Table& t, size_t col, const std::vector<size_t>& rows) {
  const report::Cell& first = t.rows[rows[0]][col];
  const bool same = std::all_of(rows.begin(), rows.end(), [&](size_t r) {
    const report::Cell& c = t.rows[r][col];
    return c.value == first.value && c.key == first.key;
  });
  const report::Unit unit = t.columns[col].unit;
  const bool numeric = std::holds_alternative<Count>(first.value) || std::holds_alternative<double>(first.value);
  if (numeric && additive(unit)) {
    Count n = 0;
    double d = 0;
    bool any_real = false;
    for (size_t r : rows) {
      const auto& v = t.rows[r][col].value;
      if (auto c = std::get_if<Count>(&v)) n += *c;
      else if (auto x = std::get_if<double>(&v); x && std::isfinite(*x)) d += *x, any_real = true;
    }
    return any_real ? report::Cell::real(d + to_double(n), unit) : report::Cell::count(n, unit);
  }
  if (same) return first;
  if (std::holds_alternative<std::string>(first.value)) return report::Cell::text("varies");
  return report::Cell::empty(unit);
}

}  // namespace

std::vector<std::string> repeat_keys(const std::vector<std::string>& names, size_t min_instances) {
  std::map<std::string_view, std::set<std::string_view>> indices;  // parent -> its distinct indices
  std::vector<std::vector<std::string_view>> parts(names.size());
  for (size_t n = 0; n < names.size(); ++n) {
    parts[n] = path_parts(names[n]);
    for_each_inner_index(names[n], parts[n], [&](std::string_view parent, size_t i) { indices[parent].insert(parts[n][i]); });
  }
  std::vector<std::string> keys;
  keys.reserve(names.size());
  for (size_t n = 0; n < names.size(); ++n) {
    std::vector<bool> starred(parts[n].size(), false);
    bool any = false;
    for_each_inner_index(names[n], parts[n], [&](std::string_view parent, size_t i) {
      if (indices[parent].size() >= min_instances) starred[i] = any = true;
    });
    if (!any) {
      keys.push_back(names[n]);
      continue;
    }
    std::string key;  // the name with each starred index replaced, separators kept
    size_t copied = 0;
    for (size_t i = 0; i < parts[n].size(); ++i) {
      if (!starred[i]) continue;
      const size_t at = static_cast<size_t>(parts[n][i].data() - names[n].data());
      key.append(names[n], copied, at - copied).append("*");
      copied = at + parts[n][i].size();
    }
    keys.push_back(key.append(names[n], copied));
  }
  return keys;
}

report::Table collapse_repeats(const report::Table& t, int name_col, std::vector<int>* row_of, size_t min_instances) {
  auto is_total = [&](size_t r) {
    return std::find(t.total_rows.begin(), t.total_rows.end(), static_cast<int>(r)) != t.total_rows.end();
  };
  std::vector<size_t> body;
  std::vector<std::string> names;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    if (is_total(r)) continue;
    const auto* s = std::get_if<std::string>(&t.rows[r][static_cast<size_t>(name_col)].value);
    body.push_back(r);
    names.push_back(s ? *s : std::string());
  }
  const std::vector<std::string> keys = repeat_keys(names, min_instances);
  std::vector<std::string> order;
  std::map<std::string, std::vector<size_t>> members;  // key -> positions in body
  for (size_t i = 0; i < body.size(); ++i) {
    auto [it, added] = members.try_emplace(keys[i]);
    if (added) order.push_back(keys[i]);
    it->second.push_back(i);
  }
  report::Table out{t.key, t.title, t.columns, {}, {}};
  if (row_of) row_of->assign(t.rows.size(), -1);
  for (const std::string& key : order) {
    const auto& positions = members[key];
    const int at = static_cast<int>(out.rows.size());
    std::vector<size_t> rows;
    for (size_t i : positions) rows.push_back(body[i]);
    if (rows.size() == 1 && names[positions[0]] == key) {
      out.rows.push_back(t.rows[rows[0]]);
    } else {
      std::vector<report::Cell> merged;
      for (size_t col = 0; col < t.columns.size(); ++col)
        merged.push_back(static_cast<int>(col) == name_col ? report::Cell::text(fmt::format("{} (×{})", key, rows.size()))
                                                            : merged_cell(t, col, rows));
      out.rows.push_back(std::move(merged));
    }
    if (row_of)
      for (size_t r : rows) (*row_of)[r] = at;
  }
  for (size_t r = 0; r < t.rows.size(); ++r)
    if (is_total(r)) {
      if (row_of) (*row_of)[r] = static_cast<int>(out.rows.size());
      out.total_rows.push_back(static_cast<int>(out.rows.size()));
      out.rows.push_back(t.rows[r]);
    }
  return out;
}

std::vector<Run> merge_repeats(std::vector<Run> runs, size_t min_instances) {
  std::vector<std::string> names;
  for (const Run& r : runs)
    for (const LayerTime& l : r.layers) names.push_back(l.name);
  const std::vector<std::string> keys = repeat_keys(names, min_instances);
  std::map<std::string, std::string> label;  // key -> "KEY (×N)", N as the first run that has the key counts it
  size_t k = 0;
  for (Run& r : runs) {
    std::vector<LayerTime> merged;
    std::map<std::string, size_t> at;  // key -> index in merged
    std::vector<size_t> members;
    std::vector<std::string> merged_keys;
    for (LayerTime& l : r.layers) {
      const std::string& key = keys[k++];
      auto [it, added] = at.try_emplace(key, merged.size());
      if (added) {
        merged.push_back(std::move(l));
        members.push_back(1);
        merged_keys.push_back(key);
        continue;
      }
      LayerTime& m = merged[it->second];
      if (std::isnan(m.time_s)) m.time_s = l.time_s;
      else if (!std::isnan(l.time_s)) m.time_s += l.time_s;
      ++members[it->second];
    }
    for (size_t i = 0; i < merged.size(); ++i) {
      if (members[i] == 1 && merged[i].name == merged_keys[i]) continue;
      auto [it, added] = label.try_emplace(merged_keys[i], fmt::format("{} (×{})", merged_keys[i], members[i]));
      merged[i].name = it->second;
    }
    r.layers = std::move(merged);
  }
  return runs;
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
