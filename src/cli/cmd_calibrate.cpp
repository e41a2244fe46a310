// `ridge calibrate FILE...`: fit PPP factors per op class from measurements and write a calibration file that
// `ridge predict --calibration` reads; report per-layer errors before/after and leave-one-model-out.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>

#include "commands.hpp"
#include "ridge/device.hpp"
#include "ridge/error.hpp"
#include "ridge/llm_analysis.hpp"
#include "ridge/predict.hpp"

namespace ridge::cli {
namespace {

using report::Cell;
using report::Unit;

struct CalibrateArgs {
  std::vector<std::string> files, device_dirs;
  std::string device = "machine", precision = "auto", output = "ridge-calibration.json", level = "dram";
  std::string calibration, hold_out, scope = "llm";
  int min_samples = 3;
  bool force = false, evaluate = false;
  OutputOptions out;
};

Cell factor_cell(double v) { return std::isinf(v) ? Cell::text("(term fitted to 0)") : Cell::real(v, Unit::Ratio); }

void add_stats(report::Fields& f, const std::string& key, const std::string& title, const ErrorStats& st) {
  f.add(key + ".median", title + " median error", Cell::real(100 * st.median, Unit::Percent));
  f.add(key + ".p90", title + " p90 error", Cell::real(100 * st.p90, Unit::Percent));
}

Precision precision_flag(const std::string& text) {
  const auto p = parse_precision(text);
  if (!p) throw UsageError("--precision " + text + ": unknown (use fp64, fp32, tf32, fp16, bf16, int8)");
  return *p;
}

void add_class_row(report::Table& classes, const std::string& name, const Efficiency& e, Combine file_combine) {
  classes.add_row({Cell::text(name), Cell::count(e.samples), factor_cell(e.ppp), factor_cell(e.ppp_mem),
                   e.ppp_write ? factor_cell(*e.ppp_write) : Cell::text("(= memory)"),
                   Cell::real(e.overhead_s.value_or(0), Unit::Second), Cell::text(e.vector_pipe ? "vector" : "peak"),
                   Cell::text(std::string(combine_name(e.combine.value_or(file_combine))))});
}

report::Table class_table(const Calibration& cal) {
  report::Table classes{"classes", "Fitted factors per op class", {{"op_class", "op class", Unit::None},
      {"samples", "layers", Unit::Count}, {"ppp", "PPP", Unit::Ratio}, {"ppp_mem", "PPP memory", Unit::Ratio},
      {"ppp_write", "PPP writes", Unit::Ratio}, {"overhead_s", "overhead", Unit::Second},
      {"flops_pipe", "FLOPs at", Unit::None}, {"combine", "combine", Unit::None}}, {}, {}};
  for (const auto& [name, e] : cal.by_class) add_class_row(classes, name, e, cal.combine);
  add_class_row(classes, "(fallback: all layers)", cal.fallback, cal.combine);
  return classes;
}

bool is_csv(const std::string& f) { return f.size() > 4 && f.compare(f.size() - 4, 4, ".csv") == 0; }

nlohmann::json stats_json(const ErrorStats& st) {
  return {{"median_abs_error", st.median}, {"p90_abs_error", st.p90}, {"count", st.count}};
}

// Errors per Vidur operator (and the pooled figure) of one evaluation, as a table.
report::Table op_error_table(const std::string& key, const std::string& title, const LlmEvaluation& e) {
  report::Table t{key, title, {{"op", "operator", Unit::None}, {"count", "measurements", Unit::Count},
      {"median_abs_error", "median |error|", Unit::Percent}, {"p90_abs_error", "p90 |error|", Unit::Percent}}, {}, {}};
  auto row = [&](const std::string& name, const ErrorStats& st) {
    t.add_row({Cell::text(name), Cell::count(static_cast<Count>(st.count)), Cell::real(100 * st.median, Unit::Percent),
               Cell::real(100 * st.p90, Unit::Percent)});
  };
  for (const auto& [op, st] : e.by_op) row(op, st);
  row("(all operators)", e.all);
  t.total_rows.push_back(static_cast<int>(t.rows.size()) - 1);
  return t;
}

// The fit's fastest measurement, and what predictions on `d` at `p` make of it when it is above the device's
// measured ceiling (cap_at_achieved_flops scales the compute factors then): a summary field and a note.
void describe_best_measured(const Calibration& cal, const std::string& file, const Device& d, Precision p,
                            report::Fields& f, report::Document& doc) {
  if (!cal.best_measured_flop_per_s) return;
  f.add("best_measured_flop_per_s", "fastest measurement", Cell::real(*cal.best_measured_flop_per_s, Unit::FlopPerSecond));
  Calibration applied = cal;
  applied.file = file;
  if (const std::string note = cap_at_achieved_flops(applied, d, p); !note.empty())
    doc.notes.push_back("predictions will scale this fit: " + note);
}

// `ridge calibrate PROFILE.csv...`: Vidur per-operator profiles of an LLM layer (docs/llm.md).
void run_llm(const CalibrateArgs& a) {
  std::vector<LlmOpMeasurement> ms;
  std::vector<std::string> families;  // per file, from its name
  for (const auto& f : a.files) {
    auto part = read_vidur_op_csv(f);
    families.push_back(part.front().device_family);
    ms.insert(ms.end(), part.begin(), part.end());
  }
  const bool cnn = a.scope == "cnn";
  if (cnn) ms = cnn_view_of_operators(ms);
  const std::vector<Device> devices = load_devices(a.device_dirs);
  std::optional<Calibration> given;
  if (a.evaluate) {
    if (a.calibration.empty()) throw UsageError("--evaluate needs --calibration FILE (the fit to check)");
    if (!a.hold_out.empty()) throw UsageError("--hold-out fits; with --evaluate nothing is fitted");
    given = read_calibration(a.calibration);
  }
  // The device: --device, else (evaluating) the one the calibration was fitted on.
  const std::string device_id = a.device != "machine" ? a.device : given ? given->device : "";
  if (device_id.empty())
    throw UsageError("--device: name the GPU the profiles ran on (e.g. a100-sxm4-80gb, h100-sxm)");
  const Device d = find_device(devices, device_id);
  const Precision p = precision_flag(a.precision == "auto" ? (given ? given->precision : "fp16") : a.precision);
  std::vector<std::string> flags;
  for (size_t i = 0; i < a.files.size(); ++i) {
    if (!families[i].empty() && families[i] != device_family(d.id)) {
      const std::string what = fmt::format("{}: measured on {} (file name), calibrating for {} (family {})", a.files[i],
                                           families[i], d.id, device_family(d.id));
      if (!a.force) throw Error(what + " (use --force to use it anyway)");
      flags.push_back("forced: " + what);
    }
  }
  report::Document doc;
  report::Fields f{"summary", "Summary", {}};
  const std::string files = fmt::format("{}", fmt::join(a.files, " "));
  if (given) {
    const auto lines = check_calibration_applies(*given, d.id, p, a.force);
    flags.insert(flags.end(), lines.begin(), lines.end());
    const LlmEvaluation e = evaluate_llm_calibration(ms, *given, d, p);
    doc.title = fmt::format("Evaluation of {} on {} measured operator(s) ({} at {}), nothing fitted", a.calibration,
                            ms.size(), d.id, precision_info(p).name);
    f.add("measurements", "measured operators", Cell::count(static_cast<Count>(ms.size())));
    f.add("median_abs_error", "median |predicted - measured| / measured", Cell::real(100 * e.all.median, Unit::Percent));
    f.add("p90_abs_error", "p90 |predicted - measured| / measured", Cell::real(100 * e.all.p90, Unit::Percent));
    doc.blocks.push_back(std::move(f));
    doc.blocks.push_back(op_error_table("by_op", "Errors per operator", e));
    report::Table ops{"ops", "Per measured operator", {{"file", "file", Unit::None}, {"line", "line", Unit::Count},
        {"op", "operator", Unit::None}, {"op_class", "class", Unit::None}, {"tokens", "tokens", Unit::Count},
        {"tp", "TP", Unit::Count}, {"flops", "FLOPs", Unit::Flop}, {"bytes", "bytes", Unit::Byte},
        {"measured_s", "measured", Unit::Second}, {"predicted_s", "predicted", Unit::Second},
        {"error", "error", Unit::Percent}}, {}, {}};
    for (const LlmOpError& r : e.ops)
      ops.add_row({Cell::text(r.m->file), Cell::count(r.m->line), Cell::text(r.m->op), Cell::text(r.m->op_class),
                   Cell::count(r.m->tokens), Cell::count(r.m->tp), Cell::count(r.m->flops, Unit::Flop),
                   Cell::count(r.m->bytes, Unit::Byte), Cell::real(r.m->time_s, Unit::Second),
                   Cell::real(r.predicted_s, Unit::Second), Cell::real(100 * r.error, Unit::Percent)});
    doc.blocks.push_back(std::move(ops));
    doc.extra["median_abs_error"] = e.all.median;
    doc.extra["p90_abs_error"] = e.all.p90;
    doc.notes.push_back("errors are |predicted - measured| / measured per operator (fractions in JSON, percent in "
                        "tables); `error` is signed, positive = predicted slower");
  } else {
    const auto [fit_on, held] = LlmHoldOut{a.hold_out}.split(ms);
    Calibration cal = cnn ? fit_cnn_calibration(fit_on, d, p) : fit_llm_calibration(fit_on, d, p);
    const LlmEvaluation in = evaluate_llm_calibration(fit_on, cal, d, p);
    nlohmann::json j = calibration_to_json(cal);
    j["scope"] = a.scope;
    j["source"] = a.files;
    j["command"] = fmt::format("ridge calibrate {} --device {} --precision {}{}{} --output {}", files, d.id,
                               precision_info(p).name, cnn ? " --scope cnn" : "",
                               a.hold_out.empty() ? "" : " --hold-out " + a.hold_out, a.output);
    j["model"] = cnn ? "time = flops / (ppp(M x N, K) x peak) + bytes / (ppp_mem x dram bandwidth) + overhead_s for "
                       "conv/gemm (ppp from gemm_shapes at the layer's implicit-GEMM shape); memory-bound classes at "
                       "the elementwise factors"
                     : "time = flops / (ppp x peak) + bytes / (ppp_mem x dram bandwidth) + overhead_s, per class";
    j["in_sample"] = stats_json(in.all);
    doc.title = fmt::format("LLM operator calibration on {} ({}) from {} measured operator(s)", d.id,
                            precision_info(p).name, fit_on.size());
    f.add("fitted_on", "measured operators fitted on", Cell::count(static_cast<Count>(fit_on.size())));
    describe_best_measured(cal, a.output, d, p, f, doc);
    f.add("in_sample.median_abs_error", "in-sample median |error|", Cell::real(100 * in.all.median, Unit::Percent));
    f.add("in_sample.p90_abs_error", "in-sample p90 |error|", Cell::real(100 * in.all.p90, Unit::Percent));
    doc.extra["median_abs_error"] = in.all.median;
    doc.extra["p90_abs_error"] = in.all.p90;
    if (!held.empty()) {
      const LlmEvaluation out = evaluate_llm_calibration(held, cal, d, p);
      j["hold_out"] = {{"rule", a.hold_out}, {"held_out", stats_json(out.all)}};
      f.add("hold_out", "held out", Cell::text(a.hold_out));
      f.add("held_out.count", "measured operators held out", Cell::count(static_cast<Count>(held.size())));
      f.add("held_out.median_abs_error", "held-out median |error|", Cell::real(100 * out.all.median, Unit::Percent));
      f.add("held_out.p90_abs_error", "held-out p90 |error|", Cell::real(100 * out.all.p90, Unit::Percent));
      doc.extra["median_abs_error"] = out.all.median;  // the honest figure: on what the fit never saw
      doc.extra["p90_abs_error"] = out.all.p90;
      doc.blocks.push_back(std::move(f));
      doc.blocks.push_back(op_error_table("held_out_by_op", "Held-out errors per operator", out));
    } else {
      doc.blocks.push_back(std::move(f));
      doc.blocks.push_back(op_error_table("by_op", "In-sample errors per operator", in));
    }
    doc.blocks.push_back(class_table(cal));
    report::write_text_file(a.output, j.dump(2) + "\n");
    doc.notes.push_back("wrote " + a.output + "; top-level median_abs_error/p90_abs_error are the held-out figures "
                        "when --hold-out is given, else in-sample");
  }
  if (!flags.empty()) doc.notes.push_back(fmt::format("flags: {}", fmt::join(flags, "; ")));
  doc.notes.push_back("work per operator: GEMMs 2MKN FLOPs and fp16 operands + result; norms, rope, SiLU x up, add "
                      "and the embedding lookup by the bytes they move (docs/llm.md)");
  a.out.emit(std::move(doc));
}

void run(const CalibrateArgs& a) {
  std::set<std::string> given;
  for (const auto& f : a.files) {
    std::error_code ec;
    const auto key = std::filesystem::weakly_canonical(f, ec);
    if (!given.insert(ec ? f : key.string()).second)
      throw UsageError(f + ": given twice (each measurement counts once in a fit)");
  }
  const bool csv = is_csv(a.files.front());
  for (const auto& f : a.files)
    if (is_csv(f) != csv) throw UsageError(f + ": mix of CSV operator profiles and JSON measurements");
  if (csv) return run_llm(a);
  if (a.evaluate || !a.hold_out.empty() || a.scope != "llm")
    throw UsageError("--evaluate, --hold-out and --scope apply to operator profiles (Vidur CSV files)");
  const Precision p = precision_flag(a.precision == "auto" ? "fp32" : a.precision);
  const std::optional<Precision> precision = p;
  const Device d = find_device(load_devices(a.device_dirs), a.device);
  std::vector<MeasuredRun> ms;
  std::vector<std::string> forced;
  for (const auto& f : a.files) {
    ms.push_back(read_measurement(f));
    // Measurements of another device (an A100 profile calibrated as this CPU or as a V100) are refused.
    const auto lines = check_measurement_matches(ms.back(), "", "", d, 0, a.force);
    forced.insert(forced.end(), lines.begin(), lines.end());
  }
  int skipped = 0;
  const std::vector<Sample> samples = samples_from(ms, &skipped);
  if (samples.empty())
    throw Error(fmt::format("{}: no usable layers (each needs time_s > 0 and flops; see docs/model.md)", a.files.front()));

  PredictSettings settings;
  settings.precision = *precision;
  settings.level = a.level;
  settings.calibration = "none";
  settings.combine = Combine::Sum;                  // the model calibrate() fits
  settings.kernel_launch_s = d.kernel_launch_s;     // "before": PPP 1 with the device's launch overhead
  const PredictOptions hw = predict_options(d, settings);
  Calibration cal = calibrate(samples, hw.peak_flop_per_s, hw.bandwidth_bytes_per_s, a.min_samples, hw.pipe_peaks);
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
  doc.title = fmt::format("Calibration on {} ({}) from {} layer(s) of {} model(s)", d.id, precision_info(p).name, samples.size(),
                          models.size());
  report::Fields f{"summary", "Summary", {}};
  f.add("samples", "layers used", Cell::count(static_cast<Count>(samples.size())));
  f.add("skipped", "layers skipped (no time or FLOPs)", Cell::count(skipped));
  add_stats(f, "before", "before (PPP 1, device launch overhead):", check.before);
  add_stats(f, "after", "after (in-sample):", check.after);
  f.add("output", "calibration file", Cell::text(a.output));
  describe_best_measured(cal, a.output, d, *precision, f, doc);
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

  doc.blocks.push_back(class_table(cal));

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
  const auto by_pipe =
      std::count_if(samples.begin(), samples.end(), [](const Sample& s) { return s.pipe_flops.has_value(); });
  auto rate = [](double flop_per_s) { return report::format_cell(Cell::real(flop_per_s, Unit::FlopPerSecond)); };
  if (by_pipe > 0)
    doc.notes.push_back(fmt::format("FLOPs of {} of {} layer(s) timed at the peak of the pipe they ran on: tensor {}, "
                                    "fp32 and fp16 vector {}, fp64 {} (docs/model.md, \"Calibration\")",
                                    by_pipe, samples.size(), rate(hw.pipe_peaks.tensor), rate(hw.pipe_peaks.fp32),
                                    rate(hw.pipe_peaks.fp64)));
  if (std::any_of(cal.by_class.begin(), cal.by_class.end(), [](const auto& c) { return c.second.vector_pipe; }))
    doc.notes.push_back("\"FLOPs at\" vector: the class's kernels did most of their FLOPs on the vector pipes, so its PPP "
                        "is a fraction of the fp32 vector peak and `ridge predict` times its layers' FLOPs there");
  doc.notes.push_back("errors are |predicted - measured| / measured per layer; use it with `ridge predict --calibration " +
                      a.output + "`");
  a.out.emit(std::move(doc));
}

}  // namespace

CLI::App* add_calibrate_command(CLI::App& app) {
  auto a = std::make_shared<CalibrateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate", "Fit PPP factors per op class from measurements (ridge measure/ingest JSON, or Vidur LLM operator CSVs)");
  cmd->add_option("FILES", a->files, "Measurement JSON files (`ridge measure --format json`, `ridge ingest --format "
                                     "json`) or Vidur per-operator LLM profiles (mlp.csv)")
      ->required()->type_name("FILE...");
  cmd->add_option("--device,-d", a->device, "Device the measurements ran on")->capture_default_str();
  cmd->add_option("--precision,-p", a->precision, "Precision of the peak the factors refer to (auto: fp32; fp16 for "
                                                  "CSV profiles; with --evaluate, the calibration's)")
      ->capture_default_str();
  cmd->add_option("--output,-o", a->output, "Calibration file to write")->capture_default_str();
  cmd->add_option("--level", a->level, "Memory level whose bandwidth the memory term uses")->capture_default_str();
  cmd->add_option("--min-samples", a->min_samples, "Fewest layers for an op class to get its own factors")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_flag("--evaluate", a->evaluate, "CSV profiles: report per-operator errors of --calibration, fit nothing");
  cmd->add_option("--calibration", a->calibration, "Calibration file to evaluate (with --evaluate)")->type_name("FILE");
  cmd->add_option("--hold-out", a->hold_out, "CSV profiles: fit on the rest, report errors on these: tp=N, tokens>N, "
                                             "odd-tokens")->type_name("RULE");
  cmd->add_option("--scope", a->scope, "CSV profiles: llm (per-class factors for serve/train) or cnn (GEMM-shape "
                                      "table for convolutions, one memory efficiency; docs/model.md)")
      ->capture_default_str()->check(CLI::IsMember({"llm", "cnn"}));
  cmd->add_flag("--force", a->force, "Use measurements of another device anyway (the output says so)");
  cmd->add_option("--devices-dir,--devices", a->device_dirs, "Also load device files from DIR")->type_name("DIR");
  a->out.add_to(cmd);
  cmd->callback([a] { run(*a); });
  return cmd;
}

}  // namespace ridge::cli
