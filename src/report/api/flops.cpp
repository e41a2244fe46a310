// The headline counts under every tool's convention (`ridge flops`).
#include <fmt/format.h>

#include "ridge/api.hpp"

namespace ridge::report {

std::vector<Convention> flops_conventions(bool all, std::optional<Convention> one) {
  std::vector<Convention> which;
  if (all)
    for (const auto& c : conventions()) which.push_back(c.id);
  else
    which = {Convention::Ridge};
  if (one && !all) which.push_back(*one);
  return which;
}

Document flops_report(const Graph& g, const std::vector<Convention>& which) {
  const ModelCost mc = estimate(g);
  Table t;
  t.key = "conventions";
  t.title = "Headline counts";
  t.columns = {{"convention", "convention"},
               {"headline", "headline (exact)", Unit::Count, true},
               {"unit", "unit"},
               {"as_printed", "as the tool prints it"},
               {"ratio_to_ridge_flops", "vs ridge", Unit::Ratio},
               {"differs", "what differs"}};
  for (Convention c : which) {
    const ConventionCount cc = count_under(g, c);
    const ConventionInfo& info = convention_info(c);
    const double ratio = mc.total.flops > 0 ? to_double(cc.total) / to_double(mc.total.flops) : 0.0;
    t.add_row({Cell::text(std::string(info.name)), Cell::count(cc.total), Cell::text(std::string(info.unit)),
               Cell::text(cc.headline_text), Cell::real(ratio, Unit::Ratio), Cell::text(std::string(info.differs))});
  }
  Fields totals;
  totals.key = "totals";
  totals.title = "ridge totals";
  totals.add("params", "params", Cell::count(mc.total.params, Unit::Param), true)
      .add("macs", "MACs", Cell::count(mc.total.macs, Unit::Mac), true)
      .add("flops", "FLOPs (forward)", Cell::count(mc.total.flops, Unit::Flop), true)
      .add("backward_flops", "FLOPs (backward)", Cell::count(mc.total.bwd_flops(), Unit::Flop), true);
  Document d;
  d.title = fmt::format("{} at input {}", g.name, g.inputs.empty() ? "-" : to_string(g.value(g.inputs[0]).shape));
  d.blocks.push_back(std::move(totals));
  d.blocks.push_back(std::move(t));
  for (const auto& [op, count] : mc.excluded_ops)
    d.notes.push_back(fmt::format("{} node(s) of op {} could not be costed and are EXCLUDED from every count", count, op));
  for (const auto& n : g.notes) d.notes.push_back(n);
  return d;
}

}  // namespace ridge::report
