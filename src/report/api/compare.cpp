// `ridge compare`: models (or one model at several batches or precisions) side by side: parameters, FLOPs per
// iteration, peak memory and, with devices, the predicted time per iteration on each. Plain values in, a Document
// out; the table itself is headline::compare_table.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ridge/api.hpp"
#include "ridge/error.hpp"
#include "ridge/headline.hpp"

namespace ridge::report {
namespace {

// `not_costed`: the op types the estimate leaves out (empty when complete).
headline::Variant variant(const std::string& model, int64_t batch, const PrecisionMode& mode,
                          const CompareRequest& req, const std::vector<Device>& devices, Optimizer optimizer,
                          std::vector<std::string>& not_costed) {
  LoadOptions load;
  load.batch = batch;
  load.dtype = mode.activation_dtype;
  load.training = req.train;
  if (req.seq_len > 0) load.seq_len = req.seq_len;
  const Graph g = load_model(model, load);
  const ModelCost costs = estimate(g);
  not_costed = incompleteness(g, costs).op_types();
  const MemoryEstimate memory = estimate_memory(g, optimizer, param_storage(mode));
  headline::Variant v{g.name, batch, std::string(mode.name), costs.total.params,
                      req.train ? costs.total.flops + costs.total.bwd_flops() : costs.total.flops,
                      req.train ? memory.training_peak_bytes
                                : memory.inference_peak_bytes + memory.param_bytes + memory.buffer_bytes,
                      {}, {}};
  const std::vector<LayerWork> work = layer_work(g, costs);
  for (const Device& d : devices) {
    PredictSettings ps;
    ps.precision = mode.compute;
    ps.training = req.train;
    ps.bytes_per_param = mode.weight_bytes;
    ps.optimizer = optimizer;
    ps.batch = batch;
    const Prediction pr = predict(work, predict_options(d, ps));
    v.time_s.push_back(pr.total_time_s);
    v.time_kind.emplace_back(time_kind_label(pr.kind));
    v.time_kind_key.emplace_back(time_kind_key(pr.kind));
    v.samples_per_s.push_back(pr.samples_per_s);
  }
  return v;
}

}  // namespace

Document compare_report(const CompareRequest& req) {
  const size_t n = req.models.size() * req.batches.size() * req.precisions.size();
  if (n < 2) throw UsageError("compare needs two or more models, or several --batch or --precision values");
  const auto optimizer = parse_optimizer(req.optimizer);
  if (!optimizer) throw UsageError("--optimizer: '" + req.optimizer + "' is not sgd, momentum or adam");
  for (int64_t b : req.batches)
    if (b < 1) throw UsageError(fmt::format("--batch {}: expected a positive batch size", b));
  if (req.seq_len < 0) throw UsageError(fmt::format("--seq-len {}: expected a positive length", req.seq_len));
  std::vector<PrecisionMode> modes;
  for (const auto& p : req.precisions) {
    modes.push_back(require_precision_mode(p));
    if (req.train) require_training_mode(modes.back());
  }
  std::vector<Device> devices;
  if (!req.devices.empty()) {
    const std::vector<Device> known = load_devices(req.device_dirs);
    for (const auto& name : req.devices) devices.push_back(find_device(known, name));
  }
  std::vector<std::string> ids;
  for (const auto& d : devices) ids.push_back(d.id);
  std::vector<headline::Variant> variants;
  std::vector<std::pair<std::string, std::vector<std::string>>> gaps;  // incomplete variants' models
  std::vector<std::string> not_costed;
  for (const auto& model : req.models)
    for (int64_t b : req.batches)
      for (const auto& mode : modes) {
        variants.push_back(variant(model, b, mode, req, devices, *optimizer, not_costed));
        if (!not_costed.empty()) gaps.emplace_back(variants.back().model, not_costed);
      }

  Document doc;
  mark_incomplete_models(doc, gaps);
  doc.inputs["batch"] = req.batches;  // what was compared (the defaults included)
  doc.inputs["precision"] = req.precisions;
  doc.title = fmt::format("{} side by side ({})", fmt::join(req.models, " vs "),
                          req.train ? "training iteration" : "inference");
  Table t = headline::compare_table(variants, ids);
  t.title = "Per iteration";
  doc.blocks.push_back(std::move(t));
  doc.notes.push_back(req.train ? "FLOPs: forward + backward; memory: training peak (weights, gradients, optimizer "
                                  "state, saved activations)"
                                : "FLOPs: forward; memory: weights + the peak of live activations");
  if (!devices.empty())
    doc.notes.push_back("times are PALEO-style predictions: calibrated where a shipped calibration applies, else peak-rate bounds; each row says which");
  return doc;
}

}  // namespace ridge::report
