// The device database: precision table, device JSON files, this machine's profile, lookup by name.
#include "ridge/device.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "ridge/error.hpp"
#include "ridge/load.hpp"
#include "ridge/machine.hpp"
#include "text_util.hpp"

namespace ridge {
namespace fs = std::filesystem;

namespace {
// The names of this machine's measured device: its id first, then the aliases a user may type.
constexpr std::string_view kMachineNames[] = {"machine", "this-machine", "local", "cpu"};
bool names_machine(std::string_view lower_name) {
  return std::find(std::begin(kMachineNames), std::end(kMachineNames), lower_name) != std::end(kMachineNames);
}
}  // namespace
using nlohmann::json;

const std::vector<PrecisionInfo>& precisions() {
  static const std::vector<PrecisionInfo> kTable = {
      {Precision::FP64, "fp64", DType::F64, "IEEE double on vector (CUDA) cores"},
      {Precision::FP32, "fp32", DType::F32, "IEEE single on vector (CUDA) cores"},
      {Precision::TF32, "tf32", DType::F32, "TF32 tensor cores (fp32 storage, 10-bit mantissa inputs)"},
      {Precision::FP16, "fp16", DType::F16, "FP16 inputs on tensor/matrix cores, FP32 accumulate"},
      {Precision::BF16, "bf16", DType::BF16, "BF16 inputs on tensor/matrix cores, FP32 accumulate"},
      {Precision::INT8, "int8", DType::I8, "INT8 tensor/matrix operations (TOPS)"},
  };
  return kTable;
}

const PrecisionInfo& precision_info(Precision p) {
  for (const auto& info : precisions())
    if (info.id == p) return info;
  RIDGE_ASSERT(false, "precision missing from the table");
  return precisions().front();
}

std::optional<Precision> parse_precision(std::string_view name) {
  static const std::vector<std::pair<std::string_view, Precision>> kSynonyms = {
      {"float64", Precision::FP64}, {"f64", Precision::FP64}, {"double", Precision::FP64},
      {"float32", Precision::FP32}, {"f32", Precision::FP32}, {"single", Precision::FP32},
      {"float", Precision::FP32},   {"float16", Precision::FP16}, {"f16", Precision::FP16},
      {"half", Precision::FP16},    {"bfloat16", Precision::BF16}, {"i8", Precision::INT8},
  };
  const std::string lower = ascii_lower(name);
  for (const auto& info : precisions())
    if (info.name == lower) return info.id;
  for (const auto& [synonym, p] : kSynonyms)
    if (synonym == lower) return p;
  return std::nullopt;
}

std::optional<double> Device::peak(Precision p) const {
  auto it = peak_flops.find(p);
  if (it == peak_flops.end()) return std::nullopt;
  return it->second;
}

std::optional<double> Device::achieved_fraction(Precision p) const {
  auto it = achieved_flops.find(p);
  if (it == achieved_flops.end() && (p == Precision::FP16 || p == Precision::BF16))
    it = achieved_flops.find(p == Precision::FP16 ? Precision::BF16 : Precision::FP16);
  const auto top = peak(p);
  if (it == achieved_flops.end() || !top) return std::nullopt;
  return it->second / *top;
}

double Device::require_peak(Precision p, std::string_view flag) const {
  if (auto v = peak(p)) return *v;
  std::string have;
  for (const auto& [q, v] : peak_flops) have += (have.empty() ? "" : ", ") + std::string(precision_info(q).name);
  throw Error(fmt::format("{} {}: device '{}' has no {} peak (it has: {})", flag, precision_info(p).name, id,
                          precision_info(p).name, have));
}

std::optional<double> Device::level_bandwidth(const std::string& level) const {
  auto it = bandwidth_bytes_per_s.find(ascii_lower(level));
  return it == bandwidth_bytes_per_s.end() ? std::nullopt : std::optional<double>(it->second);
}

double Device::bandwidth(const std::string& level) const {
  if (auto bw = level_bandwidth(level)) return *bw;
  std::string have;
  for (const auto& [name, v] : bandwidth_bytes_per_s) have += (have.empty() ? "" : ", ") + name;
  throw Error(fmt::format("device '{}': no {} bandwidth (it has: {})", id, level, have));
}

const Interconnect* Device::interconnect(std::string_view link) const {
  for (const auto& i : interconnects)
    if (i.name == link) return &i;
  return nullptr;
}

bool Device::matches(const std::string& name) const {
  const std::string want = ascii_lower(name);
  if (kind == "cpu" && names_machine(want)) return true;
  if (want == ascii_lower(id) || want == ascii_lower(this->name)) return true;
  return std::any_of(aliases.begin(), aliases.end(), [&](const std::string& a) { return ascii_lower(a) == want; });
}

std::string Device::source_of(const std::string& field) const {
  std::string key = field;
  while (true) {
    if (auto it = sources.find(key); it != sources.end()) return it->second;
    size_t dot = key.rfind('.');
    if (dot == std::string::npos) return "";
    key.resize(dot);
  }
}

// ---- parsing ---------------------------------------------------------------------------------------------
using model_detail::Reader;
using model_detail::numeric_paths;

namespace {

// The "node" block: where the device usually sits (GPUs per node, the fabrics inside and between nodes).
NodeSpec parse_node(const json& v, const Reader& r) {
  NodeSpec n;
  for (const auto& [key, value] : r.object(v, "node").items()) {
    const std::string field = "node." + key;
    if (key == "gpus_per_node") n.gpus_per_node = static_cast<int>(r.whole(value, field));
    else if (key == "nics_per_node") n.nics_per_node = static_cast<int>(r.whole(value, field));
    else if (key == "intra_node") n.intra_node = r.text(value, field);
    else if (key == "inter_node") n.inter_node = r.text(value, field);
    else r.fail(field, "unknown field (use gpus_per_node, intra_node, inter_node, nics_per_node)");
  }
  return n;
}

// A precision named as a key of peak_flops or achieved.flops ("fp32", ...).
Precision precision_key(const std::string& name, const std::string& field, const Reader& r) {
  auto p = parse_precision(name);
  if (!p || precision_info(*p).name != name) r.fail(field, "unknown precision (use fp64, fp32, tf32, fp16, bf16, int8)");
  return *p;
}

// FLOP/s by precision as JSON keyed by the precisions' names.
json flops_by_precision(const std::map<Precision, double>& rates) {
  json out = json::object();
  for (const auto& [p, v] : rates) out[std::string(precision_info(p).name)] = v;
  return out;
}

// The "achieved" block: measured ceilings, each at most the peak it is measured against.
void parse_achieved(const json& v, const Reader& r, Device& d) {
  for (const auto& [key, value] : r.object(v, "achieved").items()) {
    if (key == "flops") {
      for (const auto& [name, rate] : r.object(value, "achieved.flops").items()) {
        const std::string field = "achieved.flops." + name;
        const Precision p = precision_key(name, field, r);
        const double x = r.positive(rate, field);
        auto peak = d.peak(p);
        if (!peak) r.fail(field, "measured at a precision peak_flops does not list");
        if (x > *peak) r.fail(field, fmt::format("{:g} FLOP/s is above peak_flops.{} ({:g})", x, name, *peak));
        d.achieved_flops[p] = x;
      }
    } else if (key == "bandwidth_bytes_per_s") {
      for (const auto& [level, rate] : r.object(value, "achieved.bandwidth_bytes_per_s").items()) {
        const std::string field = "achieved.bandwidth_bytes_per_s." + level;
        const double x = r.positive(rate, field);
        auto peak = d.level_bandwidth(level);
        if (!peak) r.fail(field, "measured for a level bandwidth_bytes_per_s does not list");
        if (x > *peak) r.fail(field, fmt::format("{:g} B/s is above bandwidth_bytes_per_s.{} ({:g})", x, level, *peak));
        d.achieved_bandwidth_bytes_per_s[level] = x;
      }
    } else {
      r.fail("achieved." + key, "unknown field (use flops, bandwidth_bytes_per_s)");
    }
  }
}

}  // namespace

Device parse_device(const std::string& text, const std::string& origin) {
  const json j = model_detail::parse_json(text, origin);
  Reader r{origin};
  if (!j.is_object()) r.fail("(top level)", "expected a JSON object describing one device");
  static const std::set<std::string> kKnown = {"name", "vendor", "kind", "aliases", "peak_flops",
                                               "bandwidth_bytes_per_s", "memory_bytes", "sm_count",
                                               "boost_clock_hz", "l2_bytes", "kernel_launch_s",
                                               "interconnects", "node", "achieved", "sources", "notes"};
  for (const auto& [key, value] : j.items())
    if (!kKnown.count(key)) r.fail(key, "unknown field (see docs/model.md for the device format)");

  Device d;
  if (!j.contains("name")) r.fail("name", "missing");
  d.name = r.text(j["name"], "name");
  if (j.contains("vendor")) d.vendor = r.text(j["vendor"], "vendor");
  d.kind = j.contains("kind") ? r.text(j["kind"], "kind") : "gpu";
  if (j.contains("aliases")) {
    if (!j["aliases"].is_array()) r.fail("aliases", "expected an array of strings");
    for (const auto& a : j["aliases"]) d.aliases.push_back(r.text(a, "aliases[]"));
  }
  if (!j.contains("peak_flops")) r.fail("peak_flops", "missing");
  for (const auto& [key, value] : r.object(j["peak_flops"], "peak_flops").items())
    d.peak_flops[precision_key(key, "peak_flops." + key, r)] = r.positive(value, "peak_flops." + key);
  if (!j.contains("bandwidth_bytes_per_s")) r.fail("bandwidth_bytes_per_s", "missing");
  for (const auto& [key, value] : r.object(j["bandwidth_bytes_per_s"], "bandwidth_bytes_per_s").items())
    d.bandwidth_bytes_per_s[key] = r.positive(value, "bandwidth_bytes_per_s." + key);
  if (!d.bandwidth_bytes_per_s.count("dram")) r.fail("bandwidth_bytes_per_s.dram", "missing");
  if (j.contains("memory_bytes")) d.memory_bytes = r.whole(j["memory_bytes"], "memory_bytes");
  if (j.contains("sm_count")) d.sm_count = static_cast<int>(r.whole(j["sm_count"], "sm_count"));
  if (j.contains("boost_clock_hz")) d.boost_clock_hz = r.positive(j["boost_clock_hz"], "boost_clock_hz");
  if (j.contains("l2_bytes")) d.l2_bytes = r.whole(j["l2_bytes"], "l2_bytes");
  if (j.contains("kernel_launch_s")) d.kernel_launch_s = r.positive(j["kernel_launch_s"], "kernel_launch_s");
  if (j.contains("interconnects")) {
    for (const auto& [name, link] : r.object(j["interconnects"], "interconnects").items()) {
      const std::string field = "interconnects." + name;
      r.object(link, field);
      for (const auto& [key, value] : link.items())
        if (key != "bandwidth_bytes_per_s" && key != "latency_s") r.fail(field + "." + key, "unknown field");
      if (!link.contains("bandwidth_bytes_per_s")) r.fail(field + ".bandwidth_bytes_per_s", "missing");
      Interconnect i{name, r.positive(link["bandwidth_bytes_per_s"], field + ".bandwidth_bytes_per_s"), 0};
      if (link.contains("latency_s")) i.latency_s = r.positive(link["latency_s"], field + ".latency_s");
      d.interconnects.push_back(i);
    }
  }
  if (j.contains("node")) d.node = parse_node(j["node"], r);
  if (j.contains("achieved")) parse_achieved(j["achieved"], r, d);
  if (j.contains("sources"))
    for (const auto& [key, value] : r.object(j["sources"], "sources").items())
      d.sources[key] = r.text(value, "sources." + key);
  if (j.contains("notes")) d.notes = r.text(j["notes"], "notes");

  std::vector<std::string> fields;
  numeric_paths(j, "", fields);
  for (const auto& f : fields)
    if (d.source_of(f).empty()) r.fail(f, "has no source (add \"" + f + "\" or a parent to \"sources\")");
  d.file = origin;
  return d;
}

Device load_device_file(const std::string& path) {
  const std::string text = model_detail::read_text_file(path, "device file");
  Device d = parse_device(text, path);
  d.id = fs::path(path).stem().string();
  return d;
}

json device_to_json(const Device& d) {
  json j = json::object();
  j["id"] = d.id;
  j["name"] = d.name;
  j["vendor"] = d.vendor;
  j["kind"] = d.kind;
  j["aliases"] = d.aliases;
  j["peak_flops"] = flops_by_precision(d.peak_flops);
  j["bandwidth_bytes_per_s"] = d.bandwidth_bytes_per_s;
  j["memory_bytes"] = static_cast<int64_t>(d.memory_bytes);
  j["sm_count"] = d.sm_count;
  j["boost_clock_hz"] = d.boost_clock_hz;
  j["l2_bytes"] = static_cast<int64_t>(d.l2_bytes);
  j["kernel_launch_s"] = d.kernel_launch_s;
  json links = json::object();
  for (const auto& i : d.interconnects)
    links[i.name] = {{"bandwidth_bytes_per_s", i.bandwidth_bytes_per_s}, {"latency_s", i.latency_s}};
  j["interconnects"] = links;
  if (d.node.gpus_per_node > 0 || !d.node.intra_node.empty())
    j["node"] = {{"gpus_per_node", d.node.gpus_per_node}, {"intra_node", d.node.intra_node},
                 {"inter_node", d.node.inter_node}, {"nics_per_node", d.node.nics_per_node}};
  if (!d.achieved_flops.empty() || !d.achieved_bandwidth_bytes_per_s.empty()) {
    j["achieved"] = {{"flops", flops_by_precision(d.achieved_flops)},
                     {"bandwidth_bytes_per_s", d.achieved_bandwidth_bytes_per_s}};
  }
  j["sources"] = d.sources;
  j["notes"] = d.notes;
  j["file"] = d.file;
  return j;
}

// ---- the database ----------------------------------------------------------------------------------------

std::string builtin_devices_dir() { return builtin_data_dir("devices"); }


std::vector<Device> load_devices(const std::vector<std::string>& extra_dirs) {
  std::vector<Device> devices;
  std::vector<std::string> dirs = {builtin_devices_dir()};
  dirs.insert(dirs.end(), extra_dirs.begin(), extra_dirs.end());
  for (const auto& dir : dirs) {
    for (const auto& file : model_detail::json_files(dir, "device folder")) {
      Device d = load_device_file(file);
      auto same = std::find_if(devices.begin(), devices.end(), [&](const Device& o) { return o.id == d.id; });
      if (same != devices.end()) *same = std::move(d);  // a user file replaces the built-in one
      else devices.push_back(std::move(d));
    }
  }
  std::map<std::string, std::string> owner;  // lower-case id/alias -> file
  for (const auto& d : devices) {
    std::set<std::string> own = {ascii_lower(d.id)};
    for (const auto& a : d.aliases) own.insert(ascii_lower(a));
    for (const auto& key : own) {
      auto [it, fresh] = owner.emplace(key, d.file);
      if (!fresh) throw Error(fmt::format("{}: device name or alias '{}' is already used by {}", d.file, key, it->second));
    }
  }
  return devices;
}

std::string machine_profile_path() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return (fs::path(xdg) / "ridge" / "machine.json").string();
  const char* home = std::getenv("HOME");
  return (fs::path(home && *home ? home : ".") / ".cache" / "ridge" / "machine.json").string();
}

