// The per-layer summary document (`ridge summary`, the HTML report, the Python module).
#include "ridge/api.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

namespace ridge::report {

namespace {

std::string group_key(const std::string& name, int depth) {
  if (depth <= 0) return name;
  size_t pos = 0;
  for (int i = 0; i < depth; ++i) {
    pos = name.find('.', pos);
    if (pos == std::string::npos) return name;
    if (i + 1 < depth) ++pos;
  }
  return name.substr(0, pos);
}

}  // namespace

int fitting_depth(const Graph& g, size_t max_rows) {
  size_t deepest = 0;
  for (const Node& n : g.nodes) deepest = std::max<size_t>(deepest, static_cast<size_t>(std::count(n.name.begin(), n.name.end(), '.')) + 1);
  if (g.nodes.size() <= max_rows) return 0;
  int best = 1;
  for (int d = 1; d <= static_cast<int>(deepest); ++d) {
    std::set<std::string> keys;
    for (const Node& n : g.nodes) keys.insert(group_key(n.name, d));
    if (keys.size() > max_rows) break;
    best = d;
  }
  return best;
}

void mark_incomplete(Document& d, const Incompleteness& inc) {
  d.alert = incomplete_line(inc);
  d.extra["complete"] = inc.complete();
  nlohmann::json items = nlohmann::json::array();
  for (const auto& i : inc.nodes) items.push_back({{"node", i.name}, {"op", i.op}, {"reason", i.reason}});
  d.extra["not_costed"] = std::move(items);
}

void mark_incomplete_models(Document& d, const std::vector<std::pair<std::string, std::vector<std::string>>>& gaps) {
  d.extra["complete"] = gaps.empty();
  nlohmann::json items = nlohmann::json::array();
  std::vector<std::string> parts;
  std::set<std::string> named;
  for (const auto& [model, ops] : gaps) {
    if (!named.insert(model).second) continue;
    items.push_back({{"model", model}, {"ops", ops}});
    parts.push_back(fmt::format("{} ({})", model, fmt::join(ops, ", ")));
  }
  d.extra["not_costed"] = std::move(items);
  if (!gaps.empty())
    d.alert = fmt::format("INCOMPLETE: ops not costed in {} — their totals are lower bounds (--strict makes this an error)",
                          fmt::join(parts, "; "));
}

Document summary_report(const Graph& g, const SummaryOptions& opts) {
  const ModelCost mc = estimate(g);
  const MemoryEstimate mem =
      estimate_memory(g, opts.optimizer, opts.precision ? param_storage(*opts.precision) : ParamStorage{});
  std::optional<ConventionCount> conv;
  if (opts.convention) conv = count_under(g, *opts.convention);

  struct Row {
    std::string name, op, shape, status, descriptor;
    Cost cost;
    Count out_bytes = 0, saved_bytes = 0, headline = 0;
    int nodes = 0;
  };
  std::vector<Row> rows;
  std::map<std::string, size_t> index;
  std::map<std::string, std::string> module_types;
  for (const auto& m : g.modules) module_types[m.path] = m.type;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    const NodeCost& nc = mc.nodes[i];
    std::string key = group_key(n.name, opts.depth);
    auto [it, fresh] = index.emplace(key, rows.size());
    if (fresh) {
      rows.emplace_back();
      rows.back().name = key;
    }
    Row& r = rows[it->second];
    ++r.nodes;
    r.op = r.nodes == 1 ? (n.op == OpKind::Unknown ? n.op_type : std::string(op_name(n.op)))
                        : (module_types.count(key) ? module_types[key] : "group");
    r.descriptor = r.nodes == 1 ? nc.descriptor : "";
    // A node's first output is its result (LSTM's Y, not Y_h and Y_c; MaxPool's values, not indices); an omitted
    // one (LSTM with only Y_h) leaves the first output present.
    const auto shown = std::find_if(n.outputs.begin(), n.outputs.end(), [&](int o) { return !g.value(o).omitted; });
    r.shape = shown == n.outputs.end() ? "" : to_string(g.value(*shown).shape);
    if (nc.status == CostStatus::Ok) r.cost += nc.cost;
    else {
      r.cost.params += nc.cost.params;
      r.status = std::string(cost_status_name(nc.status)) + ": " + nc.reason;
    }
    r.out_bytes += mem.output_bytes[i];
    r.saved_bytes += mem.saved_per_node[i];
    if (conv) r.headline += conv->per_node[i];
  }

  Table t;
  t.key = "layers";
  t.title = opts.depth > 0 ? fmt::format("Layers (grouped to depth {}; --depth 0 lists every node)", opts.depth)
                           : "Layers";
  t.columns = {{"name", "layer"},
               {"op", "op"},
               {"output_shape", "output shape", Unit::None, false, 3},
               {"params", "params", Unit::Param, true},
               {"macs", "MACs", Unit::Mac, false, 5},
               {"flops", "FLOPs", Unit::Flop},
               {"backward_flops", "bwd FLOPs", Unit::Flop, false, 4},
               {"bytes_read", "read", Unit::Byte, false, 7},
               {"bytes_written", "written", Unit::Byte, false, 6},
               {"output_bytes", "out mem", Unit::Byte},
               {"saved_bytes", "saved", Unit::Byte, false, 8},
               {"flops_share_pct", "FLOPs %", Unit::Percent}};
  // drop_rank: what a narrow terminal loses first (the descriptor, then memory detail, then the op's shape).
  if (conv) t.columns.push_back({"headline", std::string(convention_info(*opts.convention).name), Unit::Count, true, 2});
  t.columns.push_back({"status", "status", Unit::None, false, 9});
  t.columns.push_back({"descriptor", "descriptor", Unit::None, false, 10});
  const double total_flops = to_double(mc.total.flops);
  for (const Row& r : rows) {
    std::vector<Cell> row = {Cell::text(r.name),
                             Cell::text(r.op),
                             Cell::text(r.shape),
                             Cell::count(r.cost.params, Unit::Param),
                             Cell::count(r.cost.macs, Unit::Mac),
                             Cell::count(r.cost.flops, Unit::Flop),
                             Cell::count(r.cost.bwd_flops(), Unit::Flop),
                             Cell::count(r.cost.bytes_read, Unit::Byte),
                             Cell::count(r.cost.bytes_written, Unit::Byte),
                             Cell::count(r.out_bytes, Unit::Byte),
                             Cell::count(r.saved_bytes, Unit::Byte),
                             Cell::real(total_flops > 0 ? 100.0 * to_double(r.cost.flops) / total_flops : 0.0,
                                        Unit::Percent)};
    if (conv) row.push_back(Cell::count(r.headline, Unit::Count));
    row.push_back(r.status.empty() ? Cell::text("ok") : Cell::text(r.status));
    row.push_back(Cell::text(r.descriptor));
    t.add_row(std::move(row));
  }

