#include "sweep.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "ridge/api.hpp"
#include "ridge/cost.hpp"
#include "ridge/device.hpp"
#include "ridge/predict.hpp"
#include "ridge/error.hpp"
#include "ridge/ingest.hpp"
#include "ridge/load.hpp"
#include "ridge/precision_mode.hpp"
#include "ridge/predict.hpp"

namespace fs = std::filesystem;

namespace ridge::cli {

namespace {

constexpr const char* kResultFormat = "ridge-sweep-result/1";
constexpr const char* kPlanFormat = "ridge-sweep-plan/1";

nlohmann::json json_count(Count v) { return report::to_json(report::Cell::count(v)); }

Count count_from_json(const nlohmann::json& j) {
  if (j.is_number_integer()) return j.get<int64_t>();
  if (j.is_number_unsigned()) return static_cast<Count>(j.get<uint64_t>());
  if (j.is_string()) return parse_count(j.get<std::string>());
  throw Error("not an integer count");
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The point measured on this CPU as `ridge measure MODEL --batch B` would (inference, its default repeats), called
// in process: the measure stage's typed result, not its printed JSON.
nlohmann::json measured_on_cpu(const SweepPlan& plan, const std::string& model, int64_t batch) {
  report::MeasureRequest req;
  req.options.exec.threads = plan.threads;
  req.machine_profile = "none";  // the roofline columns are not part of a sweep point
  double total_time_s = 0;
  try {
    const Graph g = load_model(model, plan.model.load_options(batch));
    total_time_s = report::measure_model(g, req).total.median_s;
  } catch (const Error& e) {
    throw Error(fmt::format("`ridge measure {} --batch {}` failed (exit 1): ridge: error: {}", model, batch, e.what()));
  }
  nlohmann::json m;
  m["tool"] = "ridge measure";
  m["total_time_s"] = total_time_s;
  if (total_time_s > 0) m["samples_per_s"] = static_cast<double>(batch) / total_time_s;
  return m;
}

}  // namespace

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

int run_shell(const std::string& cmd, std::string& out) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return 127;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

std::pair<std::string, int64_t> SweepPlan::point(size_t index) const {
  RIDGE_ASSERT(index < size(), "sweep point index out of range");
  return {models[index / batches.size()], batches[index % batches.size()]};
}

nlohmann::json SweepPlan::to_json() const {
  nlohmann::json j;
  j["format"] = kPlanFormat;
  j["models"] = models;
  j["batches"] = batches;
  j["input_size"] = model.input_size;
  j["seq_len"] = model.seq_len;
  j["inputs"] = model.inputs;
  j["dtype"] = model.dtype;
  j["optimizer"] = optimizer;
  j["measure"] = measure;
  j["threads"] = threads;
  j["slurm"] = {{"partition", slurm.partition}, {"account", slurm.account}, {"gres", slurm.gres},
                {"time", slurm.time}, {"max_parallel", slurm.max_parallel}, {"gpu_command", slurm.gpu_command}};
  j["device"] = device;
  j["precision"] = precision;
  j["train"] = train;
  j["ridge_binary"] = ridge_binary;
  return j;
}

SweepPlan SweepPlan::from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object() || j.value("format", "") != kPlanFormat)
    throw Error(fmt::format("{}: not a ridge sweep manifest", where));
  try {
    SweepPlan p;
    p.models = j.at("models").get<std::vector<std::string>>();
    p.batches = j.at("batches").get<std::vector<int64_t>>();
    p.model.input_size = j.value("input_size", "");
    p.model.seq_len = j.value("seq_len", int64_t{0});
    p.model.inputs = j.value("inputs", std::vector<std::string>{});
    p.model.dtype = j.value("dtype", "fp32");
    p.optimizer = j.value("optimizer", "sgd");
    p.measure = j.value("measure", false);
    p.threads = j.value("threads", 0);
    const auto& s = j.at("slurm");
    p.slurm.partition = s.value("partition", "");
    p.slurm.account = s.value("account", "");
    p.slurm.gres = s.value("gres", "");
    p.slurm.time = s.value("time", "00:30:00");
    p.slurm.max_parallel = s.value("max_parallel", 0);
    p.slurm.gpu_command = s.value("gpu_command", "");
    p.device = j.value("device", "");
    p.precision = j.value("precision", "fp32");
    p.train = j.value("train", false);
    p.ridge_binary = j.value("ridge_binary", "ridge");
    if (p.models.empty() || p.batches.empty()) throw Error("no points");
    return p;
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: broken sweep manifest ({})", where, e.what()));
  } catch (const Error& e) {
    throw Error(fmt::format("{}: broken sweep manifest ({})", where, e.what()));
  }
}

std::string result_file_name(const std::string& model, int64_t batch) {
  std::string safe;
  for (char c : fs::path(model).filename().string())
    safe += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
  return fmt::format("{}__b{}.json", safe, batch);
}