namespace {

// This machine from `ridge machine`'s cached profile (measure::profile_to_json): all-thread ceilings.
Device machine_from_profile(const json& j, const std::string& path) {
  const measure::MachineProfile p = measure::profile_from_json(j, path);
  Device d;
  for (const auto& [precision, dtype] : {std::pair{Precision::FP32, DType::F32}, std::pair{Precision::FP64, DType::F64}})
    if (double g = p.peak_gflops(dtype, true); g > 0) d.peak_flops[precision] = g * 1e9;
  for (const char* level : {"L1", "L2", "L3", "DRAM"})
    if (auto gbs = p.bandwidth_gbs(level, true); gbs && *gbs > 0)
      d.bandwidth_bytes_per_s[ascii_lower(level)] = *gbs * 1e9;
  d.name = p.cpu.model.empty() ? "this machine" : "this machine (" + p.cpu.model + ")";
  return d;
}

// The flat summary form: {"peak_gflops": {"fp32": ..}, "bandwidth_gbs": {"DRAM": ..}} (null = not measured).
Device machine_from_summary(const json& j, const Reader& r) {
  Device d;
  d.name = "this machine";
  if (j.contains("cpu") && j["cpu"].is_object() && j["cpu"].contains("model") && j["cpu"]["model"].is_string())
    d.name = "this machine (" + j["cpu"]["model"].get<std::string>() + ")";
  for (const auto& [key, value] : r.object(j["peak_gflops"], "peak_gflops").items()) {
    auto p = parse_precision(key);
    if (!p || value.is_null()) continue;
    d.peak_flops[*p] = r.positive(value, "peak_gflops." + key) * 1e9;
  }
  if (!j.contains("bandwidth_gbs")) r.fail("bandwidth_gbs", "missing");
  for (const auto& [key, value] : r.object(j["bandwidth_gbs"], "bandwidth_gbs").items()) {
    if (value.is_null()) continue;
    d.bandwidth_bytes_per_s[ascii_lower(key)] = r.positive(value, "bandwidth_gbs." + key) * 1e9;
  }
  return d;
}

}  // namespace

