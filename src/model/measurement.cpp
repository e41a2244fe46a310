// Reading measurement JSON (`ridge measure`, `ridge ingest`) into per-layer times, and turning it into
// calibration samples. Field names are documented in docs/model.md.
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>

#include "ridge/error.hpp"
#include "ridge/ingest.hpp"
#include "ridge/ops.hpp"
#include "ridge/predict.hpp"
#include "ridge/text.hpp"
#include "text_util.hpp"

namespace ridge {
using nlohmann::json;
namespace {

// The first of `keys` present (and not null) in `row`, or nullptr.
const json* first_of(const json& row, std::initializer_list<const char*> keys) {
  for (const char* k : keys)
    if (auto it = row.find(k); it != row.end() && !it->is_null()) return &*it;
  return nullptr;
}

std::optional<std::string> text_of(const json& row, std::initializer_list<const char*> keys) {
  const json* v = first_of(row, keys);
  if (v && v->is_string()) return v->get<std::string>();
  return std::nullopt;
}

// A count given as a JSON number or as a decimal string (counts beyond 64 bits are written as strings).
Count count_of(const json& v, const std::string& where) {
  if (v.is_string()) return parse_count(v.get<std::string>());
  if (v.is_number_integer()) return v.is_number_unsigned() ? Count(v.get<uint64_t>()) : Count(v.get<int64_t>());
  if (v.is_number_float()) {
    double x = v.get<double>();
    if (!std::isfinite(x) || x < 0 || x > 1e36) throw Error(where + ": not a count");
    return static_cast<Count>(std::llround(std::min(x, 9.0e18)));
  }
  throw Error(where + ": expected a count (number or decimal string)");
}

std::optional<double> time_of(const json& row, const std::string& where) {
  const json* v = first_of(row, {"time_s", "median_s", "time_median_s", "forward_s", "forward_median_s", "duration_s"});
  if (!v) {
    if (auto fwd = row.find("forward"); fwd != row.end() && fwd->is_object()) v = first_of(*fwd, {"median_s", "time_s"});
  }
  if (!v) return std::nullopt;
  if (!v->is_number()) throw Error(where + ".time_s: expected seconds as a number");
  double t = v->get<double>();
  if (!std::isfinite(t) || t < 0) throw Error(where + ".time_s: must be a non-negative number of seconds");
  return t;
}

}  // namespace

MeasuredRun parse_measurement(const std::string& text, const std::string& origin) {
  const json j = model_detail::parse_json(text, origin);
  if (!j.is_object()) throw Error(origin + ": expected a JSON object from `ridge measure` or `ridge ingest`");
  MeasuredRun m;
  m.file = origin;
  const json* summary = j.contains("summary") && j["summary"].is_object() ? &j["summary"] : nullptr;
  m.recorded_model = text_of(j, {"model"}).value_or(summary ? text_of(*summary, {"model"}).value_or("") : "");
  m.model = m.recorded_model.empty() ? std::filesystem::path(origin).stem().string() : m.recorded_model;
  m.device = text_of(j, {"device"}).value_or(summary ? text_of(*summary, {"device"}).value_or("") : "");
  auto field = [&](const char* k) -> const json* {
    if (auto it = j.find(k); it != j.end() && !it->is_null()) return &*it;
    if (summary)
      if (auto it = summary->find(k); it != summary->end() && !it->is_null()) return &*it;
    return nullptr;
  };
  if (const json* b = field("batch"); b && b->is_number_integer()) m.batch = b->get<int64_t>();
  if (const json* p = field("precision"); p && p->is_string()) m.precision = p->get<std::string>();
  const char* key = j.contains("layers") ? "layers" : j.contains("kernels") ? "kernels" : nullptr;
  if (!key || !j[key].is_array())
    throw Error(origin + ": no `layers` (ridge measure) or `kernels` (ridge ingest) array");
  size_t index = 0;
  for (const json& row : j[key]) {
    const std::string where = fmt::format("{}: {}[{}]", origin, key, index++);
    if (!row.is_object()) throw Error(where + ": expected an object");
    MeasuredRow l;
    l.name = text_of(row, {"name", "layer", "node", "kernel"}).value_or(fmt::format("#{}", index - 1));
    l.op = text_of(row, {"op", "op_type", "family", "op_class"}).value_or("");
    l.op_class = text_of(row, {"op_class"}).value_or("");
    l.time_s = time_of(row, where);
    const json* mn = first_of(row, {"min_s"});
    const json* mx = first_of(row, {"max_s"});
    if (mn && mx && mn->is_number() && mx->is_number() && l.time_s)
      l.flags = timing_flags(*l.time_s, mn->get<double>(), mx->get<double>());
    if (const json* sp = first_of(row, {"spread_percent"}); sp && sp->is_number() && sp->get<double>() > 50 && l.flags.empty())
      l.flags.push_back("busy-machine");  // ridge measure's spread of repeated timings
    const bool cost_known = !row.contains("cost_known") || row["cost_known"] != false;
    if (const json* f = first_of(row, {"flops"}); f && cost_known) l.flops = count_of(*f, where + ".flops");
    if (const json* b = first_of(row, {"bytes", "dram_bytes"}); b && cost_known) {
      l.bytes = count_of(*b, where + ".bytes");
    } else if (row.contains("bytes_read") && row.contains("bytes_written") && cost_known) {
      l.bytes = count_of(row["bytes_read"], where + ".bytes_read") + count_of(row["bytes_written"], where + ".bytes_written");
    }
    if (const json* w = first_of(row, {"bytes_written"}); w && l.bytes) {
      l.bytes_written = count_of(*w, where + ".bytes_written");
      if (*l.bytes_written > *l.bytes) throw Error(where + ".bytes_written: larger than the bytes moved");
    }
    if (l.flops && row.contains("flops_tensor") && row.contains("flops_fp32") && row.contains("flops_fp16") &&
        row.contains("flops_fp64")) {
      auto pipe = [&](const char* k) {  // null: the profile did not count that pipe (nor does `flops`)
        return row[k].is_null() ? Count{0} : count_of(row[k], where + "." + k);
      };
      const PipeFlops f{pipe("flops_tensor"), pipe("flops_fp32"), pipe("flops_fp16"), pipe("flops_fp64")};
      // Only a split that adds up to the row's FLOPs is used; any other is ignored (all FLOPs at one peak).
      Count rest = *l.flops;  // subtracted pipe by pipe: no sum that could overflow
      bool adds_up = true;
      for (Count part : {f.tensor, f.fp32, f.fp16, f.fp64}) {
        adds_up = adds_up && part >= 0 && part <= rest;
        if (adds_up) rest -= part;
      }
      if (adds_up && rest == 0) l.pipe_flops = f;
    }
    if (m.device.empty()) {  // ingested kernels name their GPU per row (ncu's CSV: the CUDA device index, no name)
      if (auto dev = text_of(row, {"device"}); dev && ingest::names_a_gpu(*dev)) m.device = *dev;
    }
    m.layers.push_back(std::move(l));
  }
  // `ridge ingest` records its source files: their names may tell the model, GPU and batch of the run.
  if (auto in = j.find("inputs"); in != j.end() && in->is_object())
    if (auto files = in->find("files"); files != in->end() && files->is_array())
      for (const json& f : *files) {
        if (!f.is_string()) continue;
        const RunIdentity id = identity_from_file_name(f.get<std::string>());
        if (m.recorded_model.empty()) m.recorded_model = id.model;
        if (m.device.empty()) m.device = id.device;
        if (m.batch == 0) m.batch = id.batch;
      }
  return m;
}

std::vector<std::string> check_measurement_matches(const MeasuredRun& m, const std::string& model_name,
                                                   const std::string& model_spec, const Device& d, int64_t batch,
                                                   bool force) {
  RunIdentity run{m.recorded_model, m.device, m.batch, ""};
  // Named after the file it measured (resnet18.ext_emptybin.onnx: resnet18.ext_emptybin, or resnet18).
  const std::string model = ascii_lower(run.model);
  if (model == ascii_lower(std::filesystem::path(model_spec).stem().string()) ||
      model == ascii_lower(model_name_of_file(model_spec)))
    run.model.clear();
  if (!run.device.empty() && d.matches(run.device)) run.device.clear();      // "cpu" on the machine, an alias
  return check_run_matches(m.file, run, RunIdentity{model_name, d.id, batch, ""}, force);
}

MeasuredRun read_measurement(const std::string& path) {
  return parse_measurement(model_detail::read_text_file(path, "measurement file"), path);
}

std::vector<Sample> samples_from(const std::vector<MeasuredRun>& ms, int* skipped) {
  std::vector<Sample> out;
  int missing = 0;
  for (const MeasuredRun& m : ms) {
    for (const MeasuredRow& l : m.layers) {
      if (!l.time_s || *l.time_s <= 0 || !l.flops) {
        ++missing;
        continue;
      }
      Sample s;
      s.model = m.model;
      s.layer = l.name;
      if (!l.op_class.empty()) s.op_class = l.op_class;
      else if (auto op = parse_op(l.op)) s.op_class = std::string(family_name(op_family(*op)));
      else s.op_class = l.op.empty() ? "unknown" : calibration_class_of_kernel_family(l.op);
      s.flops = *l.flops;
      s.bytes = l.bytes.value_or(0);
      s.bytes_written = l.bytes_written;
      s.time_s = *l.time_s;
      s.pipe_flops = l.pipe_flops;
      out.push_back(std::move(s));
    }
  }
  if (skipped) *skipped = missing;
  return out;
}

}  // namespace ridge

