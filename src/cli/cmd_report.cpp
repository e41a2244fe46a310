// ridge report: one self-contained HTML page with the summary, a sortable layer table, every chart, the
// prediction per device and, when asked, CPU measurements and ingested GPU profiles next to the estimates.
#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <iostream>
#include <map>

#include "commands.hpp"
#include "model_options.hpp"
#include "ridge/chart.hpp"
#include "ridge/cost.hpp"
#include "ridge/error.hpp"
#include "ridge/ingest.hpp"
#include "ridge/measure.hpp"
#include "ridge/predict.hpp"
#include "ridge/api.hpp"

namespace ridge::cli {
namespace {

using chart::ReportSection;
using report::Cell;
using report::Unit;

struct ReportOptions {
  std::string model, output;
  ModelOptions m;
  std::vector<std::string> devices, profiles, device_dirs;
  std::string sweep = "1,2,4,8,16,32,64";
  bool measure = false;
  bool force = false;  ///< use profiles whose file names say another model or batch
};

// Everything the sections share: the graph at the requested batch, its costs, and the table row of each layer.
struct Context {
  const ReportOptions& opt;
  Graph graph;
  ModelCost costs;
  MemoryEstimate memory;
  std::map<std::string, int> row_of;  // layer name -> row of the layer table
  std::vector<Device> devices;
  std::vector<Prediction> predictions;  // one per device
  std::vector<LayerWork> work;
};

int row(const Context& c, const std::string& name) {
  auto it = c.row_of.find(name);
  return it == c.row_of.end() ? -1 : it->second;
}

double flops_per_s(Count flops, double time_s) { return time_s > 0 ? to_double(flops) / time_s : NAN; }

chart::RoofDevice roof_of(const Device& d) {
  chart::RoofDevice r{d.id, {}, {}};
  if (auto fp32 = d.peak(Precision::FP32)) r.compute_flops_per_s.push_back({"FP32", *fp32});
  for (const auto& [p, rate] : d.peak_flops)
    if (p != Precision::FP32) {
      std::string name(precision_info(p).name);
      for (char& ch : name) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      r.compute_flops_per_s.push_back({name, rate});
    }
  if (d.bandwidth_bytes_per_s.count("dram")) r.memory_bytes_per_s.push_back({"DRAM", d.bandwidth_bytes_per_s.at("dram")});
  for (const auto& [level, bw] : d.bandwidth_bytes_per_s)
    if (level != "dram") r.memory_bytes_per_s.push_back({level, bw});
  return r;
}

Prediction predict_on(const Device& d, const std::vector<LayerWork>& work, int64_t batch) {
  PredictOptions p;
  p.peak_flop_per_s = d.require_peak(Precision::FP32);
  p.bandwidth_bytes_per_s = d.dram_bandwidth();
  p.kernel_launch_s = d.kernel_launch_s;
  p.batch = batch;
  if (auto cal = builtin_calibration(d.id, Precision::FP32)) p.calibration = *cal;
  return predict(work, p);
}

void summary_sections(Context& c, chart::ReportData& data) {
  report::Document doc = report::summary_report(c.graph, report::SummaryOptions{});
  ReportSection summary{"summary", "Summary", {}, {}, {}};
  ReportSection layers{"layers", "Layers", {"Click a column header to sort; hover a chart point to find its row."}, {}, {}};
  for (auto& block : doc.blocks) {
    if (auto* t = std::get_if<report::Table>(&block); t && t->key == "layers") {
      int name_col = t->column("name");
      for (size_t r = 0; r < t->rows.size() && name_col >= 0; ++r)
        if (auto* s = std::get_if<std::string>(&t->rows[r][name_col].value)) c.row_of.emplace(*s, static_cast<int>(r));
      layers.blocks.push_back(std::move(block));
    } else {
      summary.blocks.push_back(std::move(block));
    }
  }
  data.notes.insert(data.notes.end(), doc.notes.begin(), doc.notes.end());
  data.sections.push_back(std::move(summary));
  data.sections.push_back(std::move(layers));
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
  return chart::layer_share_chart("Where the cost is: largest layers", shares, 15);
}

std::vector<chart::Chart> sweep_charts(const Context& c) {
  std::vector<int64_t> batches = parse_batch_list(c.opt.sweep, "--sweep");
  std::vector<chart::SweepSeries> flops{{"forward FLOPs (estimated)", {}, false}, {"forward + backward FLOPs (estimated)", {}, false}};
  std::vector<chart::SweepSeries> memory{{"inference peak (estimated)", {}, false}, {"training peak, SGD (estimated)", {}, false}};
  std::vector<chart::SweepSeries> time;
  for (const auto& d : c.devices) time.push_back({"predicted on " + d.id, {}, false});
  cli::ProgressMeter meter("report: sweep", batches.size());
  for (int64_t b : batches) {
    meter.next(fmt::format("batch {}", b));
    Graph g = load_model(c.opt.model, c.opt.m.load_options(b));
    ModelCost mc = estimate(g);
    MemoryEstimate mem = estimate_memory(g);
    double x = static_cast<double>(b);
    flops[0].xy.push_back({x, to_double(mc.total.flops)});
    flops[1].xy.push_back({x, to_double(mc.total.flops + mc.total.bwd_flops())});
    memory[0].xy.push_back({x, to_double(mem.inference_peak_bytes)});
    memory[1].xy.push_back({x, to_double(mem.training_peak_bytes)});
    std::vector<LayerWork> work = layer_work(g, mc);
    for (size_t d = 0; d < c.devices.size(); ++d) time[d].xy.push_back({x, predict_on(c.devices[d], work, b).total_time_s});
  }
  chart::Axis batch{"Batch size"};
  std::vector<chart::Chart> out = {chart::sweep_chart("FLOPs against batch size", batch, {"FLOPs", "FLOP"}, flops),
                                   chart::sweep_chart("Memory against batch size", batch, {"Memory", "B"}, memory)};
  if (!time.empty()) out.push_back(chart::sweep_chart("Predicted time against batch size", batch, {"Time per batch", "s"}, time));
  return out;
}

void prediction_section(Context& c, chart::ReportData& data) {
  ReportSection s{"prediction", "Prediction", {}, {}, {}};
  if (c.devices.empty()) {
    s.paragraphs.push_back("No --device given: add --device NAME (see `ridge devices`) for a roofline and a predicted time.");
    data.sections.push_back(std::move(s));
    return;
  }
  report::Table t;
  t.key = "prediction";
  t.title = "PALEO-style forward time at FP32 peak and DRAM bandwidth";
  t.columns = {{"device", "device"}, {"time_s", "forward time", Unit::Second}, {"samples_per_s", "samples/s", Unit::None},
               {"time_kind", "time kind", Unit::None},
               {"peak_flop_per_s", "FP32 peak", Unit::FlopPerSecond}, {"dram_bytes_per_s", "DRAM bandwidth", Unit::BytePerSecond},
               {"uncosted_layers", "uncosted layers", Unit::Count}};
  for (size_t d = 0; d < c.devices.size(); ++d) {
    const Prediction& p = c.predictions[d];
    t.add_row({Cell::text(c.devices[d].id), Cell::real(p.total_time_s, Unit::Second), Cell::real(p.samples_per_s),
               Cell::text(p.calibrated ? "calibrated" : "upper bound (uncalibrated)"),
               Cell::real(c.devices[d].require_peak(Precision::FP32), Unit::FlopPerSecond),
               Cell::real(c.devices[d].dram_bandwidth(), Unit::BytePerSecond), Cell::count(p.uncosted_layers)});
  }
  s.blocks.push_back(std::move(t));
  data.sections.push_back(std::move(s));
}

void measurement_section(Context& c, chart::ReportData& data, std::vector<chart::RoofPoint>& roof) {
  ReportSection s{"measurements", "Measured on this CPU", {}, {}, {}};
  cli::progress("report: measuring every layer on this CPU (oneDNN)");
  MeasureOptions mo;
  mo.max_seconds = 10;
  ModelMeasurement m = measure_graph(c.graph, mo);
  report::Fields f{"measured", "End to end", {}};
  f.add("time_s", "forward time (median)", Cell::real(m.total.median_s, Unit::Second));
  f.add("samples_per_s", "samples/s", Cell::real(m.samples_per_s));
  f.add("samples", "timed repeats", Cell::count(m.total.samples));
  s.blocks.push_back(std::move(f));
  const Prediction* machine = nullptr;
  for (size_t d = 0; d < c.devices.size(); ++d)
    if (c.devices[d].id == "machine") machine = &c.predictions[d];
  std::map<std::string, double> predicted;
  if (machine)
    for (const auto& l : machine->layers) predicted[l.name] = l.time_s;
  std::vector<chart::EstimateVsMeasured> scatter;
  for (const auto& l : m.layers) {
    if (l.step.status != StepStatus::Executed || l.forward.median_s <= 0) continue;
    if (l.cost_known && l.flops > 0)
      roof.push_back({"measured on this CPU", l.step.name, to_double(l.flops) / std::max(1.0, to_double(l.bytes)),
                      flops_per_s(l.flops, l.forward.median_s), "", row(c, l.step.name)});
    if (auto it = predicted.find(l.step.name); it != predicted.end() && it->second > 0)
      scatter.push_back({l.step.name, it->second, l.forward.median_s, row(c, l.step.name)});
  }
  if (!scatter.empty())
    s.charts.push_back(chart::scatter_chart("Layer time: predicted vs measured", {"Predicted", "s"}, {"Measured", "s"}, scatter));
  else
    s.paragraphs.push_back("Add --device machine (after `ridge machine`) to compare predicted and measured layer times.");
  for (const auto& n : m.notes) s.paragraphs.push_back(n);
  data.sections.push_back(std::move(s));
}

void profile_section(const Context& c, chart::ReportData& data) {
  ReportSection s{"profiles", "Ingested profiles", {}, {}, {}};
  std::vector<ingest::Profile> parts;
  // Profiles of another model or batch, or several profiles of different models, are refused (--force overrides).
  const RunIdentity expected{c.graph.name, "", c.opt.m.batch, ""};
  std::vector<std::string> forced;
  for (size_t i = 0; i < c.opt.profiles.size(); ++i) {
    const std::string& f = c.opt.profiles[i];
    const RunIdentity id = identity_from_file_name(f);
    auto more = check_run_matches(f, id, expected, c.opt.force);
    forced.insert(forced.end(), more.begin(), more.end());
    for (size_t k = 0; k < i; ++k) {
      more = check_run_matches(f, id, identity_from_file_name(c.opt.profiles[k]), c.opt.force);
      for (auto& line : more) line += " (as in " + c.opt.profiles[k] + ")";
      forced.insert(forced.end(), more.begin(), more.end());
    }
    parts.push_back(ingest::read_file(f));
  }
  for (const auto& line : forced) s.paragraphs.push_back(line);
  ingest::Profile p = ingest::combine(std::move(parts));
  ingest::derive(p);
  ingest::Totals t = ingest::totals(p);
  report::Table side;
  side.key = "profile_vs_estimate";
  side.title = "Profile next to the estimate (the profile may cover more or fewer passes than one forward)";
  side.columns = {{"quantity", "quantity"}, {"estimated", "estimated"}, {"measured", "measured"}, {"ratio", "measured / estimated", Unit::Ratio}};
  auto ratio = [](std::optional<Count> m, Count e) { return m && e > 0 ? Cell::real(to_double(*m) / to_double(e), Unit::Ratio) : Cell::empty(Unit::Ratio); };
  auto opt_count = [](std::optional<Count> v, Unit u) { return v ? Cell::count(*v, u) : Cell::empty(u); };
  side.add_row({Cell::text("FLOPs"), Cell::count(c.costs.total.flops, Unit::Flop), opt_count(t.sum.flops(), Unit::Flop),
                ratio(t.sum.flops(), c.costs.total.flops)});
  side.add_row({Cell::text("DRAM bytes"), Cell::count(c.costs.total.bytes(), Unit::Byte), opt_count(t.sum.dram_bytes, Unit::Byte),
                ratio(t.sum.dram_bytes, c.costs.total.bytes())});
  side.add_row({Cell::text("kernels"), Cell::empty(), Cell::count(t.kernels), Cell::empty(Unit::Ratio)});
  side.add_row({Cell::text("kernel time"), Cell::empty(Unit::Second),
                t.kernel_time_s ? Cell::real(*t.kernel_time_s, Unit::Second) : Cell::empty(Unit::Second), Cell::empty(Unit::Ratio)});
  s.blocks.push_back(std::move(side));
  for (const auto& w : p.warnings) s.paragraphs.push_back("warning: " + w.message);
  for (const auto& n : p.notes) s.paragraphs.push_back(n);
  data.sections.push_back(std::move(s));
}

void run_report(const ReportOptions& o) {
  if (o.output.empty()) throw UsageError("-o FILE.html is required");
  Context c{o, load_model(o.model, o.m.load_options()), {}, {}, {}, {}, {}, {}};
  c.costs = estimate(c.graph);
  c.memory = estimate_memory(c.graph);
  c.work = layer_work(c.graph, c.costs);
  if (!o.devices.empty()) {
    std::vector<Device> known = load_devices(o.device_dirs);
    for (const auto& name : o.devices) c.devices.push_back(find_device(known, name));
  }
  for (const auto& d : c.devices) c.predictions.push_back(predict_on(d, c.work, o.m.batch));

  chart::ReportData data;
  data.title = "ridge report: " + c.graph.name;
  data.subtitle.push_back(fmt::format("model {}, batch {}, {} nodes", o.model, o.m.batch, c.graph.nodes.size()));
  if (!c.devices.empty()) {
    std::string names;
    for (const auto& d : c.devices) names += (names.empty() ? "" : ", ") + d.name;
    data.subtitle.push_back("devices: " + names);
  }
  summary_sections(c, data);

  std::vector<chart::RoofPoint> roof;
  for (size_t d = 0; d < c.devices.size(); ++d)
    for (size_t i = 0; i < c.work.size() && i < c.predictions[d].layers.size(); ++i) {
      const LayerWork& w = c.work[i];
      if (!w.costed || w.flops <= 0 || w.bytes <= 0) continue;
      roof.push_back({"predicted on " + c.devices[d].id, w.name, to_double(w.flops) / to_double(w.bytes),
                      flops_per_s(w.flops, c.predictions[d].layers[i].forward.time_s), "", row(c, w.name)});
    }
  prediction_section(c, data);
  if (o.measure) measurement_section(c, data, roof);
  if (!o.profiles.empty()) profile_section(c, data);

  ReportSection charts{"charts", "Charts", {}, {}, {}};
  if (!c.devices.empty()) {
    std::vector<chart::RoofDevice> roofs;
    for (const auto& d : c.devices) roofs.push_back(roof_of(d));
    charts.charts.push_back(chart::roofline_chart("Layers on the roofline", roofs, roof));
  } else {
    charts.paragraphs.push_back("Roofline not drawn: no --device given.");
  }
  charts.charts.push_back(share_chart(c));
  for (auto& ch : sweep_charts(c)) charts.charts.push_back(std::move(ch));
  data.sections.insert(data.sections.begin() + 2, std::move(charts));  // after summary and layers

  if (!o.measure) data.notes.push_back("No measurements: add --measure to time every layer on this CPU.");
  if (o.profiles.empty()) data.notes.push_back("No GPU profile: add --profile FILE (ncu, nsys, nvprof or torch.profiler output).");
  chart::write_html(data, o.output);
  int n_charts = 0;
  for (const auto& s : data.sections) n_charts += static_cast<int>(s.charts.size());
  std::cout << fmt::format("report written to {} ({} layers, {} charts, {} sections)\n", o.output, c.row_of.size(), n_charts,
                           data.sections.size());
}

}  // namespace

CLI::App* add_report_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("report", "One self-contained HTML report: summary, sortable layer table, charts, prediction");
  auto o = std::make_shared<ReportOptions>();
  cmd->add_option("MODEL", o->model, "Zoo name (see `ridge list`) or path to an .onnx file")->required();
  o->m.add_to(cmd);
  cmd->add_option("--device,-d", o->devices, "Device(s) for the roofline and prediction (see `ridge devices`); repeatable");
  cmd->add_option("--devices-dir,--devices", o->device_dirs, "Extra folder(s) of device JSON files");
  cmd->add_flag("--measure", o->measure, "Also time every layer on this CPU and show it next to the estimates");
  cmd->add_option("--profile", o->profiles, "GPU profiler output(s) to show next to the estimates; repeatable")->type_name("FILE");
  cmd->add_flag("--force", o->force, "Use profiles whose file names name another model, batch or GPU (the report says so)");
  cmd->add_option("--sweep", o->sweep, "Batch sizes of the sweep charts: 1,2,4 or start:stop:step")->capture_default_str();
  cmd->add_option("-o,--output", o->output, "Where to write the HTML report")->type_name("FILE.html")->required();
  cmd->callback([o] { run_report(*o); });
  return cmd;
}

}  // namespace ridge::cli