  Fields totals;
  totals.key = "totals";
  totals.title = mc.complete() ? "Totals" : "Totals (EXCLUDING ops ridge cannot cost, see notes)";
  totals.add("params", "params", Cell::count(mc.total.params, Unit::Param), true)
      .add("buffers", "buffers (non-trainable)", Cell::count(mc.total.buffers, Unit::Param), true)
      .add("macs", "MACs", Cell::count(mc.total.macs, Unit::Mac), true)
      .add("flops", "FLOPs (forward)", Cell::count(mc.total.flops, Unit::Flop), true)
      .add("backward_flops", "FLOPs (backward)", Cell::count(mc.total.bwd_flops(), Unit::Flop), true)
      .add("backward_input_flops", "  of which grad-input", Cell::count(mc.total.bwd_input_flops, Unit::Flop), true)
      .add("backward_weight_flops", "  of which grad-weight", Cell::count(mc.total.bwd_weight_flops, Unit::Flop),
           true)
      .add("training_flops", "FLOPs (training step: fwd + bwd)",
           Cell::count(mc.total.flops + mc.total.bwd_flops(), Unit::Flop), true)
      .add("bytes_read", "bytes read", Cell::count(mc.total.bytes_read, Unit::Byte), true)
      .add("bytes_written", "bytes written", Cell::count(mc.total.bytes_written, Unit::Byte), true)
      .add("intensity_flops_per_byte", "arithmetic intensity", Cell::real(mc.total.intensity(), Unit::FlopPerByte))
      .add("headline", conv ? std::string("headline (") + std::string(convention_info(*opts.convention).name) + ")"
                            : std::string("headline (ridge FLOPs)"),
           Cell::count(conv ? conv->total : mc.total.flops, Unit::Count), true)
      .add("complete", "complete", Cell::flag(mc.complete()));
  if (conv) totals.add("headline_text", "as the tool prints it", Cell::text(conv->headline_text));

  Fields memory;
  memory.key = "memory";
  memory.title = !opts.precision ? fmt::format("Memory ({} optimizer)", optimizer_name(opts.optimizer))
                                 : fmt::format("Memory ({} optimizer, {})", optimizer_name(opts.optimizer),
                                               opts.precision->name);
  // An inference-only precision (int8) has no training step: its training memory is left empty, not made up.
  const bool inference_only = opts.precision && opts.precision->compute == Precision::INT8;
  auto training = [&](Count v) { return inference_only ? Cell::empty(Unit::Byte) : Cell::count(v, Unit::Byte); };
  memory.add("param_bytes", "parameters", Cell::count(mem.param_bytes, Unit::Byte))
      .add("buffer_bytes", "buffers", Cell::count(mem.buffer_bytes, Unit::Byte))
      .add("grad_bytes", "gradients", training(mem.grad_bytes))
      .add("master_bytes", "master weights", training(mem.master_bytes))
      .add("optimizer_bytes", "optimizer state", training(mem.optimizer_bytes))
      .add("input_bytes", "inputs", Cell::count(mem.input_bytes, Unit::Byte))
      .add("activation_bytes", "all activations (no reuse)", Cell::count(mem.activation_bytes, Unit::Byte))
      .add("saved_bytes", "saved for backward", training(mem.saved_bytes))
      .add("inference_peak_bytes", "inference peak (live activations)",
           Cell::count(mem.inference_peak_bytes, Unit::Byte))
      .add("training_peak_bytes", "training peak (weights+grads+optimizer+saved)", training(mem.training_peak_bytes));

  Document d;
  d.title = fmt::format("{} — {} nodes, input {}", g.name, g.nodes.size(),
                        g.inputs.empty() ? "-" : to_string(g.value(g.inputs[0]).shape));
  d.blocks.push_back(std::move(t));
  d.blocks.push_back(std::move(totals));
  d.blocks.push_back(std::move(memory));
  for (const auto& [op, count] : mc.excluded_ops)
    d.notes.push_back(fmt::format("{} node(s) of op {} could not be costed and are EXCLUDED from the totals", count, op));
  for (const auto& n : g.notes) d.notes.push_back(n);
  nlohmann::json excluded = nlohmann::json::object();
  for (const auto& [op, count] : mc.excluded_ops) excluded[op] = count;
  d.extra["totals"]["excluded_ops"] = excluded;
  d.extra["model"] = g.name;
  mark_incomplete(d, incompleteness(g, mc));
  return d;
}

}  // namespace ridge::report
