// The headline counts under every tool's convention (`ridge flops`).
#include <fmt/format.h>

#include <algorithm>

#include "ridge/api.hpp"
#include "ridge/llm_analysis.hpp"

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

namespace {

// When only ridge's count is shown: how far the other tools' headlines spread, so the reader knows they differ.
std::string other_tools_note(const Graph& g, const ModelCost& mc) {
  std::vector<std::pair<ConventionCount, const ConventionInfo*>> others;
  for (const auto& c : conventions())
    if (c.id != Convention::Ridge) others.push_back({count_under(g, c.id), &c});
  const auto [low, high] = std::minmax_element(others.begin(), others.end(),
                                               [](const auto& a, const auto& b) { return a.first.total < b.first.total; });
  const auto said = [&](const auto& o) {
    const std::string ratio = mc.total.flops > 0 ? fmt::format(" ({:.3g}x ridge's FLOPs)",
                                                                to_double(o.first.total) / to_double(mc.total.flops))
                                                 : "";
    return fmt::format("{} {} {}{}", o.second->name, with_commas(o.first.total), o.second->unit, ratio);
  };
  return fmt::format("other tools' headlines for this model run from {} to {}; --all-conventions (-a) lists all {} "
                     "with what each counts differently",
                     said(*low), said(*high), others.size());
}

}  // namespace

Document flops_report(const Graph& g, const std::vector<Convention>& which, const LlmConfig* llm) {
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
  if (llm && !g.inputs.empty() && g.value(g.inputs[0]).shape.rank() == 2) {
    const Shape& in = g.value(g.inputs[0]).shape;
    Table presets{"llm_conventions", "LLM formulas and tools (docs/llm.md)",
                  {{"convention", "convention"}, {"headline", "headline (exact)", Unit::Count, true}, {"unit", "unit"},
                   {"as_printed", "as the source prints it"},
                   {"ratio_to_ridge_flops", "vs ridge forward FLOPs", Unit::Ratio}, {"differs", "what differs"}},
                  {}, {}};
    for (const LlmConventionRow& r : llm_convention_rows(*llm, g, in[0], in[1]))
      presets.add_row({Cell::text(r.name), Cell::count(r.total), Cell::text(r.unit), Cell::text(r.as_printed),
                       r.unit == "FLOP" && mc.total.flops > 0
                           ? Cell::real(to_double(r.total) / to_double(mc.total.flops), Unit::Ratio)
                           : Cell::empty(),
                       Cell::text(r.differs)});
    d.blocks.push_back(std::move(presets));
  }
  if (which.size() == 1) d.notes.push_back(other_tools_note(g, mc));
  for (const auto& [op, count] : mc.excluded_ops)
    d.notes.push_back(fmt::format("{} node(s) of op {} could not be costed and are EXCLUDED from every count", count, op));
  for (const auto& n : g.notes) d.notes.push_back(n);
  mark_incomplete(d, incompleteness(g, mc));
  return d;
}

}  // namespace ridge::report
