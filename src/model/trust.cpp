// What makes a prediction trustworthy: the one table between ridge's op classes and GPU kernel families, which
// shipped calibration applies to a device, refused mismatches (another device family, precision, model, batch),
// and sanity flags shown beside numbers. See docs/model.md, "Calibrated by default" and "Sanity flags".
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "ridge/error.hpp"
#include "ridge/load.hpp"
#include "ridge/predict.hpp"
#include "text_util.hpp"
#include "ridge/text.hpp"

namespace ridge {

const std::vector<std::pair<std::string_view, std::string_view>>& op_class_kernel_families() {
  // ridge::op_class -> the GPU kernel family (ridge ingest, conv-* folded) that runs it.
  static const std::vector<std::pair<std::string_view, std::string_view>> table = {
      {"Conv", "conv"},           {"DepthwiseConv", "conv"},      {"GroupedConv", "conv"},
      {"ConvTranspose", "conv"},  {"Linear", "gemm"},             {"MatMul", "gemm"},
      {"Einsum", "gemm"},         {"BatchNorm", "normalization"}, {"LayerNorm", "normalization"},
      {"Unary", "elementwise"},   {"Binary", "elementwise"},      {"Select", "elementwise"},
      {"Dropout", "elementwise"}, {"Move", "elementwise"},        {"Resize", "elementwise"},
      {"Gather", "elementwise"},  {"Update", "elementwise"},      {"MaxPool", "pooling"},
      {"AvgPool", "pooling"},     {"AdaptiveAvgPool", "pooling"}, {"GlobalAvgPool", "pooling"},
      {"Softmax", "softmax"},     {"Reduce", "reduction"},
  };
  return table;
}

std::string_view kernel_family_of_op_class(std::string_view op_class) {
  for (const auto& [cls, family] : op_class_kernel_families())
    if (cls == op_class) return family;
  return {};
}

std::string calibration_class_of_kernel_family(std::string_view family) {
  if (family.starts_with("conv-") || family == "conv") return "conv";
  return std::string(family);
}

std::string device_family(const std::string& device_id) {
  return ascii_lower(device_id.substr(0, device_id.find('-')));
}

std::vector<Calibration> find_calibrations(const std::string& dir, const CalibrationMatch& applies) {
  namespace fs = std::filesystem;
  std::vector<Calibration> found;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return found;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    const std::string text = model_detail::read_text_file(f.string(), "calibration file");
    const auto j = nlohmann::json::parse(text, nullptr, false);
    // Other formats share the folder (allreduce-vidur.json): skipped, not errors.
    if (j.is_discarded() || !j.is_object() || j.value("format", "") != "ridge-calibration") continue;
    Calibration c = calibration_from_json(j, f.string());
    c.file = f.string();
    if (c.device_family.empty()) c.device_family = device_family(c.device);
    if (applies(c)) found.push_back(std::move(c));
  }
  return found;
}

std::optional<Calibration> find_calibration(const std::string& dir, const CalibrationMatch& applies) {
  std::vector<Calibration> found = find_calibrations(dir, applies);
  if (found.empty()) return std::nullopt;
  return std::move(found.front());
}

std::optional<Calibration> builtin_calibration(const std::string& device_id, Precision p) {
  const std::string family = device_family(device_id), precision(precision_info(p).name);
  // fp16 and bf16 run on the same tensor cores at the same peak: a fit at one applies to the other.
  auto half = [](const std::string& s) { return s == "fp16" || s == "bf16"; };
  // A fit that failed its own leave-one-model-out check is shipped for --calibration but not applied by default.
  auto applies = [&](const Calibration& c) {
    return c.device_family == family && (c.precision == precision || (half(c.precision) && half(precision))) &&
           !(c.leave_one_out_error && *c.leave_one_out_error > 0.5);
  };
  std::vector<Calibration> found = find_calibrations(builtin_data_dir("calibrations"), applies);
  if (found.empty()) return std::nullopt;
  // A fit with a GEMM-shape table (whole-layer GEMMs timed across shapes) comes before one fitted on a few
  // kernels of micro-benchmarks, whose factors hold for their shapes only; then name order decides.
  auto shaped = std::find_if(found.begin(), found.end(), [](const Calibration& c) { return !c.gemm_shapes.ppp.empty(); });
  return std::move(shaped != found.end() ? *shaped : found.front());
}

