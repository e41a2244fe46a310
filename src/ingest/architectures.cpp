// The GPU architecture table (data/gpu/architectures.json): FLOPs per tensor-pipe instruction per precision, the
// exact tensor-path counters per source precision, and the name fragments that tell an architecture, read from data
// rather than kept in code.
#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ridge/data_dir.hpp"
#include "ridge/error.hpp"
#include "ridge/ingest.hpp"

namespace ridge::ingest {
namespace {

using nlohmann::json;

const json& member(const json& j, const char* key, const std::string& where) {
  if (!j.is_object() || !j.contains(key)) throw Error(fmt::format("{}: missing '{}'", where, key));
  return j.at(key);
}

std::string text_field(const json& j, const char* key, const std::string& where) {
  const json& v = member(j, key, where);
  if (!v.is_string() || v.get<std::string>().empty())
    throw Error(fmt::format("{}: '{}' must be a non-empty string", where, key));
  return v.get<std::string>();
}

std::vector<ArchitectureHint> hints(const json& j, const char* key, const std::string& origin,
                                    const ArchitectureTable& t) {
  const json& list = member(j, key, origin);
  if (!list.is_array()) throw Error(fmt::format("{}: '{}' must be an array", origin, key));
  std::vector<ArchitectureHint> out;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string where = fmt::format("{}: {}[{}]", origin, key, i);
    ArchitectureHint h{text_field(list[i], "pattern", where), text_field(list[i], "architecture", where)};
    if (!t.find(h.architecture)) throw Error(fmt::format("{}: unknown architecture '{}'", where, h.architecture));
    out.push_back(std::move(h));
  }
  return out;
}

// "tensor_ops": {"precisions": [{"precision": "bf16", "metrics": [["a.sum"], ["b.sum", "c.sum"]]}, ...], ...}
TensorOps tensor_ops(const json& j, const std::string& origin) {
  TensorOps t;
  if (!j.contains("tensor_ops")) return t;
  const std::string where = origin + ": tensor_ops";
  const json& o = j.at("tensor_ops");
  if (!o.is_object()) throw Error(where + " must be an object");
  t.source = text_field(o, "source", where);
  const json& per_op = member(o, "flops_per_op", where);
  if (!per_op.is_number_integer() || per_op.get<int64_t>() <= 0)
    throw Error(where + ": 'flops_per_op' must be a positive integer");
  t.flops_per_op = per_op.get<int64_t>();
  if (o.contains("not_math")) {
    t.not_math_metric = text_field(o.at("not_math"), "metric", where + ".not_math");
    t.not_math_note = text_field(o.at("not_math"), "note", where + ".not_math");
  }
  const json& list = member(o, "precisions", where);
  if (!list.is_array() || list.empty()) throw Error(where + ": 'precisions' must be a non-empty array");
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string at = fmt::format("{}.precisions[{}]", where, i);
    TensorOpsPrecision p{text_field(list[i], "precision", at), {}};
    for (const TensorOpsPrecision& q : t.precisions)
      if (q.precision == p.precision) throw Error(fmt::format("{}: precision '{}' listed twice", at, p.precision));
    const json& sets = member(list[i], "metrics", at);
    if (!sets.is_array() || sets.empty()) throw Error(at + ": 'metrics' must be a non-empty array of metric lists");
    for (size_t s = 0; s < sets.size(); ++s) {
      if (!sets[s].is_array() || sets[s].empty())
        throw Error(fmt::format("{}: metrics[{}] must be a non-empty array of metric names", at, s));
      std::vector<std::string> names;
      for (const json& m : sets[s]) {
        if (!m.is_string() || m.get<std::string>().empty())
          throw Error(fmt::format("{}: metrics[{}] must hold metric names", at, s));
        names.push_back(m.get<std::string>());
      }
      p.alternatives.push_back(std::move(names));
    }
    t.precisions.push_back(std::move(p));
  }
  return t;
}

}  // namespace

std::vector<std::string> TensorOps::collect() const {
  std::vector<std::string> out;
  for (const TensorOpsPrecision& p : precisions)
    for (const std::string& m : p.alternatives.front()) out.push_back(m);
  return out;
}

const Architecture* ArchitectureTable::find(std::string_view name) const {
  for (const Architecture& a : architectures)
    if (a.name == name) return &a;
  return nullptr;
}

int64_t ArchitectureTable::tensor_factor(std::string_view arch) const {
  const Architecture* a = find(arch);
  if (!a) return 0;
  auto it = a->tensor_flops_per_inst.find(counted_precision);
  return it == a->tensor_flops_per_inst.end() ? 0 : it->second;
}

ArchitectureTable parse_architectures(std::string_view text, const std::string& origin) {
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw Error(origin + ": not a JSON object");
  if (j.value("format", "") != "ridge-gpu-architectures")
    throw Error(origin + ": 'format' must be \"ridge-gpu-architectures\"");
  ArchitectureTable t;
  t.file = origin;
  t.counted_precision = text_field(j, "counted_precision", origin);
  const json& archs = member(j, "architectures", origin);
  if (!archs.is_array() || archs.empty()) throw Error(origin + ": 'architectures' must be a non-empty array");
  for (size_t i = 0; i < archs.size(); ++i) {
    const std::string where = fmt::format("{}: architectures[{}]", origin, i);
    Architecture a{text_field(archs[i], "name", where), {}, text_field(archs[i], "source", where)};
    if (t.find(a.name)) throw Error(fmt::format("{}: architecture '{}' listed twice", where, a.name));
    const json& f = member(archs[i], "tensor_flops_per_inst", where);
    if (!f.is_object()) throw Error(where + ": 'tensor_flops_per_inst' must be an object (precision -> FLOPs)");
    for (const auto& [prec, v] : f.items()) {
      if (!v.is_number_integer() || v.get<int64_t>() <= 0)
        throw Error(fmt::format("{}: tensor_flops_per_inst.{} must be a positive integer", where, prec));
      a.tensor_flops_per_inst[prec] = v.get<int64_t>();
    }
    t.architectures.push_back(std::move(a));
  }
  t.device_names = hints(j, "device_names", origin, t);
  t.kernel_prefixes = hints(j, "kernel_prefixes", origin, t);
  t.tensor_ops = tensor_ops(j, origin);
  return t;
}

ArchitectureTable load_architectures(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot read the GPU architecture table");
  std::ostringstream s;
  s << in.rdbuf();
  return parse_architectures(s.str(), path);
}

const ArchitectureTable& builtin_architectures() {
  static const ArchitectureTable table = load_architectures(builtin_data_dir("gpu") + "/architectures.json");
  return table;
}

}  // namespace ridge::ingest
