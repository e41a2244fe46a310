// The time prediction document (`ridge predict`): PALEO-style per layer, optionally calibrated and data-parallel.
#include <fmt/format.h>

#include <algorithm>

#include "ridge/api.hpp"
#include "ridge/error.hpp"

namespace ridge::report {
namespace {

Table layer_table(const Prediction& p, const std::vector<LayerWork>& work, bool train) {
  const std::string uncalibrated(time_kind_label(p.kind));
  Table t{"layers", "Layers", {{"name", "layer", Unit::None}, {"op", "op", Unit::None},
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
                               : l.calibration == "uncalibrated" ? uncalibrated
                                                                 : l.calibration));
      if (train) row.push_back(Cell::real(l.backward.time_s, Unit::Second));
      row.push_back(Cell::real(l.time_s, Unit::Second));
      row.push_back(Cell::text(std::string(bound_name(l.bound))));
    }
    t.add_row(std::move(row));
  }
  return t;
}

Table bucket_table(const DataParallel& dp) {
  Table t{"buckets", "Gradient buckets (times from the start of backward)",
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

}  // namespace

Document predict_report(const PredictRequest& a) {
  const PrecisionMode mode = require_precision_mode(a.precision);
  if (a.train) require_training_mode(mode);
  // The same limits as the command line's flags, for every front end (the Python API included).
  auto fraction = [](const std::optional<double>& v, const char* name) {
    if (v && !(*v >= 1e-6 && *v <= 1))
      throw UsageError(fmt::format("{}: {} is not between 0.000001 and 1", name, *v));
  };
  fraction(a.ppp, "ppp");
  fraction(a.ppp_mem, "ppp_mem");
  if (a.kernel_launch_s && !(*a.kernel_launch_s >= 0 && *a.kernel_launch_s < 1))
    throw UsageError(fmt::format("kernel launch overhead: {} s is not in [0, 1) s", *a.kernel_launch_s));
  if (a.flops && *a.flops <= 0) throw UsageError("flops: must be a positive FLOP count");
  const ClusterRequest& cl = a.data_parallel.cluster;
  if (cl.devices <= 1 && (cl.gpus_per_node || cl.nics_per_node || !cl.inter_node.empty() || !cl.intra_node.empty()))
    throw UsageError("gpus per node, NICs per node and the fabrics describe a cluster: they need more than one device "
                     "(--devices-count)");
  const auto combine = a.combine.empty() ? std::nullopt : parse_combine(a.combine);
  if (!a.combine.empty() && !combine) throw UsageError("--combine " + a.combine + ": use sum (PALEO) or max (roofline)");
  const auto optimizer = parse_optimizer(a.optimizer);
  if (!optimizer) throw UsageError("--optimizer " + a.optimizer + ": use sgd, momentum or adam");
  const auto allreduce = parse_allreduce(a.data_parallel.allreduce);
  if (!allreduce)
    throw UsageError("--allreduce " + a.data_parallel.allreduce + ": use auto, ring, tree, hierarchical or ps");
  const Device d = find_device(load_devices(a.device_dirs), a.device);

  LoadOptions load = a.load;
  load.dtype = a.dtype.value_or(mode.activation_dtype);
  load.training = a.train;
  Document doc;
  doc.inputs["dtype"] = std::string(dtype_name(load.dtype));  // what was used: --dtype, else the precision's
  std::vector<std::string> forced;

  ModelWork work;
  if (a.flops) {
    // Hand-given FLOPs (e.g. a paper's table): one layer, no memory traffic, no launches.
    LayerWork w;
    w.name = a.model.name + " (--flops)";
    w.op_class = "model";
    w.flops = *a.flops;
    w.kernels = 0;
    w.bwd_input_flops = a.train ? w.flops : 0;
    w.bwd_weight_flops = a.train ? w.flops : 0;
    work.name = a.model.name;
    work.layers = {w};
    work.total.flops = w.flops;
    work.bytes_per_element = static_cast<int>(dtype_bytes(load.dtype));
    doc.notes.push_back("FLOPs from --flops: memory traffic and kernel launches are not modelled");
    if (a.train) doc.notes.push_back("--flops with --train: backward assumed 2x forward FLOPs, no weight update");
  } else {
    work = load_model_work(a.model, load, *optimizer, param_storage(mode));
    if (work.batch != load.batch) {  // a file of fixed shapes (Python's example_inputs): its batch is the run's
      doc.notes.push_back(fmt::format("{} fixes its batch at {}: predicted for that batch", work.name, work.batch));
      load.batch = work.batch;
    }
    if (a.strict) require_complete(work.incomplete, a.model.name);
    doc.notes.insert(doc.notes.end(), work.notes.begin(), work.notes.end());
    // A batch the device cannot hold is refused: its time would describe a run that does not exist.
    const MemoryEstimate& m = work.memory;
    const Count needed = a.train ? m.training_peak_bytes : m.inference_peak_bytes + m.param_bytes + m.buffer_bytes;
    doc.extra["memory_bytes"] = to_json(Cell::count(needed, Unit::Byte));
    doc.extra["fits"] = d.memory_bytes == 0 || needed <= d.memory_bytes;
    if (d.memory_bytes > 0 && needed > d.memory_bytes) {
      const std::string what = fmt::format(
          "{} at batch {} ({}, {}) needs {:.1f} GiB, more than the {:.1f} GiB of {}", work.name, load.batch,
          a.train ? "training: weights, gradients, optimizer state, saved activations" : "inference", mode.name,
          to_double(needed) / 1073741824.0, to_double(d.memory_bytes) / 1073741824.0, d.id);
      if (!a.force) throw Error(what + " (a smaller --batch fits; --force predicts anyway)");
      forced.push_back("forced: " + what);
    }
  }
  const PredictOptions opt = predict_options(
      d, {mode.compute, a.level, combine, a.calibration, a.force, a.ppp, a.ppp_mem, a.kernel_launch_s, a.train,
          mode.weight_bytes, *optimizer, load.batch},
      &forced);
  doc.inputs["combine"] = std::string(combine_name(opt.combine));  // what was used: --combine, else the default's
  const Prediction p = predict(work.layers, opt);
  const std::string kind(time_kind_label(p.kind));
  std::vector<std::string> flags = calibration_flags(opt.calibration);
  flags.insert(flags.end(), forced.begin(), forced.end());

  doc.title = fmt::format("Predicted time of {} on {} ({}, batch {}, {})", work.name, d.id, a.precision, load.batch,
                          a.train ? "training iteration" : "inference");
  Fields s{"summary", "Summary", {}};
  s.add("model", "model", Cell::text(work.name));
  s.add("device", "device", Cell::text(d.id));
  s.add("precision", "precision", Cell::text(fmt::format("{} ({} peak; activations {} B, weights {} B, gradients {} B, "
                                                         "optimizer state {} B per element{})", mode.name,
                                                         precision_info(mode.compute).name, mode.activation_bytes,
                                                         mode.weight_bytes, mode.gradient_bytes,
                                                         mode.optimizer_state_bytes,
                                                         mode.loss_scaling ? "; loss scaling" : "")));
  s.add("calibration", "calibration",
        Cell::text(p.kind == TimeKind::Calibrated ? (opt.calibration.file.empty() ? "fitted" : opt.calibration.file)
                   : p.kind == TimeKind::UpperBound
                       ? "none: the times are bounds (peak rates, PPP 1, max(compute, memory), no launch overhead)"
                       : "none: factors set by hand (PPP, combine or launch overhead), an estimate, not a bound"));
  if (!opt.calibration.ceiling_note.empty())
    s.add("calibration_ceiling", "calibration ceiling", Cell::text(opt.calibration.ceiling_note));
  s.add("peak_flop_per_s", "peak", Cell::real(opt.peak_flop_per_s, Unit::FlopPerSecond));
  s.add("bandwidth_bytes_per_s", "bandwidth", Cell::real(opt.bandwidth_bytes_per_s, Unit::BytePerSecond));
  s.add("combine", "combine", Cell::text(std::string(combine_name(opt.combine))));
  s.add("kernel_launch_s", "launch overhead (per kernel)", Cell::real(opt.kernel_launch_s, Unit::Second));
  s.add("ppp", "PPP (fallback)", Cell::real(opt.calibration.fallback.ppp, Unit::Ratio));
  s.add("ppp_mem", "PPP memory (fallback)", Cell::real(opt.calibration.fallback.ppp_mem, Unit::Ratio));
  s.add("forward_s", "forward", Cell::real(p.forward_s, Unit::Second));
  if (a.train) {
    s.add("backward_s", "backward", Cell::real(p.backward_s, Unit::Second));
    s.add("update_s", "weight update", Cell::real(p.update_s, Unit::Second));
  }
  // Beside the numbers: what they are, and that they leave layers out when they do.
  const std::string beside =
      p.uncosted_layers > 0 ? fmt::format("{}; incomplete: {} layer(s) not costed", kind, p.uncosted_layers) : kind;
  s.add("total_time_s", "time per iteration [" + beside + "]", Cell::real(p.total_time_s, Unit::Second));
  s.add("samples_per_s", "samples/s [" + beside + "]", Cell::real(p.samples_per_s));
  s.add("time_label", "these times are", Cell::text(kind));
  if (!flags.empty()) s.add("flags", "flags", Cell::text(fmt::format("{}", fmt::join(flags, "; "))));
  s.add("uncosted_layers", "layers not costed", Cell::count(p.uncosted_layers));
  doc.blocks.push_back(std::move(s));
  doc.extra["total_time_s"] = p.total_time_s;
  doc.extra["samples_per_s"] = p.samples_per_s;
  doc.extra["calibrated"] = p.calibrated;
  doc.extra["time_kind"] = std::string(time_kind_key(p.kind));
  doc.extra["flags"] = flags;
  doc.extra["precision"] = std::string(mode.name);
  for (const std::string& f : forced) doc.notes.push_back(f);
  if (p.kind == TimeKind::UpperBound)
    if (const std::string n = measured_ceiling_note(d, mode.compute); !n.empty()) doc.notes.push_back(n);
  if (p.uncosted_layers > 0)
    doc.notes.push_back(fmt::format("{} layer(s) could not be costed: the predicted time excludes them", p.uncosted_layers));

  const DataParallelRequest& dpr = a.data_parallel;
  if (dpr.cluster.devices > 1) {
    if (!a.train) throw UsageError("--devices-count: data-parallel prediction needs --train");
    const std::vector<InterconnectSpec> links = load_interconnects();
    ClusterTopology topo = cluster_topology(d, links, dpr.cluster);
    const bool from_file = std::any_of(links.begin(), links.end(), [&](const auto& l) { return l.id == topo.intra.name; });
    std::string intra_source = from_file ? "data sheet (data/interconnects/" + topo.intra.name + ".json)"
                                         : "the device file (" + d.file + ")";
    const std::string fit_file = dpr.allreduce_fit == "builtin" ? builtin_data_dir("calibrations") + "/allreduce-vidur.json"
                                                              : dpr.allreduce_fit;
    if (dpr.allreduce_fit != "none") {
      if (auto fit = intra_node_fit(read_allreduce_fits(fit_file), load_devices(a.device_dirs), topo)) {
        topo = with_intra_node_fit(topo, *fit);
        intra_source = fmt::format("fitted on measured NCCL times ({}, {} GPUs; {}): {:.1f} GB/s bus bandwidth, {:.2f} us "
                                   "per step", fit->device, fit->workers, fit_file, 1e-9 * fit->bus_bandwidth_bytes_per_s,
                                   1e6 * fit->latency_s);
      }
    }
    BucketOptions buckets;
    buckets.algorithm = *allreduce;
    buckets.bucket_bytes = static_cast<Count>(dpr.bucket_mib * (1 << 20));
    const DataParallel dp =
        data_parallel(p, backward_steps(p, work.layers, mode.allreduce_bytes), load.batch, topo, buckets);
    Fields f{"data_parallel", fmt::format("Data-parallel on {} devices: {}", dp.devices, topology_text(topo)), {}};
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
                                    load.batch, dp.buckets.size(), dpr.bucket_mib));
  }
  doc.blocks.push_back(layer_table(p, work.layers, a.train));
  mark_incomplete(doc, work.incomplete);
  return doc;
}

}  // namespace ridge::report
