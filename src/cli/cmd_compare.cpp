// `ridge compare A B ...`: models (or one model at several batches or precisions) side by side. Argument parsing
// only: report::compare_report(CompareRequest) gathers the numbers.
#include <fmt/format.h>

#include <memory>

#include "commands.hpp"
#include "model_options.hpp"
#include "ridge/api.hpp"
#include "ridge/precision_mode.hpp"

namespace ridge::cli {

CLI::App* add_compare_command(CLI::App& app) {
  struct Args {
    report::CompareRequest req;
    OutputOptions out;
  };
  auto a = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("compare", "Models, batches or precisions side by side: params, FLOPs, memory, time");
  cmd->add_option("MODELS", a->req.models, fmt::format("{} (one model is fine with several --batch/--precision)", kModelsHelp))
      ->required();
  cmd->add_option("--batch,-b", a->req.batches, "Batch size(s); repeatable")->capture_default_str();
  cmd->add_option("--seq-len", a->req.seq_len, "Sequence length of language models (default: each model's)")
      ->type_name("N")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--precision,-p", a->req.precisions, precision_mode_names() + "; repeatable")->capture_default_str();
  cmd->add_option("--device,-d", a->req.devices, "Device(s) to predict the time on (see `ridge devices`); repeatable");
  cmd->add_option("--devices-dir,--devices", a->req.device_dirs, "Extra folder(s) of device JSON files")->type_name("DIR");
  cmd->add_flag("--train", a->req.train, "Training iteration: forward + backward FLOPs, training memory and time");
  cmd->add_option("--optimizer", a->req.optimizer, "Optimizer for training memory: sgd|momentum|adam")->capture_default_str();
  a->out.add_to(cmd);
  cmd->callback([a] { a->out.emit(report::compare_report(a->req)); });
  return cmd;
}

}  // namespace ridge::cli
