// ridge flops: the headline count under ridge's convention and every popular tool's, side by side.
#include <fmt/format.h>

#include "commands.hpp"
#include "model_options.hpp"
#include "ridge/cost.hpp"
#include "ridge/error.hpp"
#include "ridge/llm.hpp"
#include "ridge/api.hpp"

namespace ridge::cli {

CLI::App* add_flops_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "flops", "Headline FLOP/MAC counts under ridge's convention and other tools' (why the tools disagree)");
  struct Opts {
    std::string model;
    ModelOptions m;
    OutputOptions out;
    bool all = false;
    std::string convention;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("MODEL", o->model, kModelHelp)->required();
  o->m.add_to(cmd);
  cmd->add_flag("--all-conventions,-a", o->all, "Show every convention side by side with what differs");
  cmd->add_option("--convention,-c", o->convention,
                  "One convention: ridge|torchvision|fvcore|ptflops|thop|torchinfo|pthflops|deepspeed|calflops|torch");
  o->out.add_to(cmd);
  cmd->footer(
      "Conventions reproduce each tool's headline number exactly: torchvision (weights meta _ops), fvcore\n"
      "(FlopCountAnalysis.total), ptflops (pytorch backend, incl. its double count), thop 0.1.1, torchinfo 1.8.0\n"
      "(Total mult-adds), pthflops (fx mode), deepspeed (flops profiler), calflops, torch (FlopCounterMode).\n"
      "Rules: docs/counting.md.");
  cmd->callback([o] {
    std::optional<Convention> one;
    if (!o->convention.empty()) {
      one = convention_flag(o->convention);
    }
    const Graph g = load_model(o->model, o->m.load_options());
    o->m.check(incompleteness(g, estimate(g)), o->model);
    // LLMs (zoo entries and config.json) with --all-conventions: the published LLM formulas beside the graph count.
    const std::optional<LlmConfig> llm = o->all ? llm_config_of(o->model) : std::nullopt;
    o->out.emit(report::flops_report(g, report::flops_conventions(o->all, one), llm ? &*llm : nullptr));
  });
  return cmd;
}

}  // namespace ridge::cli
