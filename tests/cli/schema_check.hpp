// A checker for the subset of JSON Schema (draft 2020-12) that docs/schemas/*.json use: type (one or a list),
// properties, required, additionalProperties (false or a schema), items, enum, const, minimum, anyOf and local
// $ref ("#/$defs/NAME"). Anything else in a schema is an error, so a schema cannot silently check less than it says.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ridge::test {

/// Problems of `doc` against `schema` ("$.layers[3].flops: expected integer, got string"); empty when valid.
std::vector<std::string> schema_errors(const nlohmann::json& schema, const nlohmann::json& doc);

}  // namespace ridge::test
