// Fitting the all-reduce model's latency and bus bandwidth to measured NCCL times (Vidur's network profiles),
// with in-sample and leave-one-size-range-out errors, and the calibration file that holds the fits.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "ridge/error.hpp"
#include "ridge/predict.hpp"
#include "llm_csv.hpp"
#include "text_util.hpp"

namespace ridge {
using nlohmann::json;

namespace model_detail {

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, ',')) cells.push_back(cell);
  if (!line.empty() && line.back() == ',') cells.emplace_back();
  return cells;
}

double csv_number(const std::string& text, const std::string& where) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(v)) throw Error(fmt::format("{}: '{}' is not a number", where, text));
  return v;
}

}  // namespace model_detail

using model_detail::csv_number;
using model_detail::split_csv_line;

std::vector<AllReduceSample> read_allreduce_csv(const std::string& path) {
  std::stringstream in(model_detail::read_text_file(path, "all-reduce measurements"));
  std::string line;
  if (!std::getline(in, line)) throw Error(fmt::format("{}: empty file", path));
  if (!line.empty() && line.back() == '\r') line.pop_back();
  const std::vector<std::string> header = split_csv_line(line);
  auto column = [&](const std::string& name) {
    auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) throw Error(fmt::format("{}: no column '{}' (not a Vidur all_reduce.csv)", path, name));
    return static_cast<size_t>(it - header.begin());
  };
  const size_t workers = column("num_workers"), per_node = column("devices_per_node"), size = column("size"),
               median = column("time_stats.all_reduce.median");
  std::vector<AllReduceSample> out;
  for (int line_no = 2; std::getline(in, line); ++line_no) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::vector<std::string> cells = split_csv_line(line);
    auto cell = [&](size_t c, const char* name) {
      const std::string where = fmt::format("{}:{}: {}", path, line_no, name);
      if (c >= cells.size()) throw Error(where + ": missing");
      return std::pair{cells[c], where};
    };
    AllReduceSample s;
    auto [w, w_at] = cell(workers, "num_workers");
    auto [g, g_at] = cell(per_node, "devices_per_node");
    auto [b, b_at] = cell(size, "size");
    auto [t, t_at] = cell(median, "time_stats.all_reduce.median");
    s.workers = static_cast<int>(csv_number(w, w_at));
    s.devices_per_node = static_cast<int>(csv_number(g, g_at));
    s.bytes = static_cast<Count>(static_cast<int64_t>(csv_number(b, b_at)));
    s.time_s = csv_number(t, t_at) * 1e-3;  // Vidur records milliseconds
    if (s.workers < 2 || s.devices_per_node < 1 || s.workers % s.devices_per_node != 0 || s.bytes <= 0 || s.time_s <= 0)
      throw Error(fmt::format("{}:{}: expected workers >= 2 in whole nodes, a positive size and time", path, line_no));
    out.push_back(s);
  }
  if (out.empty()) throw Error(fmt::format("{}: no measurements", path));
  return out;
}

const std::vector<Count>& allreduce_size_range_bounds() {
  static const std::vector<Count> kBounds = {Count(1) << 20, Count(8) << 20, Count(32) << 20};
  return kBounds;
}

namespace {

size_t size_range(Count bytes) {
  const auto& bounds = allreduce_size_range_bounds();
  return static_cast<size_t>(std::upper_bound(bounds.begin(), bounds.end(), bytes) - bounds.begin());
}

// t = a + b S by least squares in relative error (weights 1/t^2), a and b non-negative.
std::pair<double, double> fit_line(const std::vector<const AllReduceSample*>& samples) {
  double sw = 0, sws = 0, swss = 0, swt = 0, swst = 0;
  for (const AllReduceSample* p : samples) {
    const double w = 1.0 / (p->time_s * p->time_s), s = to_double(p->bytes);
    sw += w, sws += w * s, swss += w * s * s, swt += w * p->time_s, swst += w * s * p->time_s;
  }
  const double det = sw * swss - sws * sws;
  double a = det > 0 ? (swss * swt - sws * swst) / det : 0.0;
  double b = det > 0 ? (sw * swst - sws * swt) / det : 0.0;
  if (a < 0) a = 0, b = swst / swss;
  if (b <= 0) throw Error("all-reduce fit: the measured times do not grow with the message size");
  return {a, b};
}

AllReduceFit fit_from_line(double a, double b, int workers, int per_node, const std::string& device, int samples) {
  AllReduceFit f;
  f.device = device;
  f.workers = workers;
  f.devices_per_node = per_node;
  f.latency_s = a / (2.0 * (workers - 1));
  f.bus_bandwidth_bytes_per_s = 2.0 * (workers - 1) / workers / b;
  f.samples = samples;
  return f;
}

double relative_error(const AllReduceFit& f, const AllReduceSample& s) {
  return std::abs(allreduce_fit_time_s(f, s.bytes) - s.time_s) / s.time_s;
}

}  // namespace

double allreduce_fit_time_s(const AllReduceFit& f, Count bytes) {
  const double n = f.workers;
  return 2 * (n - 1) * f.latency_s + 2 * (n - 1) / n * to_double(bytes) / f.bus_bandwidth_bytes_per_s;
}

