// Models and layers on device rooflines (`ridge roofline`), with measurements matched to them.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <map>

#include "ridge/api.hpp"
#include "ridge/error.hpp"
#include "roofs.hpp"

namespace ridge::report {
namespace {

std::vector<Column> point_columns() {
  return {{"flops", "FLOPs", Unit::Flop},
          {"bytes", "bytes", Unit::Byte},
          {"bytes_source", "bytes from", Unit::None},
          {"intensity_flop_per_byte", "AI", Unit::FlopPerByte},
          {"attainable_flop_per_s", "attainable", Unit::FlopPerSecond},
          {"bound", "bound", Unit::None},
          {"time_lower_bound_s", "min time", Unit::Second},
          {"measured_time_s", "measured", Unit::Second},
          {"achieved_flop_per_s", "achieved", Unit::FlopPerSecond},
          {"roofline_percent", "of roof", Unit::Percent},
          {"flags", "flags", Unit::None}};
}

// Cells for point_columns(): the roofline point of (flops, bytes) and, when measured, the achieved fraction.
std::vector<Cell> point_cells(Count flops, Count bytes, bool measured_bytes, std::optional<double> time_s, double peak,
                              double bw) {
  const RooflinePoint p = roofline_point(flops, bytes, peak, bw);
  std::vector<Cell> row = {Cell::count(flops, Unit::Flop), Cell::count(bytes, Unit::Byte),
                           Cell::text(measured_bytes ? "measured" : "estimate"),
                           std::isfinite(p.intensity_flop_per_byte) ? Cell::real(p.intensity_flop_per_byte, Unit::FlopPerByte)
                                                                    : Cell::empty(Unit::FlopPerByte),
                           Cell::real(p.attainable_flop_per_s, Unit::FlopPerSecond), Cell::text(std::string(bound_name(p.bound))),
                           Cell::real(p.time_lower_bound_s, Unit::Second)};
  if (time_s && *time_s > 0) {
    const double achieved = to_double(flops) / *time_s;
    row.push_back(Cell::real(*time_s, Unit::Second));
    row.push_back(Cell::real(achieved, Unit::FlopPerSecond));
    row.push_back(p.attainable_flop_per_s > 0 ? Cell::real(100 * achieved / p.attainable_flop_per_s, Unit::Percent)
                                              : Cell::empty(Unit::Percent));
    std::string flags;  // a measured point above its roof: its counts, the device or the peak are off
    for (const auto& f : roof_flags(flops, bytes, *time_s, peak, bw)) flags += (flags.empty() ? "" : ", ") + f;
    row.push_back(Cell::text(flags));
  } else {
    for (int i = 0; i < 4; ++i) row.push_back(Cell::empty());
  }
  return row;
}

}  // namespace

RooflineResult roofline_report(const RooflineRequest& a) {
  const auto precision = parse_precision(a.precision);
  if (!precision) throw UsageError("--precision " + a.precision + ": unknown (use fp64, fp32, tf32, fp16, bf16, int8)");
  if (a.devices.empty()) throw UsageError("--device: the roofline needs at least one device (see `ridge devices`)");
  if (a.models.empty()) throw UsageError("roofline: give at least one model");
  const std::vector<Device> db = load_devices(a.device_dirs);
  std::vector<Device> devices;
  for (const auto& name : a.devices) devices.push_back(find_device(db, name));
  std::vector<MeasuredRun> measurements = a.measured;
  for (const auto& f : a.measured_files) measurements.push_back(read_measurement(f));

  Document doc;
  LoadOptions load = a.load;
  load.dtype = a.dtype.value_or(precision_info(*precision).dtype);
  doc.title = fmt::format("Roofline at batch {} ({}, {} bandwidth)", load.batch, a.precision, a.level);
  Table devs{"devices", "Devices", {{"device", "device", Unit::None}, {"peak_flop_per_s", "peak", Unit::FlopPerSecond},
                                   {"bandwidth_bytes_per_s", "bandwidth", Unit::BytePerSecond},
                                   {"ridge_flop_per_byte", "ridge point", Unit::FlopPerByte},
                                   {"achieved_flop_per_s", "best measured matmul", Unit::FlopPerSecond}}, {}, {}};
  Table models{"models", "Models", {{"model", "model", Unit::None}, {"device", "device", Unit::None}}, {}, {}};
  Table layers{"layers", "Layers", {{"model", "model", Unit::None}, {"device", "device", Unit::None},
                                   {"layer", "layer", Unit::None}, {"op", "op", Unit::None}}, {}, {}};
  for (auto* t : {&models, &layers})
    for (const auto& c : point_columns()) t->columns.push_back(c);
  for (const Device& d : devices) {
    const double peak = d.require_peak(*precision), bw = d.bandwidth(a.level);
    // The device file's measured ceiling at this precision (achieved.flops), beside the data-sheet peak.
    const std::optional<double> achieved = d.achieved_fraction(*precision);
    devs.add_row({Cell::text(d.id), Cell::real(peak, Unit::FlopPerSecond), Cell::real(bw, Unit::BytePerSecond),
                  Cell::real(ridge_point(peak, bw), Unit::FlopPerByte),
                  achieved ? Cell::real(*achieved * peak, Unit::FlopPerSecond) : Cell::empty()});
  }
  // One roofline chart per device: model points, and layer points unless --summary.
  std::map<std::string, std::vector<chart::RoofPoint>> points;
  auto add_point = [&](const std::string& device, const std::string& series, const std::string& label, Count flops,
                       Count bytes, std::optional<double> time_s, double peak, double bw) {
    if (flops <= 0 || bytes <= 0) return;
    const RooflinePoint p = roofline_point(flops, bytes, peak, bw);
    const double rate = time_s && *time_s > 0 ? to_double(flops) / *time_s : p.attainable_flop_per_s;
    points[device].push_back({series + (time_s && *time_s > 0 ? " (measured)" : " (attainable)"), label,
                              p.intensity_flop_per_byte, rate, "", -1});
  };
  std::vector<bool> used(measurements.size(), false);
  for (const auto& model : a.models) {
    const ModelWork work = load_model_work(model, load);
    if (a.strict) require_complete(work.incomplete, model);
    doc.notes.insert(doc.notes.end(), work.notes.begin(), work.notes.end());
    for (const Device& d : devices) {
      const double peak = d.require_peak(*precision), bw = d.bandwidth(a.level);
      // A measurement belongs to this model (by name, or the only model) and to this device when it names one.
      const MeasuredRun* m = nullptr;
      if (auto i = match_measurement(measurements, work.name, model, a.models.size() == 1, d, devices.size() == 1)) {
        m = &measurements[*i], used[*i] = true;
        // Matched as the only model or device: what the file records must still agree.
        for (auto& line : check_measurement_matches(*m, work.name, model, d, a.load.batch, a.force))
          doc.notes.push_back(std::move(line));
      }
      const MeasuredTotals mt = m ? measured_totals(*m) : MeasuredTotals{};
      const Count flops = mt.flops.value_or(work.total.flops);
      const Count bytes = mt.bytes.value_or(work.total.bytes());
      std::vector<Cell> row = {Cell::text(work.name), Cell::text(d.id)};
      for (auto& c : point_cells(flops, bytes, mt.bytes.has_value(), mt.time_s, peak, bw))
        row.push_back(std::move(c));
      models.add_row(std::move(row));
      add_point(d.id, "models", work.name, flops, bytes, mt.time_s, peak, bw);
      if (m)
        doc.notes.push_back(fmt::format("{} on {}: from {}: FLOPs {}, bytes {}, time {}", work.name, d.id, m->file,
                                        mt.flops ? "measured" : "estimated (not in every row)",
                                        mt.bytes ? "measured" : "estimated (not in every row)",
                                        mt.time_s ? "measured" : "not measured (no time in every row)"));
      if (a.summary_only) continue;
      for (const LayerWork& l : work.layers) {
        std::vector<Cell> lrow = {Cell::text(work.name), Cell::text(d.id), Cell::text(l.name), Cell::text(l.op_class)};
        if (!l.costed) {
          for (size_t i = 0; i < point_columns().size(); ++i) lrow.push_back(Cell::empty());
          lrow[4 + 5] = Cell::text("not costed: " + l.reason);  // the bound column says why
        } else {
          const MeasuredRow* ml = nullptr;
          if (auto it = mt.by_layer.find(l.name); m && it != mt.by_layer.end()) ml = it->second;
          const bool mb = ml && ml->bytes;
          for (auto& c : point_cells(l.flops, mb ? *ml->bytes : l.bytes, mb, ml ? ml->time_s : std::nullopt,
                                     peak, bw))
            lrow.push_back(std::move(c));
          add_point(d.id, a.models.size() > 1 ? work.name + " layers" : "layers", l.name, l.flops,
                    mb ? *ml->bytes : l.bytes, ml ? ml->time_s : std::nullopt, peak, bw);
        }
        layers.add_row(std::move(lrow));
      }
    }
  }
  for (size_t i = 0; i < measurements.size(); ++i)
    if (!used[i]) doc.notes.push_back(measurements[i].file + ": matches no model/device of this command (model '" +
                                      measurements[i].model + "'); not used");
  doc.notes.push_back("attainable = min(peak, AI x bandwidth); bound: memory below the ridge point, compute at or above");
  doc.blocks.push_back(std::move(devs));
  doc.blocks.push_back(std::move(models));
  if (!a.summary_only) doc.blocks.push_back(std::move(layers));
  std::vector<chart::Chart> charts;
  for (const Device& d : a.charts ? devices : std::vector<Device>{}) {
    // The chosen precision and level first (they define the ridge point), then the device's other roofs.
    const chart::RoofDevice rd = roof_device(d, *precision, true, a.level);
    charts.push_back(chart::roofline_chart(fmt::format("{} on {} ({})", fmt::join(a.models, ", "), d.id, a.precision),
                                           {rd}, points[d.id]));
  }
  return {std::move(doc), std::move(charts)};
}

}  // namespace ridge::report
