// Layer descriptors back into one-node graphs, so that any row of any report can be re-run alone:
// `ridge summary conv:mb1ic64ih56iw56oc64oh56ow56kh3kw3sh1sw1ph1pw1dh1dw1g1b0`. The format of each op is
// printed and parsed by its rule in the ops stage (src/ops/descriptor.cpp and the family files).
#include "ridge/load.hpp"
#include "ridge/op_rules.hpp"

namespace ridge {

bool is_descriptor(const std::string& model) { return ops::is_descriptor(model); }

Graph graph_from_descriptor(const std::string& desc, DType dtype) {
  return ops::graph_of(ops::parse_descriptor(desc, dtype), desc);
}

}  // namespace ridge
