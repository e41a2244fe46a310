#include "load/zoo/builder.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "ridge/error.hpp"
#include "ridge/op_rules.hpp"
#include "ridge/text.hpp"

namespace ridge::zoo {


Builder::Builder(std::string model_name, DType dtype) : env_(std::make_unique<ops::ShapeEnv>(g_)), dtype_(dtype) {
  g_.name = std::move(model_name);
  g_.source = "zoo";
}

Builder::~Builder() = default;

Builder::Scope::Scope(Builder& b, const std::string& name, const std::string& type)
    : b_(b), first_value_(static_cast<int>(b.g_.values.size())) {
  b_.scope_.push_back(name);
  b_.note_module(b_.scope_path(), type);
}

Builder::Scope::~Scope() {
  // A container's output is the last value produced inside it (what a forward hook would see).
  if (static_cast<int>(b_.g_.values.size()) > first_value_)
    b_.record_call(b_.scope_path(), static_cast<int>(b_.g_.values.size()) - 1);
  b_.scope_.pop_back();
}

std::string Builder::scope_path() const {
  std::string p;
  for (const auto& s : scope_) p += (p.empty() ? "" : ".") + s;
  return p;
}

std::string Builder::child_path(const std::string& name) const {
  std::string p = scope_path();
  return p.empty() ? name : p + "." + name;
}

std::string Builder::unique_name(const std::string& base) {
  if (used_names_.insert(base).second) return base;
  // The smallest free `base_i`: names are never released, so every suffix up to the last one given is taken and the
  // search resumes there (n uses of one base cost n lookups, not n^2 / 2).
  int& i = last_suffix_[base];
  std::string n;
  do n = fmt::format("{}_{}", base, ++i);
  while (!used_names_.insert(n).second);
  return n;
}

void Builder::note_module(const std::string& path, const std::string& type) {
  if (module_index_.try_emplace(path, g_.modules.size()).second) g_.modules.push_back({path, type, {}});
}

void Builder::record_call(const std::string& path, int output) {
  if (auto it = module_index_.find(path); it != module_index_.end()) g_.modules[it->second].call_outputs.push_back(output);
}

int Builder::new_value(const std::string& name, Shape shape, DType dtype, ValueKind kind) {
  Value v;
  v.name = name;
  v.dtype = dtype;
  v.shape = std::move(shape);
  v.kind = kind;
  const int id = env_->add_value(std::move(v));
  env_->rank_known[id] = 1;  // inputs, parameters and constants have the shape they were given
  return id;
}

int Builder::int_constant(const std::string& name, std::vector<int64_t> values) {
  const int id = constant(name, Shape{{static_cast<int64_t>(values.size())}}, DType::I64);
  g_.values[id].int_data = std::move(values);
  g_.values[id].has_int_data = true;
  return id;
}

std::vector<int> Builder::infer(Node n, int outputs, DType out_dtype) {
  for (int k = 0; k < outputs; ++k) {
    Value v;
    v.name = outputs == 1 ? n.name : fmt::format("{}:{}", n.name, k);
    v.dtype = out_dtype;
    n.outputs.push_back(env_->add_value(std::move(v)));
  }
  const std::string name = n.name;
  const int node = g_.add_node(std::move(n));
  try {
    ops::infer_shapes(*env_, node);
  } catch (const std::exception& e) {
    throw Error(fmt::format("{}: {}", name, e.what()));
  }
  for (int o : g_.nodes[node].outputs)
    if (!env_->rank_known[o] || !g_.values[o].shape.known())
      throw Error(fmt::format("{}: the output shape of {} cannot be inferred", name, g_.nodes[node].op_type));
  return g_.nodes[node].outputs;
}

int Builder::input(const std::string& name, Shape shape, DType dtype) {
  int v = new_value(name, std::move(shape), dtype, ValueKind::Input);
  g_.inputs.push_back(v);
  return v;
}

int Builder::param(const std::string& name, Shape shape, bool trainable) {
  return new_value(child_path(name), std::move(shape), dtype_, trainable ? ValueKind::Param : ValueKind::Buffer);
}

int Builder::constant(const std::string& name, Shape shape, DType dtype) {
  return new_value(child_path(name), std::move(shape), dtype, ValueKind::Constant);
}

int Builder::add(OpKind op, const std::string& name, const std::string& module_type, std::vector<int> inputs,
                 Attrs attrs, DType out_dtype) {
  Node n;
  n.op = op;
  n.op_type = std::string(op_name(op));
  n.module_call = !module_type.empty();
  if (n.module_call) {
    std::string path = child_path(name);
    note_module(path, module_type);
    n.module = path;
    n.module_type = module_type;
    n.name = unique_name(path);
  } else {
    n.module = scope_path();
    n.name = unique_name(child_path(name));
  }
  DType dt = out_dtype;
  if (dt == DType::Unknown) {
    dt = dtype_;
    for (int i : inputs)
      if (i >= 0 && g_.values[i].kind != ValueKind::Constant) {
        dt = g_.values[i].dtype;
        break;
      }
  }
  n.inputs = std::move(inputs);
  n.attrs = std::move(attrs);
  const bool call = n.module_call;
  const std::string mpath = n.module;
  const int out = infer(std::move(n), 1, dt).at(0);
  if (call) record_call(mpath, out);
  return out;
}

int Builder::conv2d(int x, const std::string& name, int64_t out_ch, int64_t k, int64_t stride, int64_t pad,
                    int64_t groups, bool bias, int64_t dilation) {
  const Shape s = shape(x);
  RIDGE_ASSERT(s.rank() == 4, "conv2d expects NCHW");
  std::vector<int> in = {x, param(name + ".weight", Shape{{out_ch, s[1] / groups, k, k}})};
  if (bias) in.push_back(param(name + ".bias", Shape{{out_ch}}));
  return add(OpKind::Conv, name, "Conv2d", std::move(in),
             conv2d_attrs({k, k, stride, stride, pad, pad, dilation, dilation, groups}));
}

int Builder::causal_conv1d(int x, const std::string& name, int64_t k, int64_t pad, bool bias) {
  const Shape s = shape(x);
  RIDGE_ASSERT(s.rank() == 3, "causal_conv1d expects [N, C, L]");
  const int64_t ch = s[1];
  std::vector<int> in = {x, param(name + ".weight", Shape{{ch, 1, k}})};
  if (bias) in.push_back(param(name + ".bias", Shape{{ch}}));
  Attrs a;
  a.set("kernel_shape", std::vector<int64_t>{k}).set("pads", std::vector<int64_t>{pad, 0}).set("group", ch);
  return add(OpKind::Conv, name, "Conv1d", std::move(in), std::move(a));
}

std::vector<int> Builder::call(OpKind op, std::vector<int> inputs, int outputs, const std::string& fname, Attrs attrs) {
  Node n;
  n.op = op;
  n.op_type = std::string(op_name(op));
  n.module = scope_path();
  n.name = unique_name(child_path(fname));
  n.inputs = std::move(inputs);
  n.attrs = std::move(attrs);
  return infer(std::move(n), outputs, DType::Unknown);
}

int Builder::linear(int x, const std::string& name, int64_t out, bool bias, const std::string& type,
                    int64_t expect_in) {
  const int64_t in_f = shape(x)[-1];
  if (expect_in >= 0 && in_f != expect_in)
    throw Error(fmt::format("{}: the reference model has {} input features here but this input size gives {} "
                            "(the architecture fixes the input size)",
                            child_path(name), expect_in, in_f));
  std::vector<int> in = {x, param(name + ".weight", Shape{{out, in_f}})};
  if (bias) in.push_back(param(name + ".bias", Shape{{out}}));
  return add(OpKind::Gemm, name, type, std::move(in), Attrs{}.set("transB", int64_t{1}));
}

int Builder::linear_tied(int x, const std::string& name, int weight_value, int bias_value) {
  std::vector<int> in = {x, weight_value};
  if (bias_value >= 0) in.push_back(bias_value);
  return add(OpKind::Gemm, name, "Linear", std::move(in), Attrs{}.set("transB", int64_t{1}));
}

int Builder::batchnorm(int x, const std::string& name, const std::string& type) {
  int64_t c = shape(x)[1];
  std::vector<int> in = {x, param(name + ".weight", Shape{{c}}), param(name + ".bias", Shape{{c}}),
                         param(name + ".running_mean", Shape{{c}}, false),
                         param(name + ".running_var", Shape{{c}}, false)};
  return add(OpKind::BatchNormalization, name, type, std::move(in));
}

int Builder::layernorm(int x, const std::string& name, bool scale, bool bias) {
  RIDGE_ASSERT(scale || !bias, "an ONNX LayerNormalization with a bias has a scale");
  int64_t d = shape(x)[-1];
  std::vector<int> in = {x};
  if (scale) in.push_back(param(name + ".weight", Shape{{d}}));
  if (bias) in.push_back(param(name + ".bias", Shape{{d}}));
  return add(OpKind::LayerNormalization, name, "LayerNorm", std::move(in), Attrs{}.set("axis", int64_t{-1}));
}

int Builder::embedding(int ids, const std::string& name, int64_t vocab, int64_t dim) {
  int w = param(name + ".weight", Shape{{vocab, dim}});
  // ONNX order for Gather: data, indices.
  return add(OpKind::Gather, name, "Embedding", {w, ids}, Attrs{}.set("axis", int64_t{0}), dtype_);
}

int Builder::dropout(int x, const std::string& name, const std::string& type, double p) {
  Attrs attrs;
  if (p != 0.5) attrs.set("ratio", p);
  return add(OpKind::Dropout, name, type, {x}, std::move(attrs));
}

int Builder::act(OpKind op, int x, const std::string& module_name, const std::string& type, Attrs attrs,
                 bool captured) {
  if (captured) attrs.set("torch_fn", std::string("captured"));
  if (module_name.empty()) {
    return unary(op, x, ascii_lower(op_name(op)), std::move(attrs));
  }
  return add(op, module_name, type, {x}, std::move(attrs));
}

int Builder::maxpool(int x, const std::string& name, int64_t k, int64_t stride, int64_t pad, bool ceil,
                     bool as_module) {
  Attrs a;
  a.set("kernel_shape", std::vector<int64_t>{k, k})
      .set("strides", std::vector<int64_t>{stride, stride})
      .set("pads", std::vector<int64_t>{pad, pad, pad, pad})
      .set("ceil_mode", int64_t{ceil ? 1 : 0});
  return add(OpKind::MaxPool, name, as_module ? "MaxPool2d" : "", {x}, std::move(a));
}

int Builder::avgpool(int x, const std::string& name, int64_t k, int64_t stride, bool as_module) {
  Attrs a;
  a.set("kernel_shape", std::vector<int64_t>{k, k}).set("strides", std::vector<int64_t>{stride, stride});
  return add(OpKind::AveragePool, name, as_module ? "AvgPool2d" : "", {x}, std::move(a));
}

int Builder::adaptive_avgpool(int x, const std::string& name, int64_t oh, int64_t ow, bool as_module) {
  return add(OpKind::AdaptiveAvgPool, name, as_module ? "AdaptiveAvgPool2d" : "", {x},
             Attrs{}.set("output_size", std::vector<int64_t>{oh, ow}));
}

int Builder::binary(OpKind op, int a, int b, const std::string& fname, const std::string& torch_fn) {
  Attrs attrs;
  if (!torch_fn.empty()) attrs.set("torch_fn", torch_fn);
  return add(op, fname, "", {a, b}, std::move(attrs), op == OpKind::Equal ? DType::Bool : DType::Unknown);
}

int Builder::unary(OpKind op, int x, const std::string& fname, Attrs attrs) {
  return add(op, fname, "", {x}, std::move(attrs));
}

int Builder::flatten(int x, int64_t axis) { return add(OpKind::Flatten, "flatten", "", {x}, Attrs{}.set("axis", axis)); }

int Builder::reshape(int x, Shape to, const std::string& fname) {
  RIDGE_ASSERT(to.elements() == shape(x).elements(), "reshape must keep the element count");
  const int target = int_constant(fname + ".shape", to.dims);
  return add(OpKind::Reshape, fname, "", {x, target});
}

int Builder::expand(int x, Shape to, const std::string& fname) {
  const int target = int_constant(fname + ".shape", to.dims);
  return add(OpKind::Expand, fname, "", {x, target});
}

int Builder::transpose(int x, std::vector<int64_t> perm, const std::string& fname) {
  return add(OpKind::Transpose, fname, "", {x}, Attrs{}.set("perm", perm));
}

int Builder::concat(const std::vector<int>& xs, int64_t axis, const std::string& fname) {
  return add(OpKind::Concat, fname, "", xs, Attrs{}.set("axis", axis));
}

std::vector<int> Builder::split(int x, int64_t axis, const std::vector<int64_t>& sizes, const std::string& fname) {
  // One Split node with several outputs.
  Node n;
  n.op = OpKind::Split;
  n.op_type = "Split";
  n.module = scope_path();
  n.name = unique_name(child_path(fname));
  n.inputs = {x};
  n.attrs.set("axis", axis).set("split", sizes);
  return infer(std::move(n), static_cast<int>(sizes.size()), g_.values[x].dtype);
}

int Builder::slice(int x, int64_t axis, int64_t start, int64_t end, const std::string& fname) {
  Attrs a;
  a.set("axes", std::vector<int64_t>{axis}).set("starts", std::vector<int64_t>{start}).set("ends",
                                                                                            std::vector<int64_t>{end});
  return add(OpKind::Slice, fname, "", {x}, std::move(a));
}

int Builder::matmul(int a, int b, const std::string& fname) { return add(OpKind::MatMul, fname, "", {a, b}); }

int Builder::softmax(int x, int64_t axis, bool log, const std::string& fname) {
  OpKind op = log ? OpKind::LogSoftmax : OpKind::Softmax;
  return add(op, fname.empty() ? (log ? "log_softmax" : "softmax") : fname, "", {x}, Attrs{}.set("axis", axis));
}

int Builder::where(int cond, int a, int b, const std::string& fname) {
  // The output has the values' element type, not the (bool) condition's.
  const DType dt = g_.values[b].kind == ValueKind::Constant ? g_.values[a].dtype : g_.values[b].dtype;
  return add(OpKind::Where, fname, "", {cond, a, b}, {}, dt);
}

int Builder::reduce_mean(int x, std::vector<int64_t> axes, bool keepdims, const std::string& fname) {
  return add(OpKind::ReduceMean, fname, "", {x}, Attrs{}.set("axes", axes).set("keepdims", int64_t{keepdims}));
}

int Builder::reduce_max(int x, std::vector<int64_t> axes, bool keepdims, const std::string& fname) {
  return add(OpKind::ReduceMax, fname, "", {x}, Attrs{}.set("axes", axes).set("keepdims", int64_t{keepdims}));
}

int Builder::value_id(const std::string& name) const {
  for (size_t i = 0; i < g_.values.size(); ++i)
    if (g_.values[i].name == name) return static_cast<int>(i);
  RIDGE_ASSERT(false, "value_id: no such value");
  return -1;
}

Graph Builder::finish(const std::vector<int>& outputs) {
  g_.outputs = outputs;
  validate(g_);
  return std::move(g_);
}

}  // namespace ridge::zoo