std::optional<Device> load_machine_device(const std::string& profile_path) {
  std::error_code ec;
  if (!fs::exists(profile_path, ec)) return std::nullopt;
  const std::string text = model_detail::read_text_file(profile_path, "machine profile");
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw Error(fmt::format("{}: machine profile is not valid JSON: {} (run `ridge machine` again)", profile_path,
                            model_detail::json_error_text(e)));
  }
  Reader r{profile_path};
  if (!j.is_object() || (!j.contains("peaks") && !j.contains("peak_gflops")))
    r.fail("peaks", "missing: not a `ridge machine` profile (run `ridge machine` again)");
  Device d;
  try {
    d = j.contains("peaks") ? machine_from_profile(j, profile_path) : machine_from_summary(j, r);
  } catch (const json::exception& e) {
    r.fail("(profile)", model_detail::first_line(e.what()));
  }
  d.id = std::string(kMachineNames[0]);
  d.kind = "cpu";
  d.aliases.assign(std::begin(kMachineNames) + 1, std::end(kMachineNames));
  d.file = profile_path;
  if (d.peak_flops.empty()) r.fail("peaks", "no measured peak (run `ridge machine` again)");
  if (!d.bandwidth_bytes_per_s.count("dram"))
    r.fail("DRAM bandwidth", "not measured (a quick profile?); run `ridge machine` without --quick");
  const std::string src = "measured by `ridge machine` (all threads), cached in " + profile_path;
  d.sources = {{"peak_flops", src}, {"bandwidth_bytes_per_s", src}};
  d.notes = "measured ceilings of this CPU (empirical roofline)";
  return d;
}

Device find_device(const std::vector<Device>& devices, const std::string& name) {
  const std::string want = ascii_lower(name);
  if (names_machine(want)) {
    const std::string path = machine_profile_path();
    if (auto d = load_machine_device(path)) return *d;
    throw Error(fmt::format("device '{}': no machine profile at {}; run `ridge machine` first", name, path));
  }
  std::vector<std::string> known = {"machine"};
  for (const auto& d : devices) {
    if (d.matches(name)) return d;
    known.push_back(d.id);
    known.insert(known.end(), d.aliases.begin(), d.aliases.end());
  }
  throw Error(fmt::format("--device '{}': unknown device{}; `ridge devices` lists all", name, did_you_mean(want, known)));
}

}  // namespace ridge
