// The interconnect database: one JSON file per fabric (NVLink generations, PCIe) or network (InfiniBand,
// Ethernet) in data/interconnects/, every number with its source, read like the device files.
#include <filesystem>
#include <set>

#include "ridge/device.hpp"
#include "ridge/error.hpp"
#include "ridge/load.hpp"
#include "text_util.hpp"

namespace ridge {
namespace fs = std::filesystem;
using nlohmann::json;

bool InterconnectSpec::matches(const std::string& want) const {
  const std::string lower = ascii_lower(want);
  if (lower == ascii_lower(id)) return true;
  return std::any_of(aliases.begin(), aliases.end(), [&](const std::string& a) { return ascii_lower(a) == lower; });
}

InterconnectSpec parse_interconnect(const std::string& text, const std::string& origin) {
  const json j = model_detail::parse_json(text, origin);
  const model_detail::Reader r{origin};
  if (!j.is_object()) r.fail("(top level)", "expected a JSON object describing one interconnect");
  static const std::set<std::string> kKnown = {"name", "scope", "aliases", "bandwidth_bytes_per_s", "latency_s",
                                               "sources", "notes"};
  for (const auto& [key, value] : j.items())
    if (!kKnown.count(key)) r.fail(key, "unknown field (see docs/model.md for the interconnect format)");
  InterconnectSpec s;
  for (const char* required : {"name", "scope", "bandwidth_bytes_per_s", "latency_s"})
    if (!j.contains(required)) r.fail(required, "missing");
  s.name = r.text(j["name"], "name");
  s.scope = r.text(j["scope"], "scope");
  if (s.scope != "intra-node" && s.scope != "inter-node") r.fail("scope", "use intra-node or inter-node");
  if (j.contains("aliases")) {
    if (!j["aliases"].is_array()) r.fail("aliases", "expected an array of strings");
    for (const auto& a : j["aliases"]) s.aliases.push_back(r.text(a, "aliases[]"));
  }
  s.link.bandwidth_bytes_per_s = r.positive(j["bandwidth_bytes_per_s"], "bandwidth_bytes_per_s");
  s.link.latency_s = r.positive(j["latency_s"], "latency_s");
  if (j.contains("sources"))
    for (const auto& [key, value] : r.object(j["sources"], "sources").items()) s.sources[key] = r.text(value, "sources." + key);
  if (j.contains("notes")) s.notes = r.text(j["notes"], "notes");
  std::vector<std::string> fields;
  model_detail::numeric_paths(j, "", fields);
  for (const auto& f : fields)
    if (!s.sources.count(f)) r.fail(f, "has no source (add \"" + f + "\" to \"sources\")");
  s.file = origin;
  return s;
}

std::vector<InterconnectSpec> load_interconnects(const std::vector<std::string>& extra_dirs) {
  std::vector<InterconnectSpec> all;
  std::vector<std::string> dirs = {builtin_data_dir("interconnects")};
  dirs.insert(dirs.end(), extra_dirs.begin(), extra_dirs.end());
  for (const auto& dir : dirs) {
    for (const auto& file : model_detail::json_files(dir, "interconnect folder")) {
      InterconnectSpec s = parse_interconnect(model_detail::read_text_file(file, "interconnect file"), file);
      s.id = fs::path(file).stem().string();
      s.link.name = s.id;
      auto same = std::find_if(all.begin(), all.end(), [&](const InterconnectSpec& o) { return o.id == s.id; });
      if (same != all.end()) *same = std::move(s);
      else all.push_back(std::move(s));
    }
  }
  std::map<std::string, std::string> owner;  // lower-case id/alias -> file
  for (const auto& s : all) {
    std::set<std::string> own = {ascii_lower(s.id)};
    for (const auto& a : s.aliases) own.insert(ascii_lower(a));
    for (const auto& key : own)
      if (auto [it, fresh] = owner.emplace(key, s.file); !fresh)
        throw Error(fmt::format("{}: interconnect name or alias '{}' is already used by {}", s.file, key, it->second));
  }
  return all;
}

const InterconnectSpec& find_interconnect(const std::vector<InterconnectSpec>& all, const std::string& name,
                                          const std::string& flag) {
  std::vector<std::string> known;
  for (const auto& s : all) {
    if (s.matches(name)) return s;
    known.push_back(s.id);
  }
  throw Error(fmt::format("{} {}: unknown interconnect{}; files in data/interconnects", flag, name,
                          did_you_mean(ascii_lower(name), known)));
}

}  // namespace ridge
