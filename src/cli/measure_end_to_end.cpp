#include "measure_end_to_end.hpp"

namespace ridge::cli {

using report::Cell;
using report::Unit;

void add_end_to_end(report::Document& doc, const ModelMeasurement& m) {
  if (!m.end_to_end) return;
  const EndToEndMeasurement& e = *m.end_to_end;
  report::Fields f{"end_to_end", "End-to-end program (fused post-ops, folded BatchNorm, shared buffers)", {}};
  f.add("end_to_end_time_s", "forward time (median)", Cell::real(e.total.median_s, Unit::Second))
      .add("end_to_end_min_s", "fastest pass", Cell::real(e.total.min_s, Unit::Second))
      .add("end_to_end_spread_percent", "spread (IQR / median)", Cell::real(100 * e.total.spread, Unit::Percent))
      .add("end_to_end_repeats", "timed repeats", Cell::count(e.total.samples))
      .add("end_to_end_samples_per_s", "throughput (samples/s)", Cell::real(e.samples_per_s))
      .add("end_to_end_steps", "executed steps", Cell::count(static_cast<Count>(e.steps)))
      .add("end_to_end_buffer_bytes", "buffers", Cell::count(e.buffer_bytes, Unit::Byte))
      .add("per_layer_time_s", "per-layer program (median)", Cell::real(m.total.median_s, Unit::Second))
      .add("fusion_gain_percent", "gain over the per-layer program", Cell::real(e.gain_percent, Unit::Percent));
  doc.blocks.push_back(std::move(f));
  report::Table t{"fusion_groups", "Fused steps (median per step) vs the same nodes run one by one", {}, {}, {}};
  t.columns = {{"name", "step", Unit::None},
               {"nodes", "nodes", Unit::None},
               {"fused_time_s", "fused", Unit::Second},
               {"per_layer_time_s", "per layer", Unit::Second},
               {"gain_percent", "gain", Unit::Percent}};
  for (const auto& grp : e.groups) {
    std::string nodes;
    for (const auto& n : grp.nodes) nodes += (nodes.empty() ? "" : "+") + n;
    t.add_row({Cell::text(grp.name), Cell::text(nodes), Cell::real(grp.fused_time_s, Unit::Second),
               Cell::real(grp.per_layer_time_s, Unit::Second), Cell::real(grp.gain_percent, Unit::Percent)});
  }
  doc.blocks.push_back(std::move(t));
  report::Table steps{"end_to_end_steps", "Steps of the end-to-end program (median per step)", {}, {}, {}};
  steps.columns = {{"name", "step", Unit::None},
                   {"op", "op", Unit::None},
                   {"kernel", "kernel", Unit::None},
                   {"fused_nodes", "fused nodes", Unit::Count},
                   {"time_s", "time", Unit::Second}};
  for (const auto& l : e.layers)
    if (l.step.status == StepStatus::Executed)
      steps.add_row({Cell::text(l.step.name), Cell::text(l.step.op), Cell::text(l.step.kernel),
                     Cell::count(static_cast<Count>(l.step.fused_nodes.size())),
                     Cell::real(l.forward.median_s, Unit::Second)});
  doc.blocks.push_back(std::move(steps));
  doc.notes.insert(doc.notes.end(), e.notes.begin(), e.notes.end());
  doc.extra["end_to_end_time_s"] = e.total.median_s;
}

}  // namespace ridge::cli