LoadOptions SweepPlan::load_options(int64_t batch) const {
  LoadOptions lo = model.load_options(batch);
  if (model.dtype == "fp32") lo.dtype = require_precision_mode(precision).activation_dtype;
  return lo;
}

nlohmann::json run_point(const SweepPlan& plan, size_t index) {
  auto [model, batch] = plan.point(index);
  const PrecisionMode mode = require_precision_mode(plan.precision);
  if (plan.train) require_training_mode(mode);
  LoadOptions lo = plan.load_options(batch);
  Graph g = load_model(model, lo);
  ModelCost mc = estimate(g);
  plan.model.check(incompleteness(g, mc), model);
  auto opt = parse_optimizer(plan.optimizer).value_or(Optimizer::SGD);
  MemoryEstimate mem = estimate_memory(g, opt, param_storage(mode));
  nlohmann::json r;
  r["format"] = kResultFormat;
  r["index"] = index;
  r["model"] = model;
  r["batch"] = batch;
  r["estimate"] = {{"params", json_count(mc.total.params)},
                   {"flops", json_count(mc.total.flops)},
                   {"macs", json_count(mc.total.macs)},
                   {"backward_flops", json_count(mc.total.bwd_flops())},
                   {"bytes", json_count(mc.total.bytes())},
                   {"activation_bytes", json_count(mem.activation_bytes)},
                   {"inference_peak_bytes", json_count(mem.inference_peak_bytes)},
                   {"training_peak_bytes", json_count(mem.training_peak_bytes)},
                   {"complete", mc.complete()}};
  r["estimate"]["not_costed_ops"] = incompleteness(g, mc).op_types();
  if (plan.measure) r["measure"] = measured_on_cpu(plan, model, batch);
  if (!plan.device.empty()) {
    // PALEO-style prediction of this point on the device (calibrated when a shipped calibration applies, else the
    // peak-rate bound).
    Device dev = find_device(load_devices(), plan.device);
    PredictSettings ps;
    ps.precision = mode.compute;
    ps.bytes_per_param = mode.weight_bytes;
    ps.optimizer = opt;
    ps.training = plan.train;
    const PredictOptions po = predict_options(dev, ps);
    auto points = predict_vs_batch({batch}, [&](int64_t b) {
      lo.batch = b;
      return load_model_work(model, lo).layers;
    }, po);
    const TimeKind kind = time_kind(po);
    r["predicted"] = {{"device", dev.id},
                      {"precision", plan.precision},
                      {"mode", plan.train ? "training step" : "inference"},
                      {"time_s", points.at(0).time_s},
                      {"samples_per_s", points.at(0).samples_per_s},
                      {"calibrated", kind == TimeKind::Calibrated},
                      {"time_kind", time_kind_key(kind)},
                      {"flags", calibration_flags(po.calibration)}};
  }
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  r["host"] = host;
  if (const char* job = std::getenv("SLURM_ARRAY_JOB_ID")) r["slurm_job"] = std::string(job);
  return r;
}

void prepare_sweep_dir(const std::string& dir, const SweepPlan& plan) {
  std::error_code ec;
  const fs::path root(dir), manifest = root / "sweep.json";
  if (fs::exists(manifest, ec)) {
    SweepPlan old = read_sweep_dir(dir);
    nlohmann::json a = old.to_json(), b = plan.to_json();
    a.erase("ridge_binary");
    b.erase("ridge_binary");
    if (a != b)
      throw Error(fmt::format("{}: holds a different sweep (see {}); choose another --out folder", dir,
                              manifest.string()));
  } else if (fs::exists(root, ec) && !fs::is_empty(root, ec)) {
    throw Error(fmt::format("{}: exists and is not a ridge sweep folder; refusing to write into it", dir));
  }
  for (const char* sub : {"", "results", "logs", "state"}) {
    fs::create_directories(root / sub, ec);
    if (ec) throw Error(fmt::format("{}: cannot create ({})", (root / sub).string(), ec.message()));
  }
  if (!fs::exists(manifest)) report::write_text_file(manifest.string(), plan.to_json().dump(2) + "\n");
}

SweepPlan read_sweep_dir(const std::string& dir) {
  const fs::path manifest = fs::path(dir) / "sweep.json";
  std::error_code ec;
  if (!fs::exists(manifest, ec)) throw Error(fmt::format("{}: no sweep.json here (not a ridge sweep folder)", dir));
  auto j = nlohmann::json::parse(slurp(manifest), nullptr, false);
  if (j.is_discarded()) throw Error(fmt::format("{}: not valid JSON", manifest.string()));
  return SweepPlan::from_json(j, manifest.string());
}

