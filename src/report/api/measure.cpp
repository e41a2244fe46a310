// CPU measurement of a model and its document (`ridge measure`).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "ridge/api.hpp"
#include "ridge/error.hpp"

namespace ridge::report {
namespace {

Cell seconds(const measure::BenchStats& s) { return s.samples > 0 ? Cell::real(s.median_s, Unit::Second) : Cell::empty(); }
Cell positive(double v, Unit u) { return v > 0 ? Cell::real(v, u) : Cell::empty(u); }

Table layer_table(const ModelMeasurement& m) {
  Table t{"layers", "Per layer (median over repeats)", {}, {}, {}};
  t.columns = {{"name", "layer", Unit::None},
               {"op", "op", Unit::None},
               {"op_class", "class", Unit::None},
               {"status", "status", Unit::None},
               {"kernel", "kernel", Unit::None},
               {"time_s", "time", Unit::Second},
               {"min_s", "min", Unit::Second},
               {"spread_percent", "spread", Unit::Percent},
               {"samples", "samples", Unit::Count}};
  if (m.train) t.columns.push_back({"backward_time_s", "backward", Unit::Second});
  t.columns.insert(t.columns.end(), {{"flops", "FLOPs", Unit::Flop},
                                     {"bytes", "bytes", Unit::Byte},
                                     {"bytes_written", "bytes written", Unit::Byte},
                                     {"gflops_per_s", "GFLOP/s", Unit::None},
                                     {"gbytes_per_s", "GB/s", Unit::None},
                                     {"roofline_gflops_per_s", "roofline GFLOP/s", Unit::None},
                                     {"roofline_percent", "of roofline", Unit::Percent},
                                     {"roofline_level", "roof level", Unit::None},
                                     {"estimated_time_s", "roofline time", Unit::Second}});
  // Hardware counter columns, where perf_event_open provided any.
  std::vector<std::string> counter_names;
  for (const auto& l : m.layers)
    for (const auto& [name, v] : l.counters)
      if (std::find(counter_names.begin(), counter_names.end(), name) == counter_names.end()) counter_names.push_back(name);
  for (const auto& name : counter_names) t.columns.push_back({"counter_" + name, name, Unit::Count, true});
  for (const auto& l : m.layers) {
    const bool ran = l.step.status == StepStatus::Executed;
    std::string status(step_status_name(l.step.status));
    if (!l.step.reason.empty() && l.step.status == StepStatus::NotExecuted) status += ": " + l.step.reason;
    if (l.step.synthetic_inputs) status += " (inputs synthetic)";
    std::vector<Cell> row{Cell::text(l.step.name), Cell::text(l.step.op), Cell::text(l.op_class), Cell::text(status),
                          Cell::text(l.step.kernel),
                          ran ? seconds(l.forward) : Cell::empty(Unit::Second),
                          ran && l.forward.samples ? Cell::real(l.forward.min_s, Unit::Second) : Cell::empty(Unit::Second),
                          ran && l.forward.samples ? Cell::real(100 * l.forward.spread, Unit::Percent) : Cell::empty(),
                          Cell::count(ran ? l.forward.samples : 0)};
    if (m.train) row.push_back(seconds(l.backward));
    const bool costed = l.cost_known;
    row.insert(row.end(), {costed ? Cell::count(l.flops, Unit::Flop) : Cell::empty(Unit::Flop),
                           costed ? Cell::count(l.bytes, Unit::Byte) : Cell::empty(Unit::Byte),
                           costed ? Cell::count(l.bytes_written, Unit::Byte) : Cell::empty(Unit::Byte),
                           positive(l.gflops_per_s, Unit::None), positive(l.gbytes_per_s, Unit::None),
                           positive(l.roofline_gflops_per_s, Unit::None), positive(l.roofline_percent, Unit::Percent),
                           l.roofline_level.empty() ? Cell::empty() : Cell::text(l.roofline_level),
                           positive(l.estimated_time_s, Unit::Second)});
    for (const auto& name : counter_names) {
      auto it = std::find_if(l.counters.begin(), l.counters.end(), [&](const auto& c) { return c.first == name; });
      row.push_back(it == l.counters.end() ? Cell::empty() : Cell::count(it->second));
    }
    t.add_row(std::move(row));
  }
  return t;
}

// The end-to-end program's steps and notes (when it was measured), after end_to_end_blocks().
void add_end_to_end(Document& doc, const ModelMeasurement& m) {
  if (!m.end_to_end) return;
  const EndToEndMeasurement& e = *m.end_to_end;
  for (auto& b : end_to_end_blocks(m)) doc.blocks.push_back(std::move(b));
  Table steps{"end_to_end_steps", "Steps of the end-to-end program (median per step)", {}, {}, {}};
  steps.columns = {{"name", "step", Unit::None},
                   {"op", "op", Unit::None},
                   {"kernel", "kernel", Unit::None},
                   {"fused_nodes", "fused nodes", Unit::Count},
                   {"time_s", "time", Unit::Second}};
  for (const auto& l : e.layers)
    if (l.step.status == StepStatus::Executed)
      steps.add_row({Cell::text(l.step.name), Cell::text(l.step.op), Cell::text(l.step.kernel),
                     Cell::count(static_cast<Count>(l.step.fused_nodes.size())),
                     Cell::real(l.forward.median_s, Unit::Second)});
  doc.blocks.push_back(std::move(steps));
  for (const auto& note : e.notes)  // the per-layer run's notes are there already
    if (std::find(doc.notes.begin(), doc.notes.end(), note) == doc.notes.end()) doc.notes.push_back(note);
  doc.extra["end_to_end_time_s"] = e.total.median_s;
}

}  // namespace

std::vector<Block> end_to_end_blocks(const ModelMeasurement& m) {
  if (!m.end_to_end) return {};
  const EndToEndMeasurement& e = *m.end_to_end;
  Fields f{"end_to_end", "End-to-end program (fused post-ops, folded BatchNorm, shared buffers)", {}};
  f.add("end_to_end_time_s", "forward time (median)", Cell::real(e.total.median_s, Unit::Second))
      .add("end_to_end_min_s", "fastest pass", Cell::real(e.total.min_s, Unit::Second))
      .add("end_to_end_spread_percent", "spread (IQR / median)", Cell::real(100 * e.total.spread, Unit::Percent))
      .add("end_to_end_repeats", "timed repeats", Cell::count(e.total.samples))
      .add("end_to_end_samples_per_s", "throughput (samples/s)", Cell::real(e.samples_per_s))
      .add("end_to_end_steps", "executed steps", Cell::count(static_cast<Count>(e.steps)))
      .add("end_to_end_buffer_bytes", "buffers", Cell::count(e.buffer_bytes, Unit::Byte))
      .add("per_layer_time_s", "per-layer program (median)", Cell::real(m.total.median_s, Unit::Second))
      .add("layers_sum_s", "sum of per-layer medians", Cell::real(m.layers_sum_s, Unit::Second))
      .add("fusion_gain_percent", "gain over the per-layer program", Cell::real(e.gain_percent, Unit::Percent));
  Table t{"fusion_groups", "Fused steps (median per step) vs the same nodes run one by one", {}, {}, {}};
  t.columns = {{"name", "step", Unit::None},
               {"nodes", "nodes", Unit::None},
               {"fused_time_s", "fused", Unit::Second},
               {"per_layer_time_s", "per layer", Unit::Second},
               {"gain_percent", "gain", Unit::Percent}};
  for (const auto& grp : e.groups) {
    std::string nodes;
    for (const auto& n : grp.nodes) nodes += (nodes.empty() ? "" : "+") + n;
    t.add_row({Cell::text(grp.name), Cell::text(nodes), Cell::real(grp.fused_time_s, Unit::Second),
               Cell::real(grp.per_layer_time_s, Unit::Second), Cell::real(grp.gain_percent, Unit::Percent)});
  }
  return {std::move(f), std::move(t)};
}

Document measure_report(const Graph& g, const ModelMeasurement& m) {
  Document doc;
  doc.title = fmt::format("{} measured on this CPU ({}, batch {}, {} thread{})", g.name,
                          m.train ? "training step" : "inference", m.batch, m.threads, m.threads == 1 ? "" : "s");
  Fields f{"summary", "End to end", {}};
  const double overhead = m.total.median_s > 0 ? 100 * (m.total_timed.median_s - m.total.median_s) / m.total.median_s : 0;
  int not_executed = 0;
  for (const auto& l : m.layers) not_executed += l.step.status == StepStatus::NotExecuted;
  f.add("total_time_s", m.train ? "training step time (median)" : "forward time (median)", seconds(m.total))
      .add("total_min_s", "fastest pass", Cell::real(m.total.min_s, Unit::Second))
      .add("total_spread_percent", "spread (IQR / median)", Cell::real(100 * m.total.spread, Unit::Percent))
      .add("repeats", "timed repeats", Cell::count(m.total.samples))
      .add("samples_per_s", "throughput (samples/s)", Cell::real(m.samples_per_s))
      .add("timed_total_s", "pass with per-layer timers", seconds(m.total_timed))
      .add("timing_overhead_percent", "per-layer timing overhead", Cell::real(overhead, Unit::Percent))
      .add("layers_sum_s", "sum of layer medians", Cell::real(m.layers_sum_s, Unit::Second))
      .add("flops", "FLOPs per pass (executed, costed)", Cell::count(m.flops, Unit::Flop))
      .add("gflops_per_s", "achieved GFLOP/s",
           Cell::real(m.total.median_s > 0 ? to_double(m.flops) / m.total.median_s / 1e9 : 0))
      .add("buffer_bytes", "executor buffers", Cell::count(m.buffer_bytes, Unit::Byte))
      .add("peak_rss_bytes", "process peak RSS", Cell::count(m.peak_rss_bytes, Unit::Byte))
      .add("estimated_peak_bytes", m.train ? "estimated training peak" : "estimated inference peak",
           Cell::count(m.estimated_peak_bytes, Unit::Byte))
      .add("not_executed", "layers not executed", Cell::count(not_executed));
  if (m.train) f.add("update_time_s", "SGD update", seconds(m.update));
  doc.blocks.push_back(std::move(f));
  doc.blocks.push_back(layer_table(m));
  doc.notes = g.notes;
  doc.notes.insert(doc.notes.end(), m.notes.begin(), m.notes.end());
  if (not_executed > 0)
    doc.notes.push_back(fmt::format("{} layer(s) not executed (no kernel): their time is not in the totals", not_executed));
  // Timings whose spread (IQR / median) is above a half, as `ridge machine` flags them, say the CPU was shared
  // (steps under 20 us are left out: timer jitter alone spreads them).
  auto busy_stats = [](const measure::BenchStats& s) { return s.samples > 1 && s.median_s >= 20e-6 && s.spread > 0.5; };
  size_t busy = 0;
  for (const auto& l : m.layers)
    if (l.step.status == StepStatus::Executed && busy_stats(l.forward)) ++busy;
  std::vector<std::string> spread;
  if (busy > 0) spread.push_back(fmt::format("{} layer timing(s)", busy));
  if (busy_stats(m.total)) spread.push_back("the whole pass");
  if (m.end_to_end && busy_stats(m.end_to_end->total)) spread.push_back("the end-to-end program");
  if (!spread.empty())
    doc.notes.push_back(fmt::format("busy-machine: {} spread (IQR) above half their median (another process shared "
                                    "the CPU?): re-run on an idle machine before trusting these times",
                                    fmt::join(spread, ", ")));
  // A step faster than its roof says the roof is wrong for it (or the timing is): flagged, as roofline does.
  std::vector<std::string> above;
  for (const auto& l : m.layers)
    if (l.roofline_percent > 105) above.push_back(fmt::format("{} {:.0f} %", l.step.name, l.roofline_percent));
  if (!above.empty())
    doc.notes.push_back(fmt::format("above-roof: {} layer(s) measured faster than their roof ({}{}): the machine "
                                    "profile's bandwidth or peak for that level understates this CPU, or the timing "
                                    "was disturbed", above.size(), fmt::join(above.begin(), above.begin() + std::min<size_t>(above.size(), 4), ", "),
                                    above.size() > 4 ? ", ..." : ""));
  doc.extra["model"] = g.name;
  doc.extra["device"] = "cpu";
  doc.extra["batch"] = m.batch;
  doc.extra["threads"] = m.threads;
  doc.extra["total_time_s"] = m.total.median_s;
  add_end_to_end(doc, m);
  return doc;
}


ModelMeasurement measure_model(const Graph& g, const MeasureRequest& req, const std::function<void()>& starting) {
  std::vector<std::string> notes;
  std::optional<measure::MachineProfile> machine;
  if (req.machine_profile != "none") {
    std::string why;
    machine = measure::load_cached_profile(req.machine_profile.empty() ? measure::default_profile_path()
                                                                       : req.machine_profile,
                                           measure::detect_cpu(), true, &why);
    // A profile the user named must be there; the cached one is optional.
    if (!machine && !req.machine_profile.empty())
      throw Error(fmt::format("{}: cannot use this machine profile ({})", req.machine_profile, why));
    if (!machine) notes.push_back("no machine profile (" + why + "): run `ridge machine` once for the roofline columns");
  }
  MeasureOptions options = req.options;
  if (!req.model_file.empty()) options.exec.weights = read_onnx_weights(req.model_file, &notes);
  check_memory_fits(g, req.options.exec.train, std::nullopt);  // refuse before any progress line or allocation
  if (starting) starting();
  ModelMeasurement m = measure_graph(g, options);
  if (machine) apply_roofline(m, *machine);
  m.notes.insert(m.notes.end(), notes.begin(), notes.end());
  return m;
}

}  // namespace ridge::report
