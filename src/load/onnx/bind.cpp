// Binding graph inputs: symbolic batch and sequence axes from --batch / --seq-len, whole shapes from --input.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "load/onnx/onnx_internal.hpp"
#include "ridge/error.hpp"
#include "ridge/text.hpp"

namespace ridge::onnx_in {
namespace {

bool names_batch(const std::string& param) {
  const std::string p = ascii_lower(param);
  return p.find("batch") != std::string::npos || p == "n" || p == "b" || p == "bs";
}

bool names_sequence(const std::string& param) {
  const std::string p = ascii_lower(param);
  for (const char* key : {"seq", "len", "token", "time", "step", "position"})
    if (p.find(key) != std::string::npos) return true;
  return p == "t" || p == "s" || p == "l";
}

/// The value bound to a symbolic (or missing, or non-positive) dim, or -1 with a note.
int64_t bind_dim(const std::string& input, int index, const std::string& param, const LoadOptions& opts,
                 std::map<std::string, int64_t>& by_param, std::vector<std::string>& notes, bool& seq_used,
                 bool& batch_used) {
  if (!param.empty()) {
    auto it = by_param.find(param);
    if (it != by_param.end()) return it->second;
  }
  int64_t bound = -1;
  if (names_batch(param)) bound = opts.batch, batch_used = true;
  else if (names_sequence(param) && opts.seq_len) bound = *opts.seq_len, seq_used = true;
  else if (index == 0 && !names_sequence(param)) bound = opts.batch, batch_used = true;
  if (bound < 0) {
    notes.push_back(fmt::format("input '{}' dim {} ('{}') is symbolic and was not bound: pass --seq-len or "
                                "--input {}=SHAPE; tensors that depend on it have unknown shapes",
                                input, index, param.empty() ? "?" : param, input));
  }
  if (!param.empty()) by_param[param] = bound;
  return bound;
}

}  // namespace

std::vector<std::pair<std::string, std::optional<Shape>>> bind_inputs(onnx::GraphProto& graph, const LoadOptions& opts,
                                                       const std::string& label, std::vector<std::string>& notes,
                                                       std::optional<int64_t>& fixed_batch) {
  std::set<std::string> initializers;
  for (const auto& t : graph.initializer()) initializers.insert(t.name());
  if (opts.input_size && opts.refuse_unused)
    throw Error(fmt::format("{}: --input-size {} applies to zoo models; give an ONNX file's input shapes with --input "
                            "NAME=DIMS", label, to_string(*opts.input_size)));
  std::map<std::string, Shape> explicit_shapes(opts.input_shapes.begin(), opts.input_shapes.end());
  std::map<std::string, int64_t> by_param;
  bool seq_used = false, batch_used = false;
  std::vector<std::pair<std::string, std::optional<Shape>>> bound;
  std::vector<std::string> real_inputs;

  for (auto& in : *graph.mutable_input()) {
    if (initializers.count(in.name())) continue;  // IR < 4: initializers are listed among inputs
    real_inputs.push_back(in.name());
    Shape shape;
    auto ex = explicit_shapes.find(in.name());
    auto* tensor = in.mutable_type()->has_tensor_type() ? in.mutable_type()->mutable_tensor_type() : nullptr;
    if (ex != explicit_shapes.end()) {
      shape = ex->second;
      if (tensor && tensor->has_shape() && tensor->shape().dim_size() != shape.rank())
        throw Error(fmt::format("{}: --input {}={} has rank {} but the model's input has rank {}", label, in.name(),
                                to_string(shape), shape.rank(), tensor->shape().dim_size()));
    } else if (!tensor || !tensor->has_shape()) {
      notes.push_back(fmt::format("input '{}' has no shape in the file: pass --input {}=SHAPE", in.name(), in.name()));
      bound.emplace_back(in.name(), std::nullopt);
      continue;
    } else {
      for (int i = 0; i < tensor->shape().dim_size(); ++i) {
        const auto& d = tensor->shape().dim(i);
        if (d.has_dim_value() && d.dim_value() > kMaxDim)
          throw Error(fmt::format("{}: input '{}' dim {} is absurdly large ({})", label, in.name(), i, d.dim_value()));
        if (d.has_dim_value() && d.dim_value() >= 0) shape.dims.push_back(d.dim_value());
        else shape.dims.push_back(
            bind_dim(in.name(), i, d.has_dim_param() ? d.dim_param() : "", opts, by_param, notes, seq_used,
                     batch_used));
      }
    }
    if (tensor) {
      auto* s = tensor->mutable_shape();
      s->clear_dim();
      for (int64_t d : shape.dims) {
        auto* dim = s->add_dim();
        if (d >= 0) dim->set_dim_value(d);
      }
    }
    bound.emplace_back(in.name(), shape);
  }
  for (const auto& [name, shape] : explicit_shapes)
    if (std::find(real_inputs.begin(), real_inputs.end(), name) == real_inputs.end())
      throw Error(fmt::format("{}: --input {}: the model has no input named '{}' (inputs: {})", label, name, name,
                              fmt::join(real_inputs, ", ")));
  if (opts.seq_len && opts.refuse_unused && !seq_used)
    throw Error(fmt::format("{}: --seq-len {}: no input has a symbolic sequence dim to bind (inputs: {}); give "
                            "shapes with --input NAME=DIMS", label, *opts.seq_len, fmt::join(real_inputs, ", ")));
  if (!batch_used)
    for (const auto& [name, shape] : bound)
      if (shape && shape->rank() >= 2 && shape->dims[0] > 0) {  // [batch, ...]; a rank-1 input is a sequence
        fixed_batch = shape->dims[0];
        break;
      }
  // A batch the file cannot take would leave every count at the file's own batch under the user's number.
  if (opts.refuse_unused && opts.batch != 1 && !batch_used) {
    std::vector<std::string> shapes;
    bool matches = false;
    for (const auto& [name, shape] : bound) {
      shapes.push_back(shape ? fmt::format("{} {}", name, to_string(*shape)) : name);
      matches |= shape && shape->rank() > 0 && shape->dims[0] == opts.batch;
    }
    if (!matches)
      throw Error(fmt::format("{}: --batch {}: no input has a symbolic batch axis to bind (inputs: {}); the file "
                              "fixes its batch: export it with a dynamic batch axis, or give --input NAME=DIMS",
                              label, opts.batch, fmt::join(shapes, ", ")));
  }
  return bound;
}

}  // namespace ridge::onnx_in
