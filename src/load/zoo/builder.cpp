#include "load/zoo/builder.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "ridge/error.hpp"

namespace ridge::zoo {

namespace {
int64_t pool_out(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  int64_t span = in + 2 * p - d * (k - 1) - 1;
  int64_t out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
  // PyTorch: the last pooling window must start inside the input or left padding.
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}
}  // namespace

Builder::Builder(std::string model_name, DType dtype) : dtype_(dtype) {
  g_.name = std::move(model_name);
  g_.source = "zoo";
}

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
  std::string n = base;
  for (int i = 1; std::find(used_names_.begin(), used_names_.end(), n) != used_names_.end(); ++i)
    n = fmt::format("{}_{}", base, i);
  used_names_.push_back(n);
  return n;
}

void Builder::note_module(const std::string& path, const std::string& type) {
  for (const auto& m : g_.modules)
    if (m.path == path) return;
  g_.modules.push_back({path, type, {}});
}

void Builder::record_call(const std::string& path, int output) {
  for (auto& m : g_.modules)
    if (m.path == path) {
      m.call_outputs.push_back(output);
      return;
    }
}

int Builder::new_value(const std::string& name, Shape shape, DType dtype, ValueKind kind) {
  Value v;
  v.name = name;
  v.dtype = dtype;
  v.shape = std::move(shape);
  v.kind = kind;
  return g_.add_value(std::move(v));
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
                 Shape out_shape, Attrs attrs, DType out_dtype) {
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
  int out = new_value(n.name, std::move(out_shape), dt);
  n.inputs = std::move(inputs);
  n.outputs = {out};
  n.attrs = std::move(attrs);
  bool call = n.module_call;
  std::string mpath = n.module;
  g_.add_node(std::move(n));
  if (call) record_call(mpath, out);
  return out;
}

int Builder::conv2d(int x, const std::string& name, int64_t out_ch, int64_t k, int64_t stride, int64_t pad,
                    int64_t groups, bool bias, int64_t dilation) {
  const Shape s = shape(x);
  RIDGE_ASSERT(s.rank() == 4, "conv2d expects NCHW");
  int64_t oh = pool_out(s[2], k, stride, pad, dilation, false);
  int64_t ow = pool_out(s[3], k, stride, pad, dilation, false);
  if (oh <= 0 || ow <= 0)
    throw Error(fmt::format("{}: input {} is too small for a {}x{} kernel with stride {} and padding {}",
                            child_path(name), to_string(s), k, k, stride, pad));
  std::vector<int> in = {x, param(name + ".weight", Shape{{out_ch, s[1] / groups, k, k}})};
  if (bias) in.push_back(param(name + ".bias", Shape{{out_ch}}));
  return add(OpKind::Conv, name, "Conv2d", std::move(in), Shape{{s[0], out_ch, oh, ow}},
             conv2d_attrs({k, k, stride, stride, pad, pad, dilation, dilation, groups}));
}

int Builder::linear(int x, const std::string& name, int64_t out, bool bias, const std::string& type,
                    int64_t expect_in) {
  Shape o = shape(x);
  int64_t in_f = o[-1];
  if (expect_in >= 0 && in_f != expect_in)
    throw Error(fmt::format("{}: the reference model has {} input features here but this input size gives {} "
                            "(the architecture fixes the input size)",
                            child_path(name), expect_in, in_f));
  o.dims.back() = out;
  std::vector<int> in = {x, param(name + ".weight", Shape{{out, in_f}})};
  if (bias) in.push_back(param(name + ".bias", Shape{{out}}));
  Attrs a;
  a.set("transB", int64_t{1});
  return add(OpKind::Gemm, name, type, std::move(in), o, std::move(a));
}

int Builder::linear_tied(int x, const std::string& name, int weight_value) {
  Shape o = shape(x);
  o.dims.back() = shape(weight_value)[0];
  Attrs a;
  a.set("transB", int64_t{1});
  return add(OpKind::Gemm, name, "Linear", {x, weight_value}, o, std::move(a));
}

int Builder::batchnorm(int x, const std::string& name, const std::string& type) {
  int64_t c = shape(x)[1];
  std::vector<int> in = {x, param(name + ".weight", Shape{{c}}), param(name + ".bias", Shape{{c}}),
                         param(name + ".running_mean", Shape{{c}}, false),
                         param(name + ".running_var", Shape{{c}}, false)};
  return add(OpKind::BatchNormalization, name, type, std::move(in), shape(x));
}

