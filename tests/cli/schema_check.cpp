#include "schema_check.hpp"

#include <set>

namespace ridge::test {
namespace {

bool has_type(const nlohmann::json& v, const std::string& t) {
  if (t == "object") return v.is_object();
  if (t == "array") return v.is_array();
  if (t == "string") return v.is_string();
  if (t == "boolean") return v.is_boolean();
  if (t == "null") return v.is_null();
  if (t == "integer") return v.is_number_integer();
  if (t == "number") return v.is_number();
  return false;
}

struct Checker {
  const nlohmann::json& root;
  std::vector<std::string> errors;

  void fail(const std::string& path, const std::string& what) { errors.push_back(path + ": " + what); }

  void check(const nlohmann::json& s, const nlohmann::json& v, const std::string& path) {
    static const std::set<std::string> kKnown = {"$schema", "$id", "$defs", "title", "description", "type",
                                                 "properties", "required", "additionalProperties", "items",
                                                 "enum", "const", "minimum", "anyOf", "$ref"};
    if (s.is_boolean()) {
      if (!s.get<bool>()) fail(path, "not allowed here");
      return;
    }
    for (const auto& [k, _] : s.items())
      if (!kKnown.count(k)) fail(path, "schema keyword '" + k + "' is not supported by the test's checker");
    if (s.contains("$ref")) {
      const std::string ref = s["$ref"];
      const std::string prefix = "#/$defs/";
      if (ref.rfind(prefix, 0) != 0 || !root["$defs"].contains(ref.substr(prefix.size()))) {
        fail(path, "unresolvable $ref " + ref);
        return;
      }
      check(root["$defs"][ref.substr(prefix.size())], v, path);
    }
    if (s.contains("type")) {
      std::vector<std::string> types;
      if (s["type"].is_array()) types = s["type"].get<std::vector<std::string>>();
      else types.push_back(s["type"]);
      bool ok = false;
      for (const auto& t : types) ok |= has_type(v, t);
      if (!ok) {
        fail(path, "expected " + s["type"].dump() + ", got " + std::string(v.type_name()));
        return;
      }
    }
    if (s.contains("const") && v != s["const"]) fail(path, "expected " + s["const"].dump() + ", got " + v.dump());
    if (s.contains("enum")) {
      bool ok = false;
      for (const auto& e : s["enum"]) ok |= e == v;
      if (!ok) fail(path, v.dump() + " is not one of " + s["enum"].dump());
    }
    if (s.contains("minimum") && v.is_number() && v.get<double>() < s["minimum"].get<double>())
      fail(path, v.dump() + " is below " + s["minimum"].dump());
    if (s.contains("anyOf")) {
      bool ok = false;
      for (const auto& alt : s["anyOf"]) {
        Checker sub{root, {}};
        sub.check(alt, v, path);
        ok |= sub.errors.empty();
      }
      if (!ok) fail(path, "matches none of anyOf");
    }
    if (v.is_object()) {
      if (s.contains("required"))
        for (const auto& r : s["required"])
          if (!v.contains(r.get<std::string>())) fail(path, "missing required key '" + r.get<std::string>() + "'");
      const nlohmann::json props = s.value("properties", nlohmann::json::object());
      for (const auto& [k, val] : v.items()) {
        if (props.contains(k)) check(props[k], val, path + "." + k);
        else if (s.contains("additionalProperties")) check(s["additionalProperties"], val, path + "." + k);
      }
    }
    if (v.is_array() && s.contains("items"))
      for (size_t i = 0; i < v.size(); ++i) check(s["items"], v[i], path + "[" + std::to_string(i) + "]");
  }
};

}  // namespace

std::vector<std::string> schema_errors(const nlohmann::json& schema, const nlohmann::json& doc) {
  Checker c{schema, {}};
  c.check(schema, doc, "$");
  return c.errors;
}

}  // namespace ridge::test
