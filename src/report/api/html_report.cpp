// The HTML report of `ridge report` (and ridge.report in Python): one self-contained page that answers first (time
// per iteration, bound, slowest layers, time by op group, memory), then one roofline per device, batch sweeps, the
// layer table grouped by module, and, when asked, CPU measurements and ingested GPU profiles next to the estimates.
// With ReportRequest::serve, an LLM's serving on each device instead.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "ridge/api.hpp"
#include "ridge/chart.hpp"
#include "ridge/cost.hpp"
#include "ridge/error.hpp"
#include "ridge/headline.hpp"
#include "ridge/ingest.hpp"
#include "ridge/llm_analysis.hpp"
#include "ridge/measure.hpp"
#include "ridge/precision_mode.hpp"
#include "ridge/predict.hpp"
#include "roofs.hpp"

namespace ridge::report {
namespace {

using chart::ReportSection;

// Everything the sections share: the graph at the requested batch, its costs, and the table row of each layer.
struct Context {
  const ReportRequest& req;
  PrecisionMode mode;
  LoadOptions load;
  Graph graph;
  ModelCost costs{};
  MemoryEstimate memory{};
  std::map<std::string, int> row_of{};  // layer name -> row of the layer table
  std::vector<Device> devices{};
  std::vector<Prediction> predictions{};  // one per device
  std::vector<std::vector<std::string>> calibration_flags{};  // per device: its calibration's sanity flags
  std::vector<std::string> calibration_ceilings{};  // per device: its measured ceiling's note, scaled fit or bound ("")
  std::vector<LayerWork> work{};
  std::optional<ModelMeasurement> measured{};
  std::string scenario{};  // "resnet50, batch 8, amp-bf16, training"
};

int row(const Context& c, const std::string& name) {
  auto it = c.row_of.find(name);
  return it == c.row_of.end() ? -1 : it->second;
}

double flops_per_s(Count flops, double time_s) { return time_s > 0 ? to_double(flops) / time_s : NAN; }

PredictSettings settings_for(int64_t batch, const PrecisionMode& mode, bool train, Optimizer optimizer) {
  PredictSettings s;
  s.precision = mode.compute;
  s.training = train;
  s.bytes_per_param = mode.weight_bytes;
  s.optimizer = optimizer;
  s.batch = batch;
  return s;
}

Prediction predict_on(const Device& d, const std::vector<LayerWork>& work, int64_t batch, const PrecisionMode& mode,
                      bool train, Optimizer optimizer) {
  return predict(work, predict_options(d, settings_for(batch, mode, train, optimizer)));
}

std::string time_kind(const Prediction& p) { return std::string(time_kind_label(p.kind)); }

// The headline's runs: one per device (predicted), then this CPU (measured) when --measure.
std::vector<headline::Run> runs_of(const Context& c) {
  std::vector<headline::Run> runs;
  for (size_t d = 0; d < c.devices.size(); ++d) {
    const Prediction& p = c.predictions[d];
    headline::Run r{c.devices[d].id, false, time_kind(p), p.total_time_s, p.samples_per_s, "", {}};
    r.time_kind_key = time_kind_key(p.kind);
    for (const auto& l : p.layers)
      r.layers.push_back({l.name, l.op_class, l.costed ? l.time_s : NAN, l.costed ? std::string(bound_name(l.bound)) : ""});
    // Training: the optimizer's step is part of the iteration, so the groups add up to the headline time.
    if (p.update_s > 0) r.layers.push_back({"weight update (optimizer step)", "OptimizerStep", p.update_s, "memory"});
    runs.push_back(std::move(r));
  }
  if (c.measured) {
    const ModelMeasurement& m = *c.measured;
    headline::Run r{"this CPU", true,
                    fmt::format("measured: median of {}, fp32, {} thread{}", m.total.samples, m.threads, m.threads == 1 ? "" : "s"),
                    m.total.median_s, m.samples_per_s, "", {}};
    r.time_kind_key = "measured";
    for (const auto& l : m.layers)
      if (l.step.status == StepStatus::Executed)
        r.layers.push_back({l.step.name, l.op_class, l.forward.median_s + (m.train ? l.backward.median_s : 0.0), ""});
    runs.push_back(std::move(r));
  }
  return runs;
}

headline::MemoryParts memory_parts(const MemoryEstimate& m, bool train) {
  headline::MemoryParts parts;
  parts.weights = m.param_bytes + m.buffer_bytes + m.master_bytes;
  if (train) {
    parts.gradients = m.grad_bytes;
    parts.optimizer = m.optimizer_bytes;
    parts.activations = m.saved_bytes;
  } else {
    parts.activations = m.inference_peak_bytes;
  }
  return parts;
}

std::vector<headline::MemoryLimit> memory_limits(const std::vector<Device>& devices) {
  std::vector<headline::MemoryLimit> out;
  for (const auto& d : devices) out.push_back({d.id, d.memory_bytes});
  return out;
}

// The summary (totals, memory) and the layer table, grouped by module, with predicted and measured time per layer.
void summary_sections(Context& c, chart::ReportData& data) {
  SummaryOptions so;
  so.optimizer = parse_optimizer(c.req.optimizer).value_or(Optimizer::SGD);
  so.precision = c.mode;
  Document doc = summary_report(c.graph, so);
  ReportSection summary{"summary", "Summary", {}, {}, {}};
  ReportSection layers{"layers", fmt::format("Layers by module (depth {})", c.req.depth),
                       {"Click a module to open it; click a column header to sort; hover a chart point to find its row."},
                       {}, {}};
  layers.group_by = "module";
  layers.group_totals = {"params", "flops"};
  const std::vector<headline::Run> runs = runs_of(c);
  std::vector<std::map<std::string, double>> time_of;
  for (const auto& r : runs) {
    time_of.emplace_back();
    for (const auto& l : r.layers) time_of.back()[l.name] = l.time_s;
  }
  for (auto& block : doc.blocks) {
    if (auto* t = std::get_if<Table>(&block); t && t->key == "layers") {
      const int name_col = t->column("name");
      // A MoE layer's experts (and any module repeated at least 32 times below a layer) become one row each
      // (headline::collapse_repeats): one row per node made a 37 MB page of Qwen3-30B-A3B's 65,817 nodes.
      std::vector<std::string> names;
      for (const auto& cells : t->rows)
        if (const auto* s = name_col >= 0 ? std::get_if<std::string>(&cells[name_col].value) : nullptr) names.push_back(*s);
        else names.emplace_back();
      const std::vector<std::string> keys = headline::repeat_keys(names);
      t->columns.insert(t->columns.begin() + 1, Column{"module", "module"});
      for (const auto& r : runs) {
        const std::string key = (r.measured ? "measured_s." : "predicted_s.") + r.name;
        t->columns.push_back({key, (r.measured ? "measured on " : "predicted on ") + r.name, Unit::Second});
        layers.group_totals.push_back(key);
      }
      for (size_t r = 0; r < t->rows.size(); ++r) {
        auto& cells = t->rows[r];
        const auto* s = name_col >= 0 ? std::get_if<std::string>(&cells[name_col].value) : nullptr;
        const bool total = std::find(t->total_rows.begin(), t->total_rows.end(), static_cast<int>(r)) != t->total_rows.end();
        cells.insert(cells.begin() + 1, s && !total ? Cell::text(headline::module_of(keys[r], c.req.depth)) : Cell::empty());
        for (const auto& times : time_of) {
          auto it = s ? times.find(*s) : times.end();
          cells.push_back(it != times.end() && std::isfinite(it->second) ? Cell::real(it->second, Unit::Second)
                                                                          : Cell::empty(Unit::Second));
        }
      }
      std::vector<int> merged_row;
      const size_t before = t->rows.size();
      *t = headline::collapse_repeats(*t, t->column("name"), &merged_row);
      if (t->rows.size() < before)
        layers.paragraphs.push_back(fmt::format(
            "Repeated instances (a module numbered 32 times or more inside a layer, such as a MoE layer's experts) are "
            "one row each, marked (×N), with their numbers summed: {} rows for {} nodes. `ridge summary MODEL --format "
            "csv` lists every node.", t->rows.size() - t->total_rows.size(), before - t->total_rows.size()));
      for (size_t r = 0; r < names.size(); ++r)
        if (!names[r].empty() && std::find(t->total_rows.begin(), t->total_rows.end(), merged_row[r]) == t->total_rows.end())
          c.row_of.emplace(names[r], merged_row[r]);
      layers.blocks.push_back(std::move(block));
    } else {
      summary.blocks.push_back(std::move(block));
    }
  }
  data.notes.insert(data.notes.end(), doc.notes.begin(), doc.notes.end());
  data.sections.push_back(std::move(layers));
  data.sections.push_back(std::move(summary));
}

// Estimated points (hollow) of device d's layers; measured points (filled) go on the CPU's chart only.
// Repeated instances (a MoE layer's experts, headline::repeat_keys) are one point, as they are one table row: their
// FLOPs, bytes and time summed.
std::vector<chart::RoofPoint> predicted_points(const Context& c, size_t d) {
  const std::string series = c.predictions[d].calibrated ? "predicted (calibrated)" : "predicted (uncalibrated)";
  struct Group {
    std::string first;  // the first member's name: the table row
    Count flops = 0, bytes = 0;
    double time_s = 0;
    size_t members = 0;
  };
  std::vector<std::string> names;
  for (const LayerWork& w : c.work) names.push_back(w.name);
  const std::vector<std::string> keys = headline::repeat_keys(names);
  std::vector<std::string> order;
  std::map<std::string, Group> groups;
  for (size_t i = 0; i < c.work.size() && i < c.predictions[d].layers.size(); ++i) {
    const LayerWork& w = c.work[i];
    if (!w.costed || w.flops <= 0 || w.bytes <= 0) continue;
    auto [it, added] = groups.try_emplace(keys[i]);
    if (added) order.push_back(keys[i]), it->second.first = w.name;
    it->second.flops += w.flops;
    it->second.bytes += w.bytes;
    it->second.time_s += c.predictions[d].layers[i].forward.time_s;
    ++it->second.members;
  }
  std::vector<chart::RoofPoint> roof;
  for (const std::string& key : order) {
    const Group& g = groups[key];
    const std::string label = g.members == 1 ? g.first : fmt::format("{} (×{})", key, g.members);
    roof.push_back({series, label, to_double(g.flops) / to_double(g.bytes), flops_per_s(g.flops, g.time_s), "",
                    row(c, g.first), false});
  }
  return roof;
}

std::vector<chart::RoofPoint> measured_points(const Context& c) {
  std::vector<chart::RoofPoint> roof;
  if (!c.measured) return roof;
  for (const auto& l : c.measured->layers)
    if (l.step.status == StepStatus::Executed && l.forward.median_s > 0 && l.cost_known && l.flops > 0)
      roof.push_back({"measured (forward)", l.step.name, to_double(l.flops) / std::max(1.0, to_double(l.bytes)),
                      flops_per_s(l.flops, l.forward.median_s), "", row(c, l.step.name), true});
  return roof;
}

// One roofline per device, side by side on one y range; this CPU's measurements on the CPU's chart only.
ReportSection roofline_section(const Context& c) {
  ReportSection s{"roofline", "Roofline", {}, {}, {}};
  s.charts_side_by_side = true;
  bool cpu_drawn = false;
  for (size_t d = 0; d < c.devices.size(); ++d) {
    std::vector<chart::RoofPoint> points = predicted_points(c, d);
    const bool cpu = c.devices[d].kind == "cpu";
    if (cpu && !cpu_drawn) {
      auto m = measured_points(c);
      points.insert(points.end(), m.begin(), m.end());
      cpu_drawn = true;
    }
    s.charts.push_back(chart::roofline_chart(fmt::format("{}: {}", c.devices[d].id, c.scenario),
                                             {roof_device(c.devices[d], c.mode.compute)}, points, 8));
  }
  if (c.measured && !cpu_drawn) {
    s.charts.push_back(chart::roofline_chart(fmt::format("this CPU (measured, fp32): {}", c.scenario), {}, measured_points(c), 8));
    s.paragraphs.push_back("This CPU's chart has no roofs: run `ridge machine` and add -d machine to draw them.");
  }
  if (s.charts.empty()) s.paragraphs.push_back("No --device given: add -d NAME (see `ridge devices`) for a roofline.");
  chart::share_y_range(s.charts);
  s.paragraphs.push_back("Hollow marks are predicted, filled marks measured. Ceilings: compute per precision (the report's "
                         "first), memory per level; the diamond is the ridge point of the first of each.");
  return s;
}

chart::Chart share_chart(const Context& c) {
  chart::LayerShares shares{{}, {"FLOPs", "params", "output memory"}, {{}, {}, {}}};
  if (!c.predictions.empty()) shares.metrics.push_back("time on " + c.devices[0].id), shares.values.emplace_back();
  std::map<std::string, double> time_of;
  if (!c.predictions.empty())
    for (const auto& l : c.predictions[0].layers) time_of[l.name] = l.costed ? l.time_s : NAN;
  for (size_t i = 0; i < c.graph.nodes.size(); ++i) {
    const NodeCost& nc = c.costs.nodes[i];
    bool ok = nc.status == CostStatus::Ok;
    shares.layers.push_back(c.graph.nodes[i].name);
    shares.values[0].push_back(ok ? to_double(nc.cost.flops) : NAN);
    shares.values[1].push_back(to_double(nc.cost.params));
    shares.values[2].push_back(to_double(c.memory.output_bytes[i]));
    if (shares.values.size() > 3) {
      auto it = time_of.find(c.graph.nodes[i].name);
      shares.values[3].push_back(it == time_of.end() ? NAN : it->second);
    }
  }
  return chart::layer_share_chart("Largest layers: " + c.scenario, shares, 15);
}

// Time per iteration, samples/s, memory (with each device's capacity) and FLOPs against batch.
std::vector<chart::Chart> batch_sweep_charts(const Context& c) {
  const bool train = c.req.train;
  // A file that fixes its batch sweeps nothing but that batch.
  const std::vector<int64_t> batches = c.graph.fixed_batch ? std::vector<int64_t>{*c.graph.fixed_batch} : c.req.sweep;
  std::vector<chart::SweepSeries> flops{{"forward FLOPs (estimated)", {}, false}, {"forward + backward FLOPs (estimated)", {}, false}};
  std::vector<chart::SweepSeries> memory{{train ? "training peak (estimated)" : "inference peak (estimated)", {}, false}};
  std::vector<chart::SweepSeries> time, rate;
  for (const auto& d : c.devices) {
    time.push_back({d.id + " (predicted)", {}, false});
    rate.push_back({d.id + " (predicted)", {}, false});
  }
  const Optimizer optimizer = parse_optimizer(c.req.optimizer).value_or(Optimizer::SGD);
  for (size_t i = 0; i < batches.size(); ++i) {
    const int64_t b = batches[i];
    if (c.req.progress) c.req.progress("report: sweep", i, batches.size(), fmt::format("batch {}", b));
    LoadOptions lo = c.load;
    lo.batch = b;
    Graph g = load_source(c.req.model, lo);
    ModelCost mc = estimate(g);
    MemoryEstimate mem = estimate_memory(g, optimizer, param_storage(c.mode));
    double x = static_cast<double>(b);
    flops[0].xy.push_back({x, to_double(mc.total.flops)});
    flops[1].xy.push_back({x, to_double(mc.total.flops + mc.total.bwd_flops())});
    memory[0].xy.push_back({x, to_double(train ? mem.training_peak_bytes : mem.inference_peak_bytes)});
    std::vector<LayerWork> work = layer_work(g, mc);
    for (size_t d = 0; d < c.devices.size(); ++d) {
      const Prediction p = predict_on(c.devices[d], work, b, c.mode, train, optimizer);
      time[d].xy.push_back({x, p.total_time_s});
      rate[d].xy.push_back({x, p.samples_per_s});
    }
  }
  if (c.req.progress) c.req.progress("report: sweep", batches.size(), batches.size(), "");
  std::vector<chart::SweepLimit> limits;
  for (const auto& d : c.devices)
    if (d.memory_bytes > 0) limits.push_back({d.id + " memory " + format_bytes(to_double(d.memory_bytes)), to_double(d.memory_bytes)});
  const std::string what = fmt::format("{}, {}, {}", c.req.model.name, c.mode.name, train ? "training" : "inference");
  chart::Axis batch{"Batch size"};
  std::vector<chart::Chart> out;
  if (!time.empty()) {
    out.push_back(chart::sweep_chart("Time per iteration against batch: " + what, batch, {"Time per iteration", "s"}, time));
    out.push_back(chart::sweep_chart("Samples/s against batch: " + what, batch, {"Samples per second", "samples/s"}, rate));
  }
  out.push_back(chart::sweep_chart("Memory against batch: " + what, batch, {"Memory", "B"}, memory, limits));
  out.push_back(chart::sweep_chart("FLOPs against batch: " + what, batch, {"FLOPs", "FLOP"}, flops));
  return out;
}

void prediction_section(Context& c, chart::ReportData& data) {
  ReportSection s{"prediction", "Prediction", {}, {}, {}};
  if (c.devices.empty()) {
    s.paragraphs.push_back("No --device given: add --device NAME (see `ridge devices`) for a roofline and a predicted time.");
    data.sections.push_back(std::move(s));
    return;
  }
  Table t;
  t.key = "prediction";
  t.title = fmt::format("PALEO-style time per iteration at {} peak and DRAM bandwidth ({})", precision_label(c.mode.compute),
                        c.scenario);
  t.columns = {{"device", "device"}, {"forward_s", "forward", Unit::Second}, {"backward_s", "backward", Unit::Second},
               {"update_s", "weight update", Unit::Second}, {"time_s", "time per iteration", Unit::Second},
               {"samples_per_s", "samples/s", Unit::None}, {"time_kind", "time kind", Unit::None},
               {"peak_flop_per_s", "peak", Unit::FlopPerSecond}, {"dram_bytes_per_s", "DRAM bandwidth", Unit::BytePerSecond},
               {"uncosted_layers", "uncosted layers", Unit::Count}};
  for (size_t d = 0; d < c.devices.size(); ++d) {
    const Prediction& p = c.predictions[d];
    t.add_row({Cell::text(c.devices[d].id), Cell::real(p.forward_s, Unit::Second), Cell::real(p.backward_s, Unit::Second),
               Cell::real(p.update_s, Unit::Second), Cell::real(p.total_time_s, Unit::Second), Cell::real(p.samples_per_s),
               Cell::keyed(time_kind(p), std::string(time_kind_key(p.kind))), Cell::real(c.devices[d].require_peak(c.mode.compute), Unit::FlopPerSecond),
               Cell::real(c.devices[d].dram_bandwidth(), Unit::BytePerSecond), Cell::count(p.uncosted_layers)});
  }
  s.blocks.push_back(std::move(t));
  // The calibration's sanity flags (a fitted factor above the roof, a failed leave-one-out), as `predict` shows them.
  for (size_t d = 0; d < c.devices.size(); ++d)
    if (!c.calibration_flags[d].empty())
      data.notes.push_back(fmt::format("{}: flags {} (the prediction's calibration)", c.devices[d].id,
                                       fmt::join(c.calibration_flags[d], ", ")));
  for (const std::string& note : c.calibration_ceilings)
    if (!note.empty()) data.notes.push_back(note);
  data.sections.push_back(std::move(s));
}

void measure_on_cpu(Context& c) {
  if (c.req.progress)
    c.req.progress(fmt::format("report: measuring every layer on this CPU (oneDNN{})", c.req.train ? ", training step" : ""),
                   0, 0, "");
  MeasureOptions mo;
  mo.max_seconds = 10;
  mo.exec.train = c.req.train;
  mo.end_to_end = c.req.end_to_end;
  LoadOptions lo = c.load;
  lo.dtype = DType::F32;  // the executor runs fp32
  c.measured = measure_graph(lo.dtype == c.load.dtype ? c.graph : load_source(c.req.model, lo), mo);
}

void measurement_section(Context& c, chart::ReportData& data) {
  const ModelMeasurement& m = *c.measured;
  ReportSection s{"measurements", "Measured on this CPU", {}, {}, {}};
  Fields f{"measured", fmt::format("End to end ({}, fp32)", m.train ? "training step" : "forward"), {}};
  f.add("time_s", "time (median)", Cell::real(m.total.median_s, Unit::Second));
  f.add("samples_per_s", "samples/s", Cell::real(m.samples_per_s));
  f.add("samples", "timed repeats", Cell::count(m.total.samples));
  f.add("threads", "threads", Cell::count(m.threads));
  s.blocks.push_back(std::move(f));
  for (auto& b : end_to_end_blocks(m)) s.blocks.push_back(std::move(b));
  const Prediction* machine = nullptr;
  for (size_t d = 0; d < c.devices.size(); ++d)
    if (c.devices[d].kind == "cpu") machine = &c.predictions[d];
  std::map<std::string, double> predicted;
  if (machine)
    for (const auto& l : machine->layers) predicted[l.name] = l.forward.time_s;
  std::vector<chart::EstimateVsMeasured> scatter;
  for (const auto& l : m.layers) {
    if (l.step.status != StepStatus::Executed || l.forward.median_s <= 0) continue;
    if (auto it = predicted.find(l.step.name); it != predicted.end() && it->second > 0)
      scatter.push_back({l.step.name, it->second, l.forward.median_s, row(c, l.step.name)});
  }
  if (!scatter.empty())
    s.charts.push_back(chart::scatter_chart("Layer forward time, predicted vs measured: " + c.scenario, {"Predicted", "s"},
                                            {"Measured", "s"}, scatter));
  else
    s.paragraphs.push_back("Add --device machine (after `ridge machine`) to compare predicted and measured layer times.");
  for (const auto& n : m.notes) s.paragraphs.push_back(n);
  data.sections.push_back(std::move(s));
}

// The first screen: time per iteration per run, slowest layers, time by op group and memory.
ReportSection headline_section(const std::vector<headline::Run>& runs, const headline::MemoryParts& memory,
                               const std::vector<Device>& devices, const std::string& scenario, const std::string& rate_title,
                               size_t top, Document& json, const std::string& memory_title = "Memory") {
  ReportSection s{"headline", scenario, {}, {}, {}};
  s.headline = true;
  Table t = headline::runs_table(runs, rate_title);
  t.title = "How long";
  Table top_layers = headline::top_layers_table(runs, top);
  top_layers.title = runs.empty() ? "" : "Where the time goes: slowest on " + runs[0].name;
  Fields mem = headline::memory_fields(memory);
  mem.title = memory_title;
  json.blocks = {t, top_layers, headline::op_group_table(runs), mem};
  if (runs.empty()) {
    s.paragraphs.push_back("No device and no measurement: add -d NAME (see `ridge devices`) or --measure for a time.");
  } else {
    s.blocks.push_back(std::move(t));
    s.blocks.push_back(std::move(top_layers));
    s.charts.push_back(headline::op_group_chart("Time by op group: " + scenario, runs));
  }
  s.charts.push_back(headline::memory_chart(memory_title + ": " + scenario, memory, memory_limits(devices)));
  return s;
}

// The ingested profiles through ingest's one path (ingest_profile: read, refuse another model or batch, combine,
// derive; ingest_report: totals, per family, measured vs this report's estimate), shown in the HTML and kept in
// the JSON under "profile" with ingest's keys.
void profile_section(const Context& c, chart::ReportData& data, Document& json) {
  ReportSection s{"profiles", "Ingested profiles", {}, {}, {}};
  IngestRequest req;
  for (const auto& f : c.req.profiles) req.files.push_back({f, ""});
  req.model = c.graph.name;
  req.batch = c.load.batch;
  req.train = c.req.train;
  req.precision = c.req.precision;
  req.force = c.req.force;
  // A report for one GPU refuses a profile of another (ingest's check; --force makes it a note).
  const auto gpus = std::count_if(c.devices.begin(), c.devices.end(), [](const Device& d) { return d.kind == "gpu"; });
  if (gpus == 1)
    req.device = std::find_if(c.devices.begin(), c.devices.end(), [](const Device& d) { return d.kind == "gpu"; })->id;
  const ingest::Profile p = ingest_profile(req);
  Document d = ingest_report(p, req, false, &c.costs);
  // The profile's kernels on each GPU's roofline (and the hierarchical one when the profile has L1/L2 bytes).
  for (const Device& dev : c.devices)
    if (dev.kind == "gpu")
      for (auto& chart : kernel_roofline_charts(p, dev, c.mode.compute)) s.charts.push_back(std::move(chart));
  for (const auto& b : d.blocks) {
    const std::string& key = std::visit([](const auto& x) -> const std::string& { return x.key; }, b);
    if (key == "compare" || key == "totals" || key == "groups") s.blocks.push_back(b);
  }
  s.paragraphs = d.notes;
  nlohmann::json j = to_json(d);
  for (const char* meta : {"schema_version", "ridge_version", "inputs"}) j.erase(meta);
  json.extra["profile"] = std::move(j);
  data.sections.push_back(std::move(s));
}

void check_request(const ReportRequest& req) {
  if (req.depth < 0) throw UsageError("depth: expected 0 (every layer) or more");
  if (req.top < 1) throw UsageError("top: expected 1 or more slowest layers");
  if (!parse_optimizer(req.optimizer)) throw UsageError("optimizer: '" + req.optimizer + "' is not sgd, momentum or adam");
  for (int64_t b : req.sweep)
    if (b < 1) throw UsageError(fmt::format("sweep: batch {} is not a positive batch size", b));
}

HtmlReport model_report(const ReportRequest& req) {
  const PrecisionMode mode = require_precision_mode(req.precision);
  if (req.train) require_training_mode(mode);
  LoadOptions load = req.load;
  load.dtype = req.dtype.value_or(mode.activation_dtype);
  load.training = req.train;
  Context c{req, mode, load, load_source(req.model, load)};
  if (c.graph.fixed_batch) load.batch = c.load.batch = *c.graph.fixed_batch;  // a file of fixed shapes: its batch
  c.costs = estimate(c.graph);
  if (req.strict) require_complete(incompleteness(c.graph, c.costs), req.model.name);
  c.memory = estimate_memory(c.graph, *parse_optimizer(req.optimizer), param_storage(mode));
  c.work = layer_work(c.graph, c.costs);
  c.scenario = headline::scenario(c.graph.name, load.batch, std::string(mode.name), req.train);
  if (!req.devices.empty()) {
    std::vector<Device> known = load_devices(req.device_dirs);
    for (const auto& name : req.devices) c.devices.push_back(find_device(known, name));
  }
  for (const auto& d : c.devices) {
    const PredictOptions options =
        predict_options(d, settings_for(load.batch, mode, req.train, *parse_optimizer(req.optimizer)));
    c.predictions.push_back(predict(c.work, options));
    c.calibration_flags.push_back(calibration_flags(options.calibration));
    c.calibration_ceilings.push_back(options.calibration.fitted() ? options.calibration.ceiling_note
                                                                  : measured_ceiling_note(d, mode.compute));
  }
  if (req.end_to_end && !req.measure) throw UsageError("end-to-end: needs measure (--measure)");
  if (req.measure) measure_on_cpu(c);

  HtmlReport out;
  chart::ReportData& data = out.page;
  data.title = "ridge report: " + c.scenario;
  std::string names;
  for (const auto& d : c.devices) names += (names.empty() ? "" : ", ") + d.name;
  data.subtitle.push_back(fmt::format("{} nodes; {}{}; optimizer {}", c.graph.nodes.size(),
                                      names.empty() ? "no device" : "devices: " + names,
                                      req.measure ? "; measured on this CPU" : "", req.optimizer));
  chart::ReportData tables;  // the layer table first: it numbers the rows the charts' points link to
  summary_sections(c, tables);
  data.notes = std::move(tables.notes);
  data.sections.push_back(headline_section(headline::merge_repeats(runs_of(c)), memory_parts(c.memory, req.train), c.devices, c.scenario,
                                           "samples/s", req.top, out.doc));
  data.sections.push_back(roofline_section(c));
  ReportSection sweep{"sweep", "Batch sweep", {}, {}, {}};
  sweep.charts_in_grid = true;
  for (auto& ch : batch_sweep_charts(c)) sweep.charts.push_back(std::move(ch));
  data.sections.push_back(std::move(sweep));
  for (auto& section : tables.sections) data.sections.push_back(std::move(section));
  prediction_section(c, data);
  if (c.measured) measurement_section(c, data);
  if (!req.profiles.empty()) profile_section(c, data, out.doc);
  ReportSection shares{"shares", "Largest layers", {}, {}, {}};
  shares.charts.push_back(share_chart(c));
  data.sections.push_back(std::move(shares));

  if (!req.measure) data.notes.push_back("No measurements: add --measure to time every layer on this CPU.");
  if (req.profiles.empty()) data.notes.push_back("No GPU profile: add --profile FILE (ncu, nsys, nvprof or torch.profiler output).");
  out.doc.title = data.title;
  out.doc.notes = data.notes;
  if (c.measured)
    for (auto& b : end_to_end_blocks(*c.measured)) out.doc.blocks.push_back(std::move(b));
  out.doc.extra["scenario"] = {{"model", c.graph.name}, {"batch", load.batch}, {"precision", std::string(mode.name)},
                               {"training", req.train}, {"optimizer", req.optimizer}};
  return out;
}

HtmlReport serving_report(const ReportRequest& req) {
  if (req.devices.empty()) throw UsageError("serve: the serving report needs a device");
  const LlmConfig config = require_llm_model(req.model);
  ServeOptions so = req.serve_options;
  if (!req.precision.empty()) so = with_serving_precision(so, req.precision, req.serve_weights_given, req.serve_kv_given);
  std::vector<Device> known = load_devices(req.device_dirs);
  std::vector<Device> devices;
  std::vector<ServeResult> results;
  std::vector<headline::Run> runs;
  for (const auto& name : req.devices) {
    devices.push_back(find_device(known, name));
    devices.back().require_peak(so.compute, "--precision");  // the report's flag, before serve's own check
    // As `ridge serve`: the shipped LLM calibration of the device's family where there is one.
    const ServeOptions on_device = with_llm_calibration(devices.back(), so, "builtin");
    results.push_back(analyze_serving(config, devices.back(), on_device));
    const ServeResult& r = results.back();
    headline::Run run{devices.back().id, false, r.time_label, r.end_to_end_s, r.tokens_per_s, "", {}};
    run.time_kind_key = llm_time_kind_key(on_device.calibration);
    run.ttft_s = r.ttft_s;
    run.per_token_s = r.decode_time_per_token_s;
    for (const auto& op : r.ops)
      run.layers.push_back({op.phase + ": " + op.name, headline::llm_op_class(op.name, op.op_class), op.time_s, std::string(bound_name(op.bound))});
    runs.push_back(std::move(run));
  }
  const std::string scenario =
      fmt::format("{}, batch {}, prompt {}, generate {}, weights {}, KV {}, compute {}, serving{}", config.name, so.batch,
                  so.prompt, so.generate, so.weights.name, so.kv.name, precision_info(so.compute).name,
                  so.tp > 1 ? fmt::format(", TP {}", so.tp) : so.dp > 1 ? fmt::format(", DP {} (expert-parallel)", so.dp) : "");
  headline::MemoryParts memory;
  memory.weights = results[0].weights_bytes_per_gpu;
  memory.kv_cache = results[0].kv_cache_bytes_per_gpu;
  memory.state_cache = results[0].state_cache_bytes_per_gpu;
  memory.serving = true;
  HtmlReport out;
  chart::ReportData& data = out.page;
  data.title = "ridge report: " + scenario;
  const bool any_uncalibrated = std::any_of(results.begin(), results.end(), [](const ServeResult& r) {
    return !r.options.calibration;
  });
  data.subtitle.push_back(any_uncalibrated ? "per GPU; uncalibrated times are roofline upper bounds of speed"
                                           : "per GPU; times calibrated on measured operators (docs/llm.md)");
  data.sections.push_back(headline_section(runs, memory, devices, scenario, "tokens/s", req.top, out.doc,
                                           so.tp > 1 || so.dp > 1 ? "Memory per GPU" : "Memory"));
  // How the attention core and MoE experts were timed, as `ridge serve` notes it.
  for (size_t d = 0; d < devices.size(); ++d)
    if (const std::string a =
            results[d].attention_layers > 0 ? attention_kernel_note(results[d].options, devices[d].id) : "";
        !a.empty())
      data.sections.back().paragraphs.push_back(devices.size() > 1 ? devices[d].id + ": " + a : a);
  for (const ServeResult& r : results)
    if (const std::string n = ceiling_note(r.options); !n.empty()) data.sections.back().paragraphs.push_back(n);
  if (const std::string m = moe_experts_note(config.moe(), so.grouped_experts); !m.empty())
    data.sections.back().paragraphs.push_back(m);
  for (const std::string& n : {data_parallel_note(results[0]),
                               sparse_attention_note(config.index_topk, so.fused_attention, so.tp, true)})
    if (!n.empty()) data.sections.back().paragraphs.push_back(n);
  ReportSection roof{"roofline", "Roofline", {}, {}, {}};
  roof.charts_side_by_side = true;
  for (size_t d = 0; d < devices.size(); ++d) {
    std::vector<chart::RoofPoint> points;
    for (const auto& op : results[d].ops) {
      const Count b = op.bytes();
      if (op.flops <= 0 || b <= 0 || op.time_s <= 0 || op.name.find("allreduce") != std::string::npos ||
          op.name.rfind("all-to-all", 0) == 0)
        continue;
      points.push_back({op.phase + " ops (predicted)", op.name, to_double(op.flops) / to_double(b),
                        op.phase == "decode" ? to_double(op.flops) / op.time_s : flops_per_s(op.flops, op.time_s), "", -1, false});
    }
    roof.charts.push_back(chart::roofline_chart(fmt::format("{}: {}", devices[d].id, scenario), {roof_device(devices[d], so.compute)},
                                                points, 6));
  }
  chart::share_y_range(roof.charts);
  data.sections.push_back(std::move(roof));
  out.doc.title = data.title;
  out.doc.extra["scenario"] = {{"model", config.name}, {"batch", so.batch}, {"prompt", so.prompt}, {"generate", so.generate},
                               {"weights", so.weights.name}, {"kv", so.kv.name},
                               {"compute", std::string(precision_info(so.compute).name)}, {"serving", true},
                               {"attention", so.fused_attention ? (so.attention_kernel.empty() ? "fused" : so.attention_kernel)
                                                                : "eager"},
                               {"moe", so.grouped_experts ? "grouped" : "eager"}, {"mla", so.latent_kv ? "latent" : "hf"}};
  return out;
}

}  // namespace

HtmlReport html_report(const ReportRequest& request) {
  ReportRequest req = request;
  if (req.precision.empty() && !req.serve) req.precision = "fp32";
  check_request(req);
  return req.serve ? serving_report(req) : model_report(req);
}

}  // namespace ridge::report
