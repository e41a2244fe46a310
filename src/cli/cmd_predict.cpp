// `ridge predict MODEL --device D`: PALEO-style time per layer and per iteration, optionally calibrated and
// data-parallel.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "commands.hpp"
#include "ridge/chart.hpp"
#include "model_options.hpp"
#include "ridge/device.hpp"
#include "ridge/error.hpp"
#include "ridge/precision_mode.hpp"
#include "ridge/predict.hpp"

namespace ridge::cli {
namespace {

using report::Cell;
using report::Unit;

struct PredictArgs {
  std::string model, device, precision = "fp32", combine = "sum", calibration, level = "dram";
  std::string intra_node, inter_node, allreduce = "auto";
  std::optional<int> gpus_per_node, nics_per_node;
  double bucket_mib = 25;
  std::string allreduce_fit = "builtin";
  std::vector<std::string> device_dirs;
  ModelOptions m;
  int devices_count = 1;
  bool train = false, force = false;
  std::optional<double> ppp, ppp_mem, launch_s;
  std::optional<std::string> flops;
  std::string plot;
  OutputOptions out;
};

// A FLOP count from the command line: an integer ("15503000000", "15_503_000_000") or exact scientific
// notation ("15503e6").
Count flops_arg(const std::string& text) {
  try {
    return parse_count(text);
  } catch (const Error&) {
    size_t used = 0;
    double v = -1;
    try {
      v = std::stod(text, &used);
    } catch (const std::exception&) {
    }
    if (used == text.size() && v >= 0 && v < 1e30 && v == std::floor(v)) return static_cast<Count>(v);
    throw UsageError("--flops " + text + ": expected a FLOP count such as 15503000000 or 15503e6");
  }
}

report::Table layer_table(const Prediction& p, const std::vector<LayerWork>& work, bool train) {
  report::Table t{"layers", "Layers", {{"name", "layer", Unit::None}, {"op", "op", Unit::None},
                                      {"flops", "FLOPs", Unit::Flop}, {"bytes", "bytes", Unit::Byte},
                                      {"compute_s", "compute", Unit::Second}, {"memory_s", "memory", Unit::Second},
                                      {"overhead_s", "overhead", Unit::Second}}, {}, {}};
  t.columns.push_back({"calibration", "calibration", Unit::None});
  if (train) t.columns.push_back({"backward_s", "backward", Unit::Second});
  t.columns.push_back({"time_s", "time", Unit::Second});
  t.columns.push_back({"bound", "bound", Unit::None});
  for (size_t i = 0; i < p.layers.size(); ++i) {
    const LayerPrediction& l = p.layers[i];
    std::vector<Cell> row = {Cell::text(l.name), Cell::text(l.op_class)};
    if (!l.costed) {
      for (size_t c = 2; c + 1 < t.columns.size(); ++c) row.push_back(Cell::empty());
      row.push_back(Cell::text("not costed: " + l.reason));
    } else {
      row.push_back(Cell::count(work[i].flops, Unit::Flop));
      row.push_back(Cell::count(work[i].bytes, Unit::Byte));
      row.push_back(Cell::real(l.forward.compute_s, Unit::Second));
      row.push_back(Cell::real(l.forward.memory_s, Unit::Second));
      row.push_back(Cell::real(l.forward.overhead_s, Unit::Second));
      row.push_back(Cell::text(l.calibration == "fallback"       ? "uncalibrated class (fallback factors)"
                               : l.calibration == "uncalibrated" ? "upper bound (uncalibrated)"
                                                                 : l.calibration));
      if (train) row.push_back(Cell::real(l.backward.time_s, Unit::Second));
      row.push_back(Cell::real(l.time_s, Unit::Second));
      row.push_back(Cell::text(std::string(bound_name(l.bound))));
    }
    t.add_row(std::move(row));
  }
  return t;
}

report::Table bucket_table(const DataParallel& dp) {
  report::Table t{"buckets", "Gradient buckets (times from the start of backward)",
                  {{"bucket", "bucket", Unit::None}, {"bytes", "bytes", Unit::Byte}, {"layers", "layers", Unit::None},
                   {"ready_s", "ready", Unit::Second}, {"start_s", "start", Unit::Second},
                   {"allreduce", "algorithm", Unit::None}, {"allreduce_s", "all-reduce", Unit::Second},
                   {"end_s", "end", Unit::Second}}, {}, {}};
  for (size_t i = 0; i < dp.buckets.size(); ++i) {
    const GradientBucket& b = dp.buckets[i];
    t.add_row({Cell::count(static_cast<int64_t>(i + 1)), Cell::count(b.bytes, Unit::Byte), Cell::count(b.layers),
               Cell::real(b.ready_s, Unit::Second), Cell::real(b.start_s, Unit::Second),
               Cell::text(std::string(allreduce_name(b.allreduce.algorithm))),
               Cell::real(b.allreduce.time_s, Unit::Second), Cell::real(b.end_s, Unit::Second)});
  }
  return t;
}

void run(const PredictArgs& a) {
  const PrecisionMode mode = require_precision_mode(a.precision);
  const Precision* precision = &mode.compute;
  const auto combine = parse_combine(a.combine);
  if (!combine) throw UsageError("--combine " + a.combine + ": use sum (PALEO) or max (roofline)");
  const auto allreduce = parse_allreduce(a.allreduce);
  if (!allreduce) throw UsageError("--allreduce " + a.allreduce + ": use auto, ring, tree, hierarchical or ps");
  const Device d = find_device(load_devices(a.device_dirs), a.device);

  LoadOptions load = a.m.load_options();
  if (!a.m.dtype_given()) load.dtype = mode.activation_dtype;
  load.training = a.train;
  report::Document doc;
  PredictOptions opt;
  opt.peak_flop_per_s = d.require_peak(*precision);
  opt.bandwidth_bytes_per_s = d.bandwidth(a.level);
  opt.kernel_launch_s = a.launch_s.value_or(d.kernel_launch_s);
  opt.combine = *combine;
  opt.training = a.train;
  opt.batch = load.batch;
  std::vector<std::string> forced;
  if (a.calibration == "none") {
  } else if (!a.calibration.empty()) {
    opt.calibration = read_calibration(a.calibration);
    forced = check_calibration_applies(opt.calibration, d.id, *precision, a.force);
  } else if (!a.ppp && !a.ppp_mem) {
    if (auto builtin = builtin_calibration(d.id, *precision)) opt.calibration = *builtin;
  }
  if (a.ppp) opt.calibration.fallback.ppp = *a.ppp;
  if (a.ppp_mem) opt.calibration.fallback.ppp_mem = *a.ppp_mem, opt.calibration.fallback.ppp_write.reset();

  ModelWork work;
  if (a.flops) {
    // Hand-given FLOPs (e.g. a paper's table): one layer, no memory traffic, no launches.
    LayerWork w;
    w.name = a.model + " (--flops)";
    w.op_class = "model";
    w.flops = flops_arg(*a.flops);
    w.kernels = 0;
    w.bwd_input_flops = a.train ? w.flops : 0;
    w.bwd_weight_flops = a.train ? w.flops : 0;
    work.name = a.model;
    work.layers = {w};
    work.total.flops = w.flops;
    work.bytes_per_element = static_cast<int>(dtype_bytes(load.dtype));
    doc.notes.push_back("FLOPs from --flops: memory traffic and kernel launches are not modelled");
    if (a.train) doc.notes.push_back("--flops with --train: backward assumed 2x forward FLOPs, no weight update");
  } else {
    work = load_model_work(a.model, load);
    a.m.check(work.incomplete, a.model);
    mark_incomplete(doc, work.incomplete);
    doc.notes.insert(doc.notes.end(), work.notes.begin(), work.notes.end());
  }
  opt.bytes_per_param = mode.weight_bytes;
  const Prediction p = predict(work.layers, opt);
  const std::string kind = p.calibrated ? "calibrated" : "upper bound (uncalibrated)";
  std::vector<std::string> flags = calibration_flags(opt.calibration);
  flags.insert(flags.end(), forced.begin(), forced.end());

  doc.title = fmt::format("Predicted time of {} on {} ({}, batch {}, {})", work.name, d.id, a.precision, load.batch,
                          a.train ? "training iteration" : "inference");
  report::Fields s{"summary", "Summary", {}};
  s.add("model", "model", Cell::text(work.name));
  s.add("device", "device", Cell::text(d.id));
  s.add("precision", "precision", Cell::text(fmt::format("{} ({} peak; activations {} B, weights {} B, gradients {} B, "
                                                         "optimizer state {} B per element{})", mode.name,
                                                         precision_info(mode.compute).name, mode.activation_bytes,
                                                         mode.weight_bytes, mode.gradient_bytes,
                                                         mode.optimizer_state_bytes,
                                                         mode.loss_scaling ? "; loss scaling" : "")));
  s.add("calibration", "calibration",
        Cell::text(p.calibrated ? (opt.calibration.file.empty() ? "fitted" : opt.calibration.file)
                                : "none: times are upper bounds (PPP 1, peak rates)"));
  s.add("peak_flop_per_s", "peak", Cell::real(opt.peak_flop_per_s, Unit::FlopPerSecond));
  s.add("bandwidth_bytes_per_s", "bandwidth", Cell::real(opt.bandwidth_bytes_per_s, Unit::BytePerSecond));
  s.add("combine", "combine", Cell::text(std::string(combine_name(opt.combine))));
  s.add("ppp", "PPP (fallback)", Cell::real(opt.calibration.fallback.ppp, Unit::Ratio));
  s.add("ppp_mem", "PPP memory (fallback)", Cell::real(opt.calibration.fallback.ppp_mem, Unit::Ratio));
  s.add("forward_s", "forward", Cell::real(p.forward_s, Unit::Second));
  if (a.train) {
    s.add("backward_s", "backward", Cell::real(p.backward_s, Unit::Second));
    s.add("update_s", "weight update", Cell::real(p.update_s, Unit::Second));
  }
  s.add("total_time_s", "time per iteration [" + kind + "]", Cell::real(p.total_time_s, Unit::Second));
  s.add("samples_per_s", "samples/s [" + kind + "]", Cell::real(p.samples_per_s));
  s.add("time_label", "these times are", Cell::text(kind));
  if (!flags.empty()) s.add("flags", "flags", Cell::text(fmt::format("{}", fmt::join(flags, "; "))));
  s.add("uncosted_layers", "layers not costed", Cell::count(p.uncosted_layers));
  doc.blocks.push_back(std::move(s));
  doc.extra["total_time_s"] = p.total_time_s;
  doc.extra["samples_per_s"] = p.samples_per_s;
  doc.extra["calibrated"] = p.calibrated;
  doc.extra["time_kind"] = p.calibrated ? "calibrated" : "upper_bound";
  doc.extra["flags"] = flags;
  doc.extra["precision"] = std::string(mode.name);
  for (const std::string& f : forced) doc.notes.push_back(f);
  if (p.uncosted_layers > 0)
    doc.notes.push_back(fmt::format("{} layer(s) could not be costed: the predicted time excludes them", p.uncosted_layers));

  if (a.devices_count > 1) {
    if (!a.train) throw UsageError("--devices-count: data-parallel prediction needs --train");
    const std::vector<InterconnectSpec> links = load_interconnects();
    ClusterTopology topo = cluster_topology(
        d, links, {a.devices_count, a.gpus_per_node, a.intra_node, a.inter_node, a.nics_per_node});
    const bool from_file = std::any_of(links.begin(), links.end(), [&](const auto& l) { return l.id == topo.intra.name; });
    std::string intra_source = from_file ? "data sheet (data/interconnects/" + topo.intra.name + ".json)"
                                         : "the device file (" + d.file + ")";
    const std::string fit_file = a.allreduce_fit == "builtin" ? builtin_data_dir("calibrations") + "/allreduce-vidur.json"
                                                              : a.allreduce_fit;
    if (a.allreduce_fit != "none") {
      if (auto fit = intra_node_fit(read_allreduce_fits(fit_file), load_devices(a.device_dirs), topo)) {
        topo = with_intra_node_fit(topo, *fit);
        intra_source = fmt::format("fitted on measured NCCL times ({}, {} GPUs; {}): {:.1f} GB/s bus bandwidth, {:.2f} us "
                                   "per step", fit->device, fit->workers, fit_file, 1e-9 * fit->bus_bandwidth_bytes_per_s,
                                   1e6 * fit->latency_s);
      }
    }
    BucketOptions buckets;
    buckets.algorithm = *allreduce;
    buckets.bucket_bytes = static_cast<Count>(a.bucket_mib * (1 << 20));
    const DataParallel dp =
        data_parallel(p, backward_steps(p, work.layers, mode.allreduce_bytes), load.batch, topo, buckets);
    report::Fields f{"data_parallel", fmt::format("Data-parallel on {} devices: {}", dp.devices, topology_text(topo)), {}};
    f.add("devices", "devices", Cell::count(dp.devices));
    f.add("nodes", "nodes", Cell::count(topo.nodes));
    f.add("gpus_per_node", "GPUs per node", Cell::count(topo.gpus_per_node));
    f.add("intra_node", "inside a node", Cell::text(topo.gpus_per_node > 1 ? topo.intra.name : "-"));
    if (topo.gpus_per_node > 1) f.add("intra_node_source", "inside a node: link figures", Cell::text(intra_source));
    f.add("inter_node", "between nodes", Cell::text(topo.nodes > 1 ? fmt::format("{} x {}", topo.nics_per_node, topo.inter.name) : "-"));
    f.add("allreduce", "all-reduce algorithm", Cell::text(std::string(allreduce_name(dp.algorithm))));
    f.add("gradient_bytes", "gradient bytes (all-reduced)",
          Cell::count(work.param_bytes / work.bytes_per_element * mode.allreduce_bytes, Unit::Byte));
    f.add("buckets", "gradient buckets", Cell::count(static_cast<int64_t>(dp.buckets.size())));
    f.add("allreduce_s", "all-reduce per iteration", Cell::real(dp.allreduce_s, Unit::Second));
    f.add("exposed_s", "exposed (after backward)", Cell::real(dp.exposed_s, Unit::Second));
    f.add("iteration_s", "time per iteration", Cell::real(dp.iteration_s, Unit::Second));
    f.add("samples_per_s", "samples/s [" + kind + "]", Cell::real(dp.samples_per_s));
    f.add("efficiency", "scaling efficiency", Cell::real(100 * dp.efficiency, Unit::Percent));
    doc.blocks.push_back(std::move(f));
    doc.blocks.push_back(bucket_table(dp));
    doc.notes.push_back(fmt::format("data-parallel: per-device batch {}; gradients in {} bucket(s) of {} MiB (PyTorch "
                                    "DDP, the first closes at 1 MiB) all-reduced as backward produces them; only what "
                                    "is left after backward is exposed",
                                    load.batch, dp.buckets.size(), a.bucket_mib));
  }
  doc.blocks.push_back(layer_table(p, work.layers, a.train));
  a.out.emit(doc);
  plot_layer_shares(doc, "predicted time and FLOPs per layer", {{"time_s", "predicted time"}, {"flops", "FLOPs"}},
                    a.plot);
}

}  // namespace

CLI::App* add_predict_command(CLI::App& app) {
  auto a = std::make_shared<PredictArgs>();
  CLI::App* cmd = app.add_subcommand("predict", "PALEO-style time per layer and per iteration on a device");
  cmd->add_option("model", a->model, "Zoo name or .onnx file (a label only when --flops is given)")->required();
  cmd->add_option("--device,-d", a->device, "Device id or alias (see `ridge devices`)")->required();
  a->m.add_to(cmd);
  cmd->get_option("--dtype")->description("Element type of tensors (default: the --precision's: fp16 for fp16, ...)");
  cmd->add_option("--precision,-p", a->precision, precision_mode_names() + " (amp-*: PyTorch autocast, fp32 weights)")
      ->capture_default_str();
  cmd->add_flag("--force", a->force, "Apply a calibration of another device family or precision anyway (the output says so)");
  cmd->add_flag("--train", a->train, "Training iteration: forward, backward and SGD weight update");
  cmd->add_option("--ppp", a->ppp, "Fraction of peak FLOP/s achieved (PALEO PPP), overrides the calibration fallback")
      ->check(CLI::Range(1e-6, 1.0));
  cmd->add_option("--ppp-mem", a->ppp_mem, "Fraction of peak bandwidth achieved")->check(CLI::Range(1e-6, 1.0));
  cmd->add_option("--calibration", a->calibration, "Calibration file written by `ridge calibrate` (default: the shipped one for the device family and precision, if any; none: uncalibrated)")->type_name("FILE");
  cmd->add_option("--combine", a->combine, "sum (PALEO: compute + memory) or max (roofline overlap)")->capture_default_str();
  cmd->add_option("--launch-overhead", a->launch_s, "Per-kernel overhead in seconds (default: the device's)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--flops", a->flops, "Use this forward FLOP count for the whole model instead of ridge's (e.g. 15503e6)")
      ->type_name("N");
  cmd->add_option("--level", a->level, "Memory level whose bandwidth the memory term uses")->capture_default_str();
  cmd->add_option("--devices-count", a->devices_count, "Data-parallel training on N devices")->check(CLI::PositiveNumber);
  cmd->add_option("--gpus-per-node", a->gpus_per_node, "GPUs per node (default: the device's reference node, e.g. 8)")
      ->type_name("G");
  cmd->add_option("--intra-node,--interconnect", a->intra_node,
                  "Fabric inside a node: nvlink2|nvlink3|nvlink4|nvlink5|pcie3|pcie4|pcie5 (data/interconnects) or a "
                  "link of the device file (default: the device's)")->type_name("NAME")->needs("--devices-count");
  cmd->add_option("--inter-node", a->inter_node, "Network between nodes: ib-edr|ib-hdr|ib-ndr|eth-100g|eth-25g "
                                                 "(default: the device's)")->type_name("NAME");
  cmd->add_option("--nics-per-node", a->nics_per_node, "Network adapters per node (default: the device's)")->type_name("K");
  cmd->add_option("--allreduce", a->allreduce, "auto (fastest, as NCCL picks)|ring|tree|hierarchical|ps")
      ->capture_default_str()->needs("--devices-count");
  cmd->add_option("--allreduce-fit", a->allreduce_fit, "All-reduce calibration whose one-node fits replace the "
                                                       "data-sheet fabric figures (builtin: data/calibrations/"
                                                       "allreduce-vidur.json; none: data sheet only)")
      ->type_name("FILE|builtin|none")->capture_default_str();
  cmd->add_option("--bucket-mib", a->bucket_mib, "Gradient bucket size in MiB (PyTorch DDP bucket_cap_mb)")
      ->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--devices-dir,--devices", a->device_dirs, "Also load device files from DIR")->type_name("DIR");
  a->out.add_to(cmd);
  cmd->add_option("--plot", a->plot, "Also draw each layer's share of predicted time and FLOPs to FILE.svg or "
                                     "FILE.png")->type_name("FILE");
  cmd->callback([a] {
    if (!a->plot.empty()) chart::check_chart_path(a->plot);
    run(*a);
  });
  return cmd;
}

}  // namespace ridge::cli
