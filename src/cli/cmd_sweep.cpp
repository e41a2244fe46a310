// ridge sweep: FLOPs and memory against batch size, with a least-squares line per quantity.
#include <fmt/format.h>

#include <chrono>

#include "commands.hpp"
#include "model_options.hpp"
#include "ridge/chart.hpp"
#include "ridge/cost.hpp"
#include "ridge/error.hpp"

namespace ridge::cli {

namespace {

struct Fit {
  double slope = 0, intercept = 0, r2 = 1;
};

Fit least_squares(const std::vector<double>& x, const std::vector<double>& y) {
  Fit f;
  const double n = static_cast<double>(x.size());
  if (x.size() < 2) {
    f.intercept = y.empty() ? 0 : y[0];
    return f;
  }
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sx += x[i];
    sy += y[i];
    sxx += x[i] * x[i];
    sxy += x[i] * y[i];
  }
  const double den = n * sxx - sx * sx;
  if (den == 0) return f;
  f.slope = (n * sxy - sx * sy) / den;
  f.intercept = (sy - f.slope * sx) / n;
  double mean = sy / n, ss_tot = 0, ss_res = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    double p = f.slope * x[i] + f.intercept;
    ss_res += (y[i] - p) * (y[i] - p);
    ss_tot += (y[i] - mean) * (y[i] - mean);
  }
  f.r2 = ss_tot > 0 ? 1.0 - ss_res / ss_tot : 1.0;
  return f;
}

}  // namespace

CLI::App* add_sweep_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("sweep", "FLOPs and memory against batch size, with a least-squares line each");
  struct Opts {
    std::string model, batches = "1:501:50", optimizer = "sgd", plot;
    ModelOptions m;
    OutputOptions out;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("MODEL", o->model, "Zoo name or .onnx file")->required();
  cmd->add_option("--batch,-b", o->batches, "Batch sizes: START:STOP[:STEP] (STOP inclusive) or a list 1,8,64")
      ->capture_default_str();
  o->m.add_to(cmd, /*with_batch=*/false);
  cmd->add_option("--optimizer", o->optimizer, "Optimizer for training memory: sgd|momentum|adam")->capture_default_str();
  o->out.add_to(cmd);
  cmd->add_option("--plot", o->plot, "Also draw FLOPs and memory against batch to FILE.svg or FILE.png")->type_name("FILE");
  cmd->callback([o] {
    if (!o->plot.empty()) chart::check_chart_path(o->plot);
    auto batches = parse_batch_list(o->batches, "--batch");
    auto opt = parse_optimizer(o->optimizer);
    if (!opt) throw UsageError("--optimizer: '" + o->optimizer + "' is not sgd, momentum or adam");
    using report::Cell;
    using report::Unit;
    struct Quantity {
      const char* key;
      const char* title;
      Unit unit;
    };
    const Quantity q[] = {{"flops", "FLOPs", Unit::Flop},
                          {"macs", "MACs", Unit::Mac},
                          {"backward_flops", "bwd FLOPs", Unit::Flop},
                          {"bytes", "bytes moved", Unit::Byte},
                          {"activation_bytes", "activations", Unit::Byte},
                          {"inference_peak_bytes", "inference peak", Unit::Byte},
                          {"training_peak_bytes", "training peak", Unit::Byte}};
    constexpr size_t kQ = sizeof(q) / sizeof(q[0]);
    report::Table points;
    points.key = "points";
    points.title = "Per batch size";
    points.columns.push_back({"batch", "batch", Unit::Count, true});
    for (const auto& x : q) points.columns.push_back({x.key, x.title, x.unit, true});
    std::vector<double> xs;
    std::vector<std::vector<double>> ys(kQ);
    std::string name;
    const auto start = std::chrono::steady_clock::now();
    for (size_t i = 0; i < batches.size(); ++i) {
      const int64_t b = batches[i];
      if (std::chrono::steady_clock::now() - start > std::chrono::seconds(2))
        progress(fmt::format("sweep: batch {} ({}/{})", b, i + 1, batches.size()));
      Graph g = load_model(o->model, o->m.load_options(b));
      name = g.name;
      ModelCost mc = estimate(g);
      MemoryEstimate mem = estimate_memory(g, *opt);
      const Count vals[kQ] = {mc.total.flops,       mc.total.macs,   mc.total.bwd_flops(),
                              mc.total.bytes(),     mem.activation_bytes, mem.inference_peak_bytes,
                              mem.training_peak_bytes};
      std::vector<Cell> row = {Cell::count(b)};
      for (size_t k = 0; k < kQ; ++k) {
        row.push_back(Cell::count(vals[k], q[k].unit));
        ys[k].push_back(to_double(vals[k]));
      }
      xs.push_back(static_cast<double>(b));
      points.add_row(std::move(row));
    }
    report::Table fits;
    fits.key = "fits";
    fits.title = "Least-squares line: quantity = slope x batch + intercept";
    fits.columns = {{"quantity", "quantity"},
                    {"slope_per_sample", "slope (per sample)"},
                    {"intercept", "intercept"},
                    {"r2", "R^2"}};
    for (size_t k = 0; k < kQ; ++k) {
      Fit f = least_squares(xs, ys[k]);
      fits.add_row({Cell::text(q[k].key), Cell::real(f.slope, q[k].unit), Cell::real(f.intercept, q[k].unit),
                    Cell::real(f.r2)});
    }
    report::Document d;
    d.title = fmt::format("{}: batch-size sweep ({} points)", name, batches.size());
    d.blocks.push_back(std::move(points));
    d.blocks.push_back(std::move(fits));
    o->out.emit(d);
    if (o->plot.empty()) return;
    auto series = [&](size_t k) {
      chart::SweepSeries s{q[k].title, {}, false};
      for (size_t i = 0; i < xs.size(); ++i) s.xy.push_back({xs[i], ys[k][i]});
      return s;
    };
    chart::write_charts({chart::sweep_chart(name + ": FLOPs against batch size", {"Batch size"}, {"FLOPs", "FLOP"}, {series(0), series(2)}),
                         chart::sweep_chart(name + ": memory against batch size", {"Batch size"}, {"Memory", "B"}, {series(4), series(5), series(6)})},
                        o->plot);
  });
  return cmd;
}

}  // namespace ridge::cli
