// `ridge roofline MODEL... --device D...`: where each model and layer sits on each device's roofline, and how
// close measurements come to the roof.
#include <memory>

#include "commands.hpp"
#include "model_options.hpp"
#include "ridge/api.hpp"
#include "ridge/chart.hpp"
#include "ridge/device.hpp"
#include "ridge/error.hpp"
#include "ridge/predict.hpp"

namespace ridge::cli {
namespace {

struct RooflineArgs {
  report::RooflineRequest req;
  ModelOptions m;
  std::string plot;
  OutputOptions out;
};

void run(RooflineArgs& a) {
  a.req.load = a.m.load_options();
  a.req.strict = a.m.strict;
  if (a.m.dtype_given()) a.req.dtype = a.req.load.dtype;
  a.req.charts = !a.plot.empty();
  const report::RooflineResult r = report::roofline_report(a.req);
  a.out.emit(r.doc);
  if (!a.plot.empty()) chart::write_charts(r.charts, a.plot);
}

}  // namespace

CLI::App* add_roofline_command(CLI::App& app) {
  auto a = std::make_shared<RooflineArgs>();
  CLI::App* cmd = app.add_subcommand("roofline", "Place models and layers on device rooflines (AI, attainable, bound)");
  cmd->add_option("MODELS", a->req.models, kModelsHelp)->required();
  cmd->add_option("--device,-d", a->req.devices, "Device id or alias (repeatable; see `ridge devices`)")->required()->type_name("D");
  cmd->add_option("--precision,-p", a->req.precision, "fp64|fp32|tf32|fp16|bf16|int8")->capture_default_str();
  a->m.add_to(cmd);
  cmd->get_option("--dtype")->description("Element type of tensors (default: the --precision's: fp16 for fp16, ...)");
  cmd->add_option("--level", a->req.level, "Memory level whose bandwidth forms the roof (dram, l2, ...)")->capture_default_str();
  cmd->add_option("--measured", a->req.measured_files, "Measurement JSON (ridge measure/ingest --format json): achieved fraction")
      ->type_name("FILE");
  cmd->add_flag("--force", a->req.force,
                "Use a --measured file that records another model, device or batch than the one placed (the notes say "
                "so); without it such a file is refused");
  cmd->add_option("--devices-dir,--devices", a->req.device_dirs, "Also load device files from DIR")->type_name("DIR");
  cmd->add_flag("--summary", a->req.summary_only, "Per-model rows only (no per-layer table)");
  cmd->add_option("--plot", a->plot, "Also draw one roofline per device to FILE.svg or FILE.png")->type_name("FILE");
  a->out.add_to(cmd);
  cmd->callback([a] {
    if (!a->plot.empty()) chart::check_chart_path(a->plot);
    run(*a);
  });
  return cmd;
}

}  // namespace ridge::cli