std::vector<std::string> check_calibration_applies(const Calibration& cal, const std::string& device_id, Precision p,
                                                   bool force, std::string_view hint, std::string_view scope) {
  std::vector<std::string> overridden;
  const std::string origin = cal.file.empty() ? "calibration" : cal.file;
  auto refuse = [&](const std::string& what) {
    if (!force) throw Error(fmt::format("{} ({})", what, hint));
    overridden.push_back("forced: " + what);
  };
  if (!scope.empty() && !cal.scope.empty() && cal.scope != scope)
    refuse(fmt::format("{}: fitted for {} predictions (scope {}), used for {} ones", origin,
                       cal.scope == "llm" ? "LLM serve/train" : "CNN", cal.scope, scope == "llm" ? "LLM serve/train" : "CNN"));
  if (cal.device.empty() && cal.device_family.empty()) return overridden;
  const std::string family = cal.device_family.empty() ? device_family(cal.device) : cal.device_family;
  if (family != device_family(device_id))
    refuse(fmt::format("{}: fitted on device '{}' (family {}), predicting for '{}' (family {})", origin,
                       cal.device.empty() ? family : cal.device, family, device_id, device_family(device_id)));
  const std::string precision(precision_info(p).name);
  if (!cal.precision.empty() && cal.precision != precision)
    refuse(fmt::format("{}: fitted against the {} peak, predicting at {}", origin, cal.precision, precision));
  return overridden;
}

std::string cap_at_achieved_flops(Calibration& cal, const Device& d, Precision p) {
  const std::optional<double> fraction = d.achieved_fraction(p);
  if (!cal.fitted() || !cal.best_measured_of_peak || !fraction) return "";
  const double best = *cal.best_measured_of_peak;
  if (best <= *fraction) return "";
  const double scale = *fraction / best, ceiling = *fraction * d.require_peak(p);
  auto lower = [&](double& ppp) {
    if (std::isfinite(ppp)) ppp *= scale;
  };
  for (Efficiency* e : cal.all_factors())
    if (!e->vector_pipe) lower(e->ppp);
  for (double& x : cal.gemm_shapes.ppp) lower(x);
  const std::string rate =
      cal.best_measured_flop_per_s ? fmt::format(" ({:.1f} TFLOP/s)", *cal.best_measured_flop_per_s / 1e12) : "";
  cal.ceiling_note = fmt::format(
      "{}: its measured operators ran at up to {:.1f} % of their peak{}, above the {:.1f} % ({:.1f} TFLOP/s) that {}'s "
      "best matmul sustains (device file, achieved.flops): measured faster than this GPU sustains (burst clocks, or a "
      "faster board of the family), so its compute factors are scaled by {:.3f}",
      cal.file.empty() ? "calibration" : std::filesystem::path(cal.file).filename().string(), 100 * best, rate,
      100 * *fraction, ceiling / 1e12, d.id, scale);
  return cal.ceiling_note;
}

std::string measured_ceiling_note(const Device& d, Precision p) {
  const std::optional<double> fraction = d.achieved_fraction(p);
  if (!fraction) return "";
  const double peak = d.require_peak(p);
  // fp16 and bf16 stand in for each other (achieved_fraction): say which one was measured.
  const std::string at = d.achieved_flops.count(p) ? "" : p == Precision::FP16 ? " in bf16" : " in fp16";
  return fmt::format("the upper bound runs at {}'s data-sheet {} peak ({:.1f} TFLOP/s); the best matmul measured on it{} "
                     "sustains {:.1f} % of that ({:.1f} TFLOP/s; device file, achieved.flops)",
                     d.id, precision_info(p).name, peak / 1e12, at, 100 * *fraction, *fraction * peak / 1e12);
}

