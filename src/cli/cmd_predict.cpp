// `ridge predict MODEL --device D`: PALEO-style time per layer and per iteration, optionally calibrated and
// data-parallel.

#include <fmt/format.h>

#include <cmath>
#include <memory>

#include "commands.hpp"
#include "ridge/api.hpp"
#include "ridge/chart.hpp"
#include "model_options.hpp"
#include "ridge/device.hpp"
#include "ridge/error.hpp"
#include "ridge/precision_mode.hpp"
#include "ridge/predict.hpp"

namespace ridge::cli {
namespace {


struct PredictArgs {
  report::PredictRequest req;
  ModelOptions m;
  std::optional<std::string> flops;
  std::string plot;
  OutputOptions out;
};

// A FLOP count from the command line: an integer ("15503000000", "15_503_000_000") or exact scientific
// notation ("15503e6").
Count flops_arg(const std::string& text) {
  try {
    const Count n = parse_count(text);
    if (n <= 0) throw UsageError("--flops " + text + ": must be a positive FLOP count");
    return n;
  } catch (const UsageError&) {
    throw;
  } catch (const Error&) {
    size_t used = 0;
    double v = -1;
    try {
      v = std::stod(text, &used);
    } catch (const std::exception&) {
    }
    if (used == text.size() && v >= 1 && v < 1e30 && v == std::floor(v)) return static_cast<Count>(v);
    throw UsageError("--flops " + text + ": expected a FLOP count such as 15503000000 or 15503e6");
  }
}

void run(PredictArgs& a) {
  a.req.load = a.m.load_options();
  a.req.strict = a.m.strict;
  if (a.m.dtype_given()) a.req.dtype = a.req.load.dtype;
  if (a.flops) a.req.flops = flops_arg(*a.flops);
  const report::Document doc = report::predict_report(a.req);
  a.out.emit(doc);
  plot_layer_shares(doc, doc.title + ": share per layer", {{"time_s", "predicted time"}, {"flops", "FLOPs"}},
                    a.plot);
}

}  // namespace

CLI::App* add_predict_command(CLI::App& app) {
  auto a = std::make_shared<PredictArgs>();
  CLI::App* cmd = app.add_subcommand("predict", "PALEO-style time per layer and per iteration on a device");
  cmd->add_option("MODEL", a->req.model.name, fmt::format("{} (a label only when --flops is given)", kModelHelp))->required();
  cmd->add_option("--device,-d", a->req.device, "Device id or alias (see `ridge devices`)")->required();
  a->m.add_to(cmd);
  cmd->get_option("--dtype")->description("Element type of tensors (default: the --precision's: fp16 for fp16, ...)");
  cmd->add_option("--precision,-p", a->req.precision, precision_mode_names() + " (amp-*: PyTorch autocast, fp32 weights)")
      ->capture_default_str();
  cmd->add_flag("--force", a->req.force, "Apply a calibration of another device family or precision anyway (the output says so)");
  cmd->add_flag("--train", a->req.train, "Training iteration: forward, backward and the optimizer's weight update");
  cmd->add_option("--optimizer", a->req.optimizer, "Weight update of --train: sgd|momentum|adam (its reads, writes and "
                                                   "FLOPs per parameter)")
      ->capture_default_str();
  cmd->add_option("--ppp", a->req.ppp,
                  "Fraction of peak FLOP/s achieved (PALEO PPP); replaces the shipped calibration (with "
                  "--calibration FILE: that file's fallback factor)")
      ->check(CLI::Range(1e-6, 1.0));
  cmd->add_option("--ppp-mem", a->req.ppp_mem, "Fraction of peak bandwidth achieved (as --ppp)")->check(CLI::Range(1e-6, 1.0));
  cmd->add_option("--calibration", a->req.calibration, "Calibration file written by `ridge calibrate` (default: the shipped one for the device family and precision, if any; none: uncalibrated)")->type_name("FILE");
  cmd->add_option("--combine", a->req.combine,
                  "sum (PALEO: compute + memory) or max (roofline overlap) (default: the calibration's; with no "
                  "calibration, max: the peak-rate bound)");
  cmd->add_option("--launch-overhead", a->req.kernel_launch_s,
                  "Per-kernel overhead in seconds (default: the device's when calibrated; 0 for the uncalibrated bound)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--flops", a->flops, "Use this forward FLOP count for the whole model instead of ridge's (e.g. 15503e6)")
      ->type_name("N");
  cmd->add_option("--level", a->req.level, "Memory level whose bandwidth the memory term uses")->capture_default_str();
  cmd->add_option("--devices-count", a->req.data_parallel.cluster.devices, "Data-parallel training on N devices")->check(CLI::PositiveNumber);
  cmd->add_option("--gpus-per-node", a->req.data_parallel.cluster.gpus_per_node, "GPUs per node (default: the device's reference node, e.g. 8)")
      ->type_name("G")->needs("--devices-count");
  cmd->add_option("--intra-node,--interconnect", a->req.data_parallel.cluster.intra_node,
                  "Fabric inside a node: nvlink2|nvlink3|nvlink4|nvlink5|pcie3|pcie4|pcie5 (data/interconnects) or a "
                  "link of the device file (default: the device's)")->type_name("NAME")->needs("--devices-count");
  cmd->add_option("--inter-node", a->req.data_parallel.cluster.inter_node, "Network between nodes: ib-edr|ib-hdr|ib-ndr|eth-100g|eth-25g "
                                                 "(default: the device's)")->type_name("NAME")->needs("--devices-count");
  cmd->add_option("--nics-per-node", a->req.data_parallel.cluster.nics_per_node, "Network adapters per node (default: the device's)")
      ->type_name("K")->needs("--devices-count");
  cmd->add_option("--allreduce", a->req.data_parallel.allreduce, "auto (fastest, as NCCL picks)|ring|tree|hierarchical|ps")
      ->capture_default_str()->needs("--devices-count");
  cmd->add_option("--allreduce-fit", a->req.data_parallel.allreduce_fit, "All-reduce calibration whose one-node fits replace the "
                                                       "data-sheet fabric figures (builtin: data/calibrations/"
                                                       "allreduce-vidur.json; none: data sheet only)")
      ->type_name("FILE|builtin|none")->capture_default_str()->needs("--devices-count");
  cmd->add_option("--bucket-mib", a->req.data_parallel.bucket_mib, "Gradient bucket size in MiB (PyTorch DDP bucket_cap_mb)")
      ->check(CLI::PositiveNumber)->capture_default_str()->needs("--devices-count");
  cmd->add_option("--devices-dir,--devices", a->req.device_dirs, "Also load device files from DIR")->type_name("DIR");
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