int Builder::layernorm(int x, const std::string& name) {
  int64_t d = shape(x)[-1];
  std::vector<int> in = {x, param(name + ".weight", Shape{{d}}), param(name + ".bias", Shape{{d}})};
  Attrs a;
  a.set("axis", int64_t{-1});
  return add(OpKind::LayerNormalization, name, "LayerNorm", std::move(in), shape(x), std::move(a));
}

int Builder::embedding(int ids, const std::string& name, int64_t vocab, int64_t dim) {
  Shape o = shape(ids);
  o.dims.push_back(dim);
  int w = param(name + ".weight", Shape{{vocab, dim}});
  // ONNX order for Gather: data, indices.
  return add(OpKind::Gather, name, "Embedding", {w, ids}, o, Attrs{}.set("axis", int64_t{0}), dtype_);
}

int Builder::dropout(int x, const std::string& name, const std::string& type) {
  return add(OpKind::Dropout, name, type, {x}, shape(x));
}

int Builder::act(OpKind op, int x, const std::string& module_name, const std::string& type, Attrs attrs,
                 bool captured) {
  if (captured) attrs.set("torch_fn", std::string("captured"));
  if (module_name.empty()) {
    std::string fname(op_name(op));
    for (auto& ch : fname) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return unary(op, x, fname, std::move(attrs));
  }
  return add(op, module_name, type, {x}, shape(x), std::move(attrs));
}

int Builder::maxpool(int x, const std::string& name, int64_t k, int64_t stride, int64_t pad, bool ceil,
                     bool as_module) {
  const Shape s = shape(x);
  Shape o{{s[0], s[1], pool_out(s[2], k, stride, pad, 1, ceil), pool_out(s[3], k, stride, pad, 1, ceil)}};
  if (o[2] <= 0 || o[3] <= 0)
    throw Error(fmt::format("{}: input {} is too small to pool with kernel {}", child_path(name), to_string(s), k));
  Attrs a;
  a.set("kernel_shape", std::vector<int64_t>{k, k})
      .set("strides", std::vector<int64_t>{stride, stride})
      .set("pads", std::vector<int64_t>{pad, pad, pad, pad})
      .set("ceil_mode", int64_t{ceil ? 1 : 0});
  return add(OpKind::MaxPool, name, as_module ? "MaxPool2d" : "", {x}, o, std::move(a));
}

int Builder::avgpool(int x, const std::string& name, int64_t k, int64_t stride, bool as_module) {
  const Shape s = shape(x);
  Shape o{{s[0], s[1], pool_out(s[2], k, stride, 0, 1, false), pool_out(s[3], k, stride, 0, 1, false)}};
  if (o[2] <= 0 || o[3] <= 0)
    throw Error(fmt::format("{}: input {} is too small to pool with kernel {}", child_path(name), to_string(s), k));
  Attrs a;
  a.set("kernel_shape", std::vector<int64_t>{k, k}).set("strides", std::vector<int64_t>{stride, stride});
  return add(OpKind::AveragePool, name, as_module ? "AvgPool2d" : "", {x}, o, std::move(a));
}

int Builder::adaptive_avgpool(int x, const std::string& name, int64_t oh, int64_t ow, bool as_module) {
  const Shape s = shape(x);
  Attrs a;
  a.set("output_size", std::vector<int64_t>{oh, ow});
  return add(OpKind::AdaptiveAvgPool, name, as_module ? "AdaptiveAvgPool2d" : "", {x}, Shape{{s[0], s[1], oh, ow}},
             std::move(a));
}

int Builder::binary(OpKind op, int a, int b, const std::string& fname, const std::string& torch_fn) {
  Shape o = broadcast_shapes(shape(a), shape(b), child_path(fname));
  DType dt = op == OpKind::Equal ? DType::Bool : DType::Unknown;
  Attrs attrs;
  if (!torch_fn.empty()) attrs.set("torch_fn", torch_fn);
  return add(op, fname, "", {a, b}, std::move(o), std::move(attrs), dt);
}