namespace ridge {

MeasuredTotals measured_totals(const MeasuredRun& m) {
  MeasuredTotals t;
  Count flops = 0, bytes = 0;
  double time_s = 0;
  bool all_flops = !m.layers.empty(), all_bytes = all_flops, all_times = all_flops;
  for (const auto& l : m.layers) {
    if (l.time_s) time_s += *l.time_s; else all_times = false;
    if (l.flops) flops += *l.flops; else all_flops = false;
    if (l.bytes) bytes += *l.bytes; else all_bytes = false;
    t.by_layer[l.name] = &l;
  }
  if (all_times) t.time_s = time_s;
  if (all_flops) t.flops = flops;
  if (all_bytes) t.bytes = bytes;
  return t;
}

std::optional<size_t> match_measurement(const std::vector<MeasuredRun>& runs, const std::string& model_name,
                                        const std::string& model_spec, bool only_model, const Device& d,
                                        bool only_device) {
  for (size_t i = 0; i < runs.size(); ++i) {
    const MeasuredRun& r = runs[i];
    const bool model_ok = r.model == model_name || r.model == model_spec || only_model;
    const bool device_ok = r.device.empty() || only_device || d.matches(r.device);
    if (model_ok && device_ok) return i;
  }
  return std::nullopt;
}

}  // namespace ridge
