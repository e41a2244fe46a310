// `ridge calibrate FILE...`: fit PPP factors per op class from measurements and write a calibration file that
// `ridge predict --calibration` reads; report per-layer errors before/after and leave-one-model-out.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <set>

#include "commands.hpp"
#include "ridge/device.hpp"
#include "ridge/error.hpp"
#include "ridge/predict.hpp"

namespace ridge::cli {
namespace {

using report::Cell;
using report::Unit;

struct CalibrateArgs {
  std::vector<std::string> files, device_dirs;
  std::string device = "machine", precision = "fp32", output = "ridge-calibration.json", level = "dram";
  int min_samples = 3;
  bool force = false;
  OutputOptions out;
};

Cell factor_cell(double v) { return std::isinf(v) ? Cell::text("(term fitted to 0)") : Cell::real(v, Unit::Ratio); }

void add_stats(report::Fields& f, const std::string& key, const std::string& title, const ErrorStats& st) {
  f.add(key + ".median", title + " median error", Cell::real(100 * st.median, Unit::Percent));
  f.add(key + ".p90", title + " p90 error", Cell::real(100 * st.p90, Unit::Percent));
}

void run(const CalibrateArgs& a) {
  const auto precision = parse_precision(a.precision);
  if (!precision) throw UsageError("--precision " + a.precision + ": unknown (use fp64, fp32, tf32, fp16, bf16, int8)");
  const Device d = find_device(load_devices(a.device_dirs), a.device);
  std::vector<MeasuredRun> ms;
  std::vector<std::string> forced;
  for (const auto& f : a.files) {
    ms.push_back(read_measurement(f));
    // Measurements of another device (an A100 profile calibrated as this CPU) are refused.
    const auto lines = check_run_matches(f, {"", ms.back().device, 0, ""}, {"", d.id == "machine" ? "" : d.id, 0, ""},
                                         a.force);
    forced.insert(forced.end(), lines.begin(), lines.end());
  }
  int skipped = 0;
  const std::vector<Sample> samples = samples_from(ms, &skipped);
  if (samples.empty())
    throw Error(fmt::format("{}: no usable layers (each needs time_s > 0 and flops; see docs/model.md)", a.files.front()));

  PredictOptions hw;
  hw.peak_flop_per_s = d.require_peak(*precision);
  hw.bandwidth_bytes_per_s = d.bandwidth(a.level);
  hw.kernel_launch_s = d.kernel_launch_s;
  Calibration cal = calibrate(samples, hw.peak_flop_per_s, hw.bandwidth_bytes_per_s, a.min_samples);
  cal.device = d.id;
  cal.precision = std::string(precision_info(*precision).name);
  const CalibrationCheck check = check_calibration(samples, hw, Calibration{}, a.min_samples);
  if (!check.leave_one_model_out.empty()) {
    std::vector<double> e2e;
    for (const auto& m : check.leave_one_model_out) e2e.push_back(m.end_to_end_error);
    cal.leave_one_out_error = error_stats(e2e).median;
  }
  report::write_text_file(a.output, calibration_to_json(cal).dump(2) + "\n");

  std::set<std::string> models;
  for (const auto& s : samples) models.insert(s.model);
  report::Document doc;
  doc.title = fmt::format("Calibration on {} ({}) from {} layer(s) of {} model(s)", d.id, a.precision, samples.size(),
                          models.size());
  report::Fields f{"summary", "Summary", {}};
  f.add("samples", "layers used", Cell::count(static_cast<Count>(samples.size())));
  f.add("skipped", "layers skipped (no time or FLOPs)", Cell::count(skipped));
  add_stats(f, "before", "before (PPP 1, device launch overhead):", check.before);
  add_stats(f, "after", "after (in-sample):", check.after);
  f.add("output", "calibration file", Cell::text(a.output));
  if (cal.leave_one_out_error)
    f.add("leave_one_out_error", "leave-one-model-out median end-to-end error",
          Cell::real(100 * *cal.leave_one_out_error, Unit::Percent));
  std::vector<std::string> flags = calibration_flags(cal);
  int busy = 0;
  for (const MeasuredRun& m : ms)
    for (const MeasuredRow& l : m.layers) busy += l.flags.empty() ? 0 : 1;
  if (busy > 0) flags.push_back(fmt::format("busy-machine: {} layer(s) with min/max spread > 50 % of the median", busy));
  flags.insert(flags.end(), forced.begin(), forced.end());
  if (!flags.empty()) f.add("flags", "flags", Cell::text(fmt::format("{}", fmt::join(flags, "; "))));
  doc.extra["flags"] = flags;
  doc.blocks.push_back(std::move(f));

  report::Table classes{"classes", "Fitted factors per op class", {{"op_class", "op class", Unit::None},
      {"samples", "layers", Unit::Count}, {"ppp", "PPP", Unit::Ratio}, {"ppp_mem", "PPP memory", Unit::Ratio},
      {"ppp_write", "PPP writes", Unit::Ratio}, {"overhead_s", "overhead", Unit::Second}}, {}, {}};
  auto add_class = [&](const std::string& name, const Efficiency& e) {
    classes.add_row({Cell::text(name), Cell::count(e.samples), factor_cell(e.ppp), factor_cell(e.ppp_mem),
                     e.ppp_write ? factor_cell(*e.ppp_write) : Cell::text("(= memory)"),
                     Cell::real(e.overhead_s.value_or(0), Unit::Second)});
  };
  for (const auto& [name, e] : cal.by_class) add_class(name, e);
  add_class("(fallback: all layers)", cal.fallback);
  doc.blocks.push_back(std::move(classes));

  if (!check.leave_one_model_out.empty()) {
    report::Table lomo{"leave_one_model_out", "Leave-one-model-out (fitted on the other models)",
                       {{"model", "model", Unit::None}, {"layers", "layers", Unit::Count},
                        {"median_error", "median layer error", Unit::Percent}, {"p90_error", "p90 layer error", Unit::Percent},
                        {"end_to_end_error", "end-to-end error", Unit::Percent}}, {}, {}};
    for (const auto& m : check.leave_one_model_out)
      lomo.add_row({Cell::text(m.model), Cell::count(static_cast<Count>(m.layer_error.count)),
                    Cell::real(100 * m.layer_error.median, Unit::Percent), Cell::real(100 * m.layer_error.p90, Unit::Percent),
                    Cell::real(100 * m.end_to_end_error, Unit::Percent)});
    doc.blocks.push_back(std::move(lomo));
  } else {
    doc.notes.push_back("leave-one-model-out needs measurements of at least two models");
  }
  doc.notes.push_back("model: time = flops/(PPP x peak) + bytes read/(PPP_mem x bandwidth) + bytes written/(PPP_writes x "
                      "bandwidth) + overhead, fitted per op class by non-negative least squares on relative error "
                      "(writes get their own factor only where it fits clearly better); classes with fewer than " +
                      std::to_string(a.min_samples) + " layers use the fallback");
  doc.notes.push_back("errors are |predicted - measured| / measured per layer; use it with `ridge predict --calibration " +
                      a.output + "`");
  a.out.emit(doc);
}

}  // namespace

CLI::App* add_calibrate_command(CLI::App& app) {
  auto a = std::make_shared<CalibrateArgs>();
  CLI::App* cmd = app.add_subcommand("calibrate", "Fit PPP factors per op class from measurements (ridge measure/ingest JSON)");
  cmd->add_option("files", a->files, "Measurement JSON files (`ridge measure --format json`, `ridge ingest --format json`)")
      ->required()->type_name("FILE...");
  cmd->add_option("--device,-d", a->device, "Device the measurements ran on")->capture_default_str();
  cmd->add_option("--precision,-p", a->precision, "Precision of the peak the factors refer to")->capture_default_str();
  cmd->add_option("--output,-o", a->output, "Calibration file to write")->capture_default_str();
  cmd->add_option("--level", a->level, "Memory level whose bandwidth the memory term uses")->capture_default_str();
  cmd->add_option("--min-samples", a->min_samples, "Fewest layers for an op class to get its own factors")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_flag("--force", a->force, "Use measurements of another device anyway (the output says so)");
  cmd->add_option("--devices-dir,--devices", a->device_dirs, "Also load device files from DIR")->type_name("DIR");
  a->out.add_to(cmd);
  cmd->callback([a] { run(*a); });
  return cmd;
}

}  // namespace ridge::cli