AllReduceFit fit_allreduce(const std::vector<AllReduceSample>& samples, const std::string& device) {
  if (samples.size() < 2) throw Error("all-reduce fit: needs at least two measurements");
  const int workers = samples.front().workers, per_node = samples.front().devices_per_node;
  std::vector<const AllReduceSample*> all;
  for (const auto& s : samples) {
    RIDGE_ASSERT(s.workers == workers && s.devices_per_node == per_node, "one configuration per fit");
    all.push_back(&s);
  }
  const auto [a, b] = fit_line(all);
  AllReduceFit f = fit_from_line(a, b, workers, per_node, device, static_cast<int>(samples.size()));
  std::vector<double> in, out;
  for (const auto& s : samples) in.push_back(relative_error(f, s));
  for (size_t r = 0; r <= allreduce_size_range_bounds().size(); ++r) {
    std::vector<const AllReduceSample*> train;
    for (const auto& s : samples)
      if (size_range(s.bytes) != r) train.push_back(&s);
    if (train.size() == samples.size() || train.size() < 2) continue;
    const auto [ra, rb] = fit_line(train);
    const AllReduceFit held = fit_from_line(ra, rb, workers, per_node, device, static_cast<int>(train.size()));
    for (const auto& s : samples)
      if (size_range(s.bytes) == r) out.push_back(relative_error(held, s));
  }
  f.in_sample = error_stats(in);
  f.leave_range_out = error_stats(out);
  f.errors = std::move(in);
  f.held_out_errors = std::move(out);
  return f;
}

std::vector<AllReduceFit> fit_allreduce_configs(const std::vector<AllReduceSample>& samples, const std::string& device) {
  std::map<std::pair<int, int>, std::vector<AllReduceSample>> by_config;
  for (const auto& s : samples) by_config[{s.workers, s.devices_per_node}].push_back(s);
  std::vector<AllReduceFit> fits;
  for (const auto& [config, group] : by_config) fits.push_back(fit_allreduce(group, device));
  return fits;
}

json allreduce_fits_to_json(const std::vector<AllReduceFit>& fits, const std::string& source) {
  json list = json::array();
  for (const auto& f : fits)
    list.push_back({{"device", f.device}, {"workers", f.workers}, {"devices_per_node", f.devices_per_node},
                    {"latency_s", f.latency_s}, {"bus_bandwidth_bytes_per_s", f.bus_bandwidth_bytes_per_s},
                    {"samples", f.samples}, {"error_median", f.in_sample.median}, {"error_p90", f.in_sample.p90},
                    {"leave_range_out_median", f.leave_range_out.median}, {"leave_range_out_p90", f.leave_range_out.p90}});
  std::vector<double> in, out;
  for (const auto& f : fits) {
    in.insert(in.end(), f.errors.begin(), f.errors.end());
    out.insert(out.end(), f.held_out_errors.begin(), f.held_out_errors.end());
  }
  const ErrorStats all = error_stats(in), held = error_stats(out);
  return {{"format", "ridge-allreduce-calibration"}, {"version", 1},
          {"model", "time = 2(n-1) latency_s + 2(n-1)/n bytes / bus_bandwidth_bytes_per_s, n = workers"},
          {"source", source}, {"fits", list},
          {"summary", {{"samples", all.count}, {"error_median", all.median}, {"error_p90", all.p90},
                       {"leave_range_out_median", held.median}, {"leave_range_out_p90", held.p90}}}};
}

std::vector<AllReduceFit> read_allreduce_fits(const std::string& path) {
  const json j = model_detail::parse_json(model_detail::read_text_file(path, "all-reduce calibration"), path);
  const model_detail::Reader r{path};
  if (!j.is_object() || j.value("format", "") != "ridge-allreduce-calibration")
    r.fail("format", "expected \"ridge-allreduce-calibration\"");
  if (!j.contains("fits") || !j["fits"].is_array()) r.fail("fits", "expected an array");
  std::vector<AllReduceFit> fits;
  for (size_t i = 0; i < j["fits"].size(); ++i) {
    const json& e = j["fits"][i];
    const std::string at = fmt::format("fits[{}]", i);
    r.object(e, at);
    for (const char* key : {"device", "workers", "devices_per_node", "latency_s", "bus_bandwidth_bytes_per_s"})
      if (!e.contains(key)) r.fail(at + "." + key, "missing");
    AllReduceFit f;
    f.device = r.text(e["device"], at + ".device");
    f.workers = static_cast<int>(r.whole(e["workers"], at + ".workers"));
    f.devices_per_node = static_cast<int>(r.whole(e["devices_per_node"], at + ".devices_per_node"));
    const bool zero_latency = e["latency_s"].is_number() && e["latency_s"].get<double>() == 0.0;  // fitted to zero
    f.latency_s = zero_latency ? 0.0 : r.positive(e["latency_s"], at + ".latency_s");
    f.bus_bandwidth_bytes_per_s = r.positive(e["bus_bandwidth_bytes_per_s"], at + ".bus_bandwidth_bytes_per_s");
    if (e.contains("samples")) f.samples = static_cast<int>(r.whole(e["samples"], at + ".samples"));
    fits.push_back(f);
  }
  return fits;
}

std::optional<AllReduceFit> intra_node_fit(const std::vector<AllReduceFit>& fits, const std::vector<Device>& devices,
                                           const ClusterTopology& t) {
  if (t.gpus_per_node < 2) return std::nullopt;
  for (const auto& f : fits) {
    if (f.workers != f.devices_per_node || f.workers != t.gpus_per_node) continue;
    const auto d = std::find_if(devices.begin(), devices.end(), [&](const Device& x) { return x.id == f.device; });
    if (d != devices.end() && !d->node.intra_node.empty() && d->node.intra_node == t.intra.name) return f;
  }
  return std::nullopt;
}

ClusterTopology with_intra_node_fit(ClusterTopology t, const AllReduceFit& fit) {
  t.intra.bandwidth_bytes_per_s = fit.bus_bandwidth_bytes_per_s;
  t.intra.latency_s = fit.latency_s;
  return t;
}

}  // namespace ridge