std::vector<std::string> check_run_matches(const std::string& file, const RunIdentity& run, const RunIdentity& expected,
                                           bool force) {
  std::vector<std::string> overridden;
  auto refuse = [&](const char* what, const std::string& have, const std::string& want) {
    const std::string line = fmt::format("{}: measured {} is {}, expected {}", file, what, have, want);
    if (!force) throw Error(line + " (use --force to use it anyway)");
    overridden.push_back("forced: " + line);
  };
  if (!run.model.empty() && !expected.model.empty() && ascii_lower(run.model) != ascii_lower(expected.model))
    refuse("model", run.model, expected.model);
  if (!run.device.empty() && !expected.device.empty()) {
    // A profile names its GPU as the driver prints it ("NVIDIA A100-SXM4-40GB (0)"): compare families.
    const std::string have = ascii_lower(run.device), want = device_family(expected.device);
    if (have.find(want) == std::string::npos && device_family(have) != want) refuse("device", run.device, expected.device);
  }
  if (run.batch > 0 && expected.batch > 0 && run.batch != expected.batch)
    refuse("batch", std::to_string(run.batch), std::to_string(expected.batch));
  if (!run.precision.empty() && !expected.precision.empty() && ascii_lower(run.precision) != ascii_lower(expected.precision))
    refuse("precision", run.precision, expected.precision);
  return overridden;
}

std::string model_name_of_file(const std::string& path) {
  const std::string name = std::filesystem::path(path).filename().string();
  return name.substr(0, name.find('.'));
}

RunIdentity identity_from_file_name(const std::string& path) {
  const std::string stem = ascii_lower(std::filesystem::path(path).stem().string());
  std::vector<std::string> words;
  std::string w;
  for (char c : stem + "_") {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      w += c;
    } else if (!w.empty()) {
      words.push_back(w);
      w.clear();
    }
  }
  RunIdentity id;
  for (const std::string& word : words) {
    for (const ZooEntry& z : zoo_entries())
      if (ascii_lower(z.name) == word && z.name.size() > id.model.size()) id.model = z.name;
    for (const char* prefix : {"bs", "batch"})
      if (word.starts_with(prefix) && all_digits(std::string_view(word).substr(std::strlen(prefix))))
        id.batch = std::stoll(word.substr(std::strlen(prefix)));
  }
  for (const Device& d : load_devices())
    for (const std::string& word : words)
      if (d.kind == "gpu" && word == device_family(d.id)) id.device = word;
  return id;
}

std::vector<std::string> roof_flags(Count flops, Count bytes, double time_s, double peak, double bandwidth) {
  if (time_s <= 0 || flops <= 0 || peak <= 0 || bandwidth <= 0) return {};
  const double attainable = bytes > 0 ? std::min(peak, to_double(flops) / to_double(bytes) * bandwidth) : peak;
  if (to_double(flops) / time_s > 1.05 * attainable) return {"above-roof"};
  return {};
}

std::vector<std::string> timing_flags(double median_s, double min_s, double max_s) {
  if (median_s > 0 && (max_s - min_s) / median_s > 0.5) return {"busy-machine"};
  return {};
}

std::vector<std::string> thread_peak_flags(double one_thread, double two_threads) {
  if (one_thread > 0 && two_threads > 0 && two_threads < one_thread) return {"2-thread-peak-below-1-thread"};
  return {};
}

std::vector<std::string> calibration_flags(const Calibration& cal) {
  std::vector<std::string> flags;
  if (cal.leave_one_out_error && *cal.leave_one_out_error > 0.5) flags.push_back("calibration-loo-error>50%");
  // A fitted factor above 1 means the measured kernels ran faster than the roof: their counts or the peak are off.
  auto above = [&](const std::string& cls, const Efficiency& e) {
    if (e.samples > 0 && ((std::isfinite(e.ppp) && e.ppp > 1.05) || (std::isfinite(e.ppp_mem) && e.ppp_mem > 1.05)))
      flags.push_back("above-roof:" + cls);
  };
  for (const auto& [cls, e] : cal.by_class) above(cls, e);
  above("fallback", cal.fallback);
  return flags;
}

}  // namespace ridge
