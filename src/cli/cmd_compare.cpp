// `ridge compare A B ...`: models (or one model at several batches or precisions) side by side: parameters,
// FLOPs per iteration, peak memory and, with -d, the predicted time per iteration on each device. The table is
// ridge::headline::compare_table; this file parses and gathers the numbers.
#include <fmt/format.h>

#include <memory>

#include "commands.hpp"
#include "model_options.hpp"
#include "ridge/cost.hpp"
#include "ridge/error.hpp"
#include "ridge/headline.hpp"
#include "ridge/precision_mode.hpp"
#include "ridge/predict.hpp"

namespace ridge::cli {
namespace {

struct CompareArgs {
  std::vector<std::string> models, precisions{"fp32"}, devices, device_dirs;
  std::vector<int64_t> batches{1};
  int64_t seq_len = 0;  ///< 0: each model's default
  bool train = false;
  std::string optimizer = "sgd";
  OutputOptions out;
};

headline::Variant variant(const std::string& model, int64_t batch, const PrecisionMode& mode, const CompareArgs& a,
                          const std::vector<Device>& devices, Optimizer optimizer) {
  LoadOptions load;
  load.batch = batch;
  load.dtype = mode.activation_dtype;
  load.training = a.train;
  if (a.seq_len > 0) load.seq_len = a.seq_len;
  const Graph g = load_model(model, load);
  const ModelCost costs = estimate(g);
  const MemoryEstimate memory = estimate_memory(g, optimizer, param_storage(mode));
  headline::Variant v{g.name, batch, std::string(mode.name), costs.total.params,
                      a.train ? costs.total.flops + costs.total.bwd_flops() : costs.total.flops,
                      a.train ? memory.training_peak_bytes : memory.inference_peak_bytes + memory.param_bytes + memory.buffer_bytes,
                      {}, {}};
  const std::vector<LayerWork> work = layer_work(g, costs);
  for (const Device& d : devices) {
    PredictSettings ps;
    ps.precision = mode.compute;
    ps.training = a.train;
    ps.bytes_per_param = mode.weight_bytes;
    ps.batch = batch;
    const Prediction pr = predict(work, predict_options(d, ps));
    v.time_s.push_back(pr.total_time_s);
    v.samples_per_s.push_back(pr.samples_per_s);
  }
  return v;
}

void run(const CompareArgs& a) {
  const size_t n = a.models.size() * a.batches.size() * a.precisions.size();
  if (n < 2) throw UsageError("compare needs two or more models, or several --batch or --precision values");
  const auto optimizer = parse_optimizer(a.optimizer);
  if (!optimizer) throw UsageError("--optimizer: '" + a.optimizer + "' is not sgd, momentum or adam");
  for (int64_t b : a.batches)
    if (b < 1) throw UsageError(fmt::format("--batch {}: expected a positive batch size", b));
  std::vector<PrecisionMode> modes;
  for (const auto& p : a.precisions) modes.push_back(require_precision_mode(p));
  std::vector<Device> devices;
  if (!a.devices.empty()) {
    const std::vector<Device> known = load_devices(a.device_dirs);
    for (const auto& name : a.devices) devices.push_back(find_device(known, name));
  }
  std::vector<std::string> ids;
  for (const auto& d : devices) ids.push_back(d.id);
  std::vector<headline::Variant> variants;
  for (const auto& model : a.models)
    for (int64_t b : a.batches)
      for (const auto& mode : modes) variants.push_back(variant(model, b, mode, a, devices, *optimizer));

  report::Document doc;
  doc.title = fmt::format("{} side by side ({})", fmt::join(a.models, " vs "), a.train ? "training iteration" : "inference");
  report::Table t = headline::compare_table(variants, ids);
  t.title = "Per iteration";
  doc.blocks.push_back(std::move(t));
  doc.notes.push_back(a.train ? "FLOPs: forward + backward; memory: training peak (weights, gradients, optimizer state, "
                                "saved activations)"
                              : "FLOPs: forward; memory: weights + the peak of live activations");
  if (!devices.empty()) doc.notes.push_back("times are PALEO-style predictions (upper bounds unless a shipped calibration applies)");
  a.out.emit(doc);
}

}  // namespace

CLI::App* add_compare_command(CLI::App& app) {
  auto a = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand("compare", "Models, batches or precisions side by side: params, FLOPs, memory, time");
  cmd->add_option("MODELS", a->models, fmt::format("{} (one model is fine with several --batch/--precision)", kModelsHelp))
      ->required();
  cmd->add_option("--batch,-b", a->batches, "Batch size(s); repeatable")->capture_default_str();
  cmd->add_option("--seq-len", a->seq_len, "Sequence length of language models (default: each model's)")
      ->type_name("N")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--precision,-p", a->precisions, precision_mode_names() + "; repeatable")->capture_default_str();
  cmd->add_option("--device,-d", a->devices, "Device(s) to predict the time on (see `ridge devices`); repeatable");
  cmd->add_option("--devices-dir,--devices", a->device_dirs, "Extra folder(s) of device JSON files")->type_name("DIR");
  cmd->add_flag("--train", a->train, "Training iteration: forward + backward FLOPs, training memory and time");
  cmd->add_option("--optimizer", a->optimizer, "Optimizer for training memory: sgd|momentum|adam")->capture_default_str();
  a->out.add_to(cmd);
  cmd->callback([a] { run(*a); });
  return cmd;
}

}  // namespace ridge::cli