int Builder::unary(OpKind op, int x, const std::string& fname, Attrs attrs) {
  return add(op, fname, "", {x}, shape(x), std::move(attrs));
}

int Builder::flatten(int x, int64_t axis) {
  const Shape s = shape(x);
  int64_t inner = 1;
  for (int i = static_cast<int>(axis); i < s.rank(); ++i) inner *= s[i];
  Shape o;
  for (int i = 0; i < axis; ++i) o.dims.push_back(s[i]);
  o.dims.push_back(inner);
  return add(OpKind::Flatten, "flatten", "", {x}, o, Attrs{}.set("axis", axis));
}

int Builder::reshape(int x, Shape to, const std::string& fname) {
  RIDGE_ASSERT(to.elements() == shape(x).elements(), "reshape must keep the element count");
  return add(OpKind::Reshape, fname, "", {x}, std::move(to));
}

int Builder::transpose(int x, std::vector<int64_t> perm, const std::string& fname) {
  const Shape s = shape(x);
  Shape o;
  for (int64_t p : perm) o.dims.push_back(s[static_cast<int>(p)]);
  return add(OpKind::Transpose, fname, "", {x}, o, Attrs{}.set("perm", perm));
}

int Builder::concat(const std::vector<int>& xs, int64_t axis, const std::string& fname) {
  Shape o = shape(xs.at(0));
  o.dims[axis] = 0;
  for (int v : xs) o.dims[axis] += shape(v)[static_cast<int>(axis)];
  return add(OpKind::Concat, fname, "", xs, o, Attrs{}.set("axis", axis));
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
  for (size_t i = 0; i < sizes.size(); ++i) {
    Shape o = shape(x);
    o.dims[axis] = sizes[i];
    n.outputs.push_back(new_value(fmt::format("{}:{}", n.name, i), o, g_.values[x].dtype));
  }
  std::vector<int> outs = n.outputs;
  g_.add_node(std::move(n));
  return outs;
}

int Builder::slice(int x, int64_t axis, int64_t start, int64_t end, const std::string& fname) {
  Shape o = shape(x);
  o.dims[axis] = end - start;
  Attrs a;
  a.set("axes", std::vector<int64_t>{axis}).set("starts", std::vector<int64_t>{start}).set("ends",
                                                                                            std::vector<int64_t>{end});
  return add(OpKind::Slice, fname, "", {x}, o, std::move(a));
}

int Builder::matmul(int a, int b, const std::string& fname) {
  const Shape sa = shape(a), sb = shape(b);
  Shape batch_a{std::vector<int64_t>(sa.dims.begin(), sa.dims.end() - 2)};
  Shape batch_b{std::vector<int64_t>(sb.dims.begin(), sb.dims.end() - 2)};
  Shape o = broadcast_shapes(batch_a, batch_b, child_path(fname));
  o.dims.push_back(sa[-2]);
  o.dims.push_back(sb[-1]);
  return add(OpKind::MatMul, fname, "", {a, b}, o);
}

int Builder::softmax(int x, int64_t axis, bool log, const std::string& fname) {
  OpKind op = log ? OpKind::LogSoftmax : OpKind::Softmax;
  return add(op, fname.empty() ? (log ? "log_softmax" : "softmax") : fname, "", {x}, shape(x),
             Attrs{}.set("axis", axis));
}

int Builder::where(int cond, int a, int b, const std::string& fname) {
  Shape o = broadcast_shapes(broadcast_shapes(shape(cond), shape(a), child_path(fname)), shape(b), child_path(fname));
  // The output has the values' element type, not the (bool) condition's.
  const DType dt = g_.values[b].kind == ValueKind::Constant ? g_.values[a].dtype : g_.values[b].dtype;
  return add(OpKind::Where, fname, "", {cond, a, b}, o, {}, dt);
}

int Builder::reduce_mean(int x, std::vector<int64_t> axes, bool keepdims, const std::string& fname) {
  Shape o = shape(x);
  for (int64_t a : axes) o.dims[a < 0 ? a + o.rank() : a] = keepdims ? 1 : -2;
  std::erase(o.dims, -2);
  return add(OpKind::ReduceMean, fname, "", {x}, o, Attrs{}.set("axes", axes).set("keepdims", int64_t{keepdims}));
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
