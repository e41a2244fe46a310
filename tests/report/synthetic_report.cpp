#include "report/synthetic_report.hpp"

#include <cmath>

namespace ridge::test {

using report::Cell;
using report::Unit;

std::vector<std::string> synthetic_section_ids() { return {"summary", "layers", "charts", "prediction", "measurements"}; }

chart::ReportData synthetic_report(int layers) {
  chart::ReportData d;
  d.title = "ridge report: synthetic";
  d.subtitle = {"synthetic model, " + std::to_string(layers) + " layers, batch 1"};

  report::Table table;
  table.key = "layers";
  table.title = "Per-layer costs";
  table.columns = {{"name", "Layer"}, {"op", "Op"}, {"params", "Params", Unit::Param}, {"flops", "FLOPs", Unit::Flop},
                   {"bytes", "Bytes", Unit::Byte}, {"time_s", "Time", Unit::Second}};
  std::vector<chart::RoofPoint> roof;
  chart::LayerShares shares{{}, {"FLOPs", "params", "memory"}, {{}, {}, {}}};
  std::vector<chart::EstimateVsMeasured> scatter;
  Count total_flops = 0;
  for (int i = 0; i < layers; ++i) {
    std::string name = "block" + std::to_string(i / 3) + ".conv" + std::to_string(i % 3);
    Count flops = static_cast<Count>(1000000) * (1 + (i * 7919) % 997);
    Count bytes = static_cast<Count>(10000) * (1 + (i * 104729) % 631);
    Count params = (i % 4 == 3) ? 0 : static_cast<Count>(1000) * (1 + (i * 31) % 211);
    double time_s = 1e-6 * (1 + (i * 13) % 200);
    total_flops += flops;
    table.add_row({Cell::text(name), Cell::text(i % 4 == 3 ? "Relu" : "Conv"), Cell::count(params, Unit::Param),
                   Cell::count(flops, Unit::Flop), Cell::count(bytes, Unit::Byte), Cell::real(time_s, Unit::Second)});
    double intensity = to_double(flops) / to_double(bytes);
    roof.push_back({"estimated", name, intensity, std::min(intensity * 100e9, 2e12), "", i});
    shares.layers.push_back(name);
    shares.values[0].push_back(to_double(flops));
    shares.values[1].push_back(to_double(params));
    shares.values[2].push_back(to_double(bytes));
    scatter.push_back({name, to_double(flops), to_double(flops) * (1 + 0.1 * (i % 5)), i});
  }
  table.add_row({Cell::text("total"), Cell::empty(), Cell::empty(Unit::Param), Cell::count(total_flops, Unit::Flop)});
  table.total_rows = {layers};

  report::Fields summary{"totals", "Totals", {}};
  summary.add("flops", "Forward FLOPs", Cell::count(total_flops, Unit::Flop));
  summary.add("layers", "Layers", Cell::count(layers));
  d.sections.push_back({"summary", "Summary", {"Totals over every costed layer."}, {summary}, {}});
  d.sections.push_back({"layers", "Layers", {}, {table}, {}});

  std::vector<chart::RoofDevice> devices = {{"gpu-a", {{"FP32", 19.5e12}, {"FP16", 312e12}}, {{"DRAM", 1.5e12}, {"L2", 5e12}}},
                                            {"gpu-b", {{"FP32", 14e12}}, {{"DRAM", 0.9e12}}}};
  std::vector<chart::SweepSeries> sweep = {{"FLOPs (estimated)", {}, false}, {"FLOPs (measured)", {}, true}};
  for (int b = 1; b <= 64; b *= 2) {
    sweep[0].xy.push_back({double(b), to_double(total_flops) * b});
    sweep[1].xy.push_back({double(b), to_double(total_flops) * b * 1.1});
  }
  chart::ReportSection charts{"charts", "Charts", {}, {}, {}};
  charts.charts.push_back(chart::roofline_chart("Roofline", devices, roof));
  charts.charts.push_back(chart::sweep_chart("FLOPs against batch size", {"Batch size"}, {"FLOPs", "FLOP"}, sweep));
  charts.charts.push_back(chart::layer_share_chart("Share per layer", shares));
  d.sections.push_back(std::move(charts));

  report::Fields prediction{"prediction", "Predicted time", {}};
  prediction.add("time_s", "Forward time on gpu-a", Cell::real(1.23e-3, Unit::Second));
  d.sections.push_back({"prediction", "Prediction", {}, {prediction}, {}});
  d.sections.push_back({"measurements", "Measured next to estimated", {}, {},
                        {chart::scatter_chart("FLOPs: estimated vs measured", {"Estimated", "FLOP"}, {"Measured", "FLOP"}, scatter)}});
  d.notes = {"synthetic data for tests"};
  return d;
}

}  // namespace ridge::test