Collected collect_results(const std::string& dir, const SweepPlan& plan) {
  Collected c;
  std::map<std::string, size_t> expected;
  for (size_t i = 0; i < plan.size(); ++i) {
    auto [m, b] = plan.point(i);
    expected[result_file_name(m, b)] = i;
  }
  std::vector<std::optional<nlohmann::json>> found(plan.size());
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(dir) / "results", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find(".tmp.") != std::string::npos) {
      c.warnings.push_back(fmt::format("{}: an unfinished write (ignored)", entry.path().string()));
      continue;
    }
    auto it = expected.find(name);
    if (it == expected.end()) {
      c.warnings.push_back(fmt::format("{}: not a result of this sweep (ignored)", entry.path().string()));
      continue;
    }
    auto j = nlohmann::json::parse(slurp(entry.path()), nullptr, false);
    auto [m, b] = plan.point(it->second);
    if (j.is_discarded() || j.value("format", "") != kResultFormat || j.value("model", "") != m ||
        j.value("batch", int64_t{-1}) != b || !j.contains("estimate")) {
      c.warnings.push_back(fmt::format("{}: broken or foreign result file (ignored)", entry.path().string()));
      continue;
    }
    found[it->second] = std::move(j);
  }
  if (ec) c.warnings.push_back(fmt::format("{}/results: cannot list ({})", dir, ec.message()));
  for (size_t i = 0; i < found.size(); ++i) {
    if (found[i]) c.results.push_back(std::move(*found[i]));
    else c.missing.push_back(i);
  }
  return c;
}

std::vector<report::SweepPoint> sweep_points(const std::vector<nlohmann::json>& results) {
  std::vector<report::SweepPoint> out;
  for (const auto& r : results) {
    report::SweepPoint p;
    p.model = r["model"].get<std::string>();
    p.batch = r["batch"].get<int64_t>();
    const auto& e = r["estimate"];
    using P = report::SweepPoint;
    static const std::pair<const char*, Count P::*> kEstimates[] = {
        {"params", &P::params},         {"flops", &P::flops},
        {"macs", &P::macs},             {"backward_flops", &P::backward_flops},
        {"bytes", &P::bytes},           {"activation_bytes", &P::activation_bytes},
        {"inference_peak_bytes", &P::inference_peak_bytes}, {"training_peak_bytes", &P::training_peak_bytes}};
    for (const auto& [key, field] : kEstimates)
      if (e.contains(key)) p.*field = count_from_json(e[key]);
    if (e.contains("not_costed_ops") && e["not_costed_ops"].is_array())
      for (const auto& op : e["not_costed_ops"])
        if (op.is_string()) p.not_costed_ops.push_back(op.get<std::string>());
    if (e.value("complete", true) == false && p.not_costed_ops.empty()) p.not_costed_ops.push_back("unnamed ops");
    auto number = [](const nlohmann::json& j, const char* key) -> std::optional<double> {
      if (j.contains(key) && j[key].is_number()) return j[key].get<double>();
      return std::nullopt;
    };
    if ((p.measured = r.contains("measure"))) {
      p.measured_time_s = number(r["measure"], "total_time_s");
      p.measured_samples_per_s = number(r["measure"], "samples_per_s");
    }
    if ((p.predicted = r.contains("predicted"))) {
      p.predicted_time_s = number(r["predicted"], "time_s");
      p.predicted_samples_per_s = number(r["predicted"], "samples_per_s");
      p.predicted_calibrated = r["predicted"].value("calibrated", false);
    }
    out.push_back(std::move(p));
  }
  return out;
}

report::SweepReportRequest sweep_report_request(const SweepPlan& plan) {
  report::SweepReportRequest req{plan.models, plan.size(), plan.device, std::nullopt};
  if (plan.device.empty()) return req;
  const Device dev = find_device(load_devices(), plan.device);
  const Optimizer opt = parse_optimizer(plan.optimizer).value_or(Optimizer::SGD);
  const PrecisionMode mode = require_precision_mode(plan.precision);
  report::SweepCapacity c{dev.id, dev.memory_bytes, plan.optimizer, {}, {}, mode.compute != Precision::INT8};
  for (const auto& model : plan.models) {
    // A model whose memory is incomplete (ops not costed, shapes not bound) has no largest batch: its missing
    // activations would "fit" at any batch.
    const Graph g = load_model(model, plan.load_options(1));
    const auto gaps = incompleteness(g, estimate(g)).op_types();
    if (!gaps.empty())
      c.unknown[model] = fmt::format("its memory is incomplete ({} not costed)", fmt::join(gaps, ", "));
    else if (g.fixed_batch)  // no other batch can be built from the file
      c.unknown[model] = fmt::format("the file fixes its batch at {}", *g.fixed_batch);
    const bool known = dev.memory_bytes > 0 && gaps.empty() && !g.fixed_batch;
    c.models.emplace_back(model, known ? std::optional<BatchCapacity>(batch_capacity(
                                             model, plan.load_options(1), opt, param_storage(mode), dev.memory_bytes))
                                       : std::nullopt);
  }
  req.capacity = std::move(c);
  return req;
}

}  // namespace ridge::cli
