// ridge summary: a torchinfo-style per-layer table with exact totals and memory.
#include <algorithm>
#include <iostream>

#include "commands.hpp"
#include "ridge/precision_mode.hpp"
#include "llm_model.hpp"
#include "model_options.hpp"
#include "ridge/api.hpp"
#include "ridge/chart.hpp"
#include "ridge/error.hpp"

namespace ridge::cli {

CLI::App* add_summary_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("summary", "Per-layer params, MACs, FLOPs (forward and backward), bytes and memory");
  struct Opts {
    std::string model;
    ModelOptions m;
    OutputOptions out;
    int depth = 0;
    std::string convention, optimizer = "sgd", precision;
    std::string plot;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("MODEL", o->model, kModelHelp)->required();
  o->m.add_to(cmd);
  auto* depth = cmd->add_option("--depth", o->depth,
                                 "Group layers by the first D components of their module path (0 = every node; "
                                 "default: every node, or on a terminal the deepest level that fits its height)")
                     ->check(CLI::Range(0, 64));
  // `-d` is --device in every other command; here it stays a hidden, deprecated spelling of --depth.
  auto* old_depth = cmd->add_option("-d", o->depth, "Deprecated: --depth")->check(CLI::Range(0, 64))->group("");
  cmd->add_option("--convention,-c", o->convention,
                  "Also count under another tool's convention: torchvision|fvcore|ptflops|thop|torchinfo|pthflops|"
                  "deepspeed|calflops|torch (adds a per-layer column and totals.headline)");
  cmd->add_option("--optimizer", o->optimizer, "Optimizer for training memory: sgd|momentum|adam")->capture_default_str();
  cmd->add_option("--precision,-p", o->precision,
                  "Training precision for memory: " + precision_mode_names() + " (default: every tensor at --dtype)");
  o->out.add_to(cmd);
  cmd->add_option("--plot", o->plot, "Also draw the per-layer shares chart to FILE.svg or FILE.png")->type_name("FILE");
  cmd->callback([o, depth, old_depth] {
    if (!o->plot.empty()) chart::check_chart_path(o->plot);
    if (old_depth->count()) std::cerr << "ridge: warning: -d for --depth is deprecated (-d is --device elsewhere)\n";
    report::SummaryOptions so;
    so.depth = o->depth;
    if (!o->convention.empty()) {
      so.convention = convention_flag(o->convention);
    }
    auto opt = parse_optimizer(o->optimizer);
    if (!opt) throw UsageError("--optimizer: '" + o->optimizer + "' is not sgd, momentum or adam");
    so.optimizer = *opt;
    LoadOptions lo = o->m.load_options();
    if (!o->precision.empty()) {
      so.precision = require_precision_mode(o->precision);
      if (!o->m.dtype_given()) lo.dtype = so.precision->activation_dtype;
    }
    announce_large_llm(o->model, "summary");
    Graph g = load_model(o->model, lo);
    o->m.check(incompleteness(g, estimate(g)), o->model);
    report::Document doc = report::summary_report(g, so);
    doc.inputs["dtype"] = std::string(dtype_name(lo.dtype));  // what was used: --dtype, else the precision's
    // Without --depth, a terminal gets the module roll-up that fits its height; files and pipes every node.
    const bool auto_depth = !depth->count() && !old_depth->count() && o->out.width() > 0;
    if (!o->plot.empty())  // a file, written before stdout as emit writes its files
      for (const auto& b : doc.blocks)
        if (auto* t = std::get_if<report::Table>(&b); t && t->key == "layers") {
          const auto shares = chart::layer_shares_from_table(
              *t, "name", {{"flops", "FLOPs"}, {"params", "params"}, {"output_bytes", "output memory"}});
          chart::write_chart(chart::layer_share_chart(g.name + ": share per layer", shares), o->plot);
        }
    if (auto_depth) {
      so.depth = report::fitting_depth(g, static_cast<size_t>(std::max(20, o->out.height() - 30)));
      o->out.emit(report::summary_report(g, so), std::move(doc));
    } else {
      o->out.emit(std::move(doc));
    }
  });
  return cmd;
}

}  // namespace ridge::cli
