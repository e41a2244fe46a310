// What a shape rule sees of its node: input shapes (possibly with unknown dims), small integer payloads,
// attributes, and setters for its outputs. Shared by shape_rules.cpp (geometry) and fold.cpp (shape
// arithmetic). Rules return false when they cannot say anything; they throw RuleError for inconsistent input.
#pragma once
#include <fmt/format.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "load/onnx/onnx_internal.hpp"

namespace ridge::onnx_in {

/// An inconsistency found by a rule (bad axis, incompatible dims); the importer reports it on the node.
struct RuleError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Read access to a node's inputs and write access to its outputs.
struct RuleContext {
  Work& w;
  Node& n;

  int inputs() const { return static_cast<int>(n.inputs.size()); }
  bool present(int i) const { return i < inputs() && n.inputs[i] >= 0; }
  const Value* in(int i) const { return present(i) ? &w.g.value(n.inputs[i]) : nullptr; }
  /// Shape of input i when its rank is known (dims may still be -1).
  const Shape* shape(int i) const { return present(i) && w.slots[n.inputs[i]].rank_known ? &in(i)->shape : nullptr; }
  /// Integer payload of input i when known.
  const std::vector<int64_t>* ints(int i) const {
    return present(i) && in(i)->has_int_data ? &in(i)->int_data : nullptr;
  }
  /// Float payload of input i when known (small constants), falling back to integer payloads.
  std::optional<std::vector<double>> reals(int i) const {
    if (!present(i)) return std::nullopt;
    if (const auto& f = w.float_data[n.inputs[i]]) return f;
    if (auto p = ints(i)) return std::vector<double>(p->begin(), p->end());
    return std::nullopt;
  }
  DType dtype(int i) const { return present(i) ? in(i)->dtype : DType::Unknown; }
  int outputs() const { return static_cast<int>(n.outputs.size()); }

  /// Sets output k's shape (merging with what is already known) and, when still unknown, its dtype.
  void out(int k, const Shape& s, DType t = DType::Unknown) const {
    if (k >= outputs()) return;
    merge_shape(w, n.outputs[k], s);
    Value& v = w.g.value(n.outputs[k]);
    if (v.dtype == DType::Unknown) v.dtype = t != DType::Unknown ? t : dtype(0);
  }
  /// Sets output k's integer payload.
  void out_ints(int k, std::vector<int64_t> data) const {
    if (k >= outputs()) return;
    Value& v = w.g.value(n.outputs[k]);
    v.int_data = std::move(data);
    v.has_int_data = true;
  }
  /// Normalises a possibly negative axis against `rank`; throws RuleError when out of range.
  int axis(int64_t a, int rank) const {
    if (a < -rank || a >= rank) throw RuleError(fmt::format("axis {} out of range for rank {}", a, rank));
    return static_cast<int>(a < 0 ? a + rank : a);
  }
};

/// Shape rules of geometric ops (conv, pooling, matmul, reductions, views); false when the op has none.
bool geometry_rule(RuleContext& c, bool& handled);
/// Rules of ops that compute or move shape data (Shape, Gather, Concat, Slice, arithmetic, ...).
bool data_rule(RuleContext& c, bool& handled);

/// Product of dims, -1 when any is unknown.
int64_t product(const std::vector<int64_t>& dims, size_t from = 0, size_t to = SIZE_MAX);

}  // namespace ridge::onnx_in
