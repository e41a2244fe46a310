// The batch-size sweep document and charts (`ridge sweep`, local or collected from Slurm).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "ridge/api.hpp"

namespace ridge::report {
namespace {

struct Quantity {
  const char* key;
  const char* title;
  Unit unit;
  Count SweepPoint::*field;
};
const Quantity kQ[] = {{"flops", "FLOPs", Unit::Flop, &SweepPoint::flops},
                       {"macs", "MACs", Unit::Mac, &SweepPoint::macs},
                       {"backward_flops", "bwd FLOPs", Unit::Flop, &SweepPoint::backward_flops},
                       {"bytes", "bytes moved", Unit::Byte, &SweepPoint::bytes},
                       {"activation_bytes", "activations", Unit::Byte, &SweepPoint::activation_bytes},
                       {"inference_peak_bytes", "inference peak", Unit::Byte, &SweepPoint::inference_peak_bytes},
                       {"training_peak_bytes", "training peak", Unit::Byte, &SweepPoint::training_peak_bytes}};

Table capacity_table(const SweepCapacity& c) {
  Table t;
  t.key = "capacity";
  t.columns = {{"model", "model"},
               {"device", "device"},
               {"memory_bytes", "device memory", Unit::Byte},
               {"max_batch_inference", "largest batch (inference)", Unit::Count, true},
               {"max_batch_training", "largest batch (training)", Unit::Count, true}};
  t.title = fmt::format("What fits in {} memory (inference peak; training peak with {} optimizer)", c.device,
                        c.optimizer);
  for (const auto& [model, fits] : c.models) {
    if (!fits) {
      t.add_row({Cell::text(model), Cell::text(c.device), Cell::empty(Unit::Byte), Cell::empty(), Cell::empty()});
      continue;
    }
    t.add_row({Cell::text(model), Cell::text(c.device), Cell::count(c.memory_bytes, Unit::Byte),
               Cell::count(fits->inference), c.trainable ? Cell::count(fits->training) : Cell::empty()});
  }
  return t;
}

}  // namespace

Document sweep_report(const SweepReportRequest& plan, const std::vector<SweepPoint>& results) {
  bool measured = false, predicted = false, bound = false;
  for (const auto& r : results) {
    measured = measured || r.measured;
    predicted = predicted || r.predicted;
    bound = bound || (r.predicted && !r.predicted_calibrated);
  }
  Table points;
  points.key = "points";
  points.title = "Per model and batch size (estimated" + std::string(measured ? ", and measured" : "") + ")";
  points.columns = {{"model", "model"}, {"batch", "batch", Unit::Count, true}};
  for (const auto& q : kQ) points.columns.push_back({q.key, q.title, q.unit, true});
  if (measured) {
    points.columns.push_back({"measured_time_s", "measured time", Unit::Second});
    points.columns.push_back({"measured_samples_per_s", "samples/s"});
  }
  if (predicted) {
    // What the predicted numbers are, beside them: peak-rate bounds unless every point was calibrated.
    const std::string kind = bound ? "upper bound (uncalibrated)" : "calibrated";
    points.columns.push_back({"predicted_time_s", "predicted time (" + plan.device + ", " + kind + ")", Unit::Second});
    points.columns.push_back({"predicted_samples_per_s", "predicted samples/s (" + kind + ")"});
  }
  std::map<std::string, std::pair<std::vector<double>, std::vector<std::vector<double>>>> series;
  for (const auto& r : results) {
    const std::string& model = r.model;
    const int64_t batch = r.batch;
    std::vector<Cell> row = {Cell::text(model), Cell::count(batch)};
    auto& [xs, ys] = series[model];
    ys.resize(std::size(kQ));
    xs.push_back(static_cast<double>(batch));
    for (size_t k = 0; k < std::size(kQ); ++k) {
      const Count v = r.*kQ[k].field;
      row.push_back(Cell::count(v, kQ[k].unit));
      ys[k].push_back(to_double(v));
    }
    if (measured) {
      row.push_back(r.measured_time_s ? Cell::real(*r.measured_time_s, Unit::Second) : Cell::empty(Unit::Second));
      row.push_back(r.measured_samples_per_s ? Cell::real(*r.measured_samples_per_s) : Cell::empty());
    }
    if (predicted) {
      row.push_back(r.predicted_time_s ? Cell::real(*r.predicted_time_s, Unit::Second) : Cell::empty(Unit::Second));
      row.push_back(r.predicted_samples_per_s ? Cell::real(*r.predicted_samples_per_s) : Cell::empty());
    }
    points.add_row(std::move(row));
  }
  Table fits;
  fits.key = "fits";
  fits.title = "Least-squares line per model: quantity = slope x batch + intercept";
  fits.columns = {{"model", "model"},
                  {"quantity", "quantity"},
                  {"slope_per_sample", "slope (per sample)"},
                  {"intercept", "intercept"},
                  {"r2", "R^2"}};
  std::vector<std::string> unfitted;
  for (const auto& [model, xy] : series) {
    const auto& [xs, ys] = xy;
    if (std::set<double>(xs.begin(), xs.end()).size() < 2) {  // one batch size: no line (a slope of 0 is not one)
      unfitted.push_back(model);
      continue;
    }
    for (size_t k = 0; k < std::size(kQ); ++k) {
      const auto fit = ingest::fit_line(xs, ys[k]);
      if (!fit) continue;
      double scale = 0;
      for (double y : ys[k]) scale = std::max(scale, std::fabs(y));
      fits.add_row({Cell::text(model), Cell::text(kQ[k].key), Cell::real(fit->slope, kQ[k].unit),
                    Cell::real(zero_if_noise(fit->intercept, scale), kQ[k].unit), Cell::real(fit->r2)});
    }
  }
  Document d;
  if (!unfitted.empty())
    d.notes.push_back(fmt::format("no line fitted for {}: one batch size (give two or more --batch values)",
                                  fmt::join(unfitted, ", ")));
  d.main_table = "points";
  std::vector<std::pair<std::string, std::vector<std::string>>> gaps;
  for (const auto& r : results)
    if (!r.not_costed_ops.empty()) gaps.emplace_back(r.model, r.not_costed_ops);
  mark_incomplete_models(d, gaps);
  if (plan.capacity) {
    d.blocks.push_back(capacity_table(*plan.capacity));
    for (const auto& [model, why] : plan.capacity->unknown)
      d.notes.push_back(fmt::format("largest batch of {} not computed: {}", model, why));
    if (!plan.capacity->trainable) d.notes.push_back("no training batch at an inference-only precision (int8)");
    for (const auto& [model, fits] : plan.capacity->models)
      if (fits && fits->limit > 0 &&
          (fits->inference >= fits->limit || (plan.capacity->trainable && fits->training >= fits->limit))) {
        d.notes.push_back(fmt::format("largest batch {} is where the search stops: more fit ({} at batch {} is within "
                                      "{} memory)", fits->limit, model, fits->limit, plan.capacity->device));
        break;
      }
  }
  d.title = fmt::format("batch-size sweep: {} ({} of {} points)", fmt::join(plan.models, ", "), results.size(),
                        plan.planned_points);
  d.blocks.push_back(std::move(points));
  d.blocks.push_back(std::move(fits));
  return d;
}

std::vector<chart::Chart> sweep_charts(const std::vector<SweepPoint>& results) {
  struct Line {
    Count SweepPoint::*field;
    const char* title;
  };
  const Line flops[] = {{&SweepPoint::flops, "forward FLOPs"}, {&SweepPoint::backward_flops, "backward FLOPs"}};
  const Line memory[] = {{&SweepPoint::inference_peak_bytes, "inference peak"},
                         {&SweepPoint::training_peak_bytes, "training peak"},
                         {&SweepPoint::activation_bytes, "all activations"}};
  std::vector<std::string> models;
  for (const auto& r : results)
    if (std::find(models.begin(), models.end(), r.model) == models.end()) models.push_back(r.model);
  auto series_of = [&](const Line* lines, size_t n) {
    std::vector<chart::SweepSeries> out;
    for (const auto& m : models)
      for (size_t k = 0; k < n; ++k) {
        chart::SweepSeries s;
        s.name = models.size() > 1 ? m + ": " + lines[k].title : lines[k].title;
        for (const auto& r : results)
          if (r.model == m) s.xy.push_back({static_cast<double>(r.batch), to_double(r.*lines[k].field)});
        out.push_back(std::move(s));
      }
    return out;
  };
  chart::Axis batch{"batch size", "", chart::Scale::Linear};
  std::vector<chart::Chart> charts = {
      chart::sweep_chart("FLOPs against batch size (estimated)", batch, chart::Axis{"FLOPs", "FLOP"},
                         series_of(flops, std::size(flops))),
      chart::sweep_chart("Memory against batch size (estimated)", batch, chart::Axis{"memory", "B"},
                         series_of(memory, std::size(memory)))};
  std::vector<chart::SweepSeries> measured;
  for (const auto& m : models) {
    chart::SweepSeries s;
    s.name = m + ": measured time";
    s.measured = true;
    for (const auto& r : results)
      if (r.model == m && r.measured_time_s.value_or(0.0) > 0)
        s.xy.push_back({static_cast<double>(r.batch), *r.measured_time_s});
    if (!s.xy.empty()) measured.push_back(std::move(s));
  }
  if (!measured.empty())
    charts.push_back(chart::sweep_chart("Measured time against batch size", batch, chart::Axis{"time", "s"}, measured));
  return charts;
}

}  // namespace ridge::report
