// ridge flops: the headline count under ridge's convention and every popular tool's, side by side.
#include <fmt/format.h>

#include "commands.hpp"
#include "model_options.hpp"
#include "ridge/cost.hpp"
#include "ridge/error.hpp"

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
  cmd->add_option("MODEL", o->model, "Zoo name or .onnx file")->required();
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
    std::vector<Convention> which;
    if (o->all || o->convention.empty()) {
      for (const auto& c : conventions()) which.push_back(c.id);
      if (!o->all && o->convention.empty()) which = {Convention::Ridge};
    }
    if (!o->convention.empty()) {
      auto c = parse_convention(o->convention);
      if (!c) throw UsageError("--convention: unknown convention '" + o->convention + "'");
      if (!o->all) which = {Convention::Ridge, *c};
    }
    Graph g = load_model(o->model, o->m.load_options());
    ModelCost mc = estimate(g);
    const Incompleteness inc = incompleteness(g, mc);
    o->m.check(inc, o->model);
    using report::Cell;
    using report::Unit;
    report::Table t;
    t.key = "conventions";
    t.title = "Headline counts";
    t.columns = {{"convention", "convention"},
                 {"headline", "headline (exact)", Unit::Count, true},
                 {"unit", "unit"},
                 {"as_printed", "as the tool prints it"},
                 {"ratio_to_ridge_flops", "vs ridge", Unit::Ratio},
                 {"differs", "what differs"}};
    for (Convention c : which) {
      ConventionCount cc = count_under(g, c);
      const ConventionInfo& info = convention_info(c);
      double ratio = mc.total.flops > 0 ? to_double(cc.total) / to_double(mc.total.flops) : 0.0;
      t.add_row({Cell::text(std::string(info.name)), Cell::count(cc.total), Cell::text(std::string(info.unit)),
                 Cell::text(cc.headline_text), Cell::real(ratio, Unit::Ratio), Cell::text(std::string(info.differs))});
    }
    report::Fields totals;
    totals.key = "totals";
    totals.title = "ridge totals";
    totals.add("params", "params", Cell::count(mc.total.params, Unit::Param), true)
        .add("macs", "MACs", Cell::count(mc.total.macs, Unit::Mac), true)
        .add("flops", "FLOPs (forward)", Cell::count(mc.total.flops, Unit::Flop), true)
        .add("backward_flops", "FLOPs (backward)", Cell::count(mc.total.bwd_flops(), Unit::Flop), true);
    report::Document d;
    d.title = fmt::format("{} at input {}", g.name, g.inputs.empty() ? "-" : to_string(g.value(g.inputs[0]).shape));
    d.blocks.push_back(std::move(totals));
    d.blocks.push_back(std::move(t));
    for (const auto& [op, count] : mc.excluded_ops)
      d.notes.push_back(fmt::format("{} node(s) of op {} could not be costed and are EXCLUDED from every count", count, op));
    for (const auto& n : g.notes) d.notes.push_back(n);
    mark_incomplete(d, inc);
    o->out.emit(d);
  });
  return cmd;
}

}  // namespace ridge::cli
